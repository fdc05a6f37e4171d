/**
 * The TIFF layout reader behind /cog/validate (src/source/tiff-structure.ts) on real files and on
 * hostile bytes: real COGs read as GDAL lays them out; loops, truncation, absurd counts and random
 * damage end in a 400 that says so, within the byte bound, never in a hang or another error.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { readTiffStructure } from '../src/source/tiff-structure.js';
import type { ByteRanges } from '../src/source/byte-ranges.js';
import { TesseraError } from '../src/errors.js';
import { FIXTURES } from './helpers/paths.js';

/** Serves a buffer and counts what was read. */
function inMemory(bytes: Uint8Array): ByteRanges & { read: ByteRanges['read']; bytesRead: () => number } {
  let total = 0;
  return {
    async read(offset, length) {
      const out = bytes.subarray(Math.min(offset, bytes.length), Math.min(offset + length, bytes.length));
      total += out.length;
      return out;
    },
    bytesRead: () => total,
  };
}

const LIMITS = { maxBytes: 1024 * 1024, maxDirectories: 64 };

async function refusal(bytes: Uint8Array, limits = LIMITS): Promise<string> {
  try {
    await readTiffStructure(inMemory(bytes), 'the file', limits);
  } catch (err) {
    assert.ok(err instanceof TesseraError, `a TesseraError, not ${String(err)}`);
    assert.equal(err.kind, 'BadRequest');
    return err.message;
  }
  assert.fail('the bytes were accepted');
}

/** A little-endian classic TIFF whose IFDs are given as [tag, type, count, value] entries. */
function tiff(ifds: Array<{ at: number; entries: Array<[number, number, number, number]>; next: number }>, size = 4096): Buffer {
  const buf = Buffer.alloc(size);
  buf.write('II', 0, 'latin1');
  buf.writeUInt16LE(42, 2);
  buf.writeUInt32LE(ifds[0]!.at, 4);
  for (const ifd of ifds) {
    buf.writeUInt16LE(ifd.entries.length, ifd.at);
    ifd.entries.forEach(([tag, type, count, value], i) => {
      const at = ifd.at + 2 + 12 * i;
      buf.writeUInt16LE(tag, at);
      buf.writeUInt16LE(type, at + 2);
      buf.writeUInt32LE(count, at + 4);
      buf.writeUInt32LE(value, at + 8);
    });
    buf.writeUInt32LE(ifd.next, ifd.at + 2 + 12 * ifd.entries.length);
  }
  return buf;
}

const SMALL_IMAGE: Array<[number, number, number, number]> = [
  [256, 4, 1, 16], // ImageWidth
  [257, 4, 1, 16], // ImageLength
  [273, 4, 1, 2000], // StripOffsets
  [278, 4, 1, 16], // RowsPerStrip
];

describe('TIFF layout', () => {
  it('reads a COG as GDAL laid it out: the ghost header, the main IFD first, overviews after it, data after the IFDs', async () => {
    const bytes = readFileSync(path.join(FIXTURES, 'TCI.tif'));
    const source = inMemory(bytes);
    const layout = await readTiffStructure(source, 'TCI.tif', LIMITS);
    assert.equal(layout.bigTiff, false);
    assert.equal(layout.ghostHeader, null, 'TCI.tif was written without one');
    const dem = await readTiffStructure(inMemory(readFileSync(path.join(FIXTURES, 'dem.tif'))), 'dem.tif', LIMITS);
    assert.match(dem.ghostHeader ?? '', /^LAYOUT=IFDS_BEFORE_DATA\nBLOCK_ORDER=ROW_MAJOR\n/);
    const [main, ...rest] = layout.directories;
    assert.deepEqual([main!.width, main!.height, main!.subfileType], [1098, 1098, 0]);
    assert.ok(main!.offset < 300);
    const overviews = rest.filter((d) => (d.subfileType & 1) === 1 && (d.subfileType & 4) === 0);
    assert.deepEqual(
      overviews.map((d) => d.width),
      [549, 275, 138, 69, 35],
    );
    const lastIfd = Math.max(...layout.directories.map((d) => d.offset));
    for (const d of layout.directories) assert.ok(d.firstBlockOffset > lastIfd, 'IFDs before data');
    assert.ok(source.bytesRead() < 64 * 1024, `the layout of a COG is in its first pages (${source.bytesRead()} bytes read)`);
  });

  it('refuses what is not a TIFF, and a file too short for a header', async () => {
    assert.match(await refusal(Buffer.from('{"type": "Feature"}')), /no TIFF byte-order mark/);
    assert.match(await refusal(Buffer.from('II')), /shorter than a TIFF header|past the end/);
    const wrongVersion = Buffer.from(tiff([{ at: 8, entries: SMALL_IMAGE, next: 0 }]));
    wrongVersion.writeUInt16LE(44, 2);
    assert.match(await refusal(wrongVersion), /TIFF version 44/);
  });

  it('stops at directories that loop, and at more directories than allowed', async () => {
    const loop = tiff([
      { at: 8, entries: SMALL_IMAGE, next: 100 },
      { at: 100, entries: SMALL_IMAGE, next: 8 },
    ]);
    assert.match(await refusal(loop), /loop back to byte 8/);
    const chain = tiff(Array.from({ length: 10 }, (_, i) => ({ at: 8 + 64 * i, entries: SMALL_IMAGE, next: i < 9 ? 8 + 64 * (i + 1) : 0 })));
    assert.match(await refusal(chain, { maxBytes: LIMITS.maxBytes, maxDirectories: 5 }), /more than 5 image directories/);
  });

  it('stops at structures past the end of the file and at its byte bound', async () => {
    const pastEnd = tiff([{ at: 8, entries: SMALL_IMAGE, next: 1_000_000 }]);
    assert.match(await refusal(pastEnd), /past the end of the file/);
    // A strip offsets array of 4 Mi entries, all zero, out of line: scanning it needs 16 MiB.
    const big = Buffer.alloc(20 * 1024 * 1024);
    Buffer.from(
      tiff([
        {
          at: 8,
          entries: [
            [256, 4, 1, 1],
            [257, 4, 1, 4 * 1024 * 1024],
            [273, 4, 4 * 1024 * 1024, 4096],
            [278, 4, 1, 1],
          ],
          next: 0,
        },
      ]),
    ).copy(big);
    assert.match(await refusal(big, { maxBytes: 1024 * 1024, maxDirectories: 8 }), /more than 1048576 bytes/);
  });

  it('ends every damaged copy of a real COG in a layout or a 400', async () => {
    const original = readFileSync(path.join(FIXTURES, 'B09.tif'));
    let seed = 20261126;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let refused = 0;
    for (let run = 0; run < 300; run++) {
      const copy = Buffer.from(original);
      // Damage the header and directories, where a reader can be led astray.
      for (let k = 0; k < 1 + random(8); k++) copy[random(Math.min(copy.length, 2048))] = random(256);
      try {
        await readTiffStructure(inMemory(copy), 'B09.tif', { maxBytes: 256 * 1024, maxDirectories: 32 });
      } catch (err) {
        assert.ok(err instanceof TesseraError && err.kind === 'BadRequest', `run ${run}: ${String(err)}`);
        refused++;
      }
    }
    assert.ok(refused > 0, 'some damage is noticed');
  });
});
