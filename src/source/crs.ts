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
 * Bounds of a box after transformation, from `densify` points along each edge (rasterio's
 * transform_bounds with densify_pts=21). Points that fail to transform are skipped; if none
 * transforms the result is non-finite and callers decide.
 */
export function transformBounds(src: SpatialReference, dst: SpatialReference, bbox: BBox, densify = 21): BBox {
  if (sameCrs(src, dst)) return [...bbox];
  const ct = transformer(src, dst);
  const [l, b, r, t] = bbox;
  let minx = Infinity;
  let miny = Infinity;
  let maxx = -Infinity;
  let maxy = -Infinity;
  const steps = densify + 1;
  const visit = (x: number, y: number): void => {
    try {
      const p = ct.transformPoint(x, y);
      if (!Number.isFinite(p.x) || !Number.isFinite(p.y)) return;
      if (p.x < minx) minx = p.x;
      if (p.x > maxx) maxx = p.x;
      if (p.y < miny) miny = p.y;
      if (p.y > maxy) maxy = p.y;
    } catch {
      // outside the projection's domain
    }
  };
  for (let i = 0; i <= steps; i++) {
    const fx = l + ((r - l) * i) / steps;
    const fy = b + ((t - b) * i) / steps;
    visit(fx, b);
    visit(fx, t);
    visit(l, fy);
    visit(r, fy);
  }
  return [minx, miny, maxx, maxy];
}
