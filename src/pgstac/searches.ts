/**
 * The searches of a pgSTAC catalogue as a running server keeps them (titiler-pgstac 3.2.0's
 * `PGSTACBackend` with its TTL caches): registering one, a search's record (kept a while for the
 * reads that need its bounds and zooms; the `/info` route asks afresh), the asset index of a search
 * with a request's limits, and the item lookups they share.
 */
import { LRUCache } from 'lru-cache';
import { sharedLoad } from '../concurrency.js';
import type { SearchLimits, SearchRecord } from './database.js';
import type { Catalogue } from './catalogue.js';
import { ItemLookups, SearchIndex } from './search-index.js';
import { collectionSearchBody, type CollectionQuery, type SearchBody } from './search-body.js';
import { TesseraError } from '../errors.js';
import { effectivePolicy, type SearchPolicy } from './policy.js';

export interface SearchesOptions {
  /** How long records and item lookups are kept (0: never). */
  cacheTtlMs: number;
  /** Bytes of item lookups kept. */
  cacheBytes: number;
  /** The limits a request does not name (titiler-pgstac's PgstacSettings). */
  defaults: SearchLimits;
  /** The operator's bound on every search's guards (policy.ts). */
  policy: SearchPolicy;
}

export class Searches {
  readonly lookups: ItemLookups;
  private readonly records: LRUCache<string, SearchRecord> | undefined;
  private readonly loading = new Map<string, Promise<SearchRecord>>();
  /** The search of each collection and query, by their JSON. */
  private readonly collectionSearches: LRUCache<string, string> | undefined;
  private readonly registering = new Map<string, Promise<string>>();
  /** Items read by `/collections/{collection_id}/items/{item_id}`, by `[collection, id]`. */
  private readonly items: LRUCache<string, Record<string, unknown>> | undefined;
  private readonly itemsLoading = new Map<string, Promise<Record<string, unknown>>>();

  constructor(
    readonly catalogue: Catalogue,
    readonly options: SearchesOptions,
  ) {
    this.lookups = new ItemLookups(catalogue, { maxBytes: options.cacheBytes, ttlMs: options.cacheTtlMs });
    this.records = options.cacheTtlMs > 0 ? new LRUCache({ max: 1024, ttl: options.cacheTtlMs }) : undefined;
    this.collectionSearches = options.cacheTtlMs > 0 ? new LRUCache({ max: 4096, ttl: options.cacheTtlMs }) : undefined;
    this.items = options.cacheTtlMs > 0 ? new LRUCache({ max: 1024, ttl: options.cacheTtlMs }) : undefined;
  }

  /** An item of a collection (pyLoads' values), kept a while as titiler-pgstac keeps it (404 when the catalogue has none). */
  item(collection: string, id: string): Promise<Record<string, unknown>> {
    const key = JSON.stringify([collection, id]);
    const kept = this.items?.get(key);
    if (kept) return Promise.resolve(kept);
    return sharedLoad(this.itemsLoading, key, async () => {
      const item = await this.catalogue.item(collection, id);
      if (!item) throw new TesseraError('NotFound', `No item '${id}' found in '${collection}' collection`);
      this.items?.set(key, item);
      return item;
    });
  }

  /**
   * The id of the search a collection's routes read (titiler-pgstac's `get_collection_id`): the
   * collection and the query's filters, registered in pgSTAC (so it has a record and a hash as any
   * search); kept a while per collection and query. 404 for an unknown collection.
   */
  collectionSearch(collectionId: string, query: CollectionQuery): Promise<string> {
    const key = JSON.stringify([collectionId, query]);
    const kept = this.collectionSearches?.get(key);
    if (kept) return Promise.resolve(kept);
    return sharedLoad(this.registering, key, async () => {
      const collection = await this.catalogue.collection(collectionId);
      if (!collection) throw new TesseraError('NotFound', `CollectionId \`${collectionId}\` not found`);
      const record = await this.register(collectionSearchBody(collectionId, query, collection));
      this.collectionSearches?.set(key, record.hash);
      return record.hash;
    });
  }

  /** Registers a search with pgSTAC (its hash names it), and keeps its record. */
  async register(body: SearchBody): Promise<SearchRecord> {
    const record = await this.catalogue.register(body);
    this.records?.set(record.hash, record);
    return record;
  }

  /** A page of the registered searches (Catalogue.listSearches). */
  list(...args: Parameters<Catalogue['listSearches']>): ReturnType<Catalogue['listSearches']> {
    return this.catalogue.listSearches(...args);
  }

  /** A search's record, kept a while unless `fresh` (404 for an unknown search). */
  record(hash: string, fresh = false): Promise<SearchRecord> {
    this.catalogue.noteUse?.(hash);
    const kept = fresh ? undefined : this.records?.get(hash);
    if (kept) return Promise.resolve(kept);
    return sharedLoad(this.loading, hash, async () => {
      const record = await this.catalogue.search(hash);
      this.records?.set(hash, record);
      return record;
    });
  }

  /** Drops what is kept of search `hash`: its record and its lookups. */
  forget(hash: string): void {
    this.records?.delete(hash);
    this.lookups.forget(hash);
  }

  /** The asset index of a search with a request's limits (unset ones the defaults). */
  async index(hash: string, limits: Partial<SearchLimits> = {}): Promise<SearchIndex> {
    const record = await this.record(hash);
    return new SearchIndex(record, this.lookups, { ...this.options.defaults, ...limits }, effectivePolicy(record.metadata, this.options.policy));
  }
}
