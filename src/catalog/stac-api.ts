/**
 * A STAC API as the catalogue (TESSERA_CATALOG=stac-api+https://…): a registered search runs ONCE
 * against the API, when it is registered or first used, paging through its `/search` into the
 * same in-memory table and spatial index a stac-geoparquet catalogue uses (items.ts); every tile,
 * point and bbox lookup after that is a scan in memory (search.ts's `scan`, pgSTAC's
 * geometrysearch limits), never a request to the API per tile.
 *
 * The API decides what a search matches and in which order (its filters, its sortby): the items
 * are held in the order the API gave them, which is each one's rank. The search goes as the API
 * takes it: a POST of the search body (collections, ids, bbox, intersects, datetime, query, filter
 * and filter-lang, sortby), or a GET of the same as query parameters when the landing page offers
 * only GET; with the Fields extension (when the API conforms to it) only what a lookup needs
 * (`id`, `collection`, `bbox`, `geometry`, `assets`) is asked for. Pages are followed by their
 * `rel=next` link as STAC API says (a POST link's `body`, merged into the last when `merge`).
 *
 * Everything is bounded before it is read, and every request goes through tessera's upstream
 * client under the URL and network policies: each page's bytes (TESSERA_MAX_DOCUMENT_BYTES), a
 * search's bytes and time (TESSERA_CATALOG_API_MAX_BYTES, TESSERA_CATALOG_API_TIMEOUT), its items
 * (TESSERA_CATALOG_API_MAX_ITEMS: past it the search is held in part, and answers that read it say
 * so), the items held in memory over all searches (TESSERA_CATALOG_API_HELD_ITEMS: the least
 * recently used are dropped, and read again when used), and the searches read at once (two; the
 * others wait their turn, their time bound starting with it). A next link to another origin, one that
 * repeats a page, pages that bring nothing new, an answer that is not JSON or not an
 * ItemCollection: a 502 naming what is wrong; the API's refusal of a search (400, 422) is a 400
 * with its words. Nothing failed is kept: the next request tries again.
 *
 * Registered searches are kept as with stac-geoparquet (store.ts), under pgSTAC's hash; the
 * collections' documents and single items are asked of the API (`/collections/{id}`,
 * `/collections/{id}/items/{item}`).
 */
import type { IncomingMessage } from 'node:http';
import { LRUCache } from 'lru-cache';
import { AdmissionGate, sharedLoad } from '../concurrency.js';
import { TesseraError } from '../errors.js';
import type { Catalogue } from '../pgstac/catalogue.js';
import type { SearchRecord } from '../pgstac/database.js';
import type { SearchBody } from '../pgstac/search-body.js';
import { PyFloat, pyDumps, pyLoads } from '../pyjson.js';
import { UpstreamRefused, UpstreamTimeout, type UpstreamClient } from '../upstream/client.js';
import type { UrlPolicy } from '../upstream/url-policy.js';
import { isBox, shapeFromGeojson, wkbOfShape, type Shape } from './geometry.js';
import { ItemTable, type ItemRow } from './items.js';
import { jsonbText } from './jsonb.js';
import { orderbyText, type CompiledSearch } from './search.js';
import { InMemoryCatalogue, type Searchable } from './in-memory.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);

const PREFIX = /^stac-api\+(https?:\/\/.*)$/i;

/** The API's root URL when TESSERA_CATALOG names a STAC API (`stac-api+https://…`), else undefined. */
export function stacApiRoot(location: string): string | undefined {
  return PREFIX.exec(location.trim())?.[1];
}

export interface StacApiLimits {
  /** Items one search holds at most (past it: held in part, and said). */
  maxItems: number;
  /** Items asked for per page (the `limit` sent). */
  pageSize: number;
  /** Bytes of one page at most. */
  pageBytes: number;
  /** Bytes of one search's pages together at most. */
  maxBytes: number;
  /** Time one search's pages may take together. */
  timeoutMs: number;
  /** Time one request to the API may take. */
  requestTimeoutMs: number;
  /** Items held in memory over every search (at least maxItems). */
  heldItems: number;
}

export interface StacApiCatalogueOptions {
  /** The API's root (its landing page). */
  root: string;
  client: UpstreamClient;
  policy: UrlPolicy;
  limits: StacApiLimits;
  /** Where registered searches are kept (undefined: in memory only). */
  storeFile: string | undefined;
  maxSearches: number;
}

/** What the landing page says: where to search and how. */
interface Landing {
  searchUrl: string;
  post: boolean;
  fields: boolean;
}

/** A search's items as read from the API, in its order. */
interface HeldSearch {
  table: ItemTable;
  compiled: CompiledSearch;
  /** `<held> of <matched>` when the API had more than was read. */
  truncated: string | undefined;
}

/** What a lookup needs of an item (the Fields extension's `include`). */
const FIELDS = ['id', 'collection', 'bbox', 'geometry', 'assets'];
/** The parts of a registered search an item search takes (STAC API and its extensions). */
const PASSED = ['collections', 'ids', 'bbox', 'intersects', 'datetime', 'query', 'filter', 'filter-lang', 'filter-crs', 'sortby', 'q'];
/** Keys that do not change what a search finds (pgSTAC's `search_hash` leaves them out too). */
const NOT_FINDING = new Set(['token', 'limit', 'context', 'includes', 'excludes', 'fields']);
/**
 * Searches read from the API at once; the others wait their turn, first come first served (a burst
 * of registrations of new searches must not become hundreds of reads of pages held at once).
 */
const READS_AT_ONCE = 2;
/** How much of an API's error answer is quoted. */
const ERROR_TEXT_BYTES = 4096;

const upstream = (message: string, cause?: unknown): TesseraError => new TesseraError('UpstreamError', message, cause === undefined ? undefined : { cause });

/** The search as the API takes it in a POST body. */
function postBody(search: Obj, pageSize: number, fields: boolean): Obj {
  const body: Obj = {};
  for (const k of PASSED) if (search[k] !== undefined) body[k] = search[k];
  // A filter is CQL2-JSON once registered (search-body.ts); without one the language is not sent
  // (stac-fastapi-pgstac refuses the Query extension beside a `filter-lang`).
  if (body['filter'] !== undefined) body['filter-lang'] = 'cql2-json';
  else delete body['filter-lang'];
  body['limit'] = pageSize;
  if (fields) body['fields'] = { include: FIELDS };
  return body;
}

/** The same search as GET /search's query parameters (lists comma-separated, objects as JSON, sortby as `-field`). */
function getQuery(body: Obj): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) {
    if (k === 'sortby' && Array.isArray(v)) {
      q.set(k, v.map((s) => (isObj(s) && /^desc/i.test(String(s['direction'] ?? '')) ? '-' : '') + String(isObj(s) ? s['field'] : s)).join(','));
    } else if (k === 'fields' && isObj(v)) q.set(k, (v['include'] as string[]).join(','));
    else if (Array.isArray(v) && v.every((x) => !isObj(x) && !Array.isArray(x)))
      q.set(k, v.map((x) => (x instanceof PyFloat ? pyDumps(x) : String(x))).join(','));
    else if (typeof v === 'string' || typeof v === 'number') q.set(k, String(v));
    else q.set(k, pyDumps(v));
  }
  return q.toString();
}

function matchedOf(page: Obj): number | undefined {
  if (typeof page['numberMatched'] === 'number') return page['numberMatched'];
  const context = page['context'];
  if (isObj(context) && typeof context['matched'] === 'number') return context['matched'];
  return undefined;
}

function linkOf(doc: Obj, rel: string): Array<Obj & { href: string }> {
  const links = Array.isArray(doc['links']) ? doc['links'] : [];
  return links.filter((l): l is Obj & { href: string } => isObj(l) && l['rel'] === rel && typeof l['href'] === 'string');
}

/** The identity of what a search finds (its body without paging and output keys), to share its items between searches that differ only by metadata. */
function findingKey(search: Obj): string {
  return jsonbText(Object.fromEntries(Object.entries(search).filter(([k]) => !NOT_FINDING.has(k))));
}

export class StacApiCatalogue extends InMemoryCatalogue implements Catalogue {
  private landingPage: Promise<Landing> | undefined;
  private readonly held: LRUCache<string, HeldSearch>;
  private readonly loading = new Map<string, Promise<HeldSearch>>();
  private readonly reads = new AdmissionGate(READS_AT_ONCE);

  constructor(private readonly options: StacApiCatalogueOptions) {
    super(options);
    const { heldItems, maxItems } = options.limits;
    this.held = new LRUCache({ maxSize: Math.max(heldItems, maxItems) + 1, sizeCalculation: (h) => h.table.count + 1 });
  }

  private get root(): string {
    return this.options.root.replace(/\/+$/, '');
  }

  /**
   * GETs `url`, or POSTs `body`, and reads the JSON answer within `maxBytes`: undefined for a 404
   * when `notFound` says it may be; the API's refusal (400, 422) a 400 with its words when
   * `refusalIsClients`; every other failure a 502 (a 504 when too slow).
   */
  private async fetchJson(
    url: string,
    body: Obj | undefined,
    maxBytes: number,
    signal: AbortSignal,
    what: string,
    opts: { notFound?: boolean; refusalIsClients?: boolean } = {},
  ): Promise<{ value: unknown; bytes: number } | undefined> {
    let target: string;
    try {
      const loc = this.options.policy.resolve(url, 'TESSERA_CATALOG');
      if (loc.kind !== 'http') throw new Error('not an http(s) URL');
      target = loc.url;
    } catch (err) {
      throw upstream(`The STAC API's ${what} at '${url}' is refused: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    const limit = AbortSignal.any([signal, AbortSignal.timeout(this.options.limits.requestTimeoutMs)]);
    let res: IncomingMessage;
    try {
      res = await this.options.client.get(target, {
        signal: limit,
        accept: 'application/geo+json, application/json;q=0.9',
        json: body === undefined ? undefined : pyDumps(body),
      });
    } catch (err) {
      throw this.failure(err, url, what, limit);
    }
    const status = res.statusCode ?? 502;
    if (status === 404 && opts.notFound) {
      res.resume();
      return undefined;
    }
    try {
      if (status < 200 || status >= 300) {
        const said = (await readBounded(res, ERROR_TEXT_BYTES, true)).toString('utf8').trim().slice(0, 500);
        const message = `The STAC API answered ${status} to its ${what} (${body === undefined ? 'GET' : 'POST'} ${url})${said ? `: ${said}` : ''}`;
        throw new TesseraError(opts.refusalIsClients && (status === 400 || status === 422) ? 'BadRequest' : 'UpstreamError', message);
      }
      const declared = Number(res.headers['content-length'] ?? Number.NaN);
      if (declared > maxBytes) {
        res.destroy();
        throw upstream(`The STAC API's ${what} at '${url}' is ${declared} bytes, more than the ${maxBytes} it may be`);
      }
      const bytes = await readBounded(res, maxBytes, false).catch((err: unknown) => {
        if (err instanceof RangeError) throw upstream(`The STAC API's ${what} at '${url}' is more than the ${maxBytes} bytes it may be`);
        throw err;
      });
      try {
        return { value: pyLoads(bytes.toString('utf8')), bytes: bytes.length };
      } catch {
        throw upstream(`The STAC API's ${what} at '${url}' is not JSON (${JSON.stringify(bytes.subarray(0, 40).toString('utf8'))}…)`);
      }
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      throw this.failure(err, url, what, limit);
    }
  }

  private failure(err: unknown, url: string, what: string, signal: AbortSignal): TesseraError {
    if (err instanceof TesseraError) return err;
    if (err instanceof UpstreamRefused) return upstream(`The STAC API's ${what} at '${url}' is refused: ${err.message}`, err);
    if (err instanceof UpstreamTimeout || signal.aborted)
      return new TesseraError('Timeout', `The STAC API's ${what} at '${url}' did not arrive in time`, { cause: err });
    return upstream(`The STAC API's ${what} at '${url}' could not be fetched: ${err instanceof Error ? err.message : String(err)}`, err);
  }

  /** The landing page (once; a failure is not kept): where and how to search. */
  private landing(): Promise<Landing> {
    this.landingPage ??= this.readLanding().catch((err: unknown) => {
      this.landingPage = undefined;
      throw err;
    });
    return this.landingPage;
  }

  private async readLanding(): Promise<Landing> {
    const { pageBytes, requestTimeoutMs } = this.options.limits;
    const answer = await this.fetchJson(this.options.root, undefined, pageBytes, AbortSignal.timeout(requestTimeoutMs), 'landing page');
    const doc = answer!.value;
    if (!isObj(doc)) throw upstream(`The catalogue ${this.options.root} is not a STAC API: its landing page is not a JSON object`);
    const conforms = Array.isArray(doc['conformsTo']) ? doc['conformsTo'].map(String) : [];
    const searches = linkOf(doc, 'search');
    if (!conforms.some((c) => /\/item-search(#|$)/.test(c)) && searches.length === 0) {
      throw upstream(
        `The catalogue ${this.options.root} is not a STAC API with item search: its landing page has no item-search conformance class and no search link`,
      );
    }
    const origin = new URL(this.options.root).origin;
    const post = searches.find((l) => String(l['method'] ?? '').toUpperCase() === 'POST');
    const link = post ?? searches[0];
    let searchUrl = `${this.root}/search`;
    if (link) {
      const href = new URL(link.href, this.options.root);
      if (href.origin === origin) searchUrl = href.href;
    }
    return {
      searchUrl,
      // A search link that names no method is GET and POST alike (STAC API's item search); one that names only GET is GET.
      post: post !== undefined || (link !== undefined && link['method'] === undefined),
      fields: conforms.some((c) => /\/item-search#fields$/.test(c)),
    };
  }

  /** A search's items, from memory or read from the API now (shared by whoever asks meanwhile). */
  private heldSearch(search: Obj): Promise<HeldSearch> {
    const key = findingKey(search);
    const kept = this.held.get(key);
    if (kept) return Promise.resolve(kept);
    return sharedLoad(this.loading, key, async () => {
      const loaded = await this.reads.run(() => this.readSearch(search));
      this.held.set(key, loaded);
      return loaded;
    });
  }

  /** Runs the search against the API, page after page, into a table in the API's order. */
  private async readSearch(search: Obj): Promise<HeldSearch> {
    const landing = await this.landing();
    const { maxItems, pageSize, pageBytes, maxBytes, timeoutMs } = this.options.limits;
    const signal = AbortSignal.timeout(timeoutMs);
    const origin = new URL(landing.searchUrl).origin;
    let url = landing.searchUrl;
    let body: Obj | undefined = postBody(search, pageSize, landing.fields);
    if (!landing.post) {
      url = `${url}?${getQuery(body)}`;
      body = undefined;
    }
    const table = new ItemTable();
    const seen = new Set<string>();
    const asked = new Set<string>();
    let bytes = 0;
    let pages = 0;
    let matched: number | undefined;
    let more = false;
    for (;;) {
      if (signal.aborted)
        throw new TesseraError('Timeout', `The STAC API's search did not end within TESSERA_CATALOG_API_TIMEOUT (${timeoutMs} ms, ${pages} pages read)`);
      const left = maxBytes - bytes;
      if (left <= 0) throw upstream(`The STAC API's search came to more than TESSERA_CATALOG_API_MAX_BYTES (${maxBytes} bytes) in ${pages} pages`);
      const answer = await this.fetchJson(url, body, Math.min(pageBytes, left), signal, `search page ${pages + 1}`, { refusalIsClients: pages === 0 }).catch(
        (err: unknown) => {
          if (err instanceof TesseraError && err.kind === 'Timeout' && signal.aborted) {
            throw new TesseraError('Timeout', `The STAC API's search did not end within TESSERA_CATALOG_API_TIMEOUT (${timeoutMs} ms, ${pages} pages read)`);
          }
          throw err;
        },
      );
      const page = answer!.value;
      bytes += answer!.bytes;
      pages++;
      if (!isObj(page) || !Array.isArray(page['features']))
        throw upstream(`The STAC API's search page ${pages} (${url}) is not an ItemCollection: it has no 'features' list`);
      matched ??= matchedOf(page);
      const features = page['features'] as unknown[];
      let fresh = 0;
      for (const [k, feature] of features.entries()) {
        if (table.count >= maxItems) {
          more = true;
          break;
        }
        const row = itemRow(feature, pages, k);
        if (!row) continue;
        const id = `${row.collection}\u0000${row.id}`;
        if (seen.has(id)) continue;
        seen.add(id);
        table.add(row);
        fresh++;
      }
      const next = linkOf(page, 'next')[0];
      if (!next || features.length === 0) break;
      if (table.count >= maxItems) {
        more = true;
        break;
      }
      if (fresh === 0) throw upstream(`The STAC API's search page ${pages} brings no item not read before, yet links a next page: the search is stopped`);
      let nextUrl: URL;
      try {
        nextUrl = new URL(next.href, url);
      } catch {
        throw upstream(`The STAC API's next link '${next.href}' is not a URL`);
      }
      if (nextUrl.origin !== origin)
        throw upstream(`The STAC API's next link leads to another origin (${nextUrl.origin}, not ${origin}): the search is stopped`);
      const method = typeof next['method'] === 'string' ? next['method'].toUpperCase() : 'GET';
      let nextBody: Obj | undefined;
      if (method === 'POST') {
        const given = isObj(next['body']) ? next['body'] : undefined;
        nextBody = next['merge'] === true ? { ...body, ...given } : (given ?? body);
      }
      const key = `${nextUrl.href} ${nextBody === undefined ? '' : pyDumps(nextBody)}`;
      if (asked.has(key)) throw upstream(`The STAC API's next link repeats a page already read (${method} ${nextUrl.href}): the search is stopped`);
      asked.add(key);
      url = nextUrl.href;
      body = nextBody;
    }
    table.finish();
    const order = new Int32Array(table.count).map((_, i) => i);
    const held: HeldSearch = {
      table,
      compiled: { rank: order, order, matched: table.count },
      truncated: more ? `${table.count} of ${matched !== undefined && matched > table.count ? matched : 'more'} items` : undefined,
    };
    console.log(
      JSON.stringify({
        level: more ? 40 : 30,
        time: Date.now(),
        msg: `catalogue ${this.options.root}: a search read in ${pages} pages, ${table.count} items${more ? ` (held in part: ${held.truncated}, TESSERA_CATALOG_API_MAX_ITEMS)` : ''}`,
      }),
    );
    return held;
  }

  async register(body: SearchBody): Promise<SearchRecord> {
    await this.opened;
    // The search runs now: what the API refuses is the client's 400 at registration, not at the first tile.
    const held = await this.heldSearch(body.search);
    if (held.truncated) this.timing.truncated(held.truncated);
    return this.store.register(body.search, body.metadata, orderbyText(body.search));
  }

  async collection(id: string): Promise<Record<string, unknown> | undefined> {
    const { pageBytes, requestTimeoutMs } = this.options.limits;
    const answer = await this.fetchJson(
      `${this.root}/collections/${encodeURIComponent(id)}`,
      undefined,
      pageBytes,
      AbortSignal.timeout(requestTimeoutMs),
      'collection',
      {
        notFound: true,
      },
    );
    if (answer === undefined) return undefined;
    if (!isObj(answer.value) || answer.value['id'] !== id) throw upstream(`The STAC API's collection '${id}' is not a collection document`);
    return answer.value;
  }

  async item(collection: string, id: string): Promise<Record<string, unknown> | undefined> {
    const { pageBytes, requestTimeoutMs } = this.options.limits;
    const answer = await this.fetchJson(
      `${this.root}/collections/${encodeURIComponent(collection)}/items/${encodeURIComponent(id)}`,
      undefined,
      pageBytes,
      AbortSignal.timeout(requestTimeoutMs),
      'item',
      { notFound: true },
    );
    if (answer === undefined) return undefined;
    if (!isObj(answer.value) || answer.value['id'] !== id) throw upstream(`The STAC API's item '${collection}/${id}' is not a STAC item`);
    return answer.value;
  }

  protected async searchable(record: SearchRecord): Promise<Searchable> {
    const held = await this.heldSearch(record.search as Obj);
    if (held.truncated) this.timing.truncated(held.truncated);
    return held;
  }

  noteUse(hash: string): void {
    const record = this.store.get(hash);
    const truncated = record && this.held.peek(findingKey(record.search as Obj))?.truncated;
    if (truncated) this.timing.truncated(truncated);
  }
}

/** An API's feature as a table row (undefined for an item without a geometry: no area ever finds it). */
function itemRow(feature: unknown, page: number, k: number): ItemRow | undefined {
  const where = `search page ${page}, feature ${k}`;
  if (!isObj(feature)) throw upstream(`The STAC API's ${where} is not an object`);
  const { id, collection, geometry } = feature;
  if (typeof id !== 'string' || typeof collection !== 'string') throw upstream(`The STAC API's ${where} has no id or collection`);
  if (geometry === null || geometry === undefined) return undefined;
  let shape: Shape;
  try {
    shape = shapeFromGeojson(geometry);
  } catch (err) {
    throw upstream(`The STAC API's item '${collection}/${id}' has an invalid geometry (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!shape.bbox.every(Number.isFinite)) throw upstream(`The STAC API's item '${collection}/${id}' has an empty geometry`);
  const box = isBox(shape);
  const bbox = Array.isArray(feature['bbox']) ? (feature['bbox'] as number[]) : shape.bbox;
  const properties = isObj(feature['properties']) ? feature['properties'] : {};
  const time = (v: unknown): number => (typeof v === 'string' ? Date.parse(v) : Number.NaN);
  const start = time(properties['start_datetime']);
  const end = time(properties['end_datetime']);
  const at = time(properties['datetime']);
  const ranged = Number.isFinite(start) && Number.isFinite(end);
  return {
    id,
    collection,
    datetime: ranged ? start : at,
    endDatetime: ranged ? end : at,
    wkb: box ? new Uint8Array(0) : wkbOfShape(shape),
    box,
    envelope: shape.bbox,
    bbox,
    assetsJson: jsonbText(isObj(feature['assets']) ? feature['assets'] : {}),
    properties: {},
  };
}

/** The answer's bytes up to `limit`: past it a RangeError (or, with `cut`, the first `limit` bytes). */
async function readBounded(res: IncomingMessage, limit: number, cut: boolean): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      res.destroy();
      if (cut) {
        chunks.push(chunk.subarray(0, chunk.length - (size - limit)));
        return Buffer.concat(chunks);
      }
      throw new RangeError('too large');
    }
    chunks.push(chunk);
  }
  if (!res.complete) throw upstream('the answer arrived incomplete');
  return Buffer.concat(chunks, size);
}
