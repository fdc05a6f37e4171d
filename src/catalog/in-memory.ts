/**
 * What the catalogues held in memory (a stac-geoparquet file, catalogue.ts; a STAC API's searches,
 * stac-api.ts) share: registered searches kept in a SearchStore (pgSTAC's ids, persisted), and item
 * lookups as pgSTAC answers them — the search compiled over an item table, scanned over the area
 * (search.ts), the scan timed for the request's Server-Timing and /metrics (a search's one-time
 * costs — compiling it over a catalogue version, reading it from an API — are not a lookup's). Each
 * says only where a search's items and its compiled form come from (`searchable`).
 */
import type { CatalogueStats, SearchArea, SearchLimits, SearchRecord } from '../pgstac/database.js';
import { areaShape } from './area.js';
import type { ItemTable } from './items.js';
import { scan, type CompiledSearch } from './search.js';
import { SearchStore } from './store.js';
import { LookupTiming, type TimedCatalogue } from './timing.js';

/** The items a search runs over, and the search compiled over them. */
export interface Searchable {
  table: ItemTable;
  compiled: CompiledSearch;
}

export abstract class InMemoryCatalogue implements TimedCatalogue {
  readonly timing = new LookupTiming();
  protected readonly store: SearchStore;
  /** The store read (its searches known) before any search is answered. */
  protected readonly opened: Promise<void>;
  private readonly counts = { queries: 0, failures: 0, seconds: 0 };

  constructor(store: { storeFile: string | undefined; maxSearches: number }) {
    this.store = new SearchStore(store.storeFile, store.maxSearches);
    this.opened = this.store.open();
  }

  /** The items `record`'s search runs over, and its compiled form. */
  protected abstract searchable(record: SearchRecord): Promise<Searchable>;

  async items(hash: string, area: SearchArea, limits: SearchLimits): Promise<string> {
    this.counts.queries++;
    const started = performance.now();
    try {
      const { table, compiled } = await this.searchable(await this.search(hash));
      const lookupStarted = performance.now();
      const found = scan(compiled, table, areaShape(area), limits);
      this.timing.observe((performance.now() - lookupStarted) / 1000);
      return `{"type": "FeatureCollection", "features": [${found.map((i) => table.output(i)).join(', ')}]}`;
    } catch (err) {
      this.counts.failures++;
      throw err;
    } finally {
      this.counts.seconds += (performance.now() - started) / 1000;
    }
  }

  async listSearches(
    filters: ReadonlyArray<readonly [string, string]>,
    order: ReadonlyArray<{ property: string; descending: boolean }>,
    limit: number,
    offset: number,
  ): Promise<{ matched: number; records: SearchRecord[] }> {
    await this.opened;
    return this.store.list(filters, order, limit, offset);
  }

  async search(hash: string): Promise<SearchRecord> {
    await this.opened;
    return this.store.record(hash);
  }

  stats(): CatalogueStats {
    return { ...this.counts, total: 0, idle: 0, waiting: 0 };
  }

  async close(): Promise<void> {
    await this.store.flush();
  }
}
