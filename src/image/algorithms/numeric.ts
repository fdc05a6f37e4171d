/**
 * numpy's scalar semantics that the algorithms depend on to be byte-exact with TiTiler: the C cast
 * of floats to uint8, `numpy.around` (half to even), float floor-modulo, and the "safe divide"
 * domain numpy.ma uses to mask divisions.
 */

/**
 * numpy's float → uint8 `astype` on x86-64: truncation toward zero through a 32-bit integer, whose
 * low byte is kept; NaN, ±Infinity and anything beyond the int32 range give 0.
 */
export function castToUint8(x: number): number {
  const t = Math.trunc(x);
  // NaN fails both comparisons and lands in the 0 branch too.
  return t >= -2147483648 && t <= 2147483647 ? t & 255 : 0;
}

/** `numpy.around(x)`: nearest integer, ties to even. */
export function roundHalfEven(x: number): number {
  if (!Number.isFinite(x)) return x;
  const floor = Math.floor(x);
  const diff = x - floor; // exact for every double
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** `numpy.remainder` for floats (Python's `%`): the result takes the divisor's sign; x % 0 is NaN. */
export function floorMod(a: number, b: number): number {
  const mod = a % b;
  if (b === 0 || mod === 0 || Number.isNaN(mod)) return mod;
  return b < 0 !== mod < 0 ? mod + b : mod;
}

/** `numpy.finfo(float).tiny`, the tolerance of numpy.ma's safe division. */
const FLOAT64_TINY = 2.2250738585072014e-308;

/**
 * numpy.ma masks a division `a / b` where `|a| * tiny >= |b|` (division by zero, or so close to it
 * that the quotient would overflow). NaN numerators or denominators are left unmasked.
 */
export function divisionMasked(a: number, b: number): boolean {
  return Math.abs(a) * FLOAT64_TINY >= Math.abs(b);
}
