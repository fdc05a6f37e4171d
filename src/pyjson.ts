/**
 * JSON exactly as TiTiler writes it: compact separators, non-ASCII kept, NaN/±Infinity as null, and
 * Python's float/int distinction (`3565.0` vs `3565`). JavaScript has one number type, so response
 * models mark the numbers that are Python floats with `float()`; plain numbers are written as ints.
 */

export class PyFloat {
  constructor(readonly value: number) {}
}

export const float = (value: number): PyFloat => new PyFloat(value);
export const floats = (values: readonly number[]): PyFloat[] => values.map(float);

/**
 * A Python float that pydantic-core writes itself (TiTiler 2.x's response models are serialized by
 * pydantic, 0.18's by `json.dumps`): the same text as `repr`, except between 1e-5 and 1e-4, written
 * out (`0.00001`), and below, whose exponent is not padded (`1e-6`, Python's `1e-06`).
 */
export class PydanticFloat {
  constructor(readonly value: number) {}
}

export const pydanticFloat = (value: number): PydanticFloat => new PydanticFloat(value);

function pydanticFloatRepr(x: number): string {
  const repr = pyFloatRepr(x);
  const m = /^(-?)(\d)(?:\.(\d+))?e-(\d+)$/.exec(repr);
  if (!m) return repr;
  const [, sign, lead, rest = '', expText] = m as unknown as [string, string, string, string | undefined, string];
  const exp = Number(expText);
  if (exp === 5) return `${sign}0.0000${lead}${rest}`;
  return `${sign}${lead}${rest === '' ? '' : `.${rest}`}e-${exp}`;
}

/** Python's `repr(float)`: shortest round-trip digits, `.0` on integral values, exponent past 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = negative ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** Python's `str(int)` for a JS number that is an integer (large ones without exponent). */
function pyIntRepr(x: number): string {
  return Number.isSafeInteger(x) ? String(x) : BigInt(Math.trunc(x)).toString();
}

export function pyDumps(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(value: unknown, out: string[]): void {
  if (value === null || value === undefined) {
    out.push('null');
  } else if (value instanceof PyFloat) {
    out.push(Number.isFinite(value.value) ? pyFloatRepr(value.value) : 'null');
  } else if (value instanceof PydanticFloat) {
    out.push(Number.isFinite(value.value) ? pydanticFloatRepr(value.value) : 'null');
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) out.push('null');
    else out.push(Number.isInteger(value) ? pyIntRepr(value) : pyFloatRepr(value));
  } else if (typeof value === 'bigint') {
    out.push(value.toString());
  } else if (typeof value === 'string') {
    out.push(JSON.stringify(value));
  } else if (typeof value === 'boolean') {
    out.push(value ? 'true' : 'false');
  } else if (value instanceof Map) {
    writeEntries([...value], out);
  } else if (Array.isArray(value)) {
    out.push('[');
    value.forEach((v, i) => {
      if (i > 0) out.push(',');
      write(v, out);
    });
    out.push(']');
  } else if (typeof value === 'object') {
    writeEntries(Object.entries(value as Record<string, unknown>), out);
  } else {
    out.push(JSON.stringify(String(value)));
  }
}

function writeEntries(entries: ReadonlyArray<[unknown, unknown]>, out: string[]): void {
  out.push('{');
  let first = true;
  for (const [k, v] of entries) {
    if (v === undefined) continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(String(k)), ':');
    write(v, out);
  }
  out.push('}');
}

/**
 * JSON text read as Python's `json.loads` reads it: a number written with a fraction or an exponent
 * is a float (a `PyFloat`, written back as Python writes it: `1.50` → `1.5`, `1e5` → `100000.0`), any
 * other number an int (a `bigint` past 2^53, kept whole). What PostgreSQL's jsonb and pgSTAC's
 * hashes see of a document (pgstac/) depends on that distinction, which `JSON.parse` loses.
 */
export function pyLoads(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    if (typeof value !== 'number' || context?.source === undefined) return value;
    const source = context.source;
    if (/[.eE]/.test(source)) return new PyFloat(value);
    return Number.isSafeInteger(value) ? value : BigInt(source);
  });
}
