/**
 * The reader contract, checked the same way on every reader family the route factory mounts: a COG
 * (/cog), a STAC item (/stac) and a MosaicJSON document (/mosaicjson). Each family gets the same
 * questions — tiles in both URL forms and at @2x, a tile outside the data, TileJSON whose template
 * answers, WMTS, the map page, the same 4xx for the same bad query on all four, point values, the
 * whole-image verbs where the family has them — and its reference tiles, drawn by TiTiler 0.18.10
 * from the same fixtures (test/fixtures/expected/tiles/, made by tools/expected/reference-tiles.ts).
 *
 * In-process (Fastify's inject); the fixtures come from a real Range-serving file server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startFileServer, fixtureItem, fixtureMosaic, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { REPO_ROOT } from './helpers/paths.js';
import { resolveFixtureUrls } from './helpers/fixture-urls.js';
import { compareArrays, decodePng, PASS } from './parity/pixels.js';
import type { ReferenceTile } from '../tools/expected/reference-tiles.js';

interface Family {
  prefix: '/cog' | '/stac' | '/mosaicjson';
  /** The query naming the dataset and its layer (`{files}` is the file server's origin). */
  query: string;
  /** A WebMercatorQuad tile inside the data, and one outside it (at a zoom the dataset has). */
  inside: [number, number, number];
  outside: [number, number, number];
  /** What a tile outside the data answers: 404, or 204 for a mosaic with no asset there (cogeo-mosaic's NoAssetFoundError). */
  outsideStatus: 404 | 204;
  /** The zooms TileJSON announces: the COG's own, every zoom of the grid for a STAC item, the document's for a mosaic. */
  zooms: [number, number];
  /** Expected WGS84 bounds of the dataset (to 1e-6). */
  bounds: [number, number, number, number];
  /** A point inside the data. */
  point: [number, number];
  /** The family has preview, bbox, feature and statistics (a mosaic does not, as in TiTiler). */
  wholeImages: boolean;
}

const S2_BOUNDS: [number, number, number, number] = [23.293255090449595, 31.505183020453774, 24.296453548295318, 32.51147809805106];

const FAMILIES: Family[] = [
  {
    prefix: '/cog',
    query: 'url={files}/B01.tif&rescale=0,10000',
    inside: [289, 207, 9],
    outside: [128, 128, 9],
    outsideStatus: 404,
    zooms: [8, 8],
    bounds: [0, 0, 0, 0],
    point: [23.8, 32.0],
    wholeImages: true,
  },
  {
    prefix: '/stac',
    query: 'url={files}/item.json&assets=B01&rescale=0,10000',
    inside: [289, 207, 9],
    outside: [128, 128, 9],
    outsideStatus: 404,
    zooms: [0, 24],
    bounds: S2_BOUNDS,
    point: [23.8, 32.0],
    wholeImages: true,
  },
  {
    prefix: '/mosaicjson',
    query: 'url={files}/mosaic.json&rescale=5000,15000',
    inside: [152, 183, 9],
    outside: [128, 128, 9],
    outsideStatus: 204,
    zooms: [7, 9],
    bounds: [-75.98703377403767, 44.93504283303786, -71.337604724099, 47.096855991923235],
    point: [-73.0, 45.5],
    wholeImages: false,
  },
];

/** Fragments each of which makes a query wrong, and the status every route must give it. */
const BAD_QUERIES: Array<[string, number]> = [
  ['rescale=abc', 400],
  ['color_formula=gamma%20x%202', 400],
  ['algorithm=hillshade&algorithm_params=%7Bbad', 400],
  ['colormap=%7Bbad', 400],
  ['nodata=abc', 400],
  ['buffer=0.3', 400],
  ['padding=-1', 422],
  ['resampling=sideways', 422],
  ['colormap_name=nope', 422],
];

describe('the reader contract, on every reader family', () => {
  let files: FileServer;
  let tessera: RunningTessera;
  const q = (f: Family): string => f.query.replace(/url=\{files\}([^&]*)/, (_, p: string) => `url=${encodeURIComponent(`${files.url}${p}`)}`);

  before(async () => {
    files = await startFileServer(FIXTURES);
    files.put('/item.json', await fixtureItem(files.url));
    files.put('/mosaic.json', JSON.stringify(await fixtureMosaic(files.url)));
    tessera = await startTessera({ tileCacheBytes: 0 });
    // The COG's own bounds, as its /bounds route gives them, for the TileJSON check below.
    const res = await tessera.get(`/cog/bounds?${q(FAMILIES[0]!)}`);
    FAMILIES[0]!.bounds = ((await res.json()) as { bounds: [number, number, number, number] }).bounds;
  });
  after(async () => {
    await tessera?.close();
    await files?.close();
  });

  for (const f of FAMILIES) {
    describe(f.prefix, () => {
      it('draws a tile in the grid form and the deprecated form alike, and twice the size at @2x', async () => {
        const [x, y, z] = f.inside;
        const grid = await tessera.get(`${f.prefix}/tiles/WebMercatorQuad/${z}/${x}/${y}.png?${q(f)}`);
        assert.equal(grid.status, 200, await grid.clone().text());
        assert.equal(grid.headers.get('content-type'), 'image/png');
        const image = await decodePng(Buffer.from(await grid.arrayBuffer()));
        assert.deepEqual([image.width, image.height], [256, 256]);
        const deprecated = await tessera.get(`${f.prefix}/tiles/${z}/${x}/${y}.png?${q(f)}`);
        assert.equal(deprecated.status, 200);
        const again = await decodePng(Buffer.from(await deprecated.arrayBuffer()));
        assert.deepEqual(again.values, image.values, 'the same pixels');
        const big = await tessera.get(`${f.prefix}/tiles/WebMercatorQuad/${z}/${x}/${y}@2x.png?${q(f)}`);
        assert.equal(big.status, 200);
        assert.equal((await decodePng(Buffer.from(await big.arrayBuffer()))).width, 512);
      });

      it(`answers a tile outside the data with a ${f.outsideStatus}`, async () => {
        const [x, y, z] = f.outside;
        const res = await tessera.get(`${f.prefix}/tiles/WebMercatorQuad/${z}/${x}/${y}.png?${q(f)}`);
        assert.equal(res.status, f.outsideStatus);
        if (f.outsideStatus === 404) assert.match(((await res.json()) as { detail: string }).detail, /outside/);
        else assert.equal((await res.arrayBuffer()).byteLength, 0);
      });

      it('describes itself in TileJSON whose tile template answers', async () => {
        const res = await tessera.get(`${f.prefix}/WebMercatorQuad/tilejson.json?${q(f)}`);
        assert.equal(res.status, 200);
        const doc = (await res.json()) as { tilejson: string; tiles: string[]; bounds: number[]; minzoom: number; maxzoom: number };
        assert.equal(doc.tilejson, '2.2.0');
        doc.bounds.forEach((v, i) => {
          assert.ok(Math.abs(v - f.bounds[i]!) < 1e-6, `bounds[${i}] ${v} vs ${f.bounds[i]}`);
        });
        assert.deepEqual([doc.minzoom, doc.maxzoom], f.zooms);
        const template = new URL(doc.tiles[0]!);
        assert.ok(template.pathname.startsWith(`${f.prefix}/tiles/WebMercatorQuad/`), template.pathname);
        const [x, y, z] = f.inside;
        const tile = await tessera.get(
          `${template.pathname}${template.search}`
            .replace('%7Bz%7D', String(z))
            .replace('%7Bx%7D', String(x))
            .replace('%7By%7D', String(y))
            .replace('{z}', String(z))
            .replace('{x}', String(x))
            .replace('{y}', String(y)),
        );
        assert.equal(tile.status, 200, await tile.clone().text());
        const deprecated = await tessera.get(`${f.prefix}/tilejson.json?${q(f)}`);
        assert.deepEqual(await deprecated.json(), doc, 'the deprecated form says the same');
      });

      it('lists itself in WMTS capabilities and opens on a map page', async () => {
        const wmts = await tessera.get(`${f.prefix}/WebMercatorQuad/WMTSCapabilities.xml?${q(f)}`);
        assert.equal(wmts.status, 200);
        assert.equal(wmts.headers.get('content-type'), 'application/xml');
        const xml = await wmts.text();
        assert.match(
          xml,
          new RegExp(`template="[^"]*${f.prefix.replace('/', '\\/')}/tiles/WebMercatorQuad/\\{TileMatrix\\}/\\{TileCol\\}/\\{TileRow\\}@1x\\.png`),
        );
        const map = await tessera.get(`${f.prefix}/WebMercatorQuad/map?${q(f)}`);
        assert.equal(map.status, 200);
        assert.match(map.headers.get('content-type') ?? '', /^text\/html/);
      });

      it('gives the same 4xx for the same bad query on a tile, its TileJSON, WMTS and map page', async () => {
        const [x, y, z] = f.inside;
        for (const [bad, status] of BAD_QUERIES) {
          const answers = await Promise.all(
            [
              `/tiles/WebMercatorQuad/${z}/${x}/${y}.png`,
              '/WebMercatorQuad/tilejson.json',
              '/WebMercatorQuad/WMTSCapabilities.xml',
              '/WebMercatorQuad/map',
            ].map(async (route) => {
              const res = await tessera.get(`${f.prefix}${route}?${q(f)}&${bad}`);
              return { route, status: res.status, body: await res.text() };
            }),
          );
          for (const a of answers) {
            assert.equal(a.status, status, `${bad} on ${a.route}: ${a.body.slice(0, 200)}`);
            const detail = (JSON.parse(a.body) as { detail: unknown }).detail;
            assert.deepEqual(detail, (JSON.parse(answers[0]!.body) as { detail: unknown }).detail, `${bad}: ${a.route} says what the tile says`);
          }
        }
      });

      it('reads the values at a point', async () => {
        const res = await tessera.get(`${f.prefix}/point/${f.point[0]},${f.point[1]}?${q(f).replace(/&rescale=[^&]*/, '')}`);
        assert.equal(res.status, 200, await res.clone().text());
        const body = (await res.json()) as { coordinates: number[]; values: unknown[] };
        assert.deepEqual(body.coordinates, f.point);
        assert.ok(body.values.length > 0);
        // A mosaic lists each asset's values (TiTiler's MosaicTilerFactory); the others one value per band.
        if (f.prefix === '/mosaicjson') for (const v of body.values) assert.ok(Array.isArray(v) && typeof v[0] === 'string' && Array.isArray(v[1]));
        else for (const v of body.values) assert.equal(typeof v, 'number');
      });

      it(
        f.wholeImages ? 'makes previews, parts, feature images and statistics' : 'has no preview nor GET /statistics (as in TiTiler), and reads areas',
        async () => {
          const [w, s] = f.point;
          const routes = [
            ['GET', `/preview.png?${q(f)}&max_size=128`],
            ['GET', `/bbox/${w - 0.05},${s - 0.05},${w + 0.05},${s + 0.05}/64x64.png?${q(f)}`],
            ['POST', `/feature.png?${q(f)}&max_size=64`],
            ['GET', `/statistics?${q(f)}&max_size=128`],
          ] as const;
          const feature = JSON.stringify({
            type: 'Feature',
            properties: {},
            geometry: {
              type: 'Polygon',
              coordinates: [
                [
                  [w - 0.05, s - 0.05],
                  [w + 0.05, s - 0.05],
                  [w + 0.05, s + 0.05],
                  [w - 0.05, s - 0.05],
                ],
              ],
            },
          });
          for (const [method, route] of routes) {
            const res = await tessera.request(
              `${f.prefix}${route}`,
              method === 'POST' ? { method, body: feature, headers: { 'content-type': 'application/json' } } : { method },
            );
            if (!f.wholeImages) {
              // A mosaic has no preview nor GET /statistics (TiTiler's MosaicTilerFactory); it reads areas (2.x's add_part).
              const area = route.startsWith('/bbox') || route.startsWith('/feature');
              assert.equal(res.status, area ? 200 : 404, `${route}: ${area ? await res.clone().text() : ''}`);
              continue;
            }
            assert.equal(res.status, 200, `${route}: ${await res.clone().text()}`);
            if (route.startsWith('/statistics')) assert.ok(Object.keys((await res.json()) as object).length > 0);
            else assert.equal(res.headers.get('content-type'), 'image/png');
          }
        },
      );
    });
  }

  describe('reference tiles (TiTiler 0.18.10, tools/expected/reference-tiles.ts)', () => {
    const dir = path.join(REPO_ROOT, 'test/fixtures/expected/tiles');
    const { cases } = JSON.parse(readFileSync(path.join(dir, 'cases.json'), 'utf8')) as { cases: ReferenceTile[] };
    it('covers every reader family', () => {
      assert.deepEqual([...new Set(cases.map((c) => c.family))].sort(), ['cog', 'mosaicjson', 'stac']);
    });
    for (const c of cases) {
      it(`${c.id}: ${c.why}`, async () => {
        const res = await tessera.get(resolveFixtureUrls(c.path, files.url));
        assert.equal(res.status, 200, await res.clone().text());
        const mine = await decodePng(Buffer.from(await res.arrayBuffer()));
        const reference = await decodePng(readFileSync(path.join(dir, `${c.id}.png`)));
        assert.deepEqual([mine.width, mine.height, mine.channels], [reference.width, reference.height, reference.channels]);
        const alpha = reference.channels === 2 || reference.channels === 4 ? 1 : 0;
        const { within, maskEqual } = compareArrays(reference.values, mine.values, reference.channels, alpha);
        assert.ok(within >= PASS, `${(within * 100).toFixed(2)}% of values within ±1`);
        assert.ok(maskEqual >= PASS, `${(maskEqual * 100).toFixed(2)}% of the mask equal`);
      });
    }
  });
});
