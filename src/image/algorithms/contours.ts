/**
 * `contours`: elevations painted with the `terrain` colormap (minz–maxz stretched to indexes
 * 1–255), with black lines where `elevation mod increment < thickness`. TiTiler's steps, in float64:
 * `linear_rescale` (clip, shift, divide, ×254, +1), the uint8 cast (truncation), the colormap
 * lookup, numpy's floor-modulo for the lines. Pixels are painted whether masked or not; the output
 * is masked where the input's dataset mask is (no band valid), on all three bands. TiTiler 2.4.0
 * (titiler/core/algorithm/dem.py `Contours`) computes the same and describes the bands
 * `contours_r`, `contours_g`, `contours_b` (0.18 leaves them b1–b3).
 */
import { badRequest } from '../../errors.js';
import { datasetMask, type ImageData } from '../image-data.js';
import { describeParameters, modelFields, resultImage, type Algorithm } from './algorithm.js';
import { castToUint8, floorMod } from './numeric.js';
import { validateModel, type NumberField } from './pydantic.js';
import { TERRAIN_RGB } from './terrain-colormap.js';

export interface ContoursParams {
  increment: number;
  thickness: number;
  minz: number;
  maxz: number;
}

const PARAMS: NumberField[] = [
  { name: 'increment', kind: 'int', default: 35, minimum: 0, maximum: 999 },
  { name: 'thickness', kind: 'int', default: 1, minimum: 0, maximum: 10 },
  { name: 'minz', kind: 'int', default: -12000, minimum: -99999, maximum: 99999 },
  { name: 'maxz', kind: 'int', default: 8000, minimum: -99999, maximum: 99999 },
];
const FIELDS = modelFields({}, PARAMS);

function contoursOf(bandNames: string[] | undefined): Algorithm<ContoursParams> {
  return {
    id: 'contours',
    modelName: 'Contours',
    info: {
      title: 'Contours',
      description: 'Create contours from DEM dataset.',
      inputs: { nbands: 1 },
      outputs: { nbands: 3, dtype: 'uint8', min: null, max: null },
      parameters: describeParameters(PARAMS),
    },
    fields: FIELDS,
    parseParams(raw) {
      const v = validateModel('Contours', FIELDS, raw);
      return { increment: v.get('increment')!, thickness: v.get('thickness')!, minz: v.get('minz')!, maxz: v.get('maxz')! };
    },
    apply: (img, params) => applyContours(img, params, bandNames),
  };
}

/** TiTiler 0.18.10's contours. */
export const contours = contoursOf(undefined);
/** TiTiler 2.4.0's contours: the same pixels, its band descriptions. */
export const contours2 = contoursOf(['contours_r', 'contours_g', 'contours_b']);

function applyContours(img: ImageData, params: ContoursParams, bandNames: string[] | undefined): ImageData {
  // TiTiler paints every band and then fails in apply_cmap (a 500): only one band makes sense.
  if (img.bands.length !== 1) throw badRequest(`contours needs a 1-band image, got ${img.bands.length} bands`);
  const src = img.bands[0]!;
  const n = src.length;
  const { increment, thickness, minz, maxz } = params;
  const span = maxz - minz;
  const red = new Uint8Array(n);
  const green = new Uint8Array(n);
  const blue = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const v = src[i]!;
    if (floorMod(v, increment) < thickness) continue; // a contour line: black
    // numpy.clip propagates NaN, as Math.max/Math.min do.
    const k = 3 * castToUint8(((Math.min(Math.max(v, minz), maxz) - minz) / span) * 254 + 1);
    red[i] = TERRAIN_RGB[k]!;
    green[i] = TERRAIN_RGB[k + 1]!;
    blue[i] = TERRAIN_RGB[k + 2]!;
  }
  const mask = datasetMask(img);
  return resultImage(img, {
    width: img.width,
    height: img.height,
    dtype: 'uint8',
    bands: [red, green, blue],
    masks: [mask, mask, mask],
    ...(bandNames ? { bandNames: [...bandNames] } : {}),
  });
}
