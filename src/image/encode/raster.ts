/**
 * PNG through our own encoder (png.ts), JPEG and WebP through sharp (libvips, libjpeg-turbo), with the
 * band layouts and settings TiTiler gets from GDAL's drivers: PNG with adaptive row filters at a
 * configurable zlib level (TiTiler: 6; pngraw always 1), JPEG quality 85 with 4:2:0 chroma
 * subsampling, WebP quality 75 lossy. The mask, when given, is the alpha channel (never in JPEG).
 *
 * PNG decodes to GDAL's pixels exactly (lossless; only the size depends on the encoder). JPEG does
 * not: TiTiler's rasterio wheels bundle IJG libjpeg 9, which subsamples chroma in the DCT domain where
 * libjpeg-turbo averages 2×2 pixels first. Both are faithful pictures of the same pixels; the parity
 * suite compares them by PSNR (test/parity/rendering.test.ts). An encoder that reproduced libjpeg 9's
 * coefficients in TypeScript was measured 4–15× slower than libjpeg-turbo (4.5–15.9 ms against
 * 0.9–1.2 ms per 256² tile) for files of the same size, and removed.
 */
import sharp, { type Sharp } from 'sharp';

// libvips caches operation results for reuse; every encode here is a new image, so the cache only
// holds memory (up to 50 MB by default).
sharp.cache(false);
import { TesseraError, badRequest } from '../../errors.js';
import type { BandArray } from '../image-data.js';
import type { RasterData } from './types.js';
import { gdalEncoders } from './gdal-lazy.js';
import { encodePngPlanes, type PngContent, type PngLayout } from './png.js';

const PNG_LAYOUTS = '1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA) bands';
const JPEG_LAYOUTS = '1 (gray), 3 (RGB) or 4 (CMYK) bands';
const WEBP_LAYOUTS = '3 (RGB) or 4 (RGBA) bands, a single band being repeated as RGB';

function bandCountError(format: string, count: number, withMask: boolean, layouts: string): TesseraError {
  const what = withMask ? `${count} bands (${count - 1} data bands + the mask band)` : `${count} bands`;
  return badRequest(`The ${format} format cannot hold ${what}: it takes ${layouts}`);
}

function dtypeError(format: string, dtype: string, accepted: string): TesseraError {
  return badRequest(`The ${format} format cannot hold ${dtype} data: it takes ${accepted} data only`);
}

function asUint8(band: BandArray): Uint8Array {
  if (band instanceof Uint8Array) return band;
  throw new TesseraError('Internal', `expected uint8 pixels, got a ${band.constructor.name}`);
}

function asUint16(band: BandArray): Uint16Array {
  if (band instanceof Uint16Array) return band;
  throw new TesseraError('Internal', `expected uint16 pixels, got a ${band.constructor.name}`);
}

/** rio-tiler stretches the 0–255 mask to 0–65535 for 16-bit PNG: `(m / 255) * 65535`, truncated. */
const MASK_TO_16_BIT = Uint16Array.from({ length: 256 }, (_, m) => (m / 255) * 65535);

function stretchMask(mask: Uint8Array): Uint16Array {
  const out = new Uint16Array(mask.length);
  for (let i = 0; i < mask.length; i++) out[i] = MASK_TO_16_BIT[mask[i]!]!;
  return out;
}

/** Planes as sharp's raw input wants them: one pixel-interleaved buffer. */
function interleave8(planes: readonly Uint8Array[], pixels: number): Buffer {
  const n = planes.length;
  const out = Buffer.allocUnsafe(pixels * n);
  for (let c = 0; c < n; c++) {
    const src = planes[c]!;
    for (let i = 0, j = c; i < pixels; i++, j += n) out[j] = src[i]!;
  }
  return out;
}

/** A sharp pipeline over 3 (RGB) or 4 (RGBA) 8-bit planes. */
function rgbPipeline(planes: readonly Uint8Array[], width: number, height: number): Sharp {
  const channels = planes.length as 3 | 4;
  const input = interleave8(planes, width * height);
  // The pixel count was bounded where the image was read; sharp's own input limit does not apply.
  return sharp(input, { raw: { width, height, channels }, limitInputPixels: false }).toColourspace('srgb');
}

/**
 * PNG of uint8 or uint16 bands plus the mask as alpha, deflated at `zlevel` (0–9: the configured
 * level for png, 1 for pngraw) with the zlib strategy for `content`. One band is grey, two grey +
 * alpha, three RGB, four RGBA; uint16 is written as 16-bit samples; a graphic of few colours may be
 * written as palette indexes where `layout` allows it.
 */
export async function encodePng(data: RasterData, mask: Uint8Array | undefined, zlevel: number, content: PngContent, layout: PngLayout): Promise<Buffer> {
  const count = data.bands.length + (mask ? 1 : 0);
  if (data.dtype !== 'uint8' && data.dtype !== 'uint16') throw dtypeError('PNG', data.dtype, 'uint8 or uint16');
  if (count < 1 || count > 4) throw bandCountError('PNG', count, mask !== undefined, PNG_LAYOUTS);
  if (data.dtype === 'uint16') {
    const planes = data.bands.map(asUint16);
    if (mask) planes.push(stretchMask(mask));
    return encodePngPlanes(planes, data.width, data.height, zlevel, content, layout);
  }
  const planes = data.bands.map(asUint8);
  if (mask) planes.push(mask);
  return encodePngPlanes(planes, data.width, data.height, zlevel, content, layout);
}

/** JPEG (quality 85, 4:2:0, optimised Huffman tables as GDAL asks) of uint8 bands; JPEG has no alpha, so TiTiler never writes the mask. */
export async function encodeJpeg(data: RasterData): Promise<Buffer> {
  const count = data.bands.length;
  if (data.dtype !== 'uint8') throw dtypeError('JPEG', data.dtype, 'uint8');
  if (count === 4) return (await gdalEncoders('A CMYK JPEG')).encodeCmykJpeg(data); // GDAL writes 4 bands as CMYK; libvips would convert
  if (count !== 1 && count !== 3) throw bandCountError('JPEG', count, false, JPEG_LAYOUTS);
  const planes = data.bands.map(asUint8);
  const image =
    count === 3
      ? rgbPipeline(planes, data.width, data.height)
      : sharp(Buffer.from(planes[0]!.buffer, planes[0]!.byteOffset, planes[0]!.byteLength), {
          raw: { width: data.width, height: data.height, channels: 1 },
          limitInputPixels: false,
        }).toColourspace('b-w');
  return image.jpeg({ quality: 85, chromaSubsampling: '4:2:0', optimiseCoding: true }).toBuffer();
}

function fullyOpaque(mask: Uint8Array): boolean {
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 255) return false;
  return true;
}

/**
 * Lossy WebP (quality 75) of uint8 bands plus the mask as alpha; one band is repeated to RGB first.
 * A mask that is 255 everywhere is left out: libwebp drops an opaque alpha plane from the file
 * anyway (the bytes are identical: 10 of 10 real 256² tiles), after spending ~a quarter of the
 * encode on it (10.3 against 7.8 ms per tile).
 */
export async function encodeWebp(data: RasterData, mask: Uint8Array | undefined): Promise<Buffer> {
  if (data.dtype !== 'uint8') throw dtypeError('WEBP', data.dtype, 'uint8');
  const bands = data.bands.map(asUint8);
  const planes = bands.length === 1 ? [bands[0]!, bands[0]!, bands[0]!] : bands;
  if (mask && !(planes.length === 3 && fullyOpaque(mask))) planes.push(mask);
  if (planes.length !== 3 && planes.length !== 4) throw bandCountError('WEBP', planes.length, mask !== undefined, WEBP_LAYOUTS);
  return rgbPipeline(planes, data.width, data.height).webp({ quality: 75, lossless: false }).toBuffer();
}
