/**
 * /stac/statistics (GET and POST) and /stac/asset_statistics over real HTTP: tessera listens on
 * 127.0.0.1 and reads the shared fixtures through the Range file server. Expected numbers were
 * computed with rio-tiler 6.8 (the parity venv) on the same files: `STACReader.preview(...)`,
 * `STACReader.feature(..., align_bounds_with_dataset=True)` and `Reader.read(expression=...)`,
 * each followed by `.statistics()`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FIXTURES, fixtureItem, startFileServer, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

let files: FileServer;
let tessera: RunningTessera;
let item: string;
let cogItem: string;

/** A band's statistics as answered: the numbers are null for a feature that covers no data. */
type BandStatistics = {
  [key: string]: number | null | Histogram;
  histogram: Histogram;
  min: number | null;
  max: number | null;
  unique: number | null;
  valid_pixels: number;
  masked_pixels: number;
};
type Histogram = [counts: number[], edges: number[]];
/** /stac/statistics (GET): statistics by band name; /stac/asset_statistics: by asset, then band. */
type Statistics = Record<string, BandStatistics>;
type AssetStatistics = Record<string, Statistics>;
/** /stac/statistics (POST): the Feature, or each Feature of the collection, with its statistics. */
type StatisticsFeature = { type: string; properties: { statistics: Statistics; [key: string]: unknown } };
type StatisticsCollection = { type: string; features: StatisticsFeature[] };
/** FastAPI's error answers: a message, or (422) the failing parameters. */
type Failure = { detail: string };
type Invalid = { detail: Array<{ type: string; loc: Array<string | number> }> };

const q = (url: string): string => `url=${encodeURIComponent(url)}`;
const square = (x0: number, y0: number, x1: number, y1: number): number[][][] => [
  [
    [x0, y0],
    [x1, y0],
    [x1, y1],
    [x0, y1],
    [x0, y0],
  ],
];
/** Inside B01's data: rio-tiler reads 18×18 pixels, all valid. */
const POLYGON_A = { type: 'Polygon', coordinates: square(23.8, 32.0, 23.9, 32.1) };
/** Across the edge of B01's data: 69×69 pixels, 3323 valid. */
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
const POLYGON_OUTSIDE = { type: 'Polygon', coordinates: square(10, 10, 11, 11) };

/** BandStatistics' declared fields, in model order; the `percentile_<p>` extras follow. */
const DECLARED_KEYS = [
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
];
const STAT_KEYS = [...DECLARED_KEYS, 'percentile_2', 'percentile_98'];

/** rio-tiler 6.8: B01 preview (max_size 1024, i.e. the native 183×183). */
const B01_PREVIEW = {
  min: 274,
  max: 7984,
  mean: 1999.506000322165,
  count: 24832,
  sum: 49651733,
  std: 1218.6840217256304,
  median: 1865,
  majority: 322,
  minority: 274,
  unique: 4741,
  valid_percent: 74.15,
  masked_pixels: 8657,
  valid_pixels: 24832,
  percentile_2: 327,
  percentile_98: 5034,
  histogram: [
    [6762, 5201, 5744, 3741, 2027, 799, 354, 145, 50, 9],
    [274, 1045, 1816, 2587, 3358, 4129, 4900, 5671, 6442, 7213, 7984],
  ],
};
/** rio-tiler 6.8: feature POLYGON_A of B01 in EPSG:4326, bounds aligned, no coverage. */
const B01_FEATURE_A = {
  min: 1108,
  max: 4284,
  mean: 2761.8456790123455,
  count: 324,
  sum: 894838,
  std: 636.7316582203954,
  median: 2704,
  majority: 2180,
  minority: 1108,
  unique: 286,
  valid_percent: 100,
  masked_pixels: 0,
  valid_pixels: 324,
  percentile_2: 1666,
  percentile_98: 4124,
  histogram: [
    [5, 5, 30, 54, 67, 56, 37, 35, 19, 16],
    [1108, 1425.6, 1743.2, 2060.8, 2378.4, 2696, 3013.6000000000004, 3331.2000000000003, 3648.8, 3966.4, 4284],
  ],
};
/** rio-tiler 6.8: feature POLYGON_B of B01, 69×69 pixels. */
const B01_FEATURE_B = {
  min: 396,
  max: 5764,
  mean: 2215.104423713512,
  count: 3323,
  sum: 7360792,
  std: 1013.3683716918554,
  median: 2052,
  majority: 1795,
  minority: 396,
  unique: 2081,
  valid_percent: 69.8,
  masked_pixels: 1438,
  valid_pixels: 3323,
  percentile_2: 668,
  percentile_98: 4492,
  histogram: [
    [296, 529, 770, 636, 411, 303, 245, 80, 28, 25],
    [396, 932.8, 1469.6, 2006.3999999999999, 2543.2, 3080, 3616.7999999999997, 4153.599999999999, 4690.4, 5227.2, 5764],
  ],
};

function close(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual} vs ${expected}`);
}

/** Every number of `expected` (histograms included) against `actual`, and the key order of TiTiler. */
function assertStatistics(actual: unknown, expected: Record<string, number | number[][]>, what: string): void {
  const stats = actual as BandStatistics;
  const keys = Object.keys(stats);
  assert.deepEqual(keys.slice(0, DECLARED_KEYS.length), DECLARED_KEYS, `${what}: key order`);
  assert.ok(
    keys.slice(DECLARED_KEYS.length).every((k) => k.startsWith('percentile_')),
    `${what}: extra keys ${keys.join(',')}`,
  );
  for (const [key, value] of Object.entries(expected)) {
    if (key === 'histogram') {
      const [counts, edges] = value as Histogram;
      assert.deepEqual(stats['histogram'][0], counts, `${what}: histogram counts`);
      edges.forEach((edge, i) => {
        close(stats['histogram'][1][i]!, edge, `${what}: histogram edge ${i}`);
      });
    } else {
      close(stats[key] as number, value as number, `${what}: ${key}`);
    }
  }
}

async function request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; type: string | null; text: string }> {
  const res = await tessera.request(`${path}`, {
    method,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

async function ok<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ json: T; text: string; type: string | null }> {
  const r = await request(method, path, body);
  assert.equal(r.status, 200, `${path} → ${r.status} ${r.text}`);
  return { json: JSON.parse(r.text) as T, text: r.text, type: r.type };
}

async function fails<T>(method: 'GET' | 'POST', path: string, status: number, body?: unknown): Promise<T> {
  const r = await request(method, path, body);
  assert.equal(r.status, status, `${path} → ${r.status} ${r.text}`);
  assert.equal(r.type, 'application/json');
  return JSON.parse(r.text) as T;
}

before(async () => {
  files = await startFileServer(FIXTURES);
  files.put('/item.json', await fixtureItem(files.url));
  files.put(
    '/cog-item.json',
    JSON.stringify({
      type: 'Feature',
      bbox: [-61.287624, 72.229798, -52.301599, 74.66298],
      links: [],
      assets: { cog: { href: `${files.url}/cog.tif`, type: 'image/tiff; application=geotiff; profile=cloud-optimized' } },
    }),
  );
  item = `${files.url}/item.json`;
  cogItem = `${files.url}/cog-item.json`;
  tessera = await startTessera();
});

after(async () => {
  await tessera?.close();
  await files?.close();
});

describe('GET /stac/statistics', () => {
  it("defaults to every asset, with rio-tiler's numbers, key order and Python floats", async () => {
    const { json, text, type } = await ok<Statistics>('GET', `/stac/statistics?${q(item)}`);
    assert.equal(type, 'application/json');
    assert.deepEqual(Object.keys(json), ['B01_b1', 'B09_b1']);
    assertStatistics(json['B01_b1'], B01_PREVIEW, 'B01');
    assertStatistics(
      json['B09_b1'],
      { min: 52, max: 12242, mean: 4274.389134987114, std: 2776.676738477629, median: 5214, majority: 69, minority: 135, unique: 7464 },
      'B09',
    );
    // Statistics are floats on the wire, histogram counts ints.
    assert.match(text, /"B01_b1":\{"min":274\.0,"max":7984\.0,.*"count":24832\.0,/);
    assert.match(text, /"histogram":\[\[6762,5201,/);
  });

  it('takes percentiles, histogram bins and ranges', async () => {
    const { json } = await ok<Statistics>('GET', `/stac/statistics?${q(item)}&assets=B01&p=50&p=2&histogram_bins=2&histogram_range=0,8000`);
    const s = json['B01_b1']!;
    assert.deepEqual(Object.keys(s).slice(-2), ['percentile_50', 'percentile_2']);
    assert.equal(s['percentile_50'], 1865); // the median: nearest rank
    assert.equal(s['percentile_2'], 327);
    assert.deepEqual(s['histogram'][1], [0, 4000, 8000]);
    assert.equal(s['histogram'][0][0]! + s['histogram'][0][1]!, 24832);
    const edges = await ok<Statistics>('GET', `/stac/statistics?${q(item)}&assets=B01&histogram_bins=0,1000,10000`);
    assert.equal(edges.json['B01_b1']!.histogram[0].length, 2);
    assert.match(edges.text, /"histogram":\[\[\d+,\d+\],\[0\.0,1000\.0,10000\.0\]\]/);
  });

  it('names expression outputs by their blocks and applies the algorithm', async () => {
    const expr = await ok<Statistics>('GET', `/stac/statistics?${q(item)}&expression=${encodeURIComponent('B01_b1/B09_b1')}&p=50`);
    assert.deepEqual(Object.keys(expr.json), ['B01_b1/B09_b1']);
    assertStatistics(
      expr.json['B01_b1/B09_b1'],
      { min: 0.11458948611931483, max: 7.538461538461538, mean: 0.7838176629427834, percentile_50: 0.4910233393177738, unique: 24341 },
      'ratio',
    );
    const ndi = await ok<Statistics>('GET', `/stac/statistics?${q(item)}&assets=B01&assets=B09&asset_as_band=true&algorithm=normalizedIndex`);
    assert.deepEqual(Object.keys(ndi.json), ['(B09 - B01) / (B09 + B01)']);
    const s = ndi.json['(B09 - B01) / (B09 + B01)']!;
    assert.ok(s.min! >= -1 && s.max! <= 1, JSON.stringify(s));
  });

  it('counts categories, zero for absent ones, as ints for integer data', async () => {
    const { json, text } = await ok<Statistics>('GET', `/stac/statistics?${q(cogItem)}&categorical=true&c=1&c=7072&c=5`);
    assert.deepEqual(json['cog_b1']!.histogram, [
      [503460, 24, 0],
      [1, 7072, 5],
    ]);
    assert.equal(json['cog_b1']!.unique, 15);
    assert.match(text, /"histogram":\[\[503460,24,0\],\[1,7072,5\]\]/);
  });

  it('reads a smaller preview with max_size', async () => {
    const { json } = await ok<Statistics>('GET', `/stac/statistics?${q(item)}&assets=B01&max_size=64`);
    assert.equal(json['B01_b1']!.valid_pixels + json['B01_b1']!.masked_pixels, 64 * 64);
  });
});

describe('POST /stac/statistics', () => {
  it('answers a Feature with its statistics first among the properties', async () => {
    const body = { type: 'Feature', id: 7, geometry: POLYGON_A, properties: { name: 'a', gone: null, nested: { kept: null } } };
    const { json, text, type } = await ok<StatisticsFeature>('POST', `/stac/statistics?${q(item)}&assets=B01`, body);
    assert.equal(type, 'application/geo+json');
    assert.deepEqual(Object.keys(json), ['type', 'geometry', 'properties', 'id']);
    assert.deepEqual(Object.keys(json['properties']), ['statistics', 'name', 'nested']);
    assert.deepEqual(json['properties']['nested'], { kept: null });
    assert.deepEqual(Object.keys(json['properties']['statistics']), ['B01_b1']);
    assertStatistics(json['properties']['statistics']['B01_b1'], B01_FEATURE_A, 'feature A');
    // geojson-pydantic positions are floats: 32 comes back as 32.0.
    assert.ok(text.includes('"coordinates":[[[23.8,32.0],[23.9,32.0],[23.9,32.1],[23.8,32.1],[23.8,32.0]]]'), text.slice(0, 300));
  });

  it('fills every feature of a FeatureCollection, one outside the data included', async () => {
    const body = {
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', geometry: POLYGON_A, properties: { n: 0 } },
        { type: 'Feature', geometry: POLYGON_OUTSIDE, properties: null },
        { type: 'Feature', geometry: POLYGON_B, properties: { n: 2 } },
      ],
    };
    const { json, text } = await ok<StatisticsCollection>('POST', `/stac/statistics?${q(item)}&assets=B01`, body);
    assert.equal(json['type'], 'FeatureCollection');
    const stats = json['features'].map((f) => f['properties']['statistics']['B01_b1']);
    assertStatistics(stats[0], B01_FEATURE_A, 'feature 0');
    assertStatistics(stats[2], B01_FEATURE_B, 'feature 2');
    for (const key of ['min', 'max', 'mean', 'count', 'sum', 'std', 'median', 'majority', 'minority', 'percentile_2', 'percentile_98']) {
      assert.equal(stats[1]![key], null, `outside feature: ${key}`);
    }
    assert.equal(stats[1]!.valid_pixels, 0);
    assert.ok(stats[1]!.masked_pixels > 0);
    assert.deepEqual(json['features'][1]!['properties'], { statistics: json['features'][1]!['properties']['statistics'] });
    assert.ok(text.includes('"valid_percent":0.0'));
  });

  it("reads in the shape's CRS by default and in dst_crs when asked", async () => {
    const native = await ok<StatisticsFeature>('POST', `/stac/statistics?${q(item)}&assets=B01&dst_crs=EPSG:32634`, {
      type: 'Feature',
      geometry: POLYGON_A,
      properties: {},
    });
    // rio-tiler 6.8: the same feature read in the dataset's own CRS (aligned window: 17×20 pixels).
    assertStatistics(native.json['properties']['statistics']['B01_b1'], { valid_pixels: 332, masked_pixels: 8, mean: 2737.9397590361446, median: 2693 }, 'UTM');
  });

  it('refuses GeoJSON it cannot summarise', async () => {
    const path = `/stac/statistics?${q(item)}&assets=B01`;
    assert.equal((await fails<Invalid>('POST', path, 422, 'null')).detail[0]!.loc[0], 'body');
    assert.equal((await fails<Invalid>('POST', path, 422, { type: 'FeatureCollection', features: 'none' })).detail[0]!.loc.join('.'), 'body.features');
    assert.equal((await fails<Invalid>('POST', path, 422, POLYGON_A)).detail[0]!.loc.join('.'), 'body.type');
    const open = {
      type: 'Feature',
      properties: {},
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 2],
          ],
        ],
      },
    };
    assert.deepEqual((await fails<Invalid>('POST', path, 422, { type: 'FeatureCollection', features: [open] })).detail[0]!.loc, [
      'body',
      'features',
      0,
      'geometry',
      'coordinates',
      0,
    ]);
    const badProps = { type: 'Feature', properties: 3, geometry: POLYGON_A };
    assert.deepEqual((await fails<Invalid>('POST', path, 422, badProps)).detail[0]!.loc, ['body', 'properties']);
    const point = { type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [23.8, 32] } };
    assert.match((await fails<Failure>('POST', path, 400, point)).detail, /Unsupported geometry type 'Point'/);
    assert.match((await fails<Failure>('POST', path, 400, { type: 'Feature', properties: {}, geometry: null })).detail, /without geometry/);
  });

  it('refuses more features than it takes in one request', async () => {
    const one = { type: 'Feature', geometry: POLYGON_A, properties: {} };
    const body = { type: 'FeatureCollection', features: Array.from({ length: 1001 }, () => one) };
    assert.match((await fails<Failure>('POST', `/stac/statistics?${q(item)}&assets=B01`, 400, body)).detail, /Too many features: 1001/);
  });
});

describe('GET /stac/asset_statistics', () => {
  it('gives each asset its own band names', async () => {
    const { json } = await ok<AssetStatistics>('GET', `/stac/asset_statistics?${q(item)}`);
    assert.deepEqual(Object.keys(json), ['B01', 'B09']);
    assert.deepEqual(Object.keys(json['B01']!), ['b1']);
    assert.deepEqual(Object.keys(json['B01']!['b1']!), STAT_KEYS);
    assertStatistics(json['B01']!['b1'], B01_PREVIEW, 'B01');
  });

  it("evaluates asset_expression over the asset's own bands", async () => {
    const { json } = await ok<AssetStatistics>(
      'GET',
      `/stac/asset_statistics?${q(item)}&assets=B01&asset_expression=${encodeURIComponent('B01|b1*2;b1+1')}&histogram_bins=4`,
    );
    assert.deepEqual(Object.keys(json['B01']!), ['b1*2', 'b1+1']);
    assertStatistics(
      json['B01']!['b1*2'],
      {
        min: 548,
        max: 15968,
        mean: 3999.01200064433,
        sum: 99303466,
        std: 2437.3680434512607,
        median: 3730,
        percentile_98: 10068,
        histogram: [
          [15189, 8286, 1248, 109],
          [548, 4403, 8258, 12113, 15968],
        ],
      },
      'b1*2',
    );
    assert.equal(json['B01']!['b1+1']!.min, 275);
  });

  it('takes asset_bidx, and refuses band indexes the asset does not have', async () => {
    const { json } = await ok<AssetStatistics>('GET', `/stac/asset_statistics?${q(item)}&asset_bidx=B01|1`);
    assert.deepEqual(Object.keys(json['B01']!), ['b1']);
    assert.match((await fails<Failure>('GET', `/stac/asset_statistics?${q(item)}&asset_bidx=B01|2`, 400)).detail, /Invalid band index 2 for asset 'B01'/);
    assert.match((await fails<Failure>('GET', `/stac/asset_statistics?${q(item)}&asset_expression=B01|b3`, 400)).detail, /Invalid band index 3/);
    assert.match((await fails<Failure>('GET', `/stac/asset_statistics?${q(item)}&asset_expression=B01`, 400)).detail, /Invalid asset_expression 'B01'/);
    assert.match(
      (await fails<Failure>('GET', `/stac/asset_statistics?${q(item)}&asset_expression=${encodeURIComponent('B01|x+1')}`, 400)).detail,
      /Could not find any valid bands/,
    );
    assert.equal(
      (await fails<Failure>('GET', `/stac/asset_statistics?${q(item)}&assets=B1111`, 404)).detail,
      "'B1111' is not valid, should be one of ['B01', 'B09']",
    );
  });
});

describe('bad statistics input', () => {
  it('answers clear 4xx for bad p, c, histogram options and assets', async () => {
    const base = `/stac/statistics?${q(item)}&assets=B01`;
    assert.equal((await fails<Invalid>('GET', `${base}&p=abc`, 422)).detail[0]!.type, 'int_parsing');
    assert.equal((await fails<Invalid>('GET', `${base}&categorical=true&c=abc`, 422)).detail[0]!.type, 'float_parsing');
    assert.match((await fails<Failure>('GET', `${base}&p=101`, 400)).detail, /Invalid percentile 101/);
    assert.match((await fails<Failure>('GET', `${base}&histogram_bins=abc`, 400)).detail, /Invalid histogram_bins 'abc'/);
    assert.match((await fails<Failure>('GET', `${base}&histogram_bins=3,2,1`, 400)).detail, /increase monotonically/);
    assert.match((await fails<Failure>('GET', `${base}&histogram_range=1`, 400)).detail, /Invalid histogram_range values: 1/);
    assert.match((await fails<Failure>('GET', `${base}&algorithm=hillshade&algorithm_params=%7Bbad`, 400)).detail, /algorithm_params/);
    assert.equal(
      (await fails<Failure>('GET', `/stac/statistics?${q(item)}&assets=B1111`, 404)).detail,
      "'B1111' is not valid, should be one of ['B01', 'B09']",
    );
    assert.match((await fails<Failure>('GET', `/stac/statistics?${q(item)}&expression=B1111_b1`, 400)).detail, /Could not find any valid assets/);
  });
});

describe('request limits', () => {
  it('refuses reads above the source and output limits before reading them', async () => {
    const small = await startTessera({ maxSourcePixels: 10_000, maxOutputPixels: 20_000 });
    try {
      const get = (path: string): Promise<Response> => small.get(path);
      // A 64×64 preview of B01 reads its 46×46 overview: within the limits.
      assert.equal((await get(`/stac/statistics?${q(item)}&assets=B01&max_size=64`)).status, 200);
      const full = await get(`/stac/statistics?${q(item)}&assets=B01&max_size=0`);
      assert.equal(full.status, 400);
      assert.match(((await full.json()) as Failure)['detail'], /too large/);
      const assets = await get(`/stac/asset_statistics?${q(item)}&max_size=0`);
      assert.equal(assets.status, 400);
      assert.match(((await assets.json()) as Failure)['detail'], /too large/);
      // Each feature is small; together they read more than one request may.
      const body = { type: 'FeatureCollection', features: Array.from({ length: 40 }, () => ({ type: 'Feature', geometry: POLYGON_A, properties: {} })) };
      const res = await small.request(`/stac/statistics?${q(item)}&assets=B01`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as Failure)['detail'], /the 40 feature\(s\) needs \d+ source pixels/);
    } finally {
      await small.close();
    }
  });

  it('judges a feature by what is read: one that misses the data reads nothing and counts for nothing', async () => {
    // 70°×70° far from the item: at the data's resolution ~13000² pixels, past every output limit.
    const far = { type: 'Feature', geometry: { type: 'Polygon', coordinates: square(100, -40, 170, 30) }, properties: {} };
    const inside = { type: 'Feature', geometry: POLYGON_A, properties: {} };
    const started = Date.now();
    const { json } = await ok<StatisticsCollection>('POST', `/stac/statistics?${q(item)}&assets=B01`, { type: 'FeatureCollection', features: [inside, far] });
    assert.ok(Date.now() - started < 5000, 'answered quickly');
    const [a, b] = json['features'].map((f) => f['properties']['statistics']['B01_b1']);
    assertStatistics(a, B01_FEATURE_A, 'feature inside');
    assert.equal(b!.valid_pixels, 0);
    assert.equal(b!.min, null);
    assert.ok(b!.masked_pixels > 100_000_000, String(b!.masked_pixels));
    // The same with limits far below its extent; the feature inside still counts.
    const small = await startTessera({ maxSourcePixels: 10_000, maxOutputPixels: 20_000 });
    try {
      const res = await small.request(`/stac/statistics?${q(item)}&assets=B01`, {
        method: 'POST',
        body: JSON.stringify({ type: 'FeatureCollection', features: [far, { ...far, geometry: POLYGON_OUTSIDE }] }),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 200, await res.clone().text());
    } finally {
      await small.close();
    }
    // An image of a feature that misses the data is a clear 404, not a size error.
    const image = await request('POST', `/stac/feature.png?${q(item)}&assets=B01`, far);
    assert.equal(image.status, 404, image.text);
    assert.match(image.text, /Feature is outside dataset bounds/);
  });
});
