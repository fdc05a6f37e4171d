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
import { LRUCache } from 'lru-cache';
import { TesseraError } from '../errors.js';
import type { Catalogue } from '../pgstac/catalogue.js';
import type { SearchRecord } from '../pgstac/database.js';
import type { SearchBody } from '../pgstac/search-body.js';
import { localValidators, loadLocal, loadSource, type ByteSource, type LoadedCatalog, type LoadLimits } from './geoparquet.js';
import { ItemTable } from './items.js';
import { compileSearch, orderbyText, type CompiledSearch } from './search.js';
import { InMemoryCatalogue, type Searchable } from './in-memory.js';

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

export class GeoparquetCatalogue extends InMemoryCatalogue implements Catalogue {
  private current: LoadedCatalog | undefined;
  private loading: Promise<LoadedCatalog> | undefined;
  private failure: TesseraError | undefined;
  private version = 0;
  private lastCheck = 0;
  private checking = false;
  private readonly compiled = new LRUCache<string, CompiledSearch>({ max: COMPILED_KEPT });

  constructor(private readonly options: GeoparquetCatalogueOptions) {
    super(options);
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
    return this.store.register(body.search, body.metadata, orderbyText(body.search));
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

  async item(collection: string, id: string): Promise<Record<string, unknown> | undefined> {
    const table = (await this.loaded()).table;
    const i = table.find(collection, id);
    return i < 0 ? undefined : table.stacItem(i);
  }

  protected async searchable(record: SearchRecord): Promise<Searchable> {
    const catalog = await this.loaded();
    return { table: catalog.table, compiled: this.compile(record, catalog) };
  }
}
