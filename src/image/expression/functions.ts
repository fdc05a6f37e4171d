/**
 * The functions expressions may call, with numexpr's typing rules for each (numexpr 2.14, the
 * version TiTiler's environment resolves): ints go to float64 except for `round`/`sign`; bool and
 * float arguments are raised to the function's minimum kind (float32 for most, float64 for
 * `round`, `trunc`, `sign`, `hypot`, `copysign`, `nextafter`, `maximum`, `minimum`) and capped at its
 * maximum. Calls whose arguments are all constants are folded as numpy does on Python scalars.
 * `where` is not in this table: it is a ternary with its own rules (see typing.ts).
 */
import type { Kind } from './kinds.js';
import { ConstantError, pyBool, pyFloat, pyInt, asFloat, type PyValue } from './pyvalue.js';
import { copySign, nextAfter, rint, signBit, signOf } from './cmath.js';

export interface FunctionSpec {
  readonly name: string;
  readonly arity: 1 | 2;
  /** numexpr's minimum kind for bool and float arguments. */
  readonly minKind: Kind;
  /** numexpr's maximum kind (only `ceil`/`floor` have one). */
  readonly maxKind?: Kind;
  /** numexpr keeps int32/int64 arguments integer (the others are computed in float64). */
  readonly keepsIntegers?: boolean;
  /** The result is bool whatever the arguments. */
  readonly returnsBool?: boolean;
  /** numpy returns int64 for Python int arguments (matters when folding constant calls). */
  readonly numpyKeepsIntegers?: boolean;
  /** The scalar computation in float64, used to fold all-constant calls. */
  readonly scalar: (x: number, y: number) => number;
}

const unary = (name: string, scalar: (x: number) => number, extra: Partial<FunctionSpec> = {}): FunctionSpec => ({
  name,
  arity: 1,
  minKind: 'float',
  scalar: (x) => scalar(x),
  ...extra,
});

const binary = (name: string, scalar: (x: number, y: number) => number, extra: Partial<FunctionSpec> = {}): FunctionSpec => ({
  name,
  arity: 2,
  minKind: 'float',
  scalar,
  ...extra,
});

const SPECS: FunctionSpec[] = [
  unary('sin', Math.sin),
  unary('cos', Math.cos),
  unary('tan', Math.tan),
  unary('arcsin', Math.asin),
  unary('arccos', Math.acos),
  unary('arctan', Math.atan),
  binary('arctan2', Math.atan2),
  unary('sinh', Math.sinh),
  unary('cosh', Math.cosh),
  unary('tanh', Math.tanh),
  unary('arcsinh', Math.asinh),
  unary('arccosh', Math.acosh),
  unary('arctanh', Math.atanh),
  unary('log', Math.log),
  unary('log10', Math.log10),
  unary('log1p', Math.log1p),
  unary('log2', Math.log2),
  unary('exp', Math.exp),
  unary('expm1', Math.expm1),
  unary('sqrt', Math.sqrt),
  unary('abs', Math.abs, { numpyKeepsIntegers: true }),
  unary('ceil', Math.ceil, { maxKind: 'double', numpyKeepsIntegers: true }),
  unary('floor', Math.floor, { maxKind: 'double', numpyKeepsIntegers: true }),
  unary('trunc', Math.trunc, { minKind: 'double', numpyKeepsIntegers: true }),
  unary('round', rint, { minKind: 'double', keepsIntegers: true, numpyKeepsIntegers: true }),
  unary('sign', signOf, { minKind: 'double', keepsIntegers: true, numpyKeepsIntegers: true }),
  binary('fmod', (x, y) => x % y, { numpyKeepsIntegers: true }),
  binary('hypot', Math.hypot, { minKind: 'double' }),
  binary('copysign', copySign, { minKind: 'double' }),
  binary('nextafter', nextAfter, { minKind: 'double' }),
  binary('maximum', Math.max, { minKind: 'double', numpyKeepsIntegers: true }),
  binary('minimum', Math.min, { minKind: 'double', numpyKeepsIntegers: true }),
  unary('isnan', (x) => (Number.isNaN(x) ? 1 : 0), { minKind: 'double', returnsBool: true }),
  unary('isinf', (x) => (x === Infinity || x === -Infinity ? 1 : 0), { minKind: 'double', returnsBool: true }),
  unary('isfinite', (x) => (Number.isFinite(x) ? 1 : 0), { minKind: 'double', returnsBool: true }),
  unary('signbit', signBit, { minKind: 'double', returnsBool: true }),
];

export const FUNCTIONS: ReadonlyMap<string, FunctionSpec> = new Map(SPECS.map((s) => [s.name, s]));

/** Every callable name, for messages. */
export const FUNCTION_NAMES: readonly string[] = ['where', ...SPECS.map((s) => s.name)];

export const isFunctionName = (name: string): boolean => name === 'where' || FUNCTIONS.has(name);

/**
 * numexpr folds a call whose arguments are all constants by calling the numpy function on them:
 * Python ints stay integers (np.int64, typed int64 by numexpr) for the integer-preserving
 * functions, everything else becomes np.float64 (or np.bool for the predicates).
 * Simplification: True/False arguments are treated as the ints 1/0.
 */
export function foldCall(spec: FunctionSpec, args: readonly PyValue[]): PyValue {
  const allInts = args.every((a) => a.type !== 'float');
  if (spec.returnsBool) return pyBool(spec.scalar(asFloat(args[0]!), 0) === 1, true);
  if (allInts && spec.numpyKeepsIntegers) return pyInt(foldIntegerCall(spec.name, args.map(asBigInt)), true);
  const x = asFloat(args[0]!);
  const y = args[1] === undefined ? 0 : asFloat(args[1]);
  return pyFloat(spec.scalar(x, y));
}

function asBigInt(v: PyValue): bigint {
  if (v.type === 'bool') return v.value ? 1n : 0n;
  if (v.type === 'int') return v.value;
  throw new ConstantError('internal: float given to an integer fold');
}

function foldIntegerCall(name: string, args: readonly bigint[]): bigint {
  const x = args[0]!;
  const y = args[1] ?? 0n;
  switch (name) {
    case 'abs':
      return x < 0n ? -x : x;
    case 'sign':
      return x > 0n ? 1n : x < 0n ? -1n : 0n;
    case 'fmod':
      return y === 0n ? 0n : x % y; // numpy: C fmod's sign (the dividend's); by zero gives 0
    case 'maximum':
      return x > y ? x : y;
    case 'minimum':
      return x < y ? x : y;
    default:
      return x; // round, floor, ceil, trunc of an integer
  }
}
