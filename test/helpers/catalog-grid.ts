/**
 * The lookups two tesseras over the same generated catalogue (test/helpers/pgstac.ts) are compared
 * on: the searches (every part of pgSTAC's semantics tessera reads), collection queries, pgSTAC's
 * limits as a request names them, and a seeded grid of tiles (zoom 4 to 12), points and bboxes;
 * and how two answers are compared (test/catalog-pgstac.test.ts: pgSTAC and stac-geoparquet;
 * test/catalog-stacapi.test.ts: pgSTAC and a STAC API read into memory).
 */
import type { CatalogueItem } from './pgstac.js';
import type { RunningTessera } from './tessera.js';

/** The searches both catalogues answer: every part of pgSTAC's semantics tessera reads. */
export const SEARCHES: Array<{ name: string; body: Record<string, unknown> }> = [
  { name: 'alpha, the default order', body: { collections: ['alpha'] } },
  { name: 'both collections in a bbox', body: { collections: ['alpha', 'beta'], bbox: [5, 43, 11, 47] } },
  {
    name: 'CQL2 and, <, = on a column',
    body: {
      filter: {
        op: 'and',
        args: [
          { op: '<', args: [{ property: 'eo:cloud_cover' }, 40] },
          { op: '=', args: [{ property: 'collection' }, 'beta'] },
        ],
      },
    },
  },
  {
    name: 'a datetime range, sorted by a property (as text, pgSTAC)',
    body: { collections: ['alpha'], datetime: '2023-03-01T00:00:00Z/2023-08-31T23:59:59Z', sortby: [{ field: 'eo:cloud_cover', direction: 'asc' }] },
  },
  { name: 'the Query extension, oldest first', body: { query: { 'eo:cloud_cover': { gte: 20, lte: 70 } }, sortby: [{ field: 'datetime', direction: 'asc' }] } },
  {
    name: 'or of like and in',
    body: {
      filter: {
        op: 'or',
        args: [
          { op: 'like', args: [{ property: 'id' }, 'alpha-1%'] },
          { op: 'in', args: [{ property: 'platform' }, ['sat-b']] },
        ],
      },
    },
  },
  {
    name: 'not between, intersecting a triangle',
    body: {
      filter: { op: 'not', args: [{ op: 'between', args: [{ property: 'eo:cloud_cover' }, 10, 60] }] },
      intersects: {
        type: 'Polygon',
        coordinates: [
          [
            [5, 43],
            [12, 44],
            [7, 48.5],
            [5, 43],
          ],
        ],
      },
    },
  },
  {
    name: 't_intersects an interval',
    body: { filter: { op: 't_intersects', args: [{ property: 'datetime' }, { interval: ['2023-02-01T00:00:00Z', '2023-05-01T00:00:00Z'] }] } },
  },
  {
    name: 's_intersects a bbox, a date',
    body: { filter: { op: 's_intersects', args: [{ property: 'geometry' }, [6.2, 44.1, 9.7, 46.3]] }, datetime: '2023-04-15' },
  },
  {
    name: 'isNull, beta, sorted by id',
    body: { filter: { op: 'isNull', args: [{ property: 'nothing' }] }, collections: ['beta'], sortby: [{ field: 'id', direction: 'asc' }] },
  },
];

/** Collection queries (titiler-pgstac registers a search for each). */
const COLLECTION_QUERIES = [
  'alpha?sortby=-eo:cloud_cover',
  'beta?datetime=2023-02-01T00:00:00Z/2023-07-01T00:00:00Z',
  'alpha?ids=alpha-3-1,alpha-3-2,alpha-4-5,alpha-12-7',
];

/** pgSTAC's limits, as a request names them. */
const LIMITS = ['', 'exitwhenfull=false&skipcovered=false', 'items_limit=3&skipcovered=false', 'scan_limit=7&exitwhenfull=false&skipcovered=false'];

/** A seeded generator (mulberry32). */
export function random(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function tileOf(lon: number, lat: number, z: number): [number, number] {
  const n = 2 ** z;
  const x = Math.floor(((lon + 180) / 360) * n);
  const r = (lat * Math.PI) / 180;
  const y = Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n);
  return [x, y];
}

/** The lookups of the grid: tile, point and bbox asset routes under a search's path. */
function grid(): string[] {
  const next = random(41);
  const paths: string[] = [];
  for (let z = 4; z <= 12; z++) {
    for (let k = 0; k < 4; k++) {
      const [x, y] = tileOf(3.5 + next() * 11, 41.5 + next() * 8.5, z);
      paths.push(`/tiles/WebMercatorQuad/${z}/${x}/${y}/assets`);
    }
  }
  for (let k = 0; k < 4; k++) {
    const [x, y] = tileOf(4 + next() * 10, 42 + next() * 7, 7);
    paths.push(`/tiles/WorldCRS84Quad/7/${x}/${Math.floor(y / 2)}/assets`);
  }
  for (let k = 0; k < 12; k++) paths.push(`/point/${(4 + next() * 10).toFixed(4)},${(42 + next() * 7.5).toFixed(4)}/assets`);
  for (let k = 0; k < 8; k++) {
    const w = 4 + next() * 9;
    const s = 42 + next() * 6;
    paths.push(`/bbox/${w.toFixed(3)},${s.toFixed(3)},${(w + 0.2 + next() * 2).toFixed(3)},${(s + 0.2 + next() * 1.5).toFixed(3)}/assets`);
  }
  return paths;
}

export type Rect = readonly [number, number, number, number];

/** The lon/lat rectangle a lookup path asks about (undefined for a point: pgSTAC never skips there). */
function areaOf(p: string): Rect | undefined {
  let m = /\/tiles\/WebMercatorQuad\/(\d+)\/(\d+)\/(\d+)\//.exec(p);
  if (m) {
    const [z, x, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const n = 2 ** z;
    const lat = (t: number): number => (Math.atan(Math.sinh(Math.PI * (1 - (2 * t) / n))) * 180) / Math.PI;
    return [(x / n) * 360 - 180, lat(y + 1), ((x + 1) / n) * 360 - 180, lat(y)];
  }
  m = /\/tiles\/WorldCRS84Quad\/(\d+)\/(\d+)\/(\d+)\//.exec(p);
  if (m) {
    const size = 180 / 2 ** Number(m[1]);
    const [x, y] = [Number(m[2]), Number(m[3])];
    return [-180 + x * size, 90 - (y + 1) * size, -180 + (x + 1) * size, 90 - y * size];
  }
  m = /\/bbox\/([^/]+)\/assets/.exec(p);
  if (m) return m[1]!.split(',').map(Number) as unknown as Rect;
  return undefined;
}

/**
 * Whether pgSTAC's list is tessera's plus items that add no area to the ones before them: pgSTAC
 * compares GEOS's areas exactly (skipcovered, exitwhenfull), and a union one unit off in the last
 * place keeps an item that covers nothing new; tessera measures within 1e-12 (geometry.ts). Every
 * footprint here is a rectangle: an extra item's part of the area is sampled on a grid of points,
 * each of which an earlier item must cover.
 */
function onlyNoise(pg: string[], ours: string[], area: Rect | undefined, footprints: Map<string, Rect>): boolean {
  if (!area) return false;
  let k = 0;
  for (const id of pg) if (k < ours.length && id === ours[k]) k++;
  if (k !== ours.length) return false;
  const kept = new Set(ours);
  for (const [at, id] of pg.entries()) {
    if (kept.has(id)) continue;
    const f = footprints.get(id)!;
    const [w, s, e, n] = [Math.max(f[0], area[0]), Math.max(f[1], area[1]), Math.min(f[2], area[2]), Math.min(f[3], area[3])];
    if (w >= e || s >= n) continue;
    const before = pg.slice(0, at).map((b) => footprints.get(b)!);
    for (let i = 0; i <= 8; i++) {
      for (let j = 0; j <= 8; j++) {
        const x = w + ((e - w) * (i + 0.5)) / 9.5;
        const y = s + ((n - s) * (j + 0.5)) / 9.5;
        if (!before.some((r) => x >= r[0] && x <= r[2] && y >= r[1] && y <= r[3])) return false;
      }
    }
  }
  return true;
}

export interface Found {
  id: string;
  collection: string;
  assets: Record<string, { href?: string }>;
}

/** What a lookup found, as compared: collection/id in order, and each item's asset names and hrefs. */
function summary(items: Found[]): string {
  return JSON.stringify(items.map((i) => [`${i.collection}/${i.id}`, Object.entries(i.assets).map(([k, a]) => [k, a.href])]));
}

/** How the lookups of two tesseras compared. */
export interface Comparison {
  lookups: number;
  /** Equal: the same items, in the same order, with the same assets. */
  same: number;
  /** Equal once the reference was asked again (pgSTAC's answer out of its order now and then). */
  again: number;
  /** Equal but for items the reference keeps that cover nothing new (GEOS's rounding). */
  noise: number;
  /** The ones that differ, each described. */
  differ: string[];
  /** Items the reference found, all lookups together. */
  items: number;
}

/**
 * Asks `reference` (pgSTAC) and `other` each lookup of `cases` (path, query) and compares their
 * answers: the same status, and the same items in the same order with the same assets, or one of
 * the known differences (Comparison).
 */
export async function compareLookups(
  reference: RunningTessera,
  other: RunningTessera,
  cases: ReadonlyArray<readonly [string, string]>,
  items: readonly CatalogueItem[],
  label: string,
): Promise<Comparison> {
  const out: Comparison = { lookups: cases.length, same: 0, again: 0, noise: 0, differ: [], items: 0 };
  /**
   * pgSTAC answers a lookup through `jsonb_agg` over a temporary table without ORDER BY: asked
   * through the pool, an answer now and then has an item out of the search's order (the same
   * lookup in psql has it in order). Asked again, such an answer comes back in order.
   */
  const askedAgainEqual = async (url: string, ours: string): Promise<boolean> => {
    for (let k = 0; k < 3; k++) if (summary((await (await reference.get(url)).json()) as Found[]) === ours) return true;
    return false;
  };
  const footprints = new Map(items.map((i) => [`${i.collection}/${i.id}`, i.bbox as Rect]));
  for (const [p, query] of cases) {
    const url = `${p}${query ? `?${query}` : ''}`;
    const [a, b] = await Promise.all([reference.get(url), other.get(url)]);
    const [ta, tb] = [await a.text(), await b.text()];
    if (b.status !== a.status) throw new Error(`${url}: ${label} answered ${b.status} (${tb}), pgSTAC ${a.status} (${ta})`);
    if (a.status !== 200) continue;
    const [fa, fb] = [JSON.parse(ta) as Found[], JSON.parse(tb) as Found[]];
    out.items += fa.length;
    if (summary(fa) === summary(fb)) out.same++;
    else if (await askedAgainEqual(url, summary(fb))) out.again++;
    else if (
      !/skipcovered=false/.test(query) &&
      onlyNoise(
        fa.map((i) => `${i.collection}/${i.id}`),
        fb.map((i) => `${i.collection}/${i.id}`),
        areaOf(p),
        footprints,
      )
    ) {
      out.noise++;
    } else {
      const idsOf = (f: Found[]): string => f.map((i) => i.id).join(' ');
      out.differ.push(
        `${url}\n  pgSTAC: ${idsOf(fa)}\n  ${label}: ${idsOf(fb)}${idsOf(fa) === idsOf(fb) ? `\n  ${ta.slice(0, 300)}\n  ${tb.slice(0, 300)}` : ''}`,
      );
    }
  }
  return out;
}

/** The lookup cases of the grid: every search's grid with each of LIMITS, and each collection query's first 40. */
export function lookupCases(ids: ReadonlyMap<string, string>): Array<[string, string]> {
  const cases: Array<[string, string]> = [];
  for (const name of ids.keys()) for (const p of grid()) for (const limits of LIMITS) cases.push([`/searches/${ids.get(name)}${p}`, limits]);
  for (const q of COLLECTION_QUERIES) {
    const [collection, query] = q.split('?');
    for (const p of grid().slice(0, 40)) cases.push([`/collections/${collection}${p}`, query!]);
  }
  return cases;
}
