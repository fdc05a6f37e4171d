/**
 * CQL2 filters as a catalogue is given them: CQL2-text read into CQL2-JSON, and CQL2-JSON put in
 * canonical form, both exactly as cql2 0.6.0 (cql2-rs, the library titiler-pgstac 3.2.0 calls as
 * `Expr(text).to_json()`) writes them. pgSTAC names a registered search by a hash of its JSON, so a
 * filter must come out value for value as cql2 writes it: every number a float, operators in the
 * spelling the CQL2-JSON schema defines (`t_metBy`, `isNull`; `ST_Intersects` → `s_intersects`;
 * a function CQL2 does not define keeps the case it was written in), `and`/`or` chains flat,
 * timestamps canonical (UTC, `Z`, no trailing zero fraction), WKT geometries as GeoJSON.
 *
 * No npm package reads CQL2 soundly (the WebAssembly build of cql2-rs on npm is a 0.5 release
 * candidate that drops trailing input, Z ordinates and one-element arrays, and traps on deep
 * nesting), so this is a recursive-descent reading of cql2 0.6.0's grammar (src/cql2.pest) with its
 * Pratt precedences (src/parser.rs), checked against cql2 0.6.0 itself by test/parity/cql2.test.ts.
 * Bounded before and while it works: MAX_FILTER_CHARS of text, MAX_DEPTH of nesting. cql2's
 * JSON-schema validation (`validate()`) is not run: it takes exponential time in the nesting
 * (seconds at ten levels); what the schema refuses pgSTAC refuses when it reads the filter.
 *
 * Kept apart from any one catalogue (pgSTAC, stac-geoparquet …): it knows only CQL2.
 */
import { badRequest } from '../errors.js';
import { PyFloat } from '../pyjson.js';

/** Characters of CQL2-text read at most (a long polygon fits; the query string bounds it anyway). */
export const MAX_FILTER_CHARS = 16_384;
/** Nesting (parentheses, function calls, prefix operators, right-associative chains) read at most. */
export const MAX_DEPTH = 64;

/** A CQL2-JSON value as pyjson writes it: numbers as PyFloat. */
export type Cql2Value = string | boolean | null | PyFloat | Cql2Value[] | { [key: string]: Cql2Value };
type Cql2Object = { [key: string]: Cql2Value };

const SPATIAL = ['s_equals', 's_intersects', 's_disjoint', 's_touches', 's_within', 's_overlaps', 's_crosses', 's_contains'];
const TEMPORAL = [
  't_before',
  't_after',
  't_meets',
  't_metBy',
  't_overlaps',
  't_overlappedBy',
  't_starts',
  't_startedBy',
  't_during',
  't_contains',
  't_finishes',
  't_finishedBy',
  't_equals',
  't_disjoint',
  't_intersects',
];
const ARRAY_OPS = ['a_equals', 'a_contains', 'a_containedBy', 'a_overlaps'];
/** Every operator the CQL2-JSON schema defines, in its spelling (cql2's `canonical_ops`). */
const CANONICAL = new Map(
  [
    'and',
    'or',
    '=',
    '<>',
    '>',
    '>=',
    '<',
    '<=',
    ...SPATIAL,
    ...TEMPORAL,
    '+',
    '-',
    '*',
    '/',
    '%',
    '^',
    'div',
    ...ARRAY_OPS,
    'not',
    'like',
    'between',
    'in',
    'isNull',
    'casei',
    'accenti',
  ].map((op) => [op.toLowerCase(), op]),
);
/** Other spellings of defined operators (cql2's ALIASES). */
const ALIASES = new Map([
  ['!=', '<>'],
  ...SPATIAL.map((op): [string, string] => [`st_${op.slice(2)}`, op]),
  ['intersects', 's_intersects'],
  ['anyinteracts', 't_intersects'],
]);

/** cql2's `canonical_op`: a defined operator in the schema's spelling, any other name as written. */
function canonicalOp(name: string): string {
  const aliased = ALIASES.get(name.toLowerCase()) ?? name;
  return CANONICAL.get(aliased.toLowerCase()) ?? aliased;
}

const isObject = (v: Cql2Value | undefined): v is Cql2Object => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);

function invalid(why: string): Error {
  return badRequest(`Invalid CQL2 filter: ${why}`);
}

// ---- Timestamps -------------------------------------------------------------------------------

const INSTANT = /^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)$/;

/**
 * cql2's `canonical_timestamp`: a literal with a time names an instant, written as jiff writes one
 * (UTC, `Z`, the fraction without trailing zeros); a date, a leap second or what is not an
 * RFC 3339 instant stays as written.
 */
function canonicalTimestamp(text: string): string {
  if (!/[T ]/.test(text)) return text;
  const m = INSTANT.exec(text);
  if (!m || m[6] === '60') return text;
  const [, y, mo, d, h, mi, s, fraction, zone] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  if (date.getUTCFullYear() !== Number(y) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59) {
    return text;
  }
  if (zone!.toUpperCase() !== 'Z') {
    const sign = zone![0] === '-' ? -1 : 1;
    const minutes = Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6));
    date.setTime(date.getTime() - sign * minutes * 60_000);
  }
  const frac = (fraction ?? '').replace(/0+$/, '');
  return `${date.toISOString().slice(0, 19)}${frac ? `.${frac}` : ''}Z`;
}

function normalizeInstant(v: Cql2Value): Cql2Value {
  return typeof v === 'string' ? canonicalTimestamp(v) : normalize(v);
}

/** cql2's `normalize`: canonical operator names, flat and/or chains, canonical instants. */
function normalize(v: Cql2Value): Cql2Value {
  if (Array.isArray(v)) return v.map(normalize);
  if (!isObject(v)) return v;
  if ('op' in v) {
    const op = canonicalOp(v['op'] as string);
    const args = (v['args'] as Cql2Value[]).map(normalize);
    if (op !== 'and' && op !== 'or') return { op, args };
    return { op, args: args.flatMap((a) => (isObject(a) && a['op'] === op ? (a['args'] as Cql2Value[]) : [a])) };
  }
  if ('timestamp' in v) return { timestamp: normalizeInstant(v['timestamp']!) };
  if ('interval' in v) return { interval: (v['interval'] as Cql2Value[]).map(normalizeInstant) };
  return v;
}

// ---- CQL2-JSON --------------------------------------------------------------------------------

const GEOMETRY_TYPES = new Set(['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);

/** A JSON number (or PyFloat) as cql2 reads it: a float. */
function jsonFloat(v: unknown): PyFloat | undefined {
  if (v instanceof PyFloat) return v;
  if (typeof v === 'number') return new PyFloat(v);
  if (typeof v === 'bigint') return new PyFloat(Number(v));
  return undefined;
}

function jsonCoordinates(v: unknown, depth: number): Cql2Value {
  if (depth > MAX_DEPTH) throw invalid(`nested deeper than ${MAX_DEPTH} levels`);
  if (!Array.isArray(v)) {
    const f = jsonFloat(v);
    if (!f) throw invalid('a geometry’s coordinates are numbers');
    return f;
  }
  return v.map((x) => jsonCoordinates(x, depth + 1));
}

/** One CQL2-JSON expression read as cql2's `Expr` reads it (its untagged variants, in their order). */
function readJson(v: unknown, depth: number): Cql2Value {
  if (depth > MAX_DEPTH) throw invalid(`nested deeper than ${MAX_DEPTH} levels`);
  const f = jsonFloat(v);
  if (f) return f;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map((x) => readJson(x, depth + 1));
  if (typeof v !== 'object') throw invalid(`${String(v)} is not a CQL2 expression`);
  const o = v as Record<string, unknown>;
  const list = (x: unknown, what: string): Cql2Value[] => {
    if (!Array.isArray(x)) throw invalid(`${what} takes a list`);
    return x.map((a) => readJson(a, depth + 1));
  };
  if (typeof o['op'] === 'string' && 'args' in o) return { op: o['op'], args: list(o['args'], `"${o['op']}"`) };
  if ('interval' in o) return { interval: list(o['interval'], 'an interval') };
  if ('timestamp' in o) return { timestamp: readJson(o['timestamp'], depth + 1) };
  if ('date' in o) return { date: readJson(o['date'], depth + 1) };
  if (typeof o['property'] === 'string') return { property: o['property'] };
  if ('bbox' in o) return { bbox: list(o['bbox'], 'a bbox') };
  if (typeof o['type'] === 'string' && GEOMETRY_TYPES.has(o['type'])) {
    if (o['type'] === 'GeometryCollection') {
      if (!Array.isArray(o['geometries'])) throw invalid('a GeometryCollection has `geometries`');
      return { type: o['type'], geometries: o['geometries'].map((g) => readJson(g, depth + 1)) };
    }
    return { type: o['type'], coordinates: jsonCoordinates(o['coordinates'], depth + 1) };
  }
  throw invalid(`${JSON.stringify(Object.keys(o))} is not a CQL2 expression (an op with args, a property, a literal, a geometry …)`);
}

/** A CQL2-JSON document (pyLoads' values) as cql2 0.6.0 writes it back: `Expr(json).to_json()`. */
function canonicalCql2Json(value: unknown): Cql2Value {
  return normalize(readJson(value, 0));
}

// ---- CQL2-text --------------------------------------------------------------------------------

/** Unicode letters and numbers (pest's ALPHABETIC, NUMBER) and cql2's name characters. */
const NAME_START = /[\p{Alphabetic}]/u;
const NAME_CHAR = /[\p{Alphabetic}\p{N}_.:]/u;
/** pest's WHITESPACE in cql2's grammar: Unicode separators, \n, \r, \t. */
const SPACE = /[\p{Z}\n\r\t]/u;

/** Pratt binding powers (cql2's PRATT_PARSER, lowest first; pest gives each level 10). */
const Bp = {
  Or: 10,
  And: 20,
  Not: 30,
  Eq: 40,
  Cmp: 50,
  Like: 60,
  In: 70,
  Postfix: 80,
  Sum: 90,
  Product: 100,
  Power: 110,
  Negative: 120,
} as const;

type Infix = { kind: 'infix'; op: string; bp: number; right: boolean; not: boolean };
type Token =
  | { kind: 'primary'; value: Cql2Value }
  | { kind: 'prefix'; op: 'not' | 'negative' }
  | Infix
  | { kind: 'postfix'; op: 'isNull'; not: boolean }
  | { kind: 'postfix'; op: 'between'; not: boolean; low: Cql2Value; high: Cql2Value };

/** Geometry keywords, longest first so MULTIPOINT is not read as POINT. */
const GEOMETRY_WORDS = ['GEOMETRYCOLLECTION', 'MULTILINESTRING', 'MULTIPOLYGON', 'MULTIPOINT', 'LINESTRING', 'POLYGON', 'POINT'];
const GEOJSON_TYPE: Record<string, string> = {
  POINT: 'Point',
  LINESTRING: 'LineString',
  POLYGON: 'Polygon',
  MULTIPOINT: 'MultiPoint',
  MULTILINESTRING: 'MultiLineString',
  MULTIPOLYGON: 'MultiPolygon',
};

class Cql2TextReader {
  private at = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  /** ExprRoot: the whole text is one expression. */
  read(): Cql2Value {
    const value = this.expr();
    this.space();
    if (this.at < this.text.length) this.fail('expected an operator or the end of the filter');
    return value;
  }

  private fail(why: string): never {
    const shown = this.text.slice(this.at, this.at + 24);
    throw invalid(`${why} at character ${this.at + 1}${shown ? ` (“${shown}”)` : ' (the end)'}`);
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) throw invalid(`nested deeper than ${MAX_DEPTH} levels`);
  }

  private leave(): void {
    this.depth--;
  }

  /** What Pratt's recursion counts against the same bound. */
  private readonly nesting = { enter: () => this.enter(), leave: () => this.leave() };

  private space(): void {
    while (this.at < this.text.length && SPACE.test(this.text[this.at]!)) this.at++;
  }

  /** A literal (case-insensitive) at the cursor; with `word`, not followed by a name character. */
  private peekWord(word: string, wholeWord = false): boolean {
    const end = this.at + word.length;
    if (this.text.slice(this.at, end).toLowerCase() !== word.toLowerCase()) return false;
    return !wholeWord || end >= this.text.length || !NAME_CHAR.test(this.text[end]!);
  }

  private eat(word: string, wholeWord = false): boolean {
    this.space();
    if (!this.peekWord(word, wholeWord)) return false;
    this.at += word.length;
    return true;
  }

  /** Tries `read`, putting the cursor back when it fails (a PEG's ordered choice). */
  private attempt<T>(read: () => T | undefined): T | undefined {
    const [at, depth] = [this.at, this.depth];
    try {
      const out = read();
      if (out === undefined) [this.at, this.depth] = [at, depth];
      return out;
    } catch (err) {
      if (err instanceof Cql2Backtrack) {
        [this.at, this.depth] = [at, depth];
        return undefined;
      }
      throw err;
    }
  }

  // Expr = Negative* ExprAtomValue (InfixOp Negative* ExprAtomValue)*, then Pratt's precedence.
  private expr(): Cql2Value {
    this.enter();
    const tokens: Token[] = [];
    for (;;) {
      this.operand(tokens);
      const op = this.attempt(() => this.infix());
      if (!op) break;
      tokens.push(op);
    }
    const pratt = new Pratt(tokens, this.nesting);
    const value = pratt.expr(0);
    this.depth--;
    return value;
  }

  /** Negative* UnaryNot* AtomicExpr (IsNullPostfix | BetweenPostfix)? */
  private operand(tokens: Token[]): void {
    while (this.eat('-')) tokens.push({ kind: 'prefix', op: 'negative' });
    while (this.eat('not', true)) tokens.push({ kind: 'prefix', op: 'not' });
    tokens.push({ kind: 'primary', value: this.atomic() });
    const postfix = this.attempt(() => this.isNull()) ?? this.attempt(() => this.between());
    if (postfix) tokens.push(postfix);
  }

  private isNull(): Token | undefined {
    if (!this.eat('is')) return undefined;
    const not = this.eat('not', true);
    if (!this.eat('null')) return undefined;
    return { kind: 'postfix', op: 'isNull', not };
  }

  private between(): Token | undefined {
    const not = this.eat('not', true);
    if (!this.eat('between')) return undefined;
    const low = this.betweenOperand();
    if (!this.eat('and')) this.fail('expected AND between the bounds of BETWEEN');
    const high = this.betweenOperand();
    return { kind: 'postfix', op: 'between', not, low, high };
  }

  /** BetweenOperand: an arithmetic expression (no AND, OR or comparison). */
  private betweenOperand(): Cql2Value {
    this.enter();
    const tokens: Token[] = [];
    for (;;) {
      while (this.eat('-')) tokens.push({ kind: 'prefix', op: 'negative' });
      tokens.push({ kind: 'primary', value: this.atomic() });
      const op = this.attempt(() => this.arithmetic());
      if (!op) break;
      tokens.push(op);
    }
    const value = new Pratt(tokens, this.nesting).expr(0);
    this.depth--;
    return value;
  }

  private arithmetic(): Infix | undefined {
    this.space();
    const c = this.text[this.at];
    const infix = (op: string, bp: number, length = 1): Infix => {
      this.at += length;
      return { kind: 'infix', op, bp, right: false, not: false };
    };
    if (c === '+') return infix('+', Bp.Sum);
    if (c === '-') return infix('-', Bp.Sum);
    if (c === '*') return infix('*', Bp.Product);
    if (c === '/') return infix('/', Bp.Product);
    if (c === '%') return infix('%', Bp.Product);
    if (c === '^') return infix('^', Bp.Power);
    if (this.peekWord('div')) return infix('div', Bp.Product, 3);
    return undefined;
  }

  /** ExprInfixOp: arithmetic, comparison (NotEq | GtEq | Gt | LtEq | Lt | Eq | In | Like), And, Or. */
  private infix(): Infix | undefined {
    const arithmetic = this.arithmetic();
    if (arithmetic) return arithmetic;
    const op = (symbol: string, bp: number, right = true): Infix | undefined => {
      if (!this.eat(symbol)) return undefined;
      return { kind: 'infix', op: symbol.toLowerCase(), bp, right, not: false };
    };
    const negatable = (word: string, bp: number, right: boolean): Infix | undefined =>
      this.attempt(() => {
        const not = this.eat('not', true);
        if (!this.eat(word)) return undefined;
        return { kind: 'infix', op: word, bp, right, not };
      });
    return (
      op('<>', Bp.Cmp) ??
      op('!=', Bp.Cmp) ??
      op('>=', Bp.Cmp) ??
      op('>', Bp.Cmp) ??
      op('<=', Bp.Cmp) ??
      op('<', Bp.Cmp) ??
      op('=', Bp.Eq) ??
      negatable('in', Bp.In, false) ??
      negatable('like', Bp.Like, true) ??
      op('and', Bp.And, false) ??
      op('or', Bp.Or, false)
    );
  }

  /** AtomicExpr = Literal | Function | Identifier | ExpressionInParentheses | Array */
  private atomic(): Cql2Value {
    this.space();
    const literal = this.attempt(() => this.literal());
    if (literal !== undefined) return literal;
    const fn = this.attempt(() => this.functionCall());
    if (fn !== undefined) return fn;
    const name = this.identifier();
    if (name !== undefined) return { property: name };
    if (this.eat('(')) {
      this.enter();
      const first = this.expr();
      const items = [first];
      while (this.eat(',')) items.push(this.expr());
      if (!this.eat(')')) this.fail('expected “)”');
      this.depth--;
      // ExpressionInParentheses before Array: one element in parentheses is just that element.
      return items.length === 1 ? first : items;
    }
    this.fail('expected a property, a literal, a function or “(”');
  }

  /** Literal = GEOMETRY | True | False | Null | Double | DECIMAL | SingleQuotedString */
  private literal(): Cql2Value | undefined {
    const geometry = this.attempt(() => this.geometry(true));
    if (geometry !== undefined) return geometry;
    if (this.eat('true', true)) return true;
    if (this.eat('false', true)) return false;
    if (this.eat('null', true)) return null;
    const number = this.number(true);
    if (number !== undefined) return number;
    if (this.text[this.at] === "'") return this.quoted("'", 'a string');
    return undefined;
  }

  /** The text between the quote at `this.at` and the one closing it, a doubled quote standing for one. */
  private quoted(quote: string, what: string): string {
    let i = this.at + 1;
    let out = '';
    for (;;) {
      if (i >= this.text.length) this.fail(`${what} is not closed`);
      if (this.text[i] === quote) {
        if (this.text[i + 1] !== quote) break;
        out += quote;
        i += 2;
        continue;
      }
      out += this.text[i];
      i++;
    }
    this.at = i + 1;
    return out;
  }

  /** Double | DECIMAL (`exponent`), or DECIMAL alone: Integer ("." digit*)? (e Integer)? */
  private number(exponent: boolean): PyFloat | undefined {
    const m = (exponent ? /^[+-]?\d+(\.\d*)?([eE][+-]?\d+)?/ : /^[+-]?\d+(\.\d*)?/).exec(this.text.slice(this.at, this.at + 400));
    if (!m) return undefined;
    const value = Number(m[0].endsWith('.') ? m[0].slice(0, -1) : m[0].replace(/\.(?=[eE])/, ''));
    if (!Number.isFinite(value)) this.fail('a number out of range');
    this.at += m[0].length;
    return new PyFloat(value);
  }

  /** Identifier = ALPHABETIC NameChar* | "…" (a doubled quote is one). */
  private identifier(): string | undefined {
    this.space();
    const c = this.text[this.at];
    if (c === '"') return this.quoted('"', 'a quoted name');
    if (c === undefined || !NAME_START.test(c)) return undefined;
    let i = this.at;
    // Code points, not UTF-16 units: a letter outside the BMP is one character.
    for (const ch of this.text.slice(this.at)) {
      if (!NAME_CHAR.test(ch)) break;
      i += ch.length;
    }
    const name = this.text.slice(this.at, i);
    this.at = i;
    return name;
  }

  /** Function = Identifier "(" (Expr ("," Expr)*)? ")", with cql2's special forms. */
  private functionCall(): Cql2Value | undefined {
    const name = this.identifier();
    if (name === undefined || !this.eat('(')) return undefined;
    this.enter();
    const args: Cql2Value[] = [];
    if (!this.eat(')')) {
      args.push(this.expr());
      while (this.eat(',')) args.push(this.expr());
      if (!this.eat(')')) this.fail('expected “,” or “)” in the arguments');
    }
    this.depth--;
    const op = canonicalOp(name);
    // A one-element array is read as its element: an array operator's scalar argument is an array again.
    if (ARRAY_OPS.includes(op)) {
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a instanceof PyFloat || typeof a === 'string' || typeof a === 'boolean') args[i] = [a];
      }
    }
    const first = (what: string): Cql2Value => {
      if (args.length === 0) throw invalid(`${what}() takes an argument`);
      return args[0]!;
    };
    switch (op.toLowerCase()) {
      case 'interval':
        return { interval: args };
      case 'date':
        return { date: first('DATE') };
      case 'timestamp':
        return { timestamp: first('TIMESTAMP') };
      case 'bbox':
        return { bbox: args };
      case 'in': {
        const value = first('IN');
        const rest = args.slice(1);
        const list = rest.length === 1 ? (Array.isArray(rest[0]) ? rest[0] : [rest[0]!]) : rest;
        return { op, args: [value, list] };
      }
      default:
        return { op, args };
    }
  }

  // ---- WKT ----

  /** GEOMETRY: a WKT geometry, written as GeoJSON (x, y and z; a measure dropped, as geozero's xyz writer). */
  private geometry(allowCollection: boolean): Cql2Value | undefined {
    this.space();
    const word = GEOMETRY_WORDS.find((w) => this.peekWord(w));
    if (!word || (word === 'GEOMETRYCOLLECTION' && !allowCollection)) return undefined;
    this.at += word.length;
    this.space();
    let marker = '';
    for (const m of ['ZM', 'Z', 'M']) {
      if (this.peekWord(m)) {
        marker = m;
        this.at += m.length;
        break;
      }
    }
    this.space();
    if (this.peekWord('EMPTY', true)) this.fail('empty geometries are not read');
    if (this.text[this.at] !== '(') return undefined;
    // One level for the geometry's parentheses (the collection's members are nested ones).
    this.enter();
    let out: Cql2Value;
    if (word === 'GEOMETRYCOLLECTION') {
      this.at++;
      const geometries: Cql2Value[] = [];
      do {
        const member = this.geometry(false);
        if (member === undefined) {
          if (this.peekWord('GEOMETRYCOLLECTION')) this.fail('a geometry collection within a geometry collection');
          this.fail('expected a geometry in the collection');
        }
        geometries.push(member);
      } while (this.eat(','));
      if (!this.eat(')')) this.fail('expected “)” after the collection’s geometries');
      out = { type: 'GeometryCollection', geometries };
    } else {
      const nesting = { POINT: 1, LINESTRING: 1, POLYGON: 2, MULTILINESTRING: 2, MULTIPOLYGON: 3 }[word as 'POINT'];
      let coordinates: Cql2Value;
      if (word === 'MULTIPOINT') {
        // MULTIPOINT(1 2, 3 4) or MULTIPOINT((1 2), (3 4)).
        const bare = this.attempt(() => this.coordList(marker));
        coordinates = bare ?? (this.coordLists(1, marker) as Cql2Value[]).map((l) => (l as Cql2Value[])[0]!);
        if (!bare) {
          const lists = coordinates as Cql2Value[];
          if (lists.some((p) => p === undefined)) this.fail('expected a point');
        }
      } else if (word === 'POINT') {
        coordinates = (this.coordList(marker) as Cql2Value[])[0]!;
      } else {
        coordinates = nesting === 1 ? this.coordList(marker) : this.coordLists(nesting - 1, marker);
      }
      out = { type: GEOJSON_TYPE[word]!, coordinates };
    }
    this.depth--;
    return out;
  }

  /** `( c, c, … )` of coordinates (POINT takes one). */
  private coordList(marker: string): Cql2Value {
    if (!this.eat('(')) throw new Cql2Backtrack();
    const list: Cql2Value[] = [];
    do list.push(this.coord(marker));
    while (this.eat(','));
    if (!this.eat(')')) throw new Cql2Backtrack();
    return list;
  }

  /** `( list, list, … )` nested `levels` deep around coordinate lists. */
  private coordLists(levels: number, marker: string): Cql2Value {
    if (!this.eat('(')) this.fail('expected “(”');
    const out: Cql2Value[] = [];
    do out.push(levels === 1 ? this.coordList(marker) : this.coordLists(levels - 1, marker));
    while (this.eat(','));
    if (!this.eat(')')) this.fail('expected “)”');
    return out;
  }

  /** COORD: 2, 3 or 4 numbers (DECIMAL: no exponent), as geozero's xyz writer keeps them. */
  private coord(marker: string): Cql2Value {
    const values: PyFloat[] = [];
    for (;;) {
      this.space();
      const n = this.number(false);
      if (!n) break;
      values.push(n);
      if (values.length === 4) break;
    }
    if (values.length < 2) throw new Cql2Backtrack();
    // A measure is not a GeoJSON ordinate: `M` names the third one, four are x y z m.
    if (marker === 'M') return values.slice(0, 2);
    return values.slice(0, 3);
  }
}

/** Not this alternative: the reader backtracks to the next one. */
class Cql2Backtrack extends Error {}

/** pest's PrattParser over one expression's tokens (cql2's precedences, left or right associative). */
class Pratt {
  private i = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly nesting: { enter(): void; leave(): void },
  ) {}

  expr(rbp: number): Cql2Value {
    this.nesting.enter();
    let lhs = this.nud();
    while (rbp < this.lbp()) lhs = this.led(lhs);
    this.nesting.leave();
    return lhs;
  }

  private nud(): Cql2Value {
    const t = this.tokens[this.i++]!;
    if (t.kind === 'primary') return t.value;
    if (t.kind !== 'prefix') throw invalid('an operator where a value is expected');
    if (t.op === 'not') return { op: 'not', args: [this.expr(Bp.Not - 1)] };
    const child = this.expr(Bp.Negative - 1);
    return child instanceof PyFloat ? new PyFloat(-child.value) : { op: '*', args: [new PyFloat(-1), child] };
  }

  private lbp(): number {
    const t = this.tokens[this.i];
    if (t?.kind === 'infix') return t.bp;
    if (t?.kind === 'postfix') return Bp.Postfix;
    return 0;
  }

  private led(lhs: Cql2Value): Cql2Value {
    const t = this.tokens[this.i++]!;
    if (t.kind === 'postfix') {
      const out: Cql2Value = t.op === 'isNull' ? { op: 'isNull', args: [lhs] } : { op: 'between', args: [lhs, t.low, t.high] };
      return t.not ? { op: 'not', args: [out] } : out;
    }
    if (t.kind !== 'infix') throw invalid('a value where an operator is expected');
    let rhs = this.expr(t.right ? t.bp - 1 : t.bp);
    if (t.op === 'in' && !Array.isArray(rhs)) rhs = [rhs];
    const out: Cql2Value = { op: t.op, args: [lhs, rhs] };
    return t.not ? { op: 'not', args: [out] } : out;
  }
}

/**
 * A CQL2-text filter (or CQL2-JSON given as text, as cql2's `Expr(text)` reads either) as cql2 0.6.0
 * writes it in CQL2-JSON. A 400 naming the problem and where for what it cannot read.
 */
export function cql2TextToJson(text: string): Cql2Value {
  if (text.length > MAX_FILTER_CHARS) throw invalid(`longer than ${MAX_FILTER_CHARS} characters (send it as CQL2-JSON in a registered search)`);
  if (text.trim().length === 0) throw invalid('it is empty');
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw invalid('it starts as JSON but is not valid JSON');
    }
    return canonicalCql2Json(parsed);
  }
  return normalize(new Cql2TextReader(text).read());
}
