/**
 * The low-level read: pixels and masks of some bands of one GDAL dataset on a target grid, with
 * rio-tiler's value and mask rules (engine-semantics §1.2–1.3).
 *
 * Two kinds of target:
 * - `window`: same CRS as the dataset; a (possibly fractional or partly outside) source window
 *   decimated or enlarged to the output size with the RasterIO `resampling`;
 * - `warp`: another CRS; rio-tiler builds a WarpedVRT on a grid (`vrtGrid`) and reads it at the
 *   output size. GDAL ≥3.8 (TiTiler's wheels bundle 3.10) answers a read of *all* the VRT's bands
 *   over its whole extent by warping the chosen source overview straight into the output grid, and
 *   any other read (a band subset, a padded window) from the VRT's blocks and implicit overviews
 *   with RasterIO resampling. Both paths are reproduced here on Debian's GDAL 3.6 with gdalwarp,
 *   because the two give visibly different pixels.
 *
 * Temporary VRT/MEM datasets live only for the duration of one call and are always closed.
 */
import { gdal, type Dataset, type RasterBand } from './gdal.js';
import { numpyDtype, type BandMeta, type SourceMeta } from './dataset.js';
import { ARRAY_OF, type BandArray, type DType } from '../image/image-data.js';
import { arrayBounds, type Grid, type Window } from './geometry.js';
import { TesseraError } from '../errors.js';

export type ReadResampling = 'nearest' | 'bilinear' | 'cubic' | 'cubic_spline' | 'lanczos' | 'average' | 'mode' | 'gauss' | 'rms';
export type WarpResampling = 'nearest' | 'bilinear' | 'cubic' | 'cubic_spline' | 'lanczos' | 'average' | 'mode' | 'sum' | 'rms';

export interface ReadOptions {
  /** 1-based band indexes; default every non-alpha band. */
  indexes?: readonly number[];
  /** Overrides the file's nodata (NaN allowed). */
  nodata?: number;
  resampling: ReadResampling;
  reproject: WarpResampling;
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
}

const GMF_ALL_VALID = 0x01;
const GMF_PER_DATASET = 0x02;
const GMF_ALPHA = 0x04;

/** The source types tessera reads (GDAL's 64-bit integers and complex types are refused). */
const READABLE: ReadonlySet<string> = new Set(['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'float64']);

export function dtypeOf(band: BandMeta | undefined): DType {
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

export function alphaIndex(meta: SourceMeta): number | undefined {
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
export function effectiveNodata(meta: SourceMeta, user: number | undefined): number | undefined {
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
export function implicitOverviewLevel(
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

async function readBandInto(band: RasterBand, dtype: DType, win: { x: number; y: number; w: number; h: number }, width: number, height: number, resampling: ReadResampling): Promise<BandArray> {
  const out = new ARRAY_OF[dtype](width * height);
  await band.pixels.readAsync(win.x, win.y, win.w, win.h, out as never, {
    buffer_width: width,
    buffer_height: height,
    resampling: RASTERIO_NAMES[resampling] ?? 'NearestNeighbour',
    data_type: GDAL_OF_DTYPE[dtype]!,
  });
  return out;
}

function maskFromValues(values: BandArray, nodata: number): Uint8Array {
  const mask = new Uint8Array(values.length);
  if (Number.isNaN(nodata)) {
    for (let i = 0; i < values.length; i++) mask[i] = Number.isNaN(values[i]!) ? 0 : 255;
  } else {
    for (let i = 0; i < values.length; i++) mask[i] = values[i] === nodata ? 0 : 255;
  }
  return mask;
}

function maskFromAlpha(alpha: BandArray): Uint8Array {
  const mask = new Uint8Array(alpha.length);
  for (let i = 0; i < alpha.length; i++) mask[i] = alpha[i] !== 0 ? 255 : 0;
  return mask;
}

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
      throw new TesseraError('BadRequest', `Invalid band index ${i}: the raster has ${ds.bands.count()} band(s)`);
    }
    bands.push(await readBandInto(ds.bands.get(i), dtype, win, width, height, resampling));
  }
  if (alpha !== undefined && nodata === undefined) {
    const a = await readBandInto(ds.bands.get(alpha), dtype, win, width, height, resampling);
    const mask = maskFromAlpha(a);
    return { bands, masks: bands.map(() => mask) };
  }
  if (nodata !== undefined) {
    if (bands.length === 1) return { bands, masks: [maskFromValues(bands[0]!, nodata)] };
    return { bands, masks: bands.map((b) => maskFromValues(b, nodata)) };
  }
  // GDAL's per-band mask (internal mask, or all valid).
  const masks: Uint8Array[] = [];
  let shared: Uint8Array | undefined;
  for (const i of indexes) {
    const flags = maskFlags(i);
    if (flags & GMF_ALL_VALID) {
      masks.push((shared ??= new Uint8Array(width * height).fill(255)));
      continue;
    }
    const maskBand = ds.bands.get(i).getMaskBand();
    if (!maskBand) {
      masks.push((shared ??= new Uint8Array(width * height).fill(255)));
      continue;
    }
    const m = (await readBandInto(maskBand, 'uint8', win, width, height, resampling)) as Uint8Array;
    for (let p = 0; p < m.length; p++) m[p] = m[p] !== 0 ? 255 : 0;
    masks.push(m);
  }
  return { bands, masks };
}

/** Reads a same-CRS window (rio-tiler `read` without a WarpedVRT). */
async function readWindow(ds: Dataset, meta: SourceMeta, target: Extract<ReadTarget, { kind: 'window' }>, opts: ReadOptions): Promise<RawRead> {
  const dtype = dtypeOf(meta.bands[0]);
  const indexes = opts.indexes ? [...opts.indexes] : nonAlphaIndexes(meta);
  const nodata = effectiveNodata(meta, opts.nodata);
  const alpha = alphaIndex(meta);
  const { window: w, width, height } = target;
  const flags = (i: number): number => meta.bands[i - 1]?.maskFlags ?? GMF_ALL_VALID;
  const integral = [w.colOff, w.rowOff, w.width, w.height].every((v) => Math.abs(v - Math.round(v)) < 1e-9);
  const inside = w.colOff >= 0 && w.rowOff >= 0 && w.colOff + w.width <= meta.width && w.rowOff + w.height <= meta.height;
  if (integral && inside && RASTERIO_NAMES[opts.resampling]) {
    const win = { x: Math.round(w.colOff), y: Math.round(w.rowOff), w: Math.round(w.width), h: Math.round(w.height) };
    const { bands, masks } = await readAndMask(ds, dtype, win, width, height, opts.resampling, indexes, alpha, nodata, flags);
    return { dtype, indexes, bands, masks, width, height };
  }
  const path = tempPath('vrt');
  let vrt: Dataset | undefined;
  try {
    vrt = await gdal.translateAsync(path, ds, [
      '-of', 'VRT',
      '-srcwin', String(w.colOff), String(w.rowOff), String(w.width), String(w.height),
      '-outsize', String(width), String(height),
      '-r', TRANSLATE_NAMES[opts.resampling],
    ]);
    const win = { x: 0, y: 0, w: width, h: height };
    const { bands, masks } = await readAndMask(vrt, dtype, win, width, height, 'nearest', indexes, alpha, nodata, flags);
    if (!inside) maskOutside(masks, w, width, height, meta);
    return { dtype, indexes, bands, masks, width, height };
  } finally {
    closeQuietly(vrt, path);
  }
}

/** Output pixels whose centre falls outside the raster are masked (a boundless read fills them). */
function maskOutside(masks: Uint8Array[], w: Window, width: number, height: number, meta: SourceMeta): void {
  const sx = w.width / width;
  const sy = w.height / height;
  const seen = new Set<Uint8Array>();
  for (const m of masks) {
    if (seen.has(m)) continue;
    seen.add(m);
    for (let r = 0; r < height; r++) {
      const y = w.rowOff + (r + 0.5) * sy;
      const rowOut = y < 0 || y >= meta.height;
      for (let c = 0; c < width; c++) {
        const x = w.colOff + (c + 0.5) * sx;
        if (rowOut || x < 0 || x >= meta.width) m[r * width + c] = 0;
      }
    }
  }
}

/** Reads through a warp into another CRS (rio-tiler `read` with a WarpedVRT). */
async function readWarped(ds: Dataset, meta: SourceMeta, target: Extract<ReadTarget, { kind: 'warp' }>, opts: ReadOptions): Promise<RawRead> {
  const dtype = dtypeOf(meta.bands[0]);
  const indexes = opts.indexes ? [...opts.indexes] : nonAlphaIndexes(meta);
  for (const i of indexes) {
    if (i < 1 || i > meta.count) throw new TesseraError('BadRequest', `Invalid band index ${i}: the raster has ${meta.count} band(s)`);
  }
  const nodata = effectiveNodata(meta, opts.nodata);
  const srcAlpha = alphaIndex(meta);
  const addAlpha = nodata === undefined && srcAlpha === undefined;
  const vrtBands = meta.count + (addAlpha ? 1 : 0);
  const alpha = addAlpha ? meta.count + 1 : srcAlpha;
  const readsAlpha = alpha !== undefined && nodata === undefined;
  const { grid, width, height } = target;
  const common = ['-t_srs', target.crs, '-r', WARP_NAMES[opts.reproject], '-ot', GDAL_OF_DTYPE[dtype]!, '-te', ...arrayBounds(grid.height, grid.width, grid.gt).map(String)];
  if (nodata !== undefined) common.push('-srcnodata', nodataArg(nodata), '-dstnodata', nodataArg(nodata));
  if (alpha !== undefined) common.push('-dstalpha');
  const flags = (): number => GMF_PER_DATASET;

  const direct = !target.window && indexes.length + (readsAlpha ? 1 : 0) === vrtBands;
  if (direct) {
    const level = implicitOverviewLevel(meta, grid, { width, height }, opts.resampling);
    const path = tempPath('mem');
    let out: Dataset | undefined;
    try {
      out = await gdal.warpAsync(path, null, [ds], [...common, '-of', 'MEM', '-ts', String(width), String(height), '-ovr', level === undefined ? 'NONE' : String(level)]);
      const win = { x: 0, y: 0, w: width, h: height };
      const { bands, masks } = await readAndMask(out, dtype, win, width, height, 'nearest', indexes, readsAlpha ? alpha : undefined, nodata, flags);
      return { dtype, indexes, bands, masks, width, height };
    } finally {
      closeQuietly(out);
    }
  }
  // A band subset or a padded window: GDAL 3.10 reads the VRT band by band, from the implicit
  // overview its band-level rule picks, then resamples that grid to the output with RasterIO. The
  // overview grid is materialised here (MEM has no overviews, so GDAL 3.6 cannot pick another).
  const w = target.window ?? { x: 0, y: 0, width: grid.width, height: grid.height };
  const level = implicitOverviewLevel(meta, { width: w.width, height: w.height }, { width, height }, opts.resampling, grid);
  let warpGrid = grid;
  let win = { x: w.x, y: w.y, w: w.width, h: w.height };
  if (level !== undefined) {
    const ratio = meta.width / meta.overviewSizes[level]![0];
    const ow = Math.floor(grid.width / ratio + 0.5);
    const oh = Math.floor(grid.height / ratio + 0.5);
    const xf = grid.width / ow;
    const yf = grid.height / oh;
    warpGrid = { gt: [grid.gt[0], grid.gt[1] * xf, 0, grid.gt[3], 0, grid.gt[5] * yf], width: ow, height: oh };
    const x = Math.min(ow - 1, Math.trunc(w.x / xf + 0.5));
    const y = Math.min(oh - 1, Math.trunc(w.y / yf + 0.5));
    win = { x, y, w: Math.min(ow - x, Math.max(1, Math.trunc(w.width / xf + 0.5))), h: Math.min(oh - y, Math.max(1, Math.trunc(w.height / yf + 0.5))) };
  }
  let mem: Dataset | undefined;
  try {
    mem = await gdal.warpAsync(tempPath('mem'), null, [ds], [
      ...common,
      '-of', 'MEM',
      '-ts', String(warpGrid.width), String(warpGrid.height),
      '-ovr', level === undefined ? 'NONE' : String(level),
    ]);
    if (RASTERIO_NAMES[opts.resampling]) {
      const { bands, masks } = await readAndMask(mem, dtype, win, width, height, opts.resampling, indexes, readsAlpha ? alpha : undefined, nodata, flags);
      return { dtype, indexes, bands, masks, width, height };
    }
    const tpath = tempPath('vrt');
    let resampled: Dataset | undefined;
    try {
      resampled = await gdal.translateAsync(tpath, mem, ['-of', 'VRT', '-srcwin', String(win.x), String(win.y), String(win.w), String(win.h), '-outsize', String(width), String(height), '-r', TRANSLATE_NAMES[opts.resampling]]);
      const full = { x: 0, y: 0, w: width, h: height };
      const { bands, masks } = await readAndMask(resampled, dtype, full, width, height, 'nearest', indexes, readsAlpha ? alpha : undefined, nodata, flags);
      return { dtype, indexes, bands, masks, width, height };
    } finally {
      closeQuietly(resampled, tpath);
    }
  } finally {
    closeQuietly(mem);
  }
}

export function readRaster(ds: Dataset, meta: SourceMeta, target: ReadTarget, opts: ReadOptions): Promise<RawRead> {
  return target.kind === 'window' ? readWindow(ds, meta, target, opts) : readWarped(ds, meta, target, opts);
}

/** Reads one pixel of the given bands (rio-tiler `point`: a 1×1 window at the pixel's row/col). */
export async function readPixel(ds: Dataset, meta: SourceMeta, col: number, row: number, opts: ReadOptions): Promise<RawRead> {
  return readWindow(ds, meta, { kind: 'window', window: { colOff: col, rowOff: row, width: 1, height: 1 }, width: 1, height: 1 }, { ...opts, resampling: 'nearest' });
}
