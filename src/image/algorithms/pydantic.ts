/**
 * Validation of `algorithm_params` as TiTiler's pydantic v2 models do it (lax "python" mode, since
 * the values come from `json.loads`), with pydantic's error text as the 400 detail. What it mirrors:
 * - ints accept bools, integral numbers and strings like " +45", "1_000", "45.00"; fractions fail;
 * - floats accept bools, numbers and Python float strings ("1e3", "nan", "-inf", "1_0.5");
 * - bounds are checked upper first, so NaN fails "less than or equal";
 * - unknown keys are ignored (the models allow extras); the metadata fields (`title`,
 *   `output_dtype`, …) are type-checked like any field, but their values are not used here;
 * - every failing field is reported, in the model's field order, with Python reprs of the input.
 * JavaScript's JSON numbers cannot tell `45.0` from `45`: integral numbers are taken for Python
 * ints, except beyond the int64 range, where a float literal (`1e300`) is far likelier.
 */
import { badRequest } from '../../errors.js';
import { pyFloatRepr } from '../../pyjson.js';

/** The pydantic minor version in TiTiler's reference environment; its docs URL is in every error. */
const PYDANTIC_DOCS = 'https://errors.pydantic.dev/2.14/v/';

/** A bounded numeric parameter of an algorithm. */
export interface NumberField {
  name: string;
  kind: 'int' | 'float';
  /** `null` only for a nullable field (`Optional[float] = None`). */
  default: number | null;
  minimum: number;
  maximum: number;
  /** `Optional[...]`: JSON null is accepted (and leaves the parameter unset). */
  nullable?: boolean;
  /** The field's `description`, which the metadata shows. */
  description?: string;
}

/**
 * How a metadata field is typed: `str`, `Optional[str]`, unbounded `int`, `Optional[int]`,
 * `Optional[Sequence]` (anything list-like or None), `Sequence[float]`, `Sequence[int]`, `list[float]`.
 */
export type FieldKind = 'str' | 'optionalStr' | 'plainInt' | 'optionalInt' | 'optionalSequence' | 'floatSequence' | 'intSequence' | 'floatList';

/** Any field of a model: the parameters, or the metadata fields every algorithm model carries. */
export type FieldSpec = NumberField | { name: string; kind: FieldKind };

interface FieldError {
  loc: string;
  type: string;
  msg: string;
  input: unknown;
}

/** Error types whose pydantic text has no documentation link. */
const UNDOCUMENTED = new Set(['sequence_str']);

/** Python strips Unicode White_Space (not U+FEFF) around numeric strings. */
const WS = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const STRIP = new RegExp(`^${WS}+|${WS}+$`, 'g');
const INT_TEXT = /^([+-]?)(\d(?:_?\d)*)(?:\.0+)?$/;
const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const FLOAT_SPECIAL = /^([+-]?)(inf|infinity|nan)$/i;
/** Python's limit on the digits of an int parsed from text. */
const MAX_INT_DIGITS = 4300;

const INT64_LIMIT = 2 ** 63;

/** Whether a decoded JSON number stands for a Python int (see the header). */
function isPyInt(x: number): boolean {
  return Number.isInteger(x) && Math.abs(x) < INT64_LIMIT;
}

type Parsed = { ok: true; value: number } | { ok: false; type: string; msg: string };

const fail = (type: string, msg: string): Parsed => ({ ok: false, type, msg });

function parseInt64(input: unknown): Parsed {
  if (typeof input === 'boolean') return { ok: true, value: input ? 1 : 0 };
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return fail('finite_number', 'Input should be a finite number');
    if (!Number.isInteger(input)) return fail('int_from_float', 'Input should be a valid integer, got a number with a fractional part');
    if (!isPyInt(input)) return fail('int_parsing_size', 'Unable to parse input string as an integer, exceeded maximum size');
    return { ok: true, value: input };
  }
  if (typeof input === 'string') {
    const m = INT_TEXT.exec(input.replace(STRIP, ''));
    if (!m) return fail('int_parsing', 'Input should be a valid integer, unable to parse string as an integer');
    const digits = m[2]!.replace(/_/g, '').replace(/^0+(?=\d)/, '');
    if (digits.length > MAX_INT_DIGITS) return fail('int_parsing_size', 'Unable to parse input string as an integer, exceeded maximum size');
    // Beyond 2^53 the value is only compared with small bounds, so rounding does not matter.
    return { ok: true, value: Number(`${m[1]}${digits}`) };
  }
  return fail('int_type', 'Input should be a valid integer');
}

function parseFloat64(input: unknown): Parsed {
  if (typeof input === 'boolean') return { ok: true, value: input ? 1 : 0 };
  if (typeof input === 'number') return { ok: true, value: input };
  if (typeof input === 'string') {
    const s = input.replace(STRIP, '');
    const bad = fail('float_parsing', 'Input should be a valid number, unable to parse string as a number');
    // Underscores may separate characters, never lead, trail or double.
    if (s.startsWith('_') || s.endsWith('_') || s.includes('__')) return bad;
    const t = s.replace(/_/g, '');
    const special = FLOAT_SPECIAL.exec(t);
    if (special) {
      const magnitude = special[2]!.toLowerCase() === 'nan' ? NaN : Infinity;
      return { ok: true, value: special[1] === '-' ? -magnitude : magnitude };
    }
    return FLOAT_TEXT.test(t) ? { ok: true, value: Number(t) } : bad;
  }
  return fail('float_type', 'Input should be a valid number');
}

/** pydantic-core writes limits with Rust's `Display`: no exponent, no `.0` (`1000000`, `0.000001`). */
function limitText(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'inf' : '-inf';
  if (Number.isInteger(x)) return BigInt(x).toString();
  const [mantissa, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

function checkBounds(value: number, field: NumberField): Parsed {
  if (!(value <= field.maximum)) return fail('less_than_equal', `Input should be less than or equal to ${limitText(field.maximum)}`);
  if (!(value >= field.minimum)) return fail('greater_than_equal', `Input should be greater than or equal to ${limitText(field.minimum)}`);
  return { ok: true, value };
}

/** Validates one field's input, pushing its errors; returns the number for numeric fields. */
function validateField(field: FieldSpec, input: unknown, errors: FieldError[]): number | undefined {
  const push = (p: Parsed, loc = field.name, value: unknown = input): number | undefined => {
    if (p.ok) return p.value;
    errors.push({ loc, type: p.type, msg: p.msg, input: value });
    return undefined;
  };
  switch (field.kind) {
    case 'int': {
      if (input === null && field.nullable) return undefined;
      const p = parseInt64(input);
      return push(p.ok ? checkBounds(p.value, field) : p);
    }
    case 'float': {
      if (input === null && field.nullable) return undefined;
      const p = parseFloat64(input);
      return push(p.ok ? checkBounds(p.value, field) : p);
    }
    case 'optionalInt':
      if (input !== null) push(parseInt64(input));
      return undefined;
    case 'plainInt':
      push(parseInt64(input));
      return undefined;
    case 'optionalStr':
      if (input !== null && typeof input !== 'string') push(fail('string_type', 'Input should be a valid string'));
      return undefined;
    case 'str':
      if (typeof input !== 'string') push(fail('string_type', 'Input should be a valid string'));
      return undefined;
    case 'optionalSequence':
      if (input !== null && typeof input !== 'string' && !Array.isArray(input)) {
        push(fail('is_instance_of', 'Input should be an instance of Sequence'));
      }
      return undefined;
    case 'floatSequence':
    case 'intSequence': {
      const parse = field.kind === 'intSequence' ? parseInt64 : parseFloat64;
      if (typeof input === 'string') push(fail('sequence_str', "'str' instances are not allowed as a Sequence value"));
      else if (!Array.isArray(input)) push(fail('is_instance_of', 'Input should be an instance of Sequence'));
      else
        input.forEach((item: unknown, i) => {
          push(parse(item), `${field.name}.${i}`, item);
        });
      return undefined;
    }
    case 'floatList':
      if (!Array.isArray(input)) push(fail('list_type', 'Input should be a valid list'));
      else
        input.forEach((item: unknown, i) => {
          push(parseFloat64(item), `${field.name}.${i}`, item);
        });
      return undefined;
  }
}

/**
 * Validates `raw` against a model's fields and returns the numeric parameters (defaults filled
 * in; a nullable parameter left at or set to null has no entry). Throws a 400 whose detail is
 * pydantic's `str(ValidationError)`.
 */
export function validateModel(modelName: string, fields: readonly FieldSpec[], raw: Record<string, unknown>): Map<string, number> {
  const values = new Map<string, number>();
  const errors: FieldError[] = [];
  for (const field of fields) {
    const given = Object.hasOwn(raw, field.name);
    if (!given) {
      if ((field.kind === 'int' || field.kind === 'float') && field.default !== null) values.set(field.name, field.default);
      continue;
    }
    const value = validateField(field, raw[field.name], errors);
    if (value !== undefined) values.set(field.name, value);
  }
  if (errors.length > 0) throw badRequest(validationErrorText(modelName, errors));
  return values;
}

function validationErrorText(modelName: string, errors: readonly FieldError[]): string {
  const lines = [`${errors.length} validation error${errors.length === 1 ? '' : 's'} for ${modelName}`];
  for (const e of errors) {
    lines.push(e.loc, `  ${e.msg} [type=${e.type}, input_value=${truncateRepr(pyRepr(e.input))}, input_type=${pyTypeName(e.input)}]`);
    if (!UNDOCUMENTED.has(e.type)) lines.push(`    For further information visit ${PYDANTIC_DOCS}${e.type}`);
  }
  return lines.join('\n');
}

// ---- Python reprs of decoded JSON values ------------------------------------------------------

function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return isPyInt(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** Characters Python's `str.isprintable()` rejects (other than ASCII controls, handled apart). */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const hex = (cp: number, width: number): string => cp.toString(16).padStart(width, '0');
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${hex(cp, 2)}`;
    else if (cp > 0x7f && NON_PRINTABLE.test(ch)) out += cp < 0x100 ? `\\x${hex(cp, 2)}` : cp < 0x10000 ? `\\u${hex(cp, 4)}` : `\\U${hex(cp, 8)}`;
    else out += ch;
  }
  return out + quote;
}

/** Python's `repr()` of a value decoded from JSON. */
function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') {
    if (!isPyInt(v)) return pyFloatRepr(v);
    return Number.isSafeInteger(v) ? String(v) : BigInt(v).toString();
  }
  if (typeof v === 'string') return pyStrRepr(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  const entries = Object.entries(v as Record<string, unknown>).map(([k, x]) => `${pyStrRepr(k)}: ${pyRepr(x)}`);
  return `{${entries.join(', ')}}`;
}

/** pydantic-core shortens reprs over 50 UTF-8 bytes to their first 25 and last 24 bytes. */
function truncateRepr(repr: string): string {
  const bytes = Buffer.from(repr, 'utf8');
  if (bytes.length <= 50) return repr;
  const isContinuation = (i: number): boolean => ((bytes[i] ?? 0) & 0xc0) === 0x80;
  let head = 25;
  while (head > 0 && isContinuation(head)) head--;
  let tail = bytes.length - 24;
  while (tail < bytes.length && isContinuation(tail)) tail++;
  return `${bytes.subarray(0, head).toString('utf8')}...${bytes.subarray(tail).toString('utf8')}`;
}
