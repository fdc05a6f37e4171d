/**
 * /stac image routes over HTTP, tessera alone: the demo data end to end (tiles in several grids,
 * preview, bbox, feature, point), the limits refusing work before any byte is read, and every kind
 * of bad input answered with a clear 4xx. Pixel-level agreement with TiTiler is the parity suite's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import sharp from 'sharp';
import { startFileServer, fixtureItem, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { parseNpy } from './helpers/npy.js';
import { makeDemoData } from '../src/demo/make.js';
import { getTms } from '../src/tms/registry.js';

const q = encodeURIComponent;

async function detail(res: Response): Promise<string> {
  const body = (await res.json()) as { detail: unknown };
  return typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail);
}

/** The tile of `tmsId` at zoom `z` containing (lon, lat), through the grid's own math. */
function tileAt(tmsId: string, lon: number, lat: number, z: number): { x: number; y: number } {
  const tms = getTms(tmsId)!;
  const [px, py] = tms.srs === 'EPSG:3857' ? [(lon * 20037508.342789244) / 180, Math.log(Math.tan(((90 + lat) * Math.PI) / 360)) * 6378137] : [lon, lat];
  const t = tms.tileAt(px, py, z);
  return { x: t.x, y: t.y };
}

describe('/stac image routes on the demo data', { timeout: 120_000 }, () => {
  let files: FileServer;
  let demoFiles: FileServer;
  let server: RunningTessera;
  let item: string;
  let demoItem: string;
  let demoDir: string;

  before(async () => {
    demoDir = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-demo-'));
    await makeDemoData(demoDir);
    demoFiles = await startFileServer(demoDir);
    files = await startFileServer(FIXTURES);
    files.put('/item.json', await fixtureItem(files.url));
    item = q(`${files.url}/item.json`);
    demoItem = q(`${demoFiles.url}/item.json`);
    server = await startTessera();
  });

  after(async () => {
    await server?.close();
    await files?.close();
    await demoFiles?.close();
    await fs.rm(demoDir, { recursive: true, force: true });
  });

  // The demo item: bbox [7.956, 46.312, 8.360, 46.592], assets dem (float32, nodata) and rgb.
  const center = [8.15, 46.45] as const;

  for (const [tmsId, z] of [
    ['WebMercatorQuad', 12],
    ['WorldCRS84Quad', 11],
    ['EuropeanETRS89_LAEAQuad', 9],
  ] as const) {
    it(`draws a demo terrain tile in ${tmsId}`, async () => {
      const { x, y } = tmsId === 'EuropeanETRS89_LAEAQuad' ? laeaTile(z) : tileAt(tmsId, center[0], center[1], z);
      const res = await server.get(`/stac/tiles/${tmsId}/${z}/${x}/${y}.png?url=${demoItem}&assets=dem&rescale=500,4000&colormap_name=terrain`);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('content-type'), 'image/png');
      const { data, info } = await sharp(Buffer.from(await res.arrayBuffer()))
        .raw()
        .toBuffer({ resolveWithObject: true });
      assert.deepEqual([info.width, info.height, info.channels], [256, 256, 4]);
      let opaque = 0;
      const colours = new Set<number>();
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] === 255) opaque++;
        colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
      }
      assert.ok(opaque > 256 * 256 * 0.5, `mostly inside the data (${opaque} opaque pixels)`);
      assert.ok(colours.size > 20, `terrain shows relief (${colours.size} colours)`);
    });
  }

  /** The LAEA grid's tile over the demo centre, found by asking tessera's own TMS document math. */
  function laeaTile(z: number): { x: number; y: number } {
    // ETRS89-LAEA (EPSG:3035) easting/northing of (8.15 E, 46.45 N), computed with PROJ (morecantile: tile 247/330 at z9).
    const tms = getTms('EuropeanETRS89_LAEAQuad')!;
    const t = tms.tileAt(4178724.02, 2594742.37, z);
    return { x: t.x, y: t.y };
  }

  it('an RGB demo tile is JPEG when every pixel is valid, with @2x doubling the size', async () => {
    const { x, y } = tileAt('WebMercatorQuad', center[0], center[1], 13);
    const res = await server.get(`/stac/tiles/WebMercatorQuad/13/${x}/${y}@2x?url=${demoItem}&assets=rgb`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/jpeg');
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    assert.deepEqual([meta.width, meta.height, meta.channels], [512, 512, 3]);
  });

  it('expression over demo assets gives one band named by the expression, buffer grows the tile', async () => {
    const { x, y } = tileAt('WebMercatorQuad', center[0], center[1], 12);
    const res = await server.get(`/stac/tiles/WebMercatorQuad/12/${x}/${y}.npy?url=${demoItem}&expression=${q('dem_b1/1000;rgb_b1*2')}&buffer=1.5`);
    assert.equal(res.status, 200, await res.clone().text());
    const arr = parseNpy(Buffer.from(await res.arrayBuffer()));
    assert.deepEqual(arr.shape, [3, 259, 259]);
    // rio-tiler stacks the assets first (uint8 rgb promoted to float32 with the float32 DEM), so both
    // blocks are float32 arithmetic: float32 / int constant stays float32 in numexpr.
    assert.equal(arr.descr, '<f4');
  });

  it('a large answer streams: declared length when not compressed, the same bytes gzipped', async (t) => {
    // 2000×2000 float32 values with a mask: ~20 MB, past the size above which bodies are streamed.
    // Streaming and Content-Length are the socket's business: this test listens.
    const listening = await startTessera({}, { listen: true });
    t.after(() => listening.close());
    const url = `${listening.url}/stac/preview.npy?url=${demoItem}&assets=dem&width=2000&height=2000`;
    const plain = await new Promise<{ length: string | undefined; body: Buffer }>((resolve, reject) => {
      http
        .get(url, { headers: { 'accept-encoding': 'identity' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ length: res.headers['content-length'], body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
    assert.ok(plain.body.length > 16 * 1024 * 1024, `${plain.body.length} bytes`);
    assert.equal(plain.length, String(plain.body.length));
    const arr = parseNpy(plain.body);
    assert.deepEqual(arr.shape, [2, 2000, 2000]);
    const gzipped = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gzipped.headers.get('content-encoding'), 'gzip');
    assert.ok(Buffer.from(await gzipped.arrayBuffer()).equals(plain.body), 'the gzipped answer decodes to the same bytes');
  });

  it('preview, bbox, feature and point read the demo DEM', async () => {
    const preview = await server.get(`/stac/preview.npy?url=${demoItem}&assets=dem&max_size=128`);
    assert.equal(preview.status, 200);
    const p = parseNpy(Buffer.from(await preview.arrayBuffer()));
    assert.equal(Math.max(p.shape[1]!, p.shape[2]!), 128);

    const bbox = await server.get(`/stac/bbox/8.0,46.35,8.3,46.55/200x100.png?url=${demoItem}&assets=dem&rescale=500,4000`);
    assert.equal(bbox.status, 200);
    const bm = await sharp(Buffer.from(await bbox.arrayBuffer())).metadata();
    assert.deepEqual([bm.width, bm.height], [200, 100]);

    const triangle = {
      type: 'Feature',
      properties: {},
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [8.0, 46.35],
            [8.3, 46.35],
            [8.15, 46.55],
            [8.0, 46.35],
          ],
        ],
      },
    };
    const feature = await server.request(`/stac/feature/100x100.npy?url=${demoItem}&assets=dem`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(triangle),
    });
    assert.equal(feature.status, 200, await feature.clone().text());
    const f = parseNpy(Buffer.from(await feature.arrayBuffer()));
    assert.deepEqual(f.shape, [2, 100, 100]);
    const mask = f.values.subarray(100 * 100);
    // Top corners are outside the triangle, the bottom middle inside.
    assert.equal(mask[0], 0);
    assert.equal(mask[99], 0);
    assert.equal(mask[95 * 100 + 50], 255);

    const point = await server.get(`/stac/point/${center[0]},${center[1]}?url=${demoItem}&assets=dem&assets=rgb`);
    assert.equal(point.status, 200);
    const body = (await point.json()) as { values: number[]; band_names: string[] };
    assert.deepEqual(body.band_names, ['dem_b1', 'rgb_b1', 'rgb_b2', 'rgb_b3']);
    assert.ok(body.values[0]! > 200 && body.values[0]! < 5000, `an Alpine elevation: ${body.values[0]}`);
  });

  describe('bad input gets a clear 4xx', () => {
    const tile = '/stac/tiles/WebMercatorQuad/9/289/207';
    const cases: Array<[string, string, number, RegExp]> = [
      ['no assets nor expression', `${tile}.png?url=${'ITEM'}`, 400, /assets must be defined/],
      ['bad z', `/stac/tiles/WebMercatorQuad/nine/289/207.png?url=ITEM&assets=B01`, 422, /valid integer/],
      ['bad scale', `${tile}@9x.png?url=ITEM&assets=B01`, 422, /less than or equal to 4/],
      ['bad format', `${tile}.gif?url=ITEM&assets=B01`, 422, /'png'/],
      ['unknown asset', `${tile}.png?url=ITEM&assets=B03`, 404, /B03/],
      ['syntax error in expression', `${tile}.png?url=ITEM&expression=${q('B01_b1 + * 2')}`, 400, /position 10/],
      ['unknown name in expression', `${tile}.png?url=ITEM&expression=${q('B01_b1 + B09_b2')}`, 400, /B09_b2.*position 10/],
      ['unknown function', `${tile}.png?url=ITEM&expression=${q('evil(B01_b1)')}`, 400, /evil/],
      ['expression naming no asset', `${tile}.png?url=ITEM&expression=${q('b1*2')}`, 400, /Could not find any valid assets/],
      ['band index beyond the asset', `${tile}.png?url=ITEM&assets=B01&bidx=2`, 400, /band/],
      ['buffer not a multiple of 0.5', `${tile}.png?url=ITEM&assets=B01&buffer=0.3`, 400, /multiple of 0.5/],
      ['bad nodata', `${tile}.png?url=ITEM&assets=B01&nodata=abc`, 400, /nodata/],
      ['bad rescale', `${tile}.png?url=ITEM&assets=B01&rescale=0`, 400, /rescale/],
      ['bad colormap JSON', `${tile}.png?url=ITEM&assets=B01&colormap=${q('{bad')}`, 400, /colormap/],
      ['bad color formula', `${tile}.png?url=ITEM&assets=B01&color_formula=${q('gamma x 2')}`, 400, /./],
      ['unknown colormap name', `${tile}.png?url=ITEM&assets=B01&colormap_name=nope`, 422, /colormap_name/],
      ['bad bbox number', `/stac/bbox/23.8,32.0,x,32.1.png?url=ITEM&assets=B01`, 422, /valid number/],
      ['inverted bbox', `/stac/bbox/23.9,32.0,23.8,32.1.png?url=ITEM&assets=B01`, 400, /minx < maxx/],
      ['bad dst_crs', `/stac/bbox/23.8,32.0,23.9,32.1.png?url=ITEM&assets=B01&dst_crs=EPSG:notacode`, 400, /dst_crs/],
      ['file path as dst_crs', `/stac/bbox/23.8,32.0,23.9,32.1.png?url=ITEM&assets=B01&dst_crs=${q('/etc/passwd')}`, 400, /dst_crs/],
      ['negative width', `/stac/preview.png?url=ITEM&assets=B01&width=-5&height=10`, 400, /width/],
      ['huge preview', `/stac/preview.png?url=ITEM&assets=B01&width=100000&height=100000`, 400, /too large/],
      ['point outside the data', `/stac/point/0,0?url=ITEM&assets=B01`, 404, /outside/],
      ['point with bad numbers', `/stac/point/abc,1?url=ITEM&assets=B01`, 422, /valid number/],
      ['point outside the CRS domain', `/stac/point/1e300,1e300?url=ITEM&assets=B01`, 404, /outside/],
      ['point that is not a number', `/stac/point/nan,nan?url=ITEM&assets=B01`, 400, /finite/],
      ['local file as url', `${tile}.png?url=${q('/etc/passwd')}&assets=B01`, 400, /./],
    ];
    for (const [name, path, status, re] of cases) {
      it(name, async () => {
        const res = await server.get(path.replace('ITEM', item));
        assert.equal(res.status, status, await res.clone().text());
        assert.match(res.headers.get('content-type') ?? '', /application\/json/);
        assert.match(await detail(res), re);
      });
    }

    const post = (path: string, body: string) =>
      server.request(`${path.replace('ITEM', item)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

    it('feature: malformed JSON, a non-Feature, an open ring and a point are refused', async () => {
      assert.equal((await post('/stac/feature.png?url=ITEM&assets=B01', '{"type":')).status, 400);
      assert.equal((await post('/stac/feature.png?url=ITEM&assets=B01', '[1,2]')).status, 422);
      const open = {
        type: 'Feature',
        properties: {},
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [23.6, 31.9],
              [23.9, 31.85],
              [24.0, 32.2],
              [23.7, 32.25],
            ],
          ],
        },
      };
      const r1 = await post('/stac/feature.png?url=ITEM&assets=B01', JSON.stringify(open));
      assert.equal(r1.status, 422);
      assert.match(await detail(r1), /at least 4 positions|same position/);
      const pt = { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [23.7, 32.0] } };
      const r2 = await post('/stac/feature.png?url=ITEM&assets=B01', JSON.stringify(pt));
      assert.equal(r2.status, 400);
      assert.match(await detail(r2), /Polygon/);
    });

    it('an asset whose file is missing upstream is a clear error and the server keeps serving', async () => {
      const doc = JSON.parse(await fixtureItem(files.url)) as { assets: Record<string, { href: string }> };
      doc.assets['B01']!.href = `${files.url}/missing.tif`;
      files.put('/broken.json', JSON.stringify(doc));
      const res = await server.get(`${tile}.png?url=${q(`${files.url}/broken.json`)}&assets=B01`);
      assert.equal(res.status, 404, await res.clone().text());
      assert.match(await detail(res), /missing\.tif|B01/);
      const ok = await server.get(`${tile}.png?url=${item}&assets=B01&rescale=0,1000`);
      assert.equal(ok.status, 200);
    });
  });
});

describe('/stac image limits refuse work before reading', { timeout: 60_000 }, () => {
  let files: FileServer;
  let server: RunningTessera;
  let item: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    files.put('/item.json', await fixtureItem(files.url));
    item = q(`${files.url}/item.json`);
    server = await startTessera({ maxOutputPixels: 100_000, maxSourcePixels: 20_000 });
  });

  after(async () => {
    await server?.close();
    await files?.close();
  });

  it('a tile over the output cap is a 400 and no pixel is fetched', async () => {
    // Metadata is read first (cheap, cached); the tile itself would be 256×256×2 values.
    await server.get(`/stac/info?url=${item}&assets=B01&assets=B09`);
    const before = files.log.length;
    const res = await server.get(`/stac/tiles/WebMercatorQuad/9/289/207.png?url=${item}&assets=B01&assets=B09`);
    assert.equal(res.status, 400);
    assert.match(await detail(res), /too large/);
    assert.deepEqual(
      files.log.slice(before).filter((l) => l.includes('.tif')),
      [],
      'no raster bytes were requested',
    );
  });

  it('a full-resolution read over the source cap is a 400; a decimated one is served', async () => {
    const full = await server.get(`/stac/preview.png?url=${item}&assets=B01&max_size=0`);
    assert.equal(full.status, 400, 'B01 is 183×183 = 33489 source pixels, above 20000');
    assert.match(await detail(full), /source pixels/);
    const small = await server.get(`/stac/preview.png?url=${item}&assets=B01&max_size=64&rescale=0,1000`);
    assert.equal(small.status, 200, 'read from the 46×46 overview');
  });
});
