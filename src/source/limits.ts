/**
 * The two pixel limits every read is held to before a byte is fetched: values in the answer
 * (width × height × bands, TESSERA_MAX_OUTPUT_PIXELS) and source pixels read after the overview
 * choice (TESSERA_MAX_SOURCE_PIXELS). One place for the rule and its message, whoever reads:
 * a tile, a whole image, features, a mosaic, per-asset statistics, an item made from a raster.
 */
import { badRequest } from '../errors.js';

export interface PixelLimits {
  /** Largest width × height × bands of an answer. */
  maxOutputPixels: number;
  /** Largest number of source pixels one request may read (after overview choice). */
  maxSourcePixels: number;
}

/** 400 when `values` (described by `what`, e.g. "512x512 pixels × 3 band(s)") pass the output limit. */
export function checkOutputValues(values: number, limits: PixelLimits, what: string, hint = 'use max_size or width/height'): void {
  if (values > limits.maxOutputPixels) {
    throw badRequest(`Requested image is too large: ${what} exceeds the limit of ${limits.maxOutputPixels} values; ${hint}`);
  }
}

/** 400 when reading `what` needs more than the source-pixel limit. */
export function checkSourcePixels(pixels: number, limits: PixelLimits, what: string, hint = 'use a smaller area, max_size or width/height'): void {
  if (pixels > limits.maxSourcePixels) {
    throw badRequest(`Requested area is too large: reading ${what} needs ${pixels} source pixels, above the limit of ${limits.maxSourcePixels}; ${hint}`);
  }
}
