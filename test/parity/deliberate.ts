/**
 * The one list of deliberate differences between tessera and TiTiler 0.18.10. A parity case may
 * name one of these; when the plain comparison finds differences, the entry's `accept` decides
 * whether they are exactly the deliberate ones (it returns what is still wrong, empty when all is
 * accounted for). Nothing outside this list is accepted.
 */
import { compareJson, numbersClose, parseJson, toPlain, type PlainJson } from './compare.js';
import type { Reply } from './harness.js';
import { srsFrom } from '../../src/gdal/crs.js';

/** What a check sees: the same request answered by both servers. */
export interface Exchange {
  request: string;
  titiler: Reply;
  tessera: Reply;
  /** Replaces either server's base URL by `{BASE}`. */
  normalise(s: string): string;
}

export interface DeliberateDifference {
  id: string;
  route: string;
  what: string;
  why: string;
  /** Problems left once this difference is allowed for; empty means accepted. */
  accept(x: Exchange): string[];
}

/** Grids tessera serves that TiTiler 0.18.10 does not. */
const EXTRA_TMS_IDS = ['NZTM2000'] as const;

export const DELIBERATE: readonly DeliberateDifference[] = [
  {
    id: 'tms-list',
    route: 'GET /tileMatrixSets',
    what:
      "TMS 1.0-style list: 14 entries (TiTiler's 13 + NZTM2000), each `{id, title, links}` with " +
      '`rel: "item"` links, where TiTiler lists `{id, links}` with the OGC tiling-schemes rel.',
    why: "tessera's service spec asks for TMS 1.0 documents and the legacy NZTM2000 grid; the grids themselves are the same and are compared numerically.",
    accept: acceptTmsList,
  },
  {
    id: 'tms-document',
    route: 'GET /tileMatrixSets/{tileMatrixSetId}',
    what:
      "TMS 1.0 document (`identifier`, `tileMatrix[]` with `topLeftCorner`) instead of TiTiler's TMS 2.0 " +
      '(`id`, `tileMatrices[]` with `pointOfOrigin`); compared numerically matrix by matrix. TMS 1.0 has no ' +
      "cellSize: tessera's scaleDenominator is the one that gives the cellSize the tiles are cut with " +
      "(morecantile 5.4.2's own disagree for CanadianNAD83_LCC by 5.8%), so it is compared by the cell size it gives.",
    why: "tessera's service spec asks for the TMS 1.0 shape.",
    accept: acceptTmsDocument,
  },
  {
    id: 'tms-nztm2000',
    route: 'GET /tileMatrixSets/NZTM2000',
    what: 'tessera serves the NZTM2000 grid (morecantile 3.4.0 definition); TiTiler 0.18.10 answers 422 (unknown id).',
    why: "tessera's service spec asks for NZTM2000 besides TiTiler's 13 grids.",
    accept: acceptNztm2000,
  },
  {
    id: 'tms-id-enum',
    route: 'any route with an unknown {tileMatrixSetId}',
    what:
      'Both answer 422 with `detail[0].type` "literal_error" and the same `loc`; the `msg` and `ctx.expected` ' +
      'lists of accepted ids differ because tessera accepts NZTM2000 too.',
    why: 'Follows from the extra grid (tms-nztm2000).',
    accept: acceptTmsIdEnum,
  },
  {
    id: 'client-mistake-500',
    route: 'a bad query value TiTiler does not validate (`rescale=abc`, a `url` that is not a URL)',
    what: 'TiTiler answers 500 with the Python exception text; tessera answers a 4xx with `{"detail": string}`.',
    why: 'The client is at fault; a 5xx would make clients and monitors retry and alert on it.',
    accept: acceptClientMistake,
  },
  {
    id: 'upstream-failure',
    route: 'GET /stac/* with a `url` whose server is down or answers 404',
    what:
      "TiTiler answers 500 with Python's exception text (`[Errno 111] Connection refused`, httpx's message); " +
      'tessera answers its own 4xx/5xx status and message, still `{"detail": string}` JSON.',
    why: 'The Python exception texts are not an interface; tessera maps upstream failures to meaningful statuses.',
    accept: acceptUpstreamFailure,
  },
  {
    id: 'stac-item-from-cog',
    route: 'GET /cog/stac',
    what:
      '`proj:projjson` is the PROJJSON of the PROJ tessera runs with (Debian 12: PROJ 9.1, schema v0.5), where ' +
      "TiTiler's wheels carry a newer PROJ (schema v0.7, a few renamed parameters); the CRS is the same (same " +
      'name and type). `datetime` is the time of the request when the file has none, on both. Everything else ' +
      'is compared as usual, statistics included.',
    why: "tessera uses the system's GDAL and PROJ (the stack decision); the PROJJSON texts follow their versions.",
    accept: acceptStacItemFromCog,
  },
];

export function deliberate(id: string): DeliberateDifference {
  const entry = DELIBERATE.find((d) => d.id === id);
  if (!entry) throw new Error(`no deliberate difference '${id}' in deliberate.ts`);
  return entry;
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

type Obj = { [key: string]: PlainJson };

function isObj(v: PlainJson | undefined): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonBody(reply: Reply, who: string, problems: string[]): PlainJson | undefined {
  try {
    return toPlain(parseJson(reply.body));
  } catch (err) {
    problems.push(`${who} body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

function expectStatus(reply: Reply, who: string, ok: (s: number) => boolean, want: string, problems: string[]): void {
  if (!ok(reply.status)) problems.push(`${who} status ${reply.status}${reply.error ? ` (${reply.error})` : ''}, expected ${want}`);
}

function sameContentType(x: Exchange, problems: string[]): void {
  const a = x.titiler.headers.get('content-type');
  const b = x.tessera.headers.get('content-type');
  if (a !== b) problems.push(`content-type ${a ?? '(none)'} vs ${b ?? '(none)'}`);
}

/** A `{"detail": "<message>"}` JSON error with nothing else in it. */
function expectDetailString(reply: Reply, who: string, problems: string[]): void {
  const type = reply.headers.get('content-type') ?? '';
  if (!type.startsWith('application/json')) problems.push(`${who} content-type ${type || '(none)'}, expected application/json`);
  const body = jsonBody(reply, who, problems);
  if (body === undefined) return;
  if (!isObj(body) || Object.keys(body).join() !== 'detail' || typeof body['detail'] !== 'string' || body['detail'] === '') {
    problems.push(`${who} body is not {"detail": string}: ${reply.body.slice(0, 200)}`);
  }
}

function acceptTmsList(x: Exchange): string[] {
  const problems: string[] = [];
  expectStatus(x.titiler, 'TiTiler', (s) => s === 200, '200', problems);
  expectStatus(x.tessera, 'tessera', (s) => s === 200, '200', problems);
  sameContentType(x, problems);
  const ref = jsonBody(x.titiler, 'TiTiler', problems);
  const ours = jsonBody(x.tessera, 'tessera', problems);
  if (!isObj(ref) || !isObj(ours)) return problems.length > 0 ? problems : ['bodies are not objects'];
  const refList = ref['tileMatrixSets'];
  const ourList = ours['tileMatrixSets'];
  if (!Array.isArray(refList) || !Array.isArray(ourList)) return [...problems, 'tileMatrixSets is not an array'];

  const refIds = refList.map((e) => (isObj(e) ? String(e['id']) : '?'));
  const want = [...refIds, ...EXTRA_TMS_IDS].sort();
  const got = ourList.map((e) => (isObj(e) && typeof e['id'] === 'string' ? e['id'] : '?')).sort();
  if (want.join() !== got.join()) problems.push(`ids ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);

  for (const entry of ourList) {
    if (!isObj(entry)) {
      problems.push('an entry is not an object');
      continue;
    }
    const id = String(entry['id']);
    if (typeof entry['title'] !== 'string' || entry['title'] === '') problems.push(`${id}: no title`);
    const links = entry['links'];
    if (!Array.isArray(links) || links.length === 0) {
      problems.push(`${id}: no links`);
      continue;
    }
    for (const link of links) {
      if (!isObj(link)) continue;
      const href = typeof link['href'] === 'string' ? x.normalise(link['href']) : '';
      if (href !== `{BASE}/tileMatrixSets/${id}`) problems.push(`${id}: link href ${String(link['href'])}`);
      if (link['rel'] !== 'item') problems.push(`${id}: link rel ${String(link['rel'])}, expected "item"`);
    }
  }
  return problems;
}

function num(v: PlainJson | undefined): number {
  return typeof v === 'number' ? v : NaN;
}

function closeArrays(a: PlainJson | undefined, b: PlainJson | undefined): boolean {
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => numbersClose(num(v), num(b[i])));
}

/** Our `tileMatrix[i]` against TiTiler's `tileMatrices[i]`, field by field. */
function compareMatrix(ref: Obj, ours: Obj, where: string, problems: string[], metersPerUnit: number): void {
  if (ours['identifier'] !== ref['id']) problems.push(`${where}.identifier ${String(ours['identifier'])} vs id ${String(ref['id'])}`);
  // What a TMS 1.0 reader (morecantile's from_v1) derives: scaleDenominator × 0.28 mm ÷ metres per unit.
  const derivedCellSize = (num(ours['scaleDenominator']) * 0.28e-3) / metersPerUnit;
  if (!numbersClose(derivedCellSize, num(ref['cellSize']))) {
    problems.push(`${where}: scaleDenominator ${String(ours['scaleDenominator'])} gives cellSize ${derivedCellSize}, TiTiler's is ${String(ref['cellSize'])}`);
  }
  if (!closeArrays(ours['topLeftCorner'], ref['pointOfOrigin'])) {
    problems.push(`${where}.topLeftCorner ${JSON.stringify(ours['topLeftCorner'])} vs pointOfOrigin ${JSON.stringify(ref['pointOfOrigin'])}`);
  }
  for (const key of ['tileWidth', 'tileHeight', 'matrixWidth', 'matrixHeight']) {
    if (ours[key] !== ref[key]) problems.push(`${where}.${key} ${String(ours[key])} vs ${String(ref[key])}`);
  }
  const refWidths = ref['variableMatrixWidths'];
  if (Array.isArray(refWidths)) {
    const ourWidths = ours['variableMatrixWidths'];
    const pick = (list: PlainJson[]): string => JSON.stringify(list.map((v) => (isObj(v) ? [v['coalesce'], v['minTileRow'], v['maxTileRow']] : null)));
    if (!Array.isArray(ourWidths) || pick(ourWidths) !== pick(refWidths)) problems.push(`${where}.variableMatrixWidths differ`);
  }
}

/** morecantile's `meters_per_unit`: 2πa/360 for a geographic CRS, else the linear unit in metres. */
function metersPerUnit(crs: string): number {
  const srs = srsFrom(crs);
  return srs.isGeographic() ? (2 * Math.PI * Number(srs.getAttrValue('SPHEROID', 1))) / 360 : srs.getLinearUnits().value;
}

function acceptTmsDocument(x: Exchange): string[] {
  const problems: string[] = [];
  expectStatus(x.titiler, 'TiTiler', (s) => s === 200, '200', problems);
  expectStatus(x.tessera, 'tessera', (s) => s === 200, '200', problems);
  sameContentType(x, problems);
  const ref = jsonBody(x.titiler, 'TiTiler', problems);
  const ours = jsonBody(x.tessera, 'tessera', problems);
  if (!isObj(ref) || !isObj(ours)) return problems.length > 0 ? problems : ['bodies are not objects'];
  if (ours['identifier'] !== ref['id']) problems.push(`identifier ${String(ours['identifier'])} vs id ${String(ref['id'])}`);
  if (ours['title'] !== ref['title']) problems.push(`title ${JSON.stringify(ours['title'])} vs ${JSON.stringify(ref['title'])}`);
  const refMatrices = ref['tileMatrices'];
  const ourMatrices = ours['tileMatrix'];
  if (!Array.isArray(refMatrices) || !Array.isArray(ourMatrices)) return [...problems, 'tileMatrices/tileMatrix missing'];
  if (refMatrices.length !== ourMatrices.length) {
    problems.push(`tileMatrix has ${ourMatrices.length} entries, TiTiler's tileMatrices ${refMatrices.length}`);
  }
  const n = Math.min(refMatrices.length, ourMatrices.length);
  for (let i = 0; i < n; i++) {
    const r = refMatrices[i];
    const o = ourMatrices[i];
    if (isObj(r) && isObj(o)) compareMatrix(r, o, `tileMatrix[${i}]`, problems, metersPerUnit(String(ref['crs'])));
    else problems.push(`tileMatrix[${i}] is not an object`);
  }
  return problems;
}

function acceptNztm2000(x: Exchange): string[] {
  const problems: string[] = [];
  expectStatus(x.titiler, 'TiTiler', (s) => s === 422, '422 (unknown to TiTiler 0.18.10)', problems);
  expectStatus(x.tessera, 'tessera', (s) => s === 200, '200', problems);
  const ours = jsonBody(x.tessera, 'tessera', problems);
  if (!isObj(ours)) return problems.length > 0 ? problems : ['tessera body is not an object'];
  if (ours['identifier'] !== 'NZTM2000') problems.push(`identifier ${String(ours['identifier'])}`);
  const matrices = ours['tileMatrix'];
  if (!Array.isArray(matrices) || matrices.length === 0) problems.push('no tileMatrix entries');
  return problems;
}

function acceptTmsIdEnum(x: Exchange): string[] {
  const problems: string[] = [];
  expectStatus(x.titiler, 'TiTiler', (s) => s === 422, '422', problems);
  expectStatus(x.tessera, 'tessera', (s) => s === 422, '422', problems);
  sameContentType(x, problems);
  const first = (body: PlainJson | undefined): Obj | undefined => {
    const detail = isObj(body) ? body['detail'] : undefined;
    const item = Array.isArray(detail) ? detail[0] : undefined;
    return isObj(item) ? item : undefined;
  };
  const ref = first(jsonBody(x.titiler, 'TiTiler', problems));
  const ours = first(jsonBody(x.tessera, 'tessera', problems));
  if (!ref || !ours) return [...problems, 'detail[0] missing'];
  for (const key of ['type', 'loc']) {
    if (JSON.stringify(ours[key]) !== JSON.stringify(ref[key])) {
      problems.push(`detail[0].${key} ${JSON.stringify(ours[key])} vs ${JSON.stringify(ref[key])}`);
    }
  }
  return problems;
}

/** TiTiler answers 500 where tessera answers `ours` with a `{"detail": string}` body. */
function acceptInsteadOf500(x: Exchange, ours: (status: number) => boolean, oursText: string): string[] {
  const problems: string[] = [];
  // If TiTiler ever stops answering 500 here, the case must be compared plainly again.
  expectStatus(x.titiler, 'TiTiler', (s) => s === 500, '500', problems);
  expectStatus(x.tessera, 'tessera', ours, oursText, problems);
  expectDetailString(x.tessera, 'tessera', problems);
  return problems;
}

function acceptClientMistake(x: Exchange): string[] {
  return acceptInsteadOf500(x, (s) => s >= 400 && s < 500, 'a 4xx');
}

function acceptUpstreamFailure(x: Exchange): string[] {
  return acceptInsteadOf500(x, (s) => s >= 400 && s < 600, 'a 4xx or 5xx');
}

function acceptStacItemFromCog(x: Exchange): string[] {
  const problems: string[] = [];
  expectStatus(x.titiler, 'TiTiler', (s) => s === 200, '200', problems);
  expectStatus(x.tessera, 'tessera', (s) => s === 200, '200', problems);
  sameContentType(x, problems);
  if (problems.length > 0) return problems;
  const ignore = ['$.properties.datetime', '$.properties["proj:projjson"]'];
  for (const d of compareJson(parseJson(x.titiler.body), parseJson(x.tessera.body), { normalise: x.normalise, ignore }))
    problems.push(`${d.path}: ${d.message}`);
  const props = (body: PlainJson | undefined): Obj => {
    const p = isObj(body) ? body['properties'] : undefined;
    return isObj(p) ? p : {};
  };
  const theirs = props(jsonBody(x.titiler, 'TiTiler', problems));
  const ours = props(jsonBody(x.tessera, 'tessera', problems));
  const a = theirs['proj:projjson'];
  const b = ours['proj:projjson'];
  if (isObj(a) !== isObj(b)) problems.push(`proj:projjson present in ${isObj(a) ? 'TiTiler' : 'tessera'} only`);
  if (isObj(a) && isObj(b)) {
    for (const key of ['type', 'name']) if (a[key] !== b[key]) problems.push(`proj:projjson.${key}: ${String(a[key])} vs ${String(b[key])}`);
  }
  const dt = ours['datetime'];
  if (typeof theirs['datetime'] === 'string' && (typeof dt !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?Z$/.test(dt)))
    problems.push(`datetime ${String(dt)} is not a UTC ISO date-time`);
  if (theirs['datetime'] === null && dt !== null) problems.push(`datetime ${String(dt)}, TiTiler null`);
  return problems;
}
