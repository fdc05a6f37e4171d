/**
 * `min`, `max`, `sum`, `mean`, `median`, `std` and `var` (TiTiler 2.4.0,
 * titiler/core/algorithm/math.py): one band reducing all bands pixel by pixel, named after the
 * algorithm, masked where every band is. Each follows what numpy.ma does along axis 0 of rio-tiler's
 * masked array (numpy/ma/core.py and extras.py of numpy 2.4), masked data included:
 * - `min`/`max`: the input dtype; a valid NaN wins (numpy's minimum/maximum propagate it); where all
 *   bands are masked the data is numpy.ma's default fill value (999999 wrapped to the dtype, 1e20).
 * - `sum`: masked bands count 0, added in band order in numpy's accumulator (int64 for signed and
 *   bool, uint64 for unsigned, float32 stays float32); all masked gives 0.
 * - `mean`: float64 (float32 bands are summed in float32, then divided in float64); also masked
 *   where the mean is not finite or the division unsafe, with the sum as data; all masked gives 0.
 * - `median`: of the valid values; float32 for float32 bands (the two middle values added and halved
 *   in float32), float64 otherwise; any valid NaN makes it NaN; all masked gives 0.
 * - `var` and `std` with `ddof=1`, float64: the squared deviations from the mean summed in band
 *   order and divided by count − 1; masked where fewer than two bands are valid (data: the sum, 0).
 *   A non-finite mean (a valid NaN or infinity) masks every deviation, so the variance is 0, valid.
 *   `std` is the square root, also masked (with the variance as data) where that is not finite.
 */
import type { BandArray, DType, ImageData } from '../image-data.js';
import { ARRAY_OF } from '../image-data.js';
import { modelFields, resultImage, type Algorithm, type AlgorithmId, type AlgorithmInfo } from './algorithm.js';
import { defaultFillValue, divisionMasked, sumDtype } from './numeric.js';
import type { FieldKind } from './pydantic.js';
import { validateModel } from './pydantic.js';

/** These algorithms have no parameters. */
export type BandMathParams = Record<string, never>;

/** What a reduction makes of one pixel's values: the output value and whether it is valid. */
interface Reduced {
  dtype: DType;
  band: BandArray;
  mask: Uint8Array;
}

type Reduction = (img: ImageData) => Reduced;

function isFloat(dtype: DType): boolean {
  return dtype === 'float32' || dtype === 'float64';
}

/** min or max: the filled reduction, NaN-propagating, the default fill value where all are masked. */
function extremum(kind: 'min' | 'max'): Reduction {
  return (img) => {
    const n = img.width * img.height;
    const band = new ARRAY_OF[img.dtype](n);
    const mask = new Uint8Array(n);
    const fill = defaultFillValue(img.dtype);
    const better = kind === 'min' ? (a: number, b: number): boolean => a < b : (a: number, b: number): boolean => a > b;
    for (let i = 0; i < n; i++) {
      let best = Number.NaN;
      let any = false;
      for (let b = 0; b < img.bands.length; b++) {
        if (img.masks[b]![i] === 0) continue;
        const v = img.bands[b]![i]!;
        if (!any) {
          best = v;
          any = true;
        } else if (Number.isNaN(v) || better(v, best)) best = v;
        if (Number.isNaN(best)) break;
      }
      if (any) {
        band[i] = best;
        mask[i] = 255;
      } else band[i] = fill;
    }
    return { dtype: img.dtype, band, mask };
  };
}

/** Σ of the valid values in band order, in `dtype`'s arithmetic (float32 rounds each addition). */
function sumAt(img: ImageData, i: number, single: boolean): { sum: number; count: number } {
  let sum = 0;
  let count = 0;
  for (let b = 0; b < img.bands.length; b++) {
    const v = img.masks[b]![i] === 0 ? 0 : img.bands[b]![i]!;
    if (img.masks[b]![i] !== 0) count++;
    sum = b === 0 ? v : single ? Math.fround(sum + v) : sum + v;
  }
  return { sum, count };
}

const sumReduction: Reduction = (img) => {
  const n = img.width * img.height;
  const dtype = sumDtype(img.dtype);
  const band = new ARRAY_OF[dtype](n);
  const mask = new Uint8Array(n);
  const single = dtype === 'float32';
  for (let i = 0; i < n; i++) {
    const { sum, count } = sumAt(img, i, single);
    band[i] = sum;
    if (count > 0) mask[i] = 255;
  }
  return { dtype, band, mask };
};

/** numpy.ma's mean of one pixel: its value and validity (float64). */
function meanAt(img: ImageData, i: number): { value: number; valid: boolean } {
  const { sum, count } = sumAt(img, i, img.dtype === 'float32');
  if (count === 0) return { value: 0, valid: false };
  const q = sum / count;
  if (!Number.isFinite(q) || divisionMasked(sum, count)) return { value: sum, valid: false };
  return { value: q, valid: true };
}

const meanReduction: Reduction = (img) => {
  const n = img.width * img.height;
  const band = new Float64Array(n);
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const m = meanAt(img, i);
    band[i] = m.value;
    if (m.valid) mask[i] = 255;
  }
  return { dtype: 'float64', band, mask };
};

const medianReduction: Reduction = (img) => {
  const n = img.width * img.height;
  const float = isFloat(img.dtype);
  const single = img.dtype === 'float32';
  const dtype: DType = single ? 'float32' : 'float64';
  const band = new ARRAY_OF[dtype](n);
  const mask = new Uint8Array(n);
  const values = new Float64Array(img.bands.length);
  for (let i = 0; i < n; i++) {
    let count = 0;
    let nan = false;
    for (let b = 0; b < img.bands.length; b++) {
      if (img.masks[b]![i] === 0) continue;
      const v = img.bands[b]![i]!;
      if (Number.isNaN(v)) nan = true;
      values[count++] = v;
    }
    if (count === 0) continue; // 0, masked
    mask[i] = 255;
    if (nan) {
      band[i] = Number.NaN;
      continue;
    }
    const sorted = values.subarray(0, count).sort();
    const lo = sorted[count % 2 === 1 ? (count - 1) / 2 : count / 2 - 1]!;
    const hi = sorted[Math.floor(count / 2)]!;
    // Floats: the two middle values added in the dtype, halved; integers: their mean in float64.
    band[i] = float && single ? Math.fround(Math.fround(lo + hi) / 2) : (lo + hi) / 2;
  }
  return { dtype, band, mask };
};

/** numpy.ma's `var(ddof=1)` of one pixel: value and validity. */
function varianceAt(img: ImageData, i: number): { value: number; valid: boolean } {
  const m = meanAt(img, i);
  let sum = 0;
  let count = 0;
  let first = true;
  for (let b = 0; b < img.bands.length; b++) {
    if (img.masks[b]![i] === 0) continue;
    count++;
    if (!m.valid) continue; // a masked mean masks every deviation: they add nothing
    const d = img.bands[b]![i]! - m.value;
    sum = first ? d * d : sum + d * d;
    first = false;
  }
  const valid = count > 1;
  // The division masks (and keeps the sum) where every deviation was masked, the quotient is not finite or unsafe.
  if (first) return { value: 0, valid };
  const q = sum / (count - 1);
  return { value: !Number.isFinite(q) || divisionMasked(sum, count - 1) ? sum : q, valid };
}

function spread(kind: 'var' | 'std'): Reduction {
  return (img) => {
    const n = img.width * img.height;
    const band = new Float64Array(n);
    const mask = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const v = varianceAt(img, i);
      if (kind === 'var') {
        band[i] = v.value;
        if (v.valid) mask[i] = 255;
        continue;
      }
      // numpy.ma.sqrt: masked (keeping the variance) where the root is not finite.
      const root = Math.sqrt(v.value);
      const valid = v.valid && Number.isFinite(root);
      band[i] = valid ? root : v.value;
      if (valid) mask[i] = 255;
    }
    return { dtype: 'float64', band, mask };
  };
}

interface Spec {
  id: AlgorithmId;
  modelName: string;
  title: string;
  description: string;
  /** The declared output dtype (metadata only: the real one follows numpy), or null. */
  dtype: DType | null;
  reduce: Reduction;
}

function bandMath(spec: Spec): Algorithm<BandMathParams> {
  // `output_nbands: int = 1` overrides BaseAlgorithm's; `output_dtype` is overridden only where set.
  const outputDtype: FieldKind = spec.dtype === null ? 'optionalStr' : 'str';
  const fields = modelFields({ inputNbands: 'optionalInt', outputNbands: 'plainInt', outputDtype }, []);
  const info: AlgorithmInfo = {
    title: spec.title,
    description: spec.description,
    inputs: { nbands: null },
    outputs: { nbands: 1, dtype: spec.dtype, min: null, max: null },
    parameters: {},
  };
  return {
    id: spec.id,
    modelName: spec.modelName,
    info,
    fields,
    parseParams(raw) {
      validateModel(spec.modelName, fields, raw);
      return {};
    },
    apply(img) {
      const { dtype, band, mask } = spec.reduce(img);
      return resultImage(img, { width: img.width, height: img.height, dtype, bands: [band], masks: [mask], bandNames: [spec.id] });
    },
  };
}

export const min = bandMath({
  id: 'min',
  modelName: '_Min',
  title: 'Min',
  description: 'Return Min values along the `bands` axis.',
  dtype: null,
  reduce: extremum('min'),
});
export const max = bandMath({
  id: 'max',
  modelName: '_Max',
  title: 'Max',
  description: 'Return Max values along the `bands` axis.',
  dtype: null,
  reduce: extremum('max'),
});
export const median = bandMath({
  id: 'median',
  modelName: '_Median',
  title: 'Median',
  description: 'Return Median values along the `bands` axis.',
  dtype: 'float64',
  reduce: medianReduction,
});
export const mean = bandMath({ id: 'mean', modelName: '_Mean', title: 'Mean', description: 'Return Mean values.', dtype: 'float64', reduce: meanReduction });
export const std = bandMath({
  id: 'std',
  modelName: '_Std',
  title: 'Standard deviation',
  description: 'Return the Standard Deviation along the `bands` axis.',
  dtype: 'float64',
  reduce: spread('std'),
});
export const variance = bandMath({
  id: 'var',
  modelName: '_Var',
  title: 'Variance',
  description: 'Return Variance along the `bands` axis.',
  dtype: 'float64',
  reduce: spread('var'),
});
export const sum = bandMath({
  id: 'sum',
  modelName: '_Sum',
  title: 'Sum',
  description: 'Return Sum values along the `bands` axis.',
  dtype: null,
  reduce: sumReduction,
});
