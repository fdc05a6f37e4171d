/**
 * Pixel-grid arithmetic of a read, as rio-tiler does it: geotransforms, windows, output sizes,
 * buffers and the resolution of the virtual grid a reprojected read warps into. Pure functions,
 * no GDAL, so a request's size can be known (and refused) before anything is read.
 *
 * Geotransforms are GDAL's six numbers: [x0, xres, 0, y0, 0, yres] (north-up, yres < 0).
 */
import { bboxesIntersect, type BBox, type TileMatrixSet } from '../tms/grid.js';
import { sameCrs, srsFrom, transformBounds, transformPoint } from '../gdal/crs.js';

export type GeoTransform = [number, number, number, number, number, number];

/** A window in pixel coordinates; offsets and sizes may be fractional, as rasterio's are. */
export interface Window {
  colOff: number;
  rowOff: number;
  width: number;
  height: number;
}

/** Python's round(): halves go to the even neighbour (rio-tiler's sizes depend on it). */
export function pyRound(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

export function fromBounds(bounds: BBox, width: number, height: number): GeoTransform {
  const [w, s, e, n] = bounds;
  return [w, (e - w) / width, 0, n, 0, (s - n) / height];
}

export function arrayBounds(height: number, width: number, gt: GeoTransform): BBox {
  const left = gt[0];
  const top = gt[3];
  const right = gt[0] + gt[1] * width;
  const bottom = gt[3] + gt[5] * height;
  return [left, bottom, right, top];
}

export function windowFromBounds(bounds: BBox, gt: GeoTransform): Window {
  const [left, bottom, right, top] = bounds;
  const colOff = (left - gt[0]) / gt[1];
  const rowOff = (top - gt[3]) / gt[5];
  return { colOff, rowOff, width: (right - gt[0]) / gt[1] - colOff, height: (bottom - gt[3]) / gt[5] - rowOff };
}

export function windowBounds(win: Window, gt: GeoTransform): BBox {
  const left = gt[0] + win.colOff * gt[1];
  const top = gt[3] + win.rowOff * gt[5];
  const right = left + win.width * gt[1];
  const bottom = top + win.height * gt[5];
  return [left, Math.min(bottom, top), right, Math.max(bottom, top)];
}

/** rio-tiler `_round_window`: outward to whole pixels. */
export function roundWindowOut(win: Window): Window {
  const row0 = Math.floor(win.rowOff);
  const row1 = Math.ceil(win.rowOff + win.height);
  const col0 = Math.floor(win.colOff);
  const col1 = Math.ceil(win.colOff + win.width);
  return { colOff: col0, rowOff: row0, width: Math.max(col1 - col0, 0), height: Math.max(row1 - row0, 0) };
}

/** rio-tiler `_get_width_height`: the longer side becomes `maxSize`, the other keeps the ratio. */
export function sizeForMaxSize(maxSize: number, height: number, width: number): [number, number] {
  if (Math.max(height, width) < maxSize) return [height, width];
  const ratio = height / width;
  if (ratio > 1) return [maxSize, Math.ceil(maxSize / ratio)];
  return [Math.ceil(maxSize * ratio), maxSize];
}

/** rio-tiler `_apply_buffer`: grow the bounds by `buffer` output pixels, the size by int(2·buffer). */
export function applyBuffer(buffer: number, bounds: BBox, height: number, width: number): [BBox, number, number] {
  const xres = (bounds[2] - bounds[0]) / width;
  const yres = (bounds[3] - bounds[1]) / height;
  const grown: BBox = [bounds[0] - xres * buffer, bounds[1] - yres * buffer, bounds[2] + xres * buffer, bounds[3] + yres * buffer];
  const extra = Math.trunc(buffer * 2);
  return [grown, height + extra, width + extra];
}

export interface Grid {
  gt: GeoTransform;
  width: number;
  height: number;
}

/**
 * rio-tiler `get_vrt_transform` for a reprojected read: the grid covering `bounds` at the finer of
 * the requested output resolution and the dataset's native resolution in the target CRS
 * (`native`, GDAL's suggested warp output), so zoomed-out reads decimate from overviews and
 * overzoomed reads warp at the output resolution.
 */
export function vrtGrid(native: GeoTransform, bounds: BBox, height?: number, width?: number): Grid {
  const [w, s, e, n] = bounds;
  let xres = native[1];
  let yres = native[5];
  if (height && width) {
    const out = fromBounds(bounds, width, height);
    if (Math.abs(out[1]) < Math.abs(native[1])) xres = out[1];
    if (Math.abs(out[5]) < Math.abs(native[5])) yres = out[5];
  }
  const vw = Math.max(1, pyRound((e - w) / xres));
  const vh = Math.max(1, pyRound((s - n) / yres));
  return { gt: fromBounds(bounds, vw, vh), width: vw, height: vh };
}

/** Tiles' bounds carried into other CRSs, per grid: the last few hundred (tile, CRS) pairs. */
const tileBoundsMemo = new WeakMap<TileMatrixSet, Map<string, BBox>>();
const TILE_BOUNDS_KEPT = 256;

/**
 * A tile's bounds in `crs` (21 points per edge), remembered: the assets of a mosaic tile, tens to
 * hundreds of them mostly in one CRS, each ask it of the same tile (a transform costs ~0.05 ms).
 */
function tileBoundsIn(tms: TileMatrixSet, tile: { x: number; y: number; z: number }, crs: string): BBox {
  let memo = tileBoundsMemo.get(tms);
  if (!memo) {
    memo = new Map();
    tileBoundsMemo.set(tms, memo);
  }
  const key = `${tile.z}/${tile.x}/${tile.y} ${crs}`;
  let tb = memo.get(key);
  if (tb) return tb;
  tb = tms.xyBounds(tile);
  const tmsSrs = srsFrom(tms.srs);
  const srs = srsFrom(crs);
  if (!sameCrs(tmsSrs, srs)) tb = transformBounds(tmsSrs, srs, tb, 21);
  if (memo.size >= TILE_BOUNDS_KEPT) memo.delete(memo.keys().next().value!);
  memo.set(key, tb);
  return tb;
}

/**
 * rio-tiler's `tile_exists`: whether the tile's bounds, carried into `crs` (21 points per edge),
 * strictly overlap `bounds`; true when the transform fails (unknown counts as touching).
 */
export function tileTouches(tms: TileMatrixSet, tile: { x: number; y: number; z: number }, bounds: BBox, crs: string): boolean {
  const tb = tileBoundsIn(tms, tile, crs);
  if (!tb.every(Number.isFinite)) return true;
  return bboxesIntersect([Math.min(tb[0], tb[2]), Math.min(tb[1], tb[3]), Math.max(tb[0], tb[2]), Math.max(tb[1], tb[3])], bounds);
}

/**
 * (x, y) in `coordCrs` carried into `crs`, and whether it falls strictly inside `bounds` (rio-tiler's
 * PointOutsideBounds test); a point the transform cannot carry is outside.
 */
export function pointIn(bounds: BBox, crs: string, x: number, y: number, coordCrs: string): { inside: boolean; x: number; y: number } {
  let px = NaN;
  let py = NaN;
  try {
    [px, py] = transformPoint(srsFrom(coordCrs), srsFrom(crs), x, y);
  } catch {
    // outside the CRS's domain
  }
  const [l, b, r, t] = bounds;
  return { inside: l < px && px < r && b < py && py < t, x: px, y: py };
}
