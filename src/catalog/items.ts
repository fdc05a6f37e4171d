/**
 * The items of a catalogue in memory, column by column as stac-geoparquet holds them: ids,
 * collections, datetimes, the geometry's WKB in one pool (read again only for the items a lookup
 * keeps), each item's output (`id`, `bbox`, `assets`, `collection`, pgSTAC's `fields` of
 * titiler-pgstac, as the jsonb text pgSTAC answers, written once at load) and each other property as a column of
 * values. A Flatbush over the geometries' bounding boxes finds the candidates of an area.
 *
 * Columns rather than item objects: a million items stay within a few hundred MiB (the benchmark,
 * tools/bench/catalog.ts, measures it).
 */
import Flatbush from 'flatbush';
import { boxShape, shapeFromWkb, type Shape } from './geometry.js';
import { jsonbText } from './jsonb.js';

/** What a loader gives for one item (strings and numbers as the file has them). */
export interface ItemRow {
  id: string;
  collection: string;
  /** Milliseconds since the epoch: pgSTAC's `datetime` (datetime, else start_datetime) and `end_datetime` (datetime, else end_datetime). */
  datetime: number;
  endDatetime: number;
  wkb: Uint8Array;
  /** Whether the geometry is its bounding box (most footprints): its WKB is then not kept. */
  box: boolean;
  /** The geometry's bounding box (w, s, e, n). */
  envelope: readonly [number, number, number, number];
  /** The item's `bbox` as the file writes it. */
  bbox: readonly number[];
  /** The item's assets as JSON text. */
  assetsJson: string;
  /** Every other property, by name (undefined: the item has none). */
  properties: Record<string, unknown>;
}

const GROW = 1.5;
const EMPTY = new Uint8Array(0);

export class ItemTable {
  count = 0;
  readonly ids: string[] = [];
  readonly collections: string[] = [];
  datetime = new Float64Array(1024);
  endDatetime = new Float64Array(1024);
  envelopes = new Float64Array(4096);
  private wkbPool = new Uint8Array(1 << 16);
  private wkbOffsets = new Float64Array(1025);
  /**
   * `{"id": …, "bbox": …, "assets": …, "collection": …}` of each item, as UTF-8 in one pool: a
   * million strings (and the pieces a template string keeps alive) would hold far more.
   */
  private outputPool = new Uint8Array(1 << 16);
  private outputOffsets = new Float64Array(1025);
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();
  /** Each property's values, by name; missing values are undefined. */
  readonly properties = new Map<string, unknown[]>();
  index: Flatbush | undefined;

  add(row: ItemRow): void {
    const i = this.count;
    if (i + 1 >= this.datetime.length) {
      const n = Math.ceil(this.datetime.length * GROW) + 1;
      this.datetime = grown(this.datetime, n);
      this.endDatetime = grown(this.endDatetime, n);
      this.envelopes = grown(this.envelopes, n * 4);
      this.wkbOffsets = grown(this.wkbOffsets, n + 1);
      this.outputOffsets = grown(this.outputOffsets, n + 1);
    }
    this.ids.push(row.id);
    this.collections.push(row.collection);
    this.datetime[i] = row.datetime;
    this.endDatetime[i] = row.endDatetime;
    this.envelopes.set(row.envelope, i * 4);
    const start = this.wkbOffsets[i]!;
    const wkb = row.box ? EMPTY : row.wkb;
    const end = start + wkb.byteLength;
    if (end > this.wkbPool.length) {
      const pool = new Uint8Array(Math.max(end, Math.ceil(this.wkbPool.length * GROW)));
      pool.set(this.wkbPool.subarray(0, start));
      this.wkbPool = pool;
    }
    this.wkbPool.set(wkb, start);
    this.wkbOffsets[i + 1] = end;
    const text = `{"id": ${jsonbText(row.id)}, "bbox": ${jsonbText(row.bbox)}, "assets": ${row.assetsJson}, "collection": ${jsonbText(row.collection)}}`;
    const from = this.outputOffsets[i]!;
    // UTF-8 takes at most 3 bytes per UTF-16 unit: room for that, then written in place.
    if (from + text.length * 3 > this.outputPool.length) {
      const pool = new Uint8Array(Math.max(from + text.length * 3, Math.ceil(this.outputPool.length * GROW)));
      pool.set(this.outputPool.subarray(0, from));
      this.outputPool = pool;
    }
    const { written } = this.encoder.encodeInto(text, this.outputPool.subarray(from));
    this.outputOffsets[i + 1] = from + written;
    for (const [name, value] of Object.entries(row.properties)) {
      let column = this.properties.get(name);
      if (!column) {
        column = [];
        this.properties.set(name, column);
      }
      column[i] = value;
    }
    this.count++;
  }

  /** Builds the spatial index, and trims the columns to their length. */
  finish(): void {
    const n = this.count;
    this.datetime = this.datetime.slice(0, n);
    this.endDatetime = this.endDatetime.slice(0, n);
    this.envelopes = this.envelopes.slice(0, n * 4);
    this.wkbOffsets = this.wkbOffsets.slice(0, n + 1);
    this.wkbPool = this.wkbPool.slice(0, this.wkbOffsets[n] ?? 0);
    this.outputOffsets = this.outputOffsets.slice(0, n + 1);
    this.outputPool = this.outputPool.slice(0, this.outputOffsets[n] ?? 0);
    for (const column of this.properties.values()) column.length = n;
    const index = new Flatbush(Math.max(1, n));
    for (let i = 0; i < n; i++) index.add(this.envelopes[i * 4]!, this.envelopes[i * 4 + 1]!, this.envelopes[i * 4 + 2]!, this.envelopes[i * 4 + 3]!);
    if (n === 0) index.add(0, 0, 0, 0);
    index.finish();
    this.index = index;
  }

  /** Item i as pgSTAC answers it (its `fields`: id, bbox, assets, collection), jsonb text. */
  output(i: number): string {
    return this.decoder.decode(this.outputPool.subarray(this.outputOffsets[i]!, this.outputOffsets[i + 1]!));
  }

  /** The row of the item with this collection and id (-1: none); a scan, for the rare read of one item. */
  find(collection: string, id: string): number {
    for (let i = 0; i < this.count; i++) if (this.ids[i] === id && this.collections[i] === collection) return i;
    return -1;
  }

  /**
   * Item i as a STAC item, from what the table keeps: its output fields, its geometry (a polygon per
   * part; points and lines as the file has them), `datetime` (and the range's ends) and every other
   * property column.
   */
  stacItem(i: number): Record<string, unknown> {
    const fields = JSON.parse(this.output(i)) as Record<string, unknown>;
    const shape = this.shape(i);
    const ring = (r: readonly (readonly [number, number])[]): number[][] => r.map(([x, y]) => [x, y]);
    const parts = [
      ...shape.polygons.map((p) => ({ type: 'Polygon', coordinates: p.map(ring) })),
      ...shape.lines.map((l) => ({ type: 'LineString', coordinates: ring(l) })),
      ...shape.points.map(([x, y]) => ({ type: 'Point', coordinates: [x, y] })),
    ];
    const geometry = parts.length === 1 ? parts[0] : { type: 'GeometryCollection', geometries: parts };
    const properties: Record<string, unknown> = {};
    const iso = (ms: number): string | null => (Number.isFinite(ms) ? new Date(ms).toISOString() : null);
    const [start, end] = [this.datetime[i]!, this.endDatetime[i]!];
    if (start === end) properties['datetime'] = iso(start);
    else Object.assign(properties, { datetime: null, start_datetime: iso(start), end_datetime: iso(end) });
    for (const [name, column] of this.properties) if (column[i] !== undefined) properties[name] = column[i];
    return {
      type: 'Feature',
      stac_version: '1.0.0',
      id: fields['id'],
      collection: fields['collection'],
      geometry,
      bbox: fields['bbox'],
      properties,
      assets: fields['assets'],
      links: [],
    };
  }

  /** Whether item i's geometry is its bounding box (`envelopes` has it; no shape to make). */
  isBoxItem(i: number): boolean {
    return this.wkbOffsets[i] === this.wkbOffsets[i + 1];
  }

  /** The geometry of item i. */
  shape(i: number): Shape {
    const [from, to] = [this.wkbOffsets[i]!, this.wkbOffsets[i + 1]!];
    if (from === to) return boxShape(this.envelopes.subarray(i * 4, i * 4 + 4));
    return shapeFromWkb(this.wkbPool.subarray(from, to));
  }

  /** Items whose bounding box meets [w, s, e, n]. */
  candidates(w: number, s: number, e: number, n: number): number[] {
    if (!this.index || this.count === 0) return [];
    return this.index.search(w, s, e, n);
  }

  /** Bytes the columns hold (the typed arrays; strings and property values are counted by the heap). */
  typedBytes(): number {
    return [this.datetime, this.endDatetime, this.envelopes, this.wkbPool, this.wkbOffsets, this.outputPool, this.outputOffsets].reduce(
      (a, b) => a + b.byteLength,
      0,
    );
  }
}

function grown<T extends Float64Array>(a: T, n: number): T {
  const b = new Float64Array(n) as T;
  b.set(a);
  return b;
}
