/**
 * CRS parsing and coordinate transformation through GDAL's OSR (sync calls: pure CPU, no I/O).
 * User-supplied CRS text is checked against the forms TiTiler users send before it reaches OSR,
 * because OSRSetFromUserInput would also read a file named by the string.
 */
import { gdal, type SpatialReference } from './gdal.js';
import { badRequest } from '../errors.js';
import type { BBox } from '../tms/grid.js';

const CRS_FORMS = [
  /^(EPSG|ESRI|IAU_2015|IGNF|OGC):[A-Za-z0-9_.]+$/i,
  /^urn:ogc:def:crs:[A-Za-z0-9_]+:[0-9.]*:[A-Za-z0-9_.]+$/i,
  /^https?:\/\/www\.opengis\.net\/def\/crs\/[A-Za-z0-9_]+\/[0-9.]+\/[A-Za-z0-9_.]+$/i,
  /^\+proj=[^\n]*$/,
  /^(GEOGCS|PROJCS|GEOCCS|COMPD_CS|GEOGCRS|PROJCRS|GEODCRS|BOUNDCRS|COMPOUNDCRS|GEOGRAPHICCRS|PROJECTEDCRS)\s*\[/i,
  /^\s*\{/, // PROJJSON
];

const srsCache = new Map<string, SpatialReference>();

/** A SpatialReference for trusted (TMS, dataset) or validated user CRS text; cached. */
export function srsFrom(text: string): SpatialReference {
  let srs = srsCache.get(text);
  if (!srs) {
    srs = gdal.SpatialReference.fromUserInput(text);
    if (srsCache.size > 256) srsCache.clear();
    srsCache.set(text, srs);
  }
  return srs;
}

/** Parses a CRS named by a client (`coord_crs`, `dst_crs`): 400 when it is not a CRS. */
export function parseUserCrs(text: string, param: string): SpatialReference {
  const trimmed = text.trim();
  if (!CRS_FORMS.some((re) => re.test(trimmed))) {
    throw badRequest(`Invalid ${param} '${text}': not a CRS (use e.g. EPSG:4326)`);
  }
  try {
    return srsFrom(trimmed);
  } catch {
    throw badRequest(`Invalid ${param} '${text}': unknown CRS`);
  }
}

export const WGS84 = 'EPSG:4326';

/**
 * Transformations, keyed by the SpatialReference objects themselves: srsFrom hands out one object
 * per CRS text, so identity is a cheap key (the WKT of both sides took ~0.3 ms per lookup).
 */
const transformCache = new WeakMap<SpatialReference, Map<SpatialReference, gdal.CoordinateTransformation>>();

function transformer(src: SpatialReference, dst: SpatialReference): gdal.CoordinateTransformation {
  let bySrc = transformCache.get(src);
  if (!bySrc) transformCache.set(src, (bySrc = new Map()));
  let ct = bySrc.get(dst);
  if (!ct) {
    ct = new gdal.CoordinateTransformation(src, dst);
    bySrc.set(dst, ct);
  }
  return ct;
}

/** The transformation from `src` to `dst`; undefined when GDAL cannot build one. */
export function transformerBetween(src: SpatialReference, dst: SpatialReference): gdal.CoordinateTransformation | undefined {
  try {
    return transformer(src, dst);
  } catch {
    return undefined;
  }
}

export function sameCrs(a: SpatialReference, b: SpatialReference): boolean {
  return a === b || a.isSame(b);
}

export function transformPoint(src: SpatialReference, dst: SpatialReference, x: number, y: number): [number, number] {
  if (sameCrs(src, dst)) return [x, y];
  const p = transformer(src, dst).transformPoint(x, y);
  return [p.x, p.y];
}

/**
 * Transforms points `from … from+count-1` of (xs, ys) in place; ok[i] = 0 where a point fails or
 * lands on a non-finite coordinate. The results are the very doubles transformPoint gives, point by
 * point: many points go to PROJ in one call, as a WKB line string transformed by OGR (one native
 * round trip costs ~15 µs, a point ~0.9 µs alone and ~0.25 µs in a batch), so short runs, and any
 * run in which a point fails (OGR then refuses the whole line), go one point at a time.
 */
export function transformPoints(ct: gdal.CoordinateTransformation, xs: Float64Array, ys: Float64Array, ok: Uint8Array, from: number, count: number): void {
  if (count >= BATCH_MIN_POINTS && transformBatch(ct, xs, ys, ok, from, count)) return;
  for (let i = from; i < from + count; i++) {
    let x: number;
    let y: number;
    try {
      const p = ct.transformPoint(xs[i]!, ys[i]!);
      x = p.x;
      y = p.y;
    } catch {
      ok[i] = 0;
      continue;
    }
    const good = Number.isFinite(x) && Number.isFinite(y);
    xs[i] = x;
    ys[i] = y;
    ok[i] = good ? 1 : 0;
  }
}

const BATCH_MIN_POINTS = 24;
// Little-endian 2D LineString WKB starts at byte 7, so that its doubles (from byte 16) are aligned.
const WKB_AT = 7;
let wkbScratch = new ArrayBuffer(0);

function transformBatch(ct: gdal.CoordinateTransformation, xs: Float64Array, ys: Float64Array, ok: Uint8Array, from: number, count: number): boolean {
  const bytes = 9 + 16 * count;
  if (wkbScratch.byteLength < WKB_AT + bytes) wkbScratch = new ArrayBuffer(2 * (WKB_AT + bytes));
  const head = new DataView(wkbScratch, WKB_AT, 9);
  head.setUint8(0, 1);
  head.setUint32(1, 2, true);
  head.setUint32(5, count, true);
  const coords = new Float64Array(wkbScratch, WKB_AT + 9, 2 * count);
  for (let i = 0; i < count; i++) {
    coords[2 * i] = xs[from + i]!;
    coords[2 * i + 1] = ys[from + i]!;
  }
  let out: Buffer;
  try {
    const line = gdal.Geometry.fromWKB(Buffer.from(wkbScratch, WKB_AT, bytes));
    line.transform(ct);
    out = line.toWKB(gdal.wkbNDR);
  } catch {
    return false;
  }
  if (out.length !== bytes) return false;
  // The returned buffer's doubles need not be aligned: copy them into the (aligned) scratch.
  new Uint8Array(wkbScratch, WKB_AT + 9, 16 * count).set(out.subarray(9));
  for (let i = 0; i < count; i++) {
    const x = coords[2 * i]!;
    const y = coords[2 * i + 1]!;
    xs[from + i] = x;
    ys[from + i] = y;
    ok[from + i] = Number.isFinite(x) && Number.isFinite(y) ? 1 : 0;
  }
  return true;
}

/**
 * Bounds of a box after transformation, from `densify` points along each edge (rasterio's
 * transform_bounds with densify_pts=21). Points that fail to transform are skipped; if none
 * transforms the result is non-finite and callers decide.
 */
export function transformBounds(src: SpatialReference, dst: SpatialReference, bbox: BBox, densify = 21): BBox {
  if (sameCrs(src, dst)) return [...bbox];
  const ct = transformer(src, dst);
  const [l, b, r, t] = bbox;
  const steps = densify + 1;
  const n = 4 * (steps + 1);
  const xs = new Float64Array(n);
  const ys = new Float64Array(n);
  const ok = new Uint8Array(n);
  for (let i = 0, k = 0; i <= steps; i++) {
    const fx = l + ((r - l) * i) / steps;
    const fy = b + ((t - b) * i) / steps;
    xs[k] = fx;
    ys[k++] = b;
    xs[k] = fx;
    ys[k++] = t;
    xs[k] = l;
    ys[k++] = fy;
    xs[k] = r;
    ys[k++] = fy;
  }
  transformPoints(ct, xs, ys, ok, 0, n);
  let minx = Infinity;
  let miny = Infinity;
  let maxx = -Infinity;
  let maxy = -Infinity;
  // Points outside the projection's domain are skipped.
  for (let i = 0; i < n; i++) {
    if (!ok[i]) continue;
    const x = xs[i]!;
    const y = ys[i]!;
    if (x < minx) minx = x;
    if (x > maxx) maxx = x;
    if (y < miny) miny = y;
    if (y > maxy) maxy = y;
  }
  return [minx, miny, maxx, maxy];
}
