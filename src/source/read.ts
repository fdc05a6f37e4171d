/**
 * The low-level read: pixels and masks of some bands of one GDAL dataset on a target grid, with
 * rio-tiler's value and mask rules (engine-semantics §1.2–1.3).
 *
 * Two kinds of target:
 * - `window`: same CRS as the dataset; a (possibly fractional or partly outside) source window
 *   decimated or enlarged to the output size with the RasterIO `resampling`;
 * - `warp`: another CRS; rio-tiler builds a WarpedVRT on a grid (`vrtGrid`) and reads it at the
 *   output size. GDAL 3.10 (TiTiler's wheels) answers a read of *all* the VRT's bands over its
 *   whole extent by warping the chosen source overview straight into the output grid in one region,
 *   and any other read (a band subset, a padded window) from the VRT's 512×128 blocks and implicit
 *   overviews with RasterIO resampling (frmts/vrt/vrtwarped.cpp). Both paths are reproduced here on
 *   Debian's GDAL 3.6 — nearest neighbour in JavaScript (warp-nearest.ts), other kernels with
 *   gdalwarp in one region or through a warped VRT — because the two give visibly different pixels,
 *   and so do gdalwarp's own cuts of a warp partly off the raster (its fill-ratio heuristic).
 *
 * Temporary VRT/MEM datasets live only for the duration of one call and are always closed.
 */
import { gdal, type Dataset, type RasterBand } from '../gdal/gdal.js';
import { numpyDtype, type BandMeta, type SourceMeta } from './dataset.js';
import { ARRAY_OF, type BandArray, type DType } from '../image/image-data.js';
import { maskFromAlpha, maskFromValues, normaliseMaskBand } from './masks.js';
import { arrayBounds, type GeoTransform, type Grid, type Window } from './geometry.js';
import { boundlessPart, needsBoundless, type PixelRect } from './boundless.js';
import { overviewForRead, type OverviewRule } from './overview-choice.js';
import { srsFrom, transformerBetween, transformPoints, type TransformMemo } from '../gdal/crs.js';
import { TesseraError, invalidBandIndex } from '../errors.js';
import { blockKey, type Affinity } from './pool.js';
import {
  gather,
  gatherMaskedPlanes,
  indexMask,
  invGeoTransform,
  nearestIndex,
  rasterIoNearestSample,
  type GeoTransform6,
  type WarpPieces,
} from './warp-nearest.js';

/** The block size of a warped VRT (VRTWarpedDataset's default, which rasterio's WarpedVRT keeps). */
const VRT_BLOCKS: WarpPieces = { kind: 'blocks', width: 512, height: 128 };

export type ReadResampling = 'nearest' | 'bilinear' | 'cubic' | 'cubic_spline' | 'lanczos' | 'average' | 'mode' | 'gauss' | 'rms';
export type WarpResampling = 'nearest' | 'bilinear' | 'cubic' | 'cubic_spline' | 'lanczos' | 'average' | 'mode' | 'sum' | 'rms';

export interface ReadOptions {
  /** 1-based band indexes; default every non-alpha band. */
  indexes?: readonly number[];
  /** Overrides the file's nodata (NaN allowed). */
  nodata?: number;
  resampling: ReadResampling;
  reproject: WarpResampling;
  /**
   * 'gdal' forces gdalwarp for nearest-neighbour warps too (which otherwise run in JavaScript, see
   * warp-nearest.ts): for tests that hold the two side by side.
   */
  engine?: 'auto' | 'gdal';
  /**
   * Point transformations shared by the reads of one output image (a mosaic tile's assets warp
   * onto the same grid); each read transforms through it. Results are the same without it.
   */
  transformMemo?: TransformMemo;
}

export type ReadTarget =
  | { kind: 'window'; window: Window; width: number; height: number }
  | {
      kind: 'warp';
      /** Target CRS as GDAL user input (WKT, EPSG:…). */
      crs: string;
      grid: Grid;
      /** Part of the grid to read (padding); the whole grid when absent. */
      window?: { x: number; y: number; width: number; height: number };
      width: number;
      height: number;
    };

export interface RawRead {
  dtype: DType;
  indexes: number[];
  bands: BandArray[];
  masks: Uint8Array[];
  width: number;
  height: number;
  /** Who warped it, for a read into another CRS: the JS nearest-neighbour warp or gdalwarp. */
  warpedBy?: 'js' | 'gdal';
}

const GMF_ALL_VALID = 0x01;
const GMF_PER_DATASET = 0x02;
const GMF_ALPHA = 0x04;

/** The source types tessera reads (GDAL's 64-bit integers and complex types are refused). */
const READABLE: ReadonlySet<string> = new Set(['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'float64']);

function dtypeOf(band: BandMeta | undefined): DType {
  const name = band ? numpyDtype(band.dataType) : '';
  const dtype = READABLE.has(name) ? (name as DType) : undefined;
  if (!dtype) throw new TesseraError('BadRequest', `Unsupported raster data type '${band?.dataType ?? '?'}'`);
  return dtype;
}

/** GDAL type name to read a dtype into (int64 is not a source type; reads never produce it). */
const GDAL_OF_DTYPE: Partial<Record<DType, string>> = {
  uint8: 'Byte',
  int8: 'Int8',
  uint16: 'UInt16',
  int16: 'Int16',
  uint32: 'UInt32',
  int32: 'Int32',
  float32: 'Float32',
  float64: 'Float64',
};

const WARP_NAMES: Record<WarpResampling, string> = {
  nearest: 'near',
  bilinear: 'bilinear',
  cubic: 'cubic',
  cubic_spline: 'cubicspline',
  lanczos: 'lanczos',
  average: 'average',
  mode: 'mode',
  sum: 'sum',
  rms: 'rms',
};

const TRANSLATE_NAMES: Record<ReadResampling, string> = {
  nearest: 'nearest',
  bilinear: 'bilinear',
  cubic: 'cubic',
  cubic_spline: 'cubicspline',
  lanczos: 'lanczos',
  average: 'average',
  mode: 'mode',
  gauss: 'gauss',
  rms: 'rms',
};

/** The resampling names a read takes (DatasetParams' `resampling`), in TiTiler's order. */
export const READ_RESAMPLING = Object.keys(TRANSLATE_NAMES) as readonly ReadResampling[];

/** gdal_translate's options for a VRT of window `win` resampled to width × height. */
function resampledWindow(win: { x: number; y: number; w: number; h: number }, width: number, height: number, resampling: ReadResampling): string[] {
  const window = [win.x, win.y, win.w, win.h].map(String);
  return ['-of', 'VRT', '-srcwin', ...window, '-outsize', String(width), String(height), '-r', TRANSLATE_NAMES[resampling]];
}
/** The resampling names a warp takes (DatasetParams' `reproject`), in TiTiler's order. */
export const WARP_RESAMPLING = Object.keys(WARP_NAMES) as readonly WarpResampling[];

/** RasterIO resampling names gdal-async understands (it has no RMS: such reads go through a VRT). */
const RASTERIO_NAMES: Partial<Record<ReadResampling, string>> = {
  nearest: 'NearestNeighbour',
  bilinear: 'Bilinear',
  cubic: 'Cubic',
  cubic_spline: 'CubicSpline',
  lanczos: 'Lanczos',
  average: 'Average',
  mode: 'Mode',
  gauss: 'Gauss',
};

function alphaIndex(meta: SourceMeta): number | undefined {
  const i = meta.bands.findIndex((b) => b.colorInterp === 'alpha' || (b.maskFlags & GMF_ALPHA) !== 0);
  return i >= 0 ? i + 1 : undefined;
}

/** rio-tiler `non_alpha_indexes`. */
export function nonAlphaIndexes(meta: SourceMeta): number[] {
  const out: number[] = [];
  meta.bands.forEach((b, i) => {
    if (b.colorInterp !== 'alpha' && (b.maskFlags & GMF_ALPHA) === 0) out.push(i + 1);
  });
  return out;
}

/** The effective nodata: the user's, else band 1's (rasterio's `dataset.nodata`). */
function effectiveNodata(meta: SourceMeta, user: number | undefined): number | undefined {
  if (user !== undefined) return user;
  const n = meta.bands[0]?.nodata;
  return n === null || n === undefined ? undefined : n;
}

let tempCounter = 0;
function tempPath(ext: string): string {
  tempCounter = (tempCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `/vsimem/tessera/${process.pid}-${tempCounter}.${ext}`;
}

function closeQuietly(ds: Dataset | undefined, path?: string): void {
  try {
    ds?.close();
  } catch {
    // already closed
  }
  if (path) {
    try {
      gdal.vsimem.release(path);
    } catch {
      // a MEM dataset or an unflushed VRT leaves no file behind
    }
  }
}

function nodataArg(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  return String(v);
}

/**
 * The source overview GDAL (3.10, TiTiler's) warps from when a warped VRT is read smaller than its
 * size. Implicit overviews are sized like the VRT divided by each source overview's ratio; the
 * coarsest is taken whose downsampling stays under `desired × threshold + 0.1` (threshold 1.2 for
 * nearest, 1.0 otherwise). The additive 0.1 is not in GDAL's documentation: it is fitted to GDAL
 * 3.10's observed choices (eight switch points over several VRT sizes, overview factors 2 and 4,
 * nearest and bilinear) and reproduces every one of them. Returns undefined for full resolution.
 */
function implicitOverviewLevel(
  meta: SourceMeta,
  vrt: { width: number; height: number },
  out: { width: number; height: number },
  resampling: ReadResampling,
  /** The whole VRT when `vrt` is only the window read from it (padding). */
  whole: { width: number; height: number } = vrt,
): number | undefined {
  const desired = Math.min(vrt.width / out.width, vrt.height / out.height);
  if (desired <= 1) return undefined;
  const threshold = resampling === 'nearest' ? 1.2 : 1.0;
  let best: number | undefined;
  let bestFactor = 0;
  meta.overviewSizes.forEach(([ow], level) => {
    const ratio = meta.width / ow;
    const w = Math.floor(whole.width / ratio + 0.5);
    const h = Math.floor(whole.height / ratio + 0.5);
    if (w < 1 || h < 1) return;
    const factor = Math.min(whole.width / w, whole.height / h);
    if (factor >= desired * threshold + 0.1 || factor <= bestFactor) return;
    best = level;
    bestFactor = factor;
  });
  return best;
}

async function readBandInto(
  band: RasterBand,
  dtype: DType,
  win: { x: number; y: number; w: number; h: number },
  width: number,
  height: number,
  resampling: ReadResampling,
): Promise<BandArray> {
  const out = new ARRAY_OF[dtype](width * height);
  await band.pixels.readAsync(win.x, win.y, win.w, win.h, out as never, {
    buffer_width: width,
    buffer_height: height,
    resampling: RASTERIO_NAMES[resampling] ?? 'NearestNeighbour',
    data_type: GDAL_OF_DTYPE[dtype]!,
  });
  return out;
}

const UNSIGNED: ReadonlySet<DType> = new Set(['uint8', 'uint16', 'uint32']);

/**
 * Reads `indexes` (+ alpha) of `ds` on an integer window at the output size, then derives the masks.
 * When `viaVrt` the window may be fractional or outside the raster and the resampling may be one
 * gdal-async cannot name: a gdal_translate VRT carries the exact source window and resampling.
 */
async function readAndMask(
  ds: Dataset,
  dtype: DType,
  win: { x: number; y: number; w: number; h: number },
  width: number,
  height: number,
  resampling: ReadResampling,
  indexes: number[],
  alpha: number | undefined,
  nodata: number | undefined,
  maskFlags: (index: number) => number,
): Promise<{ bands: BandArray[]; masks: Uint8Array[] }> {
  const bands: BandArray[] = [];
  for (const i of indexes) {
    if (i < 1 || i > ds.bands.count()) {
      throw invalidBandIndex(i, ds.bands.count());
    }
    bands.push(await readBandInto(ds.bands.get(i), dtype, win, width, height, resampling));
  }
  if (alpha !== undefined && nodata === undefined) {
    // An unsigned alpha is read as Byte: GDAL clamps, so what is not 0 stays not 0 (a float alpha
    // of 0.3 would round to 0 and a negative one clamp to it, so those are read as they are).
    const a = await readBandInto(ds.bands.get(alpha), UNSIGNED.has(dtype) ? 'uint8' : dtype, win, width, height, resampling);
    const mask = await maskFromAlpha(a);
    return { bands, masks: bands.map(() => mask) };
  }
  if (nodata !== undefined) {
    const masks: Uint8Array[] = [];
    for (const b of bands) masks.push(await maskFromValues(b, nodata));
    return { bands, masks };
  }
  // GDAL's per-band mask (internal mask, or all valid).
  const masks: Uint8Array[] = [];
  let shared: Uint8Array | undefined;
  for (const i of indexes) {
    const flags = maskFlags(i);
    if (flags & GMF_ALL_VALID) {
      shared ??= new Uint8Array(width * height).fill(255);
      masks.push(shared);
      continue;
    }
    const maskBand = ds.bands.get(i).getMaskBand();
    if (!maskBand) {
      shared ??= new Uint8Array(width * height).fill(255);
      masks.push(shared);
      continue;
    }
    masks.push(await normaliseMaskBand((await readBandInto(maskBand, 'uint8', win, width, height, resampling)) as Uint8Array));
  }
  return { bands, masks };
}

/**
 * Reads a same-CRS window (rio-tiler `read` without a WarpedVRT): a window on the raster as
 * rasterio's RasterIO reads it (GDAL 3.10's overview choice, see overview-choice.ts), a window
 * partly off it as rasterio's boundless read does (see boundless.ts).
 */
async function readWindow(ds: Dataset, meta: SourceMeta, target: Extract<ReadTarget, { kind: 'window' }>, opts: ReadOptions): Promise<RawRead> {
  const dtype = dtypeOf(meta.bands[0]);
  const indexes = opts.indexes ? [...opts.indexes] : nonAlphaIndexes(meta);
  const nodata = effectiveNodata(meta, opts.nodata);
  const alpha = alphaIndex(meta);
  const { window: w, width, height } = target;
  const flags = (i: number): number => meta.bands[i - 1]?.maskFlags ?? GMF_ALL_VALID;
  const read = (win: PixelRect, whole: { w: number; h: number }, outW: number, outH: number): Promise<{ bands: BandArray[]; masks: Uint8Array[] }> =>
    readSourceWindow(ds, meta, dtype, win, whole, outW, outH, opts.resampling, indexes, alpha, nodata, flags);
  if (!needsBoundless(w, meta.width, meta.height)) {
    const win = { x: w.colOff, y: w.rowOff, w: w.width, h: w.height };
    // rasterio hands GDAL the window's size truncated (and the exact one beside it).
    const { bands, masks } = await read(win, { w: Math.trunc(w.width), h: Math.trunc(w.height) }, width, height);
    return { dtype, indexes, bands, masks, width, height };
  }
  // Partly off the raster: only the part GDAL's boundless VRT takes is read, into its place.
  const bands = indexes.map(() => new ARRAY_OF[dtype](width * height).fill(nodata ?? 0) as BandArray);
  const masks = indexes.map(() => new Uint8Array(width * height));
  const part = boundlessPart(meta.geoTransform as GeoTransform, meta.width, meta.height, meta.overviewSizes, w, width, height);
  if (!part) return { dtype, indexes, bands, masks, width, height };
  for (const i of indexes) {
    if (i < 1 || i > ds.bands.count()) throw invalidBandIndex(i, ds.bands.count());
  }
  const got = await read(part.src, part.srcWhole, part.out.w, part.out.h);
  const { x, y, w: pw, h: ph } = part.out;
  for (let k = 0; k < indexes.length; k++) {
    const from = got.bands[k]!;
    const fromMask = got.masks[k]!;
    for (let r = 0; r < ph; r++) {
      bands[k]!.set(from.subarray(r * pw, (r + 1) * pw) as never, (y + r) * width + x);
      masks[k]!.set(fromMask.subarray(r * pw, (r + 1) * pw), (y + r) * width + x);
    }
  }
  return { dtype, indexes, bands, masks, width, height };
}

/**
 * Reads source window `win` (fractional, on the raster) into outW×outH with the RasterIO
 * resampling, from the overview level GDAL 3.10 takes for a read of `whole` pixels (see
 * overview-choice.ts): straight from
 * the dataset where the window is whole pixels and GDAL 3.6 would take the same level, else
 * through a gdal_translate VRT carrying the exact window, the resampling gdal-async cannot name,
 * and the level (`-ovr`) where GDAL 3.6 would take another.
 */
async function readSourceWindow(
  ds: Dataset,
  meta: SourceMeta,
  dtype: DType,
  win: PixelRect,
  whole: { w: number; h: number },
  width: number,
  height: number,
  resampling: ReadResampling,
  indexes: number[],
  alpha: number | undefined,
  nodata: number | undefined,
  flags: (index: number) => number,
): Promise<{ bands: BandArray[]; masks: Uint8Array[] }> {
  const choose = (rule: OverviewRule): number | undefined =>
    overviewForRead(meta.width, meta.height, meta.overviewSizes, whole.w, whole.h, width, height, resampling === 'nearest', rule);
  const level = choose('gdal-3.10');
  const pinned = level !== choose('gdal-3.6');
  const integral = [win.x, win.y, win.w, win.h].every((v) => Math.abs(v - Math.round(v)) < 1e-9);
  if (integral && RASTERIO_NAMES[resampling] && !pinned) {
    const rounded = { x: Math.round(win.x), y: Math.round(win.y), w: Math.round(win.w), h: Math.round(win.h) };
    return readAndMask(ds, dtype, rounded, width, height, resampling, indexes, alpha, nodata, flags);
  }
  const path = tempPath('vrt');
  let vrt: Dataset | undefined;
  try {
    vrt = await gdal.translateAsync(path, ds, [
      ...resampledWindow(win, width, height, resampling),
      ...(pinned ? ['-ovr', level === undefined ? 'NONE' : String(level)] : []),
    ]);
    return await readAndMask(vrt, dtype, { x: 0, y: 0, w: width, h: height }, width, height, 'nearest', indexes, alpha, nodata, flags);
  } finally {
    closeQuietly(vrt, path);
  }
}

type WarpTarget = Extract<ReadTarget, { kind: 'warp' }>;

/**
 * Runs `fn` with the source's dataset handle held exclusively (a lease from the handle pool);
 * `affinity` names the region read and its blocks (see regionAffinity).
 */
export type WithHandle = <T>(fn: (ds: Dataset) => Promise<T>, affinity?: Affinity) => Promise<T>;

/** Blocks per side of an affinity region (4 × 4 blocks: coarse enough that a window rarely straddles two). */
const REGION_BLOCKS = 4;
/** A window over more blocks than this (a preview) names none. */
const MAX_NAMED_BLOCKS = 64;

/**
 * Where a read of a source window (at an overview level) goes in the handle pool (pool.ts): the
 * region is a number naming the 4 × 4 blocks under the middle of the window, so that reads of one
 * region ask for the same handle, whose block cache then already holds their blocks; the blocks are
 * those the window touches in the image read (`named` false: none), so that those the handle
 * has not read yet can be fetched while the read waits for it.
 */
function regionAffinity(meta: SourceMeta, level: number | undefined, x: number, y: number, w: number, h: number, named = true): Affinity {
  const bw = Math.max(1, meta.blockSize[0]);
  const bh = Math.max(1, meta.blockSize[1]);
  const bx = Math.floor((x + w / 2) / (REGION_BLOCKS * bw));
  const by = Math.floor((y + h / 2) / (REGION_BLOCKS * bh));
  const region = ((Math.imul(bx, 73856093) ^ Math.imul(by, 19349663) ^ Math.imul((level ?? -1) + 2, 83492791)) >>> 0) % 1_000_003;
  const [width, height] = level === undefined ? [meta.width, meta.height] : (meta.overviewSizes[level] ?? [0, 0]);
  // The blocks are counted in the image read, whose block size a COG's overviews may have of their own.
  const [iw, ih] = (level === undefined ? meta.blockSize : meta.overviewBlockSizes?.[level]) ?? [0, 0];
  if (!named || iw < 1 || ih < 1) return { region };
  const [c0, c1] = [Math.floor(Math.max(0, x) / iw), Math.floor(Math.max(0, Math.min(width, x + w) - 1) / iw)];
  const [r0, r1] = [Math.floor(Math.max(0, y) / ih), Math.floor(Math.max(0, Math.min(height, y + h) - 1) / ih)];
  if (c1 < c0 || r1 < r0 || (c1 - c0 + 1) * (r1 - r0 + 1) > MAX_NAMED_BLOCKS) return { region };
  const blocks: number[] = [];
  for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) blocks.push(blockKey(level, c, r));
  return { region, blocks, image: { width, height, blockWidth: iw, blockHeight: ih } };
}

/** How a warped read goes: straight into the output grid, or through the implicit-overview grid. */
function warpShape(meta: SourceMeta, target: WarpTarget, opts: ReadOptions): { direct: boolean; level: number | undefined } {
  const indexes = opts.indexes ? opts.indexes.length : nonAlphaIndexes(meta).length;
  const nodata = effectiveNodata(meta, opts.nodata);
  const srcAlpha = alphaIndex(meta);
  const addAlpha = nodata === undefined && srcAlpha === undefined;
  const readsAlpha = (addAlpha || srcAlpha !== undefined) && nodata === undefined;
  const direct = !target.window && indexes + (readsAlpha ? 1 : 0) === meta.count + (addAlpha ? 1 : 0);
  const { grid, width, height } = target;
  if (direct) return { direct, level: implicitOverviewLevel(meta, grid, { width, height }, opts.resampling) };
  const w = target.window ?? { x: 0, y: 0, width: grid.width, height: grid.height };
  return { direct, level: implicitOverviewLevel(meta, { width: w.width, height: w.height }, { width, height }, opts.resampling, grid) };
}

/** GDAL warp kernel radii, in source pixels at scale 1 (nearest counts 1 for rounding at the edge). */
const KERNEL_RADIUS: Record<WarpResampling, number> = { nearest: 1, bilinear: 1, cubic: 2, cubic_spline: 2, lanczos: 3, average: 1, mode: 1, sum: 1, rms: 1 };

/** Geotransform of an overview level, as GDAL's overview datasets scale it. */
function levelGeoTransform(meta: SourceMeta, level: number | undefined): { gt: number[]; width: number; height: number } {
  const gt = meta.geoTransform;
  if (level === undefined) return { gt, width: meta.width, height: meta.height };
  const [ow, oh] = meta.overviewSizes[level]!;
  const xr = meta.width / ow;
  const yr = meta.height / oh;
  return { gt: [gt[0]!, gt[1]! * xr, gt[2]! * yr, gt[3]!, gt[4]! * xr, gt[5]! * yr], width: ow, height: oh };
}

/**
 * The source pixels (at `level`'s resolution) that a warp of `target` can touch: the target grid's
 * edges and an interior lattice taken into source pixel space, widened by the kernel's reach (scaled
 * when downsampling) and a safety margin larger than GDAL's own, clipped to the raster. The margin
 * matters beyond speed: GDAL derives its source window, and from it the kernel scale, within the
 * dataset it is given, so the copy must never be the thing that clips that window. The whole raster
 * when the corners cannot be transformed.
 */
interface SourceWindow {
  x: number;
  y: number;
  w: number;
  h: number;
}

function warpSourceWindow(
  meta: SourceMeta,
  level: number | undefined,
  target: WarpTarget,
  reproject: WarpResampling,
  memo: TransformMemo | undefined,
): SourceWindow {
  const { gt, width: sw, height: sh } = levelGeoTransform(meta, level);
  const whole = { x: 0, y: 0, w: sw, h: sh };
  const ct = transformerBetween(srsFrom(target.crs), srsFrom(meta.crs));
  const det = gt[1]! * gt[5]! - gt[2]! * gt[4]!;
  if (!ct || det === 0) return whole;
  const tg = target.grid.gt;
  const steps = 20;
  let minc = Infinity;
  let minr = Infinity;
  let maxc = -Infinity;
  let maxr = -Infinity;
  // The grid's edges (21 points each) and a 4×4 interior lattice, transformed in one batch.
  const fcs: number[] = [];
  const frs: number[] = [];
  const visit = (fc: number, fr: number): void => {
    fcs.push(fc);
    frs.push(fr);
  };
  for (let i = 0; i <= steps; i++) {
    const f = i / steps;
    visit(f, 0);
    visit(f, 1);
    visit(0, f);
    visit(1, f);
  }
  for (let i = 1; i < 5; i++) for (let j = 1; j < 5; j++) visit(i / 5, j / 5);
  const n = fcs.length;
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  const ok = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const fc = fcs[i]!;
    const fr = frs[i]!;
    xs[i] = tg[0] + fc * target.grid.width * tg[1] + fr * target.grid.height * tg[2];
    ys[i] = tg[3] + fc * target.grid.width * tg[4] + fr * target.grid.height * tg[5];
  }
  if (memo) memo.transform(ct, xs, ys, ok, 0, n);
  else transformPoints(ct, xs, ys, ok, 0, n);
  let failed = 0;
  for (let i = 0; i < n; i++) {
    if (!ok[i]) {
      failed++;
      continue;
    }
    const dx = xs[i]! - gt[0]!;
    const dy = ys[i]! - gt[3]!;
    const c = (gt[5]! * dx - gt[2]! * dy) / det;
    const r = (gt[1]! * dy - gt[4]! * dx) / det;
    if (c < minc) minc = c;
    if (c > maxc) maxc = c;
    if (r < minr) minr = r;
    if (r > maxr) maxr = r;
  }
  if (failed > 0 || !Number.isFinite(minc)) return whole;
  const scale = Math.max(1, (maxc - minc) / target.grid.width, (maxr - minr) / target.grid.height);
  const margin = Math.ceil(KERNEL_RADIUS[reproject] * scale) + 4;
  const x0 = Math.max(0, Math.floor(minc) - margin);
  const y0 = Math.max(0, Math.floor(minr) - margin);
  const x1 = Math.min(sw, Math.ceil(maxc) + margin);
  const y1 = Math.min(sh, Math.ceil(maxr) + margin);
  // No overlap: one edge pixel stands in; nothing of it lands in the target, so the warp writes
  // only fill values, as it would from the whole raster.
  const x = Math.min(Math.max(0, x0), sw - 1);
  const y = Math.min(Math.max(0, y0), sh - 1);
  return { x, y, w: Math.max(1, x1 - x), h: Math.max(1, y1 - y) };
}

/** What the copy holds besides the data bands: the source's alpha band, its mask, or nothing. */
type Validity = { kind: 'alpha'; band: number } | { kind: 'mask' } | { kind: 'none' };

/** The source pixels a warp needs: the window (at `level`), its bands `indexes`, and the validity plane. */
interface WarpSource {
  win: SourceWindow;
  planes: BandArray[];
  /** The source's alpha band or its mask (see Validity), when the warp must honour it. */
  extra: BandArray | undefined;
}

/**
 * Reads the source pixels a warp needs (bands `indexes`, then the alpha or mask band when the warp
 * must honour it). The handle is held for the band reads only: GDAL's block cache keeps those blocks
 * for the next tile — which warping the pooled dataset with `-ovr` does not do on GDAL 3.6 over
 * /vsicurl/ (every tile fetched and decompressed its blocks again) — and the warp itself runs
 * without holding the handle.
 */
async function readWarpSource(
  withHandle: WithHandle,
  meta: SourceMeta,
  target: WarpTarget,
  opts: ReadOptions,
  level: number | undefined,
  indexes: number[],
  dtype: DType,
  validity: Validity,
): Promise<WarpSource> {
  const win = warpSourceWindow(meta, level, target, opts.reproject, opts.transformMemo);
  const n = win.w * win.h;
  const at = (band: RasterBand): RasterBand => (level === undefined ? band : band.overviews.get(level));
  const { planes, extra } = await withHandle(
    async (ds) => {
      const planes: BandArray[] = [];
      for (const i of indexes) {
        const out = new ARRAY_OF[dtype](n);
        await at(ds.bands.get(i)).pixels.readAsync(win.x, win.y, win.w, win.h, out as never, { data_type: GDAL_OF_DTYPE[dtype]! });
        planes.push(out);
      }
      let extra: BandArray | undefined;
      if (validity.kind === 'alpha') {
        extra = new ARRAY_OF[dtype](n);
        await at(ds.bands.get(validity.band)).pixels.readAsync(win.x, win.y, win.w, win.h, extra as never, { data_type: GDAL_OF_DTYPE[dtype]! });
      } else if (validity.kind === 'mask') {
        extra = new Uint8Array(n);
        const mask = at(ds.bands.get(1)).getMaskBand();
        if (!mask) throw new TesseraError('Internal', 'the raster reports a per-dataset mask but has no mask band');
        await mask.pixels.readAsync(win.x, win.y, win.w, win.h, extra as never, { data_type: 'Byte' });
      }
      return { planes, extra };
    },
    regionAffinity(meta, level, win.x, win.y, win.w, win.h),
  );
  return { win, planes, extra };
}

/** Geotransform of the source window at `level`. */
function windowGeoTransform(meta: SourceMeta, level: number | undefined, win: WarpSource['win']): GeoTransform6 {
  const { gt } = levelGeoTransform(meta, level);
  return [gt[0]! + win.x * gt[1]! + win.y * gt[2]!, gt[1]!, gt[2]!, gt[3]! + win.x * gt[4]! + win.y * gt[5]!, gt[4]!, gt[5]!];
}

/** The source window as a MEM dataset georeferenced like it, for gdalwarp. */
function memFromWarpSource(
  meta: SourceMeta,
  level: number | undefined,
  src: WarpSource,
  dtype: DType,
  nodata: number | undefined,
  validity: Validity,
): Dataset {
  const { win, planes, extra } = src;
  const mem = gdal.open('', 'w', 'MEM', win.w, win.h, planes.length, GDAL_OF_DTYPE[dtype]!);
  try {
    mem.geoTransform = [...windowGeoTransform(meta, level, win)];
    mem.srs = srsFrom(meta.crs);
    planes.forEach((plane, i) => {
      const band = mem.bands.get(i + 1);
      if (nodata !== undefined) band.noDataValue = nodata;
      band.pixels.write(0, 0, win.w, win.h, plane as never);
    });
    if (extra) {
      const band = mem.bands.create(validity.kind === 'mask' ? 'Byte' : GDAL_OF_DTYPE[dtype]!);
      band.colorInterpretation = gdal.GCI_AlphaBand;
      band.pixels.write(0, 0, win.w, win.h, extra as never);
    }
    return mem;
  } catch (err) {
    closeQuietly(mem);
    throw err;
  }
}

/** gdalwarp's output geotransform for `-te` bounds and `-ts` size. */
function gdalwarpGeoTransform(grid: Grid, width: number, height: number): GeoTransform6 {
  const [minx, miny, maxx, maxy] = arrayBounds(grid.height, grid.width, grid.gt);
  return [minx, (maxx - minx) / width, 0, maxy, 0, -((maxy - miny) / height)];
}

/** Whether `value` survives a store into an array of `dtype` (else GDAL would clamp what JS wraps). */
function representable(dtype: DType, value: number): boolean {
  const held = new ARRAY_OF[dtype](1);
  held[0] = value;
  return Object.is(held[0], value) || (Number.isNaN(value) && Number.isNaN(held[0]!)) || held[0] === value;
}

/** A validity plane the JS warp can honour: none, a mask (0/255), or a Byte alpha that is 0 or 255. */
function opaqueOrTransparent(dtype: DType, validity: Validity, extra: BandArray | undefined): boolean {
  if (validity.kind !== 'alpha') return true;
  if (dtype !== 'uint8' || !extra) return false;
  for (let i = 0; i < extra.length; i++) if (extra[i] !== 0 && extra[i] !== 255) return false;
  return true;
}

/**
 * The nearest-neighbour warp (and, for a band subset or padding, the RasterIO nearest resampling
 * after it) done in JavaScript — the same pixels gdalwarp gives (see warp-nearest.ts); undefined
 * when this read needs something only GDAL does (another kernel, partial alpha, an untransformable
 * grid), and gdalwarp runs instead.
 */
function warpNearestInJs(
  meta: SourceMeta,
  target: WarpTarget,
  opts: ReadOptions,
  level: number | undefined,
  direct: boolean,
  src: WarpSource,
  dtype: DType,
  nodata: number | undefined,
  validity: Validity,
  indexes: number[],
): RawRead | undefined {
  if (opts.engine === 'gdal' || opts.reproject !== 'nearest' || (!direct && opts.resampling !== 'nearest')) return undefined;
  if (nodata !== undefined && !representable(dtype, nodata)) return undefined;
  if (!opaqueOrTransparent(dtype, validity, src.extra)) return undefined;
  // GDAL cuts a warp over its 64 MB memory budget into pieces, which is not reproduced: those
  // reads, far larger than a tile, stay with GDAL. (A band subset warps a grid that may be larger,
  // but only the pixels the output takes from it are warped here: see subsetGrids.)
  const bytes = src.planes.length * src.planes[0]!.BYTES_PER_ELEMENT + 9;
  if ((src.win.w * src.win.h + target.width * target.height) * bytes > 32 * 1024 * 1024) return undefined;
  const srcInv = invGeoTransform(windowGeoTransform(meta, level, src.win));
  const ct = transformerBetween(srsFrom(target.crs), srsFrom(meta.crs));
  if (!srcInv || !ct) return undefined;
  const { grid, width, height } = target;
  const transform = { ct, srcInv, ...(opts.transformMemo ? { memo: opts.transformMemo } : {}) };
  const common = { ...scratchOut(width * height), srcWidth: src.win.w, srcHeight: src.win.h, validity: src.extra };
  let index: Int32Array | undefined;
  if (direct) {
    // GDAL ≥ 3.10 warps a whole-image read of all bands in one region, straight at the output size.
    index = nearestIndex({
      ...common,
      pieces: { kind: 'whole' },
      transform: { ...transform, dstGt: gdalwarpGeoTransform(grid, width, height) },
      width,
      height,
    });
  } else {
    // Any other read warps the (implicit overview) grid block by block, then RasterIO takes the
    // output's pixels from it by nearest neighbour: only those are warped.
    const { warpGrid, exact } = subsetGrids(meta, target, level);
    index = nearestIndex({
      ...common,
      pieces: VRT_BLOCKS,
      transform: { ...transform, dstGt: gdalwarpGeoTransform(grid, warpGrid.width, warpGrid.height) },
      width: warpGrid.width,
      height: warpGrid.height,
      sample: rasterIoNearestSample(warpGrid.width, warpGrid.height, exact, width, height),
    });
  }
  if (!index) return undefined;
  if (nodata === undefined) {
    const bands = src.planes.map((plane) => gather(plane, index, 0));
    const mask = indexMask(index);
    return { dtype, indexes, bands, masks: bands.map(() => mask), width, height, warpedBy: 'js' };
  }
  const { bands, masks } = gatherMaskedPlanes(src.planes, index, nodata);
  return { dtype, indexes, bands, masks, width, height, warpedBy: 'js' };
}

/**
 * One index buffer for the JS warps of this thread up to a 512² tile's: warpNearestInJs uses its
 * index synchronously (gathered into new bands before it returns), so the next warp may overwrite
 * it. Larger warps (previews, parts) get their own, not kept.
 */
const KEPT_INDEX_LENGTH = 512 * 512;
const indexBuffer = new Int32Array(KEPT_INDEX_LENGTH);
function scratchOut(n: number): { out?: Int32Array } {
  return n <= KEPT_INDEX_LENGTH ? { out: indexBuffer.subarray(0, n) } : {};
}

/**
 * The grid a band-subset or padded read warps into (the implicit-overview grid GDAL 3.10 reads the
 * VRT's bands from, or the VRT grid itself) and the window of it the output is resampled from:
 * `win` in whole pixels (as GDAL rounds it onto an overview), `exact` as rasterio's fractional
 * window scaled onto that grid (VRTWarpedRasterBand::GetBestOverviewLevel), which RasterIO's
 * nearest neighbour samples.
 */
type PixelWindow = { x: number; y: number; w: number; h: number };
function subsetGrids(meta: SourceMeta, target: WarpTarget, level: number | undefined): { warpGrid: Grid; win: PixelWindow; exact: PixelWindow } {
  const { grid } = target;
  const w = target.window ?? { x: 0, y: 0, width: grid.width, height: grid.height };
  if (level === undefined) {
    const win = { x: w.x, y: w.y, w: w.width, h: w.height };
    return { warpGrid: grid, win, exact: win };
  }
  const ratio = meta.width / meta.overviewSizes[level]![0];
  const ow = Math.floor(grid.width / ratio + 0.5);
  const oh = Math.floor(grid.height / ratio + 0.5);
  const xf = grid.width / ow;
  const yf = grid.height / oh;
  const warpGrid = { gt: [grid.gt[0], grid.gt[1] * xf, 0, grid.gt[3], 0, grid.gt[5] * yf] as Grid['gt'], width: ow, height: oh };
  const x = Math.min(ow - 1, Math.trunc(w.x / xf + 0.5));
  const y = Math.min(oh - 1, Math.trunc(w.y / yf + 0.5));
  return {
    warpGrid,
    win: { x, y, w: Math.min(ow - x, Math.max(1, Math.trunc(w.width / xf + 0.5))), h: Math.min(oh - y, Math.max(1, Math.trunc(w.height / yf + 0.5))) },
    exact: { x: w.x / xf, y: w.y / yf, w: w.width / xf, h: w.height / yf },
  };
}

/**
 * Reads through a warp into another CRS (rio-tiler `read` with a WarpedVRT): the source pixels are
 * read (see readWarpSource), then warped the way GDAL 3.10 reads a WarpedVRT — nearest neighbour in
 * JavaScript, other kernels with gdalwarp.
 */
async function readWarped(withHandle: WithHandle, meta: SourceMeta, target: WarpTarget, opts: ReadOptions): Promise<RawRead> {
  const dtype = dtypeOf(meta.bands[0]);
  const indexes = opts.indexes ? [...opts.indexes] : nonAlphaIndexes(meta);
  for (const i of indexes) {
    if (i < 1 || i > meta.count) throw invalidBandIndex(i, meta.count);
  }
  const nodata = effectiveNodata(meta, opts.nodata);
  const srcAlpha = alphaIndex(meta);
  // GDAL's warper honours a source alpha band, else the nodata value, else a per-dataset mask.
  const validity: Validity =
    srcAlpha !== undefined
      ? { kind: 'alpha', band: srcAlpha }
      : nodata === undefined && meta.bands[0]?.maskFlags === GMF_PER_DATASET
        ? { kind: 'mask' }
        : { kind: 'none' };
  const dstAlpha = srcAlpha !== undefined || nodata === undefined;
  const readsAlpha = dstAlpha && nodata === undefined;
  const { grid, width, height } = target;
  const { direct, level } = warpShape(meta, target, opts);
  // In the copy (and so in the warp's output) the requested bands are 1…k and the alpha band k+1.
  const bandsOut = indexes.map((_, i) => i + 1);
  const alphaOut = readsAlpha ? indexes.length + 1 : undefined;
  const common = [
    '-t_srs',
    target.crs,
    '-r',
    WARP_NAMES[opts.reproject],
    '-ot',
    GDAL_OF_DTYPE[dtype]!,
    '-te',
    ...arrayBounds(grid.height, grid.width, grid.gt).map(String),
    '-ovr',
    'NONE',
  ];
  if (nodata !== undefined) common.push('-srcnodata', nodataArg(nodata), '-dstnodata', nodataArg(nodata));
  if (validity.kind !== 'none') common.push('-srcalpha');
  if (dstAlpha) common.push('-dstalpha');
  const flags = (): number => GMF_PER_DATASET;

  const src = await readWarpSource(withHandle, meta, target, opts, level, indexes, dtype, validity);
  const fast = warpNearestInJs(meta, target, opts, level, direct, src, dtype, nodata, validity, indexes);
  if (fast) return fast;
  const source = memFromWarpSource(meta, level, src, dtype, nodata, validity);
  try {
    if (direct) {
      let out: Dataset | undefined;
      try {
        // One region, as GDAL ≥ 3.10 warps a whole-image read of all of a warped VRT's bands: not
        // cut where the source fills less than half of it (gdalwarp's fill-ratio heuristic).
        const oneRegion = ['-wo', 'SRC_FILL_RATIO_HEURISTICS=NO'];
        out = await gdal.warpAsync(tempPath('mem'), null, [source], [...common, ...oneRegion, '-of', 'MEM', '-ts', String(width), String(height)]);
        const win = { x: 0, y: 0, w: width, h: height };
        const { bands, masks } = await readAndMask(out, dtype, win, width, height, 'nearest', bandsOut, alphaOut, nodata, flags);
        return { dtype, indexes, bands, masks, width, height, warpedBy: 'gdal' };
      } finally {
        closeQuietly(out);
      }
    }
    // A band subset or a padded window: GDAL 3.10 reads the VRT band by band, from the implicit
    // overview its band-level rule picks, then resamples that grid to the output with RasterIO. The
    // overview grid is a warped VRT here too, over the copy of that overview (MEM has no overviews,
    // so GDAL 3.6 cannot pick another), so that it is warped block by block as GDAL 3.10 warps it.
    const { warpGrid, win } = subsetGrids(meta, target, level);
    const vrtPath = tempPath('vrt');
    let mem: Dataset | undefined;
    try {
      mem = await gdal.warpAsync(vrtPath, null, [source], [...common, '-of', 'VRT', '-ts', String(warpGrid.width), String(warpGrid.height)]);
      if (RASTERIO_NAMES[opts.resampling]) {
        const { bands, masks } = await readAndMask(mem, dtype, win, width, height, opts.resampling, bandsOut, alphaOut, nodata, flags);
        return { dtype, indexes, bands, masks, width, height, warpedBy: 'gdal' };
      }
      const tpath = tempPath('vrt');
      let resampled: Dataset | undefined;
      try {
        resampled = await gdal.translateAsync(tpath, mem, resampledWindow(win, width, height, opts.resampling));
        const full = { x: 0, y: 0, w: width, h: height };
        const { bands, masks } = await readAndMask(resampled, dtype, full, width, height, 'nearest', bandsOut, alphaOut, nodata, flags);
        return { dtype, indexes, bands, masks, width, height, warpedBy: 'gdal' };
      } finally {
        closeQuietly(resampled, tpath);
      }
    } finally {
      closeQuietly(mem, vrtPath);
    }
  } finally {
    closeQuietly(source);
  }
}

/** Reads `target`, holding the source's handle (through `withHandle`) only while it reads the file. */
export function readRaster(withHandle: WithHandle, meta: SourceMeta, target: ReadTarget, opts: ReadOptions): Promise<RawRead> {
  if (target.kind === 'warp') return readWarped(withHandle, meta, target, opts);
  const w = target.window;
  // A window read may be decimated from an overview GDAL picks: its blocks are not named.
  return withHandle((ds) => readWindow(ds, meta, target, opts), regionAffinity(meta, undefined, w.colOff, w.rowOff, w.width, w.height, false));
}

/**
 * The handle slot for reading pixel (col, row) at full resolution: the region's, as for windows, so
 * that point queries find the blocks tiles (and other points) of that region decompressed. Points on
 * any idle handle made each handle cache its own copies: at concurrency 16 the benchmark's points
 * re-inflated blocks on every query, at 5–13 ms of CPU each against ~1 ms one at a time.
 */
export function pixelAffinity(meta: SourceMeta, col: number, row: number): Affinity {
  return regionAffinity(meta, undefined, col, row, 1, 1);
}

/** Reads one pixel of the given bands (rio-tiler `point`: a 1×1 window at the pixel's row/col). */
export async function readPixel(ds: Dataset, meta: SourceMeta, col: number, row: number, opts: ReadOptions): Promise<RawRead> {
  return readWindow(
    ds,
    meta,
    { kind: 'window', window: { colOff: col, rowOff: row, width: 1, height: 1 }, width: 1, height: 1 },
    { ...opts, resampling: 'nearest' },
  );
}
