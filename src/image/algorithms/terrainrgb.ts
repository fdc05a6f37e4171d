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
 *
 * TiTiler 2.4.0 (titiler/core/algorithm/dem.py, `TerrainRGB`) takes the digits from d cast to int32
 * (`& 0xFF`, `>> 8`, `>> 16`; NaN and values past int32 cast to INT32_MIN, whose digits are 0): the
 * same digits for valid pixels, but masked ones now get all three digits of around(h) (bitwise
 * operators are plain ufuncs on masked arrays) instead of its low byte three times. Its
 * `nodata_height` encodes masked input pixels as `(nodata_height - baseval) / interval`, unrounded,
 * after the range check, and numpy.ma's item assignment makes them valid. It describes the bands
 * `terrain_r`, `terrain_g`, `terrain_b` (0.18 leaves them b1–b3).
 */
import { badRequest } from '../../errors.js';
import { pyFloatRepr } from '../../pyjson.js';
import type { ImageData } from '../image-data.js';
import { describeParameters, modelFields, resultImage, type Algorithm } from './algorithm.js';
import { castToUint8, divisionMasked, roundHalfEven } from './numeric.js';
import { validateModel, type NumberField } from './pydantic.js';
import { NODATA_HEIGHT } from './terrarium.js';

export interface TerrainRgbParams {
  /** Height step of one unit of the encoded value. */
  interval: number;
  /** Height of the encoded value 0. */
  baseval: number;
  /** TiTiler 2.x: the digits come from an int32 cast; undefined in 0.18. */
  int32Digits?: true;
  /** TiTiler 2.x: the height masked pixels are encoded as, making them valid. */
  nodataHeight?: number;
}

const PARAMS_018: NumberField[] = [
  { name: 'interval', kind: 'float', default: 0.1, minimum: 0, maximum: 1 },
  { name: 'baseval', kind: 'float', default: -10000, minimum: -99999, maximum: 99999 },
];
const FIELDS_018 = modelFields({}, PARAMS_018);
const PARAMS_2: NumberField[] = [...PARAMS_018, NODATA_HEIGHT];
const FIELDS_2 = modelFields({}, PARAMS_2);

/** Three base-256 digits. */
const MAX_RANGE = 256 ** 3;

const INFO = {
  title: 'TerrainRGB',
  description: 'Encode DEM into RGB (Mapbox Terrain RGB).',
  inputs: { nbands: 1 },
  outputs: { nbands: 3, dtype: 'uint8', min: null, max: null },
} as const;

/** TiTiler 0.18.10's terrainrgb. */
export const terrainrgb: Algorithm<TerrainRgbParams> = {
  id: 'terrainrgb',
  modelName: 'TerrainRGB',
  info: { ...INFO, inputs: { ...INFO.inputs }, outputs: { ...INFO.outputs }, parameters: describeParameters(PARAMS_018) },
  fields: FIELDS_018,
  parseParams(raw) {
    const v = validateModel('TerrainRGB', FIELDS_018, raw);
    return { interval: v.get('interval')!, baseval: v.get('baseval')! };
  },
  apply: applyTerrainRgb,
};

/** TiTiler 2.4.0's terrainrgb. */
export const terrainrgb2: Algorithm<TerrainRgbParams> = {
  id: 'terrainrgb',
  modelName: 'TerrainRGB',
  info: { ...INFO, inputs: { ...INFO.inputs }, outputs: { ...INFO.outputs }, parameters: describeParameters(PARAMS_2) },
  fields: FIELDS_2,
  parseParams(raw) {
    const v = validateModel('TerrainRGB', FIELDS_2, raw);
    const nodataHeight = v.get('nodata_height');
    return { interval: v.get('interval')!, baseval: v.get('baseval')!, int32Digits: true, ...(nodataHeight === undefined ? {} : { nodataHeight }) };
  },
  apply: applyTerrainRgb,
};

/** numpy's float64 → int32 cast on x86-64: truncation; NaN, ±Infinity and values out of range give INT32_MIN. */
function toInt32(x: number): number {
  const t = Math.trunc(x);
  return t >= -2147483648 && t <= 2147483647 ? t : -2147483648;
}

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

  if (params.int32Digits) return int32Encoding(img, params, encoded, maskGrew ? valid : inputValid);

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

/**
 * TiTiler 2.x's digits: every pixel's d (masked ones too) cast to int32, then its low three bytes;
 * with `nodata_height`, masked input pixels are encoded as it and become valid.
 */
function int32Encoding(img: ImageData, params: TerrainRgbParams, encoded: Float64Array, mask: Uint8Array): ImageData {
  const inputValid = img.masks[0]!;
  const n = encoded.length;
  const nodata = params.nodataHeight;
  let outMask = mask;
  if (nodata !== undefined) {
    const d = (nodata - params.baseval) / params.interval;
    outMask = Uint8Array.from(mask);
    for (let i = 0; i < n; i++) {
      if (inputValid[i] === 0) {
        encoded[i] = d;
        outMask[i] = 255;
      }
    }
  }
  const red = new Uint8Array(n);
  const green = new Uint8Array(n);
  const blue = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const t = toInt32(encoded[i]!);
    red[i] = (t >> 16) & 0xff;
    green[i] = (t >> 8) & 0xff;
    blue[i] = t & 0xff;
  }
  return resultImage(img, {
    width: img.width,
    height: img.height,
    dtype: 'uint8',
    bands: [red, green, blue],
    masks: [outMask, outMask, outMask],
    bandNames: ['terrain_r', 'terrain_g', 'terrain_b'],
  });
}
