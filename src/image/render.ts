/**
 * The last step of every image route, TiTiler 0.18.10's `render_image`: optional colormap, the
 * automatic format choice (JPEG when every pixel is valid, else PNG), the automatic cast of dtypes a
 * format cannot hold to uint8 (rio-tiler's `rescale_array`, reproduced to the byte, quirks included),
 * then encoding with the 2-D dataset mask as alpha unless `returnMask` is false.
 * With `encoding: '2'`, TiTiler 2.4.0's (titiler/core/utils.py `render_image`, rio-tiler 8's
 * `ImageData.mask` and `render`): an automatic-format PNG takes uint8 alone (uint16 is cast too), and
 * the mask band of `.npy`, GeoTIFF and JPEG 2000 is in the data's dtype, its largest value where
 * valid and its smallest where masked (0.18: 255 and 0, a `.npy` array promoted to hold them).
 */
import { DTYPE_RANGE, datasetMask, maskInDtype, type BandArray, type DType, type ImageData } from './image-data.js';
import { MEDIA_TYPES, type ImageFormat } from './formats.js';
import { encode, type RasterData } from './encode/index.js';

export interface RenderOptions {
  /** The requested format; without one, JPEG if every pixel is valid, else PNG (decided after the colormap). */
  format?: ImageFormat;
  /** Write the mask (alpha band, npy's last band); the automatic format choice uses it either way. */
  returnMask: boolean;
  /**
   * Colours a single-band image: returns the uint8 bands to write (RGB, as rio-tiler's `apply_cmap`
   * gives) with masks that already combine the colormap's alpha with the data mask.
   */
  colormap?: (img: ImageData) => ImageData;
  /**
   * The colormap can make pixels transparent (see colormapCanBeTransparent): its PNG is written as
   * TiTiler writes it, RGB + alpha, never as palette indexes, so that GDAL and rasterio read the four
   * bands they read from TiTiler's file, transparency in the fourth.
   */
  colormapCanBeTransparent?: boolean;
  /**
   * The pixels were made by an algorithm (hillshade, contours…) rather than read: encoders treat
   * them as a graphic, as they do colormapped ones (see PngContent).
   */
  synthetic?: boolean;
  /** The encoder; render threads pass one that hands GDAL's formats back to the main thread. */
  encode?: typeof encode;
  /** TiTiler 2.x's `render_image` (see above); 0.18.10's when absent. */
  encoding?: '2';
}

export interface RenderedImage {
  body: Buffer;
  format: ImageFormat;
  mediaType: string;
}

const UINT8: ReadonlySet<DType> = new Set(['uint8']);
const UINT8_UINT16: ReadonlySet<DType> = new Set(['uint8', 'uint16']);
const JP2_NATIVE: ReadonlySet<DType> = new Set(['uint8', 'int16', 'uint16']);

/** Per format, the dtypes written as they are; others are rescaled to uint8 (`null`: none are). */
const NATIVE_DTYPES: Record<ImageFormat, ReadonlySet<DType> | null> = {
  png: UINT8_UINT16,
  jpeg: UINT8,
  jpg: UINT8,
  webp: UINT8,
  jp2: JP2_NATIVE,
  // TiTiler never casts these: GDAL's PNG driver then refuses what is not uint8/uint16 (a 400 here).
  pngraw: null,
  tif: null,
  npy: null,
};

function needsRescale(format: ImageFormat, dtype: DType, automaticUint8: boolean): boolean {
  const native = automaticUint8 && format === 'png' ? UINT8 : NATIVE_DTYPES[format];
  return native !== null && !native.has(dtype);
}

function everyPixelValid(mask: Uint8Array): boolean {
  for (let i = 0; i < mask.length; i++) if (mask[i] === 0) return false;
  return true;
}

/** Where the input range comes from; it decides numpy's arithmetic types in `linear_rescale`. */
export type RangeSource = 'statistics' | 'dtype';

/**
 * How numpy computes `(clip(v, min, max) - min) / float64(max - min) * 255` for this dtype:
 * - float32 data: clip and subtraction in float32 (Python-float bounds are "weak" under NEP 50),
 *   division and product in float64;
 * - integer data against its dtype's own range (Python ints): clip is a no-op and `v - min` stays in
 *   the dtype, so for signed dtypes it wraps around (int16 0 → -32768 → -127.5 → uint8 129);
 * - otherwise (float64 data, integer data against statistics) everything is exact in float64.
 * Statistics are taken as Python floats (file tags are; STAC JSON integers that would make numpy
 * overflow are not reproduced).
 */
type Arithmetic = 'float32' | 'float64' | 'wrapping';

function arithmeticFor(dtype: DType, source: RangeSource): Arithmetic {
  if (dtype === 'float32') return 'float32';
  if (dtype === 'float64' || source === 'statistics') return 'float64';
  return 'wrapping';
}

/**
 * One band of `rescale_array`. `validity[y * rowStride + x]` says whether pixel (x, y) is kept:
 * rowStride 0 replays one mask row on every row (TiTiler's quirk), rowStride = width reads the
 * pixel's own mask. Masked pixels stay 0. Stores go through a Uint8Array, whose conversion (NaN and
 * ±Infinity → 0, else truncation modulo 256) is what numpy's casts to the band dtype then to uint8
 * give on x86-64; float32 data is rounded to float32 first, as numpy stores it back into the band.
 */
function rescaleBand(
  src: BandArray,
  out: Uint8Array,
  arithmetic: Arithmetic,
  range: readonly [number, number],
  validity: Uint8Array,
  rowStride: number,
  width: number,
  height: number,
): void {
  const [min, max] = range;
  const span = max - min;
  if (arithmetic === 'float32') {
    const lo = Math.fround(min);
    const hi = Math.fround(max);
    for (let y = 0, i = 0; y < height; y++) {
      const row = y * rowStride;
      for (let x = 0; x < width; x++, i++) {
        if (validity[row + x] === 0) continue;
        const v = src[i]!;
        const clipped = v < lo ? lo : v > hi ? hi : v; // NaN passes through, as numpy.clip
        out[i] = Math.fround((Math.fround(clipped - lo) / span) * 255);
      }
    }
  } else if (arithmetic === 'float64') {
    for (let y = 0, i = 0; y < height; y++) {
      const row = y * rowStride;
      for (let x = 0; x < width; x++, i++) {
        if (validity[row + x] === 0) continue;
        const v = src[i]!;
        const clipped = v < min ? min : v > max ? max : v;
        out[i] = ((clipped - min) / span) * 255;
      }
    }
  } else {
    // v - min in the dtype: for a signed dtype (min = -2^(n-1)) non-negative values wrap to v - 2^(n-1).
    const shift = min < 0 ? -min : 0;
    for (let y = 0, i = 0; y < height; y++) {
      const row = y * rowStride;
      for (let x = 0; x < width; x++, i++) {
        if (validity[row + x] === 0) continue;
        const v = src[i]!;
        out[i] = ((v >= 0 ? v - shift : v + shift) / span) * 255;
      }
    }
  }
}

/**
 * rio-tiler's `rescale_array(data, mask, in_range)` to uint8 with out range (0, 255): one range per
 * band, or the first for all when the counts differ.
 *
 * Reproduced quirk (engine-semantics §6.6): TiTiler passes the 2-D mask, and `mask[band_index]` is
 * then *row* `band_index` of it, broadcast over every row. So band b keeps pixel (x, y) when pixel
 * (x, b) of the mask is valid, whatever pixel (x, y) itself is; tessera does the same so decoded
 * pixels match TiTiler's. Where TiTiler would fail (more bands than rows: an IndexError, a 500),
 * tessera uses each pixel's own validity instead.
 */
export function rescaleToUint8(
  bands: readonly BandArray[],
  dtype: DType,
  mask: Uint8Array,
  width: number,
  height: number,
  ranges: ReadonlyArray<readonly [number, number]>,
  source: RangeSource,
): Uint8Array[] {
  const arithmetic = arithmeticFor(dtype, source);
  return bands.map((band, b) => {
    const range = (ranges.length === bands.length ? ranges[b] : ranges[0]) ?? DTYPE_RANGE[dtype];
    const out = new Uint8Array(width * height);
    if (b < height) rescaleBand(band, out, arithmetic, range, mask.subarray(b * width, (b + 1) * width), 0, width, height);
    else rescaleBand(band, out, arithmetic, range, mask, width, width, height);
    return out;
  });
}

/** Renders an image as TiTiler's `render_image` does and encodes it. */
export async function renderImage(img: ImageData, opts: RenderOptions): Promise<RenderedImage> {
  const colored = opts.colormap ? opts.colormap(img) : img;
  const statistics = !opts.colormap && img.datasetStatistics && img.datasetStatistics.length > 0 ? img.datasetStatistics : undefined;
  const mask = datasetMask(colored);
  const format = opts.format ?? (everyPixelValid(mask) ? 'jpeg' : 'png');
  // TiTiler 2.x keeps an automatic PNG in uint8, so that JPEG and PNG tiles of a layer agree.
  const automaticUint8 = opts.encoding === '2' && opts.format === undefined;

  const content = opts.colormap || opts.synthetic ? 'graphic' : 'imagery';
  const pngLayout = opts.colormapCanBeTransparent ? 'planes' : 'any';
  let data: RasterData = { bands: colored.bands, dtype: colored.dtype, width: colored.width, height: colored.height, content, pngLayout };
  if (needsRescale(format, colored.dtype, automaticUint8)) {
    const ranges = statistics ?? [DTYPE_RANGE[colored.dtype]];
    const source: RangeSource = statistics ? 'statistics' : 'dtype';
    const bands = rescaleToUint8(colored.bands, colored.dtype, mask, colored.width, colored.height, ranges, source);
    data = { bands, dtype: 'uint8', width: colored.width, height: colored.height, content, pngLayout };
  }
  if (opts.encoding === '2' && format === 'npy' && opts.returnMask && data.dtype !== 'uint8' && data.dtype !== 'bool') {
    // 2.x: the mask is one more band of the data's dtype (a uint8 mask is the same either way).
    const withMask: RasterData = { ...data, bands: [...data.bands, maskInDtype(mask, data.dtype)] };
    const body = await (opts.encode ?? encode)(withMask, undefined, format, { bounds: colored.bounds, crs: colored.crs });
    return { body, format, mediaType: MEDIA_TYPES[format] };
  }
  if (opts.encoding === '2') data = { ...data, maskInDtypeRange: true };
  const body = await (opts.encode ?? encode)(data, opts.returnMask ? mask : undefined, format, { bounds: colored.bounds, crs: colored.crs });
  return { body, format, mediaType: MEDIA_TYPES[format] };
}
