/**
 * The `rescale` post-processing step (TiTiler's `rescale=min,max`, rio-tiler's `rescale_image`):
 * each band is stretched linearly from its range to 0–255 and the image becomes uint8.
 *
 * Byte-exact with numpy 2 as rio-tiler 6.8 runs it. What that takes:
 * - the stretch is `(clip(v, min, max) - min) / (max - min) * 255` in float64, except that for
 *   float32 bands numpy clips and subtracts in float32 (the Python-float bounds are "weak"
 *   scalars), and only the division is float64;
 * - the stretched value is first written back into the band's own dtype (float32 rounds, integers
 *   truncate, bool becomes 0/1), then cast to uint8, both with numpy's C casts (`castToUint8`);
 * - masked pixels become 0 and the masks are kept as they are;
 * - min == max divides 0 by 0: NaN, which both casts turn into 0, so such a band is all zeros;
 *   min > max clips everything to max, (max - min) / (max - min) = 1, so the band is all 255;
 *   a NaN bound makes every value NaN, so all zeros.
 */
import { allocate, type BandArray, type ImageData } from './image-data.js';

/**
 * numpy's float → uint8 `astype` on x86-64: truncation toward zero through a 32-bit integer, of which
 * the low byte is kept; NaN, ±Infinity and anything beyond the int32 range give 0.
 */
export function castToUint8(x: number): number {
  const t = Math.trunc(x);
  // NaN fails both comparisons and lands in the 0 branch too.
  return t >= -2147483648 && t <= 2147483647 ? t & 255 : 0;
}

/**
 * Rescales every band to uint8. `ranges` holds one [min, max] per band, or else its first range is
 * used for every band (as TiTiler does whenever the counts differ). An empty list changes nothing:
 * TiTiler skips the step then.
 */
export function applyRescale(img: ImageData, ranges: ReadonlyArray<readonly [number, number]>): ImageData {
  const first = ranges[0];
  if (first === undefined) return img;
  const perBand = ranges.length === img.bands.length;
  const bands = img.bands.map((band, b) => {
    const [min, max] = perBand ? ranges[b]! : first;
    const out = allocate('uint8', band.length) as Uint8Array;
    const mask = img.masks[b]!;
    if (band instanceof Uint16Array) applyLutUint16(band, mask, lookupTable(img.dtype, band, min, max), out);
    else if (band instanceof Uint8Array) applyLutUint8(band, mask, lookupTable(img.dtype, band, min, max), out);
    else if (band instanceof Int8Array || band instanceof Int16Array) applyLutSigned(band, mask, lookupTable(img.dtype, band, min, max), out);
    else if (img.dtype === 'float32') rescaleFloat32(band, mask, min, max, out);
    else if (band instanceof Float64Array && img.dtype === 'float64') rescaleDoubles(band, mask, min, max, out);
    else rescaleFloat64(band, mask, min, max, out, img.dtype === 'bool');
    return out;
  });
  return { ...img, dtype: 'uint8', bands, masks: img.masks };
}

/**
 * 8- and 16-bit bands: every possible value's result, computed once by the float64 path itself and
 * kept for the next tile with the same range (a map session rescales thousands of tiles alike), so
 * a pixel costs one table lookup.
 */
const LUTS = new Map<string, Uint8Array>();
const MAX_LUTS = 64;

function lookupTable(dtype: string, band: Uint8Array | Uint16Array | Int8Array | Int16Array, min: number, max: number): Uint8Array {
  const key = `${dtype}|${band.constructor.name}|${min}|${max}`;
  let lut = LUTS.get(key);
  if (lut) {
    LUTS.delete(key);
    LUTS.set(key, lut);
    return lut;
  }
  const bits = band.BYTES_PER_ELEMENT * 8;
  const size = 2 ** bits;
  // Index i stands for the value i (unsigned) or i - size/2 (signed, offset so indexes stay >= 0).
  const signed = band instanceof Int8Array || band instanceof Int16Array;
  const values = new Float64Array(size);
  for (let i = 0; i < size; i++) values[i] = signed ? i - size / 2 : i;
  lut = new Uint8Array(size);
  rescaleFloat64(values, new Uint8Array(size).fill(255), min, max, lut, dtype === 'bool');
  if (LUTS.size >= MAX_LUTS) LUTS.delete(LUTS.keys().next().value!);
  LUTS.set(key, lut);
  return lut;
}

// One loop per band type: a loop that has seen both reads its band through a type check per pixel
// (the table lookups of an RGB tile took ~6% of the server's CPU so).
function applyLutUint16(band: Uint16Array, mask: Uint8Array, lut: Uint8Array, out: Uint8Array): void {
  const n = band.length;
  for (let i = 0; i < n; i++) out[i] = mask[i] === 0 ? 0 : lut[band[i]!]!;
}

function applyLutUint8(band: Uint8Array, mask: Uint8Array, lut: Uint8Array, out: Uint8Array): void {
  const n = band.length;
  for (let i = 0; i < n; i++) out[i] = mask[i] === 0 ? 0 : lut[band[i]!]!;
}

function applyLutSigned(band: Int8Array | Int16Array, mask: Uint8Array, lut: Uint8Array, out: Uint8Array): void {
  const offset = lut.length / 2;
  for (let i = 0; i < band.length; i++) out[i] = mask[i] === 0 ? 0 : lut[band[i]! + offset]!;
}

/** Integer, bool and float64 bands: the whole stretch in float64, then the dtype's write-back. */
function rescaleFloat64(band: BandArray, mask: Uint8Array, min: number, max: number, out: Uint8Array, isBool: boolean): void {
  const span = max - min;
  const nanBounds = Number.isNaN(min) || Number.isNaN(max);
  for (let i = 0; i < band.length; i++) {
    if (mask[i] === 0 || nanBounds) {
      out[i] = 0;
      continue;
    }
    let v = band[i]!;
    // numpy.clip = minimum(maximum(v, min), max): NaN stays NaN, min > max gives max.
    if (v < min) v = min;
    if (v > max) v = max;
    const scaled = ((v - min) / span) * 255;
    // Written back into a bool band, any non-zero value (NaN included) is True.
    out[i] = isBool ? (scaled === 0 ? 0 : 1) : castToUint8(scaled);
  }
}

/**
 * float64 bands (expression results): rescaleFloat64's arithmetic in a loop that only ever sees
 * Float64Array data (the generic one also runs over int32 and bool bands and table building, and
 * was ~3× slower for it).
 */
function rescaleDoubles(band: Float64Array, mask: Uint8Array, min: number, max: number, out: Uint8Array): void {
  if (Number.isNaN(min) || Number.isNaN(max)) {
    out.fill(0);
    return;
  }
  const span = max - min;
  for (let i = 0; i < band.length; i++) {
    let v = band[i]!;
    v = v < min ? min : v;
    v = v > max ? max : v;
    // Clipped, (v - min) / span is in [0, 1] (exactly 1 when min > max) or NaN (0/0, inf/inf), so
    // the scaled value is in [0, 255] or NaN, where `| 0` is castToUint8.
    out[i] = mask[i] === 0 ? 0 : (((v - min) / span) * 255) | 0;
  }
}

/** float32 bands: numpy clips and subtracts in float32 and stores the result as float32. */
function rescaleFloat32(band: BandArray, mask: Uint8Array, min: number, max: number, out: Uint8Array): void {
  const span = max - min;
  const min32 = Math.fround(min);
  const max32 = Math.fround(max);
  const nanBounds = Number.isNaN(min) || Number.isNaN(max);
  for (let i = 0; i < band.length; i++) {
    if (mask[i] === 0 || nanBounds) {
      out[i] = 0;
      continue;
    }
    let v = band[i]!;
    if (v < min32) v = min32;
    if (v > max32) v = max32;
    const shifted = Math.fround(v - min32);
    out[i] = castToUint8(Math.fround((shifted / span) * 255));
  }
}
