/**
 * A reader family is one registration (api/factory.ts, `defineFamily`): its verbs, /api tag and
 * metrics label all come from it. A family mounted with only the point verb answers /point and has
 * no /preview, /bbox, /feature or /statistics route (the router's 404, none of them in /api); its
 * tag heads /api's tags and its label is the `family` of its requests in /metrics. tessera's own
 * list (api/app.ts, FAMILIES) drives the same, a disabled family is left out whole (its viewer
 * too), and a family whose reader lacks a verb's method cannot list the verb: that does not compile.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { defineFamily } from '../src/api/factory.js';
import * as verb from '../src/api/verbs.js';
import { bandLayer } from '../src/api/params/index.js';
import { FAMILIES } from '../src/api/app.js';
import { TesseraError } from '../src/errors.js';
import type { Reader, ReaderImage, ReaderPoint, Zooms } from '../src/readers/reader.js';
import type { BBox } from '../src/tms/grid.js';

const BOUNDS: BBox = [10, 40, 11, 41];

/** A reader with tiles alone (none here: the fake dataset has no pixels). */
class TileReader implements Reader {
  readonly bounds = BOUNDS;
  constructor(protected readonly url: string) {}
  async version(): Promise<string | undefined> {
    return undefined;
  }
  async zooms(): Promise<Zooms> {
    return { minzoom: 3, maxzoom: 9 };
  }
  async tile(): Promise<ReaderImage> {
    throw new TesseraError('TileOutsideBounds', 'the fake dataset has no pixels');
  }
}

/** A reader with tiles and point values: what the fake family opens. */
class PointReader extends TileReader {
  async point(lon: number, lat: number): Promise<ReaderPoint> {
    return { values: [lon + lat, this.url.length], bandNames: ['sum', 'url_length'] };
  }
}

const summary = async () => ({ bounds: BOUNDS, zooms: async () => ({ minzoom: 3, maxzoom: 9 }) });

const pointFamily = defineFamily({
  prefix: '/points',
  tag: { name: 'Points', description: 'A family with the point verb alone.' },
  metricsLabel: 'point-family',
  layer: bandLayer,
  datasets: () => ({ open: async (url) => new PointReader(url), summary }),
  verbs: [verb.point],
});

/** Compiled, never run: a family whose reader has no `preview` cannot offer the preview verb. */
export function previewWithoutPreview() {
  return defineFamily({
    prefix: '/tiles-only',
    tag: { name: 'Tiles only', description: 'Not a family.' },
    metricsLabel: 'tiles-only',
    layer: bandLayer,
    // @ts-expect-error TileReader has no `preview`, which verb.preview calls
    datasets: () => ({ open: async (url: string) => new TileReader(url), summary }),
    verbs: [verb.preview],
  });
}

interface Api {
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, { tags?: string[] }>>;
}

describe('a family is one registration', () => {
  let tessera: RunningTessera;
  before(async () => {
    tessera = await startTessera({}, { families: [pointFamily, ...FAMILIES] });
  });
  after(async () => {
    await tessera?.close();
  });

  it('mounts the verbs the family lists and no other: the router answers 404 for the rest', async () => {
    const point = await tessera.get('/points/point/1.5,2?url=abc');
    assert.equal(point.status, 200);
    assert.deepEqual(await point.json(), { coordinates: [1.5, 2.0], values: [3.5, 3.0], band_names: ['sum', 'url_length'] });
    const tilejson = await tessera.get('/points/WebMercatorQuad/tilejson.json?url=abc');
    assert.equal(tilejson.status, 200, 'tiles, TileJSON, WMTS and the map come with every family');
    assert.deepEqual(((await tilejson.json()) as { bounds: number[] }).bounds, BOUNDS);
    for (const [method, path] of [
      ['GET', '/points/preview?url=abc'],
      ['GET', '/points/preview.png?url=abc'],
      ['GET', '/points/bbox/10,40,11,41.png?url=abc'],
      ['POST', '/points/feature?url=abc'],
      ['GET', '/points/statistics?url=abc'],
      ['POST', '/points/statistics?url=abc'],
      ['GET', '/points/viewer'],
    ] as const) {
      const res = await tessera.request(path, method === 'POST' ? { method, headers: { 'content-type': 'application/json' }, body: '{}' } : {});
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.deepEqual(await res.json(), { detail: 'Not Found' });
    }
    // The mosaic family lists none of the optional verbs.
    assert.equal((await tessera.get('/mosaicjson/preview.png?url=x')).status, 404);
    assert.equal((await tessera.get('/mosaicjson/statistics?url=x')).status, 404);
  });

  it("documents only the family's routes, under its tag, the families' tags first in their order", async () => {
    const api = (await (await tessera.get('/api')).json()) as Api;
    const paths = Object.keys(api.paths).filter((p) => p.startsWith('/points/'));
    assert.ok(paths.includes('/points/point/{lon},{lat}'));
    assert.ok(paths.includes('/points/tiles/{tileMatrixSetId}/{z}/{x}/{y}@{scale}x.{format}'));
    assert.deepEqual(
      paths.filter((p) => /\/(preview|bbox|feature|statistics|viewer)/.test(p)),
      [],
    );
    for (const path of paths) for (const op of Object.values(api.paths[path]!)) assert.deepEqual(op.tags, ['Points'], path);
    // The catalogue's families (/searches, /collections, their items and assets) are mounted only with a catalogue (TESSERA_PGSTAC_DSN, TESSERA_CATALOG).
    const mounted = FAMILIES.filter((f) => f.enabled(tessera.services.settings));
    assert.deepEqual(
      mounted.map((f) => f.prefix),
      ['/cog', '/stac', '/mosaicjson'],
    );
    assert.deepEqual(
      api.tags.slice(0, 4),
      [pointFamily, ...mounted].map((f) => f.tag),
    );
    assert.equal(FAMILIES.length, 7);
    assert.deepEqual(
      Object.keys(api.paths)
        .filter((p) => /^\/mosaicjson\/(preview|bbox|feature|statistics|point)/.test(p))
        .sort(),
      [
        '/mosaicjson/bbox/{minx},{miny},{maxx},{maxy}.{format}',
        '/mosaicjson/bbox/{minx},{miny},{maxx},{maxy}/assets',
        '/mosaicjson/bbox/{minx},{miny},{maxx},{maxy}/{width}x{height}.{format}',
        '/mosaicjson/feature',
        '/mosaicjson/feature.{format}',
        '/mosaicjson/feature/{width}x{height}.{format}',
        '/mosaicjson/point/{lon},{lat}',
        '/mosaicjson/point/{lon},{lat}/assets',
        '/mosaicjson/statistics',
      ],
      "the mosaic's own point route and asset lookups, and the area verbs it lists (bbox, feature, POST statistics; no preview)",
    );
  });

  it("counts the family's requests under its metrics label", async () => {
    assert.equal((await tessera.get('/points/point/0,0?url=abc')).status, 200);
    const text = await (await tessera.get('/metrics')).text();
    assert.match(text, /tessera_http_requests_total\{family="point-family",route="\/points\/point\/:lonlat",method="GET",status="200"\} [1-9]/);
    assert.doesNotMatch(text, /family="points"/);
  });
});

describe('a disabled family', () => {
  let tessera: RunningTessera;
  before(async () => {
    tessera = await startTessera({ disabledFamilies: ['stac'] });
  });
  after(async () => {
    await tessera?.close();
  });

  it('is left out whole: routes, viewer, /api paths and tag', async () => {
    assert.equal((await tessera.get('/stac/info?url=x')).status, 404);
    assert.equal((await tessera.get('/stac/viewer')).status, 404);
    assert.equal((await tessera.get('/cog/viewer')).status, 200);
    const api = (await (await tessera.get('/api')).json()) as Api;
    assert.deepEqual(
      Object.keys(api.paths).filter((p) => p.startsWith('/stac')),
      [],
    );
    assert.deepEqual(
      api.tags.map((t) => t.name),
      ['Cloud Optimized GeoTIFF', 'MosaicJSON', 'Tiling Schemes', 'Algorithms', 'ColorMaps', 'Health Check', 'OGC Common'],
    );
  });
});
