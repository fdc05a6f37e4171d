/**
 * `numpy.histogram` (numpy 2.x) over a band's sorted valid values, as rio-tiler calls it for
 * non-categorical statistics: `bins` is a count of equal-width bins over `range` (default: the data's
 * min and max, widened by ±0.5 when they are equal, 0–1 when there is no data) or explicit edges.
 *
 * The dtype rules matter for the edges TiTiler prints: numpy builds them with `linspace` in the
 * data's float type when the data is float32 (NEP 50: Python-float ranges do not widen float32), so
 * float32 bands get float32 edges (0.10000000149011612, not 0.1), computed in float32 arithmetic
 * when the range comes from the data's own float32 min/max. Every bin is half-open except the last,
 * which includes its right edge; values outside the outer edges are not counted.
 */
import { TesseraError } from '../errors.js';
import { pyFloatRepr } from '../pyjson.js';
import type { DType } from './image-data.js';

export interface Histogram {
  counts: number[];
  edges: number[];
}

/** Values sorted ascending, with no NaN (rio-tiler masks NaN/Inf before counting). */
export type SortedValues = ArrayLike<number>;

export function numpyHistogram(sorted: SortedValues, dtype: DType, bins: number | readonly number[], range?: readonly [number, number]): Histogram {
  const edges = typeof bins === 'number' ? uniformEdges(sorted, dtype, bins, range) : explicitEdges(bins);
  return { counts: countBetweenEdges(sorted, edges), edges };
}

function explicitEdges(bins: readonly number[]): number[] {
  for (let i = 0; i + 1 < bins.length; i++) {
    if (bins[i]! > bins[i + 1]!) throw new TesseraError('BadRequest', '`bins` must increase monotonically, when an array');
  }
  return [...bins];
}

function uniformEdges(sorted: SortedValues, dtype: DType, bins: number, range?: readonly [number, number]): number[] {
  if (!Number.isInteger(bins) || bins < 1) throw new TesseraError('BadRequest', '`bins` must be positive, when an integer');
  const float32 = dtype === 'float32';
  let first: number;
  let last: number;
  // numpy computes the edges in float32 only when both ends are float32 scalars: the data's own min/max.
  let float32Arithmetic = false;
  if (range) {
    [first, last] = range;
    if (first > last) throw new TesseraError('BadRequest', 'max must be larger than min in range parameter.');
    if (!Number.isFinite(first) || !Number.isFinite(last)) {
      throw new TesseraError('BadRequest', `supplied range of [${pyFloatRepr(first)}, ${pyFloatRepr(last)}] is not finite`);
    }
  } else if (sorted.length === 0) {
    first = 0;
    last = 1;
  } else {
    first = sorted[0]!;
    last = sorted[sorted.length - 1]!;
    float32Arithmetic = float32;
  }
  if (first === last) {
    first = float32Arithmetic ? Math.fround(first - 0.5) : first - 0.5;
    last = float32Arithmetic ? Math.fround(last + 0.5) : last + 0.5;
  }
  const edges = float32Arithmetic ? linspaceFloat32(first, last, bins) : linspaceFloat64(first, last, bins);
  if (float32 && !float32Arithmetic) for (let i = 0; i < edges.length; i++) edges[i] = Math.fround(edges[i]!);
  for (let i = 0; i < bins; i++) {
    if (edges[i]! >= edges[i + 1]!) {
      throw new TesseraError('BadRequest', `Too many bins for data range. Cannot create ${bins} finite-sized bins.`);
    }
  }
  return edges;
}

/** numpy.linspace(start, stop, div + 1) in float64: `i * step + start`, the last edge set to `stop`. */
function linspaceFloat64(start: number, stop: number, div: number): number[] {
  const delta = stop - start;
  const step = delta / div;
  const out = new Array<number>(div + 1);
  for (let i = 0; i <= div; i++) out[i] = (step === 0 ? (i / div) * delta : i * step) + start;
  out[div] = stop;
  return out;
}

/** The same in float32 arithmetic (each operation rounded to float32, as numpy does for float32 scalars). */
function linspaceFloat32(start: number, stop: number, div: number): number[] {
  const f = Math.fround;
  const delta = f(stop - start);
  const step = f(delta / div);
  const out = new Array<number>(div + 1);
  for (let i = 0; i <= div; i++) out[i] = f((step === 0 ? f(f(i / div) * delta) : f(i * step)) + start);
  out[div] = stop;
  return out;
}

/**
 * Counts per bin from cumulative positions of the edges in the sorted values (numpy's
 * `_search_sorted_inclusive`): left positions for every edge but the last, a right position for the
 * last, so the last bin is closed. For uniform bins this is what numpy's index arithmetic yields.
 */
function countBetweenEdges(sorted: SortedValues, edges: readonly number[]): number[] {
  const last = edges.length - 1;
  const counts = new Array<number>(last);
  let previous = searchLeft(sorted, edges[0]!);
  for (let i = 1; i <= last; i++) {
    const position = i === last ? searchRight(sorted, edges[i]!) : searchLeft(sorted, edges[i]!);
    counts[i - 1] = position - previous;
    previous = position;
  }
  return counts;
}

/** numpy's float ordering puts NaN after every number: a NaN edge lands after all values. */
function lessThan(a: number, b: number): boolean {
  return a < b || (b !== b && a === a);
}

/** First index whose value is not less than `v` (searchsorted side='left'). */
export function searchLeft(sorted: SortedValues, v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (lessThan(sorted[mid]!, v)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose value is greater than `v` (searchsorted side='right'). */
function searchRight(sorted: SortedValues, v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (lessThan(v, sorted[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
