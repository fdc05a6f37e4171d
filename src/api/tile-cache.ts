/**
 * The tile routes' cache (cache/tile-store.ts: in process, and in Redis shared by replicas when
 * TESSERA_CACHE_URL is set). A GET of a tile route is looked up before any work; a hit is answered
 * from the store (`X-Cache: hit`), a miss is rendered as usual and its 200 answer stored
 * (`X-Cache: miss`). A mosaic tile answered in part is not stored; its whole picture is, once made
 * (`keepWhole`), and until then requests for it get the part (`X-Cache: partial`). Mounted after the access-token check, so the cache never answers a request
 * the token would refuse.
 *
 * The key is the request's path and its query pairs, sorted by name (clients order parameters as
 * they like; a repeated one keeps its order), without `access_token`; hashed, since URLs run to
 * 64 KiB. Tiles depend on nothing else.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TileStore } from '../cache/tile-store.js';
import { PARTIAL_HEADER } from '../readers/mosaic.js';
import type { ReaderImage } from '../readers/reader.js';
import type { ImageData } from '../image/image-data.js';

/** Larger answers are not kept (a 4× npy of many bands): they would crowd out thousands of tiles. */
const MAX_TILE_BYTES = 4 * 1024 * 1024;
/** Headers set per answer by other hooks, not replayed from the store. */
const NOT_REPLAYED = new Set(['content-length', 'x-request-id', 'cache-control', 'vary', 'x-cache', 'date', 'connection', 'content-encoding']);

/** The headers of an answer that are replayed with it from the store. */
function replayed(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!NOT_REPLAYED.has(name.toLowerCase()) && value !== undefined) out[name] = String(value);
  }
  return out;
}

export function tileKey(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const pairs = q < 0 ? [] : [...new URLSearchParams(url.slice(q + 1))].filter(([k]) => k !== 'access_token');
  // By name only, a stable sort: repeated parameters keep their order (bidx=2&bidx=1 is not bidx=1&bidx=2).
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([path, pairs]))
    .digest('base64url');
}

/**
 * Tiles answered in part whose whole picture is being made, by key: the part as it was sent, kept
 * until the whole tile is stored. A request for such a tile meanwhile gets the part at once
 * (`X-Cache: partial`) instead of starting the same work again.
 */
const finishing = new WeakMap<TileStore, Map<string, { part?: StoredPart }>>();

interface StoredPart {
  headers: Record<string, string>;
  body: Buffer;
}

function finishingIn(store: TileStore): Map<string, { part?: StoredPart }> {
  let map = finishing.get(store);
  if (!map) {
    map = new Map();
    finishing.set(store, map);
  }
  return map;
}

/**
 * Keeps a tile that was answered in part (a mosaic past its low-zoom deadline) once its whole picture
 * is made: the next request for it is a hit. Failures only mean nothing is kept.
 */
export function keepWhole(
  store: TileStore,
  url: string,
  etag: unknown,
  later: Promise<ReaderImage>,
  render: (img: ImageData) => Promise<{ mediaType: string; body: Buffer }>,
): void {
  if (!store.enabled) return;
  const key = tileKey(url);
  const pending = finishingIn(store);
  const entry = {};
  pending.set(key, entry);
  later
    .then(async (whole) => {
      const rendered = await render(whole.image);
      if (rendered.body.length > MAX_TILE_BYTES) return;
      const headers: Record<string, string> = { 'content-type': rendered.mediaType, ...whole.headers };
      if (typeof etag === 'string') headers['etag'] = etag;
      store.set(key, { headers, body: rendered.body });
    })
    .catch(() => undefined)
    .finally(() => {
      if (pending.get(key) === entry) pending.delete(key);
    });
}

/** `uncached`: requests the cache leaves alone, neither answered from it nor stored (the warm-up's own). */
export function installTileCache(app: FastifyInstance, store: TileStore, uncached: (request: FastifyRequest) => boolean = () => false): void {
  if (!store.enabled) return;
  const misses = new WeakMap<FastifyRequest, string>();

  const pending = finishingIn(store);
  app.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' || request.routeOptions.config.tileCache !== true || uncached(request)) return;
    const key = tileKey(request.url);
    const hit = await store.get(key);
    if (hit) {
      for (const [name, value] of Object.entries(hit.headers)) reply.header(name, value);
      return reply.code(200).header('x-cache', 'hit').send(hit.body);
    }
    const part = pending.get(key)?.part;
    if (part) {
      for (const [name, value] of Object.entries(part.headers)) reply.header(name, value);
      return reply.code(200).header('cache-control', 'no-store').header('x-cache', 'partial').send(part.body);
    }
    misses.set(request, key);
    reply.header('x-cache', 'miss');
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const key = misses.get(request);
    if (key === undefined) return payload;
    misses.delete(request);
    // The part of a tile being finished (keepWhole): kept to answer requests for it meanwhile.
    const finishingEntry = pending.get(key);
    if (finishingEntry && !finishingEntry.part && reply.statusCode === 200 && Buffer.isBuffer(payload) && reply.hasHeader(PARTIAL_HEADER)) {
      finishingEntry.part = { headers: replayed(reply.getHeaders()), body: payload };
    }
    // A partial mosaic tile (readers/mosaic.ts) is not the tile: the next request tries again.
    if (reply.statusCode === 200 && Buffer.isBuffer(payload) && payload.length <= MAX_TILE_BYTES && !reply.hasHeader(PARTIAL_HEADER)) {
      store.set(key, { headers: replayed(reply.getHeaders()), body: payload });
    }
    return payload;
  });
}
