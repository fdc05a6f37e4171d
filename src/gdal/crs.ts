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
  if (!bySrc) {
    bySrc = new Map();
    transformCache.set(src, bySrc);
  }
  let ct = bySrc.get(dst);
  if (!ct) {
    try {
      ct = new gdal.CoordinateTransformation(src, dst);
    } catch (err) {
      // A CRS the client named that PROJ cannot reach from the data's (or the other way round).
      throw badRequest(`Cannot transform coordinates between the requested CRS and the data's: ${(err as Error).message}`);
    }
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

/** isSame answers, by the pair of objects (srsFrom hands out one per text): OSRIsSame costs ~0.2 ms. */
const sameCache = new WeakMap<SpatialReference, WeakMap<SpatialReference, boolean>>();

export function sameCrs(a: SpatialReference, b: SpatialReference): boolean {
  if (a === b) return true;
  let byB = sameCache.get(a);
  if (!byB) {
    byB = new WeakMap();
    sameCache.set(a, byB);
  }
  let same = byB.get(b);
  if (same === undefined) {
    same = a.isSame(b);
    byB.set(b, same);
  }
  return same;
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

/**
 * Exact point transformations remembered for the reads of one output image. A mosaic tile warps
 * each of its assets onto the same destination grid, and where the assets share a CRS their warps
 * transform many of the same points (row anchors, edge samples of pieces that line up): asset after
 * asset, those come from here instead of PROJ. What is returned is what transformPoints gave for
 * the point, so warps are unchanged to the bit.
 *
 * Open addressing over (x, y) bit patterns, for one transformation (the first one used; another
 * goes straight to transformPoints); once 3/4 full it stops remembering. The tables are made on
 * first use: a tile that never warps pays nothing.
 */
export class TransformMemo {
  private ct: gdal.CoordinateTransformation | undefined;
  /** Per slot: input x, y then output x, y. */
  private points = new Float64Array(0);
  /** Per slot: 0 empty, 1 transformed, 2 failed. */
  private state = new Uint8Array(0);
  private used = 0;
  private looked = 0;
  private found = 0;
  private missAt = new Int32Array(0);
  private missX = new Float64Array(0);
  private missY = new Float64Array(0);
  private missOk = new Uint8Array(0);

  /** `slots`: a power of two; the memo remembers up to 3/4 of it. */
  constructor(private readonly slots = 1 << 13) {}

  /** Forgets every point and the transformation, keeping the tables (for a memo reused call after call). */
  reset(): void {
    this.ct = undefined;
    this.state.fill(0);
    this.used = 0;
  }

  /** transformPoints, through the memo when `ct` is its transformation. */
  transform(ct: gdal.CoordinateTransformation, xs: Float64Array, ys: Float64Array, ok: Uint8Array, from: number, count: number): void {
    if (this.ct === undefined) {
      this.ct = ct;
      if (this.state.length !== this.slots) {
        this.points = new Float64Array(4 * this.slots);
        this.state = new Uint8Array(this.slots);
      }
    }
    if (ct !== this.ct) {
      transformPoints(ct, xs, ys, ok, from, count);
      return;
    }
    if (this.missAt.length < count) {
      const n = Math.max(count, 1024);
      this.missAt = new Int32Array(n);
      this.missX = new Float64Array(n);
      this.missY = new Float64Array(n);
      this.missOk = new Uint8Array(n);
    }
    const { points, state, missAt, missX, missY, missOk } = this;
    let misses = 0;
    for (let i = from; i < from + count; i++) {
      const x = xs[i]!;
      const y = ys[i]!;
      const slot = this.find(x, y);
      const st = state[slot]!;
      if (st === 0) {
        missAt[misses] = i;
        missX[misses] = x;
        missY[misses] = y;
        misses++;
        continue;
      }
      xs[i] = points[4 * slot + 2]!;
      ys[i] = points[4 * slot + 3]!;
      ok[i] = st === 1 ? 1 : 0;
    }
    this.looked += count;
    this.found += count - misses;
    if (misses === 0) return;
    transformPoints(ct, missX, missY, missOk, 0, misses);
    const full = (this.slots * 3) >> 2;
    for (let m = 0; m < misses; m++) {
      const i = missAt[m]!;
      if (this.used < full) {
        // transformPoints leaves a point it could not transform as it was: the input, as here.
        const slot = this.find(xs[i]!, ys[i]!);
        if (state[slot] === 0) {
          points[4 * slot] = xs[i]!;
          points[4 * slot + 1] = ys[i]!;
          points[4 * slot + 2] = missX[m]!;
          points[4 * slot + 3] = missY[m]!;
          state[slot] = missOk[m] ? 1 : 2;
          this.used++;
        }
      }
      xs[i] = missX[m]!;
      ys[i] = missY[m]!;
      ok[i] = missOk[m]!;
    }
  }

  /** Points looked up, found, and remembered so far (for tests and profiling). */
  get stats(): { points: number; hits: number; remembered: number } {
    return { points: this.looked, hits: this.found, remembered: this.used };
  }

  /** The slot holding (x, y), or the empty slot where it would go. */
  private find(x: number, y: number): number {
    BITS_F64[0] = x;
    BITS_F64[1] = y;
    let h = Math.imul(BITS_I32[0]! ^ Math.imul(BITS_I32[1]!, 0x85ebca6b), 0x9e3779b1);
    h = Math.imul(h ^ BITS_I32[2]! ^ Math.imul(BITS_I32[3]!, 0xc2b2ae35), 0x27d4eb2f);
    const mask = this.slots - 1;
    let slot = (h ^ (h >>> 15)) & mask;
    const { points, state } = this;
    // Object.is-like equality on the bits: -0 and 0, or two NaNs, are told apart or matched exactly.
    while (state[slot] !== 0) {
      const at = 4 * slot;
      if (sameBits(points[at]!, x) && sameBits(points[at + 1]!, y)) return slot;
      slot = (slot + 1) & mask;
    }
    return slot;
  }
}

const BITS_F64 = new Float64Array(2);
const BITS_I32 = new Int32Array(BITS_F64.buffer);

function sameBits(a: number, b: number): boolean {
  return a === b ? a !== 0 || 1 / a === 1 / b : a !== a && b !== b;
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
