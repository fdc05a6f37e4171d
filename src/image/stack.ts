/**
 * Stacking images band-wise (rio-tiler `ImageData.create_from_list`): images of different sizes are
 * resized to the largest with nearest sampling, dtypes promoted as numpy concatenation does.
 */
import { allocate, type BandArray, type DType, type ImageData } from './image-data.js';

const SIGNED: Partial<Record<DType, number>> = { int8: 8, int16: 16, int32: 32, int64: 64 };
const UNSIGNED: Partial<Record<DType, number>> = { bool: 1, uint8: 8, uint16: 16, uint32: 32 };

/** numpy's result_type for two dtypes (the subset tessera produces). */
export function promote(a: DType, b: DType): DType {
  if (a === b) return a;
  const fa = a === 'float32' || a === 'float64';
  const fb = b === 'float32' || b === 'float64';
  if (fa && fb) return 'float64';
  if (fa || fb) {
    const f = fa ? a : b;
    const other = fa ? b : a;
    if (f === 'float64') return 'float64';
    const bits = SIGNED[other] ?? UNSIGNED[other] ?? 64;
    return bits <= 16 ? 'float32' : 'float64';
  }
  if (a === 'bool') return b;
  if (b === 'bool') return a;
  const ua = UNSIGNED[a];
  const ub = UNSIGNED[b];
  const sa = SIGNED[a];
  const sb = SIGNED[b];
  if (ua !== undefined && ub !== undefined) return ua >= ub ? a : b;
  if (sa !== undefined && sb !== undefined) return sa >= sb ? a : b;
  const u = (ua ?? ub)!;
  const s = (sa ?? sb)!;
  if (s > u) return sa !== undefined ? a : b;
  const need = u * 2;
  return need <= 16 ? 'int16' : need <= 32 ? 'int32' : 'int64';
}

export function convert(band: BandArray, from: DType, to: DType): BandArray {
  if (from === to) return band;
  const out = allocate(to, band.length);
  (out as Float64Array).set(band as Float64Array);
  return out;
}

/** Nearest-neighbour resize with GDAL's pixel-centre rule. */
export function resizeNearest<T extends BandArray | Uint8Array>(src: T, sw: number, sh: number, dw: number, dh: number): T {
  const out = new (src.constructor as new (n: number) => T)(dw * dh);
  const cols = new Int32Array(dw);
  for (let c = 0; c < dw; c++) cols[c] = Math.min(sw - 1, Math.floor(((c + 0.5) * sw) / dw));
  for (let r = 0; r < dh; r++) {
    const sr = Math.min(sh - 1, Math.floor(((r + 0.5) * sh) / dh));
    const base = sr * sw;
    const o = r * dw;
    for (let c = 0; c < dw; c++) (out as Uint8Array)[o + c] = (src as Uint8Array)[base + cols[c]!]!;
  }
  return out;
}

export function stackImages(images: readonly ImageData[]): ImageData {
  const first = images[0];
  if (!first) throw new Error('stackImages needs at least one image');
  if (images.length === 1) return first;
  const height = Math.max(...images.map((i) => i.height));
  const width = Math.max(...images.map((i) => i.width));
  const dtype = images.map((i) => i.dtype).reduce(promote);
  const bands: BandArray[] = [];
  const masks: Uint8Array[] = [];
  for (const img of images) {
    const same = img.width === width && img.height === height;
    const maskMap = new Map<Uint8Array, Uint8Array>();
    img.bands.forEach((band, k) => {
      const b = same ? band : resizeNearest(band, img.width, img.height, width, height);
      bands.push(convert(b, img.dtype, dtype));
      const m = img.masks[k]!;
      let rm = maskMap.get(m);
      if (!rm) {
        rm = same ? m : resizeNearest(m, img.width, img.height, width, height);
        maskMap.set(m, rm);
      }
      masks.push(rm);
    });
  }
  const stats = images.flatMap((i) => i.datasetStatistics ?? []);
  const bandNames = images.flatMap((i) => i.bandNames);
  const out: ImageData = {
    width,
    height,
    dtype,
    bands,
    masks,
    bandNames,
    bounds: first.bounds,
    crs: first.crs,
    assets: [...new Set(images.flatMap((i) => i.assets ?? []))],
  };
  if (stats.length === bandNames.length) out.datasetStatistics = stats;
  return out;
}
