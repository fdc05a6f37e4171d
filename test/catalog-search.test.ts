/**
 * The catalogue without a database, its parts alone (no Parquet, no database): PostgreSQL's jsonb
 * text and pgSTAC's search hash (the id pgSTAC gives, checked against pgSTAC itself by
 * test/catalog-pgstac.test.ts), timestamps as PostgreSQL reads them, and pgSTAC's search
 * semantics over a table of items made here: CQL2's three-valued logic, the typing of comparisons,
 * the default order and its tie-breakers, and geometrysearch's limits, exitwhenfull and skipcovered.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { numericText, jsonbText, searchHash } from '../src/catalog/jsonb.js';
import { compileSearch, parseTimestamp, scan } from '../src/catalog/search.js';
import { ItemTable } from '../src/catalog/items.js';
import { boxShape, shapeFromGeojson, shapeFromWkb, wkbOfShape } from '../src/catalog/geometry.js';
import { heapOrder } from './helpers/catalog-grid.js';
import { PyFloat, pyLoads } from '../src/pyjson.js';

/** A WKB polygon over a bbox. */
function boxWkb([w, s, e, n]: number[]): Uint8Array {
  const ring = [
    [w, s],
    [e, s],
    [e, n],
    [w, n],
    [w, s],
  ];
  const view = new DataView(new ArrayBuffer(9 + 4 + ring.length * 16));
  view.setUint8(0, 1);
  view.setUint32(1, 3, true);
  view.setUint32(5, 1, true);
  view.setUint32(9, ring.length, true);
  ring.forEach(([x, y], i) => {
    view.setFloat64(13 + i * 16, x!, true);
    view.setFloat64(21 + i * 16, y!, true);
  });
  return new Uint8Array(view.buffer);
}

function table(items: Array<{ id: string; collection?: string; datetime: string; bbox: number[]; properties?: Record<string, unknown> }>): ItemTable {
  const t = new ItemTable();
  for (const i of items) {
    const ms = Date.parse(i.datetime);
    t.add({
      id: i.id,
      collection: i.collection ?? 'c',
      datetime: ms,
      endDatetime: ms,
      wkb: boxWkb(i.bbox),
      box: false,
      envelope: i.bbox as [number, number, number, number],
      bbox: i.bbox,
      assetsJson: '{}',
      properties: i.properties ?? {},
    });
  }
  t.finish();
  return t;
}

const ITEMS = table([
  { id: 'a', datetime: '2023-01-01T00:00:00Z', bbox: [0, 0, 1, 1], properties: { cloud: 5, platform: 'x' } },
  { id: 'b', datetime: '2023-02-01T00:00:00Z', bbox: [0.5, 0, 1.5, 1], properties: { cloud: 50, platform: 'y' } },
  { id: 'c', datetime: '2023-02-01T00:00:00Z', bbox: [0, 0, 1, 1], properties: { cloud: '7' } },
  { id: 'd', collection: 'd', datetime: '2023-03-01T00:00:00Z', bbox: [2, 2, 3, 3], properties: { cloud: 100, platform: 'x' } },
]);

function ids(search: Record<string, unknown>): string[] {
  const compiled = compileSearch(search, ITEMS);
  const order: string[] = [];
  for (let i = 0; i < ITEMS.count; i++) if (compiled.rank[i]! >= 0) order[compiled.rank[i]!] = ITEMS.ids[i]!;
  return order;
}

describe('jsonb text and the search hash', () => {
  it("writes numbers as numeric does, keys in jsonb's order", () => {
    assert.equal(numericText('5.0'), '5.0');
    assert.equal(numericText('1e-07'), '0.0000001');
    assert.equal(numericText('1.5e+16'), '15000000000000000');
    assert.equal(numericText('-0.0'), '0.0');
    assert.equal(jsonbText(pyLoads('{"bbox":[5,43.0],"ab":"é\\n","a":null}')), '{"a": null, "ab": "é\\n", "bbox": [5, 43.0]}');
  });

  it("hashes as pgSTAC's search_hash (md5 of the two texts, paging keys left out)", () => {
    const search = { collections: ['alpha'], 'filter-lang': 'cql2-json' };
    const h = searchHash(search, { type: 'mosaic' });
    assert.equal(h, searchHash({ ...search, limit: 10, token: 'next:x' }, { type: 'mosaic' }));
    assert.notEqual(h, searchHash(search, { type: 'mosaic', name: 'x' }));
    assert.notEqual(searchHash({ bbox: [new PyFloat(5)] }, {}), searchHash({ bbox: [5] }, {}), '5.0 and 5 are not the same jsonb');
  });

  it('reads timestamps as PostgreSQL does in UTC', () => {
    assert.equal(parseTimestamp('2023-01-02'), Date.parse('2023-01-02T00:00:00Z'));
    assert.equal(parseTimestamp('2023-01-02 03:04:05+02'), Date.parse('2023-01-02T01:04:05Z'));
    assert.equal(parseTimestamp('2023-01-02T03:04'), Date.parse('2023-01-02T03:04:00Z'));
    assert.equal(parseTimestamp('tomorrow'), undefined);
  });
});

describe("pgSTAC's search semantics in memory", () => {
  it('orders newest first, then collection and id descending', () => {
    assert.deepEqual(ids({}), ['d', 'c', 'b', 'a']);
    assert.deepEqual(ids({ sortby: [{ field: 'datetime', direction: 'asc' }] }), ['a', 'b', 'c', 'd']);
    // A property sorts as text (an unregistered queryable): '100' < '5' < '50' < '7'.
    assert.deepEqual(ids({ sortby: [{ field: 'cloud', direction: 'asc' }] }), ['d', 'a', 'b', 'c']);
  });

  it('reads a property as a float beside a number, as text otherwise, with NULL never matching', () => {
    assert.deepEqual(ids({ filter: { op: '<', args: [{ property: 'cloud' }, 10] } }), ['c', 'a']);
    assert.deepEqual(ids({ filter: { op: 'not', args: [{ op: '=', args: [{ property: 'platform' }, 'x'] }] } }), ['b']);
    assert.deepEqual(ids({ filter: { op: 'isNull', args: [{ property: 'platform' }] } }), ['c']);
    assert.deepEqual(ids({ filter: { op: 'in', args: [{ property: 'collection' }, ['d']] } }), ['d']);
    assert.deepEqual(ids({ filter: { op: 'like', args: [{ property: 'platform' }, '_'] } }), ['d', 'b', 'a']);
    assert.deepEqual(ids({ filter: { op: 'between', args: [{ property: 'cloud' }, 6, 60] } }), ['c', 'b']);
    assert.deepEqual(ids({ query: { cloud: { gte: 50 } } }), ['d', 'b']);
  });

  it('filters by datetime, bbox, s_intersects and t_intersects', () => {
    assert.deepEqual(ids({ datetime: '2023-02-01' }), ['c', 'b']);
    assert.deepEqual(ids({ datetime: '../2023-01-31T23:59:59Z' }), ['a']);
    assert.deepEqual(ids({ bbox: [1.2, 0.5, 2.5, 2.5] }), ['d', 'b']);
    assert.deepEqual(ids({ filter: { op: 's_intersects', args: [{ property: 'geometry' }, { type: 'Point', coordinates: [1.5, 1] }] } }), ['b']);
    assert.deepEqual(
      ids({ filter: { op: 't_intersects', args: [{ property: 'datetime' }, { interval: ['2023-01-15T00:00:00Z', '2023-02-15T00:00:00Z'] }] } }),
      ['c', 'b'],
    );
  });

  it('answers 400 for what it does not read', () => {
    assert.throws(() => ids({ filter: { op: 's_within', args: [{ property: 'geometry' }, [0, 0, 1, 1]] } }), /s_within/);
    assert.throws(() => ids({ filter: { op: 'casei', args: ['x'] } }), /casei/);
    assert.throws(() => ids({ query: { cloud: { lt: 1 } }, filter: { op: '=', args: [1, 1] } }), /either query or filter/);
  });

  it('scans as geometrysearch: limits, exitwhenfull, skipcovered', () => {
    const compiled = compileSearch({}, ITEMS);
    const area = boxShape([0, 0, 1, 1]);
    const limits = { scanLimit: 100, itemsLimit: 100, timeLimitSeconds: 5, exitWhenFull: false, skipCovered: false };
    const found = (l: typeof limits): string[] => scan(compiled, ITEMS, area, l).map((i) => ITEMS.ids[i]!);
    assert.deepEqual(found(limits), ['c', 'b', 'a']);
    assert.deepEqual(found({ ...limits, itemsLimit: 2 }), ['c', 'b']);
    assert.deepEqual(found({ ...limits, scanLimit: 1 }), ['c']);
    // c covers the whole area: exitwhenfull stops there.
    assert.deepEqual(found({ ...limits, exitWhenFull: true }), ['c']);
    // Half of it: b adds nothing to what c covers and is skipped; a neither.
    const half = boxShape([0.5, 0, 1.5, 1]);
    assert.deepEqual(
      scan(compiled, ITEMS, half, { ...limits, skipCovered: true }).map((i) => ITEMS.ids[i]!),
      ['c', 'b'],
    );
  });
});

describe('what the catalogues in memory keep', () => {
  it('keeps a GeoJSON geometry (a STAC API item) as WKB that reads back as the same shape', () => {
    const geometries = [
      { type: 'Point', coordinates: [1.5, -2.25] },
      {
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
          [2, 0.5],
        ],
      },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [4, 0],
            [0, 3],
            [0, 0],
          ],
          [
            [0.5, 0.5],
            [1, 0.5],
            [0.5, 1],
            [0.5, 0.5],
          ],
        ],
      },
      {
        type: 'MultiPolygon',
        coordinates: [
          [
            [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 0],
            ],
          ],
          [
            [
              [5, 5],
              [6, 5],
              [6, 7],
              [5, 5],
            ],
          ],
        ],
      },
      {
        type: 'GeometryCollection',
        geometries: [
          { type: 'Point', coordinates: [9, 9] },
          {
            type: 'MultiLineString',
            coordinates: [
              [
                [1, 2],
                [3, 4],
              ],
            ],
          },
        ],
      },
    ];
    for (const g of geometries) {
      const shape = shapeFromGeojson(g);
      assert.deepEqual(shapeFromWkb(wkbOfShape(shape)), shape, g.type);
    }
  });
});

describe("the order of pgSTAC's answer (its temporary table's pages)", () => {
  it('places rows as PostgreSQL 15 placed them in pgstac_results', () => {
    // Observed with psql (SELECT ctid … FROM pgstac_results after geometrysearch, in one transaction):
    // 40 rows found in this order, of these sizes, were on pages 0, 1 and 2 as below.
    const found: Array<[string, number]> = [];
    const add = (id: string, size: number): void => void found.push([id, size]);
    for (const m of [12, 11]) for (const c of [13, 4]) add(`alpha-${c}-${m}`, c === 13 ? 473 : 469);
    add('beta-4-7', 316);
    add('beta-3-7', 316);
    add('alpha-13-10', 473);
    add('alpha-4-10', 469);
    for (const [m, d] of [
      [9, 6],
      [8, 5],
    ] as const) {
      add(`beta-4-${d}`, 316);
      add(`beta-3-${d}`, 316);
      add(`alpha-13-${m}`, 469);
      add(`alpha-4-${m}`, 469);
    }
    add('beta-4-4', 316);
    add('beta-3-4', 316);
    for (const m of [7, 6, 5]) for (const c of [13, 4]) add(`alpha-${c}-${m}`, 469);
    for (const [m, d] of [
      [4, 3],
      [3, 2],
      [2, 1],
    ] as const) {
      add(`beta-4-${d}`, 316);
      add(`beta-3-${d}`, 316);
      add(`alpha-13-${m}`, 469);
      add(`alpha-4-${m}`, 469);
    }
    add('beta-4-0', 316);
    add('beta-3-0', 316);
    add('alpha-13-1', 469);
    add('alpha-4-1', 469);
    const order = found.map(([id]) => id);
    const placed = heapOrder(order, new Map(found));
    // beta-4-0 (316 bytes) went back to page 0, which alpha-13-7 (469) had left with 356 bytes free.
    const expected = [...order];
    expected.splice(expected.indexOf('beta-4-0'), 1);
    expected.splice(expected.indexOf('alpha-13-7'), 0, 'beta-4-0');
    assert.deepEqual(placed, expected);
  });
});
