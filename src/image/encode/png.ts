/**
 * tessera's own PNG encoder: grey, grey + alpha, RGB or RGBA (1–4 planes), 8 or 16 bits per sample,
 * no interlacing, IHDR + IDAT + IEND only.
 *
 * Why not sharp/libvips: under load PNG encoding was the largest CPU cost of a tile, and libvips
 * wants one interleaved buffer, made on the event loop (~1 ms), plus ~1.8 ms there to set its
 * pipeline up. Here the event loop spends 1.2–1.5 ms per 256² RGBA tile in one pass per row that
 * interleaves the planes and builds the filter candidates, and Node's zlib deflates on the libuv
 * pool at a level the deployment chooses (see DEFAULT_PNG_LEVEL).
 *
 * Row filters of graphics follow libpng's adaptive heuristic: per row, the filter whose output
 * bytes, read as signed, have the smallest sum of absolute values (ties go to the earlier of None,
 * Sub, Up, Paeth; Average is not tried, see CANDIDATE_FILTERS). Imagery gets one filter per band
 * of rows, chosen by entropy (imageryScanlines), and graphics of at most 256 colours become palette
 * images (see encodePngPlanes). Filters only change the size, never the decoded pixels.
 */
import os from 'node:os';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { TesseraError } from '../../errors.js';

/** The planes of one image, band-sequential, each `width * height` samples, the alpha plane last. */
export type PngPlanes = readonly Uint8Array[] | readonly Uint16Array[];

/**
 * The zlib level of `png` output unless configured (TiTiler's GDAL driver uses 6). Measured on 256²
 * tiles (Sentinel-2 TCI, shaded relief, 16-bit DEM, a colormapped DEM): against sharp at level 6,
 * level 4 takes 15–48% less CPU for files 1–15% larger. Level 6 here costs about as much CPU as
 * sharp (Node's zlib is no faster at 6); levels 1–2 save 0.1–1.6 ms of deflate against 4 for files
 * up to 75% larger (low-entropy tiles); level 3 was never better than 4. The level applies to
 * graphics; imagery is run-length coded (STRATEGIES), where zlib ignores any level but 0 (stored).
 */
export const DEFAULT_PNG_LEVEL = 4;

/**
 * What the pixels are, which decides how the zlib stream is made (see STRATEGIES). 'imagery':
 * sensor values through rescale or a cast (noisy, few long repeats); 'graphic': colormapped,
 * shaded or otherwise synthetic pixels (flat areas, repeated colour patterns).
 */
export type PngContent = 'imagery' | 'graphic';

/**
 * zlib strategy by content. Measured on 256² tiles against the default strategy at level 4: Z_RLE
 * made imagery (Sentinel-2 TCI, 16-bit DEM, the benchmark's textured scene and mosaic) 5–17%
 * smaller in 40% of the time (1.5 against 3.6 ms for an RGBA tile), but shaded relief 14–25% and
 * colormapped tiles 30–50% larger, so graphics keep the default. Z_FILTERED was never much better.
 */
const STRATEGIES: Record<PngContent, number> = {
  imagery: zlib.constants.Z_RLE,
  graphic: zlib.constants.Z_DEFAULT_STRATEGY,
};

/**
 * Whether the file may hold its pixels in another layout than the planes': 'any' lets a graphic of
 * at most 256 colours become a palette image (the same decoded pixels in a browser, but GDAL and
 * rasterio read such a file as one band of indexes and a colour table); 'planes' writes one channel
 * per plane, so that a reader of bands gets as many bands as were given (TiTiler's RGBA, `pngraw`).
 */
export type PngLayout = 'any' | 'planes';

/** IDAT chunks hold at most this many bytes of the zlib stream; tiles fit in one. */
const MAX_IDAT_BYTES = 1 << 20;

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const IHDR = 0x49484452;
const IDAT = 0x49444154;
const IEND = 0x49454e44;
const PLTE = 0x504c5445;
const TRNS = 0x74524e53;
/** Colour type 3: palette indexes. */
const INDEXED = 3;

/** PNG colour type by channel count: grey, grey + alpha, RGB, RGBA. */
const COLOUR_TYPES = [0, 4, 2, 6] as const;

/**
 * The filters tried on each row, in libpng's order of preference on equal costs. Average is left
 * out: on Sentinel-2, shaded-relief and 16-bit DEM tiles it won 0–25 rows in 256 and leaving it
 * out made the files 0–0.4% larger, while it cost 12–14% of the filter pass.
 */
const FILTER_NONE = 0;
const FILTER_SUB = 1;
const FILTER_UP = 2;
const FILTER_PAETH = 4;
const CANDIDATE_FILTERS = [FILTER_NONE, FILTER_SUB, FILTER_UP, FILTER_PAETH] as const;
const CANDIDATES = CANDIDATE_FILTERS.length;

/** |b| of a filtered byte b read as a signed 8-bit value (libpng's cost of one byte). */
const SIGNED_MAGNITUDE = Uint8Array.from({ length: 256 }, (_, v) => (v < 128 ? v : 256 - v));

/** Where, in a 16-bit sample's two bytes in memory, the high (first in PNG) byte is. */
const HIGH_BYTE_OFFSET = os.endianness() === 'LE' ? 1 : 0;

const deflate = promisify(zlib.deflate);

// ---- CRC-32 (zlib.crc32 from Node 20.15 / 22.2; a table otherwise)

const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

/** CRC-32 through a table, for Node versions without zlib.crc32 (exported for its test). */
export function tableCrc32(bytes: Uint8Array): number {
  let crc = -1;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

const crc32: (bytes: Uint8Array) => number = typeof zlib.crc32 === 'function' ? (bytes) => zlib.crc32(bytes) : tableCrc32;

// ---- row filters

/**
 * A zeroed scratch row of at least `bytes`. Never small: V8 keeps typed arrays of ≤ 64 bytes inside
 * the heap, and once the filter loop has seen one, its every array access takes a slower generic
 * path (measured +30% on the whole pass).
 */
function scratchRow(bytes: number): Uint8Array {
  return new Uint8Array(Math.max(bytes, 4096));
}

/**
 * Scratch rows reused by every call (the filter pass is synchronous, so calls never overlap):
 * the current and previous unfiltered rows (the current one is also the None candidate), then the
 * Sub, Up and Paeth candidates.
 */
class FilterRows {
  current = scratchRow(0);
  previous = scratchRow(0);
  sub = scratchRow(0);
  up = scratchRow(0);
  paeth = scratchRow(0);
  /** Per plane, the cost of each candidate (in CANDIDATE_FILTERS order) over its bytes of the row. */
  readonly planeCosts = new Float64Array(4 * CANDIDATES);
  /** Per plane, whether its previous row repeated the row above that one. */
  readonly repeated = new Uint8Array(4);

  /** Rows of at least `rowBytes`, the previous one zeroed (the row above the first is all zeros). */
  prepare(rowBytes: number): void {
    if (this.current.length < rowBytes) {
      this.current = scratchRow(rowBytes);
      this.previous = scratchRow(rowBytes);
      this.sub = scratchRow(rowBytes);
      this.up = scratchRow(rowBytes);
      this.paeth = scratchRow(rowBytes);
    } else {
      this.previous.fill(0, 0, rowBytes);
    }
  }

  swap(): void {
    const done = this.current;
    this.current = this.previous;
    this.previous = done;
  }

  candidate(filter: number): Uint8Array {
    switch (filter) {
      case FILTER_SUB:
        return this.sub;
      case FILTER_UP:
        return this.up;
      case FILTER_PAETH:
        return this.paeth;
      default:
        return this.current;
    }
  }
}

const rows = new FilterRows();

/**
 * One byte lane of a row (every `stride`-th byte from `first`): copies the lane's bytes from `src`
 * (`width` of them, from index `start`, `step` apart) into the current row, writes the lane's byte
 * of each candidate and adds the candidates' costs to `rows.planeCosts` from `costAt`. The left and
 * upper-left neighbours of a byte are the previous byte of the same lane, so they stay in locals.
 * Paeth is branch-free: on imagery its three-way choice is unpredictable, and mispredicted branches
 * made the pass ~40% slower.
 */
function filterLane(src: Uint8Array, start: number, step: number, width: number, first: number, stride: number, costAt: number): void {
  // From the module's `rows`, not a parameter: V8 then checks the arrays once, not on every byte
  // (measured 25% faster).
  const { current, previous, sub, up, paeth, planeCosts } = rows;
  let left = 0;
  let upperLeft = 0;
  let sumNone = 0;
  let sumSub = 0;
  let sumUp = 0;
  let sumPaeth = 0;
  for (let x = 0, s = start, j = first; x < width; x++, s += step, j += stride) {
    const value = src[s]!;
    const above = previous[j]!;
    current[j] = value;
    sumNone += SIGNED_MAGNITUDE[value]!;
    const fSub = (value - left) & 0xff;
    sub[j] = fSub;
    sumSub += SIGNED_MAGNITUDE[fSub]!;
    const fUp = (value - above) & 0xff;
    up[j] = fUp;
    sumUp += SIGNED_MAGNITUDE[fUp]!;
    // Paeth: of left, above and upper-left, the nearest to left + above - upperLeft (ties in that
    // order). Distances: pa = |above - upperLeft|, pb = |left - upperLeft|, pc = |sum of both|.
    const da = above - upperLeft;
    const db = left - upperLeft;
    const dc = da + db;
    const signA = da >> 31;
    const signB = db >> 31;
    const signC = dc >> 31;
    const pa = (da ^ signA) - signA;
    const pb = (db ^ signB) - signB;
    const pc = (dc ^ signC) - signC;
    const notLeft = ((pb - pa) | (pc - pa)) >> 31; // all ones when pa > pb or pa > pc
    const notAbove = (pc - pb) >> 31; // all ones when pb > pc
    const predictor = (left & ~notLeft) | (notLeft & ((above & ~notAbove) | (upperLeft & notAbove)));
    const fPaeth = (value - predictor) & 0xff;
    paeth[j] = fPaeth;
    sumPaeth += SIGNED_MAGNITUDE[fPaeth]!;
    left = value;
    upperLeft = above;
  }
  planeCosts[costAt] = planeCosts[costAt]! + sumNone;
  planeCosts[costAt + 1] = planeCosts[costAt + 1]! + sumSub;
  planeCosts[costAt + 2] = planeCosts[costAt + 2]! + sumUp;
  planeCosts[costAt + 3] = planeCosts[costAt + 3]! + sumPaeth;
}

/** Whether `bytes[start, start + length)` equals the `length` bytes before it (the row above). */
function repeatsRowAbove(bytes: Uint8Array, start: number, length: number): boolean {
  for (let i = start, end = start + length; i < end; i++) if (bytes[i] !== bytes[i - length]) return false;
  return true;
}

/** The filter whose candidate costs least over all planes; ties keep the earlier one, as libpng does. */
function cheapestFilter(planeCosts: Float64Array, channels: number): number {
  let best = 0;
  let bestCost = Infinity;
  for (let k = 0; k < CANDIDATES; k++) {
    let cost = 0;
    for (let c = 0; c < channels; c++) cost += planeCosts[c * CANDIDATES + k]!;
    if (cost < bestCost) {
      best = k;
      bestCost = cost;
    }
  }
  return CANDIDATE_FILTERS[best]!;
}

/**
 * The bytes of each plane as a plain Uint8Array (16-bit samples in host order, two bytes each).
 * Always a new view over the plane's ArrayBuffer: reading `.buffer` moves a small in-heap array out
 * of the heap, and Buffers become plain Uint8Arrays, so the filter loop sees one kind of array only.
 */
function byteViews(planes: PngPlanes): Uint8Array[] {
  return (planes as readonly (Uint8Array | Uint16Array)[]).map((p) => new Uint8Array(p.buffer, p.byteOffset, p.byteLength));
}

/**
 * The filtered scanlines of the image (what IDAT compresses): per row, the filter-type byte then
 * the row filtered with it, samples pixel-interleaved and 16-bit ones big-endian.
 *
 * A plane whose row repeats the two rows above it (an all-valid alpha plane, nodata areas) has the
 * same candidate bytes and costs as in the previous row; they are still in the scratch rows (the
 * candidates from the previous row, the unfiltered bytes from the row before, as current and
 * previous alternate), so the plane is skipped.
 */
function filterScanlines(planes: PngPlanes, width: number, height: number): Buffer {
  checkPlanes(planes, width, height);
  const channels = planes.length;
  const bytesPerSample = planes[0] instanceof Uint16Array ? 2 : 1;
  const bpp = channels * bytesPerSample;
  const rowBytes = width * bpp;
  const planeRowBytes = width * bytesPerSample;
  const out = Buffer.allocUnsafe(height * (rowBytes + 1));
  const views = byteViews(planes);
  rows.prepare(rowBytes);
  const { planeCosts, repeated } = rows;
  for (let y = 0, pos = 0; y < height; y++, pos += rowBytes + 1) {
    for (let c = 0; c < channels; c++) {
      const view = views[c]!;
      const start = y * planeRowBytes;
      const repeats = y > 0 && repeatsRowAbove(view, start, planeRowBytes);
      if (!repeats || repeated[c] === 0) {
        const costAt = c * CANDIDATES;
        planeCosts.fill(0, costAt, costAt + CANDIDATES);
        if (bytesPerSample === 2) {
          filterLane(view, start + HIGH_BYTE_OFFSET, 2, width, c * 2, bpp, costAt);
          filterLane(view, start + 1 - HIGH_BYTE_OFFSET, 2, width, c * 2 + 1, bpp, costAt);
        } else {
          filterLane(view, start, 1, width, c, bpp, costAt);
        }
      }
      repeated[c] = repeats ? 1 : 0;
    }
    const filter = cheapestFilter(planeCosts, channels);
    out[pos] = filter;
    out.set(rows.candidate(filter).subarray(0, rowBytes), pos + 1);
    rows.swap();
  }
  return out;
}

// ---- imagery: one filter per band of rows, chosen by entropy

/**
 * Imagery rows share a filter per band of this many rows, chosen on the band's first row. On the
 * benchmark's tiles and Sentinel-2 TCI tiles, files were 0.1% larger than with a choice on every
 * row, and no larger with every 16th. Judging a row costs about two filter passes over it, so at 8
 * the choice adds a quarter of a pass per tile.
 */
const IMAGERY_BAND_ROWS = 8;

const FILTER_AVERAGE = 3;
/**
 * The filters tried on imagery, in order of preference on equal costs. None and Up are left out:
 * on the same tiles adding them never made a file 0.1% smaller (imagery rows are never flat enough
 * for None; where Up beats Paeth, Average and Paeth are as good).
 */
const IMAGERY_FILTERS = [FILTER_PAETH, FILTER_SUB, FILTER_AVERAGE] as const;

/** Per IMAGERY_FILTERS entry, 256 counts of the filtered byte values of the row being judged. */
const imageryCounts = new Uint32Array(IMAGERY_FILTERS.length * 256);
/** c·log2(c) for every count c a row can give, grown to the widest row seen. */
let countInformation = new Float64Array(0);

function countInformationTable(rowBytes: number): Float64Array {
  if (countInformation.length <= rowBytes) countInformation = Float64Array.from({ length: rowBytes + 1 }, (_, c) => (c > 1 ? c * Math.log2(c) : 0));
  return countInformation;
}

/**
 * Counts, for one byte lane of a row (not the first), the values it would have filtered with each
 * of IMAGERY_FILTERS. Branch-free Paeth as in filterLane.
 */
function countLane(src: Uint8Array, start: number, step: number, width: number, planeRowBytes: number): void {
  const counts = imageryCounts;
  let left = 0;
  let upperLeft = 0;
  for (let x = 0, s = start; x < width; x++, s += step) {
    const value = src[s]!;
    const above = src[s - planeRowBytes]!;
    const da = above - upperLeft;
    const db = left - upperLeft;
    const dc = da + db;
    const signA = da >> 31;
    const signB = db >> 31;
    const signC = dc >> 31;
    const pa = (da ^ signA) - signA;
    const pb = (db ^ signB) - signB;
    const pc = (dc ^ signC) - signC;
    const notLeft = ((pb - pa) | (pc - pa)) >> 31;
    const notAbove = (pc - pb) >> 31;
    const predictor = (left & ~notLeft) | (notLeft & ((above & ~notAbove) | (upperLeft & notAbove)));
    counts[(value - predictor) & 0xff]!++;
    counts[256 + ((value - left) & 0xff)]!++;
    counts[512 + ((value - ((left + above) >> 1)) & 0xff)]!++;
    left = value;
    upperLeft = above;
  }
}

/**
 * Of IMAGERY_FILTERS, the one whose counted bytes carry the least information (order-0 entropy
 * times the byte count: what a Huffman code of the row would spend), given the counts of one row.
 * Equal costs keep the earlier filter.
 */
function leastInformationFilter(rowBytes: number): number {
  const table = countInformationTable(rowBytes);
  let best = 0;
  let bestScore = -1;
  for (let k = 0; k < IMAGERY_FILTERS.length; k++) {
    // Σ c·log2(c) is the entropy's complement: the larger, the fewer bits.
    let score = 0;
    for (let v = k * 256, end = v + 256; v < end; v++) score += table[imageryCounts[v]!]!;
    if (score > bestScore) {
      best = k;
      bestScore = score;
    }
  }
  return IMAGERY_FILTERS[best]!;
}

/**
 * One byte lane of a row (not the first) filtered with Paeth straight into `out` (from `j`, every
 * `stride`-th byte): the byte above is the same lane one plane row back in `src`, the left one the
 * previous byte of the lane. Branch-free, as in filterLane, and written out here as there: a
 * shared predictor function measured 10–25% slower in both loops.
 */
function paethLane(src: Uint8Array, start: number, step: number, width: number, planeRowBytes: number, out: Uint8Array, j: number, stride: number): void {
  let left = 0;
  let upperLeft = 0;
  for (let x = 0, s = start; x < width; x++, s += step, j += stride) {
    const value = src[s]!;
    const above = src[s - planeRowBytes]!;
    const da = above - upperLeft;
    const db = left - upperLeft;
    const dc = da + db;
    const signA = da >> 31;
    const signB = db >> 31;
    const signC = dc >> 31;
    const pa = (da ^ signA) - signA;
    const pb = (db ^ signB) - signB;
    const pc = (dc ^ signC) - signC;
    const notLeft = ((pb - pa) | (pc - pa)) >> 31;
    const notAbove = (pc - pb) >> 31;
    const predictor = (left & ~notLeft) | (notLeft & ((above & ~notAbove) | (upperLeft & notAbove)));
    out[j] = (value - predictor) & 0xff;
    left = value;
    upperLeft = above;
  }
}

/** One byte lane of a row (not the first) filtered with Average into `out`. */
function averageLane(src: Uint8Array, start: number, step: number, width: number, planeRowBytes: number, out: Uint8Array, j: number, stride: number): void {
  let left = 0;
  for (let x = 0, s = start; x < width; x++, s += step, j += stride) {
    const value = src[s]!;
    out[j] = (value - ((left + src[s - planeRowBytes]!) >> 1)) & 0xff;
    left = value;
  }
}

/** One byte lane of a row filtered with Sub into `out` (also Paeth's and Up's first row: all zeros above). */
function subLane(src: Uint8Array, start: number, step: number, width: number, out: Uint8Array, j: number, stride: number): void {
  let left = 0;
  for (let x = 0, s = start; x < width; x++, s += step, j += stride) {
    const value = src[s]!;
    out[j] = (value - left) & 0xff;
    left = value;
  }
}

/** Zeros in one byte lane of `out`: Paeth of a row equal to the row above (an opaque alpha plane). */
function zeroLane(width: number, out: Uint8Array, j: number, stride: number): void {
  for (let x = 0; x < width; x++, j += stride) out[j] = 0;
}

/**
 * The scanlines of imagery: Sub on the first row, then per band of IMAGERY_BAND_ROWS rows one of
 * Paeth, Sub or Average, the one whose bytes on the band's first row have the least entropy.
 *
 * Why not libpng's choice per row (filterScanlines): on imagery the sum of absolute values it
 * minimises is a poor guess of what zlib's Huffman codes spend, and judging every row costs ~60%
 * more than filtering it. Measured on 30 RGBA tiles (the benchmark's scene and mosaic, Sentinel-2
 * TCI), run-length coded, against TiTiler's files of the same pixels: Paeth throughout was 0.7%
 * smaller on the whole but 1.3% larger on the mosaic's tiles; libpng's heuristic over all five
 * filters 2.3% smaller; this 2.7% smaller, and smaller on each of the three sets (scene 2.9%,
 * mosaic 2.1%, TCI 4.2%). Planes whose row repeats the row above (an opaque alpha
 * plane, nodata areas) take no part in the choice and, under Paeth, are written as zeros without
 * reading them again: a quarter of the work of an opaque RGBA tile, which pays for the choice.
 */
function imageryScanlines(planes: PngPlanes, width: number, height: number): Buffer {
  checkPlanes(planes, width, height);
  const channels = planes.length;
  const bytesPerSample = planes[0] instanceof Uint16Array ? 2 : 1;
  const bpp = channels * bytesPerSample;
  const rowBytes = width * bpp;
  const planeRowBytes = width * bytesPerSample;
  const file = Buffer.allocUnsafe(height * (rowBytes + 1));
  // A plain Uint8Array over the Buffer, as for the planes (see byteViews).
  const out = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
  const views = byteViews(planes);
  const repeated = new Uint8Array(channels);
  // 16-bit samples are big-endian in PNG: the lane of the high byte comes first.
  const laneOffset = (lane: number): number => (bytesPerSample === 2 ? (lane === 0 ? HIGH_BYTE_OFFSET : 1 - HIGH_BYTE_OFFSET) : 0);
  let filter: number = FILTER_SUB;
  for (let y = 0, pos = 0; y < height; y++, pos += rowBytes + 1) {
    const start = y * planeRowBytes;
    if (y === 0) {
      out[pos] = FILTER_SUB;
      for (let c = 0; c < channels; c++)
        for (let lane = 0; lane < bytesPerSample; lane++)
          subLane(views[c]!, start + laneOffset(lane), bytesPerSample, width, out, pos + 1 + c * bytesPerSample + lane, bpp);
      continue;
    }
    for (let c = 0; c < channels; c++) repeated[c] = repeatsRowAbove(views[c]!, start, planeRowBytes) ? 1 : 0;
    if ((y - 1) % IMAGERY_BAND_ROWS === 0) {
      imageryCounts.fill(0);
      for (let c = 0; c < channels; c++) {
        if (repeated[c]) continue;
        for (let lane = 0; lane < bytesPerSample; lane++) countLane(views[c]!, start + laneOffset(lane), bytesPerSample, width, planeRowBytes);
      }
      filter = leastInformationFilter(rowBytes);
    }
    out[pos] = filter;
    for (let c = 0; c < channels; c++) {
      const view = views[c]!;
      for (let lane = 0; lane < bytesPerSample; lane++) {
        const from = start + laneOffset(lane);
        const j = pos + 1 + c * bytesPerSample + lane;
        if (filter === FILTER_PAETH) {
          if (repeated[c]) zeroLane(width, out, j, bpp);
          else paethLane(view, from, bytesPerSample, width, planeRowBytes, out, j, bpp);
        } else if (filter === FILTER_SUB) subLane(view, from, bytesPerSample, width, out, j, bpp);
        else averageLane(view, from, bytesPerSample, width, planeRowBytes, out, j, bpp);
      }
    }
  }
  return file;
}

// ---- chunks

/** Writes a chunk (length, type, data already at `pos + 8`, CRC) and returns the position after it. */
function sealChunk(file: Buffer, pos: number, type: number, length: number): number {
  file.writeUInt32BE(length, pos);
  file.writeUInt32BE(type, pos + 4);
  const end = pos + 8 + length;
  file.writeUInt32BE(crc32(file.subarray(pos + 4, end)), end);
  return end + 4;
}

/** A chunk written between IHDR and the image data (PLTE, tRNS). */
interface AncillaryChunk {
  type: number;
  data: Uint8Array;
}

function pngFile(width: number, height: number, bitDepth: number, colourType: number, stream: Buffer, before: readonly AncillaryChunk[] = []): Buffer {
  const idatCount = Math.max(1, Math.ceil(stream.length / MAX_IDAT_BYTES));
  const extra = before.reduce((sum, c) => sum + 12 + c.data.length, 0);
  const file = Buffer.allocUnsafe(SIGNATURE.length + (12 + 13) + extra + idatCount * 12 + stream.length + 12);
  file.set(SIGNATURE, 0);
  let pos = SIGNATURE.length;
  file.writeUInt32BE(width, pos + 8);
  file.writeUInt32BE(height, pos + 12);
  // bit depth, colour type, compression 0 (deflate), filter method 0 (adaptive), no interlace
  file.set([bitDepth, colourType, 0, 0, 0], pos + 16);
  pos = sealChunk(file, pos, IHDR, 13);
  for (const chunk of before) {
    file.set(chunk.data, pos + 8);
    pos = sealChunk(file, pos, chunk.type, chunk.data.length);
  }
  for (let i = 0; i < idatCount; i++) {
    const part = stream.subarray(i * MAX_IDAT_BYTES, (i + 1) * MAX_IDAT_BYTES);
    file.set(part, pos + 8);
    pos = sealChunk(file, pos, IDAT, part.length);
  }
  sealChunk(file, pos, IEND, 0);
  return file;
}

// ---- palette (colour type 3)

/** Open-addressing table from packed RGBA to palette index; 1024 slots keep 256 colours sparse. */
const PALETTE_SLOTS = 1024;
const slotKeys = new Uint32Array(PALETTE_SLOTS);
const slotIndex = new Int16Array(PALETTE_SLOTS);
const paletteColours = new Uint32Array(256);

/** A palette image: the filtered scanlines (filter None on every row) and the palette's colours. */
interface PaletteImage {
  scanlines: Buffer;
  /** Packed RGBA (r in the low byte) per palette index. */
  colours: Uint32Array;
}

/**
 * The image as palette indexes when its 8-bit RGB(A) pixels take at most 256 distinct values, else
 * undefined (given up at the 257th colour). Lossless: each palette entry is one exact RGBA tuple,
 * so decoders return the very pixels of the planes (RGBA when `planes` has alpha, as a tRNS chunk
 * is then always written). Rows are left unfiltered, as libpng and the PNG specification advise for
 * palette images: neighbouring indexes carry no numeric relation for a filter to exploit.
 */
function paletteImage(planes: readonly Uint8Array[], width: number, height: number): PaletteImage | undefined {
  const [r, g, b] = planes as [Uint8Array, Uint8Array, Uint8Array];
  const a = planes[3];
  const scanlines = Buffer.allocUnsafe(height * (width + 1));
  slotIndex.fill(-1);
  let count = 0;
  // Colormapped tiles run in flat areas; the last colour is checked before the table.
  let lastKey = -1;
  let lastIndex = 0;
  for (let y = 0, i = 0, pos = 0; y < height; y++) {
    scanlines[pos++] = FILTER_NONE;
    for (let x = 0; x < width; x++, i++, pos++) {
      const key = (r[i]! | (g[i]! << 8) | (b[i]! << 16) | ((a ? a[i]! : 255) << 24)) >>> 0;
      if (key !== lastKey) {
        let slot = Math.imul(key, 0x9e3779b1) >>> 22;
        let found = slotIndex[slot]!;
        while (found >= 0 && slotKeys[slot] !== key) {
          slot = (slot + 1) & (PALETTE_SLOTS - 1);
          found = slotIndex[slot]!;
        }
        if (found < 0) {
          if (count === 256) return undefined;
          found = count++;
          slotKeys[slot] = key;
          slotIndex[slot] = found;
          paletteColours[found] = key;
        }
        lastKey = key;
        lastIndex = found;
      }
      scanlines[pos] = lastIndex;
    }
  }
  return { scanlines, colours: paletteColours.slice(0, count) };
}

/** PLTE (RGB per entry) and, for images with alpha, tRNS (alpha per entry). */
function paletteChunks(colours: Uint32Array, withAlpha: boolean): AncillaryChunk[] {
  const rgb = new Uint8Array(colours.length * 3);
  const alpha = new Uint8Array(colours.length);
  colours.forEach((key, k) => {
    rgb[k * 3] = key & 0xff;
    rgb[k * 3 + 1] = (key >>> 8) & 0xff;
    rgb[k * 3 + 2] = (key >>> 16) & 0xff;
    alpha[k] = key >>> 24;
  });
  return withAlpha
    ? [
        { type: PLTE, data: rgb },
        { type: TRNS, data: alpha },
      ]
    : [{ type: PLTE, data: rgb }];
}

// ---- the encoder

function fail(why: string): never {
  throw new TesseraError('Internal', `cannot encode a PNG: ${why}`);
}

/** 1–4 planes, all 8-bit or all 16-bit, each `width * height` samples (callers' bugs otherwise). */
function checkPlanes(planes: PngPlanes, width: number, height: number): void {
  if (planes.length < 1 || planes.length > 4) fail(`${planes.length} planes (1 to 4 are possible)`);
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > 0x7fffffff || height > 0x7fffffff)
    fail(`a ${width}×${height} image`);
  const sixteenBit = planes[0] instanceof Uint16Array;
  for (const plane of planes as readonly (Uint8Array | Uint16Array)[]) {
    if (!(plane instanceof Uint8Array || plane instanceof Uint16Array) || plane instanceof Uint16Array !== sixteenBit) fail('planes of different sample types');
    if (plane.length !== width * height) fail(`a plane of ${plane.length} samples for ${width}×${height} pixels`);
  }
}

/**
 * The PNG file of `planes` (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA; Uint8Array planes give 8-bit
 * samples, Uint16Array planes 16-bit ones), its zlib stream deflated on the libuv pool at `level`
 * (0–9; 0 stores) with the strategy for `content`. Filtering (1.2–1.5 ms for a 256² RGBA tile) runs
 * on the calling thread.
 *
 * A graphic in 8-bit RGB(A) with at most 256 colours, when `layout` allows it, is written as a
 * palette image instead: one byte per pixel, no filter search. On 31 tiles of the benchmark's
 * expression + viridis mix, encoding took 2.4–2.6 ms of CPU per tile against 5.2 ms for filtered RGBA
 * (filters 1.9 ms, deflate the rest), and files averaged 27 KB against 56 KB;
 * imagery is not tried, as it almost never has so few colours. Imagery rows are filtered by bands
 * (see imageryScanlines); graphics get libpng's choice per row, which pays on their flat areas.
 */
export async function encodePngPlanes(
  planes: PngPlanes,
  width: number,
  height: number,
  level: number,
  content: PngContent = 'graphic',
  layout: PngLayout = 'any',
): Promise<Buffer> {
  if (!Number.isInteger(level) || level < 0 || level > 9) fail(`zlib level ${level} (0 to 9 are possible)`);
  checkPlanes(planes, width, height);
  const palette =
    content === 'graphic' && layout === 'any' && planes.length >= 3 && planes[0] instanceof Uint8Array
      ? paletteImage(planes as readonly Uint8Array[], width, height)
      : undefined;
  const filtered = palette ? palette.scanlines : content === 'imagery' ? imageryScanlines(planes, width, height) : filterScanlines(planes, width, height);
  // One output chunk as large as the worst case: Node's zlib otherwise returns to the event loop
  // every 16 KiB of output and goes back to the pool for the next (measured: ~2 ms of main-thread
  // time per 256² RGBA tile in those round trips).
  const chunkSize = Math.max(64 * 1024, filtered.length + (filtered.length >>> 3) + 1024);
  const stream = await deflate(filtered, { level, strategy: STRATEGIES[content], chunkSize });
  if (palette) return pngFile(width, height, 8, INDEXED, stream, paletteChunks(palette.colours, planes.length === 4));
  const bitDepth = planes[0] instanceof Uint16Array ? 16 : 8;
  return pngFile(width, height, bitDepth, COLOUR_TYPES[planes.length - 1]!, stream);
}
