/**
 * A registered pgSTAC search as a mosaic's asset index (titiler-pgstac 3.2.0's `PGSTACBackend`):
 * the assets of a tile, a point or a bbox are the STAC items pgSTAC's `geojsonsearch` finds over
 * its area, in the search's order, with the request's `scan_limit`, `items_limit`, `time_limit`,
 * `exitwhenfull` and `skipcovered` (titiler-pgstac's defaults: 10000, 100, 5 s, true, true; a point
 * never exits when full nor skips covered items, pgstac#52). A tile's area is its bounds in
 * longitude/latitude (morecantile's `bounds`: the two corners), as titiler-pgstac asks.
 *
 * Bounds, zooms and center come from the search's record: its `bbox`, else its metadata's `bounds`,
 * else the grid's; `minzoom`/`maxzoom` from its metadata, else the grid's.
 *
 * Lookups are kept (ItemLookups) per search, area and limits while warm — titiler-pgstac's TTL cache
 * of `get_assets` — and a lookup in flight is shared by whoever asks for the same one meanwhile, so
 * a tile's items are asked of the database once however many clients want it. A lookup waits on the
 * database with the request's tile-admission slot given back (concurrency.ts, `aside`).
 */
import { LRUCache } from 'lru-cache';
import type { AssetIndex } from '../mosaic/asset-index.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { checkTile } from '../tms/grid.js';
import { sameCrs, srsFrom, transformBounds, transformPoint, WGS84 } from '../gdal/crs.js';
import { aside, sharedLoad } from '../concurrency.js';
import { pyFloatRepr } from '../pyjson.js';
import type { SearchArea, SearchLimits, SearchRecord } from './database.js';
import type { Catalogue } from './catalogue.js';
import type { SearchPolicy } from './policy.js';

/** An item as an item search returns it (titiler-pgstac's `Item`: id, collection, bbox, assets). */
export interface PgstacItem {
  id: string;
  collection: string;
  bbox: number[];
  assets: Record<string, Record<string, unknown>>;
}

/** The items of one lookup: parsed, and pgSTAC's text (whose number types the asset lists keep). */
export interface ItemLookup {
  items: PgstacItem[];
  text: string;
}

/** Kept lookups: bounded by the bytes of pgSTAC's answers, each for `ttlMs`. */
export class ItemLookups {
  private readonly kept: LRUCache<string, ItemLookup> | undefined;
  private readonly inFlight = new Map<string, Promise<ItemLookup>>();
  private readonly counts = { hits: 0, misses: 0 };

  constructor(
    private readonly catalogue: Catalogue,
    options: { maxBytes: number; ttlMs: number },
  ) {
    this.kept =
      options.maxBytes > 0 && options.ttlMs > 0
        ? new LRUCache({ maxSize: options.maxBytes, ttl: options.ttlMs, sizeCalculation: (lookup) => Math.max(1, lookup.text.length) })
        : undefined;
  }

  /** The items of search `hash` over `area` with `limits`. */
  lookup(hash: string, area: SearchArea, limits: SearchLimits): Promise<ItemLookup> {
    const key = JSON.stringify([hash, area, limits.scanLimit, limits.itemsLimit, limits.timeLimitSeconds, limits.exitWhenFull, limits.skipCovered]);
    const kept = this.kept?.get(key);
    if (kept) {
      this.counts.hits++;
      return Promise.resolve(kept);
    }
    this.counts.misses++;
    return sharedLoad(this.inFlight, key, async () => {
      const lookup = parseLookup(await aside(() => this.catalogue.items(hash, area, limits)));
      this.kept?.set(key, lookup);
      return lookup;
    });
  }

  stats(): { hits: number; misses: number } {
    return { ...this.counts };
  }

  /** Drops what is kept of search `hash` (the warm-up's own search, once it ends). */
  forget(hash: string): void {
    if (!this.kept) return;
    const prefix = JSON.stringify([hash]).slice(0, -1);
    for (const key of [...this.kept.keys()]) if (key.startsWith(prefix)) this.kept.delete(key);
  }
}

function parseLookup(text: string): ItemLookup {
  const doc = JSON.parse(text) as { features?: unknown };
  const features = Array.isArray(doc.features) ? doc.features : [];
  const items = features.filter((f): f is PgstacItem => {
    const item = f as Partial<PgstacItem> | null;
    return typeof item === 'object' && item !== null && typeof item.id === 'string' && typeof item.assets === 'object' && item.assets !== null;
  });
  return { items, text };
}

/** A lookup that found nothing (a tile below a search's policy `minzoom`). */
const NO_ITEMS: ItemLookup = { items: [], text: '{"type":"FeatureCollection","features":[]}' };

/** A polygon over a bbox (geojson_pydantic's `Polygon.from_bounds`), as GeoJSON text whose numbers read back exactly. */
function bboxArea([w, s, e, n]: BBox): SearchArea {
  const p = (x: number, y: number): string => `[${pyFloatRepr(x)},${pyFloatRepr(y)}]`;
  return { geojson: `{"type":"Polygon","coordinates":[[${p(w, s)},${p(e, s)},${p(e, n)},${p(w, n)},${p(w, s)}]]}` };
}

function pointArea(lon: number, lat: number): SearchArea {
  return { geojson: `{"type":"Point","coordinates":[${pyFloatRepr(lon)},${pyFloatRepr(lat)}]}` };
}

/**
 * A tile's bounds in its grid's CRS as morecantile 7 (titiler-pgstac 3.2.0's) computes them, to the
 * last bit: its order of operations, and WebMercatorQuad's cell sizes derived (2π·6378137 / 256 /
 * 2^z) where the OGC document tessera's grids come from rounds them to 15 digits.
 */
function morecantileXyBounds(tms: TileMatrixSet, x: number, y: number, z: number): BBox {
  const m = tms.matrix(z);
  const cellSize = tms.id === 'WebMercatorQuad' ? (2 * Math.PI * 6378137) / 256 / 2 ** z : m.cellSize;
  const [a, b] = m.pointOfOrigin;
  const [ox, oy] = tms.def.invertAxis ? [b, a] : [a, b];
  const cf = m.variableMatrixWidths?.find((v) => y >= v.minTileRow && y <= v.maxTileRow)?.coalesce ?? 1;
  const col = Math.floor(x / cf);
  const left = ox + col * cellSize * cf * m.tileWidth;
  const right = ox + (col + 1) * cellSize * cf * m.tileWidth;
  const top = oy - y * cellSize * m.tileHeight;
  const bottom = oy - (y + 1) * cellSize * m.tileHeight;
  return [left, bottom, right, top];
}

/** Grids whose CRS is longitude/latitude already (no transformation). */
const GEOGRAPHIC = /^(EPSG:4326|OGC:CRS84|http:\/\/www\.opengis\.net\/def\/crs\/OGC\/1\.3\/CRS84)$/;

/** WebMercatorQuad's extent in longitude/latitude: a search's bounds when neither it nor its metadata names any. */
const WORLD: BBox = [-180, -85.0511287798066, 180, 85.0511287798066];

function numbers(v: unknown): number[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out = v.map((x) => (typeof x === 'number' ? x : typeof x === 'object' && x !== null && 'value' in x ? Number((x as { value: unknown }).value) : NaN));
  return out.every(Number.isFinite) ? out : undefined;
}

/** A bbox of 4 or 6 numbers as [w, s, e, n]. */
function bboxOf(v: unknown): BBox | undefined {
  const b = numbers(v);
  if (b?.length === 4) return [b[0]!, b[1]!, b[2]!, b[3]!];
  if (b?.length === 6) return [b[0]!, b[1]!, b[3]!, b[4]!];
  return undefined;
}

function zoomOf(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

/** A registered search and the request's limits, as an asset index. */
export class SearchIndex implements AssetIndex<PgstacItem> {
  readonly bounds: BBox;
  readonly center: readonly [number, number, number];
  /** Items change under the same search: no version (tiles are tagged by nothing but the cache's TTL). */
  readonly version = undefined;
  private readonly minzoom: number | undefined;
  private readonly maxzoom: number | undefined;

  constructor(
    readonly record: SearchRecord,
    private readonly lookups: ItemLookups,
    private readonly limits: SearchLimits,
    readonly policy: SearchPolicy = {},
  ) {
    const search = record.search as Record<string, unknown> | null;
    this.bounds = bboxOf(search?.['bbox']) ?? bboxOf(record.metadata['bounds']) ?? WORLD;
    this.minzoom = zoomOf(record.metadata['minzoom']);
    this.maxzoom = zoomOf(record.metadata['maxzoom']);
    const [w, s, e, n] = this.bounds;
    this.center = [(w + e) / 2, (s + n) / 2, this.minzoom ?? 0];
  }

  get hash(): string {
    return this.record.hash;
  }

  /** The search's zooms; a policy's `minzoom` above them raises them (TileJSON then tells clients not to ask for empty tiles). */
  zooms(tms: TileMatrixSet): { minzoom: number; maxzoom: number } {
    const own = this.minzoom ?? tms.minzoom;
    const minzoom = this.policy.minzoom === undefined ? own : Math.max(own, this.policy.minzoom);
    return { minzoom, maxzoom: this.maxzoom ?? tms.maxzoom };
  }

  assetName(item: PgstacItem): string {
    return `${item.collection}/${item.id}`;
  }

  /**
   * The lookup of a tile: its items, and pgSTAC's text of them. Under the search's policy: below its
   * `minzoom` none (the catalogue not asked; an empty tile is titiler-pgstac's 204), and at most
   * `max_items_per_tile`, the first ones in the search's order (pgSTAC's own `items_limit`, so the
   * lookup stops there and is kept under those limits).
   */
  tileLookup(tms: TileMatrixSet, x: number, y: number, z: number): Promise<ItemLookup> {
    checkTile(tms, x, y, z);
    if (this.policy.minzoom !== undefined && z < this.policy.minzoom) return Promise.resolve(NO_ITEMS);
    const maxItems = this.policy.maxItemsPerTile;
    const limits = maxItems !== undefined && maxItems < this.limits.itemsLimit ? { ...this.limits, itemsLimit: maxItems } : this.limits;
    const [left, bottom, right, top] = morecantileXyBounds(tms, x, y, z);
    // Web Mercator corners go to PostGIS, whose PROJ gives pyproj's doubles (database.ts).
    if (tms.srs === 'EPSG:3857') return this.lookups.lookup(this.hash, { webMercator: [left, bottom, right, top] }, limits);
    if (GEOGRAPHIC.test(tms.srs)) return this.lookups.lookup(this.hash, bboxArea([left, bottom, right, top]), limits);
    // morecantile's `bounds()`: the two corners only, not a densified edge.
    const tmsSrs = srsFrom(tms.srs);
    const wgs = srsFrom(WGS84);
    const [w, n] = transformPoint(tmsSrs, wgs, left, top);
    const [e, s] = transformPoint(tmsSrs, wgs, right, bottom);
    return this.lookups.lookup(this.hash, bboxArea([w, s, e, n]), limits);
  }

  async assetsForTile(tms: TileMatrixSet, x: number, y: number, z: number): Promise<readonly PgstacItem[]> {
    return (await this.tileLookup(tms, x, y, z)).items;
  }

  /** A point's lookup; pgSTAC's point search is exact only without exitwhenfull and skipcovered (titiler-pgstac sets both off). */
  pointLookup(lon: number, lat: number, coordCrs: string): Promise<ItemLookup> {
    let [x, y] = [lon, lat];
    const from = srsFrom(coordCrs);
    const wgs = srsFrom(WGS84);
    if (!sameCrs(from, wgs)) [x, y] = transformPoint(from, wgs, x, y);
    return this.lookups.lookup(this.hash, pointArea(x, y), { ...this.limits, exitWhenFull: false, skipCovered: false });
  }

  async assetsForPoint(lon: number, lat: number, coordCrs: string): Promise<readonly PgstacItem[]> {
    return (await this.pointLookup(lon, lat, coordCrs)).items;
  }

  bboxLookup(bbox: BBox, coordCrs: string): Promise<ItemLookup> {
    const from = srsFrom(coordCrs);
    const wgs = srsFrom(WGS84);
    const b = sameCrs(from, wgs) ? bbox : transformBounds(from, wgs, bbox, 21);
    return this.lookups.lookup(this.hash, bboxArea(b), this.limits);
  }

  async assetsForBbox(bbox: BBox, coordCrs: string): Promise<readonly PgstacItem[]> {
    return (await this.bboxLookup(bbox, coordCrs)).items;
  }
}
