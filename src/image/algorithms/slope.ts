/**
 * `slope` (TiTiler 2.4.0, titiler/core/algorithm/dem.py `Slope`): the steepness of the first band in
 * degrees, 0–90, float32, named `slope`, `rad2deg(arctan(hypot(dx, dy)))` with dx and dy the
 * `numpy.gradient` slopes (pixel units) times `z_exaggeration`, divided by the pixel size in CRS
 * units (`abs(transform.a)`, `abs(transform.e)` of the image's bounds). A `buffer` crop as hillshade's.
 *
 * numpy as TiTiler runs it (the same gradient as hillshade.ts describes):
 * - float32 bands keep float32 slopes through the gradient and `*= z_exaggeration`; the division by
 *   the pixel size (a Python float) turns them float64, so from there on everything is float64,
 *   rounded to float32 at the end;
 * - a pixel is masked where a neighbour its differences use is masked (not only itself), where a
 *   difference or a quotient is not finite or the division is unsafe (numpy.ma's domain);
 * - masked pixels hold 0: numpy.sqrt of a masked array fills the masked data with its domain's 0.
 */
import { badRequest } from '../../errors.js';
import type { ImageData } from '../image-data.js';
import { describeParameters, modelFields, resultImage, type Algorithm } from './algorithm.js';
import { croppedBounds, Z_EXAGGERATION } from './hillshade.js';
import { gradientAt, type Gradient } from './gradient.js';
import { divisionMasked } from './numeric.js';
import { validateModel, type NumberField } from './pydantic.js';

export interface SlopeParams {
  /** Pixels cropped from each side. */
  buffer: number;
  /** Factor on the elevations' differences. */
  zExaggeration: number;
}

const PARAMS: NumberField[] = [
  { name: 'buffer', kind: 'int', default: 3, minimum: 0, maximum: 99, description: 'Buffer size for edge effects' },
  Z_EXAGGERATION,
];
// `output_min: list[float] = [0.0]`: a list, not any sequence.
const FIELDS = modelFields({ outputRange: 'floatList' }, PARAMS);

/** numpy's `rad2deg`: `x * (180 / pi)`. */
const DEGREES_PER_RADIAN = 180 / Math.PI;

export const slope: Algorithm<SlopeParams> = {
  id: 'slope',
  modelName: 'Slope',
  info: {
    title: 'Slope',
    description: 'Calculate degrees of slope from DEM dataset.',
    inputs: { nbands: 1 },
    outputs: { nbands: 1, dtype: 'float32', min: [0], max: [90] },
    parameters: describeParameters(PARAMS),
  },
  fields: FIELDS,
  parseParams(raw) {
    const v = validateModel('Slope', FIELDS, raw);
    return { buffer: v.get('buffer')!, zExaggeration: v.get('z_exaggeration')! };
  },
  apply: applySlope,
};

function applySlope(img: ImageData, params: SlopeParams): ImageData {
  const { width: w, height: h } = img;
  const b = params.buffer;
  // numpy.gradient needs two samples along each axis; TiTiler fails with a 500 otherwise.
  if (w < 2 || h < 2) throw badRequest(`slope needs an image of at least 2x2 pixels, got ${w}x${h}`);
  const outW = w - 2 * b;
  const outH = h - 2 * b;
  if (outW <= 0 || outH <= 0) throw badRequest(`slope buffer ${b} crops away the whole ${w}x${h} image; read it with a matching buffer`);
  const src = img.bands[0]!;
  const valid = img.masks[0]!;
  const single = img.dtype === 'float32';
  const f32 = Math.fround;
  const z = params.zExaggeration;
  const [west, south, east, north] = img.bounds;
  const sizeX = Math.abs((east - west) / w);
  const sizeY = Math.abs((south - north) / h);

  const out = new Float32Array(outW * outH);
  const mask = new Uint8Array(outW * outH);
  const g: Gradient = { x: 0, y: 0, masked: false };
  for (let r = b; r < h - b; r++) {
    for (let c = b; c < w - b; c++) {
      const o = (r - b) * outW + (c - b);
      gradientAt(src, valid, w, h, single, r, c, g);
      if (g.masked) continue; // 0, masked
      const x = single ? f32(g.x * z) : g.x * z;
      const y = single ? f32(g.y * z) : g.y * z;
      const dx = x / sizeX;
      const dy = y / sizeY;
      // Non-finite differences (masked by the gradient) give non-finite quotients too.
      if (!Number.isFinite(dx) || !Number.isFinite(dy) || divisionMasked(x, sizeX) || divisionMasked(y, sizeY)) continue;
      out[o] = Math.atan(Math.sqrt(dx * dx + dy * dy)) * DEGREES_PER_RADIAN;
      mask[o] = 255;
    }
  }
  return resultImage(img, {
    width: outW,
    height: outH,
    dtype: 'float32',
    bands: [out],
    masks: [mask],
    bandNames: ['slope'],
    bounds: b > 0 ? croppedBounds(img.bounds, w, h, b) : undefined,
  });
}
