/**
 * A registered search over a catalogue in memory, with pgSTAC 0.10's semantics (its
 * `stac_search_to_where`, `cql2_query`, `sort_sqlorderby` and `geometrysearch`, read from its SQL):
 *
 * - `ids`, `collections`; `bbox` or `intersects` (st_intersects with the item's geometry, the
 *   boundary included); `datetime` (`datetime <= end AND end_datetime >= start`, a bare date the
 *   whole day, `..` an open end).
 * - `query` (the Query extension, turned into CQL2 as pgSTAC turns it) or `filter` (CQL2-JSON:
 *   `and`, `or`, `not`, `=`, `<>`, `<`, `<=`, `>`, `>=` and their word forms, `in`, `like`,
 *   `between`, `isNull`, `s_intersects`, `t_intersects`; CQL1 JSON when no `op` is in it), with
 *   SQL's three-valued logic and pgSTAC's typing: a comparison with `datetime`, `start_datetime`
 *   or `end_datetime` reads timestamps, one with `id` or `collection` text, any other with a
 *   number among its operands reads the property as a float, else as text. Any other operator is
 *   a 400 naming it.
 * - `sortby` (default `datetime` descending), then `collection` and `id` in the first key's
 *   direction; columns compare as themselves, properties as text (pgSTAC's `to_text` of an
 *   unregistered queryable), NULLs last ascending and first descending, text in code-point order
 *   (the C.UTF-8 collation of the tests' database).
 *
 * A search is compiled once per catalogue version into each item's rank (its place in the order,
 * or -1), so a tile's lookup is the spatial index's candidates, kept by rank and sorted, then
 * pgSTAC's scan: `scan_limit` rows that meet the area, `items_limit` kept, `exitwhenfull` and
 * `skipcovered` by the area the kept items cover.
 */
import { badRequest } from '../errors.js';
import { PyFloat } from '../pyjson.js';
import { Coverage, boxShape, intersects, isBox, shapeFromGeojson, type Shape } from './geometry.js';
import type { ItemTable } from './items.js';
import { jsonbText } from './jsonb.js';

type Json = unknown;
type Obj = Record<string, Json>;

/** A SQL value: numbers (floats, and timestamps as milliseconds), text, or NULL. */
type Sql = number | string | boolean | null;
type Expr = (i: number) => Sql;
type Pred = (i: number) => boolean | null;

function isObj(v: Json): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);
}

function isNumber(v: Json): boolean {
  return typeof v === 'number' || typeof v === 'bigint' || v instanceof PyFloat;
}

function num(v: Json): number {
  return v instanceof PyFloat ? v.value : Number(v);
}

/** Text of a JSON value as pgSTAC's `to_text` (`->>0` of a scalar, jsonb text of a list or object). */
function toText(v: Json): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (isNumber(v)) return jsonbText(v);
  return jsonbText(v);
}

/** PostgreSQL's float8 input of a text (NULL where it would raise). */
function toFloat(v: Json): number | null {
  if (Array.isArray(v)) return toFloat(v[0]);
  if (isNumber(v)) return num(v);
  if (typeof v !== 'string') return null;
  const t = v.trim();
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return Number(t);
  if (/^[+-]?(infinity|inf)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  return null;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A timestamptz as PostgreSQL reads text in UTC (an instant in milliseconds), or undefined. */
export function parseTimestamp(text: string): number | undefined {
  const t = text.trim();
  if (/^-?infinity$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (DATE_ONLY.test(t)) return Date.parse(`${t}T00:00:00Z`);
  const m = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?$/.exec(t);
  if (!m) return undefined;
  let zone = m[3] ?? 'Z';
  if (/^[+-]\d{2}$/.test(zone)) zone += ':00';
  else if (/^[+-]\d{4}$/.test(zone)) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const [whole, fraction = ''] = m[2]!.split('.');
  const ms = Date.parse(`${m[1]}T${whole}${whole!.length === 5 ? ':00' : ''}${zone.toUpperCase()}`);
  return Number.isNaN(ms) ? undefined : ms + Number(`0.${fraction || '0'}`) * 1000;
}

function toTstz(v: Json): number | null {
  if (typeof v !== 'string') return null;
  return parseTimestamp(v) ?? null;
}

function timestampOrFail(text: string, where: string): number {
  const t = parseTimestamp(text);
  if (t === undefined) {
    if (/^P/i.test(text.trim())) throw badRequest(`Invalid ${where}: durations ('${text}') are not read by the geoparquet catalogue`);
    throw badRequest(`Invalid ${where}: '${text}' is not a timestamp`);
  }
  return t;
}

/** pgSTAC's `parse_dtrange` of the search's `datetime`: [start, end] and whether the end is included. */
function dateRange(v: Json): { start: number; end: number; endIncluded: boolean } {
  const text = typeof v === 'string' ? v : undefined;
  if (text === undefined) throw badRequest('Invalid search: datetime: expected a string');
  const parts = text.split('/');
  if (parts.length === 1) {
    const s = timestampOrFail(parts[0]!, 'datetime');
    if (DATE_ONLY.test(parts[0]!)) return { start: s, end: s + 86_400_000, endIncluded: false };
    return { start: s, end: s, endIncluded: true };
  }
  if (parts.length !== 2) throw badRequest('Invalid search: datetime: Timestamp cannot have more than 2 values');
  const [a, b] = parts as [string, string];
  let endIncluded = true;
  let bump = 0;
  if (DATE_ONLY.test(b)) {
    bump = 86_400_000;
    endIncluded = false;
  }
  if (a === '..' || a === '') return { start: -Infinity, end: timestampOrFail(b, 'datetime') + bump, endIncluded };
  if (b === '..' || b === '') return { start: timestampOrFail(a, 'datetime'), end: Infinity, endIncluded: false };
  const start = timestampOrFail(a, 'datetime');
  const end = timestampOrFail(b, 'datetime') + bump;
  if (endIncluded ? start > end : start >= end) throw badRequest(`Invalid search: datetime: the range '${text}' ends before it starts`);
  return { start, end, endIncluded };
}

/** The column a property name is (pgSTAC's `queryable_column`), after `properties.`. */
function columnOf(name: string): 'id' | 'collection' | 'datetime' | 'end_datetime' | 'geometry' | undefined {
  const n = name.startsWith('properties.') ? name.slice('properties.'.length) : name;
  if (n === 'start_datetime' || n === 'datetime') return 'datetime';
  if (n === 'id' || n === 'collection' || n === 'end_datetime' || n === 'geometry') return n;
  return undefined;
}

function propertyName(name: string): string {
  const n = name.startsWith('properties.') ? name.slice('properties.'.length) : name;
  if (n.trim() === '' || name.trim() === 'properties') throw badRequest('Invalid filter: A property name is required.');
  return n;
}

/** pgSTAC's `cql1_to_cql2`: every key an operator, several an implicit `and`. */
function cql1ToCql2(j: Json): Json {
  if (isObj(j) && 'filter' in j) return cql1ToCql2(j['filter']);
  if (Array.isArray(j)) return j.map(cql1ToCql2);
  if (!isObj(j) || ['property', 'type', 'timestamp', 'interval'].some((k) => k in j)) return j;
  const ops = Object.entries(j).map(([op, value]) => ({ op, args: Array.isArray(value) ? cql1ToCql2(value) : [cql1ToCql2(value)] }));
  if (ops.length === 0) return null;
  return ops.length === 1 ? ops[0] : { op: 'and', args: ops };
}

/** Whether `op` appears anywhere in a filter (pgSTAC's `filter @? '$.**.op'`). */
function hasOp(j: Json): boolean {
  if (Array.isArray(j)) return j.some(hasOp);
  if (!isObj(j)) return false;
  return 'op' in j || Object.values(j).some(hasOp);
}

/** pgSTAC's `query_to_cql2`. */
function queryToCql2(q: Obj): Json {
  const args: Json[] = [];
  for (const [property, ops] of Object.entries(q)) {
    if (isObj(ops)) for (const [op, value] of Object.entries(ops)) args.push({ op, args: [{ property }, value] });
    else args.push({ op: 'eq', args: [{ property }, ops] });
  }
  return { op: 'and', args };
}

const COMPARISONS: Record<string, (c: number) => boolean> = {
  eq: (c) => c === 0,
  '=': (c) => c === 0,
  neq: (c) => c !== 0,
  ne: (c) => c !== 0,
  '!=': (c) => c !== 0,
  '<>': (c) => c !== 0,
  lt: (c) => c < 0,
  '<': (c) => c < 0,
  lte: (c) => c <= 0,
  le: (c) => c <= 0,
  '<=': (c) => c <= 0,
  gt: (c) => c > 0,
  '>': (c) => c > 0,
  gte: (c) => c >= 0,
  ge: (c) => c >= 0,
  '>=': (c) => c >= 0,
};

/** SQL's comparison of two non-NULL values of one type. */
function compareSql(a: Sql, b: Sql): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** SQL LIKE (`%`, `_`, `\` escapes), case-sensitive. */
function likeRegex(pattern: string): RegExp {
  let out = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) out += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (ch === '%') out += '[\\s\\S]*';
    else if (ch === '_') out += '[\\s\\S]';
    else out += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${out}$`, 'u');
}

type Wrapper = 'to_tstz' | 'to_float' | 'to_text' | null;

const SUPPORTED = 'and, or, not, =, <>, <, <=, >, >=, in, like, between, isNull, s_intersects, t_intersects';

function unsupported(op: string): Error {
  return badRequest(`Invalid filter: the operator '${op}' is not supported by the geoparquet catalogue (it reads ${SUPPORTED})`);
}

/** Compiles CQL2 over a table. */
class FilterCompiler {
  constructor(private readonly table: ItemTable) {}

  /** A property's value for item i, raw (a column's own value, else the JSON value). */
  private property(name: string): (i: number) => Json {
    const column = columnOf(name);
    const t = this.table;
    if (column === 'id') return (i) => t.ids[i];
    if (column === 'collection') return (i) => t.collections[i];
    if (column === 'datetime') return (i) => t.datetime[i];
    if (column === 'end_datetime') return (i) => t.endDatetime[i];
    if (column === 'geometry') throw badRequest('Invalid filter: the geometry is compared with s_intersects only');
    const values = t.properties.get(propertyName(name));
    return values ? (i) => values[i] : () => undefined;
  }

  /** A leaf operand under a wrapper (pgSTAC's cql2_query of a property or a literal). */
  private operand(j: Json, wrapper: Wrapper): Expr {
    if (isObj(j) && 'op' in j) {
      const p = this.predicate(j);
      return (i) => p(i);
    }
    if (isObj(j) && 'timestamp' in j) {
      const t = toTstz(j['timestamp']);
      if (t === null) throw badRequest(`Invalid filter: '${String(j['timestamp'])}' is not a timestamp`);
      return () => t;
    }
    if (isObj(j) && 'interval' in j) throw badRequest('Invalid filter: Please use temporal operators when using intervals.');
    if (isObj(j) && 'property' in j) {
      const name = String(j['property']);
      const column = columnOf(name);
      const get = this.property(name);
      if (column === 'datetime' || column === 'end_datetime') return (i) => get(i) as number;
      if (column !== undefined || wrapper === null) return (i) => get(i) as Sql;
      if (wrapper === 'to_float') return (i) => toFloat(get(i));
      if (wrapper === 'to_tstz') return (i) => toTstz(get(i));
      return (i) => toText(get(i));
    }
    let v: Sql;
    if (wrapper === 'to_float') v = toFloat(j);
    else if (wrapper === 'to_tstz') {
      v = toTstz(isNumber(j) ? String(num(j)) : j);
      if (v === null && j !== null) throw badRequest(`Invalid filter: '${toText(j)}' is not a timestamp`);
    } else v = toText(j);
    const value = v;
    return () => value;
  }

  /** The wrapper pgSTAC gives the operands of a node (cql2_query's choice). */
  private wrapperOf(args: Json[]): Wrapper {
    const props = args.filter((a): a is Obj => isObj(a) && 'property' in a).map((a) => String(a['property']));
    if (props.some((p) => columnOf(p) === 'datetime' || columnOf(p) === 'end_datetime')) return 'to_tstz';
    if (props.some((p) => columnOf(p) !== undefined)) return null;
    return args.some(isNumber) ? 'to_float' : 'to_text';
  }

  predicate(j: Json): Pred {
    if (j === null || j === undefined) return () => true;
    if (!isObj(j)) throw badRequest('Invalid filter: expected a CQL2-JSON expression');
    if ('filter' in j) return this.predicate(j['filter']);
    if (typeof j['op'] !== 'string') throw badRequest(`Invalid filter: expected {"op": …, "args": […]}, got ${jsonbText(j)}`);
    const op = j['op'].toLowerCase();
    const given = j['args'];
    if (!Array.isArray(given)) throw badRequest(`Invalid filter: The ${op} operator requires an array of args.`);
    let args: Json[] = given;
    if (op === 't_intersects' || op === 'anyinteracts') return this.temporal(args);
    if (op.startsWith('t_')) throw unsupported(op);
    if (op === 's_intersects' || op === 'intersects') return this.spatial(args);
    if (op.startsWith('s_') || op.startsWith('a_')) throw unsupported(op);
    if (op === 'in') {
      if (!Array.isArray(args[1])) throw badRequest('Invalid filter: The in operator takes a value and an array of values.');
      args = [args[0], ...(args[1] as Json[])];
    }
    if (op === 'between' && args.length !== 3) throw badRequest('Invalid filter: The between operator takes a value, a lower bound and an upper bound.');
    const wrapper = this.wrapperOf(args);
    if (op === 'and' || op === 'or') {
      const parts = (args as Json[]).map((a) => this.predicate(a));
      return op === 'and' ? (i) => and(parts, i) : (i) => or(parts, i);
    }
    if (op === 'not') {
      if (args.length !== 1) throw badRequest('Invalid filter: The not operator was given more than one argument.');
      const p = this.predicate(args[0]);
      return (i) => {
        const v = p(i);
        return v === null ? null : !v;
      };
    }
    const operands = (args as Json[]).map((a) => this.operand(a, wrapper));
    const compare = COMPARISONS[op];
    if (compare) {
      if (operands.length !== 2) throw badRequest(`Invalid filter: The ${op} operator takes two arguments.`);
      const [a, b] = operands as [Expr, Expr];
      return (i) => {
        const x = a(i);
        const y = b(i);
        return x === null || y === null ? null : compare(compareSql(x, y));
      };
    }
    if (op === 'between') {
      const [a, lo, hi] = operands as [Expr, Expr, Expr];
      return (i) => {
        const [x, l, h] = [a(i), lo(i), hi(i)];
        if (x === null || l === null || h === null) return null;
        return compareSql(x, l) >= 0 && compareSql(x, h) <= 0;
      };
    }
    if (op === 'in') {
      const [a, ...list] = operands as [Expr, ...Expr[]];
      return (i) => {
        const x = a(i);
        if (x === null) return null;
        let unknown = false;
        for (const e of list) {
          const y = e(i);
          if (y === null) unknown = true;
          else if (compareSql(x, y) === 0) return true;
        }
        return unknown ? null : false;
      };
    }
    if (op === 'like') {
      if (wrapper !== 'to_text' && wrapper !== null)
        throw badRequest(`Invalid filter: The like operator compares text, but its operand is read with ${wrapper}.`);
      const columns = (args as Json[]).filter((a) => isObj(a) && 'property' in a).map((a) => columnOf(String((a as Obj)['property'])));
      if (columns.some((c) => c !== undefined && c !== 'id' && c !== 'collection'))
        throw badRequest('Invalid filter: The like operator compares text, but its operand is not a text column.');
      if (operands.length !== 2) throw badRequest('Invalid filter: The like operator takes two arguments.');
      const [a, p] = operands as [Expr, Expr];
      const patterns = new Map<string, RegExp>();
      return (i) => {
        const x = a(i);
        const y = p(i);
        if (x === null || y === null) return null;
        let re = patterns.get(String(y));
        if (!re) {
          re = likeRegex(String(y));
          patterns.set(String(y), re);
        }
        return re.test(String(x));
      };
    }
    if (op === 'isnull') {
      if (operands.length !== 1) throw badRequest('Invalid filter: The isNull operator takes one argument.');
      const [a] = operands as [Expr];
      return (i) => a(i) === null;
    }
    throw unsupported(op);
  }

  /** s_intersects: the item's geometry and the second operand (GeoJSON or a bbox), as pgSTAC's spatial_op_query. */
  private spatial(args: Json[]): Pred {
    const g = args[1];
    let shape: Shape;
    if (isObj(g) && 'type' in g && ('coordinates' in g || 'geometries' in g)) shape = shapeFromGeojson(g);
    else if (Array.isArray(g) && (g.length === 4 || g.length === 6)) {
      const b = g.map(num);
      shape = boxShape(b.length === 4 ? b : [b[0]!, b[1]!, b[3]!, b[4]!]);
    } else throw badRequest(`Invalid filter: Spatial operand ${jsonbText(g)} is not a GeoJSON geometry or a bbox.`);
    const t = this.table;
    return (i) => {
      const e = t.envelopes;
      if (e[i * 4]! > shape.bbox[2] || e[i * 4 + 2]! < shape.bbox[0] || e[i * 4 + 1]! > shape.bbox[3] || e[i * 4 + 3]! < shape.bbox[1]) return false;
      return intersects(shape, t.shape(i));
    };
  }

  /** One operand of a temporal operator as [low, high] per item (pgSTAC's temporal_operand). */
  private temporalOperand(j: Json, inside = false): (i: number) => [number | null, number | null] {
    if (isObj(j) && typeof j['property'] === 'string') {
      const column = columnOf(j['property']);
      if (column === 'datetime' || column === 'end_datetime') {
        const get = this.property(j['property']);
        return (i) => [get(i) as number, get(i) as number];
      }
      if (column !== undefined) throw badRequest(`Invalid filter: Property ${j['property']} is not temporal.`);
      const get = this.property(j['property']);
      return (i) => {
        const t = toTstz(get(i));
        return [t, t];
      };
    }
    let ends: Json[] | undefined;
    if (isObj(j) && 'interval' in j) ends = j['interval'] as Json[];
    else if (Array.isArray(j)) ends = j;
    else if (typeof j === 'string' && j.includes('/')) ends = j.split('/');
    if (ends !== undefined) {
      if (inside) throw badRequest('Invalid filter: An interval end must be a timestamp, a date or a property.');
      if (!Array.isArray(ends) || ends.length !== 2) throw badRequest(`Invalid filter: Temporal interval ${jsonbText(j)} must have exactly two ends.`);
      const open = (e: Json): boolean => e === '..' || e === '';
      if (ends.some((e) => typeof e === 'string' && /^P/i.test(e)))
        throw badRequest('Invalid filter: durations in intervals are not read by the geoparquet catalogue');
      const lo = open(ends[0]) ? () => [-Infinity, null] as [number, null] : this.temporalOperand(ends[0], true);
      const hi = open(ends[1]) ? () => [null, Infinity] as [null, number] : this.temporalOperand(ends[1], true);
      return (i) => [lo(i)[0], hi(i)[1]];
    }
    if ((typeof j === 'string' && DATE_ONLY.test(j)) || (isObj(j) && typeof j['date'] === 'string')) {
      const day = Date.parse(`${typeof j === 'string' ? j : (j as Obj)['date']}T00:00:00Z`);
      if (Number.isNaN(day)) throw badRequest(`Invalid filter: ${jsonbText(j)} is not a date`);
      return () => [day, day + 86_400_000 - 0.001];
    }
    const s = typeof j === 'string' ? j : isObj(j) && typeof j['timestamp'] === 'string' ? j['timestamp'] : undefined;
    if (s === undefined) throw badRequest(`Invalid filter: Temporal operand ${jsonbText(j)} is not a timestamp, a date, an interval or a property.`);
    const t = timestampOrFail(s, 'filter');
    return () => [t, t];
  }

  private temporal(args: Json[]): Pred {
    if (args[0] === undefined || args[1] === undefined) throw badRequest('Invalid filter: Temporal operator t_intersects requires two operands.');
    const l = this.temporalOperand(args[0]);
    const r = this.temporalOperand(args[1]);
    return (i) => {
      const [ll, lh] = l(i);
      const [rl, rh] = r(i);
      if (ll === null || lh === null || rl === null || rh === null) return null;
      return ll <= rh && lh >= rl;
    };
  }
}

function and(parts: Pred[], i: number): boolean | null {
  let unknown = false;
  for (const p of parts) {
    const v = p(i);
    if (v === false) return false;
    if (v === null) unknown = true;
  }
  return unknown ? null : true;
}

function or(parts: Pred[], i: number): boolean | null {
  let unknown = false;
  for (const p of parts) {
    const v = p(i);
    if (v === true) return true;
    if (v === null) unknown = true;
  }
  return unknown ? null : false;
}

/** A sort key: a column or a property read as text, ascending or descending. */
interface SortKey {
  field: string;
  descending: boolean;
}

/** pgSTAC's sortby_with_tiebreakers: the search's sortby (default datetime desc), then collection and id in the first direction. */
function sortKeys(search: Obj): SortKey[] {
  const given = search['sortby'];
  let sort: Obj[] = Array.isArray(given) && given.length > 0 ? (given as Obj[]) : isObj(given) ? [given] : [{ field: 'datetime', direction: 'desc' }];
  sort = sort.map((s) => {
    if (!isObj(s) || typeof s['field'] !== 'string' || propertyName(s['field']).trim() === '') {
      throw badRequest('Invalid search: sortby: must be an array of {"field": text, "direction": text} objects');
    }
    return s;
  });
  const dir = (d: Json): boolean => {
    const text = typeof d === 'string' ? d.trim() : '';
    if (text !== '' && !/^(asc|desc)(ending)?$/i.test(text)) throw badRequest(`Invalid search: sortby direction ${String(d)}: must be asc or desc`);
    return /^desc/i.test(text);
  };
  const keys = sort.map((s) => ({ field: String(s['field']), descending: dir(s['direction']) }));
  for (const tie of ['collection', 'id']) if (!sort.some((s) => s['field'] === tie)) keys.push({ field: tie, descending: keys[0]!.descending });
  return keys;
}

/** pgSTAC's `orderby` text of a search (its `searches.orderby`). */
export function orderbyText(search: Obj): string {
  return sortKeys(search)
    .map(({ field, descending }) => {
      const column = columnOf(field);
      const key = column ?? `to_text(content->'properties'->'${propertyName(field).replace(/'/g, "''")}')`;
      return `${key} ${descending ? 'DESC' : 'ASC'}`;
    })
    .join(', ');
}

/** A search compiled over one table: the rank of each item in the search's order, -1 where it does not match. */
export interface CompiledSearch {
  rank: Int32Array;
  /** The items in the search's order (order[rank[i]] === i). */
  order: Int32Array;
  matched: number;
}

/** Compiles `search` (checking it: a 400 for anything pgSTAC refuses or tessera does not read). */
function searchPredicate(search: Obj, table: ItemTable): Pred {
  const parts: Pred[] = [];
  const compiler = new FilterCompiler(table);
  if (search['ids'] !== undefined) {
    const ids = new Set((search['ids'] as Json[]).map(String));
    parts.push((i) => ids.has(table.ids[i]!));
  }
  if (search['collections'] !== undefined) {
    const collections = new Set((search['collections'] as Json[]).map(String));
    parts.push((i) => collections.has(table.collections[i]!));
  }
  if (search['datetime'] !== undefined) {
    const { start, end, endIncluded } = dateRange(search['datetime']);
    parts.push((i) => (endIncluded ? table.datetime[i]! <= end : table.datetime[i]! < end) && table.endDatetime[i]! >= start);
  }
  const geometry = search['intersects'] ?? search['geometry'];
  let area: Shape | undefined;
  if (geometry !== undefined) area = shapeFromGeojson(geometry);
  else if (Array.isArray(search['bbox'])) {
    const b = (search['bbox'] as Json[]).map(num);
    area = boxShape(b.length === 6 ? [b[0]!, b[1]!, b[3]!, b[4]!] : b);
  }
  if (area) {
    const a = area;
    parts.push((i) => intersects(a, table.shape(i)));
  }
  if (search['query'] !== undefined && search['filter'] !== undefined) throw badRequest('Invalid search: Can only use either query or filter at one time.');
  let filter = search['filter'];
  if (search['query'] !== undefined) filter = queryToCql2(search['query'] as Obj);
  else if (filter !== undefined && !hasOp(filter)) filter = cql1ToCql2(filter);
  if (filter !== undefined && filter !== null) parts.push(compiler.predicate(filter));
  return (i) => and(parts, i);
}

/** The value of a sort key for item i, and how two compare (NULLs last ascending, first descending). */
function sortValue(field: string, table: ItemTable): (i: number) => Sql {
  const column = columnOf(field);
  if (column === 'id') return (i) => table.ids[i]!;
  if (column === 'collection') return (i) => table.collections[i]!;
  if (column === 'datetime') return (i) => table.datetime[i]!;
  if (column === 'end_datetime') return (i) => table.endDatetime[i]!;
  if (column === 'geometry') return () => null;
  const values = table.properties.get(propertyName(field));
  return values ? (i) => toText(values[i]) : () => null;
}

export function compileSearch(search: Obj, table: ItemTable): CompiledSearch {
  const keep = searchPredicate(search, table);
  const keys = sortKeys(search).map((k) => ({ value: sortValue(k.field, table), descending: k.descending }));
  const matches: number[] = [];
  for (let i = 0; i < table.count; i++) if (keep(i) === true) matches.push(i);
  const columns = keys.map((k) => matches.map((i) => k.value(i)));
  const order = matches.map((_, j) => j);
  order.sort((a, b) => {
    for (let k = 0; k < keys.length; k++) {
      const x = columns[k]![a]!;
      const y = columns[k]![b]!;
      if (x === y) continue;
      const descending = keys[k]!.descending;
      // PostgreSQL: NULL is larger than any value (last ascending, first descending).
      if (x === null) return descending ? -1 : 1;
      if (y === null) return descending ? 1 : -1;
      const c = compareSql(x, y);
      if (c !== 0) return descending ? -c : c;
    }
    return 0;
  });
  const rank = new Int32Array(table.count).fill(-1);
  const byRank = new Int32Array(order.length);
  order.forEach((j, r) => {
    rank[matches[j]!] = r;
    byRank[r] = matches[j]!;
  });
  return { rank, order: byRank, matched: matches.length };
}

export interface ScanLimits {
  scanLimit: number;
  itemsLimit: number;
  timeLimitSeconds: number;
  exitWhenFull: boolean;
  skipCovered: boolean;
}

/**
 * pgSTAC's `geometrysearch` over a compiled search: the items meeting `area`, in the search's
 * order, at most `scanLimit` of them looked at, `itemsLimit` kept; with `skipCovered` an item
 * adding nothing to what the kept ones cover is left out, with `exitWhenFull` the scan stops once
 * they cover the area (both off for an area that is not a polygon).
 */
export function scan(compiled: CompiledSearch, table: ItemTable, area: Shape, limits: ScanLimits): number[] {
  const started = performance.now();
  const [w, s, e, n] = area.bbox;
  // The candidates' ranks, sorted as numbers (a typed array sorts natively, without a comparator).
  const found = table.candidates(w, s, e, n);
  const ranks = new Int32Array(found.length);
  let kept = 0;
  for (const i of found) {
    const r = compiled.rank[i]!;
    if (r >= 0) ranks[kept++] = r;
  }
  const sorted = ranks.subarray(0, kept).sort();
  const polygonal = area.polygons.length > 0 && area.points.length === 0 && area.lines.length === 0;
  const skipCovered = polygonal && limits.skipCovered;
  const exitWhenFull = polygonal && (limits.exitWhenFull || skipCovered);
  const coverage = exitWhenFull ? new Coverage(area) : undefined;
  const out: number[] = [];
  let counter = 1;
  let scanned = 1;
  let rows = 0;
  // A rectangle over items that are their rectangles (most): envelopes alone, no shapes made.
  const areaBox = isBox(area);
  const env = table.envelopes;
  for (const r of sorted) {
    const i = compiled.order[r]!;
    const box = areaBox && table.isBoxItem(i);
    if (box) {
      if (env[i * 4]! > e || env[i * 4 + 2]! < w || env[i * 4 + 1]! > n || env[i * 4 + 3]! < s) continue;
    } else if (!intersects(area, table.shape(i))) continue;
    if (++rows > limits.scanLimit) break;
    if (coverage) {
      const grew = box ? coverage.addBox(env[i * 4]!, env[i * 4 + 1]!, env[i * 4 + 2]!, env[i * 4 + 3]!) : coverage.add(table.shape(i));
      if (skipCovered && !grew) {
        scanned++;
        continue;
      }
    }
    out.push(i);
    if (counter >= limits.itemsLimit || scanned > limits.scanLimit || (performance.now() - started) / 1000 > limits.timeLimitSeconds || coverage?.full()) {
      break;
    }
    counter++;
    scanned++;
  }
  return out;
}
