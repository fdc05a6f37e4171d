/**
 * The statistics options of TiTiler's `StatisticsParams` and `HistogramParams` dependencies
 * (`categorical`, `c`, `p`, `histogram_bins`, `histogram_range`), parsed from query values.
 *
 * Text is read as Python's `int()` / `float()` read it (surrounding spaces, `_` between digits,
 * `inf`/`nan`). Where TiTiler 0.18 answers a client's mistake with a 500 (an unparsable
 * `histogram_bins`, numpy refusing the bins or the range, a percentile past 100) this is a 400 with a
 * clear message; the numpy checks apply only when a numeric histogram will be computed, as in TiTiler
 * (categorical statistics never look at the histogram options).
 */
import { TesseraError } from '../errors.js';

export interface StatisticsOptions {
  /** Histogram of counts per distinct value instead of equal-width bins. */
  categorical: boolean;
  /** Values to count in a categorical histogram (`c`), in the order given; absent = every value present. */
  categories?: number[];
  /** Percentiles to report (`p`), each an integer in 0–100; default [2, 98]. */
  percentiles: number[];
  /** Number of equal-width bins, or explicit bin edges (increasing, rightmost edge included). */
  histogramBins: number | number[];
  /** Lower and upper edge of equal-width bins (ignored with explicit edges). */
  histogramRange?: [number, number];
}

const DEFAULT_PERCENTILES: readonly number[] = [2, 98];
const DEFAULT_HISTOGRAM_BINS = 10;
/** Past this, a histogram is a memory hazard rather than a summary (numpy itself has no limit). */
const MAX_HISTOGRAM_BINS = 100_000;

const PY_INT = /^[+-]?\d(?:_?\d)*$/;
const PY_FLOAT = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const PY_SPECIAL: Record<string, number> = { inf: Infinity, infinity: Infinity, nan: NaN };

/** Python's `int(text)`, or undefined when Python would raise ValueError. */
function parsePyInt(text: string): number | undefined {
  const t = text.trim();
  return PY_INT.test(t) ? Number(t.replace(/_/g, '')) : undefined;
}

/** Python's `float(text)`, or undefined when Python would raise ValueError. */
function parsePyFloat(text: string): number | undefined {
  const t = text.trim();
  if (PY_FLOAT.test(t)) return Number(t.replace(/_/g, ''));
  const sign = t.startsWith('-') ? -1 : 1;
  const word = PY_SPECIAL[t.replace(/^[+-]/, '').toLowerCase()];
  return word === undefined ? undefined : sign * word;
}

/** Query values as a validator or a raw query string parser leaves them: one value or a list. */
type QueryValue = unknown;

function listOf(value: QueryValue): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function parseBoolean(value: QueryValue): boolean {
  const v = Array.isArray(value) ? value[value.length - 1] : value;
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  const text = String(v).trim().toLowerCase();
  if (['1', 'true', 't', 'yes', 'y', 'on'].includes(text)) return true;
  if (['0', 'false', 'f', 'no', 'n', 'off'].includes(text)) return false;
  throw new TesseraError('BadRequest', `Invalid categorical '${String(v)}': expected a boolean`);
}

function parseCategories(value: QueryValue): number[] | undefined {
  const items = listOf(value);
  if (items.length === 0) return undefined;
  return items.map((item) => {
    const n = typeof item === 'number' ? item : parsePyFloat(String(item));
    if (n === undefined) throw new TesseraError('BadRequest', `Invalid category '${String(item)}': expected a number`);
    return n;
  });
}

function parsePercentiles(value: QueryValue): number[] {
  const items = listOf(value);
  if (items.length === 0) return [...DEFAULT_PERCENTILES];
  return items.map((item) => {
    const n = typeof item === 'number' ? item : parsePyFloat(String(item));
    if (n === undefined || !Number.isInteger(n)) {
      throw new TesseraError('BadRequest', `Invalid percentile '${String(item)}': expected an integer`);
    }
    if (n < 0 || n > 100) throw new TesseraError('BadRequest', `Invalid percentile ${n}: percentiles must be in the range [0, 100]`);
    return n;
  });
}

/** `histogram_bins`: one integer (a count of bins) or two or more comma-separated edges. */
function parseHistogramBins(value: QueryValue): number | number[] {
  const text = Array.isArray(value) ? value[value.length - 1] : value;
  if (text === undefined || text === null || text === '') return DEFAULT_HISTOGRAM_BINS;
  const raw = String(text);
  const parts = raw.split(',');
  if (parts.length === 1) {
    const bins = parsePyInt(raw);
    if (bins === undefined) {
      throw new TesseraError('BadRequest', `Invalid histogram_bins '${raw}': expected a whole number of bins or comma-separated bin edges`);
    }
    return bins;
  }
  return parts.map((part) => {
    const edge = parsePyFloat(part);
    if (edge === undefined) throw new TesseraError('BadRequest', `Invalid histogram_bins '${raw}': '${part}' is not a number`);
    return edge;
  });
}

/** `histogram_range`: `min,max`. An empty value means no range (TiTiler 0.18 fails on it with a 500). */
function parseHistogramRange(value: QueryValue): [number, number] | undefined {
  const text = Array.isArray(value) ? value[value.length - 1] : value;
  if (text === undefined || text === null || text === '') return undefined;
  const raw = String(text);
  const parts = raw.split(',').map(parsePyFloat);
  if (parts.length !== 2 || parts[0] === undefined || parts[1] === undefined) {
    throw new TesseraError('BadRequest', `Invalid histogram_range values: ${raw}, should be of form 'min,max'`);
  }
  return [parts[0], parts[1]];
}

/** numpy's checks on the histogram arguments that do not depend on the data. */
function checkHistogramArguments(bins: number | number[], range: [number, number] | undefined): void {
  if (typeof bins === 'number') {
    if (bins < 1) throw new TesseraError('BadRequest', `Invalid histogram_bins ${bins}: the number of bins must be positive`);
    if (bins > MAX_HISTOGRAM_BINS) throw new TesseraError('BadRequest', `Invalid histogram_bins ${bins}: at most ${MAX_HISTOGRAM_BINS} bins`);
    if (range) {
      const [lo, hi] = range;
      if (lo > hi) throw new TesseraError('BadRequest', `Invalid histogram_range ${lo},${hi}: max must be larger than min`);
      if (!Number.isFinite(lo) || !Number.isFinite(hi)) throw new TesseraError('BadRequest', `Invalid histogram_range ${lo},${hi}: the range must be finite`);
    }
    return;
  }
  if (bins.length - 1 > MAX_HISTOGRAM_BINS) throw new TesseraError('BadRequest', `Invalid histogram_bins: at most ${MAX_HISTOGRAM_BINS} bins`);
  for (let i = 0; i + 1 < bins.length; i++) {
    if (bins[i]! > bins[i + 1]!) throw new TesseraError('BadRequest', `Invalid histogram_bins ${bins.join(',')}: bin edges must increase monotonically`);
  }
}

/** Reads `categorical`, `c`, `p`, `histogram_bins` and `histogram_range` from a parsed query. */
export function parseStatisticsOptions(query: Record<string, unknown>): StatisticsOptions {
  const categorical = parseBoolean(query['categorical']);
  const categories = parseCategories(query['c']);
  const percentiles = parsePercentiles(query['p']);
  const histogramBins = parseHistogramBins(query['histogram_bins']);
  const histogramRange = parseHistogramRange(query['histogram_range']);
  if (!categorical) checkHistogramArguments(histogramBins, histogramRange);
  const options: StatisticsOptions = { categorical, percentiles, histogramBins };
  if (categories) options.categories = categories;
  if (histogramRange) options.histogramRange = histogramRange;
  return options;
}
