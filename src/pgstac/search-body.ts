/**
 * The body of `POST /searches/register` (titiler-pgstac 3.2.0's `RegisterMosaic`: a STAC item-search
 * body, pgSTAC's `PgSTACSearch` model, plus `metadata`), checked and written as titiler-pgstac writes
 * it for pgSTAC's `search_query(search, _metadata => metadata)`.
 *
 * pgSTAC names a search by `md5(search::text || metadata::text)` over the jsonb values (pgSTAC
 * 0.10's `search_hash`), so the same search must reach it as the same JSON values: the model's
 * floats as floats (`[5, 43, 8, 46]` is `[5.0, 43.0, 8.0, 46.0]`), numbers the model leaves alone
 * as the client wrote them (an int stays an int, `1.50` is the float 1.5), fields the model does not
 * know kept, `null` top-level fields dropped (pydantic's `exclude_none`), `filter-lang` always
 * `cql2-json`. The body must therefore be read with pyjson's `pyLoads`. jsonb itself orders the keys.
 *
 * Where pydantic refuses the body titiler-pgstac answers 422, where pgSTAC does 500; tessera
 * answers both 400 with what is wrong (docs/catalogue.md).
 */
import { badRequest } from '../errors.js';
import { PyFloat, pyLoads } from '../pyjson.js';
import { cql2TextToJson } from '../catalog/cql2.js';
import { checkPolicy, POLICY_KEY } from './policy.js';

/** A JSON value as pyLoads reads it. */
type PyValue = unknown;
type PyObject = Record<string, PyValue>;

/** A registered search's two documents, as written to pgSTAC. */
export interface SearchBody {
  /** The item search (pgSTAC's `searches.search`). */
  search: PyObject;
  /** Its metadata (`searches.metadata`): `type` ('mosaic' by default), `bounds`, `minzoom`, `maxzoom`, `name`, `assets`, `defaults`, anything else kept. */
  metadata: PyObject;
}

/** The fields of PgSTACSearch; any other key is kept as it is (the model allows extras). */
const SEARCH_FIELDS = new Set(['collections', 'ids', 'bbox', 'intersects', 'datetime', 'query', 'sortby', 'filter', 'filter-lang']);
const QUERY_OPERATORS = new Set(['eq', 'neq', 'lt', 'lte', 'gt', 'gte']);
const GEOMETRY_TYPES = new Set(['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);

function isObject(v: PyValue): v is PyObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);
}

function invalid(where: string, what: string): Error {
  return badRequest(`Invalid search: ${where}: ${what}`);
}

/** A number as pydantic's lax mode takes one (ints, floats, numeric strings). */
function numberOf(v: PyValue): number | undefined {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) return Number(v);
  return undefined;
}

function floatOf(v: PyValue, where: string): PyFloat {
  const n = numberOf(v);
  if (n === undefined || !Number.isFinite(n)) throw invalid(where, 'expected a number');
  return new PyFloat(n);
}

function intOf(v: PyValue, where: string): number {
  const n = numberOf(v);
  if (n === undefined || !Number.isSafeInteger(n)) throw invalid(where, 'expected a whole number');
  return n;
}

function stringOf(v: PyValue, where: string): string {
  if (typeof v !== 'string') throw invalid(where, 'expected a string');
  return v;
}

function stringList(v: PyValue, where: string): string[] {
  if (!Array.isArray(v)) throw invalid(where, 'expected a list of strings');
  return v.map((s, i) => stringOf(s, `${where}[${i}]`));
}

/** geojson_pydantic's BBox: 4 or 6 floats. */
function bboxOf(v: PyValue, where: string): PyFloat[] {
  if (!Array.isArray(v) || (v.length !== 4 && v.length !== 6)) throw invalid(where, 'a bounding box has 4 or 6 numbers');
  return v.map((n, i) => floatOf(n, `${where}[${i}]`));
}

/** titiler-pgstac's validate_bbox: ordered, and within WGS84's bounds. */
function checkBbox(bbox: readonly PyFloat[], where: string): void {
  const b = bbox.map((f) => f.value);
  const [xmin, ymin, xmax, ymax] = b.length === 4 ? b : [b[0]!, b[1]!, b[3]!, b[4]!];
  if (b.length === 6 && b[5]! < b[2]!) throw invalid(where, 'the maximum elevation must be greater than the minimum elevation');
  if (xmax! < xmin!) throw invalid(where, 'the maximum longitude must be greater than the minimum longitude');
  if (ymax! < ymin!) throw invalid(where, 'the maximum latitude must be greater than the minimum latitude');
  if (xmin! < -180 || ymin! < -90 || xmax! > 180 || ymax! > 90) throw invalid(where, 'a bounding box must be within (-180, -90, 180, 90)');
}

function position(v: PyValue, where: string): PyFloat[] {
  if (!Array.isArray(v) || (v.length !== 2 && v.length !== 3)) throw invalid(where, 'a position has 2 or 3 numbers');
  return v.map((n, i) => floatOf(n, `${where}[${i}]`));
}

function positions(v: PyValue, where: string, min: number): PyFloat[][] {
  if (!Array.isArray(v)) throw invalid(where, 'expected a list of positions');
  if (v.length < min) throw invalid(where, `expected at least ${min} positions`);
  return v.map((p, i) => position(p, `${where}[${i}]`));
}

function ring(v: PyValue, where: string): PyFloat[][] {
  const r = positions(v, where, 4);
  const first = r[0]!.map((f) => f.value);
  const last = r[r.length - 1]!.map((f) => f.value);
  if (first.length !== last.length || first.some((x, i) => x !== last[i])) throw invalid(where, 'a linear ring must start and end at the same position');
  return r;
}

function listOf<T>(v: PyValue, where: string, item: (x: PyValue, where: string) => T): T[] {
  if (!Array.isArray(v)) throw invalid(where, 'expected a list');
  return v.map((x, i) => item(x, `${where}[${i}]`));
}

/** A GeoJSON geometry as geojson_pydantic reads and writes it (floats; `bbox` only when given). */
function geometry(v: PyValue, where: string): PyObject {
  if (!isObject(v) || typeof v['type'] !== 'string' || !GEOMETRY_TYPES.has(v['type'])) {
    throw invalid(where, `expected a GeoJSON geometry (${[...GEOMETRY_TYPES].join(', ')})`);
  }
  const type = v['type'];
  const out: PyObject = { type };
  if (v['bbox'] !== undefined && v['bbox'] !== null) out['bbox'] = bboxOf(v['bbox'], `${where}.bbox`);
  if (type === 'GeometryCollection') {
    out['geometries'] = listOf(v['geometries'], `${where}.geometries`, geometry);
    return out;
  }
  const c = v['coordinates'];
  const at = `${where}.coordinates`;
  switch (type) {
    case 'Point':
      out['coordinates'] = position(c, at);
      break;
    case 'MultiPoint':
      out['coordinates'] = positions(c, at, 0);
      break;
    case 'LineString':
      out['coordinates'] = positions(c, at, 2);
      break;
    case 'MultiLineString':
      out['coordinates'] = listOf(c, at, (l, w) => positions(l, w, 2));
      break;
    case 'Polygon':
      out['coordinates'] = listOf(c, at, ring);
      break;
    default:
      out['coordinates'] = listOf(c, at, (p, w) => listOf(p, w, ring));
  }
  return out;
}

/** The STAC API Query extension: `{property: {operator: value}}`, titiler-pgstac's six operators. */
function queryOf(v: PyValue): PyObject {
  if (!isObject(v)) throw invalid('query', 'expected an object of {property: {operator: value}}');
  const out: PyObject = {};
  for (const [property, ops] of Object.entries(v)) {
    if (!isObject(ops)) throw invalid(`query.${property}`, 'expected an object of {operator: value}');
    for (const op of Object.keys(ops)) {
      if (!QUERY_OPERATORS.has(op)) throw invalid(`query.${property}`, `unknown operator '${op}' (one of ${[...QUERY_OPERATORS].join(', ')})`);
    }
    out[property] = ops;
  }
  return out;
}

/** The Sort extension: `[{field, direction}]`, other keys dropped as the model drops them. */
function sortbyOf(v: PyValue): PyObject[] {
  return listOf(v, 'sortby', (s, where) => {
    if (!isObject(s)) throw invalid(where, 'expected {"field": …, "direction": "asc" | "desc"}');
    const field = stringOf(s['field'], `${where}.field`);
    if (field.length === 0) throw invalid(`${where}.field`, 'must not be empty');
    const direction = s['direction'];
    if (direction !== 'asc' && direction !== 'desc') throw invalid(`${where}.direction`, "expected 'asc' or 'desc'");
    return { field, direction };
  });
}

/** titiler-pgstac's Metadata model, as `model_dump(exclude_none=True)` writes it. */
function metadataOf(v: PyValue): PyObject {
  if (v === undefined || v === null) return { type: 'mosaic' };
  if (!isObject(v)) throw invalid('metadata', 'expected an object');
  const type = v['type'] ?? 'mosaic';
  if (type !== 'mosaic' && type !== 'search') throw invalid('metadata.type', "expected 'mosaic' or 'search'");
  const out: PyObject = { type };
  const known: Record<string, (x: PyValue, where: string) => PyValue> = {
    bounds: bboxOf,
    minzoom: intOf,
    maxzoom: intOf,
    name: stringOf,
    assets: stringList,
    defaults: (x, where) => {
      if (!isObject(x)) throw invalid(where, 'expected an object');
      return x;
    },
  };
  // tessera's own guards: checked here, kept with the rest (as given: pgSTAC's hash is of what was sent).
  if (v[POLICY_KEY] !== undefined && v[POLICY_KEY] !== null) checkPolicy(v[POLICY_KEY], `metadata.${POLICY_KEY}`);
  for (const [key, parse] of Object.entries(known)) {
    const x = v[key];
    if (x !== undefined && x !== null) out[key] = parse(x, `metadata.${key}`);
  }
  for (const [key, x] of Object.entries(v)) {
    if (key === 'type' || key in known || x === null || x === undefined) continue;
    out[key] = x;
  }
  return out;
}

/** Checks a register body (read by pyLoads) and gives the two documents pgSTAC is to store. */
export function parseRegisterBody(body: PyValue): SearchBody {
  if (!isObject(body)) throw badRequest('Invalid search body: expected a JSON object (a STAC item search, with `metadata`)');
  const search: PyObject = {};
  const v = (name: string): PyValue => (body[name] === null ? undefined : body[name]);
  if (v('collections') !== undefined) search['collections'] = stringList(v('collections'), 'collections');
  if (v('ids') !== undefined) search['ids'] = stringList(v('ids'), 'ids');
  if (v('bbox') !== undefined) {
    const bbox = bboxOf(v('bbox'), 'bbox');
    checkBbox(bbox, 'bbox');
    search['bbox'] = bbox;
  }
  if (v('intersects') !== undefined) {
    if (search['bbox'] !== undefined) throw invalid('intersects', 'intersects and bbox parameters are mutually exclusive');
    search['intersects'] = geometry(v('intersects'), 'intersects');
  }
  if (v('datetime') !== undefined) search['datetime'] = stringOf(v('datetime'), 'datetime');
  if (v('query') !== undefined) search['query'] = queryOf(v('query'));
  if (v('sortby') !== undefined) search['sortby'] = sortbyOf(v('sortby'));
  const lang = v('filter-lang');
  if (lang !== undefined && lang !== 'cql2-json' && lang !== 'cql2-text') throw invalid('filter-lang', "expected 'cql2-json' or 'cql2-text'");
  const filter = v('filter');
  if (filter !== undefined) {
    // CQL2-text (a string, `filter-lang` cql2-text or unset) is stored as the CQL2-JSON cql2 writes for
    // it, as titiler-pgstac's collection routes store it; titiler-pgstac's register takes JSON only (422).
    if (typeof filter === 'string' && lang !== 'cql2-json') search['filter'] = cql2TextToJson(filter);
    else if (isObject(filter) && lang !== 'cql2-text') search['filter'] = filter;
    else if (lang === 'cql2-text') throw invalid('filter', 'with filter-lang cql2-text, expected CQL2-text (a string)');
    else throw invalid('filter', 'expected a CQL2-JSON expression (an object), or CQL2-text (a string)');
  }
  search['filter-lang'] = 'cql2-json';
  for (const [key, x] of Object.entries(body)) {
    if (SEARCH_FIELDS.has(key) || key === 'metadata' || x === null || x === undefined) continue;
    search[key] = x;
  }
  return { search, metadata: metadataOf(body['metadata']) };
}

/** The query of titiler-pgstac's collection routes (CollectionIdParams), as the client wrote it. */
export interface CollectionQuery {
  ids?: string;
  bbox?: string;
  datetime?: string;
  query?: string;
  sortby?: string;
  filter?: string;
  filterLang: 'cql2-text' | 'cql2-json';
}

/** An RFC 3339 date-time (pydantic's strict datetime, as stac-pydantic's validate_datetime checks). */
const RFC3339 = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?([Zz]|[+-]\d\d:?\d\d)$/;

/** stac-pydantic's validate_datetime: one date-time, or a range with `..` or nothing for an open end. */
function checkDatetime(text: string): void {
  const parts = text.split('/').map((v) => (v && v !== '..' ? v : undefined));
  const bad = (why: string): Error => invalid('datetime', why);
  if (parts.length > 2) throw bad('too many values, expected {begin}/{end}');
  if (parts.every((p) => p === undefined)) throw bad('at least one of the start or end dates must be given');
  for (const p of parts) if (p !== undefined && (!RFC3339.test(p) || Number.isNaN(Date.parse(p)))) throw bad(`'${p}' is not an RFC 3339 date-time`);
  const [a, b] = parts;
  if (a && b && Date.parse(a) > Date.parse(b)) throw bad('the start is after the end');
}

/** Python's `unquote_plus`. */
function unquotePlus(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw invalid('query', 'not a URL-encoded JSON object');
  }
}

function jsonOf(text: string, where: string): PyValue {
  try {
    return pyLoads(text);
  } catch {
    throw invalid(where, 'not valid JSON');
  }
}

/**
 * The search titiler-pgstac 3.2.0 registers for a collection's routes (`get_collection_id`): the
 * collection, the query's `ids` (comma-separated), `bbox`, `datetime`, `query` (URL-encoded JSON),
 * `sortby` (`-field` descending) and `filter`; metadata naming the collection, its bounds (the bbox,
 * else the collection's), its `item_assets` and its `renders` as defaults. A CQL2-text filter is read
 * as cql2 reads it (catalog/cql2.ts).
 */
export function collectionSearchBody(collectionId: string, q: CollectionQuery, collection: Record<string, unknown>): SearchBody {
  const body: PyObject = { collections: [collectionId] };
  if (q.datetime !== undefined) {
    checkDatetime(q.datetime);
    body['datetime'] = q.datetime;
  }
  if (q.ids) body['ids'] = q.ids.split(',');
  if (q.bbox) {
    const values = q.bbox.split(',').map((v) => numberOf(v));
    if (values.some((v) => v === undefined)) throw invalid('bbox', 'a bounding box is a comma-separated list of numbers');
    body['bbox'] = values.map((v) => new PyFloat(v!));
  }
  if (q.sortby) {
    const sortby: PyObject[] = [];
    for (const part of q.sortby.split(',')) {
      const m = /^([+-]?)(.*)$/s.exec(part)!;
      sortby.push({ field: m[2]!.trim(), direction: m[1] === '-' ? 'desc' : 'asc' });
    }
    if (sortby.length > 0) body['sortby'] = sortby;
  }
  if (q.filter) {
    // cql2's `Expr(text).to_json()` for CQL2-text (and JSON text given as CQL2-text), as titiler-pgstac.
    body['filter'] = q.filterLang === 'cql2-json' ? jsonOf(q.filter, 'filter') : cql2TextToJson(q.filter);
    body['filter-lang'] = 'cql2-json';
  }
  if (q.query) body['query'] = jsonOf(unquotePlus(q.query), 'query');
  const { search } = parseRegisterBody(body);
  const extent = isObject(collection['extent']) ? collection['extent'] : {};
  const spatial = isObject(extent['spatial']) ? extent['spatial'] : {};
  const boxes = spatial['bbox'] ?? [[-180, -90, 180, 90]];
  const metadata: PyObject = {
    type: 'mosaic',
    bounds: search['bbox'] ?? bboxOf(Array.isArray(boxes) ? boxes[0] : undefined, 'the collection bbox'),
    name: `Mosaic for '${collectionId}' Collection`,
  };
  if (isObject(collection['item_assets'])) metadata['assets'] = Object.keys(collection['item_assets']);
  if (isObject(collection['renders'])) {
    const defaults: PyObject = {};
    for (const [name, given] of Object.entries(collection['renders'])) {
      if (!isObject(given)) continue;
      const { title: _title, tilematrixsets: _tms, minmax_zoom: zooms, ...render } = given;
      if (Array.isArray(zooms) && zooms.length === 2) Object.assign(render, { minzoom: zooms[0], maxzoom: zooms[1] });
      defaults[name] = render;
    }
    metadata['defaults'] = defaults;
  }
  // A collection's own guards (docs/catalogue.md): only then does its search differ from titiler-pgstac's.
  const policy = collection[POLICY_KEY];
  if (policy !== undefined && policy !== null) metadata[POLICY_KEY] = checkPolicy(policy, `the collection's ${POLICY_KEY}`) as PyObject;
  return { search, metadata };
}
