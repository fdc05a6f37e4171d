/**
 * A catalogue without a database (TESSERA_CATALOG): stac-geoparquet read into memory
 * (geoparquet.ts), searches registered in a small local store (store.ts) under pgSTAC's hash, and
 * answered with pgSTAC's semantics (search.ts) — the same `Catalogue` the /searches and
 * /collections routes read pgSTAC through.
 *
 * The catalogue is read at start, in the background: the server serves everything else at once,
 * and a catalogue request waits for the read (or gets its error: a damaged or hostile file is a
 * clear 502 naming it, the rest of the server unharmed). Its files' validators (size and
 * modification time, or the URL's ETag and Last-Modified) are looked at again at most every
 * TESSERA_CATALOG_REFRESH seconds; when they change the catalogue is read again beside the one
 * serving, which is swapped for it once read.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { LRUCache } from 'lru-cache';
import { TesseraError } from '../errors.js';
import { srsFrom, transformPoint, WGS84 } from '../gdal/crs.js';
import type { Catalogue } from '../pgstac/catalogue.js';
import type { CatalogueStats, SearchArea, SearchLimits, SearchRecord } from '../pgstac/database.js';
import type { SearchBody } from '../pgstac/search-body.js';
import { jsonbText, searchHash } from './jsonb.js';
import { localValidators, loadLocal, loadSource, type ByteSource, type LoadedCatalog, type LoadLimits } from './geoparquet.js';
import { shapeFromGeojson, type Shape } from './geometry.js';
import { ItemTable } from './items.js';
import { compileSearch, orderbyText, scan, type CompiledSearch } from './search.js';
import { SearchStore } from './store.js';

export interface GeoparquetCatalogueOptions {
  /** A local file or folder, or an http(s) URL of one file. */
  location: string;
  limits: LoadLimits;
  /** Where registered searches are kept (undefined: in memory only). */
  storeFile: string | undefined;
  maxSearches: number;
  /** How often the files' validators are looked at (0: never). */
  refreshMs: number;
  /** Opens a URL for reading by ranges, with its validators (the upstream client, its policies). */
  openUrl?: (url: string) => Promise<{ source: ByteSource; validators: string }>;
}

/** Search compilations kept per catalogue version (each an Int32Array of the items). */
const COMPILED_KEPT = 64;

/** Lookup durations, in seconds, for the histogram of /metrics. */
export const LOOKUP_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1];

/** What the lookups of one request cost (its Server-Timing `catalog` entry). */
export interface RequestTiming {
  seconds: number;
  lookups: number;
}

/** pydantic's datetime text of now (microseconds, Z). */
function now(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** PostgreSQL's `->>` of a JSON value: a string's text, anything else its jsonb text; null for null. */
function textOf(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : jsonbText(v);
}

export class GeoparquetCatalogue implements Catalogue {
  private current: LoadedCatalog | undefined;
  private loading: Promise<LoadedCatalog> | undefined;
  private failure: TesseraError | undefined;
  private version = 0;
  private lastCheck = 0;
  private checking = false;
  private readonly store: SearchStore;
  private readonly compiled = new LRUCache<string, CompiledSearch>({ max: COMPILED_KEPT });
  private readonly counts = { queries: 0, failures: 0, seconds: 0 };
  private readonly timing = new AsyncLocalStorage<RequestTiming>();
  /** Called with each lookup's seconds (the /metrics histogram). */
  onLookup: ((seconds: number) => void) | undefined;
  private readonly opened: Promise<void>;

  constructor(private readonly options: GeoparquetCatalogueOptions) {
    this.store = new SearchStore(options.storeFile, options.maxSearches);
    this.opened = this.store.open();
  }

  /** Starts reading the catalogue (once); resolves when it is read or has failed (never rejects). */
  start(): Promise<void> {
    this.reload();
    return this.loading!.then(
      () => undefined,
      () => undefined,
    );
  }

  private isUrl(): boolean {
    return /^https?:\/\//i.test(this.options.location);
  }

  private async read(): Promise<LoadedCatalog> {
    const { location, limits, openUrl } = this.options;
    if (this.isUrl()) {
      if (!openUrl) throw new TesseraError('Internal', 'no upstream client to read the catalogue URL with');
      const { source, validators } = await openUrl(location);
      return loadSource(source, validators, limits);
    }
    return loadLocal(location, limits);
  }

  private reload(): void {
    if (this.loading) return;
    const started = performance.now();
    this.loading = this.read();
    this.loading.then(
      (loaded) => {
        this.current = loaded;
        this.failure = undefined;
        this.version++;
        this.compiled.clear();
        this.loading = undefined;
        this.lastCheck = Date.now();
        console.log(
          JSON.stringify({
            level: 30,
            time: Date.now(),
            msg: `catalogue ${this.options.location}: ${loaded.table.count} items, ${loaded.collections.size} collection documents, read in ${Math.round(performance.now() - started)} ms`,
          }),
        );
      },
      (err: unknown) => {
        this.failure =
          err instanceof TesseraError
            ? err
            : new TesseraError('UpstreamError', `The catalogue ${this.options.location} cannot be read: ${err instanceof Error ? err.message : String(err)}`, {
                cause: err,
              });
        this.loading = undefined;
        this.lastCheck = Date.now();
        console.warn(JSON.stringify({ level: 40, time: Date.now(), msg: this.failure.message }));
      },
    );
  }

  /** Looks at the files' validators when it is time, reading the catalogue again when they changed. */
  private maybeRefresh(): void {
    const { refreshMs } = this.options;
    if (refreshMs <= 0 || this.checking || this.loading || Date.now() - this.lastCheck < refreshMs) return;
    this.checking = true;
    this.lastCheck = Date.now();
    const validators = this.isUrl() ? this.options.openUrl!(this.options.location).then((o) => o.validators) : localValidators(this.options.location);
    validators
      .then((v) => {
        if (v !== this.current?.validators) this.reload();
      })
      .catch(() => undefined)
      .finally(() => {
        this.checking = false;
      });
  }

  /** The catalogue as read (waiting for the first read); its error when it could not be read. */
  async loaded(): Promise<LoadedCatalog> {
    await this.opened;
    this.maybeRefresh();
    if (this.current) return this.current;
    if (this.loading) {
      try {
        return await this.loading;
      } catch {
        // failure is set by reload's handler
      }
    }
    if (this.failure) throw this.failure;
    if (!this.loading) this.reload();
    return this.loading!;
  }

  private compile(record: SearchRecord, catalog: LoadedCatalog): CompiledSearch {
    const key = `${this.version}:${record.hash}`;
    let compiled = this.compiled.get(key);
    if (!compiled) {
      compiled = compileSearch(record.search as Record<string, unknown>, catalog.table);
      this.compiled.set(key, compiled);
    }
    return compiled;
  }

  async register(body: SearchBody): Promise<SearchRecord> {
    await this.opened;
    // Checked as pgSTAC checks it when it registers (its `_where` and `orderby`): a 400 now, not at the first tile.
    const empty = new ItemTable();
    empty.finish();
    compileSearch(body.search, empty);
    const hash = searchHash(body.search, body.metadata);
    const kept = this.store.get(hash);
    const record: SearchRecord = kept
      ? { ...kept, lastused: now(), usecount: kept.usecount + 1 }
      : { hash, search: body.search, where: null, orderby: orderbyText(body.search), lastused: now(), usecount: 1, metadata: body.metadata };
    this.store.put(record);
    return record;
  }

  async collection(id: string): Promise<Record<string, unknown> | undefined> {
    const catalog = await this.loaded();
    const doc = catalog.collections.get(id);
    if (doc) return doc;
    // No document for it: one made from its items (their extent), as a collection of pgSTAC always has one.
    const t = catalog.table;
    const box = [Infinity, Infinity, -Infinity, -Infinity];
    let found = false;
    for (let i = 0; i < t.count; i++) {
      if (t.collections[i] !== id) continue;
      found = true;
      box[0] = Math.min(box[0]!, t.envelopes[i * 4]!);
      box[1] = Math.min(box[1]!, t.envelopes[i * 4 + 1]!);
      box[2] = Math.max(box[2]!, t.envelopes[i * 4 + 2]!);
      box[3] = Math.max(box[3]!, t.envelopes[i * 4 + 3]!);
    }
    if (!found) return undefined;
    return { type: 'Collection', id, extent: { spatial: { bbox: [box] } } };
  }

  async listSearches(
    filters: ReadonlyArray<readonly [string, string]>,
    order: ReadonlyArray<{ property: string; descending: boolean }>,
    limit: number,
    offset: number,
  ): Promise<{ matched: number; records: SearchRecord[] }> {
    await this.opened;
    const records = this.store.all().filter((r) => textOf(r.metadata['type']) === 'mosaic' && filters.every(([k, v]) => textOf(r.metadata[k]) === v));
    const key = (r: SearchRecord, property: string): string | number | null =>
      property === 'lastused' ? r.lastused : property === 'usecount' ? r.usecount : textOf(r.metadata[property]);
    records.sort((a, b) => {
      for (const { property, descending } of order) {
        const x = key(a, property);
        const y = key(b, property);
        if (x === y) continue;
        if (x === null) return descending ? -1 : 1;
        if (y === null) return descending ? 1 : -1;
        const c = x < y ? -1 : 1;
        return descending ? -c : c;
      }
      return 0;
    });
    return { matched: records.length, records: records.slice(offset, offset + limit) };
  }

  async search(hash: string): Promise<SearchRecord> {
    await this.opened;
    const record = this.store.get(hash);
    if (!record) throw new TesseraError('NotFound', `SearchId \`${hash}\` not found`);
    return record;
  }

  /** The area of a lookup in longitude/latitude: GeoJSON, or a Web Mercator tile's corners turned as PostGIS turns them. */
  private areaShape(area: SearchArea): Shape {
    if ('geojson' in area) return shapeFromGeojson(JSON.parse(area.geojson));
    const [left, bottom, right, top] = area.webMercator;
    const from = srsFrom('EPSG:3857');
    const wgs = srsFrom(WGS84);
    const [w, n] = transformPoint(from, wgs, left, top);
    const [e, s] = transformPoint(from, wgs, right, bottom);
    const ring: Array<[number, number]> = [
      [w, s],
      [e, s],
      [e, n],
      [w, n],
      [w, s],
    ];
    return { points: [], lines: [], polygons: [[ring]], bbox: [w, s, e, n] };
  }

  async item(collection: string, id: string): Promise<Record<string, unknown> | undefined> {
    const table = (await this.loaded()).table;
    const i = table.find(collection, id);
    return i < 0 ? undefined : table.stacItem(i);
  }

  async items(hash: string, area: SearchArea, limits: SearchLimits): Promise<string> {
    this.counts.queries++;
    const started = performance.now();
    try {
      const record = await this.search(hash);
      const catalog = await this.loaded();
      const lookupStarted = performance.now();
      const compiled = this.compile(record, catalog);
      const found = scan(compiled, catalog.table, this.areaShape(area), limits);
      this.observe((performance.now() - lookupStarted) / 1000);
      return `{"type": "FeatureCollection", "features": [${found.map((i) => catalog.table.output(i)).join(', ')}]}`;
    } catch (err) {
      this.counts.failures++;
      throw err;
    } finally {
      this.counts.seconds += (performance.now() - started) / 1000;
    }
  }

  private observe(seconds: number): void {
    this.onLookup?.(seconds);
    const t = this.timing.getStore();
    if (t) {
      t.seconds += seconds;
      t.lookups++;
    }
  }

  /**
   * Starts counting the current request's lookups (entered before its first await, as the upstream
   * budget is): the API layer reads the count for the answer's Server-Timing.
   */
  enterRequest(): RequestTiming {
    const t: RequestTiming = { seconds: 0, lookups: 0 };
    this.timing.enterWith(t);
    return t;
  }

  stats(): CatalogueStats {
    return { ...this.counts, total: 0, idle: 0, waiting: 0 };
  }

  async close(): Promise<void> {
    await this.store.flush();
  }
}
