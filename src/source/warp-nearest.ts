/**
 * Nearest-neighbour warping in JavaScript, pixel for pixel what gdalwarp (`-r near`, default error
 * threshold) makes of the same source window: GDAL's approximate transformer (exact transformations
 * at the ends and middle of each destination row, linear interpolation in between while the middle
 * error stays under 0.125 source pixels, halving the row where it does not) and its nearest kernel
 * (truncation with a 1e-10 nudge, an exact retransformation of points that land just outside the
 * source). Parity is measured against gdalwarp itself in test/warp-nearest.test.ts.
 *
 * Why not gdalwarp: per 256² tile it cost ~4 ms (a new PROJ transformation with its database
 * lookups, MEM datasets in and out, a dozen async calls); this costs well under one, with one
 * cached transformation and no copies beyond the output arrays.
 *
 * Everything here is synchronous over caller-owned arrays; module-level scratch is reused between
 * calls, which is safe because no call yields.
 */
import type { CoordinateTransformation } from 'gdal-async';
import type { BandArray } from '../image/image-data.js';

/** gdalwarp's default error threshold for its approximate transformer, in source pixels. */
export const GDALWARP_MAX_ERROR = 0.125;

export type GeoTransform6 = readonly [number, number, number, number, number, number];

/** Destination pixel/line → source pixel/line: dst geotransform, reprojection, inverse src geotransform. */
export interface PixelTransform {
  dstGt: GeoTransform6;
  /** Destination CRS → source CRS. */
  ct: CoordinateTransformation;
  /** Inverse geotransform of the source window (see invGeoTransform). */
  srcInv: GeoTransform6;
}

/** GDALInvGeoTransform, including its exact special case for north-up transforms; undefined when singular. */
export function invGeoTransform(gt: readonly number[]): GeoTransform6 | undefined {
  const [g0, g1, g2, g3, g4, g5] = gt as GeoTransform6;
  if (g2 === 0 && g4 === 0 && g1 !== 0 && g5 !== 0) return [-g0 / g1, 1 / g1, 0, -g3 / g5, 0, 1 / g5];
  const det = g1 * g5 - g2 * g4;
  if (Math.abs(det) < 1e-15) return undefined;
  const inv = 1 / det;
  return [(g2 * g3 - g0 * g5) * inv, g5 * inv, -g2 * inv, (-g1 * g3 + g0 * g4) * inv, -g4 * inv, g1 * inv];
}

/**
 * Transforms points `from … from+count-1` of (xs, ys) in place, exactly (GDALGenImgProjTransform);
 * `ok[i]` = 0 where the reprojection fails or gives a non-finite point.
 */
function exact(t: PixelTransform, xs: Float64Array, ys: Float64Array, ok: Uint8Array, from: number, count: number): void {
  const d = t.dstGt;
  const s = t.srcInv;
  const d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3], d4 = d[4], d5 = d[5];
  const s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5];
  for (let i = from; i < from + count; i++) {
    const px = xs[i]!;
    const py = ys[i]!;
    const X = d0 + px * d1 + py * d2;
    const Y = d3 + px * d4 + py * d5;
    let gx: number;
    let gy: number;
    try {
      const p = t.ct.transformPoint(X, Y);
      gx = p.x;
      gy = p.y;
    } catch {
      ok[i] = 0;
      continue;
    }
    if (!Number.isFinite(gx) || !Number.isFinite(gy)) {
      ok[i] = 0;
      continue;
    }
    xs[i] = s0 + gx * s1 + gy * s2;
    ys[i] = s3 + gx * s4 + gy * s5;
    ok[i] = 1;
  }
}

/** Exact transformation of one (pixel, line) point; undefined on failure. */
function exactPoint(t: PixelTransform, px: number, py: number, out: Float64Array): boolean {
  pointX[0] = px;
  pointY[0] = py;
  exact(t, pointX, pointY, pointOk, 0, 1);
  out[0] = pointX[0]!;
  out[1] = pointY[0]!;
  return pointOk[0] === 1;
}
const pointX = new Float64Array(1);
const pointY = new Float64Array(1);
const pointOk = new Uint8Array(1);

/**
 * GDALApproxTransformInternal over points `off … off+n-1` (one row: equal y, increasing x), given the
 * exact transforms of its start, middle and end in `sme` ([x0, xm, xe, y0, ym, ye]).
 */
function approxInternal(t: PixelTransform, xs: Float64Array, ys: Float64Array, ok: Uint8Array, off: number, n: number, sme: Float64Array, maxError: number): void {
  const mid = (n - 1) >> 1;
  const x0 = xs[off]!;
  const span = xs[off + n - 1]! - x0;
  const dx = (sme[2]! - sme[0]!) / span;
  const dy = (sme[5]! - sme[3]!) / span;
  const dm = xs[off + mid]! - x0;
  const error = Math.abs(sme[0]! + dx * dm - sme[1]!) + Math.abs(sme[3]! + dy * dm - sme[4]!);
  if (error <= maxError) {
    for (let i = n - 1; i >= 0; i--) {
      const dist = xs[off + i]! - x0;
      xs[off + i] = sme[0]! + dx * dist;
      ys[off + i] = sme[3]! + dy * dist;
      ok[off + i] = 1;
    }
    return;
  }
  // Split into [0, mid) and [mid, n); each half is approximated again when long enough.
  const leftMid = (mid - 1) >> 1;
  const rightMid = mid + ((n - mid - 1) >> 1);
  const exactLeft = mid <= 5 || xs[off]! === xs[off + mid - 1]! || xs[off]! === xs[off + leftMid]!;
  const exactRight = n - mid <= 5 || xs[off + mid]! === xs[off + n - 1]! || xs[off + mid]! === xs[off + rightMid]!;
  // Anchors: the middle and the end of the left half, the middle of the right half.
  const ax = anchorX;
  const ay = anchorY;
  const aok = anchorOk;
  ax[0] = xs[off + leftMid]!;
  ay[0] = ys[off + leftMid]!;
  ax[1] = xs[off + mid - 1]!;
  ay[1] = ys[off + mid - 1]!;
  ax[2] = xs[off + rightMid]!;
  ay[2] = ys[off + rightMid]!;
  aok.fill(1);
  let anchored = true;
  if (!exactLeft && !exactRight) exact(t, ax, ay, aok, 0, 3);
  else if (!exactLeft) exact(t, ax, ay, aok, 0, 2);
  else if (!exactRight) exact(t, ax, ay, aok, 2, 1);
  else anchored = false;
  if (!anchored || !aok[0] || !aok[1] || !aok[2]) {
    exact(t, xs, ys, ok, off + 1, mid - 1);
    exact(t, xs, ys, ok, off + mid + 1, n - mid - 2);
    setPoint(xs, ys, ok, off, sme, 0);
    setPoint(xs, ys, ok, off + mid, sme, 1);
    setPoint(xs, ys, ok, off + n - 1, sme, 2);
    return;
  }
  // The recursion reuses the anchor scratch, so the anchors are copied out first.
  const l0x = ax[0]!, l0y = ay[0]!, l1x = ax[1]!, l1y = ay[1]!, r0x = ax[2]!, r0y = ay[2]!;
  if (!exactLeft) {
    const s = new Float64Array([sme[0]!, l0x, l1x, sme[3]!, l0y, l1y]);
    approxInternal(t, xs, ys, ok, off, mid, s, maxError);
  } else {
    exact(t, xs, ys, ok, off + 1, mid - 1);
    setPoint(xs, ys, ok, off, sme, 0);
  }
  if (!exactRight) {
    const s = new Float64Array([sme[1]!, r0x, sme[2]!, sme[4]!, r0y, sme[5]!]);
    approxInternal(t, xs, ys, ok, off + mid, n - mid, s, maxError);
  } else {
    exact(t, xs, ys, ok, off + mid + 1, n - mid - 2);
    setPoint(xs, ys, ok, off + mid, sme, 1);
    setPoint(xs, ys, ok, off + n - 1, sme, 2);
  }
}
const anchorX = new Float64Array(3);
const anchorY = new Float64Array(3);
const anchorOk = new Uint8Array(3);

function setPoint(xs: Float64Array, ys: Float64Array, ok: Uint8Array, i: number, sme: Float64Array, k: number): void {
  xs[i] = sme[k]!;
  ys[i] = sme[3 + k]!;
  ok[i] = 1;
}

/**
 * Source pixel/line of the centre of every pixel of destination row `row` (width `n`), as gdalwarp's
 * approximate transformer gives them (GDALApproxTransform), into xs/ys; ok[i] = 0 where it failed.
 */
export function transformRow(t: PixelTransform, row: number, n: number, maxError: number, xs: Float64Array, ys: Float64Array, ok: Uint8Array): void {
  const y = row + 0.5;
  for (let i = 0; i < n; i++) {
    xs[i] = i + 0.5;
    ys[i] = y;
  }
  if (n <= 5 || maxError === 0) {
    exact(t, xs, ys, ok, 0, n);
    return;
  }
  const mid = (n - 1) >> 1;
  const ax = rowAnchorX;
  const ay = rowAnchorY;
  ax[0] = xs[0]!;
  ax[1] = xs[mid]!;
  ax[2] = xs[n - 1]!;
  ay.fill(y);
  exact(t, ax, ay, rowAnchorOk, 0, 3);
  if (!rowAnchorOk[0] || !rowAnchorOk[1] || !rowAnchorOk[2]) {
    exact(t, xs, ys, ok, 0, n);
    return;
  }
  const sme = rowSme;
  sme[0] = ax[0]!;
  sme[1] = ax[1]!;
  sme[2] = ax[2]!;
  sme[3] = ay[0]!;
  sme[4] = ay[1]!;
  sme[5] = ay[2]!;
  approxInternal(t, xs, ys, ok, 0, n, sme, maxError);
}
const rowAnchorX = new Float64Array(3);
const rowAnchorY = new Float64Array(3);
const rowAnchorOk = new Uint8Array(3);
const rowSme = new Float64Array(6);

export interface NearestWarpInput {
  transform: PixelTransform;
  /** Source window size (the planes' width and height). */
  srcWidth: number;
  srcHeight: number;
  /** Output size. */
  width: number;
  height: number;
  maxError?: number;
  /** Optional validity plane of the source (alpha or mask): 0 = transparent, else opaque. */
  validity?: BandArray;
}

/**
 * For every output pixel, the offset of the source pixel gdalwarp's nearest kernel takes, or -1 where
 * it writes nothing (outside the source, failed transformation, transparent source pixel).
 */
export function nearestIndex(input: NearestWarpInput): Int32Array {
  const { transform: t, srcWidth: sw, srcHeight: sh, width, height, validity } = input;
  const maxError = input.maxError ?? GDALWARP_MAX_ERROR;
  const index = new Int32Array(width * height);
  const xs = rowScratch(width, 0);
  const ys = rowScratch(width, 1);
  const ok = okScratch(width);
  const retry = new Float64Array(2);
  for (let r = 0; r < height; r++) {
    transformRow(t, r, width, maxError, xs, ys, ok);
    const base = r * width;
    for (let c = 0; c < width; c++) {
      let x = xs[c]!;
      let y = ys[c]!;
      let valid = ok[c] === 1 && !Number.isNaN(x) && !Number.isNaN(y);
      // A point just outside the source is transformed again exactly (GWKCheckAndComputeSrcOffsets):
      // the approximation alone must not decide whether an edge pixel is inside.
      if (valid && nearOutside(x, y, sw, sh)) {
        valid = exactPoint(t, c + 0.5, r + 0.5, retry) && !Number.isNaN(retry[0]!) && !Number.isNaN(retry[1]!);
        x = retry[0]!;
        y = retry[1]!;
      }
      if (!valid || x < 0 || y < 0 || x + 1e-10 > sw || y + 1e-10 > sh) {
        index[base + c] = -1;
        continue;
      }
      let ix = Math.trunc(x + 1e-10);
      let iy = Math.trunc(y + 1e-10);
      if (ix === sw) ix--;
      if (iy === sh) iy--;
      const offset = iy * sw + ix;
      index[base + c] = validity && validity[offset] === 0 ? -1 : offset;
    }
  }
  return index;
}

/** Outside the source but by less than a pixel: the case GDAL retransforms exactly. */
function nearOutside(x: number, y: number, sw: number, sh: number): boolean {
  return (x < 0 && x > -1) || (y < 0 && y > -1) || (x + 1e-10 > sw && x < sw + 1) || (y + 1e-10 > sh && y < sh + 1);
}

let scratchX = new Float64Array(0);
let scratchY = new Float64Array(0);
let scratchOk = new Uint8Array(0);
function rowScratch(n: number, which: 0 | 1): Float64Array {
  if (which === 0) {
    if (scratchX.length < n) scratchX = new Float64Array(n);
    return scratchX;
  }
  if (scratchY.length < n) scratchY = new Float64Array(n);
  return scratchY;
}
function okScratch(n: number): Uint8Array {
  if (scratchOk.length < n) scratchOk = new Uint8Array(n);
  return scratchOk;
}

/**
 * GDAL's RasterIO nearest-neighbour resampling of window (x, y, w, h) of a width×height source to
 * an outW×outH buffer, as source offsets (GDALRasterBand::IRasterIO: sample at the buffer pixel's
 * centre, nudged by 1e-10, clamped to the raster).
 */
export function rasterIoNearestIndex(srcWidth: number, srcHeight: number, win: { x: number; y: number; w: number; h: number }, outW: number, outH: number): Int32Array {
  const index = new Int32Array(outW * outH);
  const xInc = win.w / outW;
  const yInc = win.h / outH;
  const cols = new Int32Array(outW);
  for (let c = 0; c < outW; c++) {
    const sx = (c + 0.5) * xInc + win.x + 1e-10;
    cols[c] = Math.trunc(Math.min(Math.max(0, sx), srcWidth - 1));
  }
  for (let r = 0; r < outH; r++) {
    const sy = (r + 0.5) * yInc + win.y + 1e-10;
    const row = Math.trunc(Math.min(Math.max(0, sy), srcHeight - 1)) * srcWidth;
    const base = r * outW;
    for (let c = 0; c < outW; c++) index[base + c] = row + cols[c]!;
  }
  return index;
}

/** Gathers `src` through `index` into a new array of its type; -1 takes `fill`. */
export function gather(src: BandArray, index: Int32Array, fill: number): BandArray {
  const Ctor = src.constructor as { new (n: number): BandArray };
  const out = new Ctor(index.length);
  // One loop per common type: a loop that sees several typed-array kinds runs several times slower.
  if (src instanceof Uint16Array) gatherUint16(src, index, out as Uint16Array, fill);
  else if (src instanceof Uint8Array) gatherUint8(src, index, out as Uint8Array, fill);
  else if (src instanceof Float32Array) gatherFloat32(src, index, out as Float32Array, fill);
  else for (let i = 0; i < index.length; i++) out[i] = index[i]! >= 0 ? src[index[i]!]! : fill;
  return out;
}

function gatherUint16(src: Uint16Array, index: Int32Array, out: Uint16Array, fill: number): void {
  for (let i = 0; i < index.length; i++) {
    const k = index[i]!;
    out[i] = k >= 0 ? src[k]! : fill;
  }
}

function gatherUint8(src: Uint8Array, index: Int32Array, out: Uint8Array, fill: number): void {
  for (let i = 0; i < index.length; i++) {
    const k = index[i]!;
    out[i] = k >= 0 ? src[k]! : fill;
  }
}

function gatherFloat32(src: Float32Array, index: Int32Array, out: Float32Array, fill: number): void {
  for (let i = 0; i < index.length; i++) {
    const k = index[i]!;
    out[i] = k >= 0 ? src[k]! : fill;
  }
}

/**
 * gather with the nodata mask made in the same pass: `mask` gets 0 where the pixel is fill or equals
 * `nodata` (NaN matching NaN), 255 elsewhere — what a mask of the gathered band by value gives.
 * `nodata` must be representable in the array's type.
 */
export function gatherMasked(src: BandArray, index: Int32Array, nodata: number): { band: BandArray; mask: Uint8Array } {
  const Ctor = src.constructor as { new (n: number): BandArray };
  const band = new Ctor(index.length);
  const mask = new Uint8Array(index.length);
  if (Number.isNaN(nodata)) gatherMaskedNaN(src, index, band, mask);
  else if (src instanceof Uint16Array) gatherMaskedUint16(src, index, band as Uint16Array, mask, nodata);
  else if (src instanceof Uint8Array) gatherMaskedUint8(src, index, band as Uint8Array, mask, nodata);
  else if (src instanceof Float32Array) gatherMaskedFloat32(src, index, band as Float32Array, mask, nodata);
  else {
    for (let i = 0; i < index.length; i++) {
      const k = index[i]!;
      const v = k >= 0 ? src[k]! : nodata;
      band[i] = v;
      mask[i] = v === nodata ? 0 : 255;
    }
  }
  return { band, mask };
}

// One loop per common type, as for gather.
function gatherMaskedUint16(src: Uint16Array, index: Int32Array, out: Uint16Array, mask: Uint8Array, nodata: number): void {
  for (let i = 0; i < index.length; i++) {
    const k = index[i]!;
    const v = k >= 0 ? src[k]! : nodata;
    out[i] = v;
    mask[i] = v === nodata ? 0 : 255;
  }
}

function gatherMaskedUint8(src: Uint8Array, index: Int32Array, out: Uint8Array, mask: Uint8Array, nodata: number): void {
  for (let i = 0; i < index.length; i++) {
    const k = index[i]!;
    const v = k >= 0 ? src[k]! : nodata;
    out[i] = v;
    mask[i] = v === nodata ? 0 : 255;
  }
}

function gatherMaskedFloat32(src: Float32Array, index: Int32Array, out: Float32Array, mask: Uint8Array, nodata: number): void {
  for (let i = 0; i < index.length; i++) {
    const k = index[i]!;
    const v = k >= 0 ? src[k]! : nodata;
    out[i] = v;
    mask[i] = v === nodata ? 0 : 255;
  }
}

function gatherMaskedNaN(src: BandArray, index: Int32Array, out: BandArray, mask: Uint8Array): void {
  for (let i = 0; i < index.length; i++) {
    const k = index[i]!;
    const v = k >= 0 ? src[k]! : NaN;
    out[i] = v;
    mask[i] = v !== v ? 0 : 255;
  }
}

/** 255 where `index` took a source pixel, else 0. */
export function indexMask(index: Int32Array): Uint8Array {
  const mask = new Uint8Array(index.length);
  for (let i = 0; i < index.length; i++) mask[i] = index[i]! >= 0 ? 255 : 0;
  return mask;
}

/** index ∘ inner: composes a resampling (`outer`, offsets into the warped grid) with the warp's index. */
export function composeIndex(outer: Int32Array, inner: Int32Array): Int32Array {
  const out = new Int32Array(outer.length);
  for (let i = 0; i < outer.length; i++) out[i] = inner[outer[i]!]!;
  return out;
}
