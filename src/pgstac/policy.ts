/**
 * A search's guards (issue 38, Planetary Computer's): a hard `minzoom` below which its tiles are
 * empty without asking the catalogue, and `max_items_per_tile`, the most items one tile reads. A
 * search carries them in its metadata under `tessera:policy` (a key with a colon, which titiler-pgstac's
 * Metadata model never names), a collection in its document under the same key; the settings
 * (TESSERA_SEARCH_MINZOOM, TESSERA_SEARCH_MAX_ITEMS_PER_TILE) are the operator's bound, which a
 * registered search can tighten but never loosen (whoever registers a search is a client).
 */
import { badRequest } from '../errors.js';

/** Where a search's metadata (and a collection's document) carries its policy. */
export const POLICY_KEY = 'tessera:policy';

export interface SearchPolicy {
  /** Tiles of a lower zoom are empty (204), the catalogue not asked. */
  minzoom?: number;
  /** A tile reads the first N items the search finds for it, in its order. */
  maxItemsPerTile?: number;
}

/** Zooms of any grid tessera knows end below this. */
const MAX_ZOOM = 30;

/** A whole number as a JSON document gives it (a plain number, or pyjson's float of one). */
function wholeOf(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'object' && v !== null && 'value' in v ? Number((v as { value: unknown }).value) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * The policy given at registration (or in a collection's document), checked: an object of
 * `minzoom` (0–30) and `max_items_per_tile` (≥ 1), nothing else; a 400 naming what is wrong.
 * Returned as given, so the stored metadata (and pgSTAC's hash of it) is what the client sent.
 */
export function checkPolicy(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badRequest(`Invalid search: ${where}: expected an object`);
  const given = v as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (key !== 'minzoom' && key !== 'max_items_per_tile')
      throw badRequest(`Invalid search: ${where}.${key}: unknown (a policy has minzoom and max_items_per_tile)`);
  }
  const minzoom = given['minzoom'];
  if (minzoom !== undefined && minzoom !== null) {
    const z = wholeOf(minzoom);
    if (z === undefined || z < 0 || z > MAX_ZOOM) throw badRequest(`Invalid search: ${where}.minzoom: expected a whole number from 0 to ${MAX_ZOOM}`);
  }
  const maxItems = given['max_items_per_tile'];
  if (maxItems !== undefined && maxItems !== null) {
    const n = wholeOf(maxItems);
    if (n === undefined || n < 1) throw badRequest(`Invalid search: ${where}.max_items_per_tile: expected a whole number of at least 1`);
  }
  return given;
}

/**
 * The policy a search's tiles follow: the stricter of its metadata's and the settings'. A stored
 * policy that is not valid (a search registered by titiler-pgstac, which does not check it) is
 * ignored for the settings', never an error on every tile.
 */
export function effectivePolicy(metadata: Record<string, unknown>, bound: SearchPolicy): SearchPolicy {
  let own: SearchPolicy = {};
  try {
    const given = metadata[POLICY_KEY] === undefined ? {} : checkPolicy(metadata[POLICY_KEY], POLICY_KEY);
    const minzoom = wholeOf(given['minzoom']);
    const maxItemsPerTile = wholeOf(given['max_items_per_tile']);
    own = { ...(minzoom !== undefined ? { minzoom } : {}), ...(maxItemsPerTile !== undefined ? { maxItemsPerTile } : {}) };
  } catch {
    own = {};
  }
  const stricter = (a: number | undefined, b: number | undefined, pick: (x: number, y: number) => number): number | undefined =>
    a === undefined ? b : b === undefined ? a : pick(a, b);
  const minzoom = stricter(own.minzoom, bound.minzoom, Math.max);
  const maxItemsPerTile = stricter(own.maxItemsPerTile, bound.maxItemsPerTile, Math.min);
  return { ...(minzoom !== undefined ? { minzoom } : {}), ...(maxItemsPerTile !== undefined ? { maxItemsPerTile } : {}) };
}
