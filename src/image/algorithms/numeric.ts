/**
 * numpy's scalar semantics that the algorithms depend on to be byte-exact with TiTiler: the C cast
 * of floats to uint8 (and of any dtype), `numpy.around` (half to even), float floor-modulo, the
 * "safe divide" domain numpy.ma uses to mask divisions, numpy.ma's default fill values and the dtype
 * numpy's `sum` accumulates in.
 */
import type { DType } from '../image-data.js';

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

/**
 * numpy's `astype(uint8)` from any dtype: floats as `castToUint8`, integers keep their low byte
 * (two's complement), bools are 0 or 1.
 */
export function toUint8(x: number, dtype: DType): number {
  if (dtype === 'float32' || dtype === 'float64') return castToUint8(x);
  const low = x % 256; // exact for every integral double
  return low < 0 ? low + 256 : low + 0;
}

/**
 * numpy.ma's default fill value cast to the dtype: what a reduction (`min`, `max`) leaves in pixels
 * where every band is masked. 999999 for integers (wrapped to the type), 1e20 for floats, True for bools.
 */
export function defaultFillValue(dtype: DType): number {
  switch (dtype) {
    case 'bool':
      return 1;
    case 'float32':
      return Math.fround(1e20);
    case 'float64':
      return 1e20;
    case 'uint8':
      return 999999 % 256;
    case 'int8': {
      const v = 999999 % 256;
      return v >= 128 ? v - 256 : v;
    }
    case 'uint16':
    case 'int16':
      return 999999 % 65536; // 16959 < 32768: the same in both
    default:
      return 999999;
  }
}

/** The dtype numpy's `sum` accumulates in: the platform's int64/uint64 for integers, the dtype itself for floats. */
export function sumDtype(dtype: DType): DType {
  switch (dtype) {
    case 'float32':
    case 'float64':
      return dtype;
    case 'uint8':
    case 'uint16':
    case 'uint32':
    case 'uint64':
      return 'uint64';
    default:
      return 'int64';
  }
}
