/**
 * `terrarium`: elevations of the first band encoded as Mapzen Terrarium RGB,
 * `h = R * 256 + G + B / 256 - 32768`. As numpy computes it: v = clip(h + 32768, 0, 65535) in
 * float64 whatever the band's dtype (numpy.ma makes the Python-float constant a float64 array),
 * R = v / 256, G = v mod 256, B = (v * 256) mod 256, each truncated to uint8. Masked pixels keep numpy.ma's values: the clipped raw height, in all
 * three bands. The first band's mask applies to all three output bands, and numpy.ma's division
 * also masks R where the height is NaN.
 *
 * TiTiler 2.4.0 (titiler/core/algorithm/dem.py, `Terrarium`) adds `nodata_height`: when set, masked
 * pixels are encoded as that height instead, and numpy.ma's item assignment unmasks them, so they
 * come out valid. Without it the two generations compute the same; 2.x describes the bands
 * `terranium_r`, `terranium_g`, `terranium_b` (sic), 0.18 leaves them b1–b3.
 */
import type { ImageData } from '../image-data.js';
import { describeParameters, modelFields, resultImage, type Algorithm } from './algorithm.js';
import { castToUint8 } from './numeric.js';
import { validateModel, type NumberField } from './pydantic.js';

export interface TerrariumParams {
  /** The height masked pixels are encoded as, making them valid (TiTiler 2.x); none by default. */
  nodataHeight?: number;
  /** TiTiler 2.x's band descriptions; 0.18 has none. */
  bandNames?: string[];
}

const NAMES_2 = ['terranium_r', 'terranium_g', 'terranium_b'];

const FIELDS_018 = modelFields({}, []);

/** TiTiler 2.4.0's `nodata_height: float | None = Field(None, ge=-99999.0, le=99999.0)` (terrainrgb's too). */
export const NODATA_HEIGHT: NumberField = { name: 'nodata_height', kind: 'float', default: null, minimum: -99999, maximum: 99999, nullable: true };
const PARAMS_2 = [NODATA_HEIGHT];
const FIELDS_2 = modelFields({}, PARAMS_2);

const INFO = {
  title: 'Terrarium',
  description: 'Encode DEM into RGB (Mapzen Terrarium).',
  inputs: { nbands: 1 },
  outputs: { nbands: 3, dtype: 'uint8', min: null, max: null },
} as const;

/** TiTiler 0.18.10's terrarium. */
export const terrarium: Algorithm<TerrariumParams> = {
  id: 'terrarium',
  modelName: 'Terrarium',
  info: { ...INFO, inputs: { ...INFO.inputs }, outputs: { ...INFO.outputs }, parameters: {} },
  fields: FIELDS_018,
  parseParams(raw) {
    validateModel('Terrarium', FIELDS_018, raw);
    return {};
  },
  apply: applyTerrarium,
};

/** TiTiler 2.4.0's terrarium. */
export const terrarium2: Algorithm<TerrariumParams> = {
  id: 'terrarium',
  modelName: 'Terrarium',
  info: { ...INFO, inputs: { ...INFO.inputs }, outputs: { ...INFO.outputs }, parameters: describeParameters(PARAMS_2) },
  fields: FIELDS_2,
  parseParams(raw) {
    const nodataHeight = validateModel('Terrarium', FIELDS_2, raw).get('nodata_height');
    return nodataHeight === undefined ? { bandNames: NAMES_2 } : { nodataHeight, bandNames: NAMES_2 };
  },
  apply: applyTerrarium,
};

/** The three bytes of a clipped, shifted height `v`: scaling by 256 and the remainders are exact in float64. */
function encode(v: number, red: Uint8Array, green: Uint8Array, blue: Uint8Array, i: number): void {
  red[i] = castToUint8(v / 256);
  green[i] = castToUint8(v % 256);
  blue[i] = castToUint8((v * 256) % 256);
}

function applyTerrarium(img: ImageData, params: TerrariumParams): ImageData {
  const src = img.bands[0]!;
  const valid = img.masks[0]!;
  const n = src.length;
  const red = new Uint8Array(n);
  const green = new Uint8Array(n);
  const blue = new Uint8Array(n);
  const nodata = params.nodataHeight;
  if (nodata !== undefined) {
    // Masked pixels get the nodata height and become valid; NaN heights still mask R.
    const v = Math.min(Math.max(nodata + 32768, 0), 65535);
    const redValid = new Uint8Array(n).fill(255);
    for (let i = 0; i < n; i++) {
      const h = src[i]!;
      if (valid[i] === 0) encode(v, red, green, blue, i);
      else if (Number.isNaN(h)) redValid[i] = 0;
      else encode(Math.min(Math.max(h + 32768, 0), 65535), red, green, blue, i);
    }
    const all = new Uint8Array(n).fill(255);
    return resultImage(img, { width: img.width, height: img.height, dtype: 'uint8', bands: [red, green, blue], masks: [redValid, all, all], ...names(params) });
  }
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
    encode(Math.min(Math.max(h + 32768, 0), 65535), red, green, blue, i);
  }
  return resultImage(img, {
    width: img.width,
    height: img.height,
    dtype: 'uint8',
    bands: [red, green, blue],
    masks: [redValid ?? valid, valid, valid],
    ...names(params),
  });
}

const names = (params: TerrariumParams): { bandNames?: string[] } => (params.bandNames ? { bandNames: [...params.bandNames] } : {});
