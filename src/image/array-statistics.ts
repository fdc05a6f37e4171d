/**
 * The band statistics rio-stac writes into a STAC item's `raster:bands` (TiTiler's `/cog/stac`):
 * numpy's mean, min, max and std of a band read as a masked array, its valid percentage and a
 * 10-bin numpy histogram, with numpy's arithmetic reproduced (pairwise sums, float32 where numpy
 * keeps float32) so that the numbers agree with TiTiler's to the bit.
 *
 * Two cases, as rasterio hands the array over:
 * - `mask` given (the band has nodata or a mask): statistics of the unmasked, finite values; the
 *   sums run over every pixel with masked ones as 0 (numpy.ma's `filled(0).sum()`), a float32 sum
 *   divided in float64.
 * - no mask (GDAL says every pixel is valid: rasterio's `nomask`): statistics of every value, with
 *   NaN and ±Inf replaced by numpy.ma's fill value 1e20 (what `fix_invalid` does to the data it
 *   cannot mask), float32 data summed and divided in float32, and `valid_percent` computed, as
 *   rio-stac computes it there, from a count of 1.
 */
import type { BandArray, DType } from './image-data.js';
import { numpyHistogram } from './histogram.js';
import { pairwiseSum, pairwiseSumFloat32 } from './pairwise-sum.js';

export interface ArrayStatistics {
  mean: number;
  minimum: number;
  maximum: number;
  stddev: number;
  validPercent: number;
  /** numpy.histogram with 10 bins: 11 edges. */
  histogram: { counts: number[]; edges: number[] };
}

/** numpy.ma's default fill value for floating-point arrays. */
const FLOAT_FILL = 1e20;

export function arrayStatistics(values: BandArray, dtype: DType, mask: Uint8Array | null): ArrayStatistics {
  const float32 = dtype === 'float32';
  const isFloat = float32 || dtype === 'float64';
  const n = values.length;
  const fill = float32 ? Math.fround(FLOAT_FILL) : FLOAT_FILL;
  const data = values instanceof Float64Array ? values : new Float64Array(values);

  let valid: (i: number) => boolean;
  let count: number;
  if (mask) {
    valid = (i) => mask[i] !== 0 && Number.isFinite(data[i]!);
    count = 0;
    for (let i = 0; i < n; i++) if (valid(i)) count++;
  } else {
    if (isFloat) for (let i = 0; i < n; i++) if (!Number.isFinite(data[i]!)) data[i] = fill;
    valid = () => true;
    count = n;
  }

  const kept = new Float64Array(count);
  let minimum = Infinity;
  let maximum = -Infinity;
  for (let i = 0, k = 0; i < n; i++) {
    if (!valid(i)) continue;
    const v = data[i]!;
    kept[k++] = v;
    if (v < minimum) minimum = v;
    if (v > maximum) maximum = v;
  }

  // Sums over every pixel, masked ones as 0: their places shape numpy's pairwise grouping.
  const terms =
    (f: (v: number) => number) =>
    (start: number, length: number, out: Float64Array): void => {
      for (let k = 0; k < length; k++) out[k] = valid(start + k) ? f(data[start + k]!) : 0;
    };
  const sum = (float32 ? pairwiseSumFloat32 : pairwiseSum)(
    n,
    terms((v) => v),
  );
  let mean: number;
  let stddev: number;
  if (float32 && !mask) {
    // ndarray.mean/std of float32: float32 throughout.
    const mean32 = Math.fround(sum / n);
    const squares = pairwiseSumFloat32(
      n,
      terms((v) => {
        const d = Math.fround(v - mean32);
        return Math.fround(d * d);
      }),
    );
    mean = mean32;
    stddev = Math.fround(Math.sqrt(Math.fround(squares / n)));
  } else {
    // Integers are summed in float64; numpy.ma divides a float32 sum by its count in float64.
    mean = sum / count;
    const squares = pairwiseSum(
      n,
      terms((v) => (v - mean) * (v - mean)),
    );
    stddev = Math.sqrt(squares / count);
  }

  kept.sort();
  const histogram = numpyHistogram(kept, dtype, 10);
  return {
    mean: count > 0 ? mean : NaN,
    minimum: count > 0 ? minimum : NaN,
    maximum: count > 0 ? maximum : NaN,
    stddev: count > 0 ? stddev : NaN,
    validPercent: ((mask ? count : 1) / n) * 100,
    histogram,
  };
}
