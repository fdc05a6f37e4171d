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
 * each of which an earlier item must cover. When pgSTAC stopped at `itemsLimit` items, its extra
 * items took places tessera's list fills with items further on, which pgSTAC never reached: those
 * may follow (none of them in pgSTAC's list).
 */
function onlyNoise(pg: string[], ours: string[], area: Rect | undefined, footprints: Map<string, Rect>, itemsLimit: number): boolean {
  if (!area) return false;
  let k = 0;
  for (const id of pg) if (k < ours.length && id === ours[k]) k++;
  const listed = new Set(pg);
  if (k !== ours.length && !(pg.length === itemsLimit && ours.slice(k).every((id) => !listed.has(id)))) return false;
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

/** titiler-pgstac's default `items_limit` (a lookup's items at most). */
const DEFAULT_ITEMS_LIMIT = 100;

export interface Found {
  id: string;
  collection: string;
  assets: Record<string, { href?: string }>;
}

/** What a lookup found, as compared: collection/id in order, and each item's asset names and hrefs. */
function summary(items: Found[]): string {
  return JSON.stringify(items.map((i) => [`${i.collection}/${i.id}`, Object.entries(i.assets).map(([k, a]) => [k, a.href])]));
}

const PAGE_BYTES = 8192;
const PAGE_HEADER_BYTES = 24;
const LINE_POINTER_BYTES = 4;
/** A heap tuple's header with one column and no NULL bitmap (23 bytes, aligned to 8). */
const TUPLE_HEADER_BYTES = 24;
/** The free space map's unit (BLCKSZ / 256). */
const FSM_STEP = 32;
/** Past this a row may be compressed or moved out of line (TOAST): its stored size is not known here. */
const TOAST_BYTES = 2000;

/**
 * The order pgSTAC 0.10's geometrysearch answers rows it found in `order`: it INSERTs each into a
 * fresh temporary table (`pgstac_results`) and answers `jsonb_agg(content)` over that table with
 * no ORDER BY, i.e. in the heap's physical order. PostgreSQL 15's heap puts a row in the page it
 * used last while the row fits there; when it does not, that page's free space goes into the free
 * space map (in steps of 32 bytes) and the row goes to the first page after the map's next slot
 * that has room for it (rounded up to a step), else to a new page. So a row smaller than the one
 * that made a page be left can go back to that page, before rows found before it: the answer is
 * then out of the search's order. `sizes` are the rows' bytes (`pg_column_size` of each item's
 * content with titiler-pgstac's fields); undefined when a row's stored size is not known.
 */
export function heapOrder(order: readonly string[], sizes: ReadonlyMap<string, number>): string[] | undefined {
  const pages: Array<{ free: number; rows: string[] }> = [];
  const fsm: number[] = [];
  let nextSlot = 0;
  let target = -1;
  const heapFree = (i: number): number => Math.max(0, pages[i]!.free - LINE_POINTER_BYTES);
  for (const key of order) {
    const size = sizes.get(key);
    if (size === undefined || size > TOAST_BYTES) return undefined;
    // A value of at most 126 bytes is stored with a 1-byte header instead of 4.
    const stored = size - 4 <= 126 ? size - 3 : size;
    const len = Math.ceil((TUPLE_HEADER_BYTES + stored) / 8) * 8;
    let placed = target >= 0 && heapFree(target) >= len ? target : -1;
    while (placed < 0 && target >= 0) {
      fsm[target] = Math.min(254, Math.floor(heapFree(target) / FSM_STEP));
      const need = Math.ceil(len / FSM_STEP);
      const slots = [...pages.keys()].map((k) => (k + nextSlot) % pages.length);
      const found = slots.find((k) => (fsm[k] ?? 0) >= need);
      if (found === undefined) break;
      nextSlot = found + 1;
      target = found;
      if (heapFree(found) >= len) placed = found;
    }
    if (placed < 0) {
      pages.push({ free: PAGE_BYTES - PAGE_HEADER_BYTES, rows: [] });
      placed = pages.length - 1;
    }
    target = placed;
    pages[placed]!.free -= len + LINE_POINTER_BYTES;
    pages[placed]!.rows.push(key);
  }
  return pages.flatMap((p) => p.rows);
}

/** Each item's bytes as geometrysearch stores it (`collection/id` → pg_column_size), read with psql. */
export async function pgstacRowSizes(psql: (sql: string) => Promise<string>): Promise<Map<string, number>> {
  const text = await psql(
    `SET search_path = pgstac, public; SELECT collection || '/' || id || ' ' || pg_column_size(content_hydrate(i, '{"include": ["assets", "id", "bbox", "collection"]}'::jsonb)) FROM items i`,
  );
  return new Map(
    text
      .split('\n')
      .filter((l) => l.includes(' '))
      .map((l) => {
        const [key, size] = l.split(' ');
        return [key!, Number(size)];
      }),
  );
}

/** How the lookups of two tesseras compared. */
export interface Comparison {
  lookups: number;
  /** Equal: the same items, in the same order, with the same assets. */
  same: number;
  /** The same items and assets, pgSTAC's in the order its temporary table holds them (heapOrder). */
  heap: number;
  /** Equal but for items pgSTAC keeps that cover nothing new (GEOS's rounding), in its table's order or not. */
  noise: number;
  /** The ones that differ otherwise, each described. */
  differ: string[];
  /** Items the reference found, all lookups together. */
  items: number;
}

/** What pgSTAC is asked to explain an answer: psql on its database, and each item's stored bytes. */
export interface PgstacProbe {
  psql(sql: string): Promise<string>;
  sizes: ReadonlyMap<string, number>;
}

/**
 * Asks `reference` (tessera over pgSTAC) and `other` each lookup of `cases` (path, query) and
 * compares their answers: the same status, and the same items in the same order with the same
 * assets. Where they differ, pgSTAC is asked to explain its answer: its items in the order its loop
 * found them (the search's own ORDER BY, its record's `orderby`, over those items, in psql), which
 * heapOrder must turn into the order pgSTAC answered; that order must then be `other`'s, or
 * `other`'s with items that cover nothing new (onlyNoise). Anything else differs.
 */
export async function compareLookups(
  reference: RunningTessera,
  other: RunningTessera,
  cases: ReadonlyArray<readonly [string, string]>,
  items: readonly CatalogueItem[],
  pgstac: PgstacProbe,
  label: string,
): Promise<Comparison> {
  const out: Comparison = { lookups: cases.length, same: 0, heap: 0, noise: 0, differ: [], items: 0 };
  const footprints = new Map(items.map((i) => [`${i.collection}/${i.id}`, i.bbox as Rect]));
  const orderbys = new Map<string, string>();
  /** The search's ORDER BY (its pgSTAC record's), for a lookup's path and query. */
  const orderbyOf = async (p: string, query: string): Promise<string> => {
    const [, kind, name] = p.split('/');
    const info = kind === 'collections' ? `/collections/${name}/info?${query}` : `/searches/${name}/info`;
    let orderby = orderbys.get(info);
    if (orderby === undefined) {
      const { hash } = ((await (await reference.get(info)).json()) as { search: { hash: string } }).search;
      // pgSTAC's own reading of the search's sortby (its record's orderby may not be filled in yet).
      orderby = await pgstac.psql(`SET search_path = pgstac, public; SELECT orderby FROM search_fromhash('${hash.replace(/'/g, "''")}')`);
      orderbys.set(info, orderby);
    }
    return orderby;
  };
  /** pgSTAC's items in the order its loop found them: the search's ORDER BY over them. */
  const foundOrder = async (keys: string[], orderby: string): Promise<string[]> => {
    const list = keys.map((k) => `'${k.replace(/'/g, "''")}'`).join(', ');
    const text = await pgstac.psql(
      `SET search_path = pgstac, public; SELECT collection || '/' || id FROM items WHERE collection || '/' || id IN (${list}) ORDER BY ${orderby}`,
    );
    return text.split('\n').filter((l) => l.includes('/'));
  };
  const keyOf = (i: Found): string => `${i.collection}/${i.id}`;
  for (const [p, query] of cases) {
    const url = `${p}${query ? `?${query}` : ''}`;
    const [a, b] = await Promise.all([reference.get(url), other.get(url)]);
    const [ta, tb] = [await a.text(), await b.text()];
    if (b.status !== a.status) throw new Error(`${url}: ${label} answered ${b.status} (${tb}), pgSTAC ${a.status} (${ta})`);
    if (a.status !== 200) continue;
    const [fa, fb] = [JSON.parse(ta) as Found[], JSON.parse(tb) as Found[]];
    out.items += fa.length;
    if (summary(fa) === summary(fb)) {
      out.same++;
      continue;
    }
    const found = await foundOrder(fa.map(keyOf), await orderbyOf(p, query));
    const explained = JSON.stringify(heapOrder(found, pgstac.sizes)) === JSON.stringify(fa.map(keyOf));
    const byKey = new Map(fa.map((i) => [keyOf(i), i]));
    const inFoundOrder = found.map((k) => byKey.get(k)!);
    if (explained && summary(inFoundOrder) === summary(fb)) out.heap++;
    else if (
      explained &&
      !/skipcovered=false/.test(query) &&
      onlyNoise(found, fb.map(keyOf), areaOf(p), footprints, Number(/items_limit=(\d+)/.exec(query)?.[1] ?? DEFAULT_ITEMS_LIMIT))
    )
      out.noise++;
    else {
      const idsOf = (f: Found[]): string => f.map((i) => i.id).join(' ');
      out.differ.push(
        `${url}\n  pgSTAC: ${idsOf(fa)}${explained ? '' : ' (not its table order of what it found)'}\n  ${label}: ${idsOf(fb)}${idsOf(fa) === idsOf(fb) ? `\n  ${ta.slice(0, 300)}\n  ${tb.slice(0, 300)}` : ''}`,
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
