/**
 * The `color_formula` post-processing step: rio-color's little language (`Gamma RGB 3.5 Saturation
 * 1.7 Sigmoidal RGB 15 0.35`) as color-operations 0.1 parses and applies it for rio-tiler 6.8.
 *
 * Application follows rio-tiler's `apply_color_formula`: negative values become 0, then for each
 * operation the whole image is scaled to 0..1 by the maximum of its current integer dtype, the
 * operation changes the bands it names, and every band goes back to uint8 as `trunc(x * 255)`.
 * After the first operation the image is uint8. Masks are kept.
 *
 * Where TiTiler fails with a 500 (a Python exception while applying), we refuse with a 400 up front:
 * malformed formulas, bands the image does not have, and float data ("Invalid integer data type"
 * in color-operations) — the client has to `rescale` float data first.
 */
import { badRequest } from '../errors.js';
import { DTYPE_RANGE, allocate, isFloat, type BandArray, type ImageData } from './image-data.js';
import { castToUint8 } from './rescale.js';

export type ColorOperation =
  /** out = in^(1/g) on each listed band (1-based, within 1..3). */
  | { op: 'gamma'; bands: number[]; g: number }
  /** Sigmoidal contrast centred on `bias` (0..1) with strength `contrast` (< 0 is the inverse curve). */
  | { op: 'sigmoidal'; bands: number[]; contrast: number; bias: number }
  /** Chroma × proportion in CIE LCh, on bands 1–3 together. */
  | { op: 'saturation'; proportion: number };

type OpName = ColorOperation['op'];

const OP_NAMES: ReadonlySet<string> = new Set<OpName>(['gamma', 'sigmoidal', 'saturation']);
const ARG_NAMES: Record<OpName, readonly string[]> = {
  gamma: ['g'],
  sigmoidal: ['contrast', 'bias'],
  saturation: ['proportion'],
};
const BAND_LETTERS: Record<string, number> = { r: 1, g: 2, b: 3 };

/** numpy.finfo(float64).eps: color-operations' tolerance on the 0..1 bounds. */
const EPSILON = 2.220446049250313e-16;

const label = (op: string): string => op.charAt(0).toUpperCase() + op.slice(1);

// ---- parsing -------------------------------------------------------------------------------------

/**
 * Parses a formula as color-operations' `parse_operations` does (commas dropped, split on single
 * spaces, operation names and band letters case-insensitive). An empty string is no operation at
 * all (TiTiler skips an empty `color_formula`). Any mistake is a 400 naming what is wrong.
 */
export function parseColorFormula(text: string): ColorOperation[] {
  if (text === '') return [];
  const tokens = text
    .replace(/,/g, '')
    .split(' ')
    .map((t) => t.trim().toLowerCase());
  const groups: string[][] = [];
  for (const token of tokens) {
    if (token === '') {
      throw badRequest(`Invalid color_formula '${text}': empty item (two spaces in a row, or a leading or trailing space)`);
    }
    if (OP_NAMES.has(token)) groups.push([token]);
    else if (groups.length === 0) {
      throw badRequest(`Invalid color_formula '${text}': '${token}' is not a valid operation (use Gamma, Sigmoidal or Saturation)`);
    } else groups[groups.length - 1]!.push(token);
  }
  return groups.map((group) => parseOperation(group, text));
}

function parseOperation(group: string[], text: string): ColorOperation {
  const op = group[0] as OpName;
  const invalid = (why: string): Error => badRequest(`Invalid color_formula '${text}': ${label(op)} ${why}`);
  // Saturation takes no band list: it always acts on bands 1-3.
  const bandSpec = op === 'saturation' ? '' : group[1];
  if (bandSpec === undefined) throw invalid('needs a band list (such as RGB or 12) and its values');
  const argTokens = group.slice(op === 'saturation' ? 1 : 2);
  const wanted = ARG_NAMES[op];
  if (argTokens.length < wanted.length) {
    throw invalid(`needs ${wanted.length === 1 ? 'a value' : `${wanted.length} values`} (${wanted.join(', ')}), got ${argTokens.length}`);
  }
  // Python converts every argument with float() and ignores the ones beyond what the operation takes.
  const args = argTokens.map((t) => {
    const v = parsePythonFloat(t);
    if (v === undefined || Number.isNaN(v)) throw invalid(`value '${t}' is not a number`);
    return v;
  });
  const first = args[0]!;

  if (op === 'saturation') return { op, proportion: first };
  const bands = parseBands(bandSpec, invalid);
  if (op === 'gamma') {
    if (!(first > 0)) throw invalid(`value must be greater than 0, got ${argTokens[0]!}`);
    return { op, bands, g: first };
  }
  const bias = args[1]!;
  if (bias > 1 + EPSILON || bias < -EPSILON) throw invalid(`bias must be between 0 and 1, got ${argTokens[1]!}`);
  return { op, bands, contrast: first, bias };
}

function parseBands(spec: string, invalid: (why: string) => Error): number[] {
  const bands = new Set<number>();
  for (const ch of spec) {
    const band = ch >= '0' && ch <= '9' ? Number(ch) : BAND_LETTERS[ch];
    if (band === undefined) throw invalid(`band list '${spec}' has '${ch}': use R, G, B or 1, 2, 3`);
    if (band < 1 || band > 3) throw invalid(`band must be between 1 and 3, got ${band}`);
    bands.add(band);
  }
  return [...bands].sort((a, b) => a - b);
}

const PY_DIGITS = '\\d(?:_?\\d)*';
/** Python float() literals (lower-cased): `1`, `1.`, `.5`, `1_000.25e-3`, … */
const PY_FLOAT = new RegExp(`^[+-]?(?:${PY_DIGITS}(?:\\.(?:${PY_DIGITS})?)?|\\.${PY_DIGITS})(?:e[+-]?${PY_DIGITS})?$`);
const PY_SPECIAL_FLOAT = /^([+-]?)(inf|infinity|nan)$/;

/** Python's float() on a stripped, lower-cased token; undefined where Python raises. */
function parsePythonFloat(token: string): number | undefined {
  const special = PY_SPECIAL_FLOAT.exec(token);
  if (special) {
    if (special[2] === 'nan') return NaN;
    return special[1] === '-' ? -Infinity : Infinity;
  }
  return PY_FLOAT.test(token) ? Number(token.replace(/_/g, '')) : undefined;
}

// ---- application ---------------------------------------------------------------------------------

/**
 * Applies parsed operations to an integer image; returns a uint8 image with the same masks (an
 * empty list returns `img` itself). Refuses float/bool data and bands the image does not have.
 */
export function applyColorFormula(img: ImageData, ops: readonly ColorOperation[]): ImageData {
  if (ops.length === 0) return img;
  if (isFloat(img.dtype) || img.dtype === 'bool') {
    throw badRequest('color_formula needs integer data; use rescale first');
  }
  const count = img.bands.length;
  for (const op of ops) {
    const needed = op.op === 'saturation' ? 3 : Math.max(...op.bands);
    if (needed > count) {
      throw badRequest(
        op.op === 'saturation'
          ? `color_formula: Saturation needs 3 bands (red, green, blue), the image has ${count}`
          : `color_formula: ${label(op.op)} acts on band ${needed}, the image has ${count} band${count === 1 ? '' : 's'}`,
      );
    }
  }

  const out = img.bands.map((band) => allocate('uint8', band.length) as Uint8Array);
  // The first operation reads the original values (negatives as 0) scaled by the dtype's maximum;
  // later ones read the uint8 result of the one before, in place.
  let source: readonly BandArray[] = img.bands;
  let dtypeMax = DTYPE_RANGE[img.dtype][1];
  for (const op of ops) {
    if (op.op === 'saturation') {
      saturate(source, dtypeMax, op.proportion, out);
      for (let b = 3; b < count; b++) applyCurve(source[b]!, dtypeMax, identity, out[b]!);
    } else {
      const curve = op.op === 'gamma' ? gammaCurve(op.g) : sigmoidalCurve(op.contrast, op.bias);
      for (let b = 0; b < count; b++) {
        // A band the operation does not touch still goes through 0..1 and back to uint8.
        applyCurve(source[b]!, dtypeMax, op.bands.includes(b + 1) ? curve : identity, out[b]!);
      }
    }
    source = out;
    dtypeMax = 255;
  }
  return { ...img, dtype: 'uint8', bands: out, masks: img.masks };
}

/** What a per-band operation does to one value scaled to 0..1. */
type Curve = (x: number) => number;

const identity: Curve = (x) => x;

function gammaCurve(g: number): Curve {
  const exponent = 1.0 / g;
  // numpy's `array ** scalar` takes shortcuts for a few exponents; anything else is pow().
  if (exponent === 2) return (x) => x * x;
  if (exponent === 0.5) return Math.sqrt;
  if (exponent === 1) return identity;
  if (exponent === 0) return () => 1;
  return (x) => Math.pow(x, exponent);
}

/** color-operations' sigmoidal contrast, term for term (bias 0 becomes epsilon, contrast 0 is identity). */
function sigmoidalCurve(contrast: number, bias: number): Curve {
  const alpha = bias === 0 ? EPSILON : bias;
  const beta = contrast;
  if (beta === 0) return identity;
  const low = 1 / (1 + Math.exp(beta * alpha));
  if (beta > 0) {
    const denominator = 1 / (1 + Math.exp(beta * (alpha - 1))) - low;
    return (x) => (1 / (1 + Math.exp(beta * (alpha - x))) - low) / denominator;
  }
  const high = 1 + Math.exp(beta * alpha - beta);
  const mid = 1 + Math.exp(beta * alpha);
  const betaAlpha = beta * alpha;
  return (x) => (betaAlpha - Math.log(1 / (x / high - x / mid + 1 / mid) - 1)) / beta;
}

/** Integer arrays with few enough values to compute each once: the lowest value and how many. */
function valueDomain(src: BandArray): { lowest: number; size: number } | undefined {
  if (src instanceof Uint8Array) return { lowest: 0, size: 256 };
  if (src instanceof Int8Array) return { lowest: -128, size: 256 };
  if (src instanceof Uint16Array) return { lowest: 0, size: 65536 };
  if (src instanceof Int16Array) return { lowest: -32768, size: 65536 };
  return undefined;
}

/**
 * dst = trunc(curve(max(v, 0) / dtypeMax) × 255) as uint8. For 8- and 16-bit data each possible
 * value is computed once into a table (the same arithmetic, so the same bytes); wider integers are
 * computed pixel by pixel.
 */
function applyCurve(src: BandArray, dtypeMax: number, curve: Curve, dst: Uint8Array): void {
  const domain = valueDomain(src);
  if (domain !== undefined && domain.size <= src.length * 4) {
    const table = new Uint8Array(domain.size);
    for (let k = 0; k < domain.size; k++) {
      const v = domain.lowest + k;
      table[k] = castToUint8(curve((v < 0 ? 0 : v) / dtypeMax) * 255);
    }
    const offset = -domain.lowest;
    for (let i = 0; i < src.length; i++) dst[i] = table[src[i]! + offset]!;
    return;
  }
  for (let i = 0; i < src.length; i++) {
    const v = src[i]!;
    dst[i] = castToUint8(curve((v < 0 ? 0 : v) / dtypeMax) * 255);
  }
}

// ---- saturation (CIE LCh), as color-operations' compiled colorspace module computes it ------------

// Lab constants as Cython evaluated them at build time (t0 and K are C pow results; JavaScript's
// `**` differs in the last digit for K, so they are written out).
const B_INTERCEPT = 4.0 / 29;
const DELTA = 6.0 / 29;
const T0 = 0.008856451679035631;
const K = 7.787037037037037;
const XN = 0.95047;
const ZN = 1.08883;

/** sRGB companded 0..1 → linear. */
function linearise(c: number): number {
  return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
}

/**
 * Linear → sRGB companded, clamped to 0..1, then × 255 truncated to a byte: the last step of every
 * saturated pixel. The byte is a non-decreasing function of the linear value, so it is found among
 * 255 precomputed thresholds (the smallest linear value giving each byte, found once by bisection
 * with the same arithmetic) instead of a pow() per channel and pixel.
 */
function compandedByte(c: number): number {
  const v = c <= 0.0031308 ? 12.92 * c : 1.055 * Math.pow(c, 1 / 2.4) - 0.055;
  return castToUint8((v > 1.0 ? 1.0 : v < 0.0 ? 0.0 : v) * 255);
}

let byteThresholds: Float64Array | undefined;

/** thresholds[k] = the smallest double c with compandedByte(c) ≥ k (k = 1..255). */
function compandThresholds(): Float64Array {
  if (byteThresholds) return byteThresholds;
  const thresholds = new Float64Array(256);
  thresholds[0] = -Infinity;
  for (let k = 1; k < 256; k++) {
    let lo = 0; // compandedByte(lo) < k
    let hi = 1; // compandedByte(hi) ≥ k
    for (;;) {
      const mid = lo + (hi - lo) / 2;
      if (mid === lo || mid === hi) break;
      if (compandedByte(mid) >= k) hi = mid;
      else lo = mid;
    }
    thresholds[k] = hi;
  }
  byteThresholds = thresholds;
  return thresholds;
}

/** compandedByte(c) by binary search over the thresholds; NaN gives 0 as the cast does. */
function companded(c: number, thresholds: Float64Array): number {
  if (c !== c) return 0;
  let lo = 0;
  let hi = 255;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (thresholds[mid]! <= c) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// pow(x, 3) and pow(x, 1/3) correctly rounded, from double-double products (Dekker's splitting,
// no FMA needed). The C library's pow() is correctly rounded in all but about 0.1% of cases;
// V8's Math.pow in about 90% and is slow for these exponents.
const SPLITTER = 134217729; // 2^27 + 1

/** The rounding error of p = a * b: a * b = p + error exactly. */
function productError(a: number, b: number, p: number): number {
  let c = SPLITTER * a;
  const ah = c - (c - a);
  const al = a - ah;
  c = SPLITTER * b;
  const bh = c - (c - b);
  const bl = b - bh;
  return ah * bh - p + ah * bl + al * bh + al * bl;
}

function cube(t: number): number {
  const sq = t * t;
  const sqError = productError(t, t, sq);
  const cu = sq * t;
  return cu + (productError(sq, t, cu) + sqError * t);
}

/** 1/3 minus THIRD (the double nearest 1/3): x^THIRD = x^(1/3) · x^-THIRD_GAP. */
const THIRD_GAP = 1 / (3 * 2 ** 54);

/** x ** THIRD for x > 0: one Newton step on Math.cbrt in double-double, then the exponent's gap. */
function powThird(x: number): number {
  const y = Math.cbrt(x);
  const sq = y * y;
  const sqError = productError(y, y, sq);
  const cu = sq * y;
  const residual = x - cu - (productError(sq, y, cu) + sqError * y);
  return y + (residual / (3 * sq) - y * Math.log(x) * THIRD_GAP);
}

/** Entries of the saturation cache (a power of two) and the hash shift that indexes them. */
const CACHE_SIZE = 1 << 14;
const CACHE_SHIFT = 32 - 14;

const linearTables = new Map<string, Float64Array>();

/**
 * The linear value of every possible value of an 8- or 16-bit band (negatives as 0), kept: there
 * are only a few (dtype, scale) pairs.
 */
function linearTable(domain: { lowest: number; size: number }, dtypeMax: number): Float64Array {
  const key = `${domain.lowest}:${domain.size}:${dtypeMax}`;
  let table = linearTables.get(key);
  if (table === undefined) {
    table = new Float64Array(domain.size);
    for (let k = 0; k < domain.size; k++) {
      const v = domain.lowest + k;
      table[k] = linearise((v < 0 ? 0 : v) / dtypeMax);
    }
    linearTables.set(key, table);
  }
  return table;
}

/**
 * RGB → XYZ → Lab → LCh, chroma × proportion, and back, clamped to 0..1, pixel by pixel over
 * bands 1–3 of `src`, written to bands 1–3 of `dst` (which may be `src`: each pixel's three values
 * are read before any is written). The bands share one dtype.
 */
function saturate(src: readonly BandArray[], dtypeMax: number, proportion: number, dst: Uint8Array[]): void {
  const [rs, gs, bs] = [src[0]!, src[1]!, src[2]!];
  const [rd, gd, bd] = [dst[0]!, dst[1]!, dst[2]!];
  const n = rs.length;
  const thresholds = compandThresholds();
  const domain = valueDomain(rs);
  if (domain !== undefined && domain.size <= n * 4) {
    // One table serves the three bands: linearisation depends on the value only. Images repeat
    // colours a lot, so results are remembered per (r, g, b) in a direct-mapped cache.
    const table = linearTable(domain, dtypeMax);
    const offset = -domain.lowest;
    const cacheKeys = new Float64Array(CACHE_SIZE).fill(-1);
    const cached = new Uint8Array(CACHE_SIZE * 3);
    for (let i = 0; i < n; i++) {
      const r = rs[i]! + offset;
      const g = gs[i]! + offset;
      const b = bs[i]! + offset;
      const key = r * 4294967296 + g * 65536 + b;
      const slot = (Math.imul(r, 0x9e3779b1) ^ Math.imul(g, 0x85ebca77) ^ Math.imul(b, 0xc2b2ae3d)) >>> CACHE_SHIFT;
      if (cacheKeys[slot] === key) {
        rd[i] = cached[slot * 3]!;
        gd[i] = cached[slot * 3 + 1]!;
        bd[i] = cached[slot * 3 + 2]!;
        continue;
      }
      saturatePixel(table[r]!, table[g]!, table[b]!, proportion, rd, gd, bd, i, thresholds);
      cacheKeys[slot] = key;
      cached[slot * 3] = rd[i]!;
      cached[slot * 3 + 1] = gd[i]!;
      cached[slot * 3 + 2] = bd[i]!;
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const r = rs[i]!;
    const g = gs[i]!;
    const b = bs[i]!;
    saturatePixel(
      linearise((r < 0 ? 0 : r) / dtypeMax),
      linearise((g < 0 ? 0 : g) / dtypeMax),
      linearise((b < 0 ? 0 : b) / dtypeMax),
      proportion,
      rd,
      gd,
      bd,
      i,
      thresholds,
    );
  }
}

/** One pixel from linear RGB: the colorspace module's RGB → LCh → RGB round trip. */
function saturatePixel(
  rl: number,
  gl: number,
  bl: number,
  proportion: number,
  rd: Uint8Array,
  gd: Uint8Array,
  bd: Uint8Array,
  i: number,
  thresholds: Float64Array,
): void {
  // linear RGB → XYZ (D65, normalised by the reference white)
  const x = (rl * 0.4124564 + gl * 0.3575761 + bl * 0.1804375) / XN;
  const y = rl * 0.2126729 + gl * 0.7151522 + bl * 0.072175;
  const z = (rl * 0.0193339 + gl * 0.119192 + bl * 0.9503041) / ZN;

  // XYZ → Lab → LCh
  const fx = x > T0 ? powThird(x) : K * x + B_INTERCEPT;
  const fy = y > T0 ? powThird(y) : K * y + B_INTERCEPT;
  const fz = z > T0 ? powThird(z) : K * z + B_INTERCEPT;
  const L = 116 * fy - 16;
  const la = 500 * (fx - fy);
  const lb = 200 * (fy - fz);
  // pow(s, 0.5) is sqrt(s) for s ≥ 0.
  const chroma = Math.sqrt(la * la + lb * lb) * proportion;
  const hue = Math.atan2(lb, la);

  // LCh → Lab → XYZ
  const a2 = chroma * Math.cos(hue);
  const b2 = chroma * Math.sin(hue);
  const tx = (L + 16) / 116.0 + a2 / 500.0;
  const ty = (L + 16) / 116.0;
  const tz = (L + 16) / 116.0 - b2 / 200.0;
  const x2 = (tx > DELTA ? cube(tx) : 3 * DELTA * DELTA * (tx - B_INTERCEPT)) * XN;
  const y2 = ty > DELTA ? cube(ty) : 3 * DELTA * DELTA * (ty - B_INTERCEPT);
  const z2 = (tz > DELTA ? cube(tz) : 3 * DELTA * DELTA * (tz - B_INTERCEPT)) * ZN;

  // XYZ → linear RGB → sRGB, clamped
  rd[i] = companded(x2 * 3.2404542 + y2 * -1.5371385 + z2 * -0.4985314, thresholds);
  gd[i] = companded(x2 * -0.969266 + y2 * 1.8760108 + z2 * 0.041556, thresholds);
  bd[i] = companded(x2 * 0.0556434 + y2 * -0.2040259 + z2 * 1.0572252, thresholds);
}
