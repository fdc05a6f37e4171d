/**
 * The smaller 2.x requests of issue 37 over HTTP under both values of TESSERA_TITILER_API: the
 * `/colorMaps` list as each generation has it (collision colorMaps; `f=` answered under both), and
 * the mosaic asset lookups at 2.x's paths (answered under both, as the 0.18 paths are). Parity with
 * TiTiler 2.4.0 is test/parity/titiler2-misc.test.ts. Also the mosaic `/point` body (collision
 * mosaicPoint), the `.npy` mask and automatic format of each generation (collision imageEncoding),
 * and the TileJSON body (collision tilejsonBody).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFileServer, fixtureMosaic, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import sharp from 'sharp';
import { gdal } from '../src/gdal/gdal.js';
import { parseNpy } from './helpers/npy.js';

describe('TiTiler 2.x colormaps and mosaic lookups, under both settings', () => {
  let files: FileServer;
  let v018: RunningTessera;
  let v2: RunningTessera;
  let mosaic: string;
  let absolute: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    [v018, v2] = await Promise.all([startTessera(), startTessera({ titilerApi: '2' })]);
    mosaic = encodeURIComponent(`${files.url}/mosaic.json`);
    files.put('/mosaics/fixture.json', JSON.stringify(await fixtureMosaic(files.url)));
    absolute = encodeURIComponent(`${files.url}/mosaics/fixture.json`);
  });
  after(async () => {
    await Promise.all([v018?.close(), v2?.close()]);
    await files?.close();
  });

  it('lists colormaps as 0.18 or as 2.x (collision colorMaps), HTML by Accept only under 2', async () => {
    const old = (await (await v018.get('/colorMaps', { accept: 'text/html' })).json()) as { colorMaps: string[] };
    assert.ok(old.colorMaps.includes('viridis'));
    const list = (await (await v2.get('/colorMaps')).json()) as { colormaps: Array<{ id: string; links: Array<{ href: string; rel: string }> }> };
    const viridis = list.colormaps.find((c) => c.id === 'viridis');
    assert.ok(viridis);
    assert.match(viridis.links[0]!.href, /\/colorMaps\/viridis$/);
    assert.equal(viridis.links[0]!.rel, 'item');
    assert.equal(list.colormaps.length, old.colorMaps.length);
    assert.match((await v2.get('/colorMaps', { accept: 'text/html' })).headers.get('content-type') ?? '', /text\/html/);
    assert.match((await v2.get('/colorMaps/viridis', { accept: 'text/html' })).headers.get('content-type') ?? '', /text\/html/);
    assert.match((await v018.get('/colorMaps/viridis', { accept: 'text/html' })).headers.get('content-type') ?? '', /json/);
    for (const server of [v018, v2]) {
      assert.match((await server.get('/colorMaps?f=html')).headers.get('content-type') ?? '', /text\/html/);
      assert.equal((await server.get('/colorMaps?f=png')).status, 422);
      const png = await server.get('/colorMaps/viridis?f=png&width=100&height=10');
      assert.equal(png.headers.get('content-type'), 'image/png');
      // 0.18's `format=` still draws the legend; `f` wins over it.
      assert.equal((await server.get('/colorMaps/viridis?format=png')).headers.get('content-type'), 'image/png');
      assert.match((await server.get('/colorMaps/viridis?format=png&f=json')).headers.get('content-type') ?? '', /json/);
      assert.equal((await server.get('/colorMaps/viridis?f=gif')).status, 422);
    }
  });

  it("answers the mosaic asset lookups at 2.x's paths under both, as at 0.18's", async () => {
    for (const server of [v018, v2]) {
      const pairs: Array<[string, string]> = [
        [`/mosaicjson/tiles/WebMercatorQuad/7/37/45/assets?url=${mosaic}`, `/mosaicjson/WebMercatorQuad/7/37/45/assets?url=${mosaic}`],
        [`/mosaicjson/point/-73,46/assets?url=${mosaic}`, `/mosaicjson/-73,46/assets?url=${mosaic}`],
        [`/mosaicjson/bbox/-76,45,-72,47/assets?url=${mosaic}`, `/mosaicjson/-76,45,-72,47/assets?url=${mosaic}`],
      ];
      for (const [v2Path, oldPath] of pairs) {
        const [a, b] = await Promise.all([server.get(v2Path), server.get(oldPath)]);
        assert.equal(a.status, 200, await a.clone().text());
        const body = (await a.json()) as string[];
        assert.ok(body.length > 0, v2Path);
        assert.deepEqual(body, await b.json());
      }
      assert.equal((await server.get(`/mosaicjson/bbox/-76,45,-72/assets?url=${mosaic}`)).status, 404);
      assert.equal((await server.get(`/mosaicjson/point/x,46/assets?url=${mosaic}`)).status, 422);
      assert.equal((await server.get(`/mosaicjson/tiles/WebMercatorQuad/7/a/45/assets?url=${mosaic}`)).status, 422);
    }
  });

  it('answers the mosaic /point body as 0.18 or as 2.x (collision mosaicPoint)', async () => {
    type Old = { coordinates: number[]; values: Array<[string, number[], string[]]> };
    type New = { coordinates: number[]; assets: Array<{ name: string; values: Array<number | null>; band_names: string[]; band_descriptions: string[] }> };
    const old = (await (await v018.get(`/mosaicjson/point/-72.5,45.6?url=${absolute}`)).json()) as Old;
    const neu = (await (await v2.get(`/mosaicjson/point/-72.5,45.6?url=${absolute}`)).json()) as New;
    assert.deepEqual(neu.coordinates, old.coordinates);
    assert.equal(neu.assets.length, old.values.length);
    assert.ok(neu.assets.length > 0);
    neu.assets.forEach((a, i) => {
      const [name, values, names] = old.values[i]!;
      assert.equal(a.name, name);
      assert.deepEqual(a.band_names, names);
      assert.deepEqual(a.band_descriptions, names);
      // 0.18 gives a masked value as it is read; 2.x as null.
      for (const [j, v] of a.values.entries()) assert.ok(v === null || v === values[j]);
    });
    const expr = (await (await v2.get(`/mosaicjson/point/-72.5,45.6?url=${absolute}&expression=b1*2`)).json()) as New;
    assert.deepEqual(expr.assets[0]!.band_names, ['b1']);
    assert.deepEqual(expr.assets[0]!.band_descriptions, ['b1*2']);
    assert.equal((await v2.get(`/mosaicjson/point/10,10?url=${absolute}`)).status, 204);
  });

  it('encodes .npy masks and automatic formats as 0.18 or as 2.x (collision imageEncoding)', async () => {
    const cog = encodeURIComponent(`${files.url}/cog.tif`);
    const lastBand = async (server: RunningTessera, path: string): Promise<{ descr: string; values: Set<number> }> => {
      const npy = parseNpy(Buffer.from(await (await server.get(path)).arrayBuffer()));
      const per = npy.shape[1]! * npy.shape[2]!;
      return { descr: npy.descr, values: new Set(npy.values.subarray(npy.values.length - per)) };
    };
    const edge = `/cog/tiles/WebMercatorQuad/5/10/6.npy?url=${cog}`;
    const old = await lastBand(v018, edge);
    const neu = await lastBand(v2, edge);
    assert.equal(old.descr, '<u2');
    assert.equal(neu.descr, '<u2');
    assert.deepEqual(
      [...old.values].sort((a, b) => a - b),
      [0, 255],
    );
    assert.deepEqual(
      [...neu.values].sort((a, b) => a - b),
      [0, 65535],
    );
    // A uint16 tile with masked pixels and no format: a 16-bit PNG under 0.18, an 8-bit one under 2.
    const auto = `/cog/tiles/WebMercatorQuad/5/10/6?url=${cog}`;
    const depth = async (server: RunningTessera): Promise<string | undefined> =>
      (await sharp(Buffer.from(await (await server.get(auto)).arrayBuffer())).metadata()).depth;
    assert.equal(await depth(v018), 'ushort');
    assert.equal(await depth(v2), 'uchar');
    // A GeoTIFF's alpha: 255 under 0.18, the dtype's largest value under 2.
    const alphaValues = async (server: RunningTessera): Promise<number[]> => {
      const body = Buffer.from(await (await server.get(`/cog/tiles/WebMercatorQuad/5/10/6.tif?url=${cog}`)).arrayBuffer());
      const path = `/vsimem/titiler2-misc-${Math.random()}.tif`;
      gdal.vsimem.set(body, path);
      const ds = await gdal.openAsync(path);
      try {
        const alpha = ds.bands.get(ds.bands.count());
        const values: number[] = Array.from(alpha.pixels.read(0, 0, ds.rasterSize.x, ds.rasterSize.y) as unknown as ArrayLike<number>);
        return [...new Set(values)].sort((a, b) => a - b);
      } finally {
        ds.close();
        gdal.vsimem.release(path);
      }
    };
    assert.deepEqual(await alphaValues(v018), [0, 255]);
    assert.deepEqual(await alphaValues(v2), [0, 65535]);
  });

  it('writes TileJSON 2.2.0 (0.18) or 3.0.0 as 2.x does (collision tilejsonBody)', async () => {
    const cog = encodeURIComponent(`${files.url}/cog.tif`);
    type TileJson = {
      tilejson: string;
      center: number[];
      bounds: number[];
      minzoom: number;
      raster_layers?: unknown;
      band_descriptions?: unknown;
      data_type?: string;
    };
    const old = (await (await v018.get(`/cog/WebMercatorQuad/tilejson.json?url=${cog}`)).json()) as TileJson;
    const neu = (await (await v2.get(`/cog/WebMercatorQuad/tilejson.json?url=${cog}`)).json()) as TileJson;
    assert.equal(old.tilejson, '2.2.0');
    assert.equal(old.raster_layers, undefined);
    assert.equal(neu.tilejson, '3.0.0');
    assert.deepEqual(neu.raster_layers, {});
    assert.deepEqual(neu.band_descriptions, [['b1', 'b1']]);
    assert.equal(neu.data_type, 'uint16');
    // A mosaic's center: its document's under 0.18, its bounds' middle under 2.
    const mosaicOld = (await (await v018.get(`/mosaicjson/WebMercatorQuad/tilejson.json?url=${mosaic}`)).json()) as TileJson;
    const mosaicNew = (await (await v2.get(`/mosaicjson/WebMercatorQuad/tilejson.json?url=${mosaic}`)).json()) as TileJson;
    const [minx, miny, maxx, maxy] = mosaicNew.bounds as [number, number, number, number];
    assert.deepEqual(mosaicNew.center, [(minx + maxx) / 2, (miny + maxy) / 2, mosaicNew.minzoom]);
    assert.notDeepEqual(mosaicOld.center, mosaicNew.center);
    assert.equal(mosaicNew.band_descriptions, undefined);
  });
  it("answers `tiff`, TiTiler 2.x's other name of the GeoTIFF format, under both settings", async () => {
    const cog = encodeURIComponent(`${files.url}/cog.tif`);
    for (const server of [v018, v2]) {
      for (const path of [`/cog/tiles/WebMercatorQuad/7/44/25.tiff?url=${cog}`, `/cog/bbox/-60,73,-55,74/64x64.tiff?url=${cog}`]) {
        const res = await server.get(path);
        assert.equal(res.status, 200, path);
        assert.equal(res.headers.get('content-type'), 'image/tiff; application=geotiff');
        assert.deepEqual([...Buffer.from(await res.arrayBuffer()).subarray(0, 2)], [0x49, 0x49], 'a little-endian TIFF');
      }
      // …and as the `format` query value of paths without an extension.
      for (const path of [`/cog/tiles/WebMercatorQuad/7/44/25?url=${cog}&format=tiff`, `/cog/preview?url=${cog}&max_size=32&format=tiff`]) {
        const res = await server.get(path);
        assert.equal(res.status, 200, path);
        assert.equal(res.headers.get('content-type'), 'image/tiff; application=geotiff');
        assert.deepEqual([...Buffer.from(await res.arrayBuffer()).subarray(0, 2)], [0x49, 0x49], 'a little-endian TIFF');
      }
      // `tile_format=tiff`: the tile URLs of TileJSON and WMTS end in `.tiff`, as named (and they answer).
      const tilejson = (await (await server.get(`/cog/WebMercatorQuad/tilejson.json?url=${cog}&tile_format=tiff`)).json()) as { tiles: string[] };
      assert.match(tilejson.tiles[0]!, /\/\{z\}\/\{x\}\/\{y\}(@1x)?\.tiff\?url=/);
      assert.doesNotMatch(tilejson.tiles[0]!, /tile_format/);
      const tile = await server.get(new URL(tilejson.tiles[0]!.replace('{z}/{x}/{y}', '7/44/25')).pathname + new URL(tilejson.tiles[0]!).search);
      assert.equal(tile.headers.get('content-type'), 'image/tiff; application=geotiff');
      const wmts = await (await server.get(`/cog/WMTSCapabilities.xml?url=${cog}&tile_format=tiff`)).text();
      assert.match(wmts, /<Format>image\/tiff; application=geotiff<\/Format>/);
      assert.match(wmts, /\{TileRow\}(@1x)?\.tiff\?/);
      // Other names are refused as before, the message listing 0.18's formats.
      for (const path of [
        `/cog/tiles/WebMercatorQuad/7/44/25.gif?url=${cog}`,
        `/cog/tiles/WebMercatorQuad/7/44/25?url=${cog}&format=gif`,
        `/cog/WebMercatorQuad/tilejson.json?url=${cog}&tile_format=gif`,
      ]) {
        const bad = await server.get(path);
        assert.equal(bad.status, 422, path);
        const body = await bad.text();
        assert.match(body, /Input should be 'png', 'npy', 'tif', 'jpeg', 'jpg', 'jp2', 'webp' or 'pngraw'/, path);
      }
    }
    const map = await v2.get(`/cog/map?url=${cog}&f=tiff&width=32&height=32`);
    assert.equal(map.headers.get('content-type'), 'image/tiff; application=geotiff');
  });

  it("takes a STAC item's bounds and zooms from its projection extension under 2 only (collision stacProjection)", async () => {
    const asset = (file: string) => ({
      href: `${files.url}/${file}`,
      type: 'image/tiff; application=geotiff',
      'proj:epsg': 32634,
      'proj:shape': [183, 183],
      'proj:transform': [600, 0, 699960, 0, -600, 3600000],
    });
    // A bbox wider than the assets' grids: which of the two a document shows is plain.
    const bbox = [22, 30, 25, 33];
    const item = (extensions: string[]) =>
      JSON.stringify({
        type: 'Feature',
        stac_version: '1.0.0',
        stac_extensions: extensions,
        id: 'proj',
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [22, 30],
              [25, 30],
              [25, 33],
              [22, 33],
              [22, 30],
            ],
          ],
        },
        bbox,
        properties: { datetime: '2020-03-18T00:00:00Z' },
        links: [],
        assets: { B01: asset('B01.tif'), B09: asset('B09.tif') },
      });
    files.put('/items/proj.json', item(['https://stac-extensions.github.io/projection/v1.1.0/schema.json']));
    files.put('/items/no-proj.json', item([]));
    const tilejson = async (server: RunningTessera, name: string) =>
      (await (await server.get(`/stac/WebMercatorQuad/tilejson.json?url=${encodeURIComponent(`${files.url}/items/${name}.json`)}&assets=B01`)).json()) as {
        bounds: number[];
        minzoom: number;
        maxzoom: number;
      };
    // The asset's own file, read by the COG reader: the bounds and zooms of its grid.
    const cog = (await (await v2.get(`/cog/WebMercatorQuad/tilejson.json?url=${encodeURIComponent(`${files.url}/B01.tif`)}`)).json()) as {
      bounds: number[];
      minzoom: number;
      maxzoom: number;
    };
    const projected = await tilejson(v2, 'proj');
    assert.deepEqual([projected.minzoom, projected.maxzoom], [cog.minzoom, cog.maxzoom]);
    for (const [i, v] of projected.bounds.entries()) assert.ok(Math.abs(v - cog.bounds[i]!) < 1e-9, `${projected.bounds} are the grid's ${cog.bounds}`);
    for (const [server, name] of [
      [v018, 'proj'],
      [v2, 'no-proj'],
    ] as const) {
      const plain = await tilejson(server, name);
      assert.deepEqual([plain.bounds, plain.minzoom, plain.maxzoom], [bbox, 0, 24], `${name}: the item's bbox and every zoom`);
    }
  });

  it('writes points and statistics in the model of each generation (collision describedBands)', async () => {
    const cog = encodeURIComponent(`${files.url}/cog_scale.tif`);
    const point = '/cog/point/127.35,37.44';
    const old = (await (await v018.get(`${point}?url=${cog}`)).json()) as Record<string, unknown>;
    const neu = (await (await v2.get(`${point}?url=${cog}`)).json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(old), ['coordinates', 'values', 'band_names']);
    assert.deepEqual(Object.keys(neu), ['coordinates', 'values', 'band_names', 'band_descriptions']);
    // The file describes its band: 'Green'.
    assert.deepEqual(neu['band_descriptions'], ['Green']);
    const expr = (await (await v2.get(`${point}?url=${cog}&expression=b1*2`)).json()) as Record<string, unknown>;
    assert.deepEqual([expr['band_names'], expr['band_descriptions']], [['b1'], ['Green*2']]);
    const stats018 = (await (await v018.get(`/cog/statistics?url=${cog}&max_size=64`)).json()) as Record<string, Record<string, unknown>>;
    const stats2 = (await (await v2.get(`/cog/statistics?url=${cog}&max_size=64`)).json()) as Record<string, Record<string, unknown>>;
    assert.equal(stats018['b1']!['description'], undefined);
    assert.equal(stats2['b1']!['description'], 'Green');
  });
  it('sizes a whole image asked with one of width and height as each generation does (collision outputSize)', async () => {
    const cog = encodeURIComponent(`${files.url}/cog.tif`);
    const shape = async (server: RunningTessera, path: string): Promise<number[]> => {
      const res = await server.get(path);
      assert.equal(res.status, 200, await res.clone().text());
      return parseNpy(Buffer.from(await res.arrayBuffer())).shape;
    };
    // cog.tif is 2658 × 2667: under 0.18 max_size (1024 by default) wins over a width alone; 2.x keeps the aspect ratio.
    const preview = `/cog/preview.npy?url=${cog}&width=100`;
    assert.deepEqual(await shape(v018, preview), [2, 1024, 1021]);
    assert.deepEqual(await shape(v2, preview), [2, Math.ceil(100 * (2667 / 2658)), 100]);
    const bbox = `/cog/bbox/-60,73,-55,74.npy?url=${cog}&height=50`;
    const [old, neu] = [await shape(v018, bbox), await shape(v2, bbox)];
    assert.equal(old[1], 50);
    assert.equal(neu[1], 50);
    assert.notEqual(old[2], neu[2]);
  });
});
