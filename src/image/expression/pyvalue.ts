/**
 * Constants as numexpr sees them. numexpr builds its tree by running the expression as Python, so
 * a subtree made only of literals (`2**31`, `1/3`, `-True`) is computed by Python itself, with
 * Python's arbitrary-precision ints, true division, floor modulo and exceptions, before numexpr
 * ever types it. This module reproduces that arithmetic so constant subtrees fold to the same value
 * and, through `constantKind`, the same numexpr kind (int32 if it fits, else int64; floats are
 * float64; True/False are bool).
 */
import type { Kind } from './kinds.js';

/**
 * `numpy` marks a value that came out of a numpy function (np.int64, np.bool): arithmetic on it
 * gives np.int64, which numexpr types int64 whatever its size.
 */
export type PyValue =
  | { readonly type: 'bool'; readonly value: boolean; readonly numpy?: boolean }
  | { readonly type: 'int'; readonly value: bigint; readonly numpy?: boolean }
  | { readonly type: 'float'; readonly value: number };

/** A Python exception raised while folding constants (ZeroDivisionError, OverflowError, TypeError …). */
export class ConstantError extends Error {}

export const pyBool = (value: boolean, numpy = false): PyValue => (numpy ? { type: 'bool', value, numpy } : { type: 'bool', value });
export const pyInt = (value: bigint, numpy = false): PyValue => (numpy ? { type: 'int', value, numpy } : { type: 'int', value });
export const pyFloat = (value: number): PyValue => ({ type: 'float', value });

/** Intermediate ints are allowed to grow this large (Python has no limit; the final constant must fit 64 bits). */
const MAX_BITS = 4096n;
const INT_LIMIT = 1n << MAX_BITS;
const INT32_MIN = -(1n << 31n);
const INT32_MAX = (1n << 31n) - 1n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

const isNumpy = (...vs: PyValue[]): boolean => vs.some((v) => v.type !== 'float' && v.numpy === true);

function checkedInt(value: bigint, numpy: boolean): PyValue {
  if (value >= INT_LIMIT || value <= -INT_LIMIT) throw new ConstantError('integer constant too large');
  return pyInt(value, numpy);
}

/** Python's int() view of a bool or int (floats are not ints). */
function asBigInt(v: PyValue): bigint | undefined {
  if (v.type === 'bool') return v.value ? 1n : 0n;
  if (v.type === 'int') return v.value;
  return undefined;
}

/** Python's float(x): ints too large for a double raise OverflowError. */
export function asFloat(v: PyValue): number {
  if (v.type === 'float') return v.value;
  if (v.type === 'bool') return v.value ? 1 : 0;
  const f = Number(v.value);
  if (!Number.isFinite(f)) throw new ConstantError('int too large to convert to float');
  return f;
}

/** The number a constant contributes to arrays (bool → 0/1). */
export function toNumber(v: PyValue): number {
  if (v.type === 'bool') return v.value ? 1 : 0;
  if (v.type === 'int') return Number(v.value);
  return v.value;
}

/** Python truthiness (numexpr's `where` with a constant condition picks a branch by it). */
export function isTruthy(v: PyValue): boolean {
  if (v.type === 'bool') return v.value;
  if (v.type === 'int') return v.value !== 0n;
  return v.value !== 0; // NaN is truthy, as in Python
}

/** numexpr's `getKind` of a constant, or the OverflowError it raises converting a too-large int. */
export function constantKind(v: PyValue): Kind {
  if (v.type === 'bool') return 'bool';
  if (v.type === 'float') return 'double';
  if (v.value < INT64_MIN || v.value > INT64_MAX) throw new ConstantError(`integer constant ${v.value} does not fit in 64 bits`);
  if (v.numpy === true) return 'long';
  return v.value >= INT32_MIN && v.value <= INT32_MAX ? 'int' : 'long';
}

export type UnaryOp = '-' | '+' | '~';
export type ArithmeticOp = '+' | '-' | '*' | '/' | '//' | '%' | '**' | '<<' | '>>' | '&' | '|' | '^';
export type CompareOp = '<' | '<=' | '==' | '!=' | '>=' | '>';

export function unaryOp(op: UnaryOp, v: PyValue): PyValue {
  if (v.type === 'float') {
    if (op === '~') throw new ConstantError("bad operand type for unary ~: 'float'");
    return pyFloat(op === '-' ? -v.value : v.value);
  }
  if (v.type === 'bool' && v.numpy === true) {
    // np.bool: `~` is logical not, `-` is refused, `+` keeps the bool.
    if (op === '-') throw new ConstantError('the numpy boolean negative is not supported');
    return op === '~' ? pyBool(!v.value, true) : v;
  }
  const i = asBigInt(v)!;
  const numpy = isNumpy(v);
  if (op === '-') return pyInt(-i, numpy);
  if (op === '+') return pyInt(i, numpy);
  return pyInt(~i, numpy);
}

export function compareOp(op: CompareOp, a: PyValue, b: PyValue): PyValue {
  const ai = asBigInt(a);
  const bi = asBigInt(b);
  if (ai !== undefined && bi !== undefined) return pyBool(compare(op, ai < bi ? -1 : ai > bi ? 1 : 0));
  const x = toNumber(a);
  const y = toNumber(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return pyBool(op === '!=');
  return pyBool(compare(op, x < y ? -1 : x > y ? 1 : 0));
}

function compare(op: CompareOp, sign: number): boolean {
  switch (op) {
    case '<':
      return sign < 0;
    case '<=':
      return sign <= 0;
    case '==':
      return sign === 0;
    case '!=':
      return sign !== 0;
    case '>=':
      return sign >= 0;
    case '>':
      return sign > 0;
  }
}

export function binaryOp(op: ArithmeticOp, a: PyValue, b: PyValue): PyValue {
  const numpy = isNumpy(a, b);
  if (numpy && a.type === 'bool' && b.type === 'bool') {
    // np.bool arithmetic: + is or, * is and, - is refused.
    if (op === '+') return pyBool(a.value || b.value, true);
    if (op === '*') return pyBool(a.value && b.value, true);
    if (op === '-') throw new ConstantError('numpy boolean subtract is not supported');
  }
  if (op === '&' || op === '|' || op === '^') {
    if (a.type === 'bool' && b.type === 'bool') {
      return pyBool(op === '&' ? a.value && b.value : op === '|' ? a.value || b.value : a.value !== b.value, numpy);
    }
    const x = asBigInt(a);
    const y = asBigInt(b);
    if (x === undefined || y === undefined) throw new ConstantError(`unsupported operand type(s) for ${op}: 'float'`);
    return pyInt(op === '&' ? x & y : op === '|' ? x | y : x ^ y, numpy);
  }
  if (op === '<<' || op === '>>') {
    const x = asBigInt(a);
    const y = asBigInt(b);
    if (x === undefined || y === undefined) throw new ConstantError(`unsupported operand type(s) for ${op}: 'float'`);
    if (y < 0n) throw new ConstantError('negative shift count');
    if (op === '>>') return pyInt(y > MAX_BITS * 2n ? (x < 0n ? -1n : 0n) : x >> y, numpy);
    if (x !== 0n && y > MAX_BITS) throw new ConstantError('integer constant too large');
    return checkedInt(x << y, numpy);
  }
  if (op === '/') {
    const y = asFloat(b);
    if (y === 0) throw new ConstantError('division by zero');
    return pyFloat(asFloat(a) / y);
  }
  const x = asBigInt(a);
  const y = asBigInt(b);
  if (x !== undefined && y !== undefined) return intOp(op, x, y, numpy);
  return floatOp(op, asFloat(a), asFloat(b));
}

function intOp(op: '+' | '-' | '*' | '//' | '%' | '**', x: bigint, y: bigint, numpy: boolean): PyValue {
  switch (op) {
    case '+':
      return checkedInt(x + y, numpy);
    case '-':
      return checkedInt(x - y, numpy);
    case '*':
      return checkedInt(x * y, numpy);
    case '//': {
      if (y === 0n) throw new ConstantError('integer division or modulo by zero');
      const q = x / y;
      return pyInt(x % y !== 0n && x < 0n !== y < 0n ? q - 1n : q, numpy);
    }
    case '%': {
      if (y === 0n) throw new ConstantError('integer division or modulo by zero');
      const r = x % y;
      return pyInt(r !== 0n && r < 0n !== y < 0n ? r + y : r, numpy);
    }
    case '**':
      if (y < 0n) return floatOp('**', asFloat(pyInt(x)), asFloat(pyInt(y)));
      return checkedInt(intPower(x, y), numpy);
  }
}

function intPower(base: bigint, exponent: bigint): bigint {
  if (base === 0n || base === 1n) return exponent === 0n ? 1n : base;
  if (base === -1n) return exponent % 2n === 0n ? 1n : -1n;
  const magnitude = base < 0n ? -base : base;
  if (exponent * BigInt(magnitude.toString(2).length - 1) > MAX_BITS) throw new ConstantError('integer constant too large');
  return base ** exponent;
}

function floatOp(op: '+' | '-' | '*' | '//' | '%' | '**', x: number, y: number): PyValue {
  switch (op) {
    case '+':
      return pyFloat(x + y);
    case '-':
      return pyFloat(x - y);
    case '*':
      return pyFloat(x * y);
    case '//':
      if (y === 0) throw new ConstantError('float floor division by zero');
      return pyFloat(floatDivMod(x, y)[0]);
    case '%':
      if (y === 0) throw new ConstantError('float modulo');
      return pyFloat(floatDivMod(x, y)[1]);
    case '**':
      return pyFloat(floatPower(x, y));
  }
}

/** CPython's `_float_div_mod`: floor quotient and modulo with the divisor's sign. */
function floatDivMod(vx: number, wx: number): [number, number] {
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  if (mod !== 0) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1;
    }
  } else {
    mod = wx < 0 || Object.is(wx, -0) ? -0 : 0;
  }
  let floordiv: number;
  if (div !== 0) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
  } else {
    floordiv = vx / wx < 0 || Object.is(vx / wx, -0) ? -0 : 0;
  }
  return [floordiv, mod];
}

const isOddInteger = (w: number): boolean => Number.isInteger(w) && Math.abs(w % 2) === 1;

/** CPython's `float_pow`, with its exceptions (0.0 to a negative power, complex results, overflow). */
function floatPower(iv: number, iw: number): number {
  if (iw === 0) return 1;
  if (Number.isNaN(iv)) return iv;
  if (Number.isNaN(iw)) return iv === 1 ? 1 : iw;
  if (!Number.isFinite(iw)) {
    const av = Math.abs(iv);
    if (av === 1) return 1;
    return iw > 0 === av > 1 ? Infinity : 0;
  }
  if (!Number.isFinite(iv)) {
    const odd = isOddInteger(iw);
    if (iw > 0) return odd ? iv : Math.abs(iv);
    return odd ? (iv < 0 ? -0 : 0) : 0;
  }
  if (iv === 0) {
    if (iw < 0) throw new ConstantError('0.0 cannot be raised to a negative power');
    return isOddInteger(iw) ? iv : 0;
  }
  let negate = false;
  let base = iv;
  if (base < 0) {
    if (!Number.isInteger(iw)) throw new ConstantError('a negative number raised to a fractional power is complex');
    base = -base;
    negate = isOddInteger(iw);
  }
  if (base === 1) return negate ? -1 : 1;
  const result = Math.pow(base, iw);
  if (!Number.isFinite(result)) throw new ConstantError('numerical result out of range');
  return negate ? -result : result;
}
