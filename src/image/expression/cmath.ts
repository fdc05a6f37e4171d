/**
 * Scalar helpers with the C library's semantics where JavaScript's Math differs (pow's special
 * cases, rint's ties-to-even, copysign, nextafter, numexpr's sign). Kernels call them per element;
 * they are small, allocation-free and monomorphic so V8 inlines them.
 */

/** C `pow`: unlike Math.pow, 1**y is 1 for every y (NaN too) and (-1)**±inf is 1. */
export function cPow(x: number, y: number): number {
  if (x === 1) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return Math.pow(x, y);
}

/** C `rint` in the default rounding mode: halves go to the even neighbour (numpy's `round`). */
export function rint(x: number): number {
  const r = Math.round(x); // halves go up
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** numexpr's `sign` for floats: NaN stays NaN, both zeros give +0. */
export function signOf(x: number): number {
  if (x > 0) return 1;
  if (x < 0) return -1;
  return x === 0 ? 0 : NaN;
}

function isNegativeZeroOrLess(y: number): boolean {
  return y < 0 || (y === 0 && 1 / y < 0);
}

/** C `copysign` (the sign of a NaN cannot be read in JavaScript; NaN counts as positive). */
export function copySign(x: number, y: number): number {
  const m = Math.abs(x);
  return isNegativeZeroOrLess(y) ? -m : m;
}

const F64 = new Float64Array(1);
const U32 = new Uint32Array(F64.buffer);
/** Index of the high word of a double in U32 (every platform Node runs on is little-endian). */
const HI = 1;
const LO = 0;

/** C `nextafter` on doubles: the next representable value after x towards y. */
export function nextAfter(x: number, y: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === y) return y;
  if (x === 0) return y > 0 ? Number.MIN_VALUE : -Number.MIN_VALUE;
  F64[0] = x;
  let lo = U32[LO]!;
  let hi = U32[HI]!;
  if (y > x === x > 0) {
    lo = (lo + 1) >>> 0;
    if (lo === 0) hi = (hi + 1) >>> 0;
  } else {
    if (lo === 0) hi = (hi - 1) >>> 0;
    lo = (lo - 1) >>> 0;
  }
  U32[LO] = lo;
  U32[HI] = hi;
  return F64[0]!;
}

/** C `signbit` (NaN's sign bit is not observable in JavaScript; reported as positive). */
export function signBit(x: number): number {
  return isNegativeZeroOrLess(x) ? 1 : 0;
}
