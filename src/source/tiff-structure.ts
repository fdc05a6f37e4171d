/**
 * The layout of a TIFF file: where its image file directories (IFDs) are, what each holds (size,
 * tiling, subfile type) and where each image's first stored block starts, plus GDAL's "ghost"
 * structural header. This is what a COG validation checks and what GDAL exposes only through
 * GetMetadataItem("IFD_OFFSET" / "BLOCK_OFFSET_x_y", "TIFF"), which gdal-async does not bind; so the
 * few tags needed are read here, from the raw bytes, classic TIFF and BigTIFF, either byte order.
 *
 * Bounded: reads go through a page cache of at most `maxBytes`, the IFD chain is followed for at
 * most `maxDirectories` entries and never twice through one offset, and a damaged file ends in a
 * 400 that says what is wrong, never in a loop.
 */
import { badRequest } from '../errors.js';
import type { ByteRanges } from './byte-ranges.js';

export interface TiffDirectory {
  /** Byte offset of the IFD. */
  offset: number;
  width: number;
  height: number;
  /** NewSubfileType: bit 0 reduced resolution (an overview), bit 2 a transparency mask. */
  subfileType: number;
  /** Offset of the first block of the first band with data (0 when every block is empty). */
  firstBlockOffset: number;
}

export interface TiffStructure {
  bigTiff: boolean;
  /** GDAL's structural metadata at the start of the file (GDAL ≥ 3.1 writes it), if present. */
  ghostHeader: string | null;
  directories: TiffDirectory[];
}

export interface TiffStructureLimits {
  maxBytes: number;
  maxDirectories: number;
}

const PAGE = 16 * 1024;

const TAG = {
  NewSubfileType: 254,
  ImageWidth: 256,
  ImageLength: 257,
  StripOffsets: 273,
  SamplesPerPixel: 277,
  RowsPerStrip: 278,
  PlanarConfiguration: 284,
  TileWidth: 322,
  TileLength: 323,
  TileOffsets: 324,
} as const;

/** Byte sizes of the TIFF field types tessera reads (SHORT, LONG, LONG8, IFD, IFD8). */
const TYPE_SIZE: Record<number, number> = { 3: 2, 4: 4, 13: 4, 16: 8, 18: 8 };

interface Entry {
  type: number;
  count: number;
  /** Where the values are: inside the entry, or at an offset in the file. */
  valuesAt: number;
}

/** Reads through aligned pages, so the many small reads of a walk cost few requests. */
class PagedBytes {
  private readonly pages = new Map<number, Uint8Array>();
  private fetched = 0;

  constructor(
    private readonly bytes: ByteRanges,
    private readonly maxBytes: number,
    private readonly label: string,
  ) {}

  async get(offset: number, length: number): Promise<DataView> {
    if (!Number.isSafeInteger(offset) || offset < 0 || length < 0) throw damaged(this.label, `an offset (${offset}) out of range`);
    const out = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const at = offset + done;
      const pageStart = at - (at % PAGE);
      const page = await this.page(pageStart);
      const from = at - pageStart;
      if (from >= page.length) throw damaged(this.label, `a structure that runs past the end of the file (byte ${at})`);
      const n = Math.min(length - done, page.length - from);
      out.set(page.subarray(from, from + n), done);
      done += n;
    }
    return new DataView(out.buffer);
  }

  private async page(start: number): Promise<Uint8Array> {
    const cached = this.pages.get(start);
    if (cached) return cached;
    this.fetched += PAGE;
    if (this.fetched > this.maxBytes)
      throw badRequest(`${this.label}: its TIFF structure is spread over more than ${this.maxBytes} bytes, more than tessera reads to validate it`);
    const page = await this.bytes.read(start, PAGE);
    this.pages.set(start, page);
    return page;
  }
}

function damaged(label: string, what: string) {
  return badRequest(`${label} is not a readable TIFF: ${what}`);
}

export async function readTiffStructure(bytes: ByteRanges, label: string, limits: TiffStructureLimits): Promise<TiffStructure> {
  const reader = new PagedBytes(bytes, limits.maxBytes, label);
  const head = await reader.get(0, 16).catch(() => {
    throw damaged(label, 'the file is shorter than a TIFF header');
  });
  const order = head.getUint16(0, false);
  if (order !== 0x4949 && order !== 0x4d4d) throw damaged(label, 'no TIFF byte-order mark');
  const le = order === 0x4949;
  const magic = head.getUint16(2, le);
  if (magic !== 42 && magic !== 43) throw damaged(label, `TIFF version ${magic}`);
  const big = magic === 43;
  const u64 = (view: DataView, at: number): number => {
    const value = view.getBigUint64(at, le);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw damaged(label, 'an offset beyond 2^53');
    return Number(value);
  };
  const offsetSize = big ? 8 : 4;
  const readOffset = (view: DataView, at: number): number => (big ? u64(view, at) : view.getUint32(at, le));

  const ghostHeader = await readGhostHeader(reader, big ? 16 : 8);

  const directories: TiffDirectory[] = [];
  const seen = new Set<number>();
  let next = readOffset(head, big ? 8 : 4);
  while (next !== 0) {
    if (directories.length >= limits.maxDirectories)
      throw badRequest(`${label} has more than ${limits.maxDirectories} image directories, more than tessera validates`);
    if (seen.has(next)) throw damaged(label, `its directories loop back to byte ${next}`);
    seen.add(next);
    const countView = await reader.get(next, big ? 8 : 2);
    const count = big ? u64(countView, 0) : countView.getUint16(0, le);
    const entrySize = big ? 20 : 12;
    if (count > 4096) throw damaged(label, `a directory of ${count} entries`);
    const table = await reader.get(next + (big ? 8 : 2), count * entrySize + offsetSize);
    const entries = new Map<number, Entry>();
    for (let i = 0; i < count; i++) {
      const at = i * entrySize;
      const tag = table.getUint16(at, le);
      const type = table.getUint16(at + 2, le);
      const n = big ? u64(table, at + 4) : table.getUint32(at + 4, le);
      const size = (TYPE_SIZE[type] ?? 0) * n;
      const valueField = at + (big ? 12 : 8);
      const valuesAt = size <= offsetSize ? -1 - valueField : readOffset(table, valueField);
      entries.set(tag, { type, count: n, valuesAt });
    }
    const values = async (tag: number, first: number, n: number): Promise<number[]> => {
      const entry = entries.get(tag);
      const size = entry ? TYPE_SIZE[entry.type] : undefined;
      if (!entry || !size) return [];
      const take = Math.max(0, Math.min(n, entry.count - first));
      const view =
        entry.valuesAt < 0
          ? new DataView(table.buffer, -1 - entry.valuesAt + first * size, take * size)
          : await reader.get(entry.valuesAt + first * size, take * size);
      const out: number[] = [];
      for (let i = 0; i < take; i++) {
        const at = i * size;
        out.push(size === 2 ? view.getUint16(at, le) : size === 4 ? view.getUint32(at, le) : u64(view, at));
      }
      return out;
    };
    const one = async (tag: number, fallback: number): Promise<number> => (await values(tag, 0, 1))[0] ?? fallback;

    const width = await one(TAG.ImageWidth, 0);
    const height = await one(TAG.ImageLength, 0);
    const tiled = entries.has(TAG.TileOffsets);
    const blockWidth = tiled ? await one(TAG.TileWidth, width) : width;
    const blockHeight = tiled ? await one(TAG.TileLength, height) : Math.min(await one(TAG.RowsPerStrip, height), height);
    const blocks = blockWidth > 0 && blockHeight > 0 ? Math.ceil(width / blockWidth) * Math.ceil(height / blockHeight) : 0;
    // Band 1's blocks come first whether bands are interleaved in each block or stored apart.
    const firstBlockOffset = await firstNonZero(values, tiled ? TAG.TileOffsets : TAG.StripOffsets, blocks);
    directories.push({ offset: next, width, height, subfileType: await one(TAG.NewSubfileType, 0), firstBlockOffset });
    next = readOffset(table, count * entrySize);
  }
  if (directories.length === 0) throw damaged(label, 'no image directory');
  return { bigTiff: big, ghostHeader, directories };
}

/** The first non-zero entry among the first `n` of an offsets array, read a slice at a time. */
async function firstNonZero(values: (tag: number, first: number, n: number) => Promise<number[]>, tag: number, n: number): Promise<number> {
  const SLICE = 4096;
  for (let first = 0; first < n; first += SLICE) {
    const slice = await values(tag, first, Math.min(SLICE, n - first));
    if (slice.length === 0) return 0;
    const hit = slice.find((v) => v > 0);
    if (hit !== undefined) return hit;
  }
  return 0;
}

const GHOST_PREFIX = 'GDAL_STRUCTURAL_METADATA_SIZE=';

/** GDAL's ghost header: `GDAL_STRUCTURAL_METADATA_SIZE=nnnnnn bytes\n` and that many bytes of KEY=VALUE lines. */
async function readGhostHeader(reader: PagedBytes, at: number): Promise<string | null> {
  let head: DataView;
  try {
    head = await reader.get(at, GHOST_PREFIX.length + 13);
  } catch {
    return null;
  }
  const text = new TextDecoder('latin1').decode(head);
  if (!text.startsWith(GHOST_PREFIX)) return null;
  const m = /^GDAL_STRUCTURAL_METADATA_SIZE=(\d{6}) bytes\n/.exec(text);
  if (!m) return null;
  const size = Number(m[1]);
  const body = await reader.get(at + m[0].length, size).catch(() => null);
  return body ? new TextDecoder('latin1').decode(body) : null;
}
