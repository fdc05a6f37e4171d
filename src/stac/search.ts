/**
 * A STAC API item search (STAC API - Item Search, POST /search), for the COGs of a mosaic: the
 * filters (`collections`, `bbox`, `datetime`, the Query extension's `query`) and a page `limit` go
 * in a JSON body; the pages are followed by their `rel=next` links as the spec says (a link with
 * `method: POST` is sent with its `body`, merged into the previous one when `merge` is true; other
 * links are GETs of their href), up to `maxItems` items. Each item gives one COG: the href of its
 * asset named `asset` (relative hrefs resolved against the item's self link, else the page's URL).
 * Items without that asset are counted and named, not guessed at.
 *
 * The HTTP side is the caller's (`fetch`): the CLI passes tessera's DocumentFetcher, so that every
 * request passes the server's URL and network policies and limits.
 */
import { badRequest } from '../errors.js';

export interface StacSearchQuery {
  collections?: string[] | undefined;
  bbox?: number[] | undefined;
  datetime?: string | undefined;
  /** The Query extension's object, `{"eo:cloud_cover": {"lt": 10}}`. */
  query?: Record<string, unknown> | undefined;
  /** Items asked for per page. */
  limit: number;
  /** Items read at most (the search stops there). */
  maxItems: number;
}

/** GET `url` (no body) or POST `body` to it as JSON; resolves with the parsed answer. */
export type SearchFetch = (url: string, body?: Record<string, unknown>) => Promise<unknown>;

export interface StacAsset {
  item: string;
  href: string;
}

export interface StacSearchResult {
  /** One per item that has the asset, in the order the API answered. */
  assets: StacAsset[];
  /** Items without the asset: their ids, and the asset names they have. */
  missing: Array<{ item: string; has: string[] }>;
  /** Pages read. */
  pages: number;
  /** Items the API says match (`numberMatched`, or the context extension's `matched`), when it says. */
  matched: number | undefined;
  /** True when the search stopped at `maxItems` with more pages left. */
  truncated: boolean;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{api}/search`, or the URL itself when it already names the search endpoint. */
function searchEndpoint(api: string): string {
  const url = new URL(api);
  if (!/\/search\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/$/, '')}/search`;
  return url.href;
}

export async function searchStac(
  api: string,
  query: StacSearchQuery,
  asset: string,
  fetch: SearchFetch,
  onPage?: (read: number, matched: number | undefined) => void,
): Promise<StacSearchResult> {
  let url = searchEndpoint(api);
  let body: Obj | undefined = { limit: query.limit };
  if (query.collections?.length) body['collections'] = query.collections;
  if (query.bbox) body['bbox'] = query.bbox;
  if (query.datetime) body['datetime'] = query.datetime;
  if (query.query) body['query'] = query.query;

  const result: StacSearchResult = { assets: [], missing: [], pages: 0, matched: undefined, truncated: false };
  const seen = new Set<string>();
  let read = 0;
  for (;;) {
    const page = await fetch(url, body);
    result.pages++;
    if (!isObject(page) || !Array.isArray(page['features'])) {
      throw badRequest(`the STAC API's answer to ${body ? 'POST' : 'GET'} ${url} is not an ItemCollection (no 'features' list)`);
    }
    result.matched ??= matchedOf(page);
    for (const item of page['features']) {
      if (read >= query.maxItems) {
        result.truncated = true;
        break;
      }
      read++;
      takeAsset(item, asset, url, result);
    }
    onPage?.(read, result.matched);
    const next = nextLink(page);
    if (!next) break;
    if (read >= query.maxItems) {
      result.truncated = true;
      break;
    }
    const nextUrl = new URL(next.href, url).href;
    const method = typeof next['method'] === 'string' ? next['method'].toUpperCase() : 'GET';
    let nextBody: Obj | undefined;
    if (method === 'POST') {
      const given = isObject(next['body']) ? next['body'] : undefined;
      nextBody = next['merge'] === true ? { ...body, ...given } : (given ?? body);
    }
    // An API that links a page to itself would be read forever.
    const key = `${nextUrl} ${JSON.stringify(nextBody ?? null)}`;
    if (seen.has(key)) throw badRequest(`the STAC API's next link repeats a page already read (${method} ${nextUrl}): the search is stopped`);
    seen.add(key);
    url = nextUrl;
    body = nextBody;
  }
  return result;
}

function matchedOf(page: Obj): number | undefined {
  if (typeof page['numberMatched'] === 'number') return page['numberMatched'];
  const context = page['context'];
  if (isObject(context) && typeof context['matched'] === 'number') return context['matched'];
  return undefined;
}

function nextLink(page: Obj): (Obj & { href: string }) | undefined {
  const links = Array.isArray(page['links']) ? page['links'] : [];
  return links.find((l): l is Obj & { href: string } => isObject(l) && l['rel'] === 'next' && typeof l['href'] === 'string');
}

function takeAsset(item: unknown, asset: string, pageUrl: string, result: StacSearchResult): void {
  if (!isObject(item)) throw badRequest(`the STAC API answered a feature that is not an object: ${JSON.stringify(item).slice(0, 100)}`);
  const id = typeof item['id'] === 'string' ? item['id'] : '(an item without an id)';
  const assets = isObject(item['assets']) ? item['assets'] : {};
  const chosen = assets[asset];
  if (!isObject(chosen) || typeof chosen['href'] !== 'string') {
    result.missing.push({ item: id, has: Object.keys(assets) });
    return;
  }
  const links = Array.isArray(item['links']) ? item['links'] : [];
  const self = links.find((l): l is Obj & { href: string } => isObject(l) && l['rel'] === 'self' && typeof l['href'] === 'string');
  let href = chosen['href'];
  try {
    href = new URL(href, self ? new URL(self.href, pageUrl) : pageUrl).href;
  } catch {
    // Not a URL even relative to the page: kept as given, the policies refuse it by name.
  }
  result.assets.push({ item: id, href });
}
