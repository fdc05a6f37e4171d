/**
 * Which media type an answer takes when the client may ask through `Accept` (TiTiler 2.x's
 * `accept_media_type`, titiler/core/utils.py 2.4.0): the types of the highest quality the header
 * gives, in the order the route prefers them; `*` (alone, not `*\/*`) accepts the route's first.
 * TiTiler's OGC documents (landing page, conformance, tilesets) answer JSON unless `f` or the
 * header asks for HTML.
 */
import type { FastifyRequest } from 'fastify';

/** The first of `offered` (media types) the Accept header `accept` prefers, or undefined. */
export function acceptedMediaType<T extends string>(accept: string, offered: readonly T[]): T | undefined {
  const quality = new Map<string, number>();
  for (const entry of accept.replace(/ /g, '').split(',')) {
    const [name = '', ...params] = entry.split(';');
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=');
      if (key === 'q') q = value ? Number(value) || 0 : 1;
    }
    if (q) quality.set(name, q);
  }
  for (const q of [...new Set(quality.values())].sort((a, b) => b - a)) {
    const names = [...quality].filter(([, v]) => v === q).map(([n]) => n);
    const found = offered.find((t) => names.includes(t));
    if (found !== undefined) return found;
  }
  return quality.has('*') ? offered[0] : undefined;
}

/** An OGC document's form: `f` when given, else HTML when Accept prefers it, else JSON. */
export function documentOutput(request: FastifyRequest, f: 'html' | 'json' | undefined): 'html' | 'json' {
  if (f) return f;
  const chosen = acceptedMediaType(request.headers.accept ?? '', ['text/html', 'application/json'] as const);
  return chosen === 'text/html' ? 'html' : 'json';
}
