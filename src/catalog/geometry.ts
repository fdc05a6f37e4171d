/**
 * The geometry a catalogue in memory needs, in longitude/latitude as pgSTAC keeps it (PostGIS
 * geometries in EPSG:4326, planar): shapes read from WKB (the items' `geometry` column) or GeoJSON
 * (a search's `intersects`, a tile's polygon), whether two shapes intersect (`st_intersects`, the
 * boundary included), and the area a set of items covers of an area (what pgSTAC's `exitwhenfull`
 * and `skipcovered` compare, `st_area(st_union(st_intersection(area, item)…))`).
 *
 * Items and tiles are mostly axis-aligned rectangles: their union is measured exactly by a sweep
 * over the rectangles' edges; any other polygon goes through polyclip-ts. Areas are measured as
 * GEOS measures a ring (its shoelace sum from the first vertex), and "unchanged"/"covered" are
 * decided within 1e-12 of the area, where GEOS's own rounding makes pgSTAC's exact comparison fall
 * either way.
 */
import { intersection, union, type Geom } from 'polyclip-ts';
import { badRequest } from '../errors.js';

export type Position = readonly [number, number];
type Ring = Position[];

/** A geometry as its parts: points, lines and polygons (outer ring first), with its bounding box. */
export interface Shape {
  points: Position[];
  lines: Ring[];
  polygons: Ring[][];
  bbox: [number, number, number, number];
}

function emptyShape(): Shape {
  return { points: [], lines: [], polygons: [], bbox: [Infinity, Infinity, -Infinity, -Infinity] };
}

function grow(shape: Shape, [x, y]: Position): void {
  const b = shape.bbox;
  if (x < b[0]) b[0] = x;
  if (y < b[1]) b[1] = y;
  if (x > b[2]) b[2] = x;
  if (y > b[3]) b[3] = y;
}

/** A bounding box as its polygon (pgSTAC's `bbox_geom`: ST_MakeEnvelope). */
export function boxShape(b: ArrayLike<number>): Shape {
  const [w, s, e, n] = [b[0]!, b[1]!, b[2]!, b[3]!];
  const ring: Ring = [
    [w, s],
    [w, n],
    [e, n],
    [e, s],
    [w, s],
  ];
  return { points: [], lines: [], polygons: [[ring]], bbox: [w, s, e, n] };
}

/** A WKB geometry that cannot be read (damaged, or claiming more than its bytes). */
export class WkbError extends Error {}

/**
 * A WKB geometry (ISO or extended: Z and M dimensions are read and dropped, an SRID skipped), as a
 * shape. Bounded by the bytes it has: a count past them is an error, not an allocation.
 */
export function shapeFromWkb(bytes: Uint8Array): Shape {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const shape = emptyShape();
  let at = 0;
  const need = (n: number): void => {
    if (at + n > bytes.byteLength) throw new WkbError('WKB ends early');
  };
  const read = (depth: number): void => {
    if (depth > 4) throw new WkbError('WKB nested too deep');
    need(5);
    const little = view.getUint8(at) === 1;
    let type = view.getUint32(at + 1, little);
    at += 5;
    let dims = 2;
    if (type & 0x20000000) {
      need(4);
      at += 4; // EWKB SRID
    }
    if (type & 0x80000000) dims++;
    if (type & 0x40000000) dims++;
    type &= 0x0fffffff;
    const iso = Math.floor(type / 1000);
    if (iso === 1 || iso === 2) dims = 3;
    else if (iso === 3) dims = 4;
    type %= 1000;
    const count = (): number => {
      need(4);
      const n = view.getUint32(at, little);
      at += 4;
      return n;
    };
    const pos = (): Position => {
      need(8 * dims);
      const p: Position = [view.getFloat64(at, little), view.getFloat64(at + 8, little)];
      at += 8 * dims;
      return p;
    };
    const ring = (): Ring => {
      const n = count();
      if (n * 8 * dims > bytes.byteLength - at) throw new WkbError('WKB ring longer than its bytes');
      const r: Ring = [];
      for (let i = 0; i < n; i++) {
        const p = pos();
        grow(shape, p);
        r.push(p);
      }
      return r;
    };
    switch (type) {
      case 1: {
        const p = pos();
        if (!Number.isNaN(p[0])) {
          grow(shape, p);
          shape.points.push(p);
        }
        return;
      }
      case 2:
        shape.lines.push(ring());
        return;
      case 3: {
        const n = count();
        if (n * 4 > bytes.byteLength - at) throw new WkbError('WKB polygon longer than its bytes');
        const rings: Ring[] = [];
        for (let i = 0; i < n; i++) rings.push(ring());
        if (rings.length > 0) shape.polygons.push(rings);
        return;
      }
      case 4:
      case 5:
      case 6:
      case 7: {
        const n = count();
        if (n * 5 > bytes.byteLength - at) throw new WkbError('WKB collection longer than its bytes');
        for (let i = 0; i < n; i++) read(depth + 1);
        return;
      }
      default:
        throw new WkbError(`WKB geometry type ${type} is not one of GeoJSON's`);
    }
  };
  read(0);
  return shape;
}

/**
 * A shape as WKB (little-endian, 2D): a GeometryCollection of its points, lines and polygons, which
 * `shapeFromWkb` reads back into the same shape. For items that come as GeoJSON (a STAC API's) into
 * a table that keeps geometries as WKB.
 */
export function wkbOfShape(shape: Shape): Uint8Array {
  const ringBytes = (r: readonly Position[]): number => 4 + 16 * r.length;
  const size =
    9 +
    shape.points.length * 21 +
    shape.lines.reduce((a, l) => a + 5 + ringBytes(l), 0) +
    shape.polygons.reduce((a, p) => a + 9 + p.reduce((b, r) => b + ringBytes(r), 0), 0);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  let at = 0;
  const header = (type: number): void => {
    view.setUint8(at, 1);
    view.setUint32(at + 1, type, true);
    at += 5;
  };
  const count = (n: number): void => {
    view.setUint32(at, n, true);
    at += 4;
  };
  const pos = ([x, y]: Position): void => {
    view.setFloat64(at, x, true);
    view.setFloat64(at + 8, y, true);
    at += 16;
  };
  const ring = (r: readonly Position[]): void => {
    count(r.length);
    r.forEach(pos);
  };
  header(7);
  count(shape.points.length + shape.lines.length + shape.polygons.length);
  for (const p of shape.points) {
    header(1);
    pos(p);
  }
  for (const l of shape.lines) {
    header(2);
    ring(l);
  }
  for (const p of shape.polygons) {
    header(3);
    count(p.length);
    p.forEach(ring);
  }
  return bytes;
}

function positionOf(v: unknown, where: string): Position {
  if (!Array.isArray(v) || v.length < 2) throw badRequest(`Invalid geometry: ${where}: a position has 2 or 3 numbers`);
  const [x, y] = v.map((n) => (typeof n === 'object' && n !== null && 'value' in n ? Number((n as { value: unknown }).value) : Number(n)));
  if (!Number.isFinite(x) || !Number.isFinite(y)) throw badRequest(`Invalid geometry: ${where}: a position has 2 or 3 numbers`);
  return [x!, y!];
}

/** A GeoJSON geometry (as pyjson or JSON.parse read it) as a shape; 400 for anything else. */
export function shapeFromGeojson(g: unknown, shape: Shape = emptyShape(), depth = 0): Shape {
  const o = g as { type?: unknown; coordinates?: unknown; geometries?: unknown } | null;
  if (typeof o !== 'object' || o === null || typeof o.type !== 'string' || depth > 4) throw badRequest('Invalid geometry: expected a GeoJSON geometry');
  const list = (v: unknown, where: string): unknown[] => {
    if (!Array.isArray(v)) throw badRequest(`Invalid geometry: ${where}: expected a list`);
    return v;
  };
  const ring = (v: unknown, where: string): Ring =>
    list(v, where).map((p, i) => {
      const q = positionOf(p, `${where}[${i}]`);
      grow(shape, q);
      return q;
    });
  const c = o.coordinates;
  switch (o.type) {
    case 'Point': {
      const p = positionOf(c, 'coordinates');
      grow(shape, p);
      shape.points.push(p);
      break;
    }
    case 'MultiPoint':
      shape.points.push(...ring(c, 'coordinates'));
      break;
    case 'LineString':
      shape.lines.push(ring(c, 'coordinates'));
      break;
    case 'MultiLineString':
      for (const [i, l] of list(c, 'coordinates').entries()) shape.lines.push(ring(l, `coordinates[${i}]`));
      break;
    case 'Polygon':
      shape.polygons.push(list(c, 'coordinates').map((r, i) => ring(r, `coordinates[${i}]`)));
      break;
    case 'MultiPolygon':
      for (const [i, p] of list(c, 'coordinates').entries())
        shape.polygons.push(list(p, `coordinates[${i}]`).map((r, j) => ring(r, `coordinates[${i}][${j}]`)));
      break;
    case 'GeometryCollection':
      for (const member of list(o.geometries, 'geometries')) shapeFromGeojson(member, shape, depth + 1);
      break;
    default:
      throw badRequest(`Invalid geometry: unknown GeoJSON type '${o.type}'`);
  }
  return shape;
}

/** The sign of the turn a → b → c. */
function orient(a: Position, b: Position, c: Position): number {
  const v = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  return v > 0 ? 1 : v < 0 ? -1 : 0;
}

function onSegment(a: Position, b: Position, p: Position): boolean {
  return Math.min(a[0], b[0]) <= p[0] && p[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= p[1] && p[1] <= Math.max(a[1], b[1]);
}

function segmentsIntersect(a: Position, b: Position, c: Position, d: Position): boolean {
  const o1 = orient(a, b, c);
  const o2 = orient(a, b, d);
  const o3 = orient(c, d, a);
  const o4 = orient(c, d, b);
  if (o1 !== o2 && o3 !== o4) return true;
  return (o1 === 0 && onSegment(a, b, c)) || (o2 === 0 && onSegment(a, b, d)) || (o3 === 0 && onSegment(c, d, a)) || (o4 === 0 && onSegment(c, d, b));
}

/** Whether p is inside the ring or on it (ray casting; the boundary counts). */
function inRing(ring: Ring, p: Position): 'in' | 'on' | 'out' {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const a = ring[i]!;
    const b = ring[j]!;
    if (orient(a, b, p) === 0 && onSegment(a, b, p)) return 'on';
    if (a[1] > p[1] !== b[1] > p[1] && p[0] < ((b[0] - a[0]) * (p[1] - a[1])) / (b[1] - a[1]) + a[0]) inside = !inside;
  }
  return inside ? 'in' : 'out';
}

function inPolygon(polygon: Ring[], p: Position): boolean {
  const outer = inRing(polygon[0]!, p);
  if (outer === 'out') return false;
  if (outer === 'on') return true;
  for (const hole of polygon.slice(1)) {
    const h = inRing(hole, p);
    if (h === 'in') return false;
  }
  return true;
}

function edgesCross(a: Ring, b: Ring): boolean {
  for (let i = 1; i < a.length; i++) {
    for (let j = 1; j < b.length; j++) if (segmentsIntersect(a[i - 1]!, a[i]!, b[j - 1]!, b[j]!)) return true;
  }
  return false;
}

function pointOnLine(line: Ring, p: Position): boolean {
  for (let i = 1; i < line.length; i++) if (orient(line[i - 1]!, line[i]!, p) === 0 && onSegment(line[i - 1]!, line[i]!, p)) return true;
  return line.length === 1 && line[0]![0] === p[0] && line[0]![1] === p[1];
}

/** `st_intersects`: whether the two shapes share any point, boundaries included. */
export function intersects(a: Shape, b: Shape): boolean {
  if (a.bbox[0] > b.bbox[2] || b.bbox[0] > a.bbox[2] || a.bbox[1] > b.bbox[3] || b.bbox[1] > a.bbox[3]) return false;
  for (const p of a.points) {
    if (b.points.some((q) => q[0] === p[0] && q[1] === p[1])) return true;
    if (b.lines.some((l) => pointOnLine(l, p))) return true;
    if (b.polygons.some((poly) => inPolygon(poly, p))) return true;
  }
  for (const l of a.lines) {
    if (b.points.some((p) => pointOnLine(l, p))) return true;
    if (b.lines.some((m) => edgesCross(l, m))) return true;
    if (b.polygons.some((poly) => poly.some((r) => edgesCross(l, r)) || (l.length > 0 && inPolygon(poly, l[0]!)))) return true;
  }
  for (const poly of a.polygons) {
    if (b.points.some((p) => inPolygon(poly, p))) return true;
    if (b.lines.some((l) => poly.some((r) => edgesCross(l, r)) || (l.length > 0 && inPolygon(poly, l[0]!)))) return true;
    for (const other of b.polygons) {
      if (poly.some((r) => other.some((s) => edgesCross(r, s)))) return true;
      if (other[0]!.length > 0 && inPolygon(poly, other[0]![0]!)) return true;
      if (poly[0]!.length > 0 && inPolygon(other, poly[0]![0]!)) return true;
    }
  }
  return false;
}

/** Whether the shape is one polygon without holes that is its own bounding box. */
export function isBox(s: Shape): boolean {
  if (s.points.length > 0 || s.lines.length > 0 || s.polygons.length !== 1 || s.polygons[0]!.length !== 1) return false;
  const ring = s.polygons[0]![0]!;
  if (ring.length !== 5) return false;
  const [w, south, e, n] = s.bbox;
  return ring.every(([x, y]) => (x === w || x === e) && (y === south || y === n)) && w < e && south < n;
}

/** GEOS's area of a ring (Area::ofRing: the shoelace sum from the first vertex), unsigned. */
function ringArea(ring: readonly Position[]): number {
  if (ring.length < 3) return 0;
  const x0 = ring[0]![0];
  let sum = 0;
  for (let i = 1; i < ring.length - 1; i++) sum += (ring[i]![0] - x0) * (ring[i - 1]![1] - ring[i + 1]![1]);
  return Math.abs(sum / 2);
}

/** `st_area` of a shape: its polygons' areas less their holes'. */
function area(s: Shape): number {
  let total = 0;
  for (const poly of s.polygons) total += ringArea(poly[0]!) - poly.slice(1).reduce((a, r) => a + ringArea(r), 0);
  return total;
}

/** The area of the union of rectangles [w, s, e, n], by a sweep over x with the covered length of y. */
function rectanglesUnionArea(rects: ReadonlyArray<readonly [number, number, number, number]>): number {
  const xs = [...new Set(rects.flatMap((r) => [r[0], r[2]]))].sort((a, b) => a - b);
  let total = 0;
  for (let i = 1; i < xs.length; i++) {
    const x0 = xs[i - 1]!;
    const x1 = xs[i]!;
    const spans = rects.filter((r) => r[0] <= x0 && r[2] >= x1).map((r) => [r[1], r[3]] as const);
    if (spans.length === 0) continue;
    spans.sort((a, b) => a[0] - b[0]);
    let covered = 0;
    let [lo, hi] = spans[0]!;
    for (const [s, n] of spans.slice(1)) {
      if (s > hi) {
        covered += hi - lo;
        [lo, hi] = [s, n];
      } else if (n > hi) hi = n;
    }
    covered += hi - lo;
    total += covered * (x1 - x0);
  }
  return total;
}

function asGeom(s: Shape): Geom {
  return s.polygons.map((poly) => poly.map((r) => r.map(([x, y]) => [x, y] as [number, number])));
}

/** Relative tolerance of "the area did not change" and "the area is covered". */
const AREA_EPSILON = 1e-12;

/**
 * What a run of items covers of an area (pgSTAC's `unionedgeom` in geometrysearch): add an item's
 * shape, learn whether it added any area and whether the area is now covered.
 */
export class Coverage {
  readonly area: number;
  private readonly boxArea: readonly [number, number, number, number] | undefined;
  private readonly rects: Array<readonly [number, number, number, number]> = [];
  private union: Geom | undefined;
  private covered = 0;

  constructor(private readonly region: Shape) {
    this.area = area(region);
    this.boxArea = isBox(region) ? region.bbox : undefined;
  }

  /** Adds an item: whether the covered area grew (pgSTAC's `prev_area <> unionedgeom_area`). */
  add(item: Shape): boolean {
    if (isBox(item)) return this.addBox(item.bbox[0], item.bbox[1], item.bbox[2], item.bbox[3]);
    return this.addShape(item);
  }

  /** Adds an item that is the rectangle [iw, is, ie, inn] (no shape to make): whether the covered area grew. */
  addBox(iw: number, is: number, ie: number, inn: number): boolean {
    if (!this.boxArea || this.union) return this.addShape(boxShape([iw, is, ie, inn]));
    const before = this.covered;
    // Rectangles: what the new one adds is its area less the part the earlier ones cover of it.
    const [w, s, e, n] = this.boxArea;
    const clipped = [Math.max(w, iw), Math.max(s, is), Math.min(e, ie), Math.min(n, inn)] as const;
    if (clipped[0] < clipped[2] && clipped[1] < clipped[3]) {
      // Most items a lookup scans lie under one kept before (the same footprint, another date): nothing to measure.
      for (const r of this.rects) if (r[0] <= clipped[0] && r[1] <= clipped[1] && r[2] >= clipped[2] && r[3] >= clipped[3]) return false;
      const inside: Array<readonly [number, number, number, number]> = [];
      for (const r of this.rects) {
        const c = [Math.max(r[0], clipped[0]), Math.max(r[1], clipped[1]), Math.min(r[2], clipped[2]), Math.min(r[3], clipped[3])] as const;
        if (c[0] < c[2] && c[1] < c[3]) inside.push(c);
      }
      const gain = (clipped[2] - clipped[0]) * (clipped[3] - clipped[1]) - (inside.length > 0 ? rectanglesUnionArea(inside) : 0);
      // A rectangle the others cover changes nothing of their union: not kept, so the next ones compare with fewer.
      if (gain > AREA_EPSILON * this.area) this.rects.push(clipped);
      this.covered += Math.max(0, gain);
    }
    return this.covered - before > AREA_EPSILON * Math.max(this.area, this.covered);
  }

  /** Any other shape, or any shape once one was not a rectangle: polyclip-ts's union. */
  private addShape(item: Shape): boolean {
    const before = this.covered;
    if (!this.union) this.union = this.rects.length > 0 ? union(asGeom(boxShape(this.rects[0]!)), ...this.rects.slice(1).map((r) => asGeom(boxShape(r)))) : [];
    const piece = intersection(asGeom(this.region), asGeom(item));
    this.union = union(this.union, piece);
    this.covered = (this.union as [number, number][][][]).reduce((a, poly) => a + ringArea(poly[0]!) - poly.slice(1).reduce((h, r) => h + ringArea(r), 0), 0);
    return this.covered - before > AREA_EPSILON * Math.max(this.area, this.covered);
  }

  /** Whether the items added cover the area (pgSTAC's `unionedgeom_area >= tilearea`). */
  full(): boolean {
    return this.covered >= this.area * (1 - AREA_EPSILON);
  }
}
