/**
 * BandStatistics as TiTiler serialises rio-tiler's `BandStatistics` model: the declared fields in
 * model order, then the `percentile_<p>` extras in request order. Every statistic is a Python float
 * (so `count`, `unique`, `valid_pixels`, `majority` print as `4.0`); histogram counts are ints; the
 * histogram's second list is floats (bin edges, or the categories of a float band) or ints (the
 * categories of an integer band). NaN and ±Inf become null when written by `pyDumps`.
 */
import { float, floats } from '../pyjson.js';
import type { BandStatistics } from './statistics.js';

export function statisticsToJson(s: BandStatistics): Record<string, unknown> {
  const out: Record<string, unknown> = {
    min: float(s.min),
    max: float(s.max),
    mean: float(s.mean),
    count: float(s.count),
    sum: float(s.sum),
    std: float(s.std),
    median: float(s.median),
    majority: float(s.majority),
    minority: float(s.minority),
    unique: float(s.unique),
    histogram: [s.histogram[0], s.histogramKeysAreIntegers ? s.histogram[1] : floats(s.histogram[1])],
    valid_percent: float(s.validPercent),
    masked_pixels: float(s.maskedPixels),
    valid_pixels: float(s.validPixels),
  };
  // rio-tiler 9's model declares it last; the percentiles are extras after the declared fields.
  if (s.description !== undefined) out['description'] = s.description;
  // A repeated percentile keeps its first position, as in the Python dict rio-tiler builds.
  for (const { percentile, value } of s.percentiles) out[`percentile_${percentile}`] = float(value);
  return out;
}

/** `{band name: BandStatistics}` (TiTiler's `Statistics` response model). */
export function statisticsMapToJson(stats: ReadonlyMap<string, BandStatistics>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, s] of stats) out[name] = statisticsToJson(s);
  return out;
}
