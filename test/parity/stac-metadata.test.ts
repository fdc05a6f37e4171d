/**
 * Parity of the metadata routes (health, tile matrix sets, STAC assets/bounds/info, TileJSON,
 * WMTS capabilities, errors) with TiTiler 0.18.10: every case sends the same request to both
 * servers and compares status, Content-Type, Cache-Control and the body (JSON with number kinds
 * and key order, XML as element trees). Differences are accepted only when the case names an
 * entry of deliberate.ts and that entry's check accounts for them. The outcome of every case is
 * written to .parity/report.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareJson, compareXml, formatDifferences, parseJson, parseXml, toPlain, type Difference } from './compare.js';
import { DELIBERATE, deliberate, type Exchange } from './deliberate.js';
import { freePort, get, startParity, writeReport, type Parity, type Reply, type ReportRow } from './harness.js';
import { makeTiffLayouts } from '../helpers/tiff-layouts.js';

/** Replaced by the fixture STAC item's URL on the file server. */
const ITEM = '{ITEM}';

/** TiTiler 0.18.10's grids (morecantile 5.4.2 defaults), in its list order. */
const TITILER_TMS_IDS = [
  'CDB1GlobalGrid',
  'CanadianNAD83_LCC',
  'EuropeanETRS89_LAEAQuad',
  'GNOSISGlobalGrid',
  'LINZAntarticaMapTilegrid',
  'NZTM2000Quad',
  'UPSAntarcticWGS84Quad',
  'UPSArcticWGS84Quad',
  'UTM31WGS84Quad',
  'WGS1984Quad',
  'WebMercatorQuad',
  'WorldCRS84Quad',
  'WorldMercatorWGS84Quad',
];

/** TiTiler routes tessera does not serve yet (issue 26); the check fails when one of them is served. */
const NOT_YET_SERVED: string[] = [];

interface Case {
  id: string;
  /**
   * Path and query, sent as written to both servers; `{ITEM}` is the STAC item's URL, `{FILES}`
   * the file server's, `{CLOSED}` an http URL of a port nobody listens on.
   */
  path: string;
  /** What the reference must answer, so a broken setup cannot pass as "both fail alike". */
  expect: { status: number; contentType?: string };
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Response headers compared besides content-type and cache-control. */
  compareHeaders?: string[];
  /** JSON paths left out of the body comparison. */
  ignore?: string[];
  /** The entry of deliberate.ts that may account for differences. */
  deliberate?: string;
  /** Always put both answers in the report (for behaviour worth recording even when equal). */
  record?: boolean;
  /** List both servers' response headers in the report's header section. */
  showHeaders?: boolean;
  /** A further check of the reference answer; returns what is wrong. */
  checkReference?(x: Exchange): string | undefined;
}

const TILEJSON_TMS = ['WebMercatorQuad', 'WorldCRS84Quad', 'NZTM2000Quad'];

const CASES: Case[] = [
  { id: 'healthz', path: '/healthz', expect: { status: 200, contentType: 'application/json' }, showHeaders: true },

  // Tile matrix sets: tessera serves TMS 1.0 documents, compared numerically.
  {
    id: 'tms-list',
    path: '/tileMatrixSets',
    expect: { status: 200, contentType: 'application/json' },
    deliberate: 'tms-list',
    checkReference: (x) => {
      const body = toPlain(parseJson(x.titiler.body));
      const list = typeof body === 'object' && body !== null && !Array.isArray(body) ? body['tileMatrixSets'] : undefined;
      const ids = Array.isArray(list) ? list.map((e) => (typeof e === 'object' && e !== null && !Array.isArray(e) ? e['id'] : '?')) : [];
      return JSON.stringify(ids) === JSON.stringify(TITILER_TMS_IDS) ? undefined : `TiTiler lists ${JSON.stringify(ids)}`;
    },
  },
  ...TITILER_TMS_IDS.map(
    (id): Case => ({
      id: `tms-${id}`,
      path: `/tileMatrixSets/${id}`,
      expect: { status: 200, contentType: 'application/json' },
      deliberate: 'tms-document',
    }),
  ),
  { id: 'tms-NZTM2000', path: '/tileMatrixSets/NZTM2000', expect: { status: 422 }, deliberate: 'tms-nztm2000' },
  { id: 'tms-unknown-id', path: '/tileMatrixSets/NotATms', expect: { status: 422 }, deliberate: 'tms-id-enum' },

  // STAC metadata.
  { id: 'stac-assets', path: `/stac/assets?url=${ITEM}`, expect: { status: 200, contentType: 'application/json' } },
  { id: 'stac-bounds', path: `/stac/bounds?url=${ITEM}`, expect: { status: 200, contentType: 'application/json' } },
  { id: 'stac-info', path: `/stac/info?url=${ITEM}`, expect: { status: 200, contentType: 'application/json' } },
  { id: 'stac-info-B01', path: `/stac/info?url=${ITEM}&assets=B01`, expect: { status: 200 } },
  { id: 'stac-info-B01-B09', path: `/stac/info?url=${ITEM}&assets=B01&assets=B09`, expect: { status: 200 } },
  {
    id: 'stac-info-unknown-asset',
    path: `/stac/info?url=${ITEM}&assets=B1111`,
    expect: { status: 404 },
    showHeaders: true,
  },
  // A comma list is one (unknown) asset name in TiTiler 0.18.10, not two.
  { id: 'stac-info-comma-assets', path: `/stac/info?url=${ITEM}&assets=B01,B09`, expect: { status: 404 } },
  {
    id: 'stac-info-geojson',
    path: `/stac/info.geojson?url=${ITEM}`,
    expect: { status: 200, contentType: 'application/geo+json' },
  },

  // TileJSON: query forwarding and encoding into the tile URL template.
  ...TILEJSON_TMS.flatMap((tms): Case[] => [
    { id: `tilejson-${tms}-B01`, path: `/stac/${tms}/tilejson.json?url=${ITEM}&assets=B01`, expect: { status: 200 } },
    {
      id: `tilejson-${tms}-zooms`,
      path: `/stac/${tms}/tilejson.json?url=${ITEM}&assets=B01&minzoom=5&maxzoom=10`,
      expect: { status: 200 },
    },
    {
      id: `tilejson-${tms}-png@2x`,
      path: `/stac/${tms}/tilejson.json?url=${ITEM}&assets=B01&tile_format=png&tile_scale=2`,
      expect: { status: 200 },
    },
    {
      id: `tilejson-${tms}-expression`,
      path: `/stac/${tms}/tilejson.json?url=${ITEM}&expression=B01_b1/B09_b1&rescale=0,1&colormap_name=viridis`,
      expect: { status: 200 },
    },
  ]),
  {
    id: 'tilejson-no-assets',
    path: `/stac/WebMercatorQuad/tilejson.json?url=${ITEM}`,
    expect: { status: 400 },
  },
  // TiTiler checks assets/expression before `url` is validated: 400, not 422.
  { id: 'tilejson-no-query', path: '/stac/WebMercatorQuad/tilejson.json', expect: { status: 400 } },
  {
    id: 'tilejson-bad-minzoom',
    path: `/stac/WebMercatorQuad/tilejson.json?url=${ITEM}&assets=B01&minzoom=abc`,
    expect: { status: 422 },
  },
  {
    id: 'tilejson-bad-format',
    path: `/stac/WebMercatorQuad/tilejson.json?url=${ITEM}&assets=B01&tile_format=gif`,
    expect: { status: 422 },
  },
  {
    id: 'tilejson-unknown-tms',
    path: `/stac/NotATms/tilejson.json?url=${ITEM}&assets=B01`,
    expect: { status: 422 },
    deliberate: 'tms-id-enum',
  },

  // WMTS capabilities.
  {
    id: 'wmts-WebMercatorQuad-B01',
    path: `/stac/WebMercatorQuad/WMTSCapabilities.xml?url=${ITEM}&assets=B01`,
    expect: { status: 200, contentType: 'application/xml' },
    showHeaders: true,
  },
  {
    id: 'wmts-WebMercatorQuad-jpg@2x',
    path: `/stac/WebMercatorQuad/WMTSCapabilities.xml?url=${ITEM}&assets=B01&tile_format=jpg&tile_scale=2`,
    expect: { status: 200, contentType: 'application/xml' },
  },
  {
    id: 'wmts-WebMercatorQuad-use_epsg',
    path: `/stac/WebMercatorQuad/WMTSCapabilities.xml?url=${ITEM}&assets=B01&use_epsg=true`,
    expect: { status: 200, contentType: 'application/xml' },
  },
  {
    id: 'wmts-WorldCRS84Quad-B01',
    path: `/stac/WorldCRS84Quad/WMTSCapabilities.xml?url=${ITEM}&assets=B01`,
    expect: { status: 200, contentType: 'application/xml' },
  },

  // The forms without a grid (deprecated in TiTiler 0.18.10, still served): WebMercatorQuad, or the query's.
  { id: 'stac-tilejson-no-grid', path: `/stac/tilejson.json?url=${ITEM}&assets=B01`, expect: { status: 200, contentType: 'application/json' } },
  { id: 'stac-tilejson-no-grid-query-tms', path: `/stac/tilejson.json?url=${ITEM}&assets=B01&tileMatrixSetId=WorldCRS84Quad`, expect: { status: 200 } },
  { id: 'stac-wmts-no-grid', path: `/stac/WMTSCapabilities.xml?url=${ITEM}&assets=B01`, expect: { status: 200, contentType: 'application/xml' } },

  // /cog: a bare GeoTIFF.
  { id: 'cog-bounds', path: '/cog/bounds?url={FILES}/cog.tif', expect: { status: 200, contentType: 'application/json' } },
  { id: 'cog-info', path: '/cog/info?url={FILES}/cog.tif', expect: { status: 200, contentType: 'application/json' } },
  { id: 'cog-info-rgb', path: '/cog/info?url={FILES}/TCI.tif', expect: { status: 200 } },
  { id: 'cog-info-scale', path: '/cog/info?url={FILES}/cog_scale.tif', expect: { status: 200 } },
  { id: 'cog-info-geojson', path: '/cog/info.geojson?url={FILES}/B01.tif', expect: { status: 200, contentType: 'application/geo+json' } },
  ...TILEJSON_TMS.map(
    (tms): Case => ({
      id: `cog-tilejson-${tms}`,
      path: `/cog/${tms}/tilejson.json?url={FILES}/cog.tif`,
      expect: { status: 200, contentType: 'application/json' },
    }),
  ),
  {
    id: 'cog-tilejson-expression',
    path: '/cog/WebMercatorQuad/tilejson.json?url={FILES}/TCI.tif&expression=b1/b3&rescale=0,2&tile_format=png&tile_scale=2',
    expect: { status: 200 },
  },
  { id: 'cog-tilejson-no-grid', path: '/cog/tilejson.json?url={FILES}/cog.tif&bidx=1', expect: { status: 200 } },
  { id: 'cog-wmts', path: '/cog/WebMercatorQuad/WMTSCapabilities.xml?url={FILES}/cog.tif', expect: { status: 200, contentType: 'application/xml' } },
  { id: 'cog-wmts-no-grid', path: '/cog/WMTSCapabilities.xml?url={FILES}/B01.tif&tile_format=jpg', expect: { status: 200, contentType: 'application/xml' } },
  { id: 'cog-missing-url', path: '/cog/info', expect: { status: 422 } },

  // /cog/validate (rio-cogeo's cog_info): the fixtures, then layouts made for it ({FILES}/made/…).
  ...['cog', 'non_cog', 'dem', 'TCI', 'above_cog', 'cog_scale', 'cog_with_nan'].map(
    (name): Case => ({ id: `cog-validate-${name}`, path: `/cog/validate?url={FILES}/${name}.tif`, expect: { status: 200, contentType: 'application/json' } }),
  ),
  ...['ycbcr', 'overviews-after-data', 'bigtiff', 'edited', 'masked', 'strips', 'band-interleaved', 'jpeg'].map(
    (name): Case => ({
      id: `cog-validate-made-${name}`,
      path: `/cog/validate?url={FILES}/made/${name}.tif`,
      expect: { status: 200, contentType: 'application/json' },
    }),
  ),
  // /cog/stac (rio-stac's create_stac_item): statistics to the bit; the PROJJSON text follows the PROJ version.
  ...['cog', 'dem', 'B09', 'TCI', 'cog_with_nan', 'cog_scale', 'above_cog', 'non_cog'].map(
    (name): Case => ({
      id: `cog-stac-${name}`,
      path: `/cog/stac?url={FILES}/${name}.tif`,
      expect: { status: 200, contentType: 'application/json' },
      deliberate: 'stac-item-from-cog',
    }),
  ),
  // Not the JPEG layout: Debian's libjpeg and the one in TiTiler's wheels decode a few pixels differently.
  ...['masked', 'strips', 'band-interleaved'].map(
    (name): Case => ({
      id: `cog-stac-made-${name}`,
      path: `/cog/stac?url={FILES}/made/${name}.tif`,
      expect: { status: 200 },
      deliberate: 'stac-item-from-cog',
    }),
  ),
  {
    id: 'cog-stac-options',
    path: '/cog/stac?url={FILES}/dem.tif&datetime=2020-01-01&id=my-dem&collection=dems&collection_url=http://example.org/c&asset_name=elevation&asset_roles=data&asset_roles=dem&asset_href=http://example.org/dem.tif&max_size=64&geometry_densify=5&geometry_precision=4&extensions=http://example.org/ext.json',
    expect: { status: 200 },
    deliberate: 'stac-item-from-cog',
  },
  {
    id: 'cog-stac-range-no-extensions',
    path: '/cog/stac?url={FILES}/B09.tif&datetime=2020-01-01T00:00:00Z/2020-02-01T12:30:00Z&with_proj=false&with_raster=false&with_eo=false&asset_media_type=image/tiff',
    expect: { status: 200 },
    deliberate: 'stac-item-from-cog',
  },
  { id: 'cog-stac-bad-media-type', path: '/cog/stac?url={FILES}/cog.tif&asset_media_type=image/gif', expect: { status: 422 } },
  { id: 'cog-validate-strict', path: '/cog/validate?url={FILES}/made/ycbcr.tif&strict=true', expect: { status: 200 } },
  { id: 'cog-validate-strict-spelling', path: '/cog/validate?url={FILES}/cog.tif&strict=maybe', expect: { status: 422 } },

  // Validation errors: FastAPI's 422 body, to the letter.
  { id: 'missing-url-bounds', path: '/stac/bounds', expect: { status: 422 }, showHeaders: true },
  { id: 'missing-url-info', path: '/stac/info', expect: { status: 422 } },
  { id: 'missing-url-assets', path: '/stac/assets?assets=B01', expect: { status: 422 } },

  // Client mistakes TiTiler answers with 500.
  {
    id: 'client-bad-rescale',
    path: `/stac/WebMercatorQuad/tilejson.json?url=${ITEM}&assets=B01&rescale=abc`,
    expect: { status: 500 },
    deliberate: 'client-mistake-500',
    record: true,
  },
  {
    id: 'client-url-not-a-url',
    path: '/stac/info?url=not-a-url',
    expect: { status: 500 },
    deliberate: 'client-mistake-500',
    record: true,
  },

  // Upstream failures.
  {
    id: 'upstream-unreachable',
    path: '/stac/bounds?url=http://127.0.0.1:1/nothing.json',
    expect: { status: 500 },
    deliberate: 'upstream-failure',
    record: true,
    showHeaders: true,
  },
  // Port 1 is on the fetch spec's "bad ports" list; a closed ordinary port shows a plain refusal.
  {
    id: 'upstream-refused',
    path: '/stac/bounds?url={CLOSED}/nothing.json',
    expect: { status: 500 },
    deliberate: 'upstream-failure',
    record: true,
  },
  {
    id: 'upstream-404',
    path: '/stac/bounds?url={FILES}/missing.json',
    expect: { status: 500 },
    deliberate: 'upstream-failure',
    record: true,
  },

  // Compression: TiTiler gzips JSON of any size, errors included, when asked to.
  {
    id: 'gzip-json-200',
    path: `/stac/info?url=${ITEM}`,
    headers: { 'accept-encoding': 'gzip' },
    compareHeaders: ['content-encoding'],
    expect: { status: 200 },
    showHeaders: true,
    checkReference: (x) => gzipped(x.titiler.headers),
  },
  {
    id: 'gzip-json-404',
    path: `/stac/info?url=${ITEM}&assets=B1111`,
    headers: { 'accept-encoding': 'gzip' },
    compareHeaders: ['content-encoding'],
    expect: { status: 404 },
    checkReference: (x) => gzipped(x.titiler.headers),
  },
];

function gzipped(headers: Headers): string | undefined {
  const enc = headers.get('content-encoding');
  return enc === 'gzip' ? undefined : `TiTiler content-encoding ${enc ?? '(none)'}, expected gzip`;
}

// ---------------------------------------------------------------------------------------------
// Comparison of one exchange
// ---------------------------------------------------------------------------------------------

function mediaType(headers: Headers): string {
  return (headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
}

type Parsed<T> = { ok: true; a: T; b: T } | { ok: false; diffs: Difference[] };

/** Parses both bodies; a body that does not parse is itself the difference. */
function parseBoth<T>(x: Exchange, parse: (s: string) => T): Parsed<T> {
  const parseOne = (who: string, body: string): { value: T } | { error: Difference } => {
    try {
      return { value: parse(body) };
    } catch (err) {
      return { error: { path: 'body', message: `${who}: ${err instanceof Error ? err.message : String(err)}` } };
    }
  };
  const a = parseOne('TiTiler', x.titiler.body);
  const b = parseOne('tessera', x.tessera.body);
  if ('error' in a) return { ok: false, diffs: [a.error] };
  if ('error' in b) return { ok: false, diffs: [b.error] };
  return { ok: true, a: a.value, b: b.value };
}

/** Body differences, by the reference's media type. */
function bodyDifferences(x: Exchange, c: Case): Difference[] {
  const type = mediaType(x.titiler.headers);
  if (type === 'application/json' || type.endsWith('+json')) {
    const parsed = parseBoth(x, parseJson);
    if (!parsed.ok) return parsed.diffs;
    return compareJson(parsed.a, parsed.b, { normalise: x.normalise, ignore: c.ignore ?? [] });
  }
  if (type === 'application/xml' || type === 'text/xml') {
    const parsed = parseBoth(x, parseXml);
    if (!parsed.ok) return parsed.diffs;
    return compareXml(parsed.a, parsed.b, { normalise: x.normalise });
  }
  return x.normalise(x.titiler.body) === x.normalise(x.tessera.body) ? [] : [{ path: 'body', message: 'texts differ' }];
}

/** Everything that differs, with no allowance. */
function plainDifferences(x: Exchange, c: Case): Difference[] {
  if (x.tessera.error !== undefined) return [{ path: 'request', message: `tessera gave no answer: ${x.tessera.error}` }];
  const out: Difference[] = [];
  if (x.titiler.status !== x.tessera.status) out.push({ path: 'status', message: `${x.titiler.status} vs ${x.tessera.status}` });
  const headers = ['content-type', ...(c.compareHeaders ?? [])];
  // TiTiler adds Cache-Control to GET answers below 500; tessera to those below 400 (errors: no-store).
  if (x.titiler.status < 400) headers.push('cache-control');
  for (const name of headers) {
    const a = x.titiler.headers.get(name);
    const b = x.tessera.headers.get(name);
    if (a !== b) out.push({ path: `header ${name}`, message: `${a ?? '(none)'} vs ${b ?? '(none)'}` });
  }
  return [...out, ...bodyDifferences(x, c)];
}

function describeReply(who: string, r: { status: number; body: string; error?: string }): string {
  if (r.error !== undefined) return `${who}: no answer (${r.error})`;
  return `${who}: ${r.status} ${r.body.length > 160 ? `${r.body.slice(0, 160)}…` : r.body}`;
}

interface Outcome {
  row: ReportRow;
  /** Why the test fails; undefined when it passes. */
  failure?: string;
}

/** The case's verdict for the report, and why the test fails if it does. */
function judge(x: Exchange, c: Case): Outcome {
  const row = (verdict: ReportRow['verdict'], note: string): ReportRow => ({ id: c.id, request: x.request, verdict, note });
  const recorded = c.record ? `${describeReply('TiTiler', x.titiler)}<br>${describeReply('tessera', x.tessera)}` : '';

  const refProblem = checkReference(x, c);
  if (refProblem) return { row: row('differs', `suite: ${refProblem}`), failure: `reference answer unexpected: ${refProblem}` };

  const diffs = plainDifferences(x, c);
  if (diffs.length === 0) return { row: row('equal', recorded) };
  const summary = formatDifferences(diffs, 6).replace(/\n/g, '; ');
  if (c.deliberate === undefined) {
    return { row: row('differs', summary), failure: `tessera differs from TiTiler:\n${formatDifferences(diffs, 40)}` };
  }
  const entry = deliberate(c.deliberate);
  const left = entry.accept(x);
  if (left.length === 0) {
    return { row: row('deliberate', `${entry.id}${recorded ? `<br>${recorded}` : ''}`) };
  }
  return {
    row: row('differs', `beyond deliberate ${entry.id}: ${left.slice(0, 6).join('; ')}${recorded ? `<br>${recorded}` : ''}`),
    failure:
      `tessera differs from TiTiler beyond the deliberate difference '${entry.id}':\n  ${left.join('\n  ')}\n` +
      `plain differences:\n${formatDifferences(diffs, 40)}`,
  };
}

function checkReference(x: Exchange, c: Case): string | undefined {
  const t = x.titiler;
  if (t.error !== undefined) return `TiTiler gave no answer: ${t.error}`;
  if (t.status !== c.expect.status) return `TiTiler answered ${t.status}, the case expects ${c.expect.status}: ${t.body.slice(0, 300)}`;
  if (c.expect.contentType !== undefined && t.headers.get('content-type') !== c.expect.contentType) {
    return `TiTiler content-type ${t.headers.get('content-type') ?? '(none)'}, the case expects ${c.expect.contentType}`;
  }
  return c.checkReference?.(x);
}

/** Headers that say nothing about parity (they vary by run or by HTTP server). */
const UNINTERESTING_HEADERS = new Set(['date', 'content-length', 'connection', 'keep-alive', 'server']);

function headerLines(r: Reply): string {
  if (r.error !== undefined) return `(no answer: ${r.error})`;
  const lines = [`HTTP ${r.status}`];
  r.headers.forEach((value, name) => {
    if (!UNINTERESTING_HEADERS.has(name)) lines.push(`${name}: ${value}`);
  });
  return lines.join('<br>');
}

/** Markdown for the report: the accepted differences, with their reasons. */
function deliberateSection(): string[] {
  const cell = (t: string): string => t.replace(/\|/g, '\\|');
  return [
    '## Deliberate differences (test/parity/deliberate.ts)',
    '',
    '| id | route | what differs | why |',
    '| --- | --- | --- | --- |',
    ...DELIBERATE.map((d) => `| ${d.id} | ${cell(d.route)} | ${cell(d.what)} | ${cell(d.why)} |`),
    '',
  ];
}

/** Markdown for the report: both servers' headers for the cases that asked for it. */
function headerSection(shown: { id: string; titiler: Reply; tessera: Reply }[]): string[] {
  if (shown.length === 0) return [];
  return [
    '## Response headers',
    '',
    'Recorded, not compared: only Content-Type, Cache-Control (below 500) and Content-Encoding (gzip cases) are asserted.',
    '',
    '| case | TiTiler | tessera |',
    '| --- | --- | --- |',
    ...shown.map((h) => `| ${h.id} | ${headerLines(h.titiler)} | ${headerLines(h.tessera)} |`),
    '',
  ];
}

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

describe('parity with TiTiler 0.18.10: STAC metadata routes', () => {
  let parity: Parity | undefined;
  let closedUrl = '';
  let startError: string | undefined;
  const rows: ReportRow[] = [];
  const shownHeaders: { id: string; titiler: Reply; tessera: Reply }[] = [];

  before(async () => {
    try {
      parity = await startParity();
      closedUrl = `http://127.0.0.1:${await freePort()}`;
      for (const [name, bytes] of await makeTiffLayouts()) parity.fileserver.put(`/made/${name}.tif`, bytes, 'image/tiff');
    } catch (err) {
      startError = err instanceof Error ? err.message : String(err);
      throw err;
    }
  });

  after(async () => {
    await parity?.stop();
    const preface = startError ? ['**The servers did not start:**', '', '```', startError, '```'] : [];
    const file = await writeReport(rows, preface, [...deliberateSection(), ...headerSection(shownHeaders)]);
    console.log(`parity report: ${file}`);
  });

  for (const c of CASES) {
    it(c.id, async () => {
      assert.ok(parity, `servers not started: ${startError ?? 'unknown reason'}`);
      const p = parity;
      const pathAndQuery = c.path.replaceAll(ITEM, p.itemUrl).replaceAll('{FILES}', p.fileserver.url).replaceAll('{CLOSED}', closedUrl);
      const [titiler, tessera] = await Promise.all([get(p.titiler.url, pathAndQuery, c.headers), get(p.tessera.url, pathAndQuery, c.headers)]);
      const request = `GET ${c.path}${
        c.headers
          ? ` (${Object.entries(c.headers)
              .map(([k, v]) => `${k}: ${v}`)
              .join(', ')})`
          : ''
      }`;
      const outcome = judge({ request, titiler, tessera, normalise: p.normalise }, c);
      rows.push(outcome.row);
      if (c.showHeaders) shownHeaders.push({ id: c.id, titiler, tessera });
      if (outcome.failure !== undefined) assert.fail(`${c.id}: ${request}\n${outcome.failure}`);
    });
  }

  // tessera's /api lists the routes it registers, in TiTiler's URL forms (api/openapi.ts).
  it("every operation in TiTiler's OpenAPI document is in tessera's, at the same path", async () => {
    assert.ok(parity, `servers not started: ${startError ?? 'unknown reason'}`);
    const operations = async (base: string): Promise<Set<string>> => {
      const doc = JSON.parse((await get(base, '/api')).body) as { paths: Record<string, Record<string, unknown>> };
      return new Set(Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)));
    };
    const titiler = await operations(parity.titiler.url);
    const tessera = await operations(parity.tessera.url);
    assert.ok(titiler.size > 80, `TiTiler documents ${titiler.size} operations`);
    assert.deepEqual(
      [...titiler].filter((op) => !tessera.has(op)),
      NOT_YET_SERVED,
      'operations TiTiler documents and tessera does not',
    );
  });

  it("every query parameter TiTiler documents on an operation is in tessera's document for it", async () => {
    assert.ok(parity, `servers not started: ${startError ?? 'unknown reason'}`);
    type Doc = { paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>> };
    const [titiler, tessera] = await Promise.all(
      [parity.titiler.url, parity.tessera.url].map(async (base) => JSON.parse((await get(base, '/api')).body) as Doc),
    );
    const missing: string[] = [];
    for (const [path, item] of Object.entries(titiler!.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const ours = new Set((tessera!.paths[path]?.[method]?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name));
        for (const p of op.parameters ?? []) if (p.in === 'query' && !ours.has(p.name)) missing.push(`${method.toUpperCase()} ${path}: ${p.name}`);
      }
    }
    assert.deepEqual(missing, []);
  });
});

describe('parity suite: deliberate differences', () => {
  it('every entry of deliberate.ts is exercised by a case', () => {
    const used = new Set(CASES.map((c) => c.deliberate).filter((d) => d !== undefined));
    const unused = DELIBERATE.filter((d) => !used.has(d.id)).map((d) => d.id);
    assert.deepEqual(unused, [], 'deliberate.ts lists differences no case uses');
    for (const id of used) assert.doesNotThrow(() => deliberate(id));
  });
});
