/**
 * `hillshade` (TiTiler 0.18.10, after the 0.18.7 fix): shaded relief of the first band seen from
 * `azimuth` degrees (clockwise from north) and `angle_altitude` degrees above the horizon, 0–255.
 * TiTiler 2.4.0's (titiler/core/algorithm/dem.py, `HillShade`) differs in three ways, kept apart
 * because the same request means either: defaults azimuth 45 and altitude 45 (0.18: 90 and 90), a
 * `z_exaggeration` factor on both slopes (numpy.ma's in-place product: float32 slopes stay float32),
 * and angles through `numpy.deg2rad` (`x * (pi / 180)`, not `x * pi / 180`).
 *
 * Byte-exact with numpy as TiTiler runs it:
 * - the slopes are `numpy.gradient` in pixel units: central differences inside, one-sided at the
 *   edges; integer bands are promoted to float64; float32 bands stay float32 through the gradient,
 *   its norm, arctan and the aspect's arctan2, but numpy.ma turns Python-float operands into float64
 *   arrays, so from `pi/2 - arctan(…)` and `azimuth - aspect` on everything is float64;
 * - numpy.ma propagation through the gradient: a pixel is masked when a neighbour its differences
 *   use is masked (not when only itself is) or a difference is not finite; masked pixels hold 255;
 * - the `buffer` crop removes `buffer` pixels on each side and shrinks the bounds to match, so a
 *   tile read with the same `buffer` comes back at its nominal size.
 * One known gap: numpy's SIMD float32 arctan is not always correctly rounded (ours is), so on
 * float32 DEMs about one pixel per 256x256 tile can come out 1 off from TiTiler's.
 */
import { badRequest } from '../../errors.js';
import type { BBox } from '../../tms/grid.js';
import type { ImageData } from '../image-data.js';
import { describeParameters, modelFields, resultImage, type Algorithm } from './algorithm.js';
import { gradientAt, type Gradient } from './gradient.js';
import { castToUint8 } from './numeric.js';
import { validateModel, type NumberField } from './pydantic.js';

export interface HillshadeParams {
  /** Degrees, 0–360. */
  azimuth: number;
  /** Degrees, −90–90. */
  angleAltitude: number;
  /** Pixels cropped from each side. */
  buffer: number;
  /** Factor on the slopes (TiTiler 2.x); undefined in 0.18, which has none. */
  zExaggeration?: number;
}

const PARAMS_018: NumberField[] = [
  { name: 'azimuth', kind: 'int', default: 90, minimum: 0, maximum: 360 },
  { name: 'angle_altitude', kind: 'float', default: 90, minimum: -90, maximum: 90 },
  { name: 'buffer', kind: 'int', default: 3, minimum: 0, maximum: 99 },
];
const FIELDS_018 = modelFields({}, PARAMS_018);

/** The exaggeration's bounds, shared with slope (both TiTiler 2.4.0 `Field(1.0, ge=1e-6, le=1e6)`). */
export const Z_EXAGGERATION: NumberField = { name: 'z_exaggeration', kind: 'float', default: 1, minimum: 1e-6, maximum: 1e6 };

const PARAMS_2: NumberField[] = [
  { name: 'azimuth', kind: 'int', default: 45, minimum: 0, maximum: 360 },
  { name: 'angle_altitude', kind: 'float', default: 45, minimum: -90, maximum: 90 },
  { name: 'buffer', kind: 'int', default: 3, minimum: 0, maximum: 99 },
  Z_EXAGGERATION,
];
const FIELDS_2 = modelFields({}, PARAMS_2);

const INFO = {
  title: 'Hillshade',
  description: 'Create hillshade from DEM dataset.',
  inputs: { nbands: 1 },
  outputs: { nbands: 1, dtype: 'uint8', min: null, max: null },
} as const;

/** TiTiler 0.18.10's hillshade. */
export const hillshade: Algorithm<HillshadeParams> = {
  id: 'hillshade',
  modelName: 'HillShade',
  info: { ...INFO, inputs: { ...INFO.inputs }, outputs: { ...INFO.outputs }, parameters: describeParameters(PARAMS_018) },
  fields: FIELDS_018,
  parseParams(raw) {
    const v = validateModel('HillShade', FIELDS_018, raw);
    return { azimuth: v.get('azimuth')!, angleAltitude: v.get('angle_altitude')!, buffer: v.get('buffer')! };
  },
  apply: applyHillshade,
};

/** TiTiler 2.4.0's hillshade. */
export const hillshade2: Algorithm<HillshadeParams> = {
  id: 'hillshade',
  modelName: 'HillShade',
  info: { ...INFO, inputs: { ...INFO.inputs }, outputs: { ...INFO.outputs }, parameters: describeParameters(PARAMS_2) },
  fields: FIELDS_2,
  parseParams(raw) {
    const v = validateModel('HillShade', FIELDS_2, raw);
    return { azimuth: v.get('azimuth')!, angleAltitude: v.get('angle_altitude')!, buffer: v.get('buffer')!, zExaggeration: v.get('z_exaggeration')! };
  },
  apply: applyHillshade,
};

function applyHillshade(img: ImageData, params: HillshadeParams): ImageData {
  const { width: w, height: h } = img;
  const b = params.buffer;
  // numpy.gradient needs two samples along each axis; TiTiler fails with a 500 otherwise.
  if (w < 2 || h < 2) throw badRequest(`hillshade needs an image of at least 2x2 pixels, got ${w}x${h}`);
  const outW = w - 2 * b;
  const outH = h - 2 * b;
  if (outW <= 0 || outH <= 0) {
    throw badRequest(`hillshade buffer ${b} crops away the whole ${w}x${h} image; read it with a matching buffer`);
  }
  const src = img.bands[0]!;
  const valid = img.masks[0]!;
  const single = img.dtype === 'float32';
  const f32 = Math.fround;

  const z = params.zExaggeration;
  // 0.18: `x * pi / 180`; 2.x: numpy.deg2rad, `x * (pi / 180)`.
  const radians = (deg: number): number => (z === undefined ? (deg * Math.PI) / 180 : deg * (Math.PI / 180));
  const azimuthRad = radians(360 - params.azimuth);
  const altitudeRad = radians(params.angleAltitude);
  const sinAlt = Math.sin(altitudeRad);
  const cosAlt = Math.cos(altitudeRad);

  const out = new Uint8Array(outW * outH);
  const mask = new Uint8Array(outW * outH);
  const g: Gradient = { x: 0, y: 0, masked: false };
  for (let r = b; r < h - b; r++) {
    for (let c = b; c < w - b; c++) {
      const o = (r - b) * outW + (c - b);
      gradientAt(src, valid, w, h, single, r, c, g);
      let x = g.x;
      let y = g.y;
      // numpy.ma's division (inside numpy.gradient) also masks non-finite quotients.
      if (g.masked || !Number.isFinite(x) || !Number.isFinite(y)) {
        out[o] = 255;
        continue;
      }
      if (z !== undefined) {
        // `x *= z_exaggeration` in place: float32 slopes are rounded back to float32.
        x = single ? f32(x * z) : x * z;
        y = single ? f32(y * z) : y * z;
      }
      // float32 up to the arctangents for float32 bands (one rounding per numpy operation).
      const atanNorm = single ? f32(Math.atan(f32(Math.sqrt(f32(f32(x * x) + f32(y * y)))))) : Math.atan(Math.sqrt(x * x + y * y));
      const aspect = single ? f32(Math.atan2(-x, y)) : Math.atan2(-x, y);
      const slope = Math.PI / 2 - atanNorm;
      const sinSlope = Math.sin(slope);
      const cosSlope = Math.cos(slope);
      const cosAzimuth = Math.cos(azimuthRad - aspect);
      const shaded = sinAlt * sinSlope + cosAlt * cosSlope * cosAzimuth;
      const value = (255 * (shaded + 1)) / 2;
      out[o] = value < 0 ? 0 : castToUint8(value);
      mask[o] = 255;
    }
  }

  return resultImage(img, {
    width: outW,
    height: outH,
    dtype: 'uint8',
    bands: [out],
    masks: [mask],
    bandNames: ['hillshade'],
    bounds: b > 0 ? croppedBounds(img.bounds, w, h, b) : undefined,
  });
}

/**
 * The bounds of the window `buffer` pixels inside the image, computed as rasterio's
 * `windows.bounds(window, from_bounds(...))` does (same operations, same rounding).
 */
export function croppedBounds(bounds: BBox, width: number, height: number, buffer: number): BBox {
  const [west, south, east, north] = bounds;
  const xSize = (east - west) / width;
  const ySize = (south - north) / height;
  return [buffer * xSize + west, (height - buffer) * ySize + north, (width - buffer) * xSize + west, buffer * ySize + north];
}
