/**
 * `terrarium`: elevations of the first band encoded as Mapzen Terrarium RGB,
 * `h = R * 256 + G + B / 256 - 32768`. As numpy computes it: v = clip(h + 32768, 0, 65535) in
 * float64 whatever the band's dtype (numpy.ma makes the Python-float constant a float64 array),
 * R = v / 256, G = v mod 256, B = (v * 256) mod 256, each truncated to uint8. Masked pixels keep numpy.ma's values: the clipped raw height, in all
 * three bands. The first band's mask applies to all three output bands, and numpy.ma's division
 * also masks R where the height is NaN.
 */
import type { ImageData } from '../image-data.js';
import { modelFields, resultImage, type Algorithm } from './algorithm.js';
import { castToUint8 } from './numeric.js';
import { validateModel } from './pydantic.js';

/** Terrarium has no parameters. */
export type TerrariumParams = Record<string, never>;

const FIELDS = modelFields('optionalSequence', []);

export const terrarium: Algorithm<TerrariumParams> = {
  id: 'terrarium',
  modelName: 'Terrarium',
  info: {
    title: 'Terrarium',
    description: 'Encode DEM into RGB (Mapzen Terrarium).',
    inputs: { nbands: 1 },
    outputs: { nbands: 3, dtype: 'uint8', min: null, max: null },
    parameters: {},
  },
  fields: FIELDS,
  parseParams(raw) {
    validateModel('Terrarium', FIELDS, raw);
    return {};
  },
  apply: applyTerrarium,
};

function applyTerrarium(img: ImageData): ImageData {
  const src = img.bands[0]!;
  const valid = img.masks[0]!;
  const n = src.length;
  const red = new Uint8Array(n);
  const green = new Uint8Array(n);
  const blue = new Uint8Array(n);
  // R's own mask, made only when a valid NaN height needs it.
  let redValid: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    const h = src[i]!;
    if (valid[i] === 0) {
      const kept = castToUint8(Math.min(Math.max(h, 0), 65535));
      red[i] = kept;
      green[i] = kept;
      blue[i] = kept;
      continue;
    }
    if (Number.isNaN(h)) {
      redValid ??= Uint8Array.from(valid);
      redValid[i] = 0;
      continue; // 0 in all three bands
    }
    // Scaling by 256 and the remainders are exact in float64.
    const v = Math.min(Math.max(h + 32768, 0), 65535);
    red[i] = castToUint8(v / 256);
    green[i] = castToUint8(v % 256);
    blue[i] = castToUint8((v * 256) % 256);
  }
  return resultImage(img, { width: img.width, height: img.height, dtype: 'uint8', bands: [red, green, blue], masks: [redValid ?? valid, valid, valid] });
}
