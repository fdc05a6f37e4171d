/**
 * Parity of the /stac statistics routes with TiTiler 0.18.10: GET /stac/statistics, POST
 * /stac/statistics (Feature and FeatureCollection) and GET /stac/asset_statistics. Both answers
 * are parsed keeping key order and the int/float kind of every number; numbers must agree to 1e-9
 * relative, keys and kinds exactly. Deliberate differences are cases of their own, each with the
 * reason, and are still checked (TiTiler's status, tessera's answer, and the numbers tessera adds
 * compared with what TiTiler computes for the same feature on its own). The table goes to
 * .parity/report-stac-statistics.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { get as getOnce, startParity, writeReport, type Parity, type ReportRow } from './harness.js';
import { compareJson, formatDifferences, parseJson, toPlain, type JsonValue, type PlainJson } from './compare.js';
import { fixturePath, serveItems } from './pixels.js';

type Json = Record<string, unknown>;

const square = (x0: number, y0: number, x1: number, y1: number): number[][][] => [
  [
    [x0, y0],
    [x1, y0],
    [x1, y1],
    [x0, y1],
    [x0, y0],
  ],
];

/** Inside B01/B09's data. */
const POLYGON_A = { type: 'Polygon', coordinates: square(23.8, 32.0, 23.9, 32.1) };
/** Irregular, across the edge of B01's valid data. */
const POLYGON_B = {
  type: 'Polygon',
  coordinates: [
    [
      [23.6, 31.9],
      [23.9, 31.85],
      [24.0, 32.2],
      [23.7, 32.25],
      [23.6, 31.9],
    ],
  ],
};
/** Two parts with a hole in the first. */
const MULTIPOLYGON = {
  type: 'MultiPolygon',
  coordinates: [
    [
      ...square(23.4, 31.6, 23.7, 31.9),
      [
        [23.5, 31.7],
        [23.5, 31.8],
        [23.6, 31.8],
        [23.6, 31.7],
        [23.5, 31.7],
      ],
    ],
    square(24.0, 32.2, 24.1, 32.3),
  ],
};
/** Far from the item: every pixel masked. */
const POLYGON_OUTSIDE = { type: 'Polygon', coordinates: square(10, 10, 11, 11) };
/** Near POLYGON_A, in EPSG:3857. */
const POLYGON_3857 = { type: 'Polygon', coordinates: square(2649586.0, 3763310.8, 2660500.0, 3776488.9) };
/**
 * In EPSG:3857, with its east edge 0.005 px inside the last column of the snapped grid: GDAL 3.6.2's
 * all-touched rasterizer (tessera's) takes an edge within 0.01 px of a pixel boundary as lying on
 * it and does not burn that column; GDAL 3.10.3's (TiTiler's rasterio wheel) uses 1e-4 and does.
 */
const POLYGON_3857_NEAR_EDGE = { type: 'Polygon', coordinates: square(2649586.0, 3763310.8, 2660718.0, 3776488.9) };

const feature = (geometry: Json, properties: Json | null = {}): Json => ({ type: 'Feature', geometry, properties });

interface Case {
  id: string;
  path: string;
  body?: unknown;
  /** Both must answer this (error) status, with the same body for 4xx from validation. */
  status?: number;
  /** A deliberate difference: TiTiler's status, tessera's, and why. */
  deliberate?: { titiler: number; tessera: number; why: string };
  /**
   * A known difference that is not these routes' (the reader underneath, the GDAL version): both
   * answer 200 with the same keys, kinds and pixel totals, the numbers are reported, not required.
   */
  known?: string;
}

const CASES: Case[] = [
  // GET /stac/statistics (preview of max_size 1024 by default).
  { id: 'get-default-all-assets', path: '/stac/statistics?url={item}' },
  { id: 'get-assets-b01', path: '/stac/statistics?url={item}&assets=B01' },
  { id: 'get-assets-order', path: '/stac/statistics?url={item}&assets=B09&assets=B01' },
  { id: 'get-p', path: '/stac/statistics?url={item}&assets=B01&p=0&p=5&p=50&p=95&p=100' },
  { id: 'get-p-float-text', path: '/stac/statistics?url={item}&assets=B01&p=25.0' },
  { id: 'get-categorical', path: '/stac/statistics?url={cog}&categorical=true' },
  { id: 'get-categorical-c', path: '/stac/statistics?url={cog}&categorical=true&c=1&c=7072&c=2800&c=4&c=99999' },
  { id: 'get-categorical-c-float-data', path: '/stac/statistics?url={item}&assets=B01&unscale=true&categorical=true&c=274&c=322.5' },
  { id: 'get-histogram-bins-count', path: '/stac/statistics?url={item}&assets=B01&histogram_bins=20' },
  { id: 'get-histogram-bins-edges', path: '/stac/statistics?url={item}&assets=B01&histogram_bins=0,1000,2000.5,5000,10000' },
  { id: 'get-histogram-range', path: '/stac/statistics?url={item}&assets=B01&histogram_range=1000,3000' },
  { id: 'get-histogram-range-bins', path: '/stac/statistics?url={item}&assets=B09&histogram_bins=7&histogram_range=0,20000' },
  { id: 'get-expression', path: '/stac/statistics?url={item}&expression=B01_b1/B09_b1' },
  { id: 'get-expression-blocks', path: '/stac/statistics?url={item}&expression=B01_b1*2;B09_b1-B01_b1;(B01_b1>1000)' },
  { id: 'get-asset-as-band-expression', path: '/stac/statistics?url={item}&expression=(B09-B01)/(B09%2BB01)&asset_as_band=true' },
  { id: 'get-asset-as-band-normalized-index', path: '/stac/statistics?url={item}&assets=B01&assets=B09&asset_as_band=true&algorithm=normalizedIndex' },
  { id: 'get-unscale', path: '/stac/statistics?url={scale}&unscale=true' },
  { id: 'get-no-unscale', path: '/stac/statistics?url={scale}' },
  { id: 'get-nodata-override', path: '/stac/statistics?url={cog}&nodata=1' },
  { id: 'get-nodata-override-b01', path: '/stac/statistics?url={item}&assets=B01&nodata=2180' },
  { id: 'get-nan', path: '/stac/statistics?url={nan}' },
  { id: 'get-max-size', path: '/stac/statistics?url={item}&assets=B01&max_size=64' },
  { id: 'get-max-size-0', path: '/stac/statistics?url={item}&assets=B01&max_size=0' },
  { id: 'get-width-height', path: '/stac/statistics?url={item}&assets=B01&width=100&height=50' },
  { id: 'get-resampling', path: '/stac/statistics?url={cog}&max_size=128&resampling=bilinear' },
  { id: 'get-asset-bidx', path: '/stac/statistics?url={s2}&assets=tci&asset_bidx=tci|3,1&max_size=256' },
  { id: 'get-bidx', path: '/stac/statistics?url={s2}&assets=tci&bidx=2&max_size=256' },

  // POST /stac/statistics with one Feature (full resolution, reprojected to the shape's CRS).
  { id: 'post-feature', path: '/stac/statistics?url={item}&assets=B01', body: feature(POLYGON_A, { name: 'a', dropped: null, nested: { kept: null } }) },
  { id: 'post-feature-all-assets', path: '/stac/statistics?url={item}', body: feature(POLYGON_B) },
  { id: 'post-feature-null-properties', path: '/stac/statistics?url={item}&assets=B09', body: feature(POLYGON_B, null) },
  { id: 'post-feature-id-bbox', path: '/stac/statistics?url={item}&assets=B01', body: { ...feature(POLYGON_A), id: 'f-1', bbox: [23.8, 32, 23.9, 32.1] } },
  { id: 'post-multipolygon', path: '/stac/statistics?url={item}&assets=B01', body: feature(MULTIPOLYGON) },
  { id: 'post-expression', path: '/stac/statistics?url={item}&expression=B01_b1/B09_b1', body: feature(POLYGON_B) },
  {
    id: 'post-normalized-index',
    path: '/stac/statistics?url={item}&assets=B01&assets=B09&asset_as_band=true&algorithm=normalizedIndex',
    body: feature(POLYGON_B),
  },
  { id: 'post-categorical', path: '/stac/statistics?url={item}&assets=B01&categorical=true&c=2180&c=1108&c=1', body: feature(POLYGON_A) },
  { id: 'post-p-histogram', path: '/stac/statistics?url={item}&assets=B01&p=10&p=90&histogram_bins=5&histogram_range=1000,4000', body: feature(POLYGON_A) },
  { id: 'post-dst-crs-native', path: '/stac/statistics?url={item}&assets=B01&dst_crs=EPSG:32634', body: feature(POLYGON_B) },
  { id: 'post-coord-crs', path: '/stac/statistics?url={item}&assets=B01&coord_crs=EPSG:3857', body: feature(POLYGON_3857) },
  {
    id: 'post-coord-crs-edge-near-boundary',
    path: '/stac/statistics?url={item}&assets=B01&coord_crs=EPSG:3857',
    body: feature(POLYGON_3857_NEAR_EDGE),
    known:
      'GDAL 3.6.2 (tessera) does not burn an all-touched polygon edge lying 0.005 px inside a pixel column; GDAL 3.10.3 (TiTiler) does (GDAL PR #7526): 18 more pixels masked here, same data',
  },
  { id: 'post-max-size', path: '/stac/statistics?url={item}&assets=B01&max_size=16', body: feature(POLYGON_B) },
  { id: 'post-width-height', path: '/stac/statistics?url={item}&assets=B01&width=40&height=30', body: feature(POLYGON_B) },
  { id: 'post-unscale', path: '/stac/statistics?url={scale}&unscale=true', body: feature({ type: 'Polygon', coordinates: square(127.1, 37.2, 127.5, 37.6) }) },
  { id: 'post-nodata', path: '/stac/statistics?url={item}&assets=B01&nodata=2180', body: feature(POLYGON_A) },
  {
    id: 'post-reproject-bilinear',
    path: '/stac/statistics?url={item}&assets=B01&reproject=bilinear',
    body: feature(POLYGON_A),
    known:
      'the warped values differ at about native resolution with bilinear (and cubic) reprojection: POST /stac/feature.npy with reproject=bilinear differs the same way (286 of 289 values, up to 129), a reader matter (GDAL 3.6 vs 3.10 warper)',
  },
  {
    id: 'post-collection-one-feature',
    path: '/stac/statistics?url={item}&assets=B01',
    body: { type: 'FeatureCollection', bbox: [23.8, 32, 23.9, 32.1], features: [feature(POLYGON_A, { k: 1 })] },
  },

  // GET /cog/statistics: one raster, bands b1 … bn (the same reads as the STAC verbs, another layer).
  { id: 'cog-get-default', path: '/cog/statistics?url={file:cog.tif}' },
  { id: 'cog-get-bidx', path: '/cog/statistics?url={file:TCI.tif}&bidx=3&bidx=1&max_size=256' },
  { id: 'cog-get-expression', path: '/cog/statistics?url={file:TCI.tif}&expression=(b1-b3)/(b1%2Bb3);b2*2&max_size=256' },
  { id: 'cog-get-p-histogram', path: '/cog/statistics?url={file:B01.tif}&p=10&p=90&histogram_bins=5&histogram_range=1000,4000' },
  { id: 'cog-get-categorical', path: '/cog/statistics?url={file:cog.tif}&categorical=true&c=1&c=2' },
  { id: 'cog-get-unscale', path: '/cog/statistics?url={file:cog_scale.tif}&unscale=true' },
  { id: 'cog-get-algorithm', path: '/cog/statistics?url={file:dem.tif}&algorithm=hillshade&max_size=128' },
  // POST /cog/statistics: every pixel weighted by the fraction of it the feature covers.
  { id: 'cog-post-feature', path: '/cog/statistics?url={file:B01.tif}', body: feature(POLYGON_A, { name: 'a' }) },
  { id: 'cog-post-feature-b', path: '/cog/statistics?url={file:B09.tif}&p=10&p=90', body: feature(POLYGON_B) },
  {
    id: 'cog-post-collection',
    path: '/cog/statistics?url={file:B01.tif}',
    body: { type: 'FeatureCollection', features: [feature(POLYGON_A, { k: 1 }), feature(POLYGON_B, { k: 2 })] },
  },
  { id: 'cog-post-expression', path: '/cog/statistics?url={file:TCI.tif}&expression=b1/b3', body: feature(POLYGON_B) },
  {
    id: 'cog-post-coord-crs',
    path: '/cog/statistics?url={file:B01.tif}&coord_crs=EPSG:3857',
    body: feature(POLYGON_3857),
    known:
      'the shape is reprojected into the raster CRS by GDAL 3.6 (tessera) and pyproj (TiTiler) before it is burnt on the 10× coverage grid: std differs by ~1e-9 relative',
  },
  {
    id: 'cog-err-bidx',
    path: '/cog/statistics?url={file:cog.tif}&bidx=5',
    deliberate: { titiler: 500, tessera: 400, why: "a band the raster does not have is the client's mistake (rasterio IndexError in TiTiler)" },
  },

  // GET /stac/asset_statistics.
  { id: 'asset-default', path: '/stac/asset_statistics?url={item}' },
  { id: 'asset-p-max-size', path: '/stac/asset_statistics?url={item}&assets=B09&assets=B01&p=25&p=75&max_size=100' },
  { id: 'asset-bidx', path: '/stac/asset_statistics?url={s2}&assets=tci&asset_bidx=tci|3,1&max_size=256' },
  { id: 'asset-bidx-fallback', path: '/stac/asset_statistics?url={s2}&assets=tci&assets=B01&bidx=1&max_size=256' },
  { id: 'asset-expression', path: '/stac/asset_statistics?url={item}&asset_expression=B01|b1*2;b1%2B1&asset_expression=B09|b1/3' },
  { id: 'asset-expression-rgb', path: '/stac/asset_statistics?url={s2}&assets=tci&asset_expression=tci|(b1-b3)/(b1%2Bb3)&max_size=256' },
  { id: 'asset-categorical', path: '/stac/asset_statistics?url={cog}&categorical=true&c=1&c=2' },
  { id: 'asset-histogram-edges', path: '/stac/asset_statistics?url={item}&assets=B01&histogram_bins=0,500,5000' },
  { id: 'asset-unscale-nodata', path: '/stac/asset_statistics?url={scale}&unscale=true&nodata=0' },

  // Errors both answer alike.
  { id: 'err-p-not-int', path: '/stac/statistics?url={item}&assets=B01&p=2.5', status: 422 },
  { id: 'err-c-not-number', path: '/stac/statistics?url={item}&assets=B01&categorical=true&c=abc', status: 422 },
  { id: 'err-unknown-asset', path: '/stac/statistics?url={item}&assets=B1111', status: 404 },
  { id: 'err-asset-statistics-unknown-asset', path: '/stac/asset_statistics?url={item}&assets=B1111', status: 404 },
  { id: 'err-post-unknown-asset', path: '/stac/statistics?url={item}&assets=B1111', body: feature(POLYGON_A), status: 404 },
  { id: 'err-post-not-object', path: '/stac/statistics?url={item}&assets=B01', body: 'notjson', status: 422 },
  { id: 'err-post-bare-geometry', path: '/stac/statistics?url={item}&assets=B01', body: POLYGON_A, status: 422 },
  { id: 'err-post-features-not-list', path: '/stac/statistics?url={item}&assets=B01', body: { type: 'FeatureCollection', features: 3 }, status: 422 },
  { id: 'err-missing-url', path: '/stac/statistics?assets=B01', status: 422 },

  // Deliberate: client mistakes TiTiler answers with a 500.
  {
    id: 'err-p-above-100',
    path: '/stac/statistics?url={item}&assets=B01&p=101',
    deliberate: { titiler: 500, tessera: 400, why: "a percentile past 100 is the client's mistake (numpy IndexError in TiTiler)" },
  },
  {
    id: 'err-histogram-bins-text',
    path: '/stac/statistics?url={item}&assets=B01&histogram_bins=abc',
    deliberate: { titiler: 500, tessera: 400, why: 'unparsable histogram_bins (Python ValueError in TiTiler)' },
  },
  {
    id: 'err-histogram-bins-decreasing',
    path: '/stac/statistics?url={item}&assets=B01&histogram_bins=5,1,3',
    deliberate: { titiler: 500, tessera: 400, why: 'numpy refuses decreasing bin edges' },
  },
  {
    id: 'err-histogram-range-text',
    path: '/stac/statistics?url={item}&assets=B01&histogram_range=1',
    deliberate: { titiler: 500, tessera: 400, why: 'histogram_range must be min,max (AssertionError in TiTiler)' },
  },
  {
    id: 'err-expression-unknown-asset',
    path: '/stac/statistics?url={item}&expression=B1111_b1',
    deliberate: { titiler: 500, tessera: 400, why: "an expression naming no asset is the client's mistake (InvalidExpression is unmapped in TiTiler)" },
  },
  {
    id: 'err-asset-expression-no-bar',
    path: '/stac/asset_statistics?url={item}&asset_expression=B01',
    deliberate: { titiler: 500, tessera: 400, why: 'asset_expression without `asset|` (IndexError in TiTiler)' },
  },
  {
    id: 'err-asset-expression-bad-band',
    path: '/stac/asset_statistics?url={item}&assets=B01&asset_expression=B01|b2*2',
    deliberate: { titiler: 500, tessera: 400, why: 'band 2 of a 1-band asset (rasterio IndexError in TiTiler)' },
  },
  {
    id: 'err-asset-bidx-bad-band',
    path: '/stac/asset_statistics?url={item}&assets=B01&bidx=2',
    deliberate: { titiler: 500, tessera: 400, why: 'band 2 of a 1-band asset' },
  },
  {
    id: 'err-normalized-index-one-band',
    path: '/stac/statistics?url={item}&assets=B01&asset_as_band=true&algorithm=normalizedIndex',
    deliberate: { titiler: 500, tessera: 400, why: 'normalizedIndex needs two bands' },
  },
  {
    id: 'err-post-null-geometry',
    path: '/stac/statistics?url={item}&assets=B01',
    body: feature(null as unknown as Json),
    deliberate: { titiler: 500, tessera: 400, why: 'a feature without geometry ("Invalid geometry" RioTilerError in TiTiler)' },
  },
  {
    id: 'err-post-empty-collection',
    path: '/stac/statistics?url={item}&assets=B01',
    body: { type: 'FeatureCollection', features: [] },
    deliberate: { titiler: 500, tessera: 200, why: 'an empty collection has nothing to summarise: tessera echoes it (TiTiler hits an unbound local variable)' },
  },
  // Deliberate: geometries tessera does not summarise, and a lenient body.
  {
    id: 'post-point-geometry',
    path: '/stac/statistics?url={item}&assets=B01',
    body: feature({ type: 'Point', coordinates: [23.85, 32.05] }),
    deliberate: {
      titiler: 200,
      tessera: 400,
      why: 'statistics are for areas: tessera takes Polygon and MultiPolygon geometries (as POST /feature does) and answers 400 for others',
    },
  },
  {
    id: 'post-missing-properties',
    path: '/stac/statistics?url={item}&assets=B01',
    body: { type: 'Feature', geometry: POLYGON_A },
    deliberate: {
      titiler: 422,
      tessera: 200,
      why: 'a Feature without `properties` is read as `properties: null` (as POST /feature does); the answer is what TiTiler gives for `null`',
    },
  },
];

/** Differences in the statistics JSON (numbers to 1e-9 relative, keys, key order and number kinds exact). */
function differences(a: JsonValue, b: JsonValue): string {
  return formatDifferences(compareJson(a, b));
}

function get(obj: JsonValue, ...path: Array<string | number>): JsonValue {
  let cur: JsonValue = obj;
  for (const key of path) {
    if (typeof key === 'number') cur = (cur as JsonValue[])[key]!;
    else cur = (cur as Map<string, JsonValue>).get(key)!;
    assert.ok(cur !== undefined, `no ${path.join('.')}`);
  }
  return cur;
}

describe('parity: /stac statistics routes', { timeout: 600_000 }, () => {
  let p: Parity;
  const rows: ReportRow[] = [];

  before(async () => {
    p = await startParity();
    serveItems(p);
  });

  after(async () => {
    await writeReport(
      rows,
      [
        'GET/POST /stac/statistics and GET /stac/asset_statistics: JSON compared with key order and int/float kinds exact, numbers to 1e-9 relative.',
        'Deliberate rows say why tessera answers otherwise; their numbers are still compared with what TiTiler computes for the same input.',
      ],
      [],
      'stac-statistics',
    );
    await p?.stop();
  });

  const resolve = (path: string): string => fixturePath(p, path.replace('{item}', encodeURIComponent(p.itemUrl)));

  interface Answer {
    status: number;
    type: string | null;
    text: string;
  }

  const ask = async (base: string, path: string, body?: unknown): Promise<Answer> => {
    if (body === undefined) {
      // The harness's GET sends again once when a kept-alive connection was closed under it.
      const reply = await getOnce(base, resolve(path));
      if (reply.error !== undefined) throw new Error(`${base}: ${reply.error}`);
      return { status: reply.status, type: reply.headers.get('content-type'), text: reply.body };
    }
    const init: RequestInit = { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' } };
    const res = await fetch(`${base}${resolve(path)}`, { ...init, signal: AbortSignal.timeout(60_000) });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  const both = (path: string, body?: unknown): Promise<[Answer, Answer]> => Promise.all([ask(p.titiler.url, path, body), ask(p.tessera.url, path, body)]);

  const record = (id: string, path: string, body: unknown, verdict: ReportRow['verdict'], note: string): void => {
    rows.push({ id, request: `${body !== undefined ? 'POST' : 'GET'} ${path}`, verdict, note });
  };

  for (const c of CASES) {
    it(c.id, async () => {
      const [t, s] = await both(c.path, c.body);
      try {
        if (c.deliberate) {
          assert.equal(t.status, c.deliberate.titiler, `TiTiler's answer this case documents: ${t.text.slice(0, 300)}`);
          assert.equal(s.status, c.deliberate.tessera, `tessera: ${s.text.slice(0, 300)}`);
          if (s.status >= 400) assert.equal(typeof (JSON.parse(s.text) as { detail: unknown }).detail, 'string', s.text);
          if (c.id === 'post-missing-properties') {
            // The numbers are those TiTiler gives for the same feature with `properties: null`.
            const ref = await ask(p.titiler.url, c.path, { ...(c.body as Json), properties: null });
            assert.equal(ref.status, 200, ref.text.slice(0, 300));
            const diff = differences(parseJson(ref.text), parseJson(s.text));
            assert.equal(diff, '', diff);
          }
          if (c.id === 'err-post-empty-collection') assert.deepEqual(JSON.parse(s.text), { type: 'FeatureCollection', features: [] });
          record(c.id, c.path, c.body, 'deliberate', `TiTiler ${t.status}, tessera ${s.status}: ${c.deliberate.why}`);
          return;
        }
        if (c.status !== undefined) {
          assert.equal(t.status, c.status, `reference: ${t.text.slice(0, 300)}`);
          assert.equal(s.status, c.status, `tessera: ${s.text.slice(0, 300)}`);
          const detail = (JSON.parse(s.text) as { detail: unknown }).detail;
          if (c.status === 404) assert.equal(s.text, t.text, 'same 404 detail');
          else assert.ok(detail !== undefined, s.text);
          record(c.id, c.path, c.body, 'equal', `both ${c.status}`);
          return;
        }
        assert.equal(t.status, 200, `reference failed: ${t.text.slice(0, 300)}`);
        assert.equal(s.status, 200, `tessera failed: ${s.text.slice(0, 300)}`);
        assert.equal(s.type, t.type, 'content-type');
        if (c.known) {
          const tj = parseJson(t.text);
          const sj = parseJson(s.text);
          const structure = (j: JsonValue): PlainJson =>
            JSON.parse(JSON.stringify(toPlain(j), (_, v: unknown) => (typeof v === 'number' ? 0 : v))) as PlainJson;
          assert.deepEqual(structure(sj), structure(tj), 'same keys and shapes');
          // The first band's statistics (B01_b1 for the item, b1 for a COG).
          const stats = (j: JsonValue): Record<string, number> => {
            const all = toPlain(get(j, 'properties', 'statistics')) as Record<string, Record<string, number>>;
            return all[Object.keys(all)[0]!]!;
          };
          const total = (x: Record<string, number>): number => x['valid_pixels']! + x['masked_pixels']!;
          assert.equal(total(stats(sj)), total(stats(tj)), 'same pixel grid');
          const diff = differences(tj, sj);
          assert.notEqual(diff, '', 'the known difference is gone: make this an ordinary case');
          record(c.id, c.path, c.body, 'differs', `known, not these routes': ${c.known}. ${diff.split('\n').slice(0, 3).join('; ')}`);
          return;
        }
        const diff = differences(parseJson(t.text), parseJson(s.text));
        assert.equal(diff, '', diff);
        record(c.id, c.path, c.body, 'equal', 'equal JSON');
      } catch (err) {
        if (!rows.some((r) => r.id === c.id)) record(c.id, c.path, c.body, 'differs', (err as Error).message.split('\n').slice(0, 3).join(' '));
        throw err;
      }
    });
  }

  /**
   * TiTiler 0.18.10 assigns only the last feature's statistics (an indentation slip), after
   * computing every feature's. With features that already carry `properties.statistics` its
   * answer validates, so its shape can be compared: its last feature must equal tessera's, and
   * tessera's others must equal what TiTiler answers for each feature posted alone.
   */
  it('post-collection-three-polygons (TiTiler fills only the last)', async () => {
    const path = '/stac/statistics?url={item}&assets=B01&assets=B09';
    const features = [POLYGON_A, POLYGON_B, MULTIPOLYGON].map((g, i) => feature(g, { statistics: {}, n: i }));
    const body = { type: 'FeatureCollection', features };
    const id = 'post-collection-three-polygons';
    try {
      const [t, s] = await both(path, body);
      assert.equal(t.status, 200, t.text.slice(0, 300));
      assert.equal(s.status, 200, s.text.slice(0, 300));
      assert.equal(s.type, t.type);
      const tj = parseJson(t.text);
      const sj = parseJson(s.text);
      // TiTiler's shape: the earlier features keep the `{}` they came with, the last is filled.
      assert.equal(toPlain(get(tj, 'features', 0, 'properties', 'statistics')) !== null, true);
      assert.deepEqual(Object.keys(toPlain(get(tj, 'features', 0, 'properties', 'statistics')) as Record<string, PlainJson>), []);
      assert.deepEqual(Object.keys(toPlain(get(tj, 'features', 2, 'properties', 'statistics')) as Record<string, PlainJson>), ['B01_b1', 'B09_b1']);
      const lastDiff = differences(get(tj, 'features', 2), get(sj, 'features', 2));
      assert.equal(lastDiff, '', `last feature: ${lastDiff}`);
      // tessera's: every feature filled, each as TiTiler computes it alone.
      for (let i = 0; i < 2; i++) {
        const alone = await ask(p.titiler.url, path, feature([POLYGON_A, POLYGON_B][i]!, { statistics: {}, n: i }));
        assert.equal(alone.status, 200, alone.text.slice(0, 300));
        const diff = differences(parseJson(alone.text), get(sj, 'features', i));
        assert.equal(diff, '', `feature ${i}: ${diff}`);
      }
      // The rest of the collection is TiTiler's, feature statistics aside.
      const withoutStats = (j: JsonValue): PlainJson => {
        const plain = toPlain(j) as { features: Array<{ properties: Json }> };
        plain.features.forEach((f) => {
          delete f.properties['statistics'];
        });
        return plain as unknown as PlainJson;
      };
      assert.deepEqual(withoutStats(sj), withoutStats(tj));
      record(
        id,
        path,
        body,
        'deliberate',
        "TiTiler fills only the last feature (equal to tessera's); tessera fills all three, each equal to TiTiler's answer for that feature alone",
      );
    } catch (err) {
      if (!rows.some((r) => r.id === id)) record(id, path, body, 'differs', (err as Error).message.split('\n')[0]!);
      throw err;
    }
  });

  /**
   * As the issue asks, a collection with a polygon outside the data: TiTiler answers 500 (rio-tiler
   * 6.8 cannot weight an empty feature, and the first features lack statistics); tessera answers
   * every feature, the outside one with no valid pixel (nulls, as rio-tiler 7 gives).
   */
  it('post-collection-with-outside-polygon', async () => {
    const path = '/stac/statistics?url={item}&assets=B01';
    const body = { type: 'FeatureCollection', features: [feature(POLYGON_A, { n: 0 }), feature(POLYGON_OUTSIDE, { n: 1 }), feature(POLYGON_B, { n: 2 })] };
    const id = 'post-collection-with-outside-polygon';
    try {
      const [t, s] = await both(path, body);
      assert.equal(t.status, 500, t.text.slice(0, 300));
      assert.equal(s.status, 200, s.text.slice(0, 300));
      const sj = parseJson(s.text);
      for (const i of [0, 2]) {
        const alone = await ask(p.titiler.url, path, body.features[i] as Json);
        assert.equal(alone.status, 200, alone.text.slice(0, 300));
        const diff = differences(parseJson(alone.text), get(sj, 'features', i));
        assert.equal(diff, '', `feature ${i}: ${diff}`);
      }
      const outside = toPlain(get(sj, 'features', 1, 'properties', 'statistics', 'B01_b1')) as Record<string, PlainJson>;
      assert.deepEqual(Object.keys(outside), [
        'min',
        'max',
        'mean',
        'count',
        'sum',
        'std',
        'median',
        'majority',
        'minority',
        'unique',
        'histogram',
        'valid_percent',
        'masked_pixels',
        'valid_pixels',
        'percentile_2',
        'percentile_98',
      ]);
      for (const key of ['min', 'max', 'mean', 'count', 'sum', 'std', 'median', 'majority', 'minority', 'percentile_2', 'percentile_98']) {
        assert.equal(outside[key], null, key);
      }
      assert.equal(outside['valid_pixels'], 0);
      assert.equal(outside['valid_percent'], 0);
      assert.ok((outside['masked_pixels'] as number) > 0);
      assert.match(s.text, /"valid_pixels":0\.0/);
      record(
        id,
        path,
        body,
        'deliberate',
        'TiTiler 500 ("Weights sum to zero" for the empty feature); tessera 200 with all three, the in-data ones equal to TiTiler\'s answers for them alone, the outside one all-null with valid_pixels 0.0',
      );
    } catch (err) {
      if (!rows.some((r) => r.id === id)) record(id, path, body, 'differs', (err as Error).message.split('\n')[0]!);
      throw err;
    }
  });
});
