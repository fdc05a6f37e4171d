/**
 * /searches against a real pgSTAC catalogue (test/helpers/pgstac.ts: PostgreSQL 15 + PostGIS on
 * loopback, pgSTAC's schema migrated and 1,080 generated items loaded by pypgstac, their COGs on the
 * test's file server), tessera in-process: registering a search (pgSTAC's hash, the same for the
 * same values), its info and TileJSON, the items a tile and a point find (checked against the
 * catalogue's own items), tiles and point values, the lookups kept while warm, the client's mistakes
 * (400/404/422) and the database's faults (503 with Retry-After, the rest of the server unharmed),
 * and asset hrefs held to the URL policy. Parity with titiler-pgstac itself: test/parity/pgstac.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFileServer, type FileServer } from './helpers/fileserver.js';
import { ensureCatalogueData, startCatalogue, type Catalogue, type CatalogueItem } from './helpers/pgstac.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import sharp from 'sharp';
import SwaggerParser from '@apidevtools/swagger-parser';
import { gdal } from '../src/gdal/gdal.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Registers `body` and answers its id. */
async function register(t: RunningTessera, body: unknown): Promise<string> {
  const res = await t.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return (JSON.parse(text) as { id: string }).id;
}

function contains([w, s, e, n]: readonly number[], lon: number, lat: number): boolean {
  return lon >= w! && lon <= e! && lat >= s! && lat <= n!;
}

describe('/searches over a pgSTAC catalogue', () => {
  let files: FileServer;
  let tmp: string;
  let catalogue: Catalogue;
  let tessera: RunningTessera;

  before(async () => {
    const data = await ensureCatalogueData((line) => console.log(line));
    files = await startFileServer(data);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-pgstac-'));
    catalogue = await startCatalogue(files.url, tmp);
    // Two asset reads at a time: GDAL's reads wait on libuv's pool, which the in-process file
    // server's file reads need too (4 threads in a test process; bin/tessera sets more).
    tessera = await startTessera({ pgstacDsn: catalogue.dsn, tileCacheBytes: 0, mosaicConcurrency: 2 });
  });

  after(async () => {
    await tessera?.close();
    await catalogue?.stop();
    await files?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("registers a search under pgSTAC's own hash, the same for the same values", async () => {
    const body = { collections: ['alpha'], bbox: [5, 43, 8, 46], sortby: [{ field: 'datetime', direction: 'desc' }], metadata: { name: 'one' } };
    const res = await tessera.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
    assert.equal(res.status, 200);
    const answer = (await res.json()) as { id: string; links: Array<{ rel: string; href: string; templated?: boolean }> };
    const stored = await catalogue.psql(`SELECT hash FROM pgstac.searches WHERE metadata->>'name' = 'one'`);
    assert.equal(answer.id, stored);
    assert.deepEqual(
      answer.links.map((l) => [l.rel, l.href.replace(tessera.url, '')]),
      [
        ['metadata', `/searches/${answer.id}/info`],
        ['tilejson', `/searches/${answer.id}/{tileMatrixSetId}/tilejson.json`],
        ['map', `/searches/${answer.id}/{tileMatrixSetId}/map.html`],
        ['wmts', `/searches/${answer.id}/WMTSCapabilities.xml`],
      ],
    );
    // Floats are floats whether written 5 or 5.0, pydantic's way; keys in any order; null fields left out.
    const same = '{"metadata":{"name":"one"},"sortby":[{"direction":"desc","field":"datetime"}],"bbox":[5.0,43.0,8.0,46.0],"collections":["alpha"],"ids":null}';
    const again = await tessera.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body: same });
    assert.equal(((await again.json()) as { id: string }).id, answer.id);
    assert.notEqual(await register(tessera, { ...body, metadata: { name: 'two' } }), answer.id, 'the metadata is part of the id');
    assert.notEqual(await register(tessera, { ...body, query: { 'eo:cloud_cover': { lt: 10 } } }), answer.id);
  });

  it('answers the info of a search, and 404 for an unknown one', async () => {
    const id = await register(tessera, {
      collections: ['beta'],
      datetime: '2023-03-01T00:00:00Z/2023-08-01T00:00:00Z',
      metadata: { minzoom: 5, bounds: [4, 42, 15, 50], x: 1.5 },
    });
    const res = await tessera.get(`/searches/${id}/info`);
    assert.equal(res.status, 200);
    const info = (await res.json()) as { search: Record<string, unknown>; links: Array<{ rel: string }> };
    assert.equal(info.search['hash'], id);
    assert.deepEqual(info.search['search'], { datetime: '2023-03-01T00:00:00Z/2023-08-01T00:00:00Z', collections: ['beta'], 'filter-lang': 'cql2-json' });
    assert.deepEqual(info.search['metadata'], { type: 'mosaic', bounds: [4, 42, 15, 50], minzoom: 5, x: 1.5 });
    assert.match(String(info.search['lastused']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?(Z|[+-]\d\d:\d\d)$/);
    assert.equal(typeof info.search['usecount'], 'number');
    assert.deepEqual(
      info.links.map((l) => l.rel),
      ['self', 'tilejson', 'map', 'wmts'],
    );
    const missing = await tessera.get('/searches/0123456789abcdef/info');
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { detail: 'SearchId `0123456789abcdef` not found' });
    for (const url of [
      '/searches/0123456789abcdef/WebMercatorQuad/tilejson.json?assets=visual',
      '/searches/0123456789abcdef/tiles/WebMercatorQuad/7/66/46.png?assets=visual',
    ]) {
      assert.equal((await tessera.get(url)).status, 404, url);
    }
  });

  it('answers a TiTiler 2.x TileJSON: bounds of the search, zooms of its metadata', async () => {
    const id = await register(tessera, { collections: ['alpha'], bbox: [5, 43, 8, 46], metadata: { minzoom: 6, maxzoom: 12 } });
    const res = await tessera.get(`/searches/${id}/WebMercatorQuad/tilejson.json?assets=visual&pixel_selection=highest`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      tilejson: '3.0.0',
      version: '1.0.0',
      scheme: 'xyz',
      tiles: [`${tessera.url}/searches/${id}/tiles/WebMercatorQuad/{z}/{x}/{y}?assets=visual&pixel_selection=highest&tilesize=512`],
      minzoom: 6,
      maxzoom: 12,
      bounds: [5, 43, 8, 46],
      center: [6.5, 44.5, 6],
      raster_layers: {},
    });
    const png = await tessera.get(`/searches/${id}/WebMercatorQuad/tilejson.json?assets=visual&tile_format=png&tilesize=256`);
    assert.match(((await png.json()) as { tiles: string[] }).tiles[0]!, /\/tiles\/WebMercatorQuad\/\{z\}\/\{x\}\/\{y\}\.png\?assets=visual&tilesize=256$/);
    // Without a bbox or bounds, the grid's; the renders of its metadata as raster_layers.
    const world = await register(tessera, {
      collections: ['beta'],
      metadata: { defaults: { true_color: { assets: ['visual'], asset_bidx: ['visual|1,2,3'], rescale: [[0, 200]], colormap: { '1': [0, 0, 0, 255] } } } },
    });
    const doc = (await (await tessera.get(`/searches/${world}/WebMercatorQuad/tilejson.json?assets=visual`)).json()) as Record<string, unknown>;
    assert.deepEqual(doc['bounds'], [-180, -85.0511287798066, 180, 85.0511287798066]);
    assert.deepEqual(doc['raster_layers'], { true_color: { rescale: ['0,200'], colormap: '{"1": [0, 0, 0, 255]}', assets: ['visual|bidx=1,2,3'] } });
  });

  it('finds the items of a point and a tile as pgSTAC orders them, each lookup asked of the database once while warm', async () => {
    const id = await register(tessera, {
      collections: ['alpha'],
      filter: { op: '<', args: [{ property: 'eo:cloud_cover' }, 50] },
      sortby: [{ field: 'datetime', direction: 'desc' }],
    });
    const [lon, lat] = [6.6, 44.7];
    const expected = catalogue.items
      .filter((i: CatalogueItem) => i.collection === 'alpha' && i.cloud < 50 && contains(i.bbox, lon, lat))
      .sort((a, b) => b.datetime.localeCompare(a.datetime) || b.id.localeCompare(a.id))
      .map((i) => i.id);
    assert.ok(expected.length >= 3, 'the point is under several items');
    const res = await tessera.get(`/searches/${id}/point/${lon},${lat}/assets`);
    assert.equal(res.status, 200);
    const items = (await res.json()) as Array<{ id: string; collection: string; bbox: number[]; assets: Record<string, { href: string }> }>;
    assert.deepEqual(
      items.map((i) => i.id),
      expected,
    );
    assert.deepEqual(Object.keys(items[0]!).sort(), ['assets', 'bbox', 'collection', 'id']);
    assert.ok(items[0]!.assets['visual']!.href.startsWith(files.url));

    const lookups = tessera.services.searches!.lookups;
    const before = lookups.stats();
    const tile = `/searches/${id}/tiles/WebMercatorQuad/9/265/187/assets`;
    const first = (await (await tessera.get(tile)).json()) as Array<{ id: string }>;
    const second = (await (await tessera.get(tile)).json()) as Array<{ id: string }>;
    assert.ok(first.length > 0);
    assert.deepEqual(second, first);
    const after = lookups.stats();
    assert.equal(after.misses - before.misses, 1, 'one database lookup');
    assert.equal(after.hits - before.hits, 1, 'the second answered from memory');
    const metrics = await (await tessera.get('/metrics')).text();
    assert.match(metrics, /tessera_cache_hits_total\{cache="pgstac_items"\} [1-9]/);
    assert.match(metrics, /tessera_pgstac_queries_total [1-9]/);
    assert.match(metrics, /tessera_pgstac_connections [1-9]/);
    assert.match(metrics, /tessera_pgstac_waiting 0/);
    // exitwhenfull=false and skipcovered=false find every item under the tile.
    const all = (await (await tessera.get(`${tile}?exitwhenfull=false&skipcovered=false`)).json()) as Array<{ id: string }>;
    assert.ok(all.length > first.length, `${all.length} items without the shortcuts, ${first.length} with`);
    const limited = (await (await tessera.get(`${tile}?exitwhenfull=false&skipcovered=false&items_limit=2`)).json()) as Array<{ id: string }>;
    assert.deepEqual(
      limited.map((i) => i.id),
      all.slice(0, 2).map((i) => i.id),
    );
  });

  it("follows a search's tessera:policy over pgSTAC: below its minzoom 204 without a query, a tile's first N items", async () => {
    const search = { collections: ['alpha'], sortby: [{ field: 'datetime', direction: 'desc' }] };
    const open = await register(tessera, search);
    const guarded = await register(tessera, { ...search, metadata: { 'tessera:policy': { minzoom: 9, max_items_per_tile: 3 } } });
    assert.notEqual(guarded, open);
    const stored = await catalogue.psql(`SELECT metadata->'tessera:policy' FROM pgstac.searches WHERE hash = '${guarded}'`);
    assert.deepEqual(JSON.parse(stored), { minzoom: 9, max_items_per_tile: 3 }, "kept in pgSTAC's searches table, for every replica");

    const lookups = tessera.services.searches!.lookups;
    const before = lookups.stats();
    const low = await tessera.get(`/searches/${guarded}/tiles/WebMercatorQuad/8/132/93.png?assets=visual`);
    assert.equal(low.status, 204, await low.clone().text());
    assert.deepEqual(await (await tessera.get(`/searches/${guarded}/tiles/WebMercatorQuad/8/132/93/assets`)).json(), []);
    const after = lookups.stats();
    assert.equal(after.misses + after.hits, before.misses + before.hits, 'no lookup below the minzoom');

    const q = 'exitwhenfull=false&skipcovered=false';
    const tile = 'tiles/WebMercatorQuad/9/265/187';
    const all = (await (await tessera.get(`/searches/${open}/${tile}/assets?${q}`)).json()) as Array<{ id: string }>;
    assert.ok(all.length > 3, `${all.length} items under the tile`);
    const first = (await (await tessera.get(`/searches/${guarded}/${tile}/assets?${q}&items_limit=50`)).json()) as Array<{ id: string }>;
    assert.deepEqual(
      first.map((i) => i.id),
      all.slice(0, 3).map((i) => i.id),
    );
    const png = await tessera.get(`/searches/${guarded}/${tile}.png?assets=visual&pixel_selection=lowest&${q}`);
    assert.equal(png.status, 200, await png.clone().text());
    const used = (png.headers.get('x-assets') ?? '').split(',').filter(Boolean);
    assert.ok(used.length > 0 && used.length <= 3, `x-assets: ${used.join(',')}`);
    const tilejson = (await (await tessera.get(`/searches/${guarded}/WebMercatorQuad/tilejson.json?assets=visual`)).json()) as { minzoom: number };
    assert.equal(tilejson.minzoom, 9);
  });

  it('makes tiles of the items, names them in X-Assets, and reads points of each', async () => {
    const id = await register(tessera, { collections: ['alpha', 'beta'], sortby: [{ field: 'datetime', direction: 'desc' }] });
    const res = await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/8/132/93.png?assets=visual`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.match(res.headers.get('x-assets') ?? '', /^(alpha|beta)\/(alpha|beta)-\d+-\d+(,(alpha|beta)\/(alpha|beta)-\d+-\d+)*$/);
    const big = await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/8/132/93.webp?assets=visual&tilesize=512`);
    assert.equal(big.status, 200);
    assert.deepEqual((await sharp(Buffer.from(await big.arrayBuffer())).metadata()).width, 512);
    const scaled = await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/8/132/93@2x.png?assets=visual`);
    assert.equal(scaled.status, 200);
    // Far from every item: nothing to draw.
    assert.equal((await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/8/10/10.png?assets=visual`)).status, 204);
    // The layer is required, as on /stac.
    const bare = await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/8/132/93.png`);
    assert.equal(bare.status, 400);

    const alphaOnly = await register(tessera, { collections: ['alpha'] });
    const point = await tessera.get(`/searches/${alphaOnly}/point/6.6,44.7?assets=visual&assets=data`);
    assert.equal(point.status, 200);
    const values = (await point.json()) as {
      coordinates: number[];
      assets: Array<{ name: string; values: number[]; band_names: string[]; band_descriptions: string[] }>;
    };
    assert.deepEqual(values.coordinates, [6.6, 44.7]);
    assert.ok(values.assets.length > 0);
    const alpha = values.assets[0]!;
    assert.deepEqual(alpha.band_names, ['b1', 'b2', 'b3', 'b4']);
    assert.deepEqual(alpha.band_descriptions, ['visual_b1', 'visual_b2', 'visual_b3', 'data_b1']);
  });

  it('reads areas of a search and a collection: /bbox, /feature and POST /statistics (titiler-pgstac add_part, add_statistics)', async () => {
    const id = await register(tessera, { collections: ['alpha'], sortby: [{ field: 'datetime', direction: 'desc' }] });
    const box = await tessera.get(`/searches/${id}/bbox/6.2,44.2,7.4,45.3/128x96.png?assets=visual`);
    assert.equal(box.status, 200, await box.clone().text());
    assert.equal(box.headers.get('content-type'), 'image/png');
    assert.deepEqual([(await sharp(Buffer.from(await box.arrayBuffer())).metadata()).width], [128]);
    const used = (box.headers.get('x-assets') ?? '').split(',');
    assert.ok(used.length > 0 && used.every((a) => /^alpha\/alpha-\d+-\d+$/.test(a)), used.join(','));
    // The items the search finds for the box are those the image may use, first ones first.
    const found = ((await (await tessera.get(`/searches/${id}/bbox/6.2,44.2,7.4,45.3/assets?assets=visual`)).json()) as Array<{ id: string }>).map(
      (i) => `alpha/${i.id}`,
    );
    assert.deepEqual(used, found.slice(0, used.length));
    const square = {
      type: 'Feature',
      properties: { name: 'square' },
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [6.3, 44.3],
            [7.2, 44.3],
            [7.2, 45.1],
            [6.3, 44.3],
          ],
        ],
      },
    };
    const feature = await tessera.request(`/searches/${id}/feature.png?assets=visual&max_size=128`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(square),
    });
    assert.equal(feature.status, 200, await feature.clone().text());
    const stats = await tessera.request(`/searches/${id}/statistics?assets=visual&max_size=128`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify(square),
    });
    assert.equal(stats.status, 200, await stats.clone().text());
    const body = (await stats.json()) as { properties: { statistics: Record<string, { count: number }>; name: string; used_assets: string[] } };
    assert.deepEqual(Object.keys(body.properties.statistics), ['b1', 'b2', 'b3']);
    assert.ok(body.properties.statistics['b1']!.count > 0);
    assert.ok(body.properties.used_assets.length > 0);
    const collection = await tessera.get('/collections/alpha/bbox/6.2,44.2,7.4,45.3.png?assets=visual&max_size=64&sortby=-datetime');
    assert.equal(collection.status, 200, await collection.clone().text());
    // Far from every item: nothing to draw; the layer is required, as on tiles.
    assert.equal((await tessera.get(`/searches/${id}/bbox/20,20,21,21.png?assets=visual`)).status, 204);
    assert.equal((await tessera.get(`/searches/${id}/bbox/6.2,44.2,7.4,45.3.png`)).status, 400);
    // titiler-pgstac has no OGC API – Maps on searches.
    assert.equal((await tessera.get(`/searches/${id}/map?assets=visual&bbox=6.2,44.2,7.4,45.3`)).status, 404);
  });

  it("serves a collection's mosaic through the search titiler-pgstac registers for it and the query's filters", async () => {
    const res = await tessera.get('/collections/alpha/info?bbox=5,43,8,46&sortby=-datetime&datetime=2023-03-01T00:00:00Z/..');
    assert.equal(res.status, 200, await res.clone().text());
    const info = (await res.json()) as { search: { hash: string; search: unknown; metadata: unknown } };
    assert.deepEqual(info.search.search, {
      bbox: [5, 43, 8, 46],
      sortby: [{ field: 'datetime', direction: 'desc' }],
      datetime: '2023-03-01T00:00:00Z/..',
      collections: ['alpha'],
      'filter-lang': 'cql2-json',
    });
    assert.deepEqual(info.search.metadata, { type: 'mosaic', bounds: [5, 43, 8, 46], name: "Mosaic for 'alpha' Collection", assets: ['data', 'visual'] });
    assert.equal(await catalogue.psql(`SELECT count(*) FROM pgstac.searches WHERE hash = '${info.search.hash}'`), '1', 'registered in pgSTAC');
    const tile = await tessera.get(
      '/collections/alpha/tiles/WebMercatorQuad/9/265/187.png?assets=visual&bbox=5,43,8,46&sortby=-datetime&datetime=2023-03-01T00:00:00Z/..',
    );
    assert.equal(tile.status, 200);
    const items = (await (await tessera.get('/collections/beta/point/6.0,44.6/assets?ids=beta-10-2,beta-10-3,beta-11-2')).json()) as Array<{ id: string }>;
    assert.deepEqual(items.map((i) => i.id).sort(), ['beta-10-2', 'beta-10-3']);
    const doc = (await (await tessera.get('/collections/beta/WebMercatorQuad/tilejson.json?assets=visual&bbox=6,44,10,47')).json()) as { bounds: number[] };
    assert.deepEqual(doc.bounds, [6, 44, 10, 47]);
    const missing = await tessera.get('/collections/nope/info');
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { detail: 'CollectionId `nope` not found' });
    // A CQL2-text filter (the default filter-lang) names the same search as its CQL2-JSON, numbers as floats.
    const text = await tessera.get(
      `/collections/alpha/info?filter=${encodeURIComponent("eo:cloud_cover < 50 AND datetime >= TIMESTAMP('2023-03-01T01:00:00+01:00')")}`,
    );
    assert.equal(text.status, 200, await text.clone().text());
    const textInfo = (await text.json()) as { search: { hash: string; search: { filter: unknown } } };
    assert.deepEqual(textInfo.search.search.filter, {
      op: 'and',
      args: [
        { op: '<', args: [{ property: 'eo:cloud_cover' }, 50] },
        { op: '>=', args: [{ property: 'datetime' }, { timestamp: '2023-03-01T00:00:00Z' }] },
      ],
    });
    const json =
      '{"op":"and","args":[{"op":"<","args":[{"property":"eo:cloud_cover"},50.0]},{"op":">=","args":[{"property":"datetime"},{"timestamp":"2023-03-01T00:00:00Z"}]}]}';
    const viaJson = await tessera.get(`/collections/alpha/info?filter-lang=cql2-json&filter=${encodeURIComponent(json)}`);
    assert.equal(((await viaJson.json()) as { search: { hash: string } }).search.hash, textInfo.search.hash);
    const found = (await (await tessera.get(`/collections/alpha/point/6.6,44.7/assets?filter=${encodeURIComponent('eo:cloud_cover < 50')}`)).json()) as Array<{
      id: string;
    }>;
    const expected = catalogue.items.filter((i) => i.collection === 'alpha' && contains(i.bbox, 6.6, 44.7) && i.cloud < 50);
    assert.deepEqual(found.map((i) => i.id).sort(), expected.map((i) => i.id).sort());
    for (const q of ['filter=eo:cloud_cover%20%3C', 'filter=a%20%3D%201%20garbage', 'datetime=yesterday', 'bbox=1,2,x,4', 'query=%7Bnot%20json']) {
      const bad = await tessera.get(`/collections/alpha/info?${q}`);
      assert.equal(bad.status, 400, q);
    }
    assert.equal((await tessera.get('/collections/alpha/info?filter-lang=ecql')).status, 422);
  });

  it('serves an item of the catalogue, and the WMTS documents and map pages of searches and items', async () => {
    const item = catalogue.items.find((i) => i.collection === 'alpha' && i.id.endsWith('-3'))!;
    const base = `/collections/alpha/items/${item.id}`;
    const [w, s, e, n] = item.bbox;
    const [lon, lat] = [(w + e) / 2, (s + n) / 2];
    assert.deepEqual(((await (await tessera.get(`${base}/assets`)).json()) as string[]).sort(), Object.keys(item.assets).sort());
    // rio-tiler 9's Info: the asset's own bounds and CRS, each band described.
    const info = (await (await tessera.get(`${base}/info?assets=visual`)).json()) as Record<string, { bounds: number[]; crs: string; count: number }>;
    assert.deepEqual(Object.keys(info), ['visual']);
    assert.deepEqual([info['visual']!.bounds, info['visual']!.crs, info['visual']!.count], [item.bbox, 'http://www.opengis.net/def/crs/EPSG/0/4326', 3]);
    assert.equal((await tessera.get(`${base}/info`)).status, 422, 'assets are named');
    const tj = (await (await tessera.get(`${base}/WebMercatorQuad/tilejson.json?assets=visual`)).json()) as { bounds: number[]; tiles: string[] };
    assert.deepEqual(tj.bounds, item.bbox);
    assert.match(tj.tiles[0]!, new RegExp(`${base}/tiles/WebMercatorQuad/\\{z\\}/\\{x\\}/\\{y\\}\\?assets=visual&tilesize=512$`));
    const z = 9;
    const x = Math.floor(((lon + 180) / 360) * 2 ** z);
    const r = (lat * Math.PI) / 180;
    const y = Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * 2 ** z);
    const tile = await tessera.get(`${base}/tiles/WebMercatorQuad/${z}/${x}/${y}.png?assets=visual`);
    assert.equal(tile.status, 200);
    const { info: png } = await sharp(Buffer.from(await tile.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.deepEqual([png.width, png.height], [256, 256]);
    const point = (await (await tessera.get(`${base}/point/${lon},${lat}?assets=visual`)).json()) as { values: Array<number | null>; band_names: string[] };
    assert.equal(point.values.length, 3);
    assert.deepEqual(point.band_names, ['b1', 'b2', 'b3']);
    assert.ok(point.values.every((v) => typeof v === 'number'));
    const missing = await tessera.get('/collections/alpha/items/nope/assets');
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { detail: "No item 'nope' found in 'alpha' collection" });
    assert.equal((await tessera.get(`${base}/tiles/WebMercatorQuad/${z}/${x}/${y}.png`)).status, 400, 'assets or an expression');

    // WMTS: every grid, the search's id titling its layers, the query carried into the tile URLs.
    const id = await register(tessera, { collections: ['alpha'], metadata: { defaults: { rgb: { assets: ['visual'], rescale: [[0, 200]] } } } });
    const wmts = await tessera.get(`/searches/${id}/WMTSCapabilities.xml?assets=visual`);
    assert.equal(wmts.status, 200);
    assert.match(wmts.headers.get('content-type') ?? '', /application\/xml/);
    const xml = await wmts.text();
    assert.ok(xml.includes(`<ows:Identifier>${id}_WebMercatorQuad_default</ows:Identifier>`));
    assert.ok(xml.includes(`<ows:Identifier>${id}_WorldCRS84Quad_rgb</ows:Identifier>`), 'a layer per render');
    assert.ok(xml.includes(`/searches/${id}/tiles/WebMercatorQuad/{TileMatrix}/{TileCol}/{TileRow}.png?assets=visual"`));
    const rgbUrls = [...xml.matchAll(/<ows:Identifier>[^<]*_WebMercatorQuad_rgb<\/ows:Identifier>[\s\S]*?template="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(
      rgbUrls.map((u) => u!.replace(tessera.url, '')),
      // The render's keys in titiler-pgstac's order (its defaults_params pops and puts back rescale, then assets).
      [`/searches/${id}/tiles/WebMercatorQuad/{TileMatrix}/{TileCol}/{TileRow}.png?rescale=0%2C200&amp;assets=visual`],
    );
    const itemWmts = await (await tessera.get(`${base}/WMTSCapabilities.xml?assets=visual`)).text();
    assert.ok(itemWmts.includes('<ows:Identifier>TiTiler_WebMercatorQuad_default</ows:Identifier>'));
    const map = await tessera.get(`/searches/${id}/WebMercatorQuad/map.html?assets=visual`);
    assert.equal(map.status, 200);
    assert.match(map.headers.get('content-type') ?? '', /text\/html/);
    // The page's configuration is JSON in a script element (`&` written \u0026).
    assert.ok((await map.text()).includes(`/searches/${id}/WebMercatorQuad/tilejson.json?assets=visual\\u0026tilesize=256`));
    assert.equal((await tessera.get(`/collections/alpha/WMTSCapabilities.xml?assets=visual&filter=${encodeURIComponent('a = ')}`)).status, 400);
  });

  it('lists the registered mosaics: metadata filters, sortby, pages', async () => {
    for (const name of ['list-c', 'list-a', 'list-b']) await register(tessera, { collections: ['beta'], metadata: { name, owner: 'lister' } });
    await register(tessera, { collections: ['beta'], metadata: { name: 'list-search', owner: 'lister', type: 'search' } });
    const res = await tessera.get('/searches/?owner=lister&sortby=-name&limit=2&offset=1');
    assert.equal(res.status, 200);
    const page = (await res.json()) as {
      searches: Array<{ search: { metadata: { name: string } }; links: Array<{ rel: string }> }>;
      links: Array<{ rel: string; href: string }>;
      context: unknown;
    };
    assert.deepEqual(
      page.searches.map((s) => s.search.metadata.name),
      ['list-b', 'list-a'],
    );
    assert.deepEqual(page.context, { returned: 2, limit: 2, matched: 3 });
    assert.deepEqual(
      page.links.map((l) => [l.rel, l.href.replace(tessera.url, '')]),
      [
        ['self', '/searches/list?owner=lister&sortby=-name&limit=2&offset=1'],
        ['next', '/searches/list?owner=lister&sortby=-name&limit=2&offset=3'],
        ['prev', '/searches/list?owner=lister&sortby=-name&limit=2&offset=0'],
      ],
    );
    assert.deepEqual(
      page.searches[0]!.links.map((l) => l.rel),
      ['metadata', 'tilejson'],
    );
    assert.equal((await tessera.get('/searches/list?owner=lister')).status, 200);
    assert.equal((await tessera.get('/searches/?limit=0')).status, 422);
    assert.equal((await tessera.get('/searches/?limit=1001')).status, 422);
  });

  it('documents the routes in /api, a valid OpenAPI 3.1 document with the search id in every path', async () => {
    const doc = (await (await tessera.get('/api')).json()) as {
      paths: Record<string, Record<string, { tags?: string[]; parameters?: Array<{ in: string; name: string }> }>>;
    };
    await SwaggerParser.validate(structuredClone(doc) as never);
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/searches'));
    for (const p of [
      '/searches/register',
      '/searches/',
      '/searches/{search_id}/info',
      '/searches/{search_id}/{tileMatrixSetId}/tilejson.json',
      '/searches/{search_id}/tiles/{tileMatrixSetId}/{z}/{x}/{y}.{format}',
      '/searches/{search_id}/tiles/{tileMatrixSetId}/{z}/{x}/{y}/assets',
      '/searches/{search_id}/point/{lon},{lat}',
      '/searches/{search_id}/point/{lon},{lat}/assets',
      '/searches/{search_id}/bbox/{minx},{miny},{maxx},{maxy}/assets',
    ]) {
      assert.ok(paths.includes(p), p);
    }
    for (const p of paths) {
      for (const op of Object.values(doc.paths[p]!)) {
        assert.deepEqual(op.tags, ['STAC Search'], p);
        if (!['/searches/register', '/searches/', '/searches/list'].includes(p))
          assert.ok(
            op.parameters?.some((x) => x.in === 'path' && x.name === 'search_id'),
            p,
          );
      }
    }
  });

  it('refuses invalid bodies and limits with 400, what pgSTAC refuses too', async () => {
    const cases: Array<[string, RegExp]> = [
      ['[]', /expected a JSON object/],
      ['{"bbox":[1,2]}', /bbox: a bounding box has 4 or 6 numbers/],
      ['{"bbox":[10,2,1,4]}', /maximum longitude/],
      ['{"collections":"alpha"}', /collections: expected a list of strings/],
      ['{"bbox":[1,2,3,4],"intersects":{"type":"Point","coordinates":[1,2]}}', /mutually exclusive/],
      ['{"intersects":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0.5]]]}}', /linear ring/],
      ['{"query":{"eo:cloud_cover":{"in":[1]}}}', /unknown operator 'in'/],
      ['{"sortby":[{"field":"datetime","direction":"up"}]}', /direction/],
      ['{"filter-lang":"cql2-text","filter":"a = = 1"}', /Invalid CQL2 filter: expected a property, a literal, a function or “\(” at character 5/],
      ['{"filter-lang":"cql2-text","filter":{"op":"=","args":[{"property":"a"},1]}}', /with filter-lang cql2-text, expected CQL2-text/],
      [`{"filter":"${'('.repeat(80)}a = 1${')'.repeat(80)}"}`, /nested deeper than 64 levels/],
      ['{"metadata":{"minzoom":6.5}}', /metadata.minzoom: expected a whole number/],
      ['{"datetime":"not a date"}', /pgSTAC refused the search/],
      ['{"filter":{"op":"nope","args":[]}}', /pgSTAC refused the search: Operator nope Not Supported/],
    ];
    for (const [body, detail] of cases) {
      const res = await tessera.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body });
      const text = await res.text();
      assert.equal(res.status, 400, `${body}: ${text}`);
      assert.match((JSON.parse(text) as { detail: string }).detail, detail, body);
    }
    // A CQL2-text filter at registration is stored as the CQL2-JSON cql2 writes for it (numbers as floats).
    const textId = await register(tessera, { collections: ['alpha'], filter: 'eo:cloud_cover < 50', 'filter-lang': 'cql2-text' });
    const jsonBody = '{"collections":["alpha"],"filter":{"op":"<","args":[{"property":"eo:cloud_cover"},50.0]}}';
    const viaJson = await tessera.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body: jsonBody });
    assert.equal(((await viaJson.json()) as { id: string }).id, textId);
    const id = await register(tessera, { collections: ['alpha'] });
    for (const q of ['scan_limit=-1', 'items_limit=-5', 'time_limit=60', 'items_limit=5000', 'scan_limit=1000000000']) {
      const res = await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/9/265/187/assets?${q}`);
      assert.equal(res.status, 400, q);
    }
    assert.equal((await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/9/265/187/assets?items_limit=many`)).status, 422);
    assert.equal((await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/x/265/187/assets`)).status, 422);
  });

  it('reads asset hrefs under the URL policy: a refused host is never reached', async () => {
    const evil = {
      type: 'Feature',
      stac_version: '1.0.0',
      id: 'evil',
      collection: 'beta',
      bbox: [30, 10, 31, 11],
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [30, 10],
            [31, 10],
            [31, 11],
            [30, 11],
            [30, 10],
          ],
        ],
      },
      properties: { datetime: '2023-05-05T00:00:00Z' },
      assets: { visual: { href: 'http://169.254.169.254/latest/meta-data.tif', type: 'image/tiff; application=geotiff' } },
      links: [],
    };
    await catalogue.psql(`SELECT pgstac.upsert_item('${JSON.stringify(evil)}'::jsonb)`);
    const id = await register(tessera, { ids: ['evil'] });
    const res = await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/9/299/240.png?assets=visual`);
    const text = await res.text();
    assert.ok(res.status === 400 || res.status === 403, `${res.status}: ${text}`);
    assert.match(text, /169\.254\.169\.254|not allowed|refused/i);
  });

  it('readies connections to the catalogue and the tile path before it serves, leaving nothing behind', async () => {
    const searches = await catalogue.psql('SELECT count(*) FROM pgstac.searches');
    // The default network policy (the helper's opens loopback): the warm-up's COG must pass it all the same.
    const fresh = await startTessera({ pgstacDsn: catalogue.dsn, pgstacPoolWarm: 3, pgstacPoolSize: 5, tileCacheBytes: 16 << 20, allowedNetworks: [] });
    try {
      const stats = () => fresh.services.searches!.catalogue.stats();
      assert.equal(stats().total, 0, 'no connection before the warm-up');
      const asked: Array<{ url: string; headers: Record<string, string> }> = [];
      const statuses = await fresh.services.warm(10_000, (url, headers) => {
        asked.push({ url, headers });
        return fresh.app.inject({ method: 'GET', url, headers }).then((res) => res.statusCode);
      });
      // Each readied connection ran pgSTAC's search once, in a transaction rolled back, and stays open.
      assert.equal(stats().total, 3);
      assert.equal(stats().idle, 3);
      assert.equal(await catalogue.psql('SELECT count(*) FROM pgstac.searches'), searches, 'the warm-up registered no search');
      // The tile routes were asked in process, marked as the warm-up's: /cog's and a search's, over the
      // warm-up's COG (served on loopback by the gateway's thread), all answered.
      const cogTiles = asked.filter((a) => a.url.startsWith('/cog/tiles/'));
      const searchTiles = asked.filter((a) => a.url.startsWith('/searches/'));
      assert.equal(cogTiles.length, 4);
      assert.equal(searchTiles.length, 4);
      assert.deepEqual(
        statuses,
        asked.map(() => 200),
      );
      assert.ok(asked.every((a) => a.headers['x-tessera-warm-up'] === fresh.services.warmUpToken));
      const metrics = await (await fresh.get('/metrics')).text();
      // The warm-up's requests are not counted as requests.
      assert.doesNotMatch(metrics, /^tessera_http_requests_total\{/m);
      assert.match(metrics, /^tessera_pgstac_connections 3$/m);
      // The tiles read to warm the tile path (read they were), their raster's handles closed, its memory file gone.
      const reads = [...metrics.matchAll(/^tessera_gdal_reads_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
      assert.ok(reads >= 8, `the warm-up's tiles were read (${reads} reads)`);
      assert.match(metrics, /^tessera_gdal_handles_open 0$/m);
      assert.throws(() => gdal.fs.stat('/vsimem/tessera-warm-up.tif'));
      // Once it is over, none of it is left: the COG's URL is refused as any loopback URL, the search
      // is unknown (to the catalogue, and to the tile cache, which kept none of the warm-up's tiles).
      const cogUrl = new URL(cogTiles[0]!.url, 'http://x').searchParams.get('url')!;
      assert.match(cogUrl, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\.tif$/);
      const refused = await fresh.get(`/cog/info?url=${encodeURIComponent(cogUrl)}`);
      assert.equal(refused.status, 400, await refused.clone().text());
      assert.equal((await fresh.get(searchTiles[0]!.url)).status, 404);
      assert.equal((await fresh.get(cogTiles[0]!.url)).status, 400);
      // The unknown search cost no connection: a connection is kept when pgSTAC only refused what it was asked.
      assert.equal(stats().total, 3);
    } finally {
      await fresh.close();
    }
    // A database that cannot be reached: the warm-up gives up within its bound, and start goes on.
    const down = await startTessera({ pgstacDsn: 'postgresql://postgres@127.0.0.1:1/postgres', pgstacStatementTimeoutMs: 5000 });
    try {
      const started = performance.now();
      await down.services.warm(1500);
      assert.ok(performance.now() - started < 3000, `warm-up bounded (${(performance.now() - started).toFixed(0)} ms)`);
      assert.equal((await down.get('/healthz')).status, 200);
    } finally {
      await down.close();
    }
  });

  it('answers 503 with Retry-After when the database is down or slow, and keeps serving the rest', async () => {
    // Nothing listens there: connections are refused at once.
    const down = await startTessera({ pgstacDsn: 'postgresql://postgres@127.0.0.1:1/postgres', pgstacStatementTimeoutMs: 1000 });
    try {
      for (const url of ['/searches/abc/info', '/searches/abc/tiles/WebMercatorQuad/9/265/187.png?assets=visual']) {
        const res = await down.get(url);
        assert.equal(res.status, 503, url);
        assert.equal(res.headers.get('retry-after'), '1');
        assert.match(((await res.json()) as { detail: string }).detail, /catalogue could not answer/);
      }
      const registering = await down.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body: '{}' });
      assert.equal(registering.status, 503);
      assert.equal((await down.get('/healthz')).status, 200);
      assert.equal((await down.get('/tileMatrixSets')).status, 200);
    } finally {
      await down.close();
    }

    // Slow: the items table locked by another session; the search is cut at time_limit + 1 s.
    const id = await register(tessera, { collections: ['beta'] });
    const locker = spawn('/usr/lib/postgresql/15/bin/psql', [
      '-X',
      '-q',
      '-d',
      catalogue.dsn,
      '-c',
      'BEGIN; LOCK TABLE pgstac.items IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(6); COMMIT;',
    ]);
    const unlocked = new Promise((resolve) => locker.once('exit', resolve));
    try {
      await new Promise((r) => setTimeout(r, 500));
      const t0 = Date.now();
      const res = await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/9/266/186/assets?time_limit=1`);
      const ms = Date.now() - t0;
      assert.equal(res.status, 503, await res.clone().text());
      assert.equal(res.headers.get('retry-after'), '1');
      assert.ok(ms < 3000, `answered in ${ms} ms (time_limit 1 s + 1 s)`);
      assert.equal((await tessera.get('/healthz')).status, 200);
    } finally {
      await unlocked;
    }
    // Once the lock is gone the same lookup answers (a failure is never kept).
    assert.equal((await tessera.get(`/searches/${id}/tiles/WebMercatorQuad/9/266/186/assets?time_limit=1`)).status, 200);
  });
});
