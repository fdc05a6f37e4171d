/**
 * /stac metadata routes, /tileMatrixSets and the global behaviour, over real HTTP: tessera listens on
 * 127.0.0.1 and reads the shared fixtures through a Range-capable file server, so GDAL's /vsicurl/
 * path is the real one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FIXTURES, fixtureItem, startFileServer, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

let files: FileServer;
let tessera: RunningTessera;
let item: string;
const q = (url: string): string => `url=${encodeURIComponent(url)}`;

async function json<T = unknown>(path: string, status = 200): Promise<T> {
  const res = await tessera.get(path);
  const text = await res.text();
  assert.equal(res.status, status, `${path} → ${res.status} ${text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/(geo\+)?json$/);
  return JSON.parse(text) as T;
}

/** The shapes of the JSON answers the tests read fields of. */
type Failure = { detail: string };
type Invalid = { detail: Array<{ type: string; loc: string[] }> };
type B01Info = { B01: { width: number } };
type TileJson = { tiles: string[]; minzoom: number; maxzoom: number; center: number[] };

async function detail(path: string, status: number): Promise<string> {
  const body = await json<{ detail: unknown }>(path, status);
  assert.equal(typeof body.detail, 'string', JSON.stringify(body));
  return body.detail as string;
}

before(async () => {
  files = await startFileServer(FIXTURES);
  files.put('/item.json', await fixtureItem(files.url));
  const b01 = await fs.readFile(path.join(FIXTURES, 'B01.tif'));
  // Cut inside the first IFD: the header cannot be read (pixel-level truncation is an image-route test).
  files.put('/broken/B01.tif', b01.subarray(0, 100), 'image/tiff');
  files.put('/broken/item.json', (await fixtureItem(files.url)).replaceAll(`${files.url}/B0`, `${files.url}/broken/B0`));
  files.put('/missing/item.json', (await fixtureItem(files.url)).replaceAll(`${files.url}/B0`, `${files.url}/nothing/B0`));
  files.put('/not-json.json', 'this is not json', 'text/plain');
  files.put('/not-item.json', JSON.stringify({ type: 'FeatureCollection', features: [] }));
  files.put('/no-readable.json', JSON.stringify({ type: 'Feature', bbox: [0, 0, 1, 1], assets: { a: { href: 'a.txt', type: 'text/plain' } } }));
  files.put('/relative/item.json', JSON.stringify({ type: 'Feature', bbox: [0, 0, 1, 1], links: [], assets: { B01: { href: '../B01.tif' } } }));
  item = `${files.url}/item.json`;
  tessera = await startTessera();
});

after(async () => {
  await tessera?.close();
  await files?.close();
});

describe('/stac/assets, /stac/bounds', () => {
  it('lists the readable assets', async () => {
    assert.deepEqual(await json(`/stac/assets?${q(item)}`), ['B01', 'B09']);
  });

  it('gives the item bbox as bounds', async () => {
    assert.deepEqual(await json(`/stac/bounds?${q(item)}`), {
      bounds: [23.293255090449595, 31.505183020453355, 24.296453548295318, 32.51147809805106],
    });
  });

  it('resolves relative asset hrefs against the item URL', async () => {
    const info = await json<B01Info>(`/stac/info?${q(`${files.url}/relative/item.json`)}`);
    assert.equal(info.B01.width, 183);
  });
});

describe('/stac/info', () => {
  it("reads every asset with rio-tiler's info fields, in order", async () => {
    const res = await tessera.get(`/stac/info?${q(item)}`);
    const text = await res.text();
    const info = JSON.parse(text);
    assert.deepEqual(Object.keys(info), ['B01', 'B09']);
    assert.deepEqual(Object.keys(info.B01), [
      'bounds',
      'minzoom',
      'maxzoom',
      'band_metadata',
      'band_descriptions',
      'dtype',
      'nodata_type',
      'colorinterp',
      'scales',
      'offsets',
      'driver',
      'count',
      'width',
      'height',
      'overviews',
      'nodata_value',
    ]);
    assert.equal(info.B01.minzoom, 8);
    assert.equal(info.B01.maxzoom, 8);
    assert.equal(info.B01.dtype, 'uint16');
    assert.equal(info.B01.nodata_type, 'Nodata');
    assert.deepEqual(info.B01.overviews, [2, 4]);
    const expected = [23.106076243528157, 31.505173744374172, 24.296464503939948, 32.519334871696195];
    info.B01.bounds.forEach((v: number, i: number) => {
      assert.ok(Math.abs(v - expected[i]!) < 1e-9);
    });
    // Python floats stay floats on the wire
    assert.match(text, /"scales":\[1\.0\],"offsets":\[0\.0\]/);
    assert.match(text, /"nodata_value":0\.0/);
  });

  it("selects assets and rejects unknown ones with TiTiler's 404", async () => {
    assert.deepEqual(Object.keys(await json(`/stac/info?${q(item)}&assets=B09`)), ['B09']);
    assert.equal(await detail(`/stac/info?${q(item)}&assets=B1111`, 404), "'B1111' is not valid, should be one of ['B01', 'B09']");
  });

  it('answers info.geojson as a Feature of the item bbox', async () => {
    const res = await tessera.get(`/stac/info.geojson?${q(item)}&assets=B01`);
    assert.equal(res.headers.get('content-type'), 'application/geo+json');
    const f = (await res.json()) as { type: string; geometry: { coordinates: number[][][] }; properties: Record<string, unknown> };
    assert.equal(f.type, 'Feature');
    assert.deepEqual(f.geometry.coordinates[0]![0], [23.293255090449595, 31.505183020453355]);
    assert.deepEqual(Object.keys(f.properties), ['B01']);
  });

  it('makes no upstream request for a warm info (header and item cached)', async () => {
    await json(`/stac/info?${q(item)}`);
    const before = files.log.length;
    await json(`/stac/info?${q(item)}`);
    assert.deepEqual(files.log.slice(before), []);
  });
});

describe('bad input and upstream faults', () => {
  it('422 for a missing url, FastAPI-style', async () => {
    assert.deepEqual(await json('/stac/assets', 422), {
      detail: [{ type: 'missing', loc: ['query', 'url'], msg: 'Field required', input: null }],
    });
  });

  it('400 for refused locations', async () => {
    assert.match(await detail(`/stac/info?${q('/etc/passwd')}`, 400), /local files are disabled/);
    assert.match(await detail(`/stac/info?${q('file:///etc/passwd')}`, 400), /local files are disabled/);
    assert.match(await detail(`/stac/info?${q('/vsimem/x.json')}`, 400), /virtual file systems/);
    assert.match(await detail(`/stac/bounds?${q('ftp://example.com/item.json')}`, 400), /scheme 'ftp'/);
  });

  it('refuses asset hrefs that point at local files', async () => {
    files.put('/evil/item.json', JSON.stringify({ type: 'Feature', bbox: [0, 0, 1, 1], links: [], assets: { a: { href: 'file:///etc/passwd' } } }));
    assert.match(await detail(`/stac/info?${q(`${files.url}/evil/item.json`)}`, 400), /local files are disabled/);
  });

  it('clear errors for documents that are missing, not JSON, not items, or without readable assets', async () => {
    assert.match(await detail(`/stac/bounds?${q(`${files.url}/nope.json`)}`, 404), /not found \(upstream answered 404\)/);
    assert.match(await detail(`/stac/bounds?${q(`${files.url}/not-json.json`)}`, 400), /not valid JSON/);
    assert.match(await detail(`/stac/bounds?${q(`${files.url}/not-item.json`)}`, 400), /not a STAC item/);
    assert.equal(await detail(`/stac/assets?${q(`${files.url}/no-readable.json`)}`, 400), "No valid asset found. Asset's media types not supported");
    assert.match(await detail(`/stac/bounds?${q('http://127.0.0.1:1/item.json')}`, 502), /could not be fetched/);
  });

  it('upstream raster faults: missing asset 404, a damaged (100-byte) TIFF 400, and the server keeps serving', async () => {
    const missing = await tessera.get(`/stac/info?${q(`${files.url}/missing/item.json`)}`);
    assert.equal(missing.status, 404, (await missing.clone().text()) + files.log.slice(-12).join('\n'));
    assert.match(((await missing.json()) as Failure).detail, /not found/);
    assert.match(await detail(`/stac/info?${q(`${files.url}/broken/item.json`)}&assets=B01`, 400), /asset 'B01'.*is a TIFF that GDAL could not open/);
    assert.deepEqual(await json('/healthz'), { ping: 'pong!' });
    assert.equal((await json<B01Info>(`/stac/info?${q(item)}&assets=B01`)).B01.width, 183);
  });

  it('times out slow upstreams with a 504', async () => {
    const slow = await startTessera({ upstreamTimeoutMs: 200 });
    files.delayMs = 1000;
    try {
      const res = await slow.get(`/stac/bounds?${q(`${files.url}/slow/item.json`)}`);
      assert.equal(res.status, 504);
      assert.match(((await res.json()) as Failure).detail, /did not arrive within 200 ms/);
    } finally {
      files.delayMs = 0;
      await slow.close();
    }
  });
});

describe('/stac/{tileMatrixSetId}/tilejson.json', () => {
  it("matches TiTiler's document and forwards the query form-encoded", async () => {
    const tj = await json<TileJson>(`/stac/WebMercatorQuad/tilejson.json?${q(item)}&expression=B01_b1/B09_b1&rescale=0,1&colormap_name=viridis`);
    assert.deepEqual(Object.keys(tj), ['tilejson', 'version', 'scheme', 'tiles', 'minzoom', 'maxzoom', 'bounds', 'center']);
    assert.equal(
      tj.tiles[0],
      `${tessera.url}/stac/tiles/WebMercatorQuad/{z}/{x}/{y}@1x?url=${encodeURIComponent(item)}&expression=B01_b1%2FB09_b1&rescale=0%2C1&colormap_name=viridis`,
    );
    assert.equal(tj.minzoom, 0);
    assert.equal(tj.maxzoom, 24);
    assert.deepEqual(tj.center, [23.794854319372455, 32.00833055925221, 0]);
  });

  it('takes tile_format, tile_scale, minzoom and maxzoom (not forwarded)', async () => {
    const tj = await json<TileJson>(`/stac/WorldCRS84Quad/tilejson.json?${q(item)}&assets=B01&tile_format=png&tile_scale=2&minzoom=5&maxzoom=10`);
    assert.match(tj.tiles[0]!, /\/stac\/tiles\/WorldCRS84Quad\/\{z\}\/\{x\}\/\{y\}@2x\.png\?url=[^&]+&assets=B01$/);
    assert.equal(tj.minzoom, 5);
    assert.equal(tj.center[2], 5);
  });

  it('validates what the tile route will take', async () => {
    assert.equal(await detail(`/stac/WebMercatorQuad/tilejson.json?${q(item)}`, 400), 'assets must be defined either via expression or assets options.');
    const bad: Array<[string, number, RegExp | string]> = [
      ['tile_scale=4', 422, 'less_than'],
      ['tile_scale=0', 422, 'greater_than'],
      ['tile_format=gif', 422, 'enum'],
      ['resampling=foo', 422, 'literal_error'],
      ['minzoom=abc', 422, 'int_parsing'],
      ['unscale=maybe', 422, 'bool_parsing'],
      ['colormap_name=nope', 422, 'literal_error'],
      ['algorithm=nope', 422, 'literal_error'],
      ['rescale=1', 400, /Invalid rescale/],
      ['rescale=a,b', 400, /Invalid rescale/],
      ['colormap=notjson', 400, 'Could not parse the colormap value.'],
      ['colormap=%7B%221%22%3A%5B58%2C102%5D%7D', 400, /Invalid color format/],
      ['asset_bidx=B01', 400, /Invalid asset_bidx/],
      ['buffer=0.3', 400, /multiple of 0.5/],
      ['nodata=abc', 400, /Invalid nodata/],
      ['algorithm_params=%7Bbad', 400, /algorithm_params/],
      ['maxzoom=31', 400, /between 0 and 30/],
      ['minzoom=31', 400, /TileJSON minzoom must be between 0 and 30, got 31/],
      ['minzoom=-1', 400, /TileJSON minzoom must be between 0 and 30, got -1/],
    ];
    for (const [param, status, expected] of bad) {
      const body = await json<{ detail: unknown }>(`/stac/WebMercatorQuad/tilejson.json?${q(item)}&assets=B01&${param}`, status);
      if (status === 422) assert.equal((body as Invalid).detail[0]!.type, expected, param);
      else if (typeof expected === 'string') assert.equal(body.detail, expected, param);
      else assert.match((body as Failure).detail, expected, param);
    }
    // pydantic's boolean spellings are accepted
    await json(`/stac/WebMercatorQuad/tilejson.json?${q(item)}&assets=B01&unscale=yes&return_mask=0`);
  });

  it('422 for an unknown TileMatrixSet', async () => {
    const body = await json<Invalid>(`/stac/NotATms/tilejson.json?${q(item)}&assets=B01`, 422);
    assert.equal(body.detail[0]!.type, 'literal_error');
    assert.deepEqual(body.detail[0]!.loc, ['path', 'tileMatrixSetId']);
  });
});

describe('/stac/{tileMatrixSetId}/WMTSCapabilities.xml', () => {
  it('describes the layer, its tile template and the grid', async () => {
    const res = await tessera.get(`/stac/WebMercatorQuad/WMTSCapabilities.xml?${q(item)}&assets=B01&minzoom=2&maxzoom=4`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/xml');
    const xml = await res.text();
    assert.ok(xml.includes(`<ows:Title>${item}</ows:Title>`));
    assert.ok(xml.includes('<ows:Identifier>Dataset</ows:Identifier>'));
    assert.ok(
      xml.includes(
        `template="${tessera.url}/stac/tiles/WebMercatorQuad/{TileMatrix}/{TileCol}/{TileRow}@1x.png?url=${encodeURIComponent(item)}&amp;assets=B01"`,
      ),
    );
    assert.ok(xml.includes('<ows:SupportedCRS>http://www.opengis.net/def/crs/EPSG/0/3857</ows:SupportedCRS>'));
    assert.equal(xml.match(/<TileMatrix>/g)?.length, 3);
    assert.ok(xml.includes('<ows:LowerCorner>23.293255090449595 31.505183020453355</ows:LowerCorner>'));
  });

  it('takes tile_format, tile_scale and use_epsg', async () => {
    const xml = await (
      await tessera.get(`/stac/WGS1984Quad/WMTSCapabilities.xml?${q(item)}&assets=B01&tile_format=jpg&tile_scale=2&use_epsg=true&minzoom=0&maxzoom=1`)
    ).text();
    assert.ok(xml.includes('@2x.jpg?url='));
    assert.ok(xml.includes('format="image/jpg"'));
    assert.ok(xml.includes('<ows:SupportedCRS>EPSG:4326</ows:SupportedCRS>'));
    assert.ok(xml.includes('<TopLeftCorner>90 -180</TopLeftCorner>'));
    assert.ok(xml.includes('<ScaleDenominator>279541132.014358</ScaleDenominator>'));
  });
});

describe('/tileMatrixSets', () => {
  it('lists fourteen grids with item links', async () => {
    const list = await json<{ tileMatrixSets: Array<{ id: string }> }>('/tileMatrixSets');
    assert.equal(list.tileMatrixSets.length, 14);
    const wm = list.tileMatrixSets.find((t: { id: string }) => t.id === 'WebMercatorQuad');
    assert.deepEqual(wm, {
      id: 'WebMercatorQuad',
      title: 'Google Maps Compatible for the World',
      links: [{ href: `${tessera.url}/tileMatrixSets/WebMercatorQuad`, rel: 'item', type: 'application/json' }],
    });
  });

  it('serves TMS 1.0 documents and 422 for unknown ids', async () => {
    const doc = await json<{ type: string; identifier: string; supportedCRS: string; boundingBox: { lowerCorner: number[] } }>('/tileMatrixSets/NZTM2000');
    assert.equal(doc.type, 'TileMatrixSetType');
    assert.equal(doc.identifier, 'NZTM2000');
    assert.equal(doc.supportedCRS, 'http://www.opengis.net/def/crs/EPSG/0/2193');
    assert.deepEqual(doc.boundingBox.lowerCorner, [3087000, 274000]);
    const cdb = await json<{ tileMatrix: Array<Record<string, unknown>> }>('/tileMatrixSets/CDB1GlobalGrid');
    assert.ok(cdb.tileMatrix.some((m: Record<string, unknown>) => Array.isArray(m['variableMatrixWidths'])));
    assert.equal((await json<Invalid>('/tileMatrixSets/Nope', 422)).detail[0]!.type, 'literal_error');
  });
});

describe('global behaviour', () => {
  it('Cache-Control on successful GET answers, no-store on errors, none on /healthz', async () => {
    assert.equal((await tessera.get(`/stac/bounds?${q(item)}`)).headers.get('cache-control'), 'public, max-age=3600');
    assert.equal((await tessera.get('/stac/bounds')).headers.get('cache-control'), 'no-store');
    assert.equal((await tessera.get(`/stac/bounds?${q(`${files.url}/no-such-item.json`)}`)).headers.get('cache-control'), 'no-store');
    assert.equal((await tessera.get('/healthz')).headers.get('cache-control'), null);
  });

  it('compresses JSON when asked', async () => {
    const res = await tessera.request(`/tileMatrixSets/WebMercatorQuad`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    assert.equal(((await res.json()) as { identifier: string }).identifier, 'WebMercatorQuad');
  });

  it('answers CORS requests', async () => {
    const res = await tessera.get('/healthz', { origin: 'http://example.com' });
    assert.equal(res.headers.get('access-control-allow-origin'), 'http://example.com');
  });

  it('unknown routes are JSON 404s', async () => {
    assert.equal(await detail('/nothing/here', 404), 'Not Found');
  });
});
