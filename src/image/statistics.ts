/**
 * Per-band statistics exactly as rio-tiler 6.8 `get_array_statistics` computes them (what TiTiler
 * 0.18's `/statistics` routes return), optionally weighted by a coverage fraction per pixel.
 *
 * Definitions (V = valid values, i.e. unmasked and finite; w = coverage, 1 without one):
 * - min, max, majority, minority, unique and the histogram ignore coverage;
 * - sum = Σ v·w over the *whole* band with masked pixels as 0, count = Σ w likewise, mean = sum/count
 *   (numpy's pairwise summation over the full array: the zeros change the grouping, so they are kept);
 * - std = population std weighted by w, numpy.average twice over the compressed values;
 * - median and percentile_p = weighted inverted-CDF quantile: the first sorted value whose cumulative
 *   weight reaches p/100 of the total (with unit weights, the value of rank ⌈p·n/100⌉);
 * - majority/minority = the most/least frequent value, the smallest one on ties.
 * A band without valid pixels: min/max/mean/count/sum are NaN as in rio-tiler 6.8 (numpy.ma returns
 * `masked`), and std/median/percentiles are NaN too where 6.8 raises (TiTiler answers 500), as
 * rio-tiler 7 guards it.
 *
 * One pass finds the valid pixels and copies them as float64 (compressed, in band order, for the
 * sums numpy takes over the compressed array); the copy is then sorted once, by its bits, for
 * quantiles, distinct values and the histogram.
 */
import type { BandArray, DType, ImageData } from './image-data.js';
import { numpyHistogram, searchLeft } from './histogram.js';
import { pairwiseSum, pairwiseSumFloat32 } from './pairwise-sum.js';
import { sortValues } from './sort-values.js';
import type { StatisticsOptions } from './statistics-options.js';

export { parseStatisticsOptions } from './statistics-options.js';
export type { StatisticsOptions } from './statistics-options.js';

export interface BandStatistics {
  min: number;
  max: number;
  mean: number;
  count: number;
  sum: number;
  std: number;
  median: number;
  majority: number;
  minority: number;
  unique: number;
  /** [counts, edges] (numeric) or [counts, categories] (categorical). */
  histogram: [number[], number[]];
  /** True when `histogram[1]` holds values of an integer band (a categorical histogram): Python ints. */
  histogramKeysAreIntegers: boolean;
  validPercent: number;
  maskedPixels: number;
  validPixels: number;
  /** One entry per requested percentile, in request order. */
  percentiles: Array<{ percentile: number; value: number }>;
  /** What the band is described by (rio-tiler 9's BandStatistics, TiTiler 2.x); absent in 0.18's model. */
  description?: string;
}

export type Coverage = Float32Array | Float64Array;

/** Statistics of every band of an image, keyed by band name in band order (a later duplicate name wins). */
export function imageStatistics(img: ImageData, opts: StatisticsOptions, coverage?: Coverage): Map<string, BandStatistics> {
  const out = new Map<string, BandStatistics>();
  img.bands.forEach((band, b) => {
    out.set(img.bandNames[b] ?? `b${b + 1}`, bandStatistics(band, img.masks[b]!, opts, coverage, img.dtype));
  });
  return out;
}

/**
 * Statistics of one band. `mask`: 0 = masked (anything else valid); NaN/±Inf are masked too.
 * `dtype` defaults to the one the array type implies (Float64Array → float64); pass it for int64.
 */
export function bandStatistics(
  values: BandArray,
  mask: Uint8Array,
  opts: StatisticsOptions,
  coverage?: Coverage,
  dtype: DType = dtypeOf(values),
): BandStatistics {
  const total = values.length;
  if (mask.length !== total) throw new RangeError(`mask has ${mask.length} pixels, band has ${total}`);
  if (coverage && coverage.length !== total) throw new RangeError(`coverage has ${coverage.length} pixels, band has ${total}`);

  // Every loop below reads float64 arrays only: loops over a union of typed arrays become
  // megamorphic in a server that sees every dtype, and run several times slower. The native
  // conversion costs a few milliseconds per million pixels.
  const band = values instanceof Float64Array ? values : new Float64Array(values);
  const { compressed, weights, min, max } = compress(band, mask, coverage);
  const n = compressed.length;

  // numpy.ma sums of a fully masked array are `masked`, which float() turns into NaN. A float32
  // coverage (rio-tiler's) sums in float32, and so do its products with data of up to 16 bits or
  // float32 (numpy's result types); wider data makes float64 products.
  const f32Weights = coverage instanceof Float32Array;
  const f32 = f32Weights && FLOAT32_WITH_COVERAGE.has(dtype);
  const sum = n ? maskedSum(band, mask, coverage, 'values', f32) : NaN;
  const count = !n ? NaN : coverage ? maskedSum(band, mask, coverage, 'weights', f32Weights) : n;
  const std = weightedStd(compressed, weights);

  const order = sortBand(compressed, weights, dtype);
  const quantile = (q: number): number => weightedQuantile(order, q);
  const frequencies = scanDistinct(order.values, opts.categorical);
  const histogram = opts.categorical ? categoricalHistogram(frequencies, dtype, opts.categories) : numericHistogram(order.values, dtype, opts);

  return {
    min: n ? min : NaN,
    max: n ? max : NaN,
    mean: f32 ? Math.fround(sum / count) : sum / count,
    count,
    sum,
    std,
    median: quantile(0.5),
    majority: frequencies.majority,
    minority: frequencies.minority,
    unique: frequencies.unique,
    histogram,
    histogramKeysAreIntegers: opts.categorical && !isFloatType(dtype),
    validPercent: roundHalfEven2((n / total) * 100),
    maskedPixels: total - n,
    validPixels: n,
    percentiles: opts.percentiles.map((p) => ({ percentile: p, value: quantile(p / 100) })),
  };
}

/** Band types whose product with a float32 coverage is float32 in numpy (wider ones become float64). */
const FLOAT32_WITH_COVERAGE: ReadonlySet<DType> = new Set(['bool', 'uint8', 'int8', 'uint16', 'int16', 'float32']);

function dtypeOf(values: BandArray): DType {
  if (values instanceof Uint8Array) return 'uint8';
  if (values instanceof Int8Array) return 'int8';
  if (values instanceof Uint16Array) return 'uint16';
  if (values instanceof Int16Array) return 'int16';
  if (values instanceof Uint32Array) return 'uint32';
  if (values instanceof Int32Array) return 'int32';
  if (values instanceof Float32Array) return 'float32';
  return 'float64';
}

function isFloatType(dtype: DType): boolean {
  return dtype === 'float32' || dtype === 'float64';
}

interface Compressed {
  /** Valid values (unmasked and finite: `numpy.ma.fix_invalid`) in band order. */
  compressed: Float64Array;
  /** Coverage of those pixels, when weighted. */
  weights: Float64Array | undefined;
  min: number;
  max: number;
}

function compress(band: Float64Array, mask: Uint8Array, coverage: Coverage | undefined): Compressed {
  let n = 0;
  for (let i = 0; i < band.length; i++) if (mask[i] !== 0 && Number.isFinite(band[i]!)) n++;
  const compressed = new Float64Array(n);
  const weights = coverage ? new Float64Array(n) : undefined;
  let min = Infinity;
  let max = -Infinity;
  let k = 0;
  for (let i = 0; i < band.length; i++) {
    const v = band[i]!;
    if (mask[i] === 0 || !Number.isFinite(v)) continue;
    compressed[k++] = v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (weights) {
    k = 0;
    for (let i = 0; i < band.length; i++) if (mask[i] !== 0 && Number.isFinite(band[i]!)) weights[k++] = coverage![i]!;
  }
  return { compressed, weights, min, max };
}

/**
 * The masked-array sums `(data * coverage).sum()` ('values') and `coverage.sum()` ('weights'):
 * pairwise over every pixel with masked ones as 0, since their places shape numpy's grouping.
 */
function maskedSum(band: Float64Array, mask: Uint8Array, coverage: Coverage | undefined, what: 'values' | 'weights', float32 = false): number {
  const valid = (i: number): boolean => mask[i] !== 0 && Number.isFinite(band[i]!);
  const sum = float32 ? pairwiseSumFloat32 : pairwiseSum;
  if (what === 'weights') {
    const weights = coverage!;
    return sum(band.length, (start, length, out) => {
      for (let k = 0; k < length; k++) out[k] = valid(start + k) ? weights[start + k]! : 0;
    });
  }
  if (coverage) {
    const product = float32 ? (v: number, w: number): number => Math.fround(v * w) : (v: number, w: number): number => v * w;
    return sum(band.length, (start, length, out) => {
      for (let k = 0; k < length; k++) out[k] = valid(start + k) ? product(band[start + k]!, coverage[start + k]!) : 0;
    });
  }
  return pairwiseSum(band.length, (start, length, out) => {
    for (let k = 0; k < length; k++) out[k] = valid(start + k) ? band[start + k]! : 0;
  });
}

/** rio-tiler's `_weighted_stdev`: sqrt(average((v - average(v, w))², w)), each average a pairwise sum over Σw. */
function weightedStd(values: Float64Array, weights: Float64Array | undefined): number {
  const n = values.length;
  const totalWeight = weights ? pairwiseSum(n, (s, len, out) => out.set(weights.subarray(s, s + len))) : n;
  if (totalWeight === 0) return NaN;
  const weightedSum = pairwiseSum(
    n,
    weights
      ? (s, len, out) => {
          for (let k = 0; k < len; k++) out[k] = values[s + k]! * weights[s + k]!;
        }
      : (s, len, out) => out.set(values.subarray(s, s + len)),
  );
  const average = weightedSum / totalWeight;
  const squares = pairwiseSum(
    n,
    weights
      ? (s, len, out) => {
          for (let k = 0; k < len; k++) {
            const d = values[s + k]! - average;
            out[k] = d * d * weights[s + k]!;
          }
        }
      : (s, len, out) => {
          for (let k = 0; k < len; k++) {
            const d = values[s + k]! - average;
            out[k] = d * d;
          }
        },
  );
  return Math.sqrt(squares / totalWeight);
}

interface SortedBand {
  values: Float64Array;
  /** Cumulative weights in sorted order (sequential, as numpy.cumsum); absent = unit weights. */
  cumulativeWeights: Float64Array | undefined;
}

/** Sorts the compressed values in place (they are not needed in band order any more). */
function sortBand(values: Float64Array, weights: Float64Array | undefined, dtype: DType): SortedBand {
  if (!weights) {
    sortValues(values, dtype);
    return { values, cumulativeWeights: undefined };
  }
  // Weighted quantiles need the weights in value order: an index sort (coverage comes with feature
  // statistics, on images far smaller than a preview).
  const index = new Uint32Array(values.length);
  for (let i = 0; i < index.length; i++) index[i] = i;
  index.sort((a, b) => values[a]! - values[b]!);
  const sorted = new Float64Array(values.length);
  const cumulative = new Float64Array(values.length);
  let running = 0;
  for (let i = 0; i < index.length; i++) {
    sorted[i] = values[index[i]!]!;
    running += weights[index[i]!]!;
    cumulative[i] = running;
  }
  return { values: sorted, cumulativeWeights: cumulative };
}

/** rio-tiler's `_weighted_quantiles`: the first sorted value whose cumulative weight reaches q × total. */
function weightedQuantile(sorted: SortedBand, q: number): number {
  const n = sorted.values.length;
  if (n === 0) return NaN;
  const cumulative = sorted.cumulativeWeights;
  let index: number;
  if (cumulative) {
    index = searchLeft(cumulative, q * cumulative[n - 1]!);
  } else {
    // Cumulative unit weights are 1, 2, …, n: the first k with k + 1 ≥ q·n.
    index = Math.max(0, Math.ceil(q * n) - 1);
  }
  return index < n ? sorted.values[index]! : NaN;
}

interface Frequencies {
  unique: number;
  majority: number;
  minority: number;
  /** Distinct values and their counts (ascending), kept only for categorical histograms. */
  keys: number[];
  counts: number[];
}

/** One walk over the sorted values: numpy.unique with counts, and the first max/min count (smallest value wins ties). */
function scanDistinct(sorted: Float64Array, keep: boolean): Frequencies {
  const keys: number[] = [];
  const counts: number[] = [];
  let unique = 0;
  let majority = NaN;
  let minority = NaN;
  let most = -1;
  let least = Infinity;
  let i = 0;
  while (i < sorted.length) {
    const v = sorted[i]!;
    let j = i + 1;
    while (j < sorted.length && sorted[j] === v) j++;
    const c = j - i;
    unique++;
    if (c > most) {
      most = c;
      majority = v;
    }
    if (c < least) {
      least = c;
      minority = v;
    }
    if (keep) {
      keys.push(v);
      counts.push(c);
    }
    i = j;
  }
  return { unique, majority, minority, keys, counts };
}

/** `[[count per bin], [edges]]`. */
function numericHistogram(sorted: Float64Array, dtype: DType, opts: StatisticsOptions): [number[], number[]] {
  const { counts, edges } = numpyHistogram(sorted, dtype, opts.histogramBins, opts.histogramRange);
  return [counts, edges];
}

/** `[[count per category], [categories]]`: the `c` values cast to the band's dtype, or every distinct value. */
function categoricalHistogram(freq: Frequencies, dtype: DType, categories: number[] | undefined): [number[], number[]] {
  if (!categories || categories.length === 0) return [freq.counts, freq.keys];
  const keys = categories.map((c) => castToDtype(c, dtype));
  const counts = keys.map((key) => {
    const at = searchLeft(freq.keys, key);
    return at < freq.keys.length && freq.keys[at] === key ? freq.counts[at]! : 0;
  });
  return [counts, keys];
}

const INT32_MIN = -2147483648;

/**
 * numpy's `astype` of a float64 to the band dtype, including what x86 does with values the type
 * cannot hold (numpy leaves that to the C cast): truncation toward zero, then wrap-around; small
 * integer types go through int32 (out of range or NaN → INT32_MIN's low bits), int64 saturates to
 * INT64_MIN.
 */
export function castToDtype(x: number, dtype: DType): number {
  switch (dtype) {
    case 'float32':
      return Math.fround(x);
    case 'float64':
      return x;
    case 'bool':
      return x !== 0 ? 1 : 0;
    case 'int64':
      return Number.isFinite(x) && Math.abs(x) < 2 ** 63 ? Math.trunc(x) : -(2 ** 63);
    case 'uint64':
      // Through int64 below 2^63 (negative values wrap), x86's unsigned conversion above.
      if (Number.isFinite(x) && x > -(2 ** 63) && x < 2 ** 64) return x < 0 ? 2 ** 64 + Math.trunc(x) : Math.trunc(x);
      return 2 ** 63;
    case 'uint32':
      if (Number.isNaN(x)) return 2 ** 31;
      return Number.isFinite(x) && Math.abs(x) < 2 ** 63 ? wrap(Math.trunc(x), 32, false) : 0;
    default: {
      const t = Number.isFinite(x) && x > -2147483649 && x < 2147483648 ? Math.trunc(x) : INT32_MIN;
      const bits = dtype === 'int8' || dtype === 'uint8' ? 8 : dtype === 'int32' ? 32 : 16;
      return wrap(t, bits, dtype.startsWith('int'));
    }
  }
}

function wrap(t: number, bits: number, signed: boolean): number {
  const span = 2 ** bits;
  let v = (t % span) + 0; // + 0 turns -0 into 0
  if (v < 0) v += span;
  if (signed && v >= span / 2) v -= span;
  return v;
}

/** Python's round(x, 2): correctly rounded, and exact halves (x·8 odd) go to the even hundredth. */
export function roundHalfEven2(x: number): number {
  const eighths = x * 8;
  if (Number.isInteger(eighths) && eighths % 2 !== 0) {
    const hundredths = Math.floor(x * 100);
    return (hundredths % 2 === 0 ? hundredths : hundredths + 1) / 100;
  }
  return Number(x.toFixed(2));
}
