/**
 * A search that exists only while the process warms up (warm-up.ts), so that the tile route of
 * searches can be asked before the server listens without writing a search into the catalogue or
 * reading anybody's files: the catalogue a server's searches read is wrapped in this one, which
 * answers the warm-up's search itself (a record, and the same items for any area) and passes every
 * other call through unchanged. Its id is random and forgotten when the warm-up ends; from then on
 * the wrapper only passes calls through.
 */
import { randomBytes } from 'node:crypto';
import type { Catalogue } from './catalogue.js';
import type { CatalogueStats, SearchArea, SearchLimits, SearchRecord } from './database.js';
import type { SearchBody } from './search-body.js';

interface WarmSearch {
  record: SearchRecord;
  /** pgSTAC's FeatureCollection text, the answer to every item search of the search. */
  items: string;
}

export class WarmUpCatalogue implements Catalogue {
  private current: WarmSearch | undefined;

  constructor(readonly inner: Catalogue) {}

  /**
   * Makes a search of `items` (STAC items with `id`, `collection`, `bbox` and `assets`) until the
   * function returned is called: its id, and that function.
   */
  begin(items: ReadonlyArray<Record<string, unknown>>): { hash: string; end: () => void } {
    const hash = randomBytes(16).toString('hex');
    const record: SearchRecord = {
      hash,
      search: { collections: [...new Set(items.map((i) => i['collection']))] },
      where: null,
      orderby: null,
      lastused: new Date().toISOString(),
      usecount: 1,
      metadata: { type: 'mosaic', name: 'tessera warm-up' },
    };
    const warm: WarmSearch = { record, items: JSON.stringify({ type: 'FeatureCollection', features: items }) };
    this.current = warm;
    return {
      hash,
      end: () => {
        if (this.current === warm) this.current = undefined;
      },
    };
  }

  private own(hash: string): WarmSearch | undefined {
    return this.current !== undefined && this.current.record.hash === hash ? this.current : undefined;
  }

  register(body: SearchBody): Promise<SearchRecord> {
    return this.inner.register(body);
  }

  collection(id: string): Promise<Record<string, unknown> | undefined> {
    return this.inner.collection(id);
  }

  listSearches(...args: Parameters<Catalogue['listSearches']>): ReturnType<Catalogue['listSearches']> {
    return this.inner.listSearches(...args);
  }

  search(hash: string): Promise<SearchRecord> {
    const warm = this.own(hash);
    return warm ? Promise.resolve(warm.record) : this.inner.search(hash);
  }

  item(collection: string, id: string): Promise<Record<string, unknown> | undefined> {
    return this.inner.item(collection, id);
  }

  items(hash: string, area: SearchArea, limits: SearchLimits): Promise<string> {
    const warm = this.own(hash);
    return warm ? Promise.resolve(warm.items) : this.inner.items(hash, area, limits);
  }

  noteUse(hash: string): void {
    if (!this.own(hash)) this.inner.noteUse?.(hash);
  }

  stats(): CatalogueStats {
    return this.inner.stats();
  }

  warm(): Promise<void> {
    return this.inner.warm?.() ?? Promise.resolve();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
