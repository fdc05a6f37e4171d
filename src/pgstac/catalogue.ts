/**
 * What the /searches and /collections routes need of a catalogue, whichever holds the items: pgSTAC
 * in PostgreSQL (database.ts) or stac-geoparquet in memory (catalog/catalogue.ts). The searches
 * (searches.ts) and the routes see only this; each implementation gives pgSTAC's answers: records
 * named by pgSTAC's hash, item lookups as pgSTAC's FeatureCollection text.
 */
import type { SearchBody } from './search-body.js';
import type { CatalogueStats, SearchArea, SearchLimits, SearchRecord } from './database.js';

export interface Catalogue {
  /** Registers a search (or counts one more use of it): its record. */
  register(body: SearchBody): Promise<SearchRecord>;
  /** A collection's document; undefined when there is none by that id. */
  collection(id: string): Promise<Record<string, unknown> | undefined>;
  /** Registered searches of type `mosaic` whose metadata has each of `filters`, ordered, a page of them and how many match. */
  listSearches(
    filters: ReadonlyArray<readonly [string, string]>,
    order: ReadonlyArray<{ property: string; descending: boolean }>,
    limit: number,
    offset: number,
  ): Promise<{ matched: number; records: SearchRecord[] }>;
  /** A registered search's record (404 when there is none by that hash). */
  search(hash: string): Promise<SearchRecord>;
  /** An item of a collection as a STAC item (undefined when the catalogue has none by those ids). */
  item(collection: string, id: string): Promise<Record<string, unknown> | undefined>;
  /** The items of search `hash` over an area in the search's order, as pgSTAC's FeatureCollection text (`id`, `bbox`, `assets`, `collection`). */
  items(hash: string, area: SearchArea, limits: SearchLimits): Promise<string>;
  stats(): CatalogueStats;
  /**
   * Readies what the first requests would otherwise pay for (a database's connections), before the
   * server listens; best effort, never failing: a catalogue that cannot be reached is found out by
   * the requests.
   */
  warm?(): Promise<void>;
  close(): Promise<void>;
}
