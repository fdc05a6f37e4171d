/**
 * Property-based fuzzing over every route family (fast-check): each run takes a valid request, mutates
 * one or two of its query values, path pieces, its body or the STAC item / MosaicJSON it names (a
 * copy with one node replaced, served by the file server) with hostile values, sends it to a real
 * tessera reading the fixtures over the Range file server, and checks what must hold for any input:
 *   - an answer within the deadline;
 *   - no 500 ever; 502/504 only where the mutation named an upstream (a `url`);
 *   - every 4xx is JSON `{"detail": …}`;
 *   - `/healthz` still answers;
 *   - no piece of work holds the event loop longer than MAX_STALL_MS (tessera's own watchdog,
 *     api/watchdog.ts, set to that threshold, names the requests in flight when it happens).
 *
 * `make test` runs a short seeded run (FUZZ_RUNS, default 300; FUZZ_SEED, default fixed). `make fuzz`
 * runs long with a random seed; a failure is saved to .fuzz/failures/ with the seed, the replay path
 * and the request, and replays with `FUZZ_SEED=… FUZZ_PATH=… node --test dist/test/fuzz.test.js`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { FIXTURES, fixtureItem, fixtureMosaic, startFileServer, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { REPO_ROOT } from './helpers/paths.js';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 300);
const SEED = process.env['FUZZ_SEED'] === 'random' ? Date.now() % 2 ** 31 : Number(process.env['FUZZ_SEED'] ?? 20261125);
const REPLAY_PATH = process.env['FUZZ_PATH'];
const DEADLINE_MS = 10_000;
/** Longest the event loop may be held by one piece of work while fuzzing (a stall delays every client). */
const MAX_STALL_MS = 250;

let files: FileServer;
let tessera: RunningTessera;

/** A request as the fuzzer shapes it: path pieces and query values are what it mutates. */
interface Request {
  method: 'GET' | 'POST';
  /** Path pieces, joined with '/'; a piece may hold `{a},{b}` parts. */
  pieces: string[];
  query: Array<[string, string]>;
  body?: string;
}

const feature = (ring: number[][]): string => JSON.stringify({ type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [ring] } });
const SQUARE = [
  [23.8, 32],
  [23.9, 32],
  [23.9, 32.1],
  [23.8, 32.1],
  [23.8, 32],
];

/** One valid request per route, the seeds of every mutation (ITEM and MOSAIC are filled in at start). */
function baseRequests(item: string, mosaic: string, raster: string): Request[] {
  const stac = (pieces: string[], query: Array<[string, string]> = [], method: 'GET' | 'POST' = 'GET', body?: string): Request => ({
    method,
    pieces: ['stac', ...pieces],
    query: [['url', item], ['assets', 'B01'], ...query],
    ...(body ? { body } : {}),
  });
  const mos = (pieces: string[], query: Array<[string, string]> = []): Request => ({
    method: 'GET',
    pieces: ['mosaicjson', ...pieces],
    query: [['url', mosaic], ...query],
  });
  const cog = (pieces: string[], query: Array<[string, string]> = [], method: 'GET' | 'POST' = 'GET', body?: string): Request => ({
    method,
    pieces: ['cog', ...pieces],
    query: [['url', raster], ...query],
    ...(body ? { body } : {}),
  });
  return [
    stac(['assets']),
    stac(['bounds']),
    stac(['info']),
    stac(['info.geojson']),
    stac(
      ['WebMercatorQuad', 'tilejson.json'],
      [
        ['rescale', '0,10000'],
        ['minzoom', '6'],
        ['maxzoom', '9'],
      ],
    ),
    stac(['WebMercatorQuad', 'WMTSCapabilities.xml'], [['tile_format', 'png']]),
    stac(
      ['tiles', 'WebMercatorQuad', '8', '144', '103.png'],
      [
        ['rescale', '0,10000'],
        ['colormap_name', 'viridis'],
      ],
    ),
    stac(
      ['tiles', 'WGS1984Quad', '7', '144', '41@2x.webp'],
      [
        ['expression', 'B01_b1/B09_b1'],
        ['assets', 'B09'],
        ['rescale', '0,2'],
      ],
    ),
    stac(
      ['tiles', 'WebMercatorQuad', '8', '144', '103.npy'],
      [
        ['buffer', '2'],
        ['padding', '1'],
        ['resampling', 'bilinear'],
        ['nodata', '0'],
      ],
    ),
    stac(
      ['preview.png'],
      [
        ['max_size', '64'],
        ['algorithm', 'hillshade'],
        ['algorithm_params', '{"azimuth": 45}'],
      ],
    ),
    stac(
      ['preview.jpg'],
      [
        ['width', '64'],
        ['height', '32'],
        ['color_formula', 'gamma r 1.5'],
        ['rescale', '0,8000'],
      ],
    ),
    stac(
      ['bbox', '23.8,32.0,23.9,32.1.png'],
      [
        ['dst_crs', 'EPSG:3857'],
        ['coord_crs', 'EPSG:4326'],
      ],
    ),
    stac(['bbox', '23.8,32.0,23.9,32.1', '64x64.tif']),
    stac(['point', '23.8,32.0'], [['coord_crs', 'EPSG:4326']]),
    stac(
      ['statistics'],
      [
        ['max_size', '64'],
        ['p', '5'],
        ['histogram_bins', '8'],
        ['histogram_range', '0,10000'],
      ],
    ),
    stac(
      ['asset_statistics'],
      [
        ['max_size', '64'],
        ['asset_expression', 'B01|b1*2'],
      ],
    ),
    stac(['WebMercatorQuad', 'map'], [['rescale', '0,10000']]),
    stac(['feature.png'], [['max_size', '64']], 'POST', feature(SQUARE)),
    stac(['statistics'], [['categorical', 'true']], 'POST', JSON.stringify({ type: 'FeatureCollection', features: [JSON.parse(feature(SQUARE))] })),
    mos([''], []),
    mos(['bounds']),
    mos(['info']),
    mos(
      ['tiles', 'WebMercatorQuad', '7', '37', '45.png'],
      [
        ['bidx', '1'],
        ['rescale', '0,10000'],
        ['pixel_selection', 'highest'],
      ],
    ),
    mos(['WebMercatorQuad', 'tilejson.json']),
    mos(['point', '-73.5,45.5']),
    mos(['7', '37', '45', 'assets']),
    mos(['-73.5,45.5', 'assets']),
    cog(['info']),
    cog(
      ['tiles', 'WebMercatorQuad', '8', '144', '103.png'],
      [
        ['rescale', '0,10000'],
        ['bidx', '1'],
      ],
    ),
    cog(
      ['tiles', '8', '144', '103'],
      [
        ['format', 'png'],
        ['scale', '2'],
        ['expression', 'b1*2'],
        ['rescale', '0,20000'],
      ],
    ),
    cog(
      ['tilejson.json'],
      [
        ['tileMatrixSetId', 'WorldCRS84Quad'],
        ['bidx', '1'],
      ],
    ),
    cog(
      ['preview.png'],
      [
        ['max_size', '64'],
        ['rescale', '0,10000'],
      ],
    ),
    cog(['point', '23.8,32.0'], [['expression', 'b1/2']]),
    cog(['statistics'], [['p', '50']], 'POST', feature(SQUARE)),
    cog(['validate'], [['strict', 'true']]),
    cog(
      ['stac'],
      [
        ['max_size', '64'],
        ['geometry_densify', '3'],
        ['geometry_precision', '5'],
        ['datetime', '2020-01-01/2020-02-01'],
      ],
    ),
    {
      method: 'GET',
      pieces: ['colorMaps', 'cfastie'],
      query: [
        ['format', 'png'],
        ['orientation', 'vertical'],
        ['height', '64'],
      ],
    },
    // TiTiler 2.x requests (answered under both settings; docs/titiler2.md).
    cog(
      ['tiles', 'WebMercatorQuad', '8', '144', '103'],
      [
        ['tilesize', '384'],
        ['rescale', '0,10000'],
      ],
    ),
    cog(['tiles'], [['crs', 'EPSG:3857']]),
    cog(
      ['tiles', 'WorldCRS84Quad'],
      [
        ['minzoom', '2'],
        ['maxzoom', '9'],
      ],
    ),
    stac(['WebMercatorQuad', 'map.html'], [['tilesize', '512']]),
    mos(['tiles', 'CanadianNAD83_LCC'], [['f', 'json']]),
    { method: 'GET', pieces: ['conformance'], query: [['f', 'json']] },
    { method: 'GET', pieces: [''], query: [['f', 'json']] },
    { method: 'GET', pieces: ['tileMatrixSets', 'WebMercatorQuad'], query: [] },
    { method: 'GET', pieces: ['colorMaps', 'viridis'], query: [] },
    { method: 'GET', pieces: ['algorithms', 'hillshade'], query: [] },
  ];
}

/** Values that broke, or could break, a parser, a size or a loop. */
const NASTY = [
  '',
  ' ',
  '-1',
  '0',
  '1e308',
  '-1e308',
  'NaN',
  'nan',
  'inf',
  '-Infinity',
  '18446744073709551616',
  '9'.repeat(400),
  '0x10',
  '1e-320',
  '2147483648',
  '9007199254740993',
  '1,2,3',
  ',',
  '[',
  '{',
  '{"a":',
  '[[[[',
  '%00',
  '\u0000',
  '\ud800',
  '../../etc/passwd',
  'file:///etc/passwd',
  '/vsicurl/http://127.0.0.1:1/x.tif',
  'http://127.0.0.1:1/x',
  'http://169.254.169.254/',
  '<VRTDataset>',
  'b1'.repeat(1500),
  'EPSG:99999',
  'IAU_2015:30100',
  '+proj=pipeline +step +proj=unitconvert',
  '+proj=longlat +a=1e308 +b=1e308',
  '{"0": [0,0,0,0]}',
  '[[[0,1],[1,2,3,4]]]',
  'B01_b1**B01_b1**B01_b1',
  'sin(',
  'where(b1>0,b1,',
  'hillshade',
  'lastbandlow',
  'count',
  '{"azimuth": 1e308}',
  'true',
  'yes',
  'x'.repeat(5000),
];

const nastyValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
);

const PARAMS = [
  'url',
  'assets',
  'expression',
  'asset_as_band',
  'asset_bidx',
  'bidx',
  'nodata',
  'unscale',
  'resampling',
  'reproject',
  'buffer',
  'padding',
  'max_size',
  'width',
  'height',
  'dst_crs',
  'coord_crs',
  'rescale',
  'color_formula',
  'colormap_name',
  'colormap',
  'algorithm',
  'algorithm_params',
  'return_mask',
  'tilesize',
  'minzoom',
  'maxzoom',
  'pixel_selection',
  'p',
  'c',
  'histogram_bins',
  'histogram_range',
  'categorical',
  'format',
  'tile_format',
  'tile_scale',
  'asset_expression',
] as const;

type Mutation =
  | { kind: 'query'; index: number; value: string }
  | { kind: 'param'; name: string; value: string }
  | { kind: 'piece'; index: number; value: string }
  | { kind: 'body'; value: string }
  | { kind: 'document'; node: number; value: unknown };

const body: fc.Arbitrary<string> = fc.oneof(
  fc.json({ maxDepth: 6 }),
  fc.constantFrom(
    '',
    'null',
    '{"type":"Feature"}',
    `{"type":"Feature","properties":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`,
    feature([
      [-1e308, -1e308],
      [1e308, -1e308],
      [1e308, 1e308],
      [-1e308, -1e308],
    ]),
    feature([
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ]),
    feature([
      [100, -40],
      [170, -40],
      [170, 30],
      [100, 30],
      [100, -40],
    ]),
  ),
  fc
    .array(fc.tuple(fc.double({ noNaN: true }), fc.double({ noNaN: true })), { minLength: 3, maxLength: 50 })
    .map((pts) => feature([...pts.map(([x, y]) => [x, y]), [pts[0]![0], pts[0]![1]]])),
);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('query' as const), index: fc.nat(8), value: nastyValue }),
  fc.record({ kind: fc.constant('param' as const), name: fc.constantFrom(...PARAMS), value: nastyValue }),
  fc.record({ kind: fc.constant('piece' as const), index: fc.nat(6), value: nastyValue }),
  fc.record({ kind: fc.constant('body' as const), value: body }),
  fc.record({
    kind: fc.constant('document' as const),
    node: fc.nat(),
    value: fc.oneof(nastyValue, fc.jsonValue({ maxDepth: 3 }), fc.double(), fc.constant(null)),
  }),
);

/** The STAC item and MosaicJSON the requests name, parsed: document mutations edit a copy. */
const documents = new Map<string, unknown>();
let served = 0;

/** Paths to every node of a JSON document (objects' keys and arrays' indexes). */
function nodes(doc: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  if (doc !== null && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      const p = [...at, Array.isArray(doc) ? Number(k) : k];
      out.push(p);
      nodes(v, p, out);
    }
  }
  return out;
}

/** Serves a copy of the document at `url` with one node replaced; returns the copy's URL. */
function mutatedDocument(url: string, node: number, value: unknown): string | undefined {
  const original = documents.get(url);
  if (original === undefined) return undefined;
  const doc = structuredClone(original) as Record<string | number, unknown>;
  const all = nodes(doc);
  const where = all[node % all.length]!;
  let parent: Record<string | number, unknown> = doc;
  for (const key of where.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[where[where.length - 1]!] = value;
  const name = `/fuzz/${served++}.json`;
  files.put(name, JSON.stringify(doc) ?? 'null');
  return `${files.url}${name}`;
}

function apply(base: Request, mutations: Mutation[]): { request: Request; upstreamNamed: boolean } {
  const request: Request = { ...base, pieces: [...base.pieces], query: base.query.map(([k, v]) => [k, v] as [string, string]) };
  let upstreamNamed = false;
  for (const m of mutations) {
    if (m.kind === 'query' && request.query.length > 0) {
      const entry = request.query[m.index % request.query.length]!;
      if (entry[0] === 'url') upstreamNamed = true;
      entry[1] = m.value;
    } else if (m.kind === 'param') {
      if (m.name === 'url') upstreamNamed = true;
      request.query.push([m.name, m.value]);
    } else if (m.kind === 'piece' && request.pieces.length > 1) {
      // The first piece names the family: keep it, so that the mutation reaches a handler.
      request.pieces[1 + (m.index % (request.pieces.length - 1))] = m.value;
    } else if (m.kind === 'body' && request.method === 'POST') {
      request.body = m.value;
    } else if (m.kind === 'document') {
      const entry = request.query.find(([k]) => k === 'url');
      const copy = entry ? mutatedDocument(entry[1], m.node, m.value) : undefined;
      if (entry && copy) {
        entry[1] = copy;
        // A document may name any upstream, unreachable ones included.
        upstreamNamed = true;
      }
    }
  }
  return { request, upstreamNamed };
}

/** encodeURIComponent, with lone surrogates (which it cannot encode) made U+FFFD as a client's UTF-8 would. */
function encode(text: string): string {
  return encodeURIComponent(text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
}

function urlOf(r: Request): string {
  const query = r.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
  return `/${r.pieces.map((p) => encode(p).replace(/%2C/g, ',').replace(/%40/g, '@')).join('/')}${query ? `?${query}` : ''}`;
}

/** The invariants for one answer; returns what is wrong (empty: fine). */
async function check(r: Request, upstreamNamed: boolean): Promise<string[]> {
  const started = Date.now();
  let res: Response;
  try {
    res = await fetch(`${tessera.url}${urlOf(r)}`, {
      method: r.method,
      ...(r.body !== undefined ? { body: r.body, headers: { 'content-type': 'application/json' } } : {}),
      signal: AbortSignal.timeout(DEADLINE_MS + 5000),
    });
  } catch (err) {
    return [`no answer: ${(err as Error).message}`];
  }
  const text = await res.text();
  const problems: string[] = [];
  if (Date.now() - started > DEADLINE_MS + 2000) problems.push(`took ${Date.now() - started} ms`);
  if (res.status >= 500 && !(upstreamNamed && (res.status === 502 || res.status === 504))) problems.push(`status ${res.status}: ${text.slice(0, 300)}`);
  if (res.status >= 400 && res.status < 500) {
    let detail: unknown;
    try {
      detail = (JSON.parse(text) as { detail?: unknown }).detail;
    } catch {
      detail = undefined;
    }
    if (detail === undefined) problems.push(`${res.status} without a JSON detail: ${text.slice(0, 200)}`);
  }
  const health = await fetch(`${tessera.url}/healthz`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  if (health?.status !== 200) problems.push('/healthz stopped answering');
  return problems;
}

before(async () => {
  files = await startFileServer(FIXTURES);
  files.put('/item.json', await fixtureItem(files.url));
  const doc = await fixtureMosaic(files.url);
  files.put('/mosaic.json', JSON.stringify(doc));
  documents.set(`${files.url}/item.json`, JSON.parse(await fixtureItem(files.url)));
  documents.set(`${files.url}/mosaic.json`, doc);
  // Over a real socket: hostile URLs and bodies go through Node's HTTP parser as they would in production.
  tessera = await startTessera({ requestTimeoutMs: DEADLINE_MS, stallWarnMs: MAX_STALL_MS }, { listen: true });
});

after(async () => {
  await tessera.close();
  await files.close();
});

describe('fuzzing every route family', () => {
  it(`holds the invariants over ${RUNS} mutated requests (seed ${SEED})`, async () => {
    const bases = baseRequests(`${files.url}/item.json`, `${files.url}/mosaic.json`, `${files.url}/B01.tif`);
    // Every base request is valid as it stands: the mutations alone make it hostile.
    for (const base of bases) {
      const res = await fetch(`${tessera.url}${urlOf(base)}`, {
        method: base.method,
        ...(base.body ? { body: base.body, headers: { 'content-type': 'application/json' } } : {}),
      });
      assert.ok(res.status === 200, `${urlOf(base)} → ${res.status} ${(await res.text()).slice(0, 200)}`);
      await res.arrayBuffer().catch(() => undefined);
    }
    const property = fc.asyncProperty(fc.nat(bases.length - 1), fc.array(mutation, { minLength: 1, maxLength: 2 }), async (which, mutations) => {
      const { request, upstreamNamed } = apply(bases[which]!, mutations);
      const problems = await check(request, upstreamNamed);
      if (problems.length > 0)
        throw new Error(
          `${request.method} ${urlOf(request).slice(0, 400)}${request.body !== undefined ? ` body ${request.body.slice(0, 200)}` : ''}\n  ${problems.join('\n  ')}`,
        );
    });
    // tessera's own watchdog (threshold MAX_STALL_MS) names the requests in flight during a stall.
    const watchdog = tessera.app.watchdog;
    const stallsBefore = watchdog.stalls;
    try {
      await fc.assert(property, { seed: SEED, numRuns: RUNS, ...(REPLAY_PATH ? { path: REPLAY_PATH } : {}), endOnFailure: true });
      if (process.env['FUZZ_VERBOSE'])
        console.log(`event loop: worst stall ${watchdog.worstMs.toFixed(1)} ms, p99 delay ${watchdog.delayMs(99).toFixed(1)} ms`);
      const stalls = watchdog.recent.map((s) => `${s.stalledMs} ms during ${s.inFlight.join(' | ')}`).join('\n  ');
      assert.equal(watchdog.stalls - stallsBefore, 0, `a request held the event loop for over ${MAX_STALL_MS} ms:\n  ${stalls}`);
    } catch (err) {
      if (err instanceof assert.AssertionError) throw err;
      const dir = path.join(REPO_ROOT, '.fuzz', 'failures');
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, `${Date.now()}-seed-${SEED}.txt`);
      const cause = (err as Error).cause instanceof Error ? `\n${((err as Error).cause as Error).message}` : '';
      const text = `${(err as Error).message}${cause}`;
      await fs.writeFile(file, `FUZZ_SEED=${SEED}\n${text}\n`);
      throw new Error(`fuzzing found a failure (saved to ${file}; the seed and path in it replay it):\n${text}`);
    }
  });
});
