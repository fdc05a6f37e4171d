/**
 * JSON request bodies (GeoJSON for features and statistics): bounded before any work that recurses.
 * Fastify's own parser (JSON.parse with prototype-poisoning protection) does the parsing; before it,
 * one pass over the text refuses nesting deeper than any GeoJSON needs, because JSON.parse, the
 * validation and the echo of the body all recurse per level (50,000 levels overflowed the stack).
 * The size is Fastify's `bodyLimit` (a 413 `{"detail"}` above it).
 */
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.js';
import { pyLoads } from '../pyjson.js';

/** Largest request body. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Deepest JSON nesting a body may have: a FeatureCollection of MultiPolygons is 7 levels, properties add some. */
const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in `text`, scanning no further than `limit + 1`. */
function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}

export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(['application/json', 'application/geo+json'], { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (jsonDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      done(badRequest(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    parse(request, text, done);
  });
}

/**
 * For the routes of one plugin: JSON bodies read as Python reads them (pyjson's `pyLoads`: floats
 * and ints told apart), where what is stored depends on it (a registered pgSTAC search, whose hash
 * is of its JSON values). The same bounds as every body.
 */
export function installPyJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'application/geo+json']);
  app.addContentTypeParser(['application/json', 'application/geo+json'], { parseAs: 'string', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (jsonDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      done(badRequest(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    try {
      done(null, pyLoads(text));
    } catch (err) {
      done(badRequest(`The body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
}
