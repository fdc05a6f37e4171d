/**
 * Structural comparison of two servers' answers: JSON that keeps how numbers were written (Python
 * writes `3565.0` for a float and `3565` for an int, and clients that type-check see the
 * difference), and XML element trees for WMTS documents. Both report every difference with a path,
 * so a failing parity test says exactly where the two documents part.
 */

/** One place where two documents differ. */
export interface Difference {
  /** JSON path (`$.tiles[0]`) or XML path (`/Capabilities/Contents/Layer`). */
  path: string;
  message: string;
}

export function formatDifferences(diffs: readonly Difference[], max = 20): string {
  const lines = diffs.slice(0, max).map((d) => `${d.path}: ${d.message}`);
  if (diffs.length > max) lines.push(`… and ${diffs.length - max} more`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Numbers and base URLs
// ---------------------------------------------------------------------------------------------

const REL_TOLERANCE = 1e-9;
const ABS_TOLERANCE = 1e-12;

/** Equal within 1e-9 relative, or 1e-12 absolute near zero; NaN equals NaN (Python writes NaN). */
export function numbersClose(a: number, b: number, rel = REL_TOLERANCE, abs = ABS_TOLERANCE): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= Math.max(rel * Math.max(Math.abs(a), Math.abs(b)), abs);
}

const BASE_PLACEHOLDER = '{BASE}';

/**
 * Replaces the servers' own base URLs (`http://127.0.0.1:PORT`, also percent-encoded) by one
 * placeholder, so links that embed the host compare equal. Other URLs on the same host (the
 * fixture file server) stay as they are: the port must match exactly, not as a prefix.
 */
export function baseUrlNormaliser(baseUrls: readonly string[]): (s: string) => string {
  const patterns = baseUrls.flatMap((base) => {
    const plain = base.replace(/\/+$/, '');
    return [plain, encodeURIComponent(plain)].map((form) => new RegExp(`${escapeRegExp(form)}(?![0-9])`, 'g'));
  });
  return (s) => patterns.reduce((acc, re) => acc.replace(re, BASE_PLACEHOLDER), s);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

/** A number as written: `float` is true when the literal had a fraction or an exponent. */
class JsonNumber {
  constructor(
    readonly value: number,
    readonly float: boolean,
    readonly raw: string,
  ) {}
}

/** Objects are Maps so that key order survives parsing. */
export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject;
export type JsonObject = Map<string, JsonValue>;

class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

/**
 * Parses JSON text keeping key order and the int/float kind of each number. Also accepts the
 * `NaN`, `Infinity` and `-Infinity` tokens Python's json module writes for non-finite floats.
 */
export function parseJson(text: string): JsonValue {
  const parser = new JsonParser(text);
  const value = parser.value();
  parser.end();
  return value;
}

class JsonParser {
  private pos = 0;

  constructor(private readonly src: string) {}

  end(): void {
    this.skipSpace();
    if (this.pos < this.src.length) this.fail('unexpected trailing text');
  }

  value(): JsonValue {
    this.skipSpace();
    const c = this.src[this.pos];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      case 'N':
        return this.literal('NaN', new JsonNumber(NaN, true, 'NaN'));
      case 'I':
        return this.literal('Infinity', new JsonNumber(Infinity, true, 'Infinity'));
      default:
        if (c === '-' && this.src.startsWith('-Infinity', this.pos)) {
          return this.literal('-Infinity', new JsonNumber(-Infinity, true, '-Infinity'));
        }
        if (c !== undefined && (c === '-' || (c >= '0' && c <= '9'))) return this.number();
        return this.fail(c === undefined ? 'unexpected end of text' : `unexpected character '${c}'`);
    }
  }

  private object(): JsonObject {
    const out: JsonObject = new Map();
    this.pos++; // {
    this.skipSpace();
    if (this.src[this.pos] === '}') {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.src[this.pos] !== '"') this.fail('expected a string key');
      const key = this.string();
      if (out.has(key)) this.fail(`duplicate key '${key}'`);
      this.skipSpace();
      this.expect(':');
      out.set(key, this.value());
      this.skipSpace();
      if (this.src[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.expect('}');
      return out;
    }
  }

  private array(): JsonValue[] {
    const out: JsonValue[] = [];
    this.pos++; // [
    this.skipSpace();
    if (this.src[this.pos] === ']') {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.skipSpace();
      if (this.src[this.pos] === ',') {
        this.pos++;
        continue;
      }
      this.expect(']');
      return out;
    }
  }

  private string(): string {
    this.pos++; // opening quote
    let out = '';
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined) this.fail('unterminated string');
      if (c === '"') {
        this.pos++;
        return out;
      }
      if (c < ' ') this.fail('control character in string');
      if (c !== '\\') {
        out += c;
        this.pos++;
        continue;
      }
      const e = this.src[this.pos + 1];
      this.pos += 2;
      const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (e !== undefined && simple[e] !== undefined) {
        out += simple[e];
      } else if (e === 'u') {
        const hex = this.src.slice(this.pos, this.pos + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('bad \\u escape');
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += 4;
      } else {
        this.fail(`bad escape '\\${e ?? ''}'`);
      }
    }
  }

  private number(): JsonNumber {
    const re = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
    re.lastIndex = this.pos;
    const m = re.exec(this.src);
    if (!m) return this.fail('bad number');
    this.pos += m[0].length;
    return new JsonNumber(Number(m[0]), m[1] !== undefined || m[2] !== undefined, m[0]);
  }

  private literal<T extends JsonValue>(word: string, value: T): T {
    if (!this.src.startsWith(word, this.pos)) this.fail(`expected '${word}'`);
    this.pos += word.length;
    return value;
  }

  private expect(c: string): void {
    if (this.src[this.pos] !== c) this.fail(`expected '${c}'`);
    this.pos++;
  }

  private skipSpace(): void {
    while (this.pos < this.src.length && ' \t\n\r'.includes(this.src[this.pos] as string)) this.pos++;
  }

  private fail(message: string): never {
    throw new JsonSyntaxError(`${message} at offset ${this.pos}: …${this.src.slice(Math.max(0, this.pos - 20), this.pos + 20)}…`);
  }
}

/** Plain JS value of a parsed tree (numbers lose their kind), for checks that read fields. */
export type PlainJson = null | boolean | number | string | PlainJson[] | { [key: string]: PlainJson };

export function toPlain(v: JsonValue): PlainJson {
  if (v instanceof JsonNumber) return v.value;
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Map) {
    const out: { [key: string]: PlainJson } = {};
    for (const [k, child] of v) out[k] = toPlain(child);
    return out;
  }
  return v;
}

function kindOf(v: JsonValue): string {
  if (v === null) return 'null';
  if (v instanceof JsonNumber) return v.float ? 'float' : 'int';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Map) return 'object';
  return typeof v;
}

function show(v: JsonValue): string {
  if (v instanceof JsonNumber) return v.raw;
  if (Array.isArray(v)) return `array(${v.length})`;
  if (v instanceof Map) return `object{${[...v.keys()].join(',')}}`;
  return JSON.stringify(v);
}

export interface JsonCompareOptions {
  /**
   * Paths not compared, e.g. `$.tiles[0]` or `$.*.bounds`; `*` stands for one key or index.
   * Both documents' subtrees at those paths are skipped.
   */
  ignore?: readonly string[];
  /** Applied to every string value before comparing, e.g. `baseUrlNormaliser`. */
  normalise?: (s: string) => string;
  relTolerance?: number;
  absTolerance?: number;
}

/** Differences of `b` (the candidate) from `a` (the reference). */
export function compareJson(a: JsonValue, b: JsonValue, opts: JsonCompareOptions = {}): Difference[] {
  const ignore = (opts.ignore ?? []).map(pathPattern);
  const ctx: JsonContext = {
    ignored: (path) => ignore.some((re) => re.test(path)),
    normalise: opts.normalise ?? ((s) => s),
    rel: opts.relTolerance ?? REL_TOLERANCE,
    abs: opts.absTolerance ?? ABS_TOLERANCE,
    out: [],
  };
  walkJson(a, b, '$', ctx);
  return ctx.out;
}

interface JsonContext {
  ignored(path: string): boolean;
  normalise(s: string): string;
  rel: number;
  abs: number;
  out: Difference[];
}

/** `$.a[*].b` → a regular expression over the paths walkJson builds. */
function pathPattern(pattern: string): RegExp {
  const re = escapeRegExp(pattern).replace(/\\\*/g, '[^.\\[\\]]+');
  return new RegExp(`^${re}$`);
}

function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

function walkJson(a: JsonValue, b: JsonValue, path: string, ctx: JsonContext): void {
  if (ctx.ignored(path)) return;
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (a instanceof JsonNumber && b instanceof JsonNumber) {
    if (a.float !== b.float) ctx.out.push({ path, message: `number kind: ${ka} ${a.raw} vs ${kb} ${b.raw}` });
    else if (!numbersClose(a.value, b.value, ctx.rel, ctx.abs)) ctx.out.push({ path, message: `${a.raw} vs ${b.raw}` });
    return;
  }
  if (ka !== kb) {
    ctx.out.push({ path, message: `type: ${ka} ${show(a)} vs ${kb} ${show(b)}` });
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) ctx.out.push({ path, message: `array length ${a.length} vs ${b.length}` });
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) walkJson(a[i] as JsonValue, b[i] as JsonValue, childPath(path, i), ctx);
    return;
  }
  if (a instanceof Map && b instanceof Map) {
    compareObjects(a, b, path, ctx);
    return;
  }
  if (typeof a === 'string' && typeof b === 'string') {
    if (ctx.normalise(a) !== ctx.normalise(b)) ctx.out.push({ path, message: `${JSON.stringify(a)} vs ${JSON.stringify(b)}` });
    return;
  }
  if (a !== b) ctx.out.push({ path, message: `${show(a)} vs ${show(b)}` });
}

function compareObjects(a: JsonObject, b: JsonObject, path: string, ctx: JsonContext): void {
  const live = (m: JsonObject): string[] => [...m.keys()].filter((k) => !ctx.ignored(childPath(path, k)));
  const keysA = live(a);
  const keysB = live(b);
  const missing = keysA.filter((k) => !b.has(k));
  const extra = keysB.filter((k) => !a.has(k));
  if (missing.length > 0) ctx.out.push({ path, message: `missing keys ${JSON.stringify(missing)}` });
  if (extra.length > 0) ctx.out.push({ path, message: `extra keys ${JSON.stringify(extra)}` });
  // Order matters to clients that print or hash the body, and Python keeps insertion order.
  const commonA = keysA.filter((k) => b.has(k));
  const commonB = keysB.filter((k) => a.has(k));
  if (commonA.join('\u0000') !== commonB.join('\u0000')) {
    ctx.out.push({ path, message: `key order ${JSON.stringify(commonA)} vs ${JSON.stringify(commonB)}` });
  }
  for (const k of commonA) walkJson(a.get(k) as JsonValue, b.get(k) as JsonValue, childPath(path, k), ctx);
}

// ---------------------------------------------------------------------------------------------
// XML
// ---------------------------------------------------------------------------------------------

/** An element; the text of its direct text nodes (and CDATA) is concatenated in `text`. */
export interface XmlElement {
  name: string;
  attrs: Map<string, string>;
  children: XmlElement[];
  text: string;
}

class XmlSyntaxError extends Error {
  override name = 'XmlSyntaxError';
}

/**
 * A small XML parser for well-formed documents such as WMTS capabilities: elements, attributes,
 * text, entity and character references, CDATA; the prolog, comments, processing instructions
 * and a DOCTYPE without an internal subset are skipped. No namespace resolution: prefixed names
 * are compared as written, which is what clients matching on `ows:Identifier` see too.
 */
export function parseXml(src: string): XmlElement {
  let pos = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;

  const fail = (message: string): never => {
    throw new XmlSyntaxError(`${message} at offset ${pos}: …${src.slice(Math.max(0, pos - 20), pos + 20)}…`);
  };
  const skipPast = (token: string): void => {
    const end = src.indexOf(token, pos);
    if (end < 0) fail(`missing '${token}'`);
    pos = end + token.length;
  };

  while (pos < src.length) {
    const lt = src.indexOf('<', pos);
    const textEnd = lt < 0 ? src.length : lt;
    if (textEnd > pos) {
      const text = src.slice(pos, textEnd);
      const top = stack[stack.length - 1];
      if (top) top.text += decodeEntities(text, fail);
      else if (text.trim() !== '') fail('text outside the root element');
      pos = textEnd;
      continue;
    }
    if (src.startsWith('<?', pos)) skipPast('?>');
    else if (src.startsWith('<!--', pos)) skipPast('-->');
    else if (src.startsWith('<![CDATA[', pos)) {
      const end = src.indexOf(']]>', pos);
      if (end < 0) fail('unterminated CDATA');
      const top = stack[stack.length - 1];
      if (!top) fail('CDATA outside the root element');
      else top.text += src.slice(pos + 9, end);
      pos = end + 3;
    } else if (src.startsWith('<!', pos)) skipPast('>');
    else if (src.startsWith('</', pos)) {
      const m = sticky(/<\/([^\s>]+)\s*>/y, pos);
      if (!m) return fail('bad end tag');
      const open = stack.pop();
      if (!open || open.name !== m[1]) fail(`end tag </${m[1]}> does not match <${open?.name ?? ''}>`);
      pos += m[0].length;
    } else {
      const el = readStartTag();
      const parent = stack[stack.length - 1];
      if (parent) parent.children.push(el.element);
      else if (root) fail('second root element');
      else root = el.element;
      if (!el.selfClosing) stack.push(el.element);
    }
  }
  if (stack.length > 0) fail(`unclosed <${stack[stack.length - 1]?.name ?? ''}>`);
  if (!root) return fail('no root element');
  return root;

  /** Matches a sticky (`y`) expression exactly at `at`, without copying the rest of the text. */
  function sticky(re: RegExp, at: number): RegExpExecArray | null {
    re.lastIndex = at;
    return re.exec(src);
  }

  function readStartTag(): { element: XmlElement; selfClosing: boolean } {
    const nameMatch = sticky(/<([A-Za-z_][\w.:-]*)/y, pos);
    if (!nameMatch) return fail('bad start tag');
    pos += nameMatch[0].length;
    const element: XmlElement = { name: nameMatch[1] as string, attrs: new Map(), children: [], text: '' };
    for (;;) {
      const m = sticky(/\s+([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/y, pos);
      if (m) {
        const name = m[1] as string;
        if (element.attrs.has(name)) fail(`duplicate attribute ${name}`);
        element.attrs.set(name, decodeEntities(m[2] ?? m[3] ?? '', fail));
        pos += m[0].length;
        continue;
      }
      const close = sticky(/\s*(\/?)>/y, pos);
      if (!close) return fail(`bad attribute in <${element.name}>`);
      pos += close[0].length;
      return { element, selfClosing: close[1] === '/' };
    }
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(s: string, fail: (message: string) => never): string {
  return s.replace(/&([^;\s&]*);?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) return fail(`unterminated reference '${whole}'`);
    if (ref.startsWith('#x')) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(parseInt(ref.slice(1), 10));
    const named = ENTITIES[ref];
    return named ?? fail(`unknown entity '&${ref};'`);
  });
}

export interface XmlCompareOptions {
  /** Applied to text and attribute values before comparing, e.g. `baseUrlNormaliser`. */
  normalise?: (s: string) => string;
  relTolerance?: number;
  absTolerance?: number;
}

/**
 * Differences of `b` from `a`: element names and order, attribute sets and values (attribute
 * order is not significant in XML), and text with whitespace collapsed. Whitespace-separated
 * numbers (`<TopLeftCorner>-20037508.34 20037508.34</TopLeftCorner>`) compare within the
 * tolerance, but an integer literal must stay one (`256` vs `256.0` breaks integer parsers).
 */
export function compareXml(a: XmlElement, b: XmlElement, opts: XmlCompareOptions = {}): Difference[] {
  const out: Difference[] = [];
  const ctx = {
    normalise: opts.normalise ?? ((s: string) => s),
    rel: opts.relTolerance ?? REL_TOLERANCE,
    abs: opts.absTolerance ?? ABS_TOLERANCE,
  };
  walkXml(a, b, `/${a.name}`, ctx, out);
  return out;
}

interface XmlContext {
  normalise(s: string): string;
  rel: number;
  abs: number;
}

function walkXml(a: XmlElement, b: XmlElement, path: string, ctx: XmlContext, out: Difference[]): void {
  if (a.name !== b.name) {
    out.push({ path, message: `element <${a.name}> vs <${b.name}>` });
    return;
  }
  const names = new Set([...a.attrs.keys(), ...b.attrs.keys()]);
  for (const name of names) {
    const va = a.attrs.get(name);
    const vb = b.attrs.get(name);
    if (va === undefined) out.push({ path: `${path}/@${name}`, message: 'extra attribute' });
    else if (vb === undefined) out.push({ path: `${path}/@${name}`, message: 'missing attribute' });
    else {
      const why = textDifference(va, vb, ctx);
      if (why) out.push({ path: `${path}/@${name}`, message: why });
    }
  }
  const why = textDifference(a.text, b.text, ctx);
  if (why) out.push({ path: `${path}/text()`, message: why });

  if (a.children.length !== b.children.length) {
    const list = (e: XmlElement): string => e.children.map((c) => c.name).join(',');
    out.push({ path, message: `${a.children.length} vs ${b.children.length} children (${list(a)} vs ${list(b)})` });
  }
  const seen = new Map<string, number>();
  const n = Math.min(a.children.length, b.children.length);
  for (let i = 0; i < n; i++) {
    const ca = a.children[i] as XmlElement;
    const cb = b.children[i] as XmlElement;
    // Index among same-named siblings, as in XPath, so paths read like /TileMatrixSet/TileMatrix[3].
    const k = seen.get(ca.name) ?? 0;
    seen.set(ca.name, k + 1);
    walkXml(ca, cb, `${path}/${ca.name}[${k}]`, ctx, out);
  }
}

const NUMBER_TOKEN = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INT_TOKEN = /^[+-]?\d+$/;

function textDifference(rawA: string, rawB: string, ctx: XmlContext): string | undefined {
  const a = ctx.normalise(rawA).replace(/\s+/g, ' ').trim();
  const b = ctx.normalise(rawB).replace(/\s+/g, ' ').trim();
  if (a === b) return undefined;
  const ta = a.split(' ');
  const tb = b.split(' ');
  const mismatch = `${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  if (ta.length !== tb.length) return mismatch;
  for (let i = 0; i < ta.length; i++) {
    const x = ta[i] as string;
    const y = tb[i] as string;
    if (x === y) continue;
    if (!NUMBER_TOKEN.test(x) || !NUMBER_TOKEN.test(y)) return mismatch;
    if (INT_TOKEN.test(x) !== INT_TOKEN.test(y)) return `number kind: ${mismatch}`;
    if (!numbersClose(Number(x), Number(y), ctx.rel, ctx.abs)) return mismatch;
  }
  return undefined;
}
