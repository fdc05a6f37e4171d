/**
 * rio-tiler's `Reader` verbs over one raster source: tile, part, preview, point, feature.
 *
 * Each image verb first *plans* the read from metadata alone (target grid, output size, bounds) so
 * the caller can enforce its pixel limits before a byte is fetched, then executes the plan under a
 * pooled dataset handle. Geometry follows rio-tiler 6.8 (`reader.part`, `get_vrt_transform`).
 */
import type { RasterSource, SourceMeta } from './dataset.js';
import { pixelAffinity, readPixel, readRaster, type ReadOptions, type ReadTarget, type RawRead } from './read.js';
import type { Affinity } from './pool.js';
import {
  applyBuffer,
  arrayBounds,
  pyRound,
  roundWindowOut,
  sizeForMaxSize,
  vrtGrid,
  windowBounds,
  windowFromBounds,
  pointIn,
  tileTouches,
  type GeoTransform,
  type Grid,
} from './geometry.js';
import { gdal, type Dataset, type SpatialReference } from '../gdal/gdal.js';
import { sameCrs, srsFrom, transformBounds, WGS84 } from '../gdal/crs.js';
import { outsideMask } from './rasterize.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import type { DType, ImageData } from '../image/image-data.js';
import { TesseraError, badRequest } from '../errors.js';

export interface ValueOptions extends ReadOptions {
  unscale: boolean;
}

export interface PartOptions {
  /** Output CRS (default: the bounds' CRS). */
  dstCrs?: string;
  /** CRS of `bounds` (default: the dataset's). */
  boundsCrs?: string;
  height?: number;
  width?: number;
  maxSize?: number;
  buffer?: number;
  padding?: number;
  alignBoundsWithDataset?: boolean;
  /** rio-tiler 9's `output_size` (TiTiler 2.x): one of width/height given sizes the other by the read's aspect ratio, `maxSize` then ignored. */
  keepAspect?: boolean;
  /** The caller already knows the bounds touch the data (tiles, after `tileExists`): no footprint check. */
  covered?: boolean;
}

/** A read decided but not executed: what limits are checked against. */
export interface ReadPlan {
  target: ReadTarget;
  /** Output size (after buffer; padding is read and cropped). */
  width: number;
  height: number;
  /** Pixels of the source-side grid the read touches (VRT grid or window), for the read limit. */
  sourcePixels: number;
  bounds: BBox;
  crs: string;
  /** Same-CRS padded reads: border to crop from every side after reading. */
  crop: number;
  /** All-masked output without reading (a window entirely outside the raster). */
  empty: boolean;
}

export interface PointValues {
  dtype: DType;
  values: number[];
  masks: boolean[];
  bandNames: string[];
}

const WEB_MERCATOR = 'EPSG:3857';

/** rio-tiler 9's `output_size` without max_size: the missing one of `height`/`width` from the other and the read's shape. */
function keptAspect(height: number | undefined, width: number | undefined, readHeight: number, readWidth: number): [number | undefined, number | undefined] {
  const ratio = readHeight / readWidth;
  if (width && !height) return [Math.max(1, Math.ceil(width * ratio)), width];
  if (height && !width) return [height, Math.max(1, Math.ceil(height / ratio))];
  return [height, width];
}

/** The reads of one raster source: each planned from its metadata, then executed under a pooled handle. */
export class RasterReads {
  constructor(readonly source: RasterSource) {}

  /** The source's pooled handle, for as long as `fn` runs. */
  private readonly withHandle = <T>(fn: (ds: Dataset) => Promise<T>, affinity?: Affinity): Promise<T> => this.source.use(fn, affinity);

  meta(): Promise<SourceMeta> {
    return this.source.meta();
  }

  /** rio-tiler `tile_exists`: strict intersection in the dataset CRS; unknown when the transform fails. */
  async tileExists(tms: TileMatrixSet, x: number, y: number, z: number): Promise<boolean> {
    const meta = await this.meta();
    return tileTouches(tms, { x, y, z }, meta.bounds, meta.crs);
  }

  /** rio-tiler `tile` as `part` of the tile bounds in the TMS CRS at `tilesize` pixels. */
  planTile(tms: TileMatrixSet, x: number, y: number, z: number, tilesize: number, opts: { buffer?: number; padding?: number }): Promise<ReadPlan> {
    const bounds = tms.xyBounds({ x, y, z });
    return this.planPart(bounds, {
      dstCrs: tms.srs,
      boundsCrs: tms.srs,
      height: tilesize,
      width: tilesize,
      // Callers ask tileExists first (rio-tiler's order), so a tile's bounds touch the data.
      covered: true,
      ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}),
      ...(opts.padding !== undefined ? { padding: opts.padding } : {}),
    });
  }

  async planPart(inBounds: BBox, opts: PartOptions): Promise<ReadPlan> {
    const meta = await this.meta();
    const dsSrs = srsFrom(meta.crs);
    const dstText = opts.dstCrs ?? opts.boundsCrs;
    const dstSrs = dstText ? srsFrom(dstText) : dsSrs;
    let bounds: BBox = [...inBounds];
    if (opts.boundsCrs) {
      const bSrs = srsFrom(opts.boundsCrs);
      if (!sameCrs(bSrs, dstSrs)) bounds = transformBounds(bSrs, dstSrs, bounds, 21);
    }
    if (!bounds.every(Number.isFinite)) throw new TesseraError('BadRequest', 'The requested bounds cannot be expressed in the output CRS');
    const padding = opts.padding ?? 0;
    let height = opts.height;
    let width = opts.width;

    if (!sameCrs(dstSrs, dsSrs)) {
      const native = await this.nativeTransform(dstText!, dstSrs);
      // rio-tiler `get_vrt_transform`: the bounds snap outward to the reprojected grid's pixels.
      const align = (b: BBox): BBox => (opts.alignBoundsWithDataset ? windowBounds(roundWindowOut(windowFromBounds(b, native)), native) : b);
      bounds = align(bounds);
      let grid = vrtGrid(native, bounds, height, width);
      bounds = arrayBounds(grid.height, grid.width, grid.gt);
      if (opts.keepAspect && (width || height)) [height, width] = keptAspect(height, width, grid.height, grid.width);
      else if (opts.maxSize && !(width && height)) [height, width] = sizeForMaxSize(opts.maxSize, grid.height, grid.width);
      height ||= grid.height;
      width ||= grid.width;
      if (opts.buffer) {
        [bounds, height, width] = applyBuffer(opts.buffer, bounds, height, width);
        bounds = align(bounds);
        grid = vrtGrid(native, bounds, height, width);
        bounds = arrayBounds(grid.height, grid.width, grid.gt);
      }
      let window: { x: number; y: number; width: number; height: number } | undefined;
      if (padding > 0) {
        const gt: GeoTransform = [grid.gt[0] - padding * grid.gt[1], grid.gt[1], 0, grid.gt[3] - padding * grid.gt[5], 0, grid.gt[5]];
        window = { x: padding, y: padding, width: grid.width, height: grid.height };
        grid = { gt, width: grid.width + 2 * padding, height: grid.height + 2 * padding };
      }
      const target: ReadTarget = { kind: 'warp', crs: dstText!, grid, width, height, ...(window ? { window } : {}) };
      // A part that misses the data reads nothing: the limits then judge what is read, not its extent.
      const empty = !opts.covered && !(await this.mayIntersect(arrayBounds(grid.height, grid.width, grid.gt), dstText!, dstSrs));
      const source = empty ? 0 : sourcePixels(meta, grid.width, grid.height, width, height);
      return { target, width, height, sourcePixels: source, bounds, crs: dstText!, crop: 0, empty };
    }

    const gt = meta.geoTransform as GeoTransform;
    let window = windowFromBounds(bounds, gt);
    if (opts.alignBoundsWithDataset) {
      window = roundWindowOut(window);
      bounds = windowBounds(window, gt);
    }
    if (opts.keepAspect && (width || height)) {
      [height, width] = keptAspect(height, width, pyRound(window.height), pyRound(window.width));
    } else if (opts.maxSize && !(width && height)) {
      [height, width] = sizeForMaxSize(opts.maxSize, pyRound(window.height), pyRound(window.width));
    }
    height ||= Math.max(1, pyRound(window.height));
    width ||= Math.max(1, pyRound(window.width));
    if (opts.buffer) {
      [bounds, height, width] = applyBuffer(opts.buffer, bounds, height, width);
      window = windowFromBounds(bounds, gt);
    }
    let crop = 0;
    let readW = width;
    let readH = height;
    if (padding > 0 && !isAlignedWithBlocks(meta, bounds)) {
      const [padBounds, h, w] = applyBuffer(padding, bounds, height, width);
      window = windowFromBounds(padBounds, gt);
      crop = padding;
      readW = w;
      readH = h;
    }
    const empty = window.colOff >= meta.width || window.rowOff >= meta.height || window.colOff + window.width <= 0 || window.rowOff + window.height <= 0;
    return {
      target: { kind: 'window', window, width: readW, height: readH },
      width,
      height,
      sourcePixels: empty ? 0 : sourcePixels(meta, Math.ceil(Math.abs(window.width)), Math.ceil(Math.abs(window.height)), readW, readH),
      bounds,
      crs: meta.crs,
      crop,
      empty,
    };
  }

  /** rio-tiler `preview` (= `read` of the whole dataset with max_size), optionally warped to `dstCrs`. */
  async planPreview(opts: { maxSize?: number; height?: number; width?: number; dstCrs?: string; keepAspect?: boolean }): Promise<ReadPlan> {
    const meta = await this.meta();
    const dsSrs = srsFrom(meta.crs);
    let { height, width } = opts;
    if (opts.dstCrs && !sameCrs(srsFrom(opts.dstCrs), dsSrs)) {
      const out = await this.source.use((ds) => gdal.suggestedWarpOutputAsync({ src: ds, s_srs: dsSrs, t_srs: srsFrom(opts.dstCrs!) }));
      const grid: Grid = { gt: out.geoTransform as GeoTransform, width: out.rasterSize.x, height: out.rasterSize.y };
      if (opts.keepAspect && (width || height)) [height, width] = keptAspect(height, width, grid.height, grid.width);
      else if (opts.maxSize && !(width && height)) [height, width] = sizeForMaxSize(opts.maxSize, grid.height, grid.width);
      if (!(height && width)) [height, width] = [grid.height, grid.width];
      const bounds = arrayBounds(grid.height, grid.width, grid.gt);
      return {
        target: { kind: 'warp', crs: opts.dstCrs, grid, width, height },
        width,
        height,
        sourcePixels: sourcePixels(meta, grid.width, grid.height, width, height),
        bounds,
        crs: opts.dstCrs,
        crop: 0,
        empty: false,
      };
    }
    if (opts.keepAspect && (width || height)) [height, width] = keptAspect(height, width, meta.height, meta.width);
    else if (opts.maxSize && !(width && height)) [height, width] = sizeForMaxSize(opts.maxSize, meta.height, meta.width);
    if (!(height && width)) [height, width] = [meta.height, meta.width];
    const window = { colOff: 0, rowOff: 0, width: meta.width, height: meta.height };
    return {
      target: { kind: 'window', window, width, height },
      width,
      height,
      sourcePixels: sourcePixels(meta, meta.width, meta.height, width, height),
      bounds: meta.bounds,
      crs: meta.crs,
      crop: 0,
      empty: false,
    };
  }

  /** Executes a plan: values, masks, band names `b{i}`, statistics from band tags, unscale. */
  async read(plan: ReadPlan, opts: ValueOptions): Promise<ImageData> {
    const meta = await this.meta();
    let raw: RawRead;
    if (plan.empty) {
      const indexes = opts.indexes ? [...opts.indexes] : undefined;
      raw = await readRaster(this.withHandle, meta, { kind: 'window', window: { colOff: 0, rowOff: 0, width: 1, height: 1 }, width: 1, height: 1 }, opts);
      const n = plan.width * plan.height;
      raw = {
        ...raw,
        indexes: indexes ?? raw.indexes,
        width: plan.width,
        height: plan.height,
        bands: raw.bands.map((b) => new (b.constructor as new (n: number) => typeof b)(n)),
        masks: raw.bands.map(() => new Uint8Array(n)),
      };
    } else {
      raw = await readRaster(this.withHandle, meta, plan.target, opts);
    }
    if (plan.crop > 0) raw = cropRaw(raw, plan.crop);
    return toImageData(raw, meta, plan.bounds, plan.crs, opts.unscale, plan.target.kind === 'window');
  }

  /** rio-tiler `point`: the pixel under (x, y) given in `coordCrs`; PointOutsideBounds (404) when outside the data. */
  async point(x: number, y: number, coordCrs: string, opts: ValueOptions): Promise<PointValues> {
    const meta = await this.meta();
    if (!Number.isFinite(x) || !Number.isFinite(y)) throw new TesseraError('BadRequest', `Invalid point ${x},${y}: coordinates must be finite numbers`);
    const { inside, x: px, y: py } = pointIn(meta.bounds, meta.crs, x, y, coordCrs);
    if (!inside) throw new TesseraError('PointOutsideBounds', 'Point is outside dataset bounds');
    const gt = meta.geoTransform;
    const col = Math.floor((px - gt[0]!) / gt[1]!);
    const row = Math.floor((py - gt[3]!) / gt[5]!);
    const raw = await this.source.use((ds) => readPixel(ds, meta, col, row, opts), pixelAffinity(meta, col, row));
    const img = toImageData(raw, meta, meta.bounds, meta.crs, opts.unscale, true);
    return { dtype: img.dtype, values: img.bands.map((band) => band[0]!), masks: img.masks.map((m) => m[0] === 0), bandNames: img.bandNames };
  }

  /**
   * False only when `bounds` (in `crsText`) certainly miss the data: the dataset's bounds transformed
   * into that CRS (cached), widened by a hundredth of their size against the densified edges'
   * approximation. A footprint the transform cannot express counts as intersecting.
   */
  private async mayIntersect(bounds: BBox, crsText: string, crs: SpatialReference): Promise<boolean> {
    const footprint = await this.footprintIn(crsText, crs);
    if (!footprint.every(Number.isFinite)) return true;
    const [l, b, r, t] = footprint;
    const mx = (r - l) / 100;
    const my = (t - b) / 100;
    const [bl, bb, br, bt] = [Math.min(bounds[0], bounds[2]), Math.min(bounds[1], bounds[3]), Math.max(bounds[0], bounds[2]), Math.max(bounds[1], bounds[3])];
    return bl < r + mx && br > l - mx && bt > b - my && bb < t + my;
  }

  /**
   * The dataset's bounds in another CRS (a 21-point densified transform), computed once per source
   * and CRS; NaNs when the transform cannot express them.
   */
  footprintIn(crsText: string, crs: SpatialReference = srsFrom(crsText)): Promise<BBox> {
    return this.source.derived(`footprint ${crsText}`, async () => {
      const meta = await this.meta();
      try {
        return transformBounds(srsFrom(meta.crs), crs, meta.bounds, 21);
      } catch {
        return [NaN, NaN, NaN, NaN] as BBox;
      }
    });
  }

  /** GDAL's suggested warp output (rasterio `calculate_default_transform`), cached per target CRS. */
  private async nativeTransform(dstText: string, dstSrs: SpatialReference): Promise<GeoTransform> {
    return this.source.derived(`transform ${dstText}`, async () => {
      const meta = await this.meta();
      const dsSrs = srsFrom(meta.crs);
      let bounds = meta.bounds;
      let w = meta.width;
      let h = meta.height;
      // rio-tiler #654: geographic rasters reaching past WebMercator's latitude limit are clamped.
      if (sameCrs(dsSrs, srsFrom(WGS84)) && sameCrs(dstSrs, srsFrom(WEB_MERCATOR)) && (bounds[1] < -85.06 || bounds[3] > 85.06)) {
        bounds = [bounds[0], Math.max(bounds[1], -85.06), bounds[2], Math.min(bounds[3], 85.06)];
        const win = windowFromBounds(bounds, meta.geoTransform as GeoTransform);
        w = pyRound(win.width);
        h = pyRound(win.height);
      }
      return defaultTransform(dsSrs, dstSrs, bounds, w, h);
    });
  }
}

/** Masks every band where the shape does not touch the pixel. */
/** `shape` (in `shapeCrs`) in the CRS of `img`: itself when they agree, else a transformed copy. */
function shapeInImageCrs(img: ImageData, shape: gdal.Geometry, shapeCrs: string): gdal.Geometry {
  const shapeSrs = srsFrom(shapeCrs);
  const imgSrs = srsFrom(img.crs);
  if (sameCrs(shapeSrs, imgSrs)) return shape;
  const geom = shape.clone();
  geom.srs = shapeSrs;
  geom.transformTo(imgSrs);
  return geom;
}

export async function applyCutline(img: ImageData, shape: gdal.Geometry, shapeCrs: string): Promise<ImageData> {
  const outside = await outsideMask(shapeInImageCrs(img, shape, shapeCrs), img.bounds, img.width, img.height);
  const masks = new Map<Uint8Array, Uint8Array>();
  img.masks = img.masks.map((m) => {
    let out = masks.get(m);
    if (!out) {
      out = Uint8Array.from(m);
      for (let i = 0; i < out.length; i++) if (outside[i]) out[i] = 0;
      masks.set(m, out);
    }
    return out;
  });
  return img;
}

/** rio-tiler's `cover_scale`: the shape is burnt at this many times the image's resolution. */
const COVER_SCALE = 10;
/** Fine-grid pixels one coverage array may burn (the fine grid is 100 bytes per image pixel). */
const MAX_COVER_PIXELS = 256 * 1024 * 1024;

/**
 * rio-tiler `ImageData.get_coverage_array`: the fraction of each pixel the shape covers, from the
 * shape burnt (all touched) on a grid ten times finer and averaged over each pixel's 10×10 cells.
 */
export async function coverageArray(img: ImageData, shape: gdal.Geometry, shapeCrs: string): Promise<Float32Array> {
  const fine = img.width * img.height * COVER_SCALE * COVER_SCALE;
  if (fine > MAX_COVER_PIXELS) {
    throw badRequest(
      `Feature too large for coverage-weighted statistics: ${img.width}x${img.height} pixels; use max_size or width/height (at most ${MAX_COVER_PIXELS / COVER_SCALE ** 2} pixels)`,
    );
  }
  const fineWidth = img.width * COVER_SCALE;
  const outside = await outsideMask(shapeInImageCrs(img, shape, shapeCrs), img.bounds, fineWidth, img.height * COVER_SCALE);
  // numpy's float32 arithmetic, step for step: the mean of each cell row, then (summed in order)
  // the mean of those, so that weighted sums agree with TiTiler's to the last bit.
  const f = Math.fround;
  const coverage = new Float32Array(img.width * img.height);
  for (let row = 0; row < img.height; row++) {
    for (let col = 0; col < img.width; col++) {
      let sum = 0;
      for (let r = 0; r < COVER_SCALE; r++) {
        const base = (row * COVER_SCALE + r) * fineWidth + col * COVER_SCALE;
        let inside = 0;
        for (let c = 0; c < COVER_SCALE; c++) inside += outside[base + c] ? 0 : 1;
        sum = f(sum + f(inside / COVER_SCALE));
      }
      coverage[row * img.width + col] = f(sum / COVER_SCALE);
    }
  }
  return coverage;
}

/** rasterio `calculate_default_transform` over bounds and a size (a 1-band MEM stand-in dataset). */
async function defaultTransform(src: SpatialReference, dst: SpatialReference, bounds: BBox, width: number, height: number): Promise<GeoTransform> {
  const ds = gdal.open('', 'w', 'MEM', Math.max(1, width), Math.max(1, height), 0);
  try {
    ds.srs = src;
    ds.geoTransform = [bounds[0], (bounds[2] - bounds[0]) / width, 0, bounds[3], 0, (bounds[1] - bounds[3]) / height];
    const out = await gdal.suggestedWarpOutputAsync({ src: ds, s_srs: src, t_srs: dst });
    return out.geoTransform as GeoTransform;
  } catch (err) {
    throw new TesseraError('BadRequest', `Cannot reproject the dataset into the requested CRS: ${(err as Error).message}`);
  } finally {
    ds.close();
  }
}

/**
 * The decimation factor of the overview GDAL reads for a read `decimation` times coarser than the
 * raster: the coarsest one not coarser than that (with GDAL's 1.2 tolerance), else full resolution.
 */
export function overviewFactor(meta: SourceMeta, decimation: number): number {
  let factor = 1;
  for (const f of meta.overviews) if (f <= decimation * 1.2 && f > factor) factor = f;
  return factor;
}

/**
 * Source pixels a read of a `w`×`h` area at `outW`×`outH` really touches: only full-resolution
 * reads cost their full area.
 */
function sourcePixels(meta: SourceMeta, w: number, h: number, outW: number, outH: number): number {
  const factor = overviewFactor(meta, Math.min(w / outW, h / outH));
  return Math.ceil((w * h) / (factor * factor));
}

/** rio-tiler: tiled datasets whose window falls on 64-px block boundaries read without padding. */
function isAlignedWithBlocks(meta: SourceMeta, bounds: BBox): boolean {
  if (meta.blockSize[0] >= meta.width) return false;
  const win = windowFromBounds(bounds, meta.geoTransform as GeoTransform);
  if (pyRound(win.width) % 64 && pyRound(win.height) % 64) return false;
  if ((meta.width - pyRound(win.colOff)) % 64) return false;
  if ((meta.height - pyRound(win.rowOff)) % 64) return false;
  return true;
}

function cropRaw(raw: RawRead, p: number): RawRead {
  const w = raw.width - 2 * p;
  const h = raw.height - 2 * p;
  const cropOne = <T extends Uint8Array | RawRead['bands'][number]>(src: T): T => {
    const out = new (src.constructor as new (n: number) => T)(w * h);
    for (let r = 0; r < h; r++) {
      const start = (r + p) * raw.width + p;
      (out as Uint8Array).set((src as Uint8Array).subarray(start, start + w), r * w);
    }
    return out;
  };
  const maskMap = new Map<Uint8Array, Uint8Array>();
  return {
    ...raw,
    width: w,
    height: h,
    bands: raw.bands.map(cropOne),
    masks: raw.masks.map((m) => {
      let c = maskMap.get(m);
      if (!c) {
        c = cropOne(m);
        maskMap.set(m, c);
      }
      return c;
    }),
  };
}

/** RawRead → ImageData: names `b{i}`, STATISTICS_* tags (direct reads), unscale to float32. */
function toImageData(raw: RawRead, meta: SourceMeta, bounds: BBox, crs: string, unscale: boolean, direct: boolean): ImageData {
  const img: ImageData = {
    width: raw.width,
    height: raw.height,
    dtype: raw.dtype,
    bands: raw.bands,
    masks: raw.masks,
    bandNames: raw.indexes.map((i) => `b${i}`),
    bounds,
    crs,
  };
  if (direct) {
    const stats: Array<[number, number]> = [];
    for (const i of raw.indexes) {
      const md = meta.bands[i - 1]?.metadata ?? {};
      if ('STATISTICS_MINIMUM' in md && 'STATISTICS_MAXIMUM' in md) stats.push([Number(md['STATISTICS_MINIMUM']), Number(md['STATISTICS_MAXIMUM'])]);
    }
    if (stats.length === raw.indexes.length && stats.length > 0) img.datasetStatistics = stats;
  }
  if (unscale) {
    img.bands = raw.bands.map((band, k) => {
      const bm = meta.bands[raw.indexes[k]! - 1];
      const scale = bm?.scale ?? 1;
      const offset = bm?.offset ?? 0;
      const out = new Float32Array(band.length);
      for (let i = 0; i < band.length; i++) out[i] = Math.fround(Math.fround(Math.fround(band[i]!) * scale) + offset);
      return out;
    });
    img.dtype = 'float32';
  }
  return img;
}
