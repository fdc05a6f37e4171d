/**
 * /mosaicjson routes over real HTTP: tessera on 127.0.0.1 reads the shared fixture mosaic (cog1/cog2,
 * hrefs made absolute) through the Range file server. Covers every backend form (http, gzip, local
 * file and file:// when allowed, SQLite in cogeo-mosaic's table layout), the refusals, 204s, the
 * X-Assets header, the early stop of `first` (reads never started), route order of the asset
 * lookups, TileJSON/WMTS, points, and mosaics of STAC items. Values TiTiler asserts in its own tests
 * (point [9943, 9127, 9603], info zooms, lookups) are the expected ones here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { gzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import initSqlJs from 'sql.js';
import { FIXTURES, fixtureItem, startFileServer, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { parseNpy } from './helpers/npy.js';

let files: FileServer;
let tessera: RunningTessera;
let local: RunningTessera;
let tmp: string;
let fixtureDoc: Record<string, unknown>;
const q = (url: string): string => `url=${encodeURIComponent(url)}`;
let mosaic: string;

async function get(t: RunningTessera, p: string): Promise<{ status: number; type: string | null; text: string; body: Buffer; headers: Headers }> {
  const res = await t.get(p);
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type'), text: body.toString('utf8'), body, headers: res.headers };
}

async function json<T = unknown>(p: string, status = 200, t: RunningTessera = tessera): Promise<T> {
  const r = await get(t, p);
  assert.equal(r.status, status, `${p} → ${r.status} ${r.text.slice(0, 300)}`);
  return JSON.parse(r.text) as T;
}

/** The shapes of the JSON answers the tests read fields of. */
type Failure = { detail: string };
type Invalid = { detail: Array<{ loc: string[]; msg: string }> };
type MosaicDoc = { version: string; quadkey_zoom: number; tiles: Record<string, string[]>; bounds: number[] };
type MosaicInfo = { center: number[]; minzoom: number; maxzoom: number; name: string; quadkeys: string[] };
type Feature = { type: string; properties: unknown };
type PointValues = { values: Array<[string, number[], string[]]> };
type TileJson = { minzoom: number; maxzoom: number; center: number[]; bounds: number[]; tiles: string[] };

/** The fixture document with its relative asset names made absolute on the file server. */
function absolute(doc: Record<string, unknown>, base: string): Record<string, unknown> {
  const tiles = Object.fromEntries(Object.entries(doc['tiles'] as Record<string, string[]>).map(([k, v]) => [k, v.map((a) => `${base}/${a}`)]));
  return { ...doc, tiles };
}

/** A SQLite database in cogeo-mosaic 7's layout (schema as its SQLiteBackend.write creates it). */
async function writeSqlite(file: string, name: string, doc: Record<string, unknown>): Promise<void> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run('PRAGMA user_version = 3;');
  db.run(`CREATE TABLE IF NOT EXISTS mosaicjson_metadata (
    mosaicjson TEXT NOT NULL, name TEXT NOT NULL, description TEXT, version TEXT NOT NULL, attribution TEXT,
    minzoom INTEGER NOT NULL, maxzoom INTEGER NOT NULL, quadkey_zoom INTEGER, bounds JSON NOT NULL, center JSON,
    tilematrixset JSON, asset_type TEXT, asset_prefix TEXT, data_type TEXT, colormap JSON, layers JSON);`);
  db.run(`CREATE TABLE "${name}" (quadkey TEXT NOT NULL, assets JSON NOT NULL);`);
  db.run('INSERT INTO mosaicjson_metadata (mosaicjson, name, version, minzoom, maxzoom, quadkey_zoom, bounds, center) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
    doc['mosaicjson'] as string,
    name,
    '1.0.0',
    doc['minzoom'] as number,
    doc['maxzoom'] as number,
    doc['quadkey_zoom'] as number,
    JSON.stringify(doc['bounds']),
    JSON.stringify(doc['center']),
  ]);
  for (const [k, v] of Object.entries(doc['tiles'] as Record<string, string[]>))
    db.run(`INSERT INTO "${name}" (quadkey, assets) VALUES (?, ?)`, [k, JSON.stringify(v)]);
  await fs.writeFile(file, db.export());
  db.close();
}

before(async () => {
  files = await startFileServer(FIXTURES);
  // Rasters served from memory: a file read would need libuv's thread pool, which GDAL's parallel
  // reads of this same process may fill (the default pool has 4 threads).
  for (const name of ['cog1.tif', 'cog2.tif', 'B01.tif', 'B09.tif']) files.put(`/${name}`, await fs.readFile(path.join(FIXTURES, name)), 'image/tiff');
  fixtureDoc = JSON.parse(await fs.readFile(path.join(FIXTURES, 'mosaic.json'), 'utf8')) as Record<string, unknown>;
  const abs = absolute(fixtureDoc, files.url);
  files.put('/mosaic.json', JSON.stringify(abs));
  files.put('/gz/mosaic.json.gz', gzipSync(JSON.stringify(abs)), 'application/gzip');
  files.put('/bad/not-json.json', 'nope', 'text/plain');
  files.put('/bad/quadkey.json', JSON.stringify({ ...abs, tiles: { '0302309': ['x.tif'] } }));
  files.put('/bad/no-tiles.json', JSON.stringify({ mosaicjson: '0.0.2' }));
  // Prefix form: names relative to asset_prefix.
  files.put('/prefix.json', JSON.stringify({ ...fixtureDoc, mosaicjson: '0.0.3', asset_prefix: `${files.url}/` }));
  // The early-stop mosaic: cog1 fills tile 9/150/182 on its own; three more assets follow it.
  const cog2 = await fs.readFile(path.join(FIXTURES, 'cog2.tif'));
  for (const n of ['a', 'b', 'c']) files.put(`/extra/${n}.tif`, cog2, 'image/tiff');
  files.put(
    '/early.json',
    JSON.stringify({ ...abs, tiles: { '0302303': [`${files.url}/cog1.tif`, ...['a', 'b', 'c'].map((n) => `${files.url}/extra/${n}.tif`)] } }),
  );
  // A mosaic of STAC items.
  files.put('/item.json', await fixtureItem(files.url));
  files.put(
    '/stac-mosaic.json',
    JSON.stringify({
      mosaicjson: '0.0.3',
      minzoom: 7,
      maxzoom: 9,
      asset_type: 'STAC',
      bounds: [23.29, 31.5, 24.3, 32.52],
      tiles: { '1221022': [`${files.url}/item.json`] },
    }),
  );
  mosaic = `${files.url}/mosaic.json`;

  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-mosaic-'));
  await fs.writeFile(path.join(tmp, 'mosaic.json'), JSON.stringify(abs));
  await writeSqlite(path.join(tmp, 'mosaics.db'), 'fixture', abs);
  tessera = await startTessera();
  local = await startTessera({ allowedLocalRoots: [tmp], mosaicConcurrency: 1 });
});

after(async () => {
  await tessera?.close();
  await local?.close();
  await files?.close();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
});

describe('/mosaicjson documents and backends', () => {
  it('answers the document, with the model defaults filled in (also without the trailing slash)', async () => {
    const doc = await json<MosaicDoc>(`/mosaicjson/?${q(mosaic)}`);
    assert.equal(doc.version, '1.0.0');
    assert.deepEqual(Object.keys(doc), ['mosaicjson', 'version', 'minzoom', 'maxzoom', 'quadkey_zoom', 'bounds', 'center', 'tiles']);
    assert.deepEqual(doc.tiles['0302301'], [`${files.url}/cog1.tif`, `${files.url}/cog2.tif`]);
    assert.deepEqual(await json(`/mosaicjson?${q(mosaic)}`), doc);
  });

  it('POST /validate: true for a valid document, 422 naming the fault otherwise', async () => {
    const post = (body: unknown): Promise<Response> =>
      tessera.request(`/mosaicjson/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ok = await post(fixtureDoc);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'true');
    const bad = await post({ mosaicjson: '0.0.2', minzoom: 7, tiles: { '03023': ['a.tif'] } });
    assert.equal(bad.status, 422);
    const body = (await bad.json()) as { detail: Array<{ loc: string[]; msg: string }> };
    assert.deepEqual(body.detail[0]!.loc, ['body']);
    assert.match(body.detail[0]!.msg, /quadkey '03023'/);
  });

  it('reads gzip-compressed documents', async () => {
    const doc = await json<MosaicDoc>(`/mosaicjson/?${q(`${files.url}/gz/mosaic.json.gz`)}`);
    assert.equal(doc.quadkey_zoom, 7);
  });

  it('bounds and info as TiTiler (center from the bounds, name "mosaic", empty quadkeys)', async () => {
    assert.deepEqual(await json(`/mosaicjson/bounds?${q(mosaic)}`), { bounds: fixtureDoc['bounds'] });
    const info = await json<MosaicInfo>(`/mosaicjson/info?${q(mosaic)}`);
    assert.deepEqual(info.center, [-73.66231924906833, 46.01594941248055, 7]);
    assert.equal(info.minzoom, 7);
    assert.equal(info.maxzoom, 9);
    assert.equal(info.name, 'mosaic');
    assert.deepEqual(info.quadkeys, []);
    const feature = await json<Feature>(`/mosaicjson/info.geojson?${q(mosaic)}`);
    assert.equal(feature.type, 'Feature');
    assert.deepEqual(feature.properties, info);
  });

  it('reads local files and file:// URLs only inside an allowed folder', async () => {
    const file = path.join(tmp, 'mosaic.json');
    assert.equal((await json<MosaicDoc>(`/mosaicjson/?${q(file)}`, 200, local)).quadkey_zoom, 7);
    assert.equal((await json<MosaicDoc>(`/mosaicjson/?${q(`file://${file}`)}`, 200, local)).quadkey_zoom, 7);
    assert.match((await json<Failure>(`/mosaicjson/?${q(file)}`, 400)).detail, /local files are disabled/);
    assert.match((await json<Failure>(`/mosaicjson/?${q('/etc/passwd')}`, 400, local)).detail, /outside the allowed local folders/);
  });

  it('reads SQLite mosaics in cogeo-mosaic’s layout (document without tiles, lookups and tiles from the table)', async () => {
    const url = `sqlite:///${path.join(tmp, 'mosaics.db')}:fixture`;
    const doc = await json<MosaicDoc>(`/mosaicjson/?${q(url)}`, 200, local);
    assert.deepEqual(doc.tiles, {});
    assert.deepEqual(doc.bounds, fixtureDoc['bounds']);
    assert.deepEqual(await json(`/mosaicjson/7/36/45/assets?${q(url)}`, 200, local), [`${files.url}/cog1.tif`]);
    const tile = await get(local, `/mosaicjson/tiles/WebMercatorQuad/9/150/182.npy?${q(url)}`);
    assert.equal(tile.status, 200, tile.text.slice(0, 200));
    assert.deepEqual(parseNpy(tile.body).shape, [4, 256, 256]);
    assert.match((await json<Failure>(`/mosaicjson/?${q(`sqlite:///${path.join(tmp, 'mosaics.db')}:other`)}`, 404, local)).detail, /Mosaic 'other' not found/);
    assert.match((await json<Failure>(`/mosaicjson/?${q(`sqlite:///${path.join(tmp, 'mosaics.db')}:mosaicjson_metadata`)}`, 400, local)).detail, /reserved/);
    assert.match((await json<Failure>(`/mosaicjson/?${q(`sqlite:///${path.join(tmp, 'none.db')}:x`)}`, 404, local)).detail, /not found/);
    assert.match((await json<Failure>(`/mosaicjson/?${q('sqlite:///no-name.db')}`, 400, local)).detail, /sqlite:\/\/\/\{path\}:\{mosaic_name\}/);
    assert.match((await json<Failure>(`/mosaicjson/?${q(url)}`, 400)).detail, /local files are disabled/);
  });

  const refused: Array<[string, string, number, RegExp]> = [
    ['an unknown scheme', 'ftp://example.com/m.json', 400, /scheme 'ftp' is not supported/],
    ['a bucket no setting allows', 's3://bucket/m.json', 400, /not in the buckets TESSERA_ALLOWED_BUCKETS allows/],
    ['DynamoDB', 'dynamodb://us-east-1/table:m', 400, /backend 'dynamodb' is not supported/],
    ['a STAC API search', 'stac+https://example.com/search', 400, /backend 'stac\+https' is not supported/],
    ['a missing document', 'MISSING', 404, /not found/],
    ['a document that is not JSON', 'NOTJSON', 400, /not valid JSON/],
    ['a document with a bad quadkey', 'BADQK', 400, /invalid quadkey '0302309'/],
    ['a document without tiles', 'NOTILES', 400, /'tiles' is required/],
  ];
  for (const [what, url, status, message] of refused) {
    it(`refuses ${what} with a ${status}`, async () => {
      const real = url
        .replace('MISSING', `${files.url}/nothing.json`)
        .replace('NOTJSON', `${files.url}/bad/not-json.json`)
        .replace('BADQK', `${files.url}/bad/quadkey.json`)
        .replace('NOTILES', `${files.url}/bad/no-tiles.json`);
      for (const route of ['/mosaicjson/', '/mosaicjson/info', '/mosaicjson/tiles/WebMercatorQuad/7/37/45.png']) {
        const body = await json<Failure>(`${route}?${q(real)}`, status);
        assert.match(body.detail, message, route);
      }
    });
  }
});

describe('/mosaicjson asset lookups', () => {
  it('tile, point and bbox lookups give TiTiler’s asserted answers', async () => {
    const cog1 = `${files.url}/cog1.tif`;
    const cog2 = `${files.url}/cog2.tif`;
    assert.deepEqual(await json(`/mosaicjson/7/36/45/assets?${q(mosaic)}`), [cog1]);
    assert.deepEqual(await json(`/mosaicjson/WebMercatorQuad/7/36/45/assets?${q(mosaic)}`), [cog1]);
    assert.deepEqual(await json(`/mosaicjson/-71,46/assets?${q(mosaic)}`), [cog1, cog2]);
    assert.deepEqual(await json(`/mosaicjson/WGS1984Quad/8/148/61/assets?${q(mosaic)}`), [cog1, cog2]);
    assert.deepEqual(await json(`/mosaicjson/10,10,11,11/assets?${q(mosaic)}`), []);
    assert.deepEqual(await json(`/mosaicjson/-76,45,-72,47/assets?${q(mosaic)}`), [cog1, cog2]);
    // z below the quadkey zoom: every descendant quadkey.
    assert.deepEqual(await json(`/mosaicjson/5/9/11/assets?${q(mosaic)}`), [cog1, cog2]);
  });

  it('never reads a bbox as a point, and reports bad numbers as FastAPI does', async () => {
    assert.deepEqual(await json(`/mosaicjson/1,2,3,4/assets?${q(mosaic)}`), []);
    const three = await json<Invalid>(`/mosaicjson/1,2,3/assets?${q(mosaic)}`, 422);
    assert.deepEqual(three.detail[0]!.loc, ['path', 'lon']);
    const word = await json<Invalid>(`/mosaicjson/a,b,c,d/assets?${q(mosaic)}`, 422);
    assert.deepEqual(
      word.detail.map((d: { loc: string[] }) => d.loc[1]),
      ['minx', 'miny', 'maxx', 'maxy'],
    );
    assert.equal((await json<Invalid>(`/mosaicjson/7/x/45/assets?${q(mosaic)}`, 422)).detail[0]!.loc[1], 'x');
    assert.equal((await json<Invalid>(`/mosaicjson/NoSuchGrid/7/36/45/assets?${q(mosaic)}`, 422)).detail[0]!.loc[1], 'tileMatrixSetId');
  });

  it('prepends asset_prefix', async () => {
    assert.deepEqual(await json(`/mosaicjson/7/36/45/assets?${q(`${files.url}/prefix.json`)}`), [`${files.url}/cog1.tif`]);
  });
});

describe('/mosaicjson tiles', () => {
  it('reads a tile from both assets, lists them in X-Assets, 256 or 512 px', async () => {
    const r = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45.npy?${q(mosaic)}`);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.equal(r.type, 'application/x-binary');
    assert.deepEqual(parseNpy(r.body).shape, [4, 256, 256]);
    assert.equal(r.headers.get('x-assets'), `${files.url}/cog1.tif,${files.url}/cog2.tif`);
    const big = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45@2x.tif?${q(mosaic)}&nodata=0&bidx=1`);
    assert.equal(big.status, 200);
    assert.equal(big.type, 'image/tiff; application=geotiff');
    const png = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45?${q(mosaic)}&rescale=0,10000`);
    assert.equal(png.type, 'image/png', 'edges leave masked pixels: PNG');
    const jpg = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45@2x.jpg?${q(mosaic)}&rescale=0,1000&colormap_name=viridis&bidx=1`);
    assert.equal(jpg.type, 'image/jpg');
  });

  it('an expression over b1, b2 … gives one band per block', async () => {
    const r = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/9/150/182.npy?${q(mosaic)}&expression=b1/b2;b3`);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    const a = parseNpy(r.body);
    assert.deepEqual(a.shape, [3, 256, 256]);
    assert.match((await json<Failure>(`/mosaicjson/tiles/WebMercatorQuad/9/150/182.npy?${q(mosaic)}&expression=b1/B4`, 400)).detail, /'B4' is not a band name/);
  });

  it('a tile without assets, or whose assets miss it, is a 204 with an empty body', async () => {
    const none = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/1/1.png?${q(mosaic)}`);
    assert.equal(none.status, 204);
    assert.equal(none.body.length, 0);
    // In quadkey 0302300 (cog1 only), but west of cog1's footprint.
    const missed = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/12/1180/1460.png?${q(mosaic)}`);
    assert.equal(missed.status, 204, missed.text.slice(0, 200));
  });

  it('`first` stops once the tile is full: later assets are never read', async () => {
    const before = files.log.length;
    const r = await get(local, `/mosaicjson/tiles/WebMercatorQuad/9/150/182.npy?${q(`${files.url}/early.json`)}`);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.equal(r.headers.get('x-assets'), `${files.url}/cog1.tif`);
    assert.deepEqual(
      files.log.slice(before).filter((l) => l.includes('/extra/')),
      [],
    );
    // Methods that need every asset read them all.
    const all = await get(local, `/mosaicjson/tiles/WebMercatorQuad/9/150/182.npy?${q(`${files.url}/early.json`)}&pixel_selection=highest`);
    assert.equal(all.headers.get('x-assets')?.split(',').length, 4);
  });

  it('X-Assets can be switched off', async () => {
    const quiet = await startTessera({ mosaicAssetsHeader: false });
    try {
      const r = await get(quiet, `/mosaicjson/tiles/WebMercatorQuad/7/37/45.npy?${q(mosaic)}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-assets'), null);
    } finally {
      await quiet.close();
    }
  });

  it('every pixel_selection answers; count is one uint8 band, stdev float64', async () => {
    for (const method of ['first', 'highest', 'lowest', 'mean', 'median', 'stdev', 'lastbandlow', 'lastbandhight', 'count']) {
      const r = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45.npy?${q(mosaic)}&pixel_selection=${method}`);
      assert.equal(r.status, 200, `${method}: ${r.text.slice(0, 200)}`);
      const a = parseNpy(r.body);
      const bands = method === 'count' ? 2 : method.startsWith('lastband') ? 3 : 4;
      assert.equal(a.shape[0], bands, method);
      if (method === 'count') assert.equal(a.descr, '|u1');
      if (method === 'stdev') assert.equal(a.descr, '<f8');
    }
    assert.equal((await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45.npy?${q(mosaic)}&pixel_selection=max`)).status, 422);
  });

  it('refuses tiles the grid does not have and bad scales', async () => {
    assert.equal((await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/200/45.png?${q(mosaic)}`)).status, 400);
    assert.equal((await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45@5x.png?${q(mosaic)}`)).status, 422);
  });

  it('strict zoom refuses tiles outside the mosaic’s zoom range when asked to', async () => {
    const strict = await startTessera({ mosaicStrictZoom: true });
    try {
      const body = await json<Failure>(`/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?${q(mosaic)}`, 400, strict);
      assert.equal(body.detail, 'Invalid ZOOM level 6. Should be between 7 and 9');
    } finally {
      await strict.close();
    }
  });

  it('reads mosaics of STAC items through the named assets', async () => {
    const url = `${files.url}/stac-mosaic.json`;
    const r = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/9/289/207.npy?${q(url)}&assets=B01&assets=B09`);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.deepEqual(parseNpy(r.body).shape, [3, 256, 256]);
    assert.equal(r.headers.get('x-assets'), `${files.url}/item.json`);
    assert.match((await json<Failure>(`/mosaicjson/tiles/WebMercatorQuad/9/289/207.npy?${q(url)}`, 400)).detail, /assets must be defined/);
    const point = await json<PointValues>(`/mosaicjson/point/23.878,32.063?${q(url)}&assets=B01`);
    assert.deepEqual(point.values, [[`${files.url}/item.json`, [3565], ['B01_b1']]]);
    // An expression over the items' assets (the COG band names b1 … do not apply to them).
    const ratio = await get(tessera, `/mosaicjson/tiles/WebMercatorQuad/9/289/207.npy?${q(url)}&expression=B01_b1/B09_b1`);
    assert.equal(ratio.status, 200, ratio.text.slice(0, 300));
    assert.deepEqual(parseNpy(ratio.body).shape, [2, 256, 256]);
    const doubled = await json<PointValues>(`/mosaicjson/point/23.878,32.063?${q(url)}&expression=B01_b1*2`);
    assert.deepEqual(doubled.values, [[`${files.url}/item.json`, [7130], ['B01_b1*2']]]);
    // Under TESSERA_TITILER_API=2 the items' bands are named as rio-tiler 9 names them, b1 … bn (collision stacBandNames).
    const v2 = await startTessera({ titilerApi: '2' });
    try {
      const res = await v2.get(`/mosaicjson/point/23.878,32.063?${q(url)}&assets=B01&assets=B09`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { assets: Array<{ name: string; values: number[]; band_names: string[] }> };
      assert.deepEqual(
        body.assets.map((a) => [a.name, a.band_names]),
        [[`${files.url}/item.json`, ['b1', 'b2']]],
      );
      assert.equal(body.assets[0]!.values[0], 3565);
      // An expression over 0.18's names still reads them so.
      const old = (await (await v2.get(`/mosaicjson/point/23.878,32.063?${q(url)}&expression=B01_b1*2`)).json()) as { assets: Array<{ values: number[] }> };
      assert.deepEqual(old.assets[0]!.values, [7130]);
    } finally {
      await v2.close();
    }
  });
});

describe('/mosaicjson TileJSON, WMTS, point', () => {
  it('TileJSON: the document’s zooms, bounds and center; minzoom overrides the center zoom', async () => {
    const tj = await json<TileJson>(`/mosaicjson/WebMercatorQuad/tilejson.json?${q(mosaic)}&pixel_selection=highest`);
    assert.deepEqual([tj.minzoom, tj.maxzoom], [7, 9]);
    assert.deepEqual(tj.center, [-74.53125, 45.99569351896393, 7]);
    assert.deepEqual(tj.bounds, fixtureDoc['bounds']);
    assert.match(tj.tiles[0]!, /\/mosaicjson\/tiles\/WebMercatorQuad\/\{z\}\/\{x\}\/\{y\}@1x\?url=.*&pixel_selection=highest$/);
    const over = await json<TileJson>(`/mosaicjson/WebMercatorQuad/tilejson.json?${q(mosaic)}&minzoom=8&tile_format=png&tile_scale=2`);
    assert.deepEqual(over.center, [-74.53125, 45.99569351896393, 8]);
    assert.match(over.tiles[0]!, /@2x\.png\?url=/);
    const wgs = await json<TileJson>(`/mosaicjson/WGS1984Quad/tilejson.json?${q(mosaic)}`);
    assert.deepEqual([wgs.minzoom, wgs.maxzoom], [0, 23]);
  });

  it('WMTS names the grid’s CRS (TiTiler 0.18 leaves it empty) and the mosaic layer', async () => {
    const r = await get(tessera, `/mosaicjson/WebMercatorQuad/WMTSCapabilities.xml?${q(mosaic)}&tile_scale=2`);
    assert.equal(r.status, 200);
    assert.equal(r.type, 'application/xml');
    assert.match(r.text, /<ows:SupportedCRS>http:\/\/www\.opengis\.net\/def\/crs\/EPSG\/0\/3857<\/ows:SupportedCRS>/);
    assert.match(r.text, /<ows:Identifier>Mosaic<\/ows:Identifier>/);
    assert.match(r.text, /\/mosaicjson\/tiles\/WebMercatorQuad\/\{TileMatrix\}\/\{TileCol\}\/\{TileRow\}@2x\.png\?url=/);
    assert.equal((r.text.match(/<TileMatrix>/g) ?? []).length, 3);
  });

  it('point: one entry per covering asset, raw values as floats', async () => {
    const r = await get(tessera, `/mosaicjson/point/-74.53125,45.99569351896393?${q(mosaic)}`);
    assert.equal(r.status, 200);
    assert.equal(r.text, `{"coordinates":[-74.53125,45.99569351896393],"values":[["${files.url}/cog1.tif",[9943.0,9127.0,9603.0],["b1","b2","b3"]]]}`);
    const two = await json<PointValues>(`/mosaicjson/point/-73,46?${q(mosaic)}&bidx=1`);
    assert.deepEqual(
      two.values.map((v) => v[0]),
      [`${files.url}/cog1.tif`, `${files.url}/cog2.tif`],
    );
    assert.equal((await get(tessera, `/mosaicjson/point/10,10?${q(mosaic)}`)).status, 204);
  });
});
