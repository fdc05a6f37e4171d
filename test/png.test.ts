/**
 * tessera's PNG encoder (src/image/encode/png.ts), checked from outside: files are parsed here
 * (signature, chunk order, IHDR fields, CRCs against a bit-by-bit CRC-32 written in this file), the
 * IDAT stream is inflated and unfiltered by this file's own code (all five PNG filter types), every
 * row's filter is compared with a plain re-implementation of libpng's heuristic and, on a small
 * image, with filters derived by hand; pixels decoded by sharp (libspng) must equal the input planes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { TesseraError } from '../src/errors.js';
import { mulberry32 } from '../src/demo/terrain.js';
import { encodePngPlanes, tableCrc32, type PngPlanes } from '../src/image/encode/png.js';
import { DEFAULT_PNG_LEVEL, configureEncoders, encode } from '../src/image/encode/index.js';

// ---- independent helpers

/** Seeded PRNG, so failures reproduce. */
const random = mulberry32;

function makePlanes(channels: number, pixels: number, sixteenBit: boolean, fill: (c: number, i: number) => number): Uint8Array[] | Uint16Array[] {
  const make = (c: number): number[] => Array.from({ length: pixels }, (_, i) => fill(c, i));
  return sixteenBit
    ? Array.from({ length: channels }, (_, c) => Uint16Array.from(make(c)))
    : Array.from({ length: channels }, (_, c) => Uint8Array.from(make(c)));
}

/** The unfiltered PNG rows the planes stand for: pixel-interleaved, 16-bit samples big-endian. */
function expectedRows(planes: PngPlanes, width: number, height: number): Uint8Array[] {
  const sixteen = planes[0] instanceof Uint16Array;
  const n = planes.length;
  const bps = sixteen ? 2 : 1;
  return Array.from({ length: height }, (_, y) => {
    const row = new Uint8Array(width * n * bps);
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < n; c++) {
        const v = planes[c]![y * width + x]!;
        const at = (x * n + c) * bps;
        if (sixteen) {
          row[at] = v >> 8;
          row[at + 1] = v & 0xff;
        } else {
          row[at] = v;
        }
      }
    }
    return row;
  });
}

/** CRC-32 (ISO 3309, as PNG uses), bit by bit. */
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

interface Chunk {
  type: string;
  data: Buffer;
}

/** The chunks of a PNG file, checking the signature, every CRC and that nothing follows IEND. */
function parsePng(file: Buffer): Chunk[] {
  assert.deepEqual([...file.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  const chunks: Chunk[] = [];
  let pos = 8;
  while (pos < file.length) {
    const length = file.readUInt32BE(pos);
    const type = file.subarray(pos + 4, pos + 8).toString('latin1');
    const data = file.subarray(pos + 8, pos + 8 + length);
    assert.equal(data.length, length, `${type} chunk truncated`);
    assert.equal(file.readUInt32BE(pos + 8 + length), crc32(file.subarray(pos + 4, pos + 8 + length)), `${type} CRC`);
    chunks.push({ type, data });
    pos += 12 + length;
  }
  assert.equal(pos, file.length, 'file ends with a whole chunk');
  assert.equal(chunks.at(-1)?.type, 'IEND', 'IEND last');
  return chunks;
}

interface Header {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  compression: number;
  filterMethod: number;
  interlace: number;
}

function header(chunks: Chunk[]): Header {
  const ihdr = chunks[0]!;
  assert.equal(ihdr.type, 'IHDR');
  assert.equal(ihdr.data.length, 13);
  const d = ihdr.data;
  return {
    width: d.readUInt32BE(0),
    height: d.readUInt32BE(4),
    bitDepth: d[8]!,
    colourType: d[9]!,
    compression: d[10]!,
    filterMethod: d[11]!,
    interlace: d[12]!,
  };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  if (pb <= pc) return b;
  return c;
}

/** The predictor of filter `type` (PNG spec 9.2) from the left, above and upper-left bytes. */
function predict(type: number, a: number, b: number, c: number): number {
  switch (type) {
    case 0:
      return 0;
    case 1:
      return a;
    case 2:
      return b;
    case 3:
      return (a + b) >> 1;
    default:
      return paeth(a, b, c);
  }
}

/** Filters one row with filter type `type`, `prior` being the unfiltered row above. */
function filterRow(type: number, row: Uint8Array, prior: Uint8Array, bpp: number): Uint8Array {
  return row.map((v, i) => (v - predict(type, i >= bpp ? row[i - bpp]! : 0, prior[i]!, i >= bpp ? prior[i - bpp]! : 0)) & 0xff);
}

/** Undoes the filters of the inflated IDAT stream: the filter type and unfiltered bytes per row. */
function unfilter(stream: Buffer, height: number, rowBytes: number, bpp: number): { types: number[]; rows: Uint8Array[] } {
  assert.equal(stream.length, height * (rowBytes + 1), 'inflated IDAT size');
  const types: number[] = [];
  const rows: Uint8Array[] = [];
  let prior = new Uint8Array(rowBytes);
  for (let y = 0; y < height; y++) {
    const at = y * (rowBytes + 1);
    const type = stream[at]!;
    assert.ok(type <= 4, `row ${y}: filter type ${type}`);
    const row = new Uint8Array(rowBytes);
    for (let i = 0; i < rowBytes; i++) {
      const predictor = predict(type, i >= bpp ? row[i - bpp]! : 0, prior[i]!, i >= bpp ? prior[i - bpp]! : 0);
      row[i] = (stream[at + 1 + i]! + predictor) & 0xff;
    }
    types.push(type);
    rows.push(row);
    prior = row;
  }
  return { types, rows };
}

const signedMagnitude = (v: number): number => (v < 128 ? v : 256 - v);

/** libpng's choice per row among None, Sub, Up and Paeth: least sum of |byte as int8|, ties to the first. */
function referenceFilters(rows: Uint8Array[], bpp: number): number[] {
  return rows.map((row, y) => {
    const prior = y > 0 ? rows[y - 1]! : new Uint8Array(row.length);
    let best = -1;
    let bestCost = Infinity;
    for (const type of [0, 1, 2, 4]) {
      const cost = filterRow(type, row, prior, bpp).reduce((sum, v) => sum + signedMagnitude(v), 0);
      if (cost < bestCost) {
        best = type;
        bestCost = cost;
      }
    }
    return best;
  });
}

/** The number of distinct pixels (all channels together) of 8-bit planes. */
function distinctPixels(planes: PngPlanes): number {
  const seen = new Set<string>();
  for (let i = 0; i < planes[0]!.length; i++) seen.add(planes.map((p) => p[i]).join(','));
  return seen.size;
}

/** Whether the encoder must write `planes` as a palette image: an 8-bit RGB(A) graphic of ≤ 256 colours. */
function expectsPalette(planes: PngPlanes, content: 'imagery' | 'graphic'): boolean {
  return content === 'graphic' && planes[0] instanceof Uint8Array && planes.length >= 3 && distinctPixels(planes) <= 256;
}

/**
 * A palette file: PLTE (and tRNS exactly when the planes have alpha) before the data, every row
 * unfiltered, each index an entry whose RGB(A) is the input pixel's.
 */
function checkPaletteFile(chunks: Chunk[], stream: Buffer, planes: PngPlanes, width: number, height: number): number[] {
  const withAlpha = planes.length === 4;
  const types = chunks.map((c) => c.type);
  assert.deepEqual(types, ['IHDR', 'PLTE', ...(withAlpha ? ['tRNS'] : []), ...types.slice(withAlpha ? 3 : 2, -1).map(() => 'IDAT'), 'IEND']);
  const plte = chunks[1]!.data;
  assert.equal(plte.length % 3, 0);
  const entries = plte.length / 3;
  assert.ok(entries >= 1 && entries <= 256, `${entries} palette entries`);
  const trns = withAlpha ? chunks[2]!.data : undefined;
  if (trns) assert.ok(trns.length <= entries, 'tRNS no longer than PLTE');
  const { types: filters, rows } = unfilter(stream, height, width, 1);
  assert.ok(
    filters.every((f) => f === 0),
    'palette rows are unfiltered',
  );
  const expected = expectedRows(planes, width, height);
  const used = new Set<number>();
  rows.forEach((row, y) => {
    const rgba = new Uint8Array(width * planes.length);
    row.forEach((index, x) => {
      assert.ok(index < entries, `row ${y}: index ${index} of ${entries} entries`);
      used.add(index);
      for (let c = 0; c < 3; c++) rgba[x * planes.length + c] = plte[index * 3 + c]!;
      if (trns) rgba[x * 4 + 3] = index < trns.length ? trns[index]! : 255;
    });
    assert.deepEqual(rgba, expected[y], `row ${y} through the palette`);
  });
  assert.equal(used.size, entries, 'every palette entry is used');
  assert.equal(entries, distinctPixels(planes), 'one entry per distinct pixel');
  return filters;
}

/**
 * tessera's filters for imagery (imageryScanlines): Sub on the first row; then, per band of 8 rows,
 * whichever of Paeth, Sub and Average gives the band's first row the least entropy, counted over
 * the bytes of the planes that change from the row above, ties to the earlier of the three.
 */
function referenceImageryFilters(rows: Uint8Array[], bpp: number, bytesPerSample: number): number[] {
  const types: number[] = [];
  rows.forEach((row, y) => {
    if (y === 0) types.push(1);
    else if ((y - 1) % 8 !== 0) types.push(types[y - 1]!);
    else {
      const prior = rows[y - 1]!;
      const planeOf = (i: number): number => Math.floor((i % bpp) / bytesPerSample);
      const changed = new Set<number>();
      row.forEach((v, i) => {
        if (v !== prior[i]) changed.add(planeOf(i));
      });
      let best = -1;
      let bestScore = -1;
      for (const type of [4, 1, 3]) {
        const counts = new Array<number>(256).fill(0);
        filterRow(type, row, prior, bpp).forEach((v, i) => {
          if (changed.has(planeOf(i))) counts[v]!++;
        });
        const score = counts.reduce((sum, c) => sum + (c > 1 ? c * Math.log2(c) : 0), 0);
        if (score > bestScore) {
          best = type;
          bestScore = score;
        }
      }
      types.push(best);
    }
  });
  return types;
}

/** Parses, checks the header, inflates and unfilters `file`; returns the row filter types. */
function checkFile(file: Buffer, planes: PngPlanes, width: number, height: number, content: 'imagery' | 'graphic' = 'graphic'): number[] {
  const chunks = parsePng(file);
  const sixteen = planes[0] instanceof Uint16Array;
  const palette = expectsPalette(planes, content);
  assert.deepEqual(header(chunks), {
    width,
    height,
    bitDepth: sixteen ? 16 : 8,
    colourType: palette ? 3 : [0, 4, 2, 6][planes.length - 1],
    compression: 0,
    filterMethod: 0,
    interlace: 0,
  });
  assert.equal(chunks.at(-1)!.data.length, 0, 'IEND is empty');
  const stream = zlib.inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  if (palette) return checkPaletteFile(chunks, stream, planes, width, height);
  assert.deepEqual(
    chunks.map((c) => c.type),
    ['IHDR', ...chunks.slice(1, -1).map(() => 'IDAT'), 'IEND'],
  );
  const bpp = planes.length * (sixteen ? 2 : 1);
  const expected = expectedRows(planes, width, height);
  const { types, rows } = unfilter(stream, height, width * bpp, bpp);
  rows.forEach((row, y) => {
    assert.deepEqual(row, expected[y], `row ${y} unfiltered`);
  });
  if (content === 'imagery') {
    assert.deepEqual(types, referenceImageryFilters(expected, bpp, sixteen ? 2 : 1), 'imagery rows: Sub, then per band of 8 rows the least-entropy filter');
  } else {
    assert.deepEqual(types, referenceFilters(expected, bpp), 'row filters as libpng would choose among None/Sub/Up/Paeth');
  }
  return types;
}

/** sharp's decoding of `file`, as one array of samples per channel of the input. */
async function decodeWithSharp(file: Buffer, channels: number, sixteen: boolean): Promise<number[][]> {
  const meta = await sharp(file).metadata();
  assert.equal(meta.channels, channels);
  assert.equal(meta.depth, sixteen ? 'ushort' : 'uchar');
  // libvips decodes grey to RGB unless asked for grey16; 16-bit needs its 16-bit colourspaces.
  const pipeline = sixteen
    ? sharp(file)
        .toColourspace(channels <= 2 ? 'grey16' : 'rgb16')
        .raw({ depth: 'ushort' })
    : sharp(file).raw();
  const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
  const samples = sixteen ? new Uint16Array(data.buffer, data.byteOffset, data.length / 2) : data;
  const n = info.channels;
  const pixels = info.width * info.height;
  const plane = (c: number): number[] => Array.from({ length: pixels }, (_, i) => samples[i * n + c]!);
  if (sixteen || channels > 2) {
    assert.equal(n, channels);
    return Array.from({ length: n }, (_, c) => plane(c));
  }
  // 8-bit grey comes back as RGB (+ alpha): the three must be the grey plane.
  assert.equal(n, channels + 2);
  assert.deepEqual(plane(1), plane(0));
  assert.deepEqual(plane(2), plane(0));
  return channels === 1 ? [plane(0)] : [plane(0), plane(n - 1)];
}

async function rejectsInternal(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof TesseraError);
    assert.equal(err.kind, 'Internal');
    assert.match(err.message, pattern);
    return true;
  });
}

// ---- tests

describe('PNG encoder: pixels, structure and filters', () => {
  const sizes: Array<[number, number]> = [
    [1, 1],
    [3, 5],
    [257, 255],
  ];
  let caseNumber = 0;
  for (const sixteen of [false, true]) {
    for (const channels of [1, 2, 3, 4]) {
      for (const [width, height] of sizes) {
        for (const content of ['zeros', 'random'] as const) {
          const level = [0, 1, 4, 6, 9][caseNumber % 5]!;
          const kind = caseNumber % 2 === 0 ? 'imagery' : 'graphic';
          const seed = ++caseNumber * 7919 + width;
          const name = `${channels} channel(s), ${sixteen ? 16 : 8}-bit, ${width}×${height}, ${content}, level ${level}, ${kind}`;
          it(name, async () => {
            const next = random(seed);
            const max = sixteen ? 65536 : 256;
            const planes = makePlanes(channels, width * height, sixteen, () => (content === 'zeros' ? 0 : Math.floor(next() * max)));
            const file = await encodePngPlanes(planes, width, height, level, kind);
            checkFile(file, planes, width, height, kind);
            assert.deepEqual(
              await decodeWithSharp(file, channels, sixteen),
              (planes as ArrayLike<number>[]).map((p) => Array.from(p)),
            );
          });
        }
      }
    }
  }

  it('chooses None, Sub, Up and Paeth where derived by hand (ties to the earlier filter)', async () => {
    // Grey 8-bit, 8 wide. Costs (None/Sub/Up/Paeth) worked out from the PNG filter definitions:
    const rows = [
      [0, 0, 0, 0, 0, 0, 0, 0], // all 0 → None (first of four ties)
      [10, 11, 12, 13, 14, 15, 16, 17], // 108 / 17 / 108 / 17 → Sub (tie with Paeth)
      [110, 111, 112, 113, 114, 115, 116, 117], // 908 / 117 / 800 / 107 → Paeth
      [111, 112, 113, 114, 115, 116, 117, 118], // 916 / 118 / 8 / 8 → Up (tie with Paeth)
      [0, 255, 0, 255, 0, 255, 0, 255], // 4 / 7 / 920 / 920 → None
    ];
    const plane = Uint8Array.from(rows.flat());
    const file = await encodePngPlanes([plane], 8, rows.length, 6);
    assert.deepEqual(checkFile(file, [plane], 8, rows.length), [0, 1, 4, 2, 0]);
  });

  it('filters rows that repeat (constant alpha, runs of equal rows) exactly as rows that do not', async () => {
    const width = 37;
    const height = 40;
    const next = random(42);
    // Rows repeat in runs of 1 to 5 rows, differently per plane; alpha constant, then a hole.
    const runRows = (runSeed: number): number[] => {
      const source: number[] = [];
      let y = 0;
      let sourceRow = 0;
      while (y < height) {
        const run = 1 + ((runSeed + sourceRow * 3) % 5);
        for (let k = 0; k < run && y < height; k++, y++) source.push(sourceRow);
        sourceRow++;
      }
      return source;
    };
    for (const sixteen of [false, true]) {
      const max = sixteen ? 65536 : 256;
      const base = Array.from({ length: 3 }, () => Array.from({ length: height * width }, () => Math.floor(next() * max)));
      const runs = [runRows(0), runRows(2), runRows(4)];
      const opaque = max - 1;
      const planes = makePlanes(4, width * height, sixteen, (c, i) => {
        const x = i % width;
        const y = Math.floor(i / width);
        if (c === 3) return y >= 20 && y < 23 && x > 10 ? 0 : opaque;
        return base[c]![runs[c]![y]! * width + x]!;
      });
      for (const content of ['graphic', 'imagery'] as const) {
        const file = await encodePngPlanes(planes, width, height, 6, content);
        checkFile(file, planes, width, height, content);
        assert.deepEqual(
          await decodeWithSharp(file, 4, sixteen),
          (planes as ArrayLike<number>[]).map((p) => Array.from(p)),
        );
      }
    }
  });

  it('splits a zlib stream over 1 MiB into several IDAT chunks', async () => {
    const width = 600;
    const height = 300;
    const next = random(7);
    const planes = makePlanes(4, width * height, true, () => Math.floor(next() * 65536));
    const file = await encodePngPlanes(planes, width, height, 0);
    const idats = parsePng(file).filter((c) => c.type === 'IDAT');
    assert.ok(idats.length >= 2, `${idats.length} IDAT chunks`);
    checkFile(file, planes, width, height);
    assert.deepEqual(
      await decodeWithSharp(file, 4, true),
      planes.map((p) => Array.from(p)),
    );
  });

  it('accepts Buffers and views into larger buffers as planes', async () => {
    const backing = Buffer.from(Array.from({ length: 40 }, (_, i) => (i * 37) % 256));
    const planes = [backing.subarray(3, 15), new Uint8Array(backing.buffer, backing.byteOffset + 20, 12)];
    const file = await encodePngPlanes(planes, 4, 3, 6);
    checkFile(file, planes, 4, 3);
    assert.deepEqual(
      await decodeWithSharp(file, 2, false),
      planes.map((p) => Array.from(p)),
    );
  });

  it('refuses what callers must never pass (an internal error, not a 400)', async () => {
    const p = new Uint8Array(6);
    await rejectsInternal(encodePngPlanes([p], 3, 2, 10), /zlib level 10/);
    await rejectsInternal(encodePngPlanes([p], 3, 2, -1), /zlib level -1/);
    await rejectsInternal(encodePngPlanes([p], 3, 2, 2.5), /zlib level 2.5/);
    await rejectsInternal(encodePngPlanes([], 3, 2, 6), /0 planes/);
    await rejectsInternal(encodePngPlanes([p, p, p, p, p], 3, 2, 6), /5 planes/);
    await rejectsInternal(encodePngPlanes([p, new Uint8Array(5)], 3, 2, 6), /a plane of 5 samples for 3×2 pixels/);
    await rejectsInternal(encodePngPlanes([p, new Uint16Array(6)] as unknown as PngPlanes, 3, 2, 6), /different sample types/);
    await rejectsInternal(encodePngPlanes([p], 0, 2, 6), /a 0×2 image/);
  });
});

describe('CRC-32 fallback (for Node versions without zlib.crc32)', () => {
  it('matches a bit-by-bit CRC-32 and the check value of "123456789"', () => {
    assert.equal(tableCrc32(Buffer.from('123456789', 'latin1')), 0xcbf43926);
    assert.equal(tableCrc32(new Uint8Array(0)), 0);
    const next = random(3);
    const bytes = Uint8Array.from({ length: 1000 }, () => Math.floor(next() * 256));
    assert.equal(tableCrc32(bytes), crc32(bytes));
  });
});

describe('PNG zlib level setting', () => {
  const W = 64;
  const H = 64;
  const zeros = (): Uint8Array => new Uint8Array(W * H);
  const data = { dtype: 'uint8' as const, width: W, height: H, bands: [zeros(), zeros(), zeros()], content: 'graphic' as const };

  it(`is ${DEFAULT_PNG_LEVEL} by default, applies to png and leaves pngraw at level 1`, async () => {
    // A black graphic: one colour, so a palette image of one index byte per pixel.
    const rawBytes = H * (1 + W);
    const atDefault = await encode(data, undefined, 'png');
    assert.deepEqual(atDefault, await encodePngPlanes(data.bands, W, H, DEFAULT_PNG_LEVEL, 'graphic'));
    try {
      configureEncoders({ pngLevel: 0 });
      const stored = await encode(data, undefined, 'png');
      // Level 0 stores: the zlib stream is at least the filtered rows themselves.
      assert.ok(stored.length > rawBytes, `${stored.length} > ${rawBytes}`);
      const rawAt0 = await encode(data, undefined, 'pngraw');
      assert.ok(rawAt0.length < rawBytes / 10, `pngraw ${rawAt0.length} bytes`);
      configureEncoders({ pngLevel: 9 });
      assert.ok((await encode(data, undefined, 'png')).length < rawBytes / 10);
      assert.deepEqual(await encode(data, undefined, 'pngraw'), rawAt0);
    } finally {
      configureEncoders({ pngLevel: DEFAULT_PNG_LEVEL });
    }
    assert.deepEqual(await encode(data, undefined, 'png'), atDefault);
  });

  it('refuses levels outside 0–9', () => {
    for (const pngLevel of [-1, 10, 4.5, Number.NaN]) {
      assert.throws(
        () => configureEncoders({ pngLevel }),
        (err: unknown) => err instanceof TesseraError && /from 0 to 9/.test(err.message),
      );
    }
  });
});

describe('PNG palette images (8-bit RGB(A) graphics of at most 256 colours)', () => {
  const W = 61;
  const H = 47;
  /** A colormap-like image: `colours` RGBA entries (some translucent) over a field, a masked band on the left. */
  function colormapped(colours: number, alpha: 'some' | 'opaque' | 'none', seed: number): Uint8Array[] {
    const next = random(seed);
    const table = Array.from({ length: colours }, () =>
      [0, 1, 2].map(() => Math.floor(next() * 256)).concat(alpha === 'some' ? [next() < 0.2 ? Math.floor(next() * 255) : 255] : [255]),
    );
    const channels = alpha === 'none' ? 3 : 4;
    const planes = Array.from({ length: channels }, () => new Uint8Array(W * H));
    for (let i = 0; i < W * H; i++) {
      // Every entry once (the first `colours` pixels), then runs of one entry as a colormap makes.
      const entry = i < colours ? i : Math.floor((((i % W) / 7) ^ Math.floor(i / W / 5)) + next() * 3) % colours;
      for (let c = 0; c < channels; c++) planes[c]![i] = table[entry]![c]!;
    }
    return planes;
  }

  for (const [colours, alpha] of [
    [1, 'some'],
    [2, 'opaque'],
    [200, 'none'],
    [256, 'some'],
    [256, 'none'],
  ] as const) {
    it(`${colours} colour(s), alpha ${alpha}: a palette whose decoded pixels are the input's`, async () => {
      const planes = colormapped(colours, alpha, colours * 31 + alpha.length);
      assert.equal(distinctPixels(planes), colours);
      const file = await encodePngPlanes(planes, W, H, DEFAULT_PNG_LEVEL, 'graphic');
      assert.equal(header(parsePng(file)).colourType, 3, 'colour type 3 (palette)');
      checkFile(file, planes, W, H, 'graphic');
      // Decoders see RGBA exactly when the planes have alpha, fully opaque or not (tRNS is written).
      assert.deepEqual(
        await decodeWithSharp(file, planes.length, false),
        planes.map((p) => Array.from(p)),
      );
    });
  }

  it('falls back to filtered RGBA at the 257th colour', async () => {
    const planes = colormapped(256, 'some', 5);
    // One more colour, in the last pixel only.
    planes[0]![W * H - 1] = planes[0]![W * H - 1]! ^ 1;
    planes[1]![W * H - 1] = 0;
    planes[2]![W * H - 1] = 0;
    planes[3]![W * H - 1] = 1;
    assert.equal(distinctPixels(planes), 257);
    const file = await encodePngPlanes(planes, W, H, DEFAULT_PNG_LEVEL, 'graphic');
    assert.equal(header(parsePng(file)).colourType, 6, 'RGBA');
    checkFile(file, planes, W, H, 'graphic');
    assert.deepEqual(
      await decodeWithSharp(file, 4, false),
      planes.map((p) => Array.from(p)),
    );
  });

  it('leaves imagery, grey and 16-bit images of few colours as they are', async () => {
    const few = colormapped(3, 'some', 9);
    const imagery = await encodePngPlanes(few, W, H, DEFAULT_PNG_LEVEL, 'imagery');
    assert.equal(header(parsePng(imagery)).colourType, 6);
    checkFile(imagery, few, W, H, 'imagery');
    const grey = await encodePngPlanes([few[0]!, few[3]!], W, H, DEFAULT_PNG_LEVEL, 'graphic');
    assert.equal(header(parsePng(grey)).colourType, 4);
    const wide = few.map((p) => Uint16Array.from(p));
    const sixteen = await encodePngPlanes(wide, W, H, DEFAULT_PNG_LEVEL, 'graphic');
    assert.deepEqual([header(parsePng(sixteen)).colourType, header(parsePng(sixteen)).bitDepth], [6, 16]);
    checkFile(sixteen, wide, W, H, 'graphic');
  });

  it('colormapped output of the encode entry point is a palette PNG, and smaller than RGBA', async () => {
    const planes = colormapped(120, 'some', 77);
    const data = { dtype: 'uint8' as const, width: W, height: H, bands: planes.slice(0, 3), content: 'graphic' as const };
    const file = await encode(data, planes[3], 'png');
    assert.equal(header(parsePng(file)).colourType, 3);
    const rgba = await encode({ ...data, content: 'imagery' }, planes[3], 'png');
    assert.ok(file.length < rgba.length, `${file.length} < ${rgba.length} bytes`);
  });
});

describe('PNG zlib strategy by content', () => {
  const W = 96;
  const H = 80;
  // Imagery-like: a gradient with 5 bits of noise, plus an alpha plane with a masked corner.
  const next = random(4242);
  const noisy = makePlanes(3, W * H, false, (c, i) => ((i % W) + (i / W) * 2 + c * 40 + Math.floor(next() * 32)) & 255) as Uint8Array[];
  const alpha = Uint8Array.from({ length: W * H }, (_, i) => (i % W < 10 && i < W * 10 ? 0 : 255));
  const idat = (file: Buffer): Buffer =>
    Buffer.concat(
      parsePng(file)
        .filter((c) => c.type === 'IDAT')
        .map((c) => c.data),
    );

  it('run-length codes imagery filtered by bands of rows, deflates graphics filtered row by row with the default strategy', async () => {
    const imagery = await encodePngPlanes([...noisy, alpha], W, H, 4, 'imagery');
    const graphic = await encodePngPlanes([...noisy, alpha], W, H, 4, 'graphic');
    checkFile(imagery, [...noisy, alpha], W, H, 'imagery');
    checkFile(graphic, [...noisy, alpha], W, H, 'graphic');
    const imageryRows = zlib.inflateSync(idat(imagery));
    const graphicRows = zlib.inflateSync(idat(graphic));
    assert.deepEqual(idat(imagery), zlib.deflateSync(imageryRows, { level: 4, strategy: zlib.constants.Z_RLE }));
    assert.deepEqual(idat(graphic), zlib.deflateSync(graphicRows, { level: 4 }));
    assert.notDeepEqual(idat(imagery), idat(graphic));
  });

  it('gives each band of 8 imagery rows the filter its first row needs least information with', async () => {
    const width = 64;
    const next = random(5);
    const columns = Array.from({ length: width }, () => Math.floor(next() * 256));
    const rowShift = Array.from({ length: 25 }, () => Math.floor(next() * 3));
    const plane = Uint8Array.from({ length: width * 25 }, (_, i) => {
      const x = i % width;
      const y = Math.floor(i / width);
      // Bands are judged on rows 1, 9 and 17 against the row above. Rows 0–7: ramps of a slope per
      // row (Sub leaves one value); 8–15: a ramp with 2 bits of noise (Average halves the noise);
      // 16–24: random columns shifted a little per row (Paeth takes the byte above, leaving the shift).
      if (y < 8) return (x * (2 + (y % 5)) - y * 31) & 255;
      if (y < 16) return (x * 4 + Math.floor(next() * 4)) & 255;
      return (columns[x]! + rowShift[y]! * y) & 255;
    });
    const types = checkFile(await encodePngPlanes([plane], width, 25, 4, 'imagery'), [plane], width, 25, 'imagery');
    assert.deepEqual(types, [1, ...Array<number>(8).fill(1), ...Array<number>(8).fill(3), ...Array<number>(8).fill(4)]);
  });

  it('filters 16-bit imagery by bands of rows too, high bytes first', async () => {
    const next = random(99);
    const planes = makePlanes(2, 33 * 21, true, (c, i) => (c === 1 ? 65535 : (i * 97 + Math.floor(next() * 300)) & 0xffff));
    const file = await encodePngPlanes(planes, 33, 21, 6, 'imagery');
    checkFile(file, planes, 33, 21, 'imagery');
    assert.deepEqual(
      await decodeWithSharp(file, 2, true),
      planes.map((p) => Array.from(p)),
    );
  });

  it('stores imagery too at level 0', async () => {
    const file = await encodePngPlanes(noisy, W, H, 0, 'imagery');
    assert.ok(idat(file).length > H * (1 + W * 3), 'stored blocks hold every filtered byte');
    checkFile(file, noisy, W, H, 'imagery');
  });

  it('treats png output as imagery unless told it is a graphic; pngraw is data at level 1', async () => {
    const data = { dtype: 'uint8' as const, width: W, height: H, bands: noisy };
    assert.deepEqual(await encode(data, alpha, 'png'), await encodePngPlanes([...noisy, alpha], W, H, DEFAULT_PNG_LEVEL, 'imagery'));
    assert.deepEqual(await encode({ ...data, content: 'graphic' }, alpha, 'png'), await encodePngPlanes([...noisy, alpha], W, H, DEFAULT_PNG_LEVEL, 'graphic'));
    assert.deepEqual(await encode(data, alpha, 'pngraw'), await encodePngPlanes([...noisy, alpha], W, H, 1, 'graphic'));
  });
});
