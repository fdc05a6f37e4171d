/**
 * PostgreSQL's text of a jsonb value, and pgSTAC's hash of a search from it: a search registered
 * here is named as pgSTAC 0.10 names it (`search_hash`: md5 of the search without `token`, `limit`,
 * `context`, `includes`, `excludes`, as jsonb text, followed by the metadata's jsonb text), so the
 * same search has the same id whichever catalogue is behind tessera.
 *
 * jsonb text: object keys sorted by length, then by their UTF-8 bytes, the last of a repeated key
 * kept; `", "` and `": "` between items; strings escaped as PostgreSQL's `escape_json` does (only
 * `"`, `\` and control characters); numbers as `numeric` writes what it read: the digits, without
 * an exponent, with as many decimals as the text had (`5.0` stays `5.0`, `1e-07` is `0.0000001`).
 * Values are pyjson's: a float is a PyFloat (written as Python's repr, what titiler-pgstac sends).
 */
import { createHash } from 'node:crypto';
import { PyFloat, pyFloatRepr } from '../pyjson.js';

/** numeric's output of a number's text (no exponent; the scale the text implies). */
export function numericText(text: string): string {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`not a number: ${text}`);
  const [, sign, intPart = '', fracPart = '', expText] = m;
  const exp = expText ? Number(expText) : 0;
  const digits = `${intPart}${fracPart}`;
  const scale = Math.max(0, fracPart.length - exp);
  // The decimal point sits after `intPart.length + exp` digits.
  const point = intPart.length + exp;
  let whole: string;
  let frac: string;
  if (point <= 0) {
    whole = '0';
    frac = '0'.repeat(-point) + digits;
  } else if (point >= digits.length) {
    whole = digits + '0'.repeat(point - digits.length);
    frac = '';
  } else {
    whole = digits.slice(0, point);
    frac = digits.slice(point);
  }
  frac = (frac + '0'.repeat(scale)).slice(0, scale);
  whole = whole.replace(/^0+(?=\d)/, '');
  const zero = /^0*$/.test(whole + frac);
  return `${sign && !zero ? '-' : ''}${whole}${scale > 0 ? `.${frac}` : ''}`;
}

/** Characters escape_json changes. */
const NEEDS_ESCAPE = /["\\\x00-\x1f]/;

function escapeJson(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c < 0x20) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

const ASCII = /^[\x00-\x7f]*$/;

/** jsonb's order of keys: shorter first, then by UTF-8 bytes. */
function compareKeys(a: string, b: string): number {
  // ASCII keys (nearly all): their UTF-8 bytes are their characters.
  if (ASCII.test(a) && ASCII.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return ab.length - bb.length || Buffer.compare(ab, bb);
}

/** numeric's text of a JavaScript number (a JSON int as an int, a fraction in shortest form). */
function numberText(v: number): string {
  const text = String(v);
  // Most numbers need nothing more: digits, maybe a fraction, no exponent.
  if (PLAIN_NUMBER.test(text)) return text;
  return numericText(Number.isInteger(v) && Math.abs(v) < 1e21 ? v.toFixed(0) : text);
}

const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * jsonb text of a value as Parquet gives it (hyparquet): nulls left out of objects (stac-geoparquet's
 * reading), dates as RFC 3339, bigints as numbers, binary left out; one pass.
 */
export function jsonbOfParquet(value: unknown): string | undefined {
  if (value === null || value === undefined || value instanceof Uint8Array) return undefined;
  if (value instanceof Date) return escapeJson(value.toISOString().replace('.000Z', 'Z'));
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? String(value) : escapeJson(value.toString());
  if (typeof value === 'number') return Number.isFinite(value) ? numberText(value) : undefined;
  if (typeof value === 'string') return escapeJson(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return `[${value.map((v) => jsonbOfParquet(v) ?? 'null').join(', ')}]`;
  const entries: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const text = jsonbOfParquet(v);
    if (text !== undefined) entries.push([k, text]);
  }
  if (entries.length > 1) entries.sort(([a], [b]) => compareKeys(a, b));
  return `{${entries.map(([k, v]) => `${escapeJson(k)}: ${v}`).join(', ')}}`;
}

/** PostgreSQL's `jsonb::text` of a pyjson value. */
export function jsonbText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof PyFloat) return numericText(pyFloatRepr(value.value));
  if (typeof value === 'number') return numberText(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return escapeJson(value);
  if (Array.isArray(value)) return `[${value.map(jsonbText).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => compareKeys(a, b));
  return `{${entries.map(([k, v]) => `${escapeJson(k)}: ${jsonbText(v)}`).join(', ')}}`;
}

/** The keys pgSTAC leaves out of a search before hashing it (paging and output fields). */
const NOT_HASHED = new Set(['token', 'limit', 'context', 'includes', 'excludes']);

/** pgSTAC's `search_hash(search, metadata)`. */
export function searchHash(search: Record<string, unknown>, metadata: Record<string, unknown>): string {
  const hashed = Object.fromEntries(Object.entries(search).filter(([k]) => !NOT_HASHED.has(k)));
  return createHash('md5')
    .update(jsonbText(hashed) + jsonbText(metadata))
    .digest('hex');
}
