/**
 * `normalizedIndex`: (b2 − b1) / (b2 + b1) of the first two bands (NDVI and kin), float32, named
 * `(b2name - b1name) / (b2name + b1name)`. The metadata's output range [−1, 1] is informative only.
 *
 * numpy.ma as TiTiler runs it, in float32: the output is masked where either band is, where the
 * division is unsafe (a zero sum) and where the quotient is not finite (NaN inputs); masked pixels
 * hold the numerator's data, which numpy.ma sets to the second band's value where an input was
 * masked.
 */
import { badRequest } from '../../errors.js';
import type { ImageData } from '../image-data.js';
import { modelFields, resultImage, type Algorithm } from './algorithm.js';
import { divisionMasked } from './numeric.js';
import { validateModel } from './pydantic.js';

/** The normalized index has no parameters. */
export type NormalizedIndexParams = Record<string, never>;

const FIELDS = modelFields({ outputRange: 'floatSequence' }, []);

export const normalizedIndex: Algorithm<NormalizedIndexParams> = {
  id: 'normalizedIndex',
  modelName: 'NormalizedIndex',
  info: {
    title: 'Normalized Difference Index',
    description: 'Compute normalized difference index from two bands.',
    inputs: { nbands: 2 },
    outputs: { nbands: 1, dtype: 'float32', min: [-1], max: [1] },
    parameters: {},
  },
  fields: FIELDS,
  parseParams(raw) {
    validateModel('NormalizedIndex', FIELDS, raw);
    return {};
  },
  apply: applyNormalizedIndex,
};

function applyNormalizedIndex(img: ImageData): ImageData {
  // TiTiler fails with an IndexError (a 500) on a single band.
  if (img.bands.length < 2) throw badRequest(`normalizedIndex needs 2 bands, got ${img.bands.length}`);
  const band1 = img.bands[0]!;
  const band2 = img.bands[1]!;
  const valid1 = img.masks[0]!;
  const valid2 = img.masks[1]!;
  const f32 = Math.fround;
  const n = band1.length;
  const out = new Float32Array(n);
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const b1 = f32(band1[i]!);
    const b2 = f32(band2[i]!);
    if (valid1[i] === 0 || valid2[i] === 0) {
      out[i] = b2;
      continue;
    }
    const numerator = f32(b2 - b1);
    const denominator = f32(b2 + b1);
    const quotient = f32(numerator / denominator);
    if (divisionMasked(numerator, denominator) || !Number.isFinite(quotient)) {
      out[i] = numerator;
      continue;
    }
    out[i] = quotient;
    mask[i] = 255;
  }
  const [name1, name2] = [img.bandNames[0] ?? 'b1', img.bandNames[1] ?? 'b2'];
  return resultImage(img, {
    width: img.width,
    height: img.height,
    dtype: 'float32',
    bands: [out],
    masks: [mask],
    bandNames: [`(${name2} - ${name1}) / (${name2} + ${name1})`],
  });
}
