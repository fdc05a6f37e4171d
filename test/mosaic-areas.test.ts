/**
 * Mosaic area reads over HTTP (issue 37: TiTiler 2.x's MosaicTilerFactory `/bbox`, `/feature`, POST
 * `/statistics`, and `/map` under TESSERA_TITILER_API=2), over the fixture MosaicJSON on a real file
 * server: an area one asset covers is that asset's own part (the /cog answer, pixel for pixel), an
 * area over two is composed by the pixel selection, features are cut to their shape, statistics name
 * the assets each feature used; and the bounds: TESSERA_MAX_ASSETS and the output-pixel limit refuse
 * before a pixel is read, areas outside the mosaic are 204. Parity with TiTiler 2.4.0 is
 * test/parity/titiler2-mosaic-areas.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFileServer, fixtureMosaic, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { parseNpy } from './helpers/npy.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

function square(w: number, s: number, e: number, n: number, properties: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'Feature',
    properties,
    geometry: {
      type: 'Polygon',
      coordinates: [
        [
          [w, s],
          [e, s],
          [e, n],
          [w, n],
          [w, s],
        ],
      ],
    },
  };
}

describe('mosaic area reads: /mosaicjson/bbox, /feature, POST /statistics, /map', () => {
  let files: FileServer;
  let v018: RunningTessera;
  let v2: RunningTessera;
  let oneAsset: RunningTessera;
  let fewPixels: RunningTessera;
  let mosaic: string;
  let cog1: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    files.put('/mosaics/fixture.json', JSON.stringify(await fixtureMosaic(files.url)));
    mosaic = encodeURIComponent(`${files.url}/mosaics/fixture.json`);
    cog1 = encodeURIComponent(`${files.url}/cog1.tif`);
    [v018, v2, oneAsset, fewPixels] = await Promise.all([
      startTessera(),
      startTessera({ titilerApi: '2' }),
      startTessera({ maxAssets: 1 }),
      startTessera({ maxOutputPixels: 100_000 }),
    ]);
  });
  after(async () => {
    await Promise.all([v018?.close(), v2?.close(), oneAsset?.close(), fewPixels?.close()]);
    await files?.close();
  });

  const npy = async (res: Response): Promise<ReturnType<typeof parseNpy>> => {
    assert.equal(res.status, 200, res.status === 200 ? '' : await res.clone().text());
    return parseNpy(Buffer.from(await res.arrayBuffer()));
  };

  it("reads an area one asset covers as that asset's own part, under both settings", async () => {
    // West of cog2, inside cog1: the index finds cog1 alone there.
    const box = '-75.5,45.5,-74.8,46';
    for (const server of [v018, v2]) {
      const res = await server.get(`/mosaicjson/bbox/${box}/128x128.npy?url=${mosaic}`);
      assert.equal(res.headers.get('x-assets'), `${files.url}/cog1.tif`);
      const [a, b] = await Promise.all([npy(res), npy(await server.get(`/cog/bbox/${box}/128x128.npy?url=${cog1}`))]);
      assert.deepEqual(a.shape, b.shape);
      assert.deepEqual(a.values, b.values);
    }
  });

  it('composes an area over two assets by the pixel selection', async () => {
    const box = '-74,45.3,-72,46.7';
    const first = await v2.get(`/mosaicjson/bbox/${box}/200x150.npy?url=${mosaic}`);
    assert.equal(first.headers.get('x-assets'), `${files.url}/cog1.tif,${files.url}/cog2.tif`);
    const [f, hi, lo] = await Promise.all([
      npy(first),
      npy(await v2.get(`/mosaicjson/bbox/${box}/200x150.npy?url=${mosaic}&pixel_selection=highest`)),
      npy(await v2.get(`/mosaicjson/bbox/${box}/200x150.npy?url=${mosaic}&pixel_selection=lowest`)),
    ]);
    // Three uint16 bands and the mask.
    assert.deepEqual(f.shape, [4, 150, 200]);
    const per = 150 * 200;
    let differ = 0;
    for (let i = 0; i < per; i++) {
      if (f.values[3 * per + i] === 0) continue;
      assert.ok(hi.values[i]! >= f.values[i]! && lo.values[i]! <= f.values[i]!, `pixel ${i}`);
      if (hi.values[i] !== lo.values[i]) differ++;
    }
    assert.ok(differ > 0, 'where the assets overlap, highest and lowest differ');
  });

  it('cuts a feature to its shape and answers statistics with the assets each feature used', async () => {
    const inside = square(-75.5, 45.5, -74.8, 46, { name: 'west' });
    const across = square(-74, 45.5, -72.5, 46.5);
    const triangle = {
      type: 'Feature',
      properties: {},
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [-75.5, 45.2],
            [-72, 45.4],
            [-73.5, 46.8],
            [-75.5, 45.2],
          ],
        ],
      },
    };
    const image = await npy(
      await v2.request(`/mosaicjson/feature.npy?url=${mosaic}&max_size=128`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(triangle) }),
    );
    const [bands, h, w] = image.shape as [number, number, number];
    const mask = image.values.subarray((bands - 1) * h * w);
    // The corner away from the triangle is masked, its middle is not.
    assert.equal(mask[0], 0);
    assert.notEqual(mask[Math.floor(h * 0.7) * w + Math.floor(w / 2)], 0);

    const res = await v018.request(`/mosaicjson/statistics?url=${mosaic}&max_size=128`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ type: 'FeatureCollection', features: [inside, across] }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('content-type'), 'application/geo+json');
    const body = (await res.json()) as {
      features: Array<{ properties: { statistics: Record<string, { max: number }>; name?: string; used_assets: string[] } }>;
    };
    const [west, middle] = body.features.map((f) => f.properties);
    assert.deepEqual(Object.keys(west!), ['statistics', 'name', 'used_assets']);
    assert.deepEqual(west!.used_assets, [`${files.url}/cog1.tif`]);
    assert.deepEqual(middle!.used_assets, [`${files.url}/cog1.tif`, `${files.url}/cog2.tif`]);
    // The mosaic's statistics of an area one asset covers are that asset's (coverage-weighted alike).
    const own = await v018.request(`/cog/statistics?url=${cog1}&max_size=128`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(inside) });
    const cog = (await own.json()) as { properties: { statistics: Record<string, unknown> } };
    assert.deepEqual(west!.statistics, cog.properties.statistics);

    const outside = square(10, 10, 11, 11);
    for (const [path, body] of [
      [`/mosaicjson/feature.png?url=${mosaic}`, outside],
      [`/mosaicjson/statistics?url=${mosaic}`, outside],
    ] as const) {
      assert.equal((await v2.request(path, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) })).status, 204, path);
    }
    assert.equal((await v2.get(`/mosaicjson/bbox/10,10,11,11.png?url=${mosaic}`)).status, 204);
  });

  it('answers /mosaicjson/map as an OGC API – Maps image under 2, the map page under 0.18', async () => {
    const res = await v2.get(`/mosaicjson/map?url=${mosaic}&bbox=-76,45,-72,47&width=300&height=200&f=npy`);
    assert.deepEqual((await npy(res)).shape, [4, 200, 300]);
    const none = await v2.get(`/mosaicjson/map?url=${mosaic}`);
    assert.equal(none.status, 400);
    assert.match(((await none.json()) as { detail: string }).detail, /bbox is required/);
    assert.match((await v018.get(`/mosaicjson/map?url=${mosaic}`)).headers.get('content-type') ?? '', /text\/html/);
  });

  it('bounds the work before reading: TESSERA_MAX_ASSETS and the output-pixel limit', async () => {
    // The index finds both assets for this box: one is too many.
    const over = await oneAsset.get(`/mosaicjson/bbox/-74,45.3,-72,46.7/64x64.png?url=${mosaic}`);
    assert.equal(over.status, 400);
    assert.match(((await over.json()) as { detail: string }).detail, /assets/);
    const feature = JSON.stringify(square(-74, 45.5, -72.5, 46.5));
    assert.equal((await oneAsset.request(`/mosaicjson/statistics?url=${mosaic}`, { method: 'POST', headers: JSON_HEADERS, body: feature })).status, 400);
    // 2000 × 2000 pixels × 3 bands is above the limit of 100,000 values; 64 × 64 is not.
    const huge = await fewPixels.get(`/mosaicjson/bbox/-75.5,45.5,-74.8,46/2000x2000.png?url=${mosaic}`);
    assert.equal(huge.status, 400);
    assert.match(((await huge.json()) as { detail: string }).detail, /2000x2000/);
    assert.equal((await fewPixels.get(`/mosaicjson/bbox/-75.5,45.5,-74.8,46/64x64.png?url=${mosaic}`)).status, 200);
  });

  it('documents the area routes in /api', async () => {
    const doc = (await (await v2.get('/api')).json()) as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/mosaicjson/'));
    for (const want of ['/mosaicjson/feature', '/mosaicjson/statistics', '/mosaicjson/map']) assert.ok(paths.includes(want), `${want} in ${paths.join(' ')}`);
    assert.ok(paths.some((p) => p.startsWith('/mosaicjson/bbox/') && !p.endsWith('/assets')));
    assert.ok(doc.paths['/mosaicjson/statistics']!['post']);
  });
});
