/**
 * /cog over HTTP, tessera alone: the family mounted by the route factory answers every form a
 * TiTiler client sends (parity with TiTiler's pixels is test/parity/cog.test.ts), and client
 * mistakes TiTiler answers with a 500 get a 400 that says what is wrong.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

describe('/cog routes', () => {
  let files: FileServer;
  let tessera: RunningTessera;
  let b01: string;
  let tci: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    tessera = await startTessera();
    b01 = encodeURIComponent(`${files.url}/B01.tif`);
    tci = encodeURIComponent(`${files.url}/TCI.tif`);
  });
  after(async () => {
    await tessera?.close();
    await files?.close();
  });

  const detail = async (res: Response): Promise<string> => ((await res.json()) as { detail: string }).detail;

  it('serves bounds, info, tiles in both forms, TileJSON, WMTS and the map page', async () => {
    const bounds = (await (await tessera.get(`/cog/bounds?url=${b01}`)).json()) as { bounds: number[] };
    assert.equal(bounds.bounds.length, 4);
    const info = (await (await tessera.get(`/cog/info?url=${tci}`)).json()) as { count: number; band_descriptions: unknown[] };
    assert.equal(info.count, 3);

    const withGrid = await tessera.get(`/cog/tiles/WebMercatorQuad/9/289/207.png?url=${b01}&rescale=0,1000`);
    const withoutGrid = await tessera.get(`/cog/tiles/9/289/207.png?url=${b01}&rescale=0,1000`);
    assert.equal(withGrid.status, 200);
    assert.equal(withoutGrid.status, 200);
    assert.ok(Buffer.from(await withGrid.arrayBuffer()).equals(Buffer.from(await withoutGrid.arrayBuffer())), 'the form without a grid is WebMercatorQuad');
    const crs84 = await tessera.get(`/cog/tiles/8/289/82.png?url=${b01}&tileMatrixSetId=WorldCRS84Quad&rescale=0,1000`);
    assert.equal(crs84.status, 200, await crs84.clone().text());

    const tilejson = (await (await tessera.get(`/cog/tilejson.json?url=${b01}&bidx=1&tileMatrixSetId=WorldCRS84Quad`)).json()) as { tiles: string[] };
    assert.match(tilejson.tiles[0]!, /\/cog\/tiles\/WorldCRS84Quad\/\{z\}\/\{x\}\/\{y\}@1x\?url=.*&bidx=1$/);
    const wmts = await tessera.get(`/cog/WMTSCapabilities.xml?url=${b01}`);
    assert.equal(wmts.status, 200);
    assert.match(await wmts.text(), /\/cog\/tiles\/WebMercatorQuad\/\{TileMatrix\}\/\{TileCol\}\/\{TileRow\}@1x\.png/);

    for (const path of [`/cog/WebMercatorQuad/map?url=${b01}`, `/cog/map?url=${b01}&tileMatrixSetId=WorldCRS84Quad`]) {
      const page = await tessera.get(path);
      assert.equal(page.status, 200, path);
      assert.match(await page.text(), /tilejson\.json/);
    }
    const crs84Map = await (await tessera.get(`/cog/map?url=${b01}&tileMatrixSetId=WorldCRS84Quad`)).text();
    assert.match(crs84Map, /WorldCRS84Quad\/tilejson\.json/, 'the map without a grid in the path draws the grid of the query');
  });

  it('reads bands by bidx and expression, with b1 … bn names', async () => {
    const point = (await (await tessera.get(`/cog/point/23.878,32.063?url=${tci}&bidx=3&bidx=1`)).json()) as { band_names: string[]; values: number[] };
    assert.deepEqual(point.band_names, ['b3', 'b1']);
    const expr = (await (await tessera.get(`/cog/point/23.878,32.063?url=${tci}&expression=${encodeURIComponent('b1*2;b3')}`)).json()) as {
      band_names: string[];
      values: number[];
    };
    assert.deepEqual(expr.band_names, ['b1*2', 'b3']);
    assert.equal(expr.values[0], point.values[1]! * 2);
    assert.equal(expr.values[1], point.values[0]);
    const preview = await tessera.get(`/cog/preview.png?url=${tci}&max_size=64&expression=${encodeURIComponent('(b1-b3)/(b1+b3)')}&rescale=-1,1`);
    assert.equal(preview.status, 200);
    const meta = await sharp(Buffer.from(await preview.arrayBuffer())).metadata();
    assert.equal(Math.max(meta.width!, meta.height!), 64);
  });

  it('takes format and scale from the query where the path has none, as TiTiler does', async () => {
    const png = await tessera.get(`/cog/tiles/WebMercatorQuad/9/289/207?url=${b01}&rescale=0,1000&format=png`);
    assert.equal(png.headers.get('content-type'), 'image/png');
    const big = await tessera.get(`/cog/tiles/9/289/207?url=${b01}&rescale=0,1000&format=png&scale=2`);
    const meta = await sharp(Buffer.from(await big.arrayBuffer())).metadata();
    assert.deepEqual([meta.width, meta.height], [512, 512]);
    const pathWins = await tessera.get(`/cog/tiles/9/289/207@1x.png?url=${b01}&rescale=0,1000&format=jpeg&scale=2`);
    assert.equal(pathWins.headers.get('content-type'), 'image/png');
    assert.equal((await sharp(Buffer.from(await pathWins.arrayBuffer())).metadata()).width, 256);
    const jpeg = await tessera.get(`/cog/preview?url=${tci}&max_size=64&format=jpeg`);
    assert.equal(jpeg.headers.get('content-type'), 'image/jpeg');
    const feature = await tessera.request(`/cog/feature?url=${b01}&format=png&rescale=0,1000`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'Feature',
        properties: {},
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [23.6, 31.9],
              [23.9, 31.85],
              [24.0, 32.2],
              [23.6, 31.9],
            ],
          ],
        },
      }),
    });
    assert.equal(feature.headers.get('content-type'), 'image/png');
    // A FeatureCollection where a Feature is expected: FastAPI's 422, entry for entry as TiTiler 0.18.10 answers it.
    const collection = { type: 'FeatureCollection', features: [] };
    const refused = await tessera.request(`/cog/feature?url=${b01}&format=png`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(collection),
    });
    assert.equal(refused.status, 422);
    assert.deepEqual(await refused.json(), {
      detail: [
        { type: 'literal_error', loc: ['body', 'type'], msg: "Input should be 'Feature'", input: 'FeatureCollection', ctx: { expected: "'Feature'" } },
        { type: 'missing', loc: ['body', 'geometry'], msg: 'Field required', input: collection },
        { type: 'missing', loc: ['body', 'properties'], msg: 'Field required', input: collection },
      ],
    });
    assert.equal((await tessera.get(`/cog/tiles/9/289/207?url=${b01}&scale=5`)).status, 422);
    assert.equal((await tessera.get(`/cog/tiles/9/289/207?url=${b01}&format=gif`)).status, 422);
  });

  it('validates a COG and makes a STAC item of one, bounded in what the request sizes', async () => {
    const report = (await (await tessera.get(`/cog/validate?url=${tci}`)).json()) as { COG: boolean; IFD: unknown[]; GEO: { CRS: string } };
    assert.equal(report.COG, true);
    assert.equal(report.IFD.length, 6);
    assert.equal(report.GEO.CRS, 'EPSG:32634');
    const strips = (await (await tessera.get(`/cog/validate?url=${encodeURIComponent(`${files.url}/non_cog.tif`)}`)).json()) as {
      COG: boolean;
      COG_errors: string[];
    };
    assert.equal(strips.COG, false);
    assert.deepEqual(strips.COG_errors, ['The file is greater than 512xH or 512xW, but is not tiled']);

    const item = (await (await tessera.get(`/cog/stac?url=${b01}&datetime=2021-06-01T10:00:00%2B02:00&max_size=128`)).json()) as {
      id: string;
      properties: Record<string, unknown>;
      assets: { data: { href: string; 'raster:bands': Array<{ statistics: { valid_percent: number } }> } };
    };
    assert.equal(item.id, 'B01.tif');
    assert.equal(item.properties['datetime'], '2021-06-01T10:00:00+02:00');
    assert.equal(item.properties['proj:epsg'], 32634);
    assert.equal((item.properties['proj:projjson'] as { type: string }).type, 'ProjectedCRS');
    assert.equal(item.assets.data.href, `${files.url}/B01.tif`);
    assert.ok(item.assets.data['raster:bands'][0]!.statistics.valid_percent > 0);

    const bad = async (query: string, status: number, pattern: RegExp): Promise<void> => {
      const res = await tessera.get(`/cog/stac?url=${b01}&${query}`);
      assert.equal(res.status, status, query);
      assert.match(JSON.stringify(await res.json()), pattern, query);
    };
    await bad('datetime=yesterday', 400, /Invalid datetime 'yesterday'/);
    await bad('datetime=2021-02-30', 400, /no such date/);
    await bad('geometry_densify=100000', 422, /less than or equal to 10000/);
    await bad('max_size=0', 422, /greater than 0/);
    await bad('asset_media_type=image/gif', 422, /asset_media_type/);
    const small = await startTessera({ maxOutputPixels: 1000 });
    try {
      const res = await small.get(`/cog/stac?url=${b01}&max_size=1024`);
      assert.equal(res.status, 400);
      assert.match(await detail(res), /too large.*max_size/);
    } finally {
      await small.close();
    }
    const refused = await tessera.get(`/cog/stac?url=${encodeURIComponent('file:///etc/passwd')}`);
    assert.equal(refused.status, 400);
  });

  it('answers client mistakes with a 400 that names them (TiTiler: 500)', async () => {
    const badBand = await tessera.get(`/cog/tiles/WebMercatorQuad/9/289/207.png?url=${b01}&bidx=2`);
    assert.equal(badBand.status, 400);
    assert.match(await detail(badBand), /Invalid band index 2 .*1 band/);
    // A STAC-style name on a COG: rio-tiler finds no `b{i}` in it (MissingBands); beside one, the name is refused.
    const noBand = await tessera.get(`/cog/preview.png?url=${b01}&expression=${encodeURIComponent('B01_b1*2')}`);
    assert.equal(noBand.status, 400);
    assert.match(await detail(noBand), /Could not find any valid bands in 'B01_b1\*2' expression/);
    const badName = await tessera.get(`/cog/preview.png?url=${b01}&expression=${encodeURIComponent('b1+B01_b1*2')}`);
    assert.equal(badName.status, 400);
    assert.match(await detail(badName), /'B01_b1' is not a band name/);
    const statistics = await tessera.get(`/cog/statistics?url=${b01}&bidx=4`);
    assert.equal(statistics.status, 400);
    const refused = await tessera.get(`/cog/info?url=${encodeURIComponent('file:///etc/passwd')}`);
    assert.equal(refused.status, 400);
    // Found by the fuzzer: a polygon of ±1e308 made a coverage estimate of NaN bytes, which waited in
    // the whole-image gate until the deadline.
    const started = Date.now();
    const huge = await tessera.request(`/cog/statistics?url=${b01}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'Feature',
        properties: {},
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [-1e308, -1e308],
              [1e308, -1e308],
              [1e308, 1e308],
              [-1e308, -1e308],
            ],
          ],
        },
      }),
    });
    await huge.arrayBuffer();
    assert.ok(huge.status < 500, `status ${huge.status}`);
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  });
});
