/** Absolute URLs of this server as the client reached it, and TiTiler's query forwarding. */
import type { FastifyRequest } from 'fastify';

/**
 * `scheme://host[:port]` from the request (X-Forwarded-* only when trustProxy is configured), then
 * the server's root path (TiTiler's root_path: the prefix a proxy serves tessera under).
 */
export function baseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}${request.server.rootPath}`;
}

/** The request's own absolute URL (path and raw query). */
export function requestUrl(request: FastifyRequest): string {
  return `${baseUrl(request)}${request.raw.url ?? request.url}`;
}

/** Query pairs in their original order, decoded as Starlette does (`+` is a space). */
export function queryPairs(request: FastifyRequest): Array<[string, string]> {
  const raw = request.raw.url ?? '';
  const q = raw.indexOf('?');
  return q < 0 ? [] : [...new URLSearchParams(raw.slice(q + 1))];
}

/** Python's urllib.parse.quote_plus: unreserved characters kept, space as '+', all else %XX. */
export function quotePlus(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9_.~-]/.test(c)) out += c;
    else if (byte === 0x20) out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Python's urlencode of a list of pairs. */
export function urlencode(pairs: ReadonlyArray<readonly [string, string]>): string {
  return pairs.map(([k, v]) => `${quotePlus(k)}=${quotePlus(v)}`).join('&');
}

/** Incoming query pairs minus the keys (compared lower-case) a document's tile URL must not carry. */
export function forwardedQuery(request: FastifyRequest, removed: readonly string[]): string {
  const drop = new Set(removed);
  const kept = queryPairs(request).filter(([k]) => !drop.has(k.toLowerCase()));
  return kept.length > 0 ? `?${urlencode(kept)}` : '';
}
