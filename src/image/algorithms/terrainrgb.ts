/**
 * `terrainrgb`: elevations of the first band encoded as Mapbox Terrain-RGB,
 * `h = baseval + (R * 65536 + G * 256 + B) * interval`. As TiTiler computes it in float64:
 * d = around((h - baseval) / interval) (ties to even), then R, G, B = the base-256 digits of d
 * (floor divisions, so heights below `baseval` wrap), truncated to uint8. A range of d wider than
 * 256³ is refused, as TiTiler's ValueError refuses it (a 400 here, a 500 there).
 *
 * numpy.ma details kept: in-place `-=`/`/=` skip masked pixels, so those encode around(h) in all
 * three bands; a division numpy.ma deems unsafe (`interval` 0) masks the pixel instead, and so does
 * a non-finite d (NaN heights): such pixels are 0 and left out of the range check.
 */
import { badRequest } from '../../errors.js';
import { pyFloatRepr } from '../../pyjson.js';
import type { ImageData } from '../image-data.js';
import { describeParameters, modelFields, resultImage, type Algorithm } from './algorithm.js';
import { castToUint8, divisionMasked, roundHalfEven } from './numeric.js';
import { validateModel, type NumberField } from './pydantic.js';

export interface TerrainRgbParams {
  /** Height step of one unit of the encoded value. */
  interval: number;
  /** Height of the encoded value 0. */
  baseval: number;
}

const PARAMS: NumberField[] = [
  { name: 'interval', kind: 'float', default: 0.1, minimum: 0, maximum: 1 },
  { name: 'baseval', kind: 'float', default: -10000, minimum: -99999, maximum: 99999 },
];
const FIELDS = modelFields('optionalSequence', PARAMS);

/** Three base-256 digits. */
const MAX_RANGE = 256 ** 3;

export const terrainrgb: Algorithm<TerrainRgbParams> = {
  id: 'terrainrgb',
  modelName: 'TerrainRGB',
  info: {
    title: 'TerrainRGB',
    description: 'Encode DEM into RGB (Mapbox Terrain RGB).',
    inputs: { nbands: 1 },
    outputs: { nbands: 3, dtype: 'uint8', min: null, max: null },
    parameters: describeParameters(PARAMS),
  },
  fields: FIELDS,
  parseParams(raw) {
    const v = validateModel('TerrainRGB', FIELDS, raw);
    return { interval: v.get('interval')!, baseval: v.get('baseval')! };
  },
  apply: applyTerrainRgb,
};

function applyTerrainRgb(img: ImageData, params: TerrainRgbParams): ImageData {
  const { interval, baseval } = params;
  const src = img.bands[0]!;
  const inputValid = img.masks[0]!;
  const n = src.length;

  // First pass: the encoded values (kept as float64, as numpy has them) and the output mask.
  const encoded = new Float64Array(n);
  const valid = new Uint8Array(n);
  let maskGrew = false;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const h = src[i]!;
    if (inputValid[i] === 0) {
      encoded[i] = roundHalfEven(h);
      continue;
    }
    const shifted = h - baseval;
    if (divisionMasked(shifted, interval)) {
      maskGrew = true;
      encoded[i] = roundHalfEven(shifted);
      continue;
    }
    const d = roundHalfEven(shifted / interval);
    encoded[i] = d;
    if (!Number.isFinite(d)) {
      maskGrew = true;
      continue;
    }
    valid[i] = 255;
    if (d < min) min = d;
    if (d > max) max = d;
  }
  // With no valid pixel the range is -Infinity: no error, as numpy's masked max/min give none.
  const range = max - min;
  if (range > MAX_RANGE) throw badRequest(`Data of ${pyFloatRepr(range)} larger than 256 ** 3`);

  const red = new Uint8Array(n);
  const green = new Uint8Array(n);
  const blue = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const d = encoded[i]!;
    if (valid[i] === 0) {
      const kept = castToUint8(d);
      red[i] = kept;
      green[i] = kept;
      blue[i] = kept;
      continue;
    }
    // numpy's float floor divisions by 256 are exact floors; the differences are exact digits.
    const q1 = Math.floor(d / 256);
    const q2 = Math.floor(q1 / 256);
    red[i] = castToUint8((q2 / 256 - Math.floor(q2 / 256)) * 256);
    green[i] = castToUint8((q1 / 256 - q2) * 256);
    blue[i] = castToUint8((d / 256 - q1) * 256);
  }
  // Usually the output mask is the input's first band mask, shared as numpy does.
  const mask = maskGrew ? valid : inputValid;
  return resultImage(img, { width: img.width, height: img.height, dtype: 'uint8', bands: [red, green, blue], masks: [mask, mask, mask] });
}
