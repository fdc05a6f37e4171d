/**
 * ImageData: what every reader verb returns and every post-processing step and encoder consumes.
 * Bands are whole typed arrays (row-major, width × height) of one numpy-style dtype; each band has
 * its own validity mask, as rio-tiler's masked arrays have (255 = valid, 0 = masked, the GDAL
 * convention, so a mask can be handed to an encoder as an alpha band without conversion).
 */
import type { BBox } from '../tms/grid.js';

/** numpy dtype names, as TiTiler reports and numexpr produces them. */
export type DType = 'bool' | 'uint8' | 'int8' | 'uint16' | 'int16' | 'uint32' | 'int32' | 'int64' | 'uint64' | 'float32' | 'float64';

export type BandArray = Uint8Array | Int8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float32Array | Float64Array;

/**
 * The typed array that holds each dtype ('int64' and 'uint64' are held exactly up to 2^53 in a Float64Array;
 * 'bool' as 0/1 bytes). uint64 is only ever made by an algorithm (numpy's sum of unsigned bands).
 */
export const ARRAY_OF: Record<DType, { new (n: number): BandArray }> = {
  bool: Uint8Array,
  uint8: Uint8Array,
  int8: Int8Array,
  uint16: Uint16Array,
  int16: Int16Array,
  uint32: Uint32Array,
  int32: Int32Array,
  int64: Float64Array,
  uint64: Float64Array,
  float32: Float32Array,
  float64: Float64Array,
};

/** rasterio's `dtype_ranges`: what automatic rescaling maps to 0–255 when no statistics are known. */
export const DTYPE_RANGE: Record<DType, [number, number]> = {
  bool: [0, 1],
  uint8: [0, 255],
  int8: [-128, 127],
  uint16: [0, 65535],
  int16: [-32768, 32767],
  uint32: [0, 4294967295],
  int32: [-2147483648, 2147483647],
  int64: [-(2 ** 63), 2 ** 63], // the doubles nearest int64's bounds, -9223372036854775808 and 9223372036854775807
  uint64: [0, 2 ** 64], // the double nearest 18446744073709551615
  float32: [-3.4028234663852886e38, 3.4028234663852886e38],
  float64: [-Number.MAX_VALUE, Number.MAX_VALUE],
};

export function isFloat(dtype: DType): boolean {
  return dtype === 'float32' || dtype === 'float64';
}

export function allocate(dtype: DType, length: number): BandArray {
  return new ARRAY_OF[dtype](length);
}

/** rio-tiler 8's mask (255 valid, 0 masked) as a band of `dtype`: its largest value where valid, its smallest where masked. */
export function maskInDtype(mask: Uint8Array, dtype: DType): BandArray {
  const [min, max] = DTYPE_RANGE[dtype];
  const out = allocate(dtype, mask.length);
  for (let i = 0; i < mask.length; i++) out[i] = mask[i] === 0 ? min : max;
  return out;
}

export interface ImageData {
  width: number;
  height: number;
  dtype: DType;
  /** One array per band, each `width * height` long. */
  bands: BandArray[];
  /** One mask per band (255 valid, 0 masked); bands may share one mask array. */
  masks: Uint8Array[];
  bandNames: string[];
  /** Bounds of the pixel grid in `crs`. */
  bounds: BBox;
  /** CRS of `bounds` (WKT or a user string GDAL understands). */
  crs: string;
  /** Per-band (min, max) known from the file or STAC metadata, used to auto-rescale at render time. */
  datasetStatistics?: Array<[number, number]>;
  /** Names of the assets (or URLs) the pixels came from. */
  assets?: string[];
}

/**
 * The 2-D dataset mask TiTiler renders with: 255 where *any* band is valid, else 0.
 * Returns one of the band masks itself when every band shares it (no copy).
 */
export function datasetMask(img: ImageData): Uint8Array {
  const first = img.masks[0];
  if (!first) return new Uint8Array(img.width * img.height).fill(255);
  if (img.masks.every((m) => m === first)) return first;
  const out = new Uint8Array(first.length);
  // Four mask bytes per step where the arrays allow 32-bit views (the usual case).
  const words = out.length >>> 2;
  for (const m of img.masks) {
    let i = 0;
    if ((m.byteOffset & 3) === 0) {
      const o32 = new Uint32Array(out.buffer, 0, words);
      const m32 = new Uint32Array(m.buffer, m.byteOffset, words);
      for (let w = 0; w < words; w++) o32[w] = o32[w]! | m32[w]!;
      i = words << 2;
    }
    for (; i < out.length; i++) out[i] = out[i]! | m[i]!;
  }
  return out;
}

/** The mask an expression's outputs get: masked wherever *any* input band is masked. */
export function intersectMasks(masks: readonly Uint8Array[], length: number): Uint8Array {
  const first = masks[0];
  if (!first) return new Uint8Array(length).fill(255);
  if (masks.every((m) => m === first)) return first;
  const out = Uint8Array.from(first);
  for (let b = 1; b < masks.length; b++) {
    const m = masks[b]!;
    for (let i = 0; i < length; i++) out[i] = out[i]! & m[i]!;
  }
  return out;
}
