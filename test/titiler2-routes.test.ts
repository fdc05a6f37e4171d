/**
 * TiTiler 2.x requests over HTTP under both values of TESSERA_TITILER_API (issue 37): what only 2.x
 * clients send (`tilesize`, the OGC tileset documents, `/conformance`, `/{tms}/map.html`, `f=json`)
 * is answered under both; where the generations collide (api/generations.ts) each value answers
 * its own generation, and 0.18's URLs keep their answers under 0.18. Parity of the 2.x answers with
 * the real TiTiler 2.4.0 is test/parity/titiler2-core.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startFileServer, fixtureItem, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COLLISIONS, withCollisionTable } from '../src/api/generations.js';
import { REPO_ROOT } from './helpers/paths.js';

const MAPS_CLASS = 'https://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/core';

async function size(res: Response): Promise<[number, number]> {
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  return [meta.width ?? 0, meta.height ?? 0];
}

describe('TiTiler 2.x requests, under both settings', () => {
  let files: FileServer;
  let v018: RunningTessera;
  let v2: RunningTessera;
  let cog: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    [v018, v2] = await Promise.all([startTessera(), startTessera({ titilerApi: '2' })]);
    cog = encodeURIComponent(`${files.url}/cog.tif`);
  });
  after(async () => {
    await Promise.all([v018?.close(), v2?.close()]);
    await files?.close();
  });

  it('cuts tiles at `tilesize` under both, and bounds it', async () => {
    for (const server of [v018, v2]) {
      const tile = await server.get(`/cog/tiles/WebMercatorQuad/7/44/25.png?url=${cog}&tilesize=512&rescale=0,1000`);
      assert.equal(tile.status, 200, await tile.clone().text());
      assert.deepEqual(await size(tile), [512, 512]);
      // A scale in the path is 0.18's request; `tilesize` wins where both are given.
      const both = await server.get(`/cog/tiles/WebMercatorQuad/7/44/25@2x.png?url=${cog}&tilesize=128&rescale=0,1000`);
      assert.deepEqual(await size(both), [128, 128]);
      const scaled = await server.get(`/cog/tiles/WebMercatorQuad/7/44/25@2x.png?url=${cog}&rescale=0,1000`);
      assert.deepEqual(await size(scaled), [512, 512]);
      const huge = await server.get(`/cog/tiles/WebMercatorQuad/7/44/25.png?url=${cog}&tilesize=5000`);
      assert.equal(huge.status, 400);
      assert.match(((await huge.json()) as { detail: string }).detail, /tilesize/);
      assert.equal((await server.get(`/cog/tiles/WebMercatorQuad/7/44/25.png?url=${cog}&tilesize=0`)).status, 422);
    }
  });

  it("cuts a tile without size at 256 px under 0.18 and at the grid's own size under 2 (collision defaultTileSize)", async () => {
    const path = `/cog/tiles/CDB1GlobalGrid/-3/120/16.png?url=${cog}&rescale=0,1000`;
    assert.deepEqual(await size(await v018.get(path)), [256, 256]);
    assert.deepEqual(await size(await v2.get(path)), [128, 128]);
  });

  it('writes 2.x tile URLs into a TileJSON that carries `tilesize`, and as the setting says without one', async () => {
    for (const server of [v018, v2]) {
      const sized = (await (await server.get(`/cog/WebMercatorQuad/tilejson.json?url=${cog}&tilesize=512`)).json()) as { tiles: string[] };
      assert.match(sized.tiles[0]!, /\/cog\/tiles\/WebMercatorQuad\/\{z\}\/\{x\}\/\{y\}\?url=.*&tilesize=512$/);
    }
    const plain = (await (await v018.get(`/cog/WebMercatorQuad/tilejson.json?url=${cog}`)).json()) as { tiles: string[] };
    assert.match(plain.tiles[0]!, /\{y\}@1x\?url=/);
    // Without tilesize, the grid-path TileJSON is the collision tilejsonTiles: 2.x's URLs at 512 px under 2.
    const v2plain = (await (await v2.get(`/cog/WebMercatorQuad/tilejson.json?url=${cog}&tile_format=png`)).json()) as { tiles: string[] };
    assert.match(v2plain.tiles[0]!, /\{y\}\.png\?url=[^&]*&tilesize=512$/);
    // The grid-less form is 0.18's alone: its URLs keep their scale under both.
    const gridless = (await (await v2.get(`/cog/tilejson.json?url=${cog}`)).json()) as { tiles: string[] };
    assert.match(gridless.tiles[0]!, /\{y\}@1x\?url=/);
  });

  it('serves the OGC tileset list and tilesets under both', async () => {
    for (const server of [v018, v2]) {
      const list = (await (await server.get(`/cog/tiles?url=${cog}`)).json()) as { tilesets: Array<{ title: string }> };
      assert.equal(list.tilesets.length, 14);
      const one = (await (await server.get(`/cog/tiles/WebMercatorQuad?url=${cog}&minzoom=5&maxzoom=6`)).json()) as {
        tileMatrixSetLimits: Array<{ tileMatrix: string }>;
      };
      assert.deepEqual(
        one.tileMatrixSetLimits.map((l) => l.tileMatrix),
        ['5', '6'],
      );
      const html = await server.get(`/cog/tiles?url=${cog}`, { accept: 'text/html' });
      assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
      // Zoom ranges are sized by the client: bounded, and a zoom the grid lacks is a 400 (never a 500, never a long loop).
      for (const zooms of ['minzoom=-5&maxzoom=100000', 'maxzoom=99999999999']) {
        const res = await server.get(`/cog/tiles/WebMercatorQuad?url=${cog}&${zooms}`);
        assert.equal(res.status, 400, zooms);
      }
      assert.equal((await server.get(`/cog/tiles/CDB1GlobalGrid?url=${cog}&maxzoom=30`)).status, 400);
      // A STAC item's tilesets need no assets.
      const stac = await server.get(`/stac/tiles/WebMercatorQuad?url=${encodeURIComponent(`${files.url}/item.json`)}`);
      assert.notEqual(stac.status, 400);
    }
  });

  it('serves the map page at /{tms}/map.html under both, and /{tms}/map (0.18) under both', async () => {
    for (const server of [v018, v2]) {
      const page = await server.get(`/cog/WorldCRS84Quad/map.html?url=${cog}`);
      assert.equal(page.status, 200);
      // The page's configuration (JSON in the page, `&` escaped) asks the TileJSON for 256 px tiles.
      assert.match(await page.text(), /WorldCRS84Quad\/tilejson\.json\?url=[^"]*\\u0026tilesize=256"/);
      const old = await server.get(`/cog/WebMercatorQuad/map?url=${cog}`);
      assert.equal(old.status, 200);
      assert.match(old.headers.get('content-type') ?? '', /^text\/html/);
    }
  });

  it('answers /{prefix}/map as 0.18 (a page) or 2.x (an OGC API – Maps image) (collision prefixMap)', async () => {
    const page = await v018.get(`/cog/map?url=${cog}&tileMatrixSetId=WorldCRS84Quad`);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /WorldCRS84Quad\/tilejson\.json/);
    const image = await v2.get(`/cog/map?url=${cog}&bbox=-60,73,-55,74&width=200&height=100&rescale=0,1000`);
    assert.equal(image.status, 200, await image.clone().text());
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.deepEqual(await size(image), [200, 100]);
    const jpeg = await v2.get(`/cog/map?url=${cog}&width=64&height=64&rescale=0,1000`, { accept: 'image/jpeg' });
    assert.equal(jpeg.headers.get('content-type'), 'image/jpeg');
    // The mosaic's 2.x `/map` reads an area (MosaicTilerFactory's add_ogc_maps): without `bbox` a 400, not the 0.18 page.
    const mosaicMap = await v2.get(`/mosaicjson/map?url=${encodeURIComponent(`${files.url}/mosaic.json`)}`);
    assert.equal(mosaicMap.status, 400);
    assert.match(mosaicMap.headers.get('content-type') ?? '', /json/);
    assert.equal((await v018.get(`/mosaicjson/map?url=${encodeURIComponent(`${files.url}/mosaic.json`)}`)).status, 200);
  });

  it('answers /{prefix}/WMTSCapabilities.xml with one grid (0.18) or every grid (2) (collision wmts); /{tms}/WMTSCapabilities.xml under both', async () => {
    const one = await (await v018.get(`/cog/WMTSCapabilities.xml?url=${cog}&tilesize=512`)).text();
    assert.equal(one.match(/<Layer>/g)?.length, 1);
    const template = /template="([^"]*)"/.exec(one)?.[1] ?? '';
    assert.match(template, /\{TileRow\}@1x\.png\?url=/);
    assert.doesNotMatch(template, /tilesize/, 'WMTS matrices say 256 px: tilesize is not forwarded');
    assert.equal((await v2.get(`/cog/WMTSCapabilities.xml?url=${cog}&zooms=*::0,1000`)).status, 400);
    assert.equal((await v2.get(`/cog/WMTSCapabilities.xml?url=${cog}&zooms=NotAGrid::1,2`)).status, 400);
    const every = await (await v2.get(`/cog/WMTSCapabilities.xml?url=${cog}&zooms=*::5,6`)).text();
    assert.equal(every.match(/<Layer>/g)?.length, 14);
    assert.match(every, /cog\.tif_WebMercatorQuad_default<\/ows:Identifier>/);
    for (const server of [v018, v2]) {
      const grid = await server.get(`/cog/WorldCRS84Quad/WMTSCapabilities.xml?url=${cog}`);
      assert.equal(grid.status, 200);
      assert.equal((await grid.text()).match(/<Layer>/g)?.length, 1);
    }
  });

  it('answers / as the HTML page (0.18) or by Accept (2), and f=json under both (collision landing)', async () => {
    const html = await v018.get('/', { accept: 'application/json' });
    assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal((await v018.get('/?f=xml')).status, 200, '0.18 takes no query on /');
    const json = await v2.get('/');
    assert.equal(json.headers.get('content-type'), 'application/json');
    const page = await v2.get('/', { accept: 'text/html' });
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal((await v2.get('/?f=xml')).status, 422);
    for (const server of [v018, v2]) {
      const doc = (await (await server.get('/?f=json')).json()) as { links: Array<{ rel: string }> };
      assert.ok(doc.links.some((l) => l.rel === 'http://www.opengis.net/def/rel/ogc/1.0/conformance'));
    }
  });

  it('declares conformance under both, OGC API – Maps only where /map is that API', async () => {
    const a = (await (await v018.get('/conformance')).json()) as { conformsTo: string[] };
    const b = (await (await v2.get('/conformance')).json()) as { conformsTo: string[] };
    assert.ok(a.conformsTo.includes('http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tileset'));
    assert.ok(!a.conformsTo.includes(MAPS_CLASS));
    assert.ok(b.conformsTo.includes(MAPS_CLASS));
  });

  it("answers /healthz with 0.18's ping or 2.4.0's versions (collision healthz)", async () => {
    assert.deepEqual(await (await v018.get('/healthz')).json(), { ping: 'pong!' });
    const health = (await (await v2.get('/healthz')).json()) as { versions: Record<string, string> };
    assert.deepEqual(Object.keys(health.versions), ['titiler', 'tessera', 'gdal']);
    assert.equal(health.versions['titiler'], '2.4.0');
    assert.match(health.versions['gdal']!, /^3\.\d+\.\d+/);
  });

  it('requires `assets` on reads of a STAC item under 2 (422, as 2.4.0), "assets or expression" under 0.18 (collision stacAssets)', async () => {
    files.put('/assets-item.json', await fixtureItem(files.url));
    const item = encodeURIComponent(`${files.url}/assets-item.json`);
    const missing = { detail: [{ type: 'missing', loc: ['query', 'assets'], msg: 'Field required', input: null }] };
    for (const path of [
      `/stac/info?url=${item}`,
      `/stac/statistics?url=${item}`,
      `/stac/tiles/WebMercatorQuad/9/289/207?url=${item}&expression=B01_b1`,
      `/stac/WebMercatorQuad/tilejson.json?url=${item}`,
      `/stac/point/23.878,32.063?url=${item}`,
      `/stac/preview?url=${item}`,
    ]) {
      const res = await v2.get(path);
      assert.equal(res.status, 422, path);
      assert.deepEqual(await res.json(), missing, path);
    }
    assert.equal((await v2.get(`/stac/info?url=${item}&assets=B01`)).status, 200);
    assert.equal((await v018.get(`/stac/info?url=${item}`)).status, 200, 'every asset under 0.18');
    assert.equal((await v018.get(`/stac/tiles/WebMercatorQuad/9/289/207?url=${item}&expression=B01_b1`)).status, 200);
    const refused = await v018.get(`/stac/point/23.878,32.063?url=${item}`);
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), { detail: 'assets must be defined either via expression or assets options.' });
  });

  it('declares every collision with an answer for each value, and docs/titiler2.md lists them as declared (run `make docs` after changing one)', () => {
    const page = readFileSync(path.join(REPO_ROOT, 'docs/titiler2.md'), 'utf8');
    assert.equal(page, withCollisionTable(page), 'docs/titiler2.md is out of date: run make docs');
    for (const c of Object.values(COLLISIONS)) {
      assert.ok(c.answers['0.18'].length > 0 && c.answers['2'].length > 0);
      assert.ok(page.includes(c.where.replace(/\|/g, '\\|')), c.where);
    }
  });
});
