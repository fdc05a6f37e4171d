/**
 * A STAC API as the catalogue (TESSERA_CATALOG=stac-api+http://…), against real servers on
 * loopback: the pgSTAC tests' generated catalogue (test/helpers/pgstac.ts, 1,080 items over real
 * COGs) in pgSTAC, stac-fastapi-pgstac 7.2.0 in front of it (tools/stac-api/serve.sh). One tessera
 * reads the database directly (TESSERA_PGSTAC_DSN), one reads the API with small pages, each search
 * once into memory. The same searches register under the same ids and find, for every tile, point
 * and bbox of the seeded grid, the same items in the same order with the same assets; the pages
 * were followed (the API was asked one request per page, and none per lookup); a bound on the items
 * holds the search in part and says so; registered searches outlive a restart. Then a hostile API
 * (a node server on loopback): a page past the byte bound, not JSON, not an ItemCollection, a next
 * link to another origin, one that repeats itself, endless pages, a page that never ends, the API's
 * refusal of a search: each a clear 4xx/5xx, and the server keeps serving.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFileServer, type FileServer } from './helpers/fileserver.js';
import { ensureCatalogueData, startCatalogue, type Catalogue } from './helpers/pgstac.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { compareLookups, pgstacRowSizes, lookupCases, SEARCHES, type Found } from './helpers/catalog-grid.js';

const JSON_HEADERS = { 'content-type': 'application/json' };
const PAGE = 50;

/**
 * Searches pgSTAC reads and the API refuses, by name, with what the API says: the API decides what a
 * search means (stac-fastapi-pgstac's `datetime` is RFC 3339 date-times only, where pgSTAC reads a
 * bare date as the whole day), and its refusal is the client's 400 at registration.
 */
const API_REFUSES: Record<string, RegExp> = { 's_intersects a bbox, a date': /answered 400 .*Input should be a valid datetime/ };

/** Requests tessera sent to a host (its upstream client's counts). */
function requestsTo(t: RunningTessera, url: string): number {
  const host = new URL(url).host;
  return t.services.client.hostStats().find(([h]) => h === host)?.[1].requests ?? 0;
}

async function register(t: RunningTessera, body: Record<string, unknown>): Promise<Response> {
  return t.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
}

describe('a STAC API as the catalogue equals pgSTAC on the same items', () => {
  let files: FileServer;
  let tmp: string;
  let catalogue: Catalogue;
  let overPgstac: RunningTessera;
  let overApi: RunningTessera;
  let api: string;
  /** Search name → id (the same in both, checked). */
  const ids = new Map<string, string>();

  before(async () => {
    const data = await ensureCatalogueData((line) => console.log(line));
    files = await startFileServer(data);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-catalog-stacapi-'));
    catalogue = await startCatalogue(files.url, tmp, 'stac-fastapi');
    api = catalogue.apiUrl!;
    // Two renders at once at most: GDAL's reads wait on libuv's threads, which this process's file server needs too.
    overPgstac = await startTessera({ pgstacDsn: catalogue.dsn, pgstacCacheTtlSeconds: 0, tileCacheBytes: 0, mosaicConcurrency: 2 });
    overApi = await startTessera({
      catalog: `stac-api+${api}`,
      catalogSearches: path.join(tmp, 'searches.json'),
      catalogApiPageSize: PAGE,
      tileCacheBytes: 0,
      mosaicConcurrency: 2,
    });
  });

  after(async () => {
    await overApi?.close();
    await overPgstac?.close();
    await catalogue?.stop();
    await files?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("registers every search under pgSTAC's id, reading its pages from the API once", async () => {
    for (const { name, body } of SEARCHES) {
      const answers: string[] = [];
      for (const t of [overPgstac, overApi]) {
        const res = await register(t, { ...body, metadata: { name } });
        const text = await res.text();
        const refusal = t === overApi ? API_REFUSES[name] : undefined;
        if (refusal) {
          assert.equal(res.status, 400, `${name}: ${text}`);
          assert.match(text, refusal);
          break;
        }
        assert.equal(res.status, 200, `${name}: ${text}`);
        assert.equal(res.headers.get('x-tessera-catalog-truncated'), null, `${name}: read whole`);
        answers.push((JSON.parse(text) as { id: string }).id);
      }
      if (answers.length < 2) continue;
      assert.equal(answers[1], answers[0], `${name}: the same id`);
      ids.set(name, answers[0]!);
    }
    // 'alpha, the default order' alone has 648 items: 13 pages of 50, each a request.
    assert.ok(requestsTo(overApi, api) >= 13 + 1, `pages were followed (${requestsTo(overApi, api)} requests)`);
  });

  it('finds the same items in the same order for every tile, point and bbox of the grid, without asking the API per lookup', async () => {
    const cases = lookupCases(ids);
    // The collection queries register their searches (and read them) at their first lookup.
    for (const q of new Set(cases.filter(([p]) => p.startsWith('/collections/')).map(([p, q]) => `${p.split('/')[2]}?${q}`))) {
      const [collection, query] = q.split('?');
      const res = await overApi.get(`/collections/${collection}/info?${query}`);
      assert.equal(res.status, 200, await res.text());
    }
    const before = requestsTo(overApi, api);
    const { same, heap, noise, differ, items } = await compareLookups(
      overPgstac,
      overApi,
      cases,
      catalogue.items,
      { psql: catalogue.psql, sizes: await pgstacRowSizes(catalogue.psql) },
      'STAC API',
    );
    console.log(
      `catalog-stacapi: ${cases.length} lookups, ${same} equal, ${heap} equal in the order pgSTAC's temporary table holds them, ${noise} equal but for items pgSTAC keeps that cover nothing new, ${differ.length} differ; ${items} items found by pgSTAC`,
    );
    if (differ.length > 0) console.log(`catalog-stacapi: the first that differ:\n${differ.slice(0, 3).join('\n')}`);
    assert.ok(items > 3000, `the grid finds items (${items})`);
    assert.equal(requestsTo(overApi, api), before, 'no lookup asked the API');
    // As for stac-geoparquet (test/catalog-pgstac.test.ts), every difference explained by pgSTAC's table order or GEOS's rounding.
    assert.equal(differ.length, 0, `${differ.length} lookups differ:\n${differ.slice(0, 5).join('\n')}`);
  });

  it('makes the same tile as over pgSTAC, with its lookup timed', async () => {
    const url = `/searches/${ids.get('both collections in a bbox')}/tiles/WebMercatorQuad/8/133/91.png?assets=visual&items_limit=4`;
    const a = await overPgstac.get(url);
    const b = await overApi.get(url);
    assert.equal(a.status, 200, await a.clone().text());
    assert.equal(b.status, 200, await b.clone().text());
    assert.equal(b.headers.get('x-assets'), a.headers.get('x-assets'));
    assert.ok(Buffer.from(await a.arrayBuffer()).equals(Buffer.from(await b.arrayBuffer())), 'the same PNG');
    assert.match(b.headers.get('server-timing') ?? '', /^catalog;dur=[\d.]+;desc="1 lookups"$/);
  });

  it('reads the collection document and single items from the API', async () => {
    const info = await overApi.get('/collections/beta/WebMercatorQuad/tilejson.json?assets=visual');
    const reference = await overPgstac.get('/collections/beta/WebMercatorQuad/tilejson.json?assets=visual');
    assert.equal(info.status, 200, await info.clone().text());
    const [x, y] = [(await info.json()) as { bounds: number[] }, (await reference.json()) as { bounds: number[] }];
    assert.deepEqual(x.bounds, y.bounds);
    const item = await overApi.get('/collections/alpha/items/alpha-3-1/assets');
    assert.equal(item.status, 200, await item.clone().text());
    assert.deepEqual(await item.json(), await (await overPgstac.get('/collections/alpha/items/alpha-3-1/assets')).json());
    assert.equal((await overApi.get('/collections/alpha/items/nothing/assets')).status, 404);
    assert.equal((await overApi.get('/collections/nothing/info')).status, 404);
  });

  it('passes on what the API refuses as a 400 at registration', async () => {
    const res = await register(overApi, { collections: ['alpha'], datetime: 'nonsense' });
    const text = await res.text();
    assert.ok(res.status === 400, `${res.status} ${text}`);
    assert.match(text, /The STAC API answered 4\d\d to its search page 1/);
  });

  it('holds a search past TESSERA_CATALOG_API_MAX_ITEMS in part, and says so', async () => {
    const capped = await startTessera({ catalog: `stac-api+${api}`, catalogSearches: 'none', catalogApiPageSize: 30, catalogApiMaxItems: 100 });
    try {
      const res = await register(capped, { collections: ['alpha'] });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-tessera-catalog-truncated'), '100 of more items');
      const { id } = (await res.json()) as { id: string };
      // The first 100 items of the search, in the API's (pgSTAC's) order.
      const first = (await (
        await fetch(`${api}/search`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ collections: ['alpha'], limit: 100 }) })
      ).json()) as {
        features: Array<{ id: string }>;
      };
      const held = new Set(first.features.map((f) => f.id));
      assert.equal(held.size, 100);
      let found = 0;
      for (const p of ['/tiles/WebMercatorQuad/6/33/23/assets', '/point/8.6,45.6/assets', '/bbox/4,42,13,49/assets?items_limit=200']) {
        const r = await capped.get(`/searches/${id}${p}`);
        assert.equal(r.status, 200, await r.clone().text());
        assert.equal(r.headers.get('x-tessera-catalog-truncated'), '100 of more items', p);
        const items = (await r.json()) as Found[];
        for (const i of items) assert.ok(held.has(i.id), `${p}: ${i.id} is one of the first 100`);
        found += items.length;
      }
      for (const p of ['/info', '/WebMercatorQuad/tilejson.json?assets=visual']) {
        const r = await capped.get(`/searches/${id}${p}`);
        assert.equal(r.status, 200, p);
        assert.equal(r.headers.get('x-tessera-catalog-truncated'), '100 of more items', p);
      }
      assert.ok(found > 0);
      // 100 items in pages of 30: 4 pages, and the landing page.
      assert.equal(requestsTo(capped, api), 5);
    } finally {
      await capped.close();
    }
  });

  it('keeps registered searches across a restart, and reads their items again at first use', async () => {
    const id = ids.get('both collections in a bbox')!;
    const lookup = `/searches/${id}/tiles/WebMercatorQuad/7/66/46/assets`;
    const expected = await (await overApi.get(lookup)).json();
    const again = await startTessera({ catalog: `stac-api+${api}`, catalogSearches: path.join(tmp, 'searches.json'), catalogApiPageSize: PAGE });
    try {
      assert.equal((await again.get(`/searches/${id}/info`)).status, 200);
      const r = await again.get(lookup);
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), expected);
    } finally {
      await again.close();
    }
  });
});

/** A hostile STAC API on loopback: `/{mode}/` is a landing page, `/{mode}/search` answers as `mode` says. */
async function startHostileApi(): Promise<{ url: string; close(): Promise<void>; busiest(): number }> {
  let counter = 0;
  let searching = 0;
  let busiest = 0;
  const feature = (id: string): Record<string, unknown> => ({
    type: 'Feature',
    id,
    collection: 'c',
    bbox: [0, 0, 1, 1],
    geometry: {
      type: 'Polygon',
      coordinates: [
        [
          [0, 0],
          [1, 0],
          [1, 1],
          [0, 1],
          [0, 0],
        ],
      ],
    },
    properties: { datetime: '2024-01-01T00:00:00Z' },
    assets: { a: { href: 'http://example.com/a.tif' } },
    links: [],
  });
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const [mode, last] = url.pathname.split('/').filter(Boolean);
    const base = `http://${req.headers.host}/${mode}`;
    const json = (doc: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(doc));
    };
    if (last === undefined && mode === 'nothing') {
      json({ hello: 'world' });
      return;
    }
    if (last === undefined) {
      json({
        type: 'Catalog',
        id: mode,
        conformsTo: ['https://api.stacspec.org/v1.0.0/item-search'],
        links: [{ rel: 'search', href: `${base}/search`, method: mode === 'getonly' ? 'GET' : 'POST' }],
      });
      return;
    }
    const page = (features: unknown[], next?: string): void =>
      json({ type: 'FeatureCollection', features, links: next ? [{ rel: 'next', href: next, method: 'GET' }] : [] });
    switch (mode) {
      case 'getonly':
        // An API that searches by GET only: the item's id says how it was asked.
        page(req.method === 'GET' ? [feature(JSON.stringify(Object.fromEntries(url.searchParams)))] : []);
        return;
      case 'busy':
        // One page, slowly; how many searches are read at once is counted.
        searching++;
        busiest = Math.max(busiest, searching);
        setTimeout(() => {
          searching--;
          page([feature(`busy-${counter++}`)]);
        }, 150);
        return;
      case 'shapes': {
        // A triangle (not its bbox: kept as WKB) under a square, and an item without a geometry.
        const triangle = {
          ...feature('triangle'),
          geometry: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0],
                [1, 0],
                [0, 1],
                [0, 0],
              ],
            ],
          },
        };
        page([{ ...feature('nowhere'), geometry: null }, triangle, feature('square')]);
        return;
      }
      case 'huge':
        page(Array.from({ length: 2000 }, (_, i) => feature(`big-${i}`)));
        return;
      case 'notjson':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('<html>surprise</html>');
        return;
      case 'notitems':
        json({ type: 'FeatureCollection', features: 'none' });
        return;
      case 'elsewhere':
        page([feature('one')], `http://localhost:${(server.address() as AddressInfo).port}/elsewhere/search?token=2`);
        return;
      case 'metadata':
        page([feature('one')], 'http://169.254.169.254/latest/meta-data/');
        return;
      case 'samepage':
        page([feature('same')], `${base}/search?token=again`);
        return;
      case 'loop':
        page([feature(`loop-${counter++}`)], `${base}/search?token=${counter % 2}`);
        return;
      case 'endless':
        page([feature(`endless-${counter++}`)], `${base}/search?token=${counter}`);
        return;
      case 'slow':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"type": "FeatureCollection", "features": [');
        return; // never ends
      case 'refuses':
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'BadRequest', description: 'filter is wrong here' }));
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    busiest: () => busiest,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a hostile STAC API as the catalogue', () => {
  let hostile: Awaited<ReturnType<typeof startHostileApi>>;
  before(async () => {
    hostile = await startHostileApi();
  });
  after(async () => {
    await hostile?.close();
  });

  const CASES: Array<{ mode: string; status: number; detail: RegExp }> = [
    { mode: 'huge', status: 502, detail: /search page 1 at .* is (more than the 65536 bytes|\d+ bytes, more than the 65536)/ },
    { mode: 'notjson', status: 502, detail: /search page 1 at .* is not JSON/ },
    { mode: 'notitems', status: 502, detail: /is not an ItemCollection: it has no 'features' list/ },
    { mode: 'elsewhere', status: 502, detail: /next link leads to another origin \(http:\/\/localhost:\d+, not http:\/\/127\.0\.0\.1:\d+\)/ },
    { mode: 'metadata', status: 502, detail: /next link leads to another origin \(http:\/\/169\.254\.169\.254/ },
    { mode: 'samepage', status: 502, detail: /search page 2 brings no item not read before, yet links a next page/ },
    { mode: 'loop', status: 502, detail: /next link repeats a page already read/ },
    { mode: 'slow', status: 504, detail: /did not end within TESSERA_CATALOG_API_TIMEOUT \(1000 ms, 0 pages read\)|did not arrive in time/ },
    { mode: 'refuses', status: 400, detail: /The STAC API answered 400 to its search page 1 .*filter is wrong here/ },
  ];

  for (const { mode, status, detail } of CASES) {
    it(`${mode}: ${status}, and the server keeps serving`, async () => {
      const t = await startTessera({
        catalog: `stac-api+${hostile.url}/${mode}`,
        catalogSearches: 'none',
        maxDocumentBytes: 65_536,
        catalogApiTimeoutSeconds: 1,
        upstreamTimeoutMs: 5_000,
      });
      try {
        const started = Date.now();
        const res = await register(t, { collections: ['c'] });
        const text = await res.text();
        assert.equal(res.status, status, text);
        assert.match((JSON.parse(text) as { detail: string }).detail, detail);
        assert.ok(Date.now() - started < 4_000, `answered in ${Date.now() - started} ms`);
        assert.equal((await t.get('/searches/')).status, 200);
        assert.equal((await t.get('/healthz')).status, 200);
      } finally {
        await t.close();
      }
    });
  }

  it('endless: the pages stop at TESSERA_CATALOG_API_MAX_ITEMS, the search held in part', async () => {
    const t = await startTessera({ catalog: `stac-api+${hostile.url}/endless`, catalogSearches: 'none', catalogApiMaxItems: 25 });
    try {
      const res = await register(t, { collections: ['c'] });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('x-tessera-catalog-truncated'), '25 of more items');
      const { id } = (await res.json()) as { id: string };
      const items = (await (await t.get(`/searches/${id}/point/0.5,0.5/assets`)).json()) as Found[];
      assert.equal(items.length, 25);
      assert.equal(requestsTo(t, hostile.url), 26, 'the landing page and 25 pages of one item');
    } finally {
      await t.close();
    }
  });

  it('searches by GET when the landing page offers only GET, the search as query parameters', async () => {
    const t = await startTessera({ catalog: `stac-api+${hostile.url}/getonly`, catalogSearches: 'none', catalogApiPageSize: 7 });
    try {
      const filter = { op: '<', args: [{ property: 'eo:cloud_cover' }, 10.5] };
      const res = await register(t, {
        collections: ['c', 'd'],
        bbox: [-1, -1, 2, 2],
        datetime: '2024-01-01T00:00:00Z/..',
        filter,
        sortby: [
          { field: 'datetime', direction: 'desc' },
          { field: 'id', direction: 'asc' },
        ],
      });
      assert.equal(res.status, 200, await res.clone().text());
      const { id } = (await res.json()) as { id: string };
      const [item] = (await (await t.get(`/searches/${id}/point/0.5,0.5/assets`)).json()) as Found[];
      assert.deepEqual(JSON.parse(item!.id), {
        collections: 'c,d',
        // The registered bbox is floats (stac-pydantic's), written as Python writes them.
        bbox: '-1.0,-1.0,2.0,2.0',
        datetime: '2024-01-01T00:00:00Z/..',
        filter: JSON.stringify(filter),
        'filter-lang': 'cql2-json',
        sortby: '-datetime,id',
        limit: '7',
      });
    } finally {
      await t.close();
    }
  });

  it('reads two searches at once at most, the others in turn', async () => {
    const t = await startTessera({ catalog: `stac-api+${hostile.url}/busy`, catalogSearches: 'none' });
    try {
      const answers = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((c) => register(t, { collections: [c] })));
      assert.deepEqual(
        answers.map((r) => r.status),
        [200, 200, 200, 200, 200, 200],
      );
      assert.equal(hostile.busiest(), 2);
    } finally {
      await t.close();
    }
  });

  it("keeps an item's own footprint, not its bbox, and leaves out an item without one", async () => {
    const t = await startTessera({ catalog: `stac-api+${hostile.url}/shapes`, catalogSearches: 'none' });
    try {
      const res = await register(t, { collections: ['c'] });
      assert.equal(res.status, 200, await res.clone().text());
      const { id } = (await res.json()) as { id: string };
      const at = async (p: string): Promise<string[]> => ((await (await t.get(`/searches/${id}/point/${p}/assets`)).json()) as Found[]).map((i) => i.id);
      assert.deepEqual(await at('0.2,0.2'), ['triangle', 'square']);
      assert.deepEqual(await at('0.8,0.8'), ['square']);
    } finally {
      await t.close();
    }
  });

  it('a landing page that is no STAC API: 502 naming it', async () => {
    const t = await startTessera({ catalog: `stac-api+${hostile.url}/nothing/`, catalogSearches: 'none' });
    try {
      const res = await register(t, { collections: ['c'] });
      assert.equal(res.status, 502);
      assert.match(await res.text(), /landing page/);
    } finally {
      await t.close();
    }
  });

  it('an API on loopback with loopback closed: refused by the network policy, without a request', async () => {
    const t = await startTessera({ catalog: `stac-api+${hostile.url}/endless`, catalogSearches: 'none', allowedNetworks: [] });
    try {
      const res = await register(t, { collections: ['c'] });
      assert.equal(res.status, 502);
      assert.match(await res.text(), /refused/);
      assert.equal(requestsTo(t, hostile.url), 0);
    } finally {
      await t.close();
    }
  });
});
