/**
 * Encoding of a rendered image into one of TiTiler's output formats (rio-tiler's `render`): the
 * bands as given (the renderer has already cast them to what the format needs), plus the 2-D mask
 * as an alpha / last band when it is to be returned. Formats that cannot hold the bands' dtype or
 * count are client errors (400), not GDAL failures.
 */
import { TesseraError } from '../../errors.js';
import type { ImageFormat } from '../formats.js';
import { encodeNpy } from './npy.js';
import { encodeJpeg, encodePng, encodeWebp } from './raster.js';
import { gdalEncoders } from './gdal-lazy.js';
import { DEFAULT_PNG_LEVEL } from './png.js';
import type { GeoReference, RasterData } from './types.js';

export type { GeoReference, RasterData } from './types.js';
export { DEFAULT_PNG_LEVEL } from './png.js';

/** What a deployment may tune in the encoders (from the settings, see Services). */
export interface EncoderSettings {
  /** zlib level (0–9) of `png` output; `pngraw` always uses 1, as TiTiler does. */
  pngLevel: number;
}

let pngLevel = DEFAULT_PNG_LEVEL;

/** Applies the settings to every later `encode` call of this process. */
export function configureEncoders(settings: EncoderSettings): void {
  const level = settings.pngLevel;
  if (!Number.isInteger(level) || level < 0 || level > 9) throw new TesseraError('Internal', `the PNG zlib level must be an integer from 0 to 9, got ${level}`);
  pngLevel = level;
}

function checkShape(data: RasterData, mask: Uint8Array | undefined): void {
  const pixels = data.width * data.height;
  if (!Number.isInteger(pixels) || pixels <= 0) throw new TesseraError('Internal', `cannot encode a ${data.width}×${data.height} image`);
  if (data.bands.length === 0) throw new TesseraError('Internal', 'cannot encode an image without bands');
  if (data.bands.some((band) => band.length !== pixels) || (mask && mask.length !== pixels)) {
    throw new TesseraError('Internal', `band or mask length differs from ${data.width}×${data.height}`);
  }
}

/**
 * The file bytes of `data` in `format`. `mask` (255 valid, 0 masked) is written as alpha or a last
 * band where the format has one (never in JPEG); `geo` georeferences GeoTIFF output.
 */
export async function encode(data: RasterData, mask: Uint8Array | undefined, format: ImageFormat, geo?: GeoReference): Promise<Buffer> {
  checkShape(data, mask);
  switch (format) {
    case 'png':
      return encodePng(data, mask, pngLevel, data.content ?? 'imagery', data.pngLayout ?? 'any');
    case 'pngraw':
      // TiTiler's zlib settings: level 1, default strategy (the values are data, not a picture), and
      // never palette indexes: whoever asks for raw values reads the bands.
      return encodePng(data, mask, 1, 'graphic', 'planes');
    case 'jpeg':
    case 'jpg':
      return encodeJpeg(data);
    case 'webp':
      return encodeWebp(data, mask);
    case 'jp2':
      return (await gdalEncoders('JPEG 2000')).encodeJpeg2000(data, mask);
    case 'tif':
      return (await gdalEncoders('GeoTIFF')).encodeGeoTiff(data, mask, geo);
    case 'npy':
      return encodeNpy(data, mask);
  }
}
