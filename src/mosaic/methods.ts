/**
 * Pixel selection: how a mosaic combines the images of its assets, fed one at a time in asset
 * order (rio-tiler 6.8 `rio_tiler.mosaic.methods`, TiTiler's `pixel_selection`). Values, dtypes and
 * the data left under masked pixels follow numpy.ma exactly, because `.npy` tiles show them:
 *
 * - first: a masked pixel takes the next valid value; stops the mosaic once nothing is masked.
 * - highest / lowest: replace where (new valid and new >/< current) or current masked — per band,
 *   so a masked current pixel takes even a masked new one (its data is the last asset's).
 * - lastbandhight (sic) / lastbandlow: the same rule decided by the last band's raw values for every
 *   band; the output drops the last band.
 * - mean / median / stdev / count over the stack of every image (numpy.ma.mean, median, std with
 *   ddof 0, count): masked values ignored, a pixel masked only when masked everywhere (its data 0);
 *   mean and median cast back to the first image's dtype (truncation), stdev is float64, count is
 *   one never-masked band (uint8 under 256 images).
 *
 * Sums run in numpy's order and precision: along the stack one image after another, in float32 for
 * float32 stacks and float64 otherwise. Every method works over whole typed arrays, band by band.
 */
import { badRequest } from '../errors.js';
import { allocate, isFloat, type BandArray, type DType } from '../image/image-data.js';
import { convert, promote } from '../image/stack.js';

export const PIXEL_SELECTION_METHODS = ['first', 'highest', 'lowest', 'mean', 'median', 'stdev', 'lastbandlow', 'lastbandhight', 'count'] as const;
export type PixelSelection = (typeof PIXEL_SELECTION_METHODS)[number];

/** One image's pixels: bands of one dtype, one mask per band (255 valid, 0 masked). */
export interface PixelLayer {
  dtype: DType;
  bands: BandArray[];
  masks: Uint8Array[];
}

/**
 * Where a layer's pixels sit in the mosaic: a `width` × `height` block from column `col`, row `row`
 * of the mosaic's `stride`-wide, `length`-pixel grid; the mosaic's other pixels are masked in it.
 */
export interface LayerPlacement {
  col: number;
  row: number;
  width: number;
  height: number;
  stride: number;
  length: number;
}

/** A placed layer on the whole grid: masked elsewhere, with values 0 there (as a read outside the data gives). */
function placeLayer(layer: PixelLayer, at: LayerPlacement): PixelLayer {
  const place = <T extends BandArray | Uint8Array>(from: T, to: T): T => {
    for (let r = 0; r < at.height; r++) to.set(from.subarray(r * at.width, (r + 1) * at.width) as never, (at.row + r) * at.stride + at.col);
    return to;
  };
  const masks = new Map<Uint8Array, Uint8Array>();
  return {
    dtype: layer.dtype,
    bands: layer.bands.map((band) => place(band, allocate(layer.dtype, at.length))),
    masks: layer.masks.map((mask) => {
      let placed = masks.get(mask);
      if (!placed) {
        placed = place(mask, new Uint8Array(at.length));
        masks.set(mask, placed);
      }
      return placed;
    }),
  };
}

export interface PixelSelector {
  /** Whether the mosaic may stop reading once `done` (rio-tiler's `exit_when_filled`). */
  readonly exitWhenFilled: boolean;
  /** Feeds a layer of the mosaic's whole grid, or one placed `at` a part of it. */
  feed(layer: PixelLayer, at?: LayerPlacement): void;
  /** True when no pixel is masked any more (only meaningful with exitWhenFilled). */
  done(): boolean;
  /** The mosaic so far; undefined before the first feed. */
  result(): PixelLayer | undefined;
}

export function pixelSelector(method: PixelSelection): PixelSelector {
  switch (method) {
    case 'first':
      return new ReplaceSelector(firstRule, false, true);
    case 'highest':
      return new ReplaceSelector(highestRule, false, false);
    case 'lowest':
      return new ReplaceSelector(lowestRule, false, false);
    case 'lastbandhight':
      return new ReplaceSelector(highestRule, true, false);
    case 'lastbandlow':
      return new ReplaceSelector(lowestRule, true, false);
    case 'mean':
      return new StackSelector(meanOf);
    case 'median':
      return new StackSelector(medianOf);
    case 'stdev':
      return new StackSelector(stdevOf);
    case 'count':
      return new StackSelector(countOf);
  }
}

// ---- replace rules (first, highest, lowest, lastband*) --------------------------------------------

/**
 * Updates `cur`/`curMask` in place from `next`/`nextMask`. `decideNew`/`decideCur` are the arrays
 * the comparison reads (the band itself, or the last band for the lastband methods).
 */
type Rule = (cur: BandArray, curMask: Uint8Array, next: BandArray, nextMask: Uint8Array, decideNew: BandArray, decideCur: BandArray) => void;

/**
 * Masks read four pixels at a time where both are 4-byte aligned (they are, but for views cut out
 * of larger buffers): a mosaic's images mostly cover parts of a tile, and whole words of pixels
 * that are already filled, or that the new image does not cover, are passed over in one read.
 */
function maskWords(mask: Uint8Array): Uint32Array | undefined {
  return (mask.byteOffset & 3) === 0 ? new Uint32Array(mask.buffer, mask.byteOffset, mask.length >>> 2) : undefined;
}

const ALL_SET = 0xffffffff;

const firstRule: Rule = (cur, curMask, next, nextMask) => {
  const curWords = maskWords(curMask);
  const nextWords = maskWords(nextMask);
  let from = 0;
  if (curWords && nextWords) {
    for (let w = 0; w < curWords.length; w++) {
      if (curWords[w] === ALL_SET || nextWords[w] === 0) continue;
      for (let i = w << 2, end = i + 4; i < end; i++) {
        if (curMask[i] === 0 && nextMask[i] !== 0) {
          cur[i] = next[i]!;
          curMask[i] = 255;
        }
      }
    }
    from = curWords.length << 2;
  }
  for (let i = from; i < cur.length; i++) {
    if (curMask[i] === 0 && nextMask[i] !== 0) {
      cur[i] = next[i]!;
      curMask[i] = 255;
    }
  }
};

// Masks are read first: they are bytes, and most pixels are decided by them alone.
const highestRule: Rule = (cur, curMask, next, nextMask, decideNew, decideCur) => {
  for (let i = 0; i < cur.length; i++) {
    const nm = nextMask[i]!;
    if (curMask[i] === 0 || (nm !== 0 && decideNew[i]! > decideCur[i]!)) {
      cur[i] = next[i]!;
      curMask[i] = nm;
    }
  }
};

const lowestRule: Rule = (cur, curMask, next, nextMask, decideNew, decideCur) => {
  for (let i = 0; i < cur.length; i++) {
    const nm = nextMask[i]!;
    if (curMask[i] === 0 || (nm !== 0 && decideNew[i]! < decideCur[i]!)) {
      cur[i] = next[i]!;
      curMask[i] = nm;
    }
  }
};

class ReplaceSelector implements PixelSelector {
  private mosaic: PixelLayer | undefined;

  constructor(
    private readonly rule: Rule,
    private readonly byLastBand: boolean,
    readonly exitWhenFilled: boolean,
  ) {}

  feed(layer: PixelLayer, at?: LayerPlacement): void {
    const m = this.mosaic;
    if (!m) {
      // Owned copies: the mosaic is updated in place by later feeds.
      this.mosaic = at ? placeLayer(layer, at) : { dtype: layer.dtype, bands: layer.bands.map((b) => b.slice()), masks: layer.masks.map((k) => k.slice()) };
      return;
    }
    const dtype = promote(m.dtype, layer.dtype);
    if (dtype !== m.dtype) {
      m.bands = m.bands.map((b) => convert(b, m.dtype, dtype));
      m.dtype = dtype;
    }
    const next = layer.bands.map((b) => convert(b, layer.dtype, dtype));
    const last = next.length - 1;
    // The decision band is read before any band is updated (numpy computes the condition first).
    const decideCur = this.byLastBand ? m.bands[last]!.slice() : undefined;
    if (!at) {
      for (let b = 0; b < m.bands.length; b++) {
        this.rule(m.bands[b]!, m.masks[b]!, next[b]!, layer.masks[b]!, this.byLastBand ? next[last]! : next[b]!, decideCur ?? m.bands[b]!);
      }
      return;
    }
    // A placed layer: the rule row by row over its block. Elsewhere it is masked, and a masked new
    // pixel changes only the values under a masked current one (highest, lowest), which no picture shows.
    for (let r = 0; r < at.height; r++) {
      const from = r * at.width;
      const to = (at.row + r) * at.stride + at.col;
      const cut = <T extends BandArray | Uint8Array>(a: T, o: number): T => a.subarray(o, o + at.width) as T;
      for (let b = 0; b < m.bands.length; b++) {
        const decideNew = this.byLastBand ? next[last]! : next[b]!;
        this.rule(
          cut(m.bands[b]!, to),
          cut(m.masks[b]!, to),
          cut(next[b]!, from),
          cut(layer.masks[b]!, from),
          cut(decideNew, from),
          cut(decideCur ?? m.bands[b]!, to),
        );
      }
    }
  }

  done(): boolean {
    const m = this.mosaic;
    if (!m) return false;
    for (const mask of m.masks) {
      const words = maskWords(mask);
      const from = words ? words.length << 2 : 0;
      if (words) {
        for (let w = 0; w < words.length; w++) {
          if (words[w] === ALL_SET) continue;
          for (let i = w << 2, end = i + 4; i < end; i++) if (mask[i] === 0) return false;
        }
      }
      for (let i = from; i < mask.length; i++) if (mask[i] === 0) return false;
    }
    return true;
  }

  result(): PixelLayer | undefined {
    const m = this.mosaic;
    if (!m || !this.byLastBand) return m;
    // The last band decides and is dropped: with one band nothing would be left to draw.
    if (m.bands.length < 2) throw badRequest('pixel_selection lastbandlow/lastbandhight needs at least two bands: the last one decides and is not drawn');
    return { dtype: m.dtype, bands: m.bands.slice(0, -1), masks: m.masks.slice(0, -1) };
  }
}

// ---- stack reductions (mean, median, stdev, count) -------------------------------------------------

type Reduction = (stack: readonly PixelLayer[], dtype: DType) => PixelLayer;

class StackSelector implements PixelSelector {
  readonly exitWhenFilled = false;
  private readonly stack: PixelLayer[] = [];

  constructor(private readonly reduce: Reduction) {}

  feed(layer: PixelLayer, at?: LayerPlacement): void {
    this.stack.push(at ? placeLayer(layer, at) : layer);
  }

  done(): boolean {
    return false;
  }

  result(): PixelLayer | undefined {
    if (this.stack.length === 0) return undefined;
    // numpy.ma.stack promotes every image to the common dtype.
    const dtype = this.stack.map((l) => l.dtype).reduce(promote);
    const stack = this.stack.map((l) => ({ ...l, bands: l.bands.map((b) => convert(b, l.dtype, dtype)) }));
    return this.reduce(stack, dtype);
  }
}

/** Sum of the valid values of pixel `i` of band `b`, accumulated as numpy does for `dtype`. */
function validSum(stack: readonly PixelLayer[], b: number, i: number, f32: boolean): [number, number] {
  let sum = 0;
  let count = 0;
  for (let k = 0; k < stack.length; k++) {
    const layer = stack[k]!;
    if (layer.masks[b]![i] === 0) continue;
    sum = f32 ? Math.fround(sum + layer.bands[b]![i]!) : sum + layer.bands[b]![i]!;
    count++;
  }
  return [sum, count];
}

/** numpy's `astype` of a float64 result to the output dtype: truncation for integers. */
function castTo(dtype: DType): (v: number) => number {
  if (dtype === 'float32') return Math.fround;
  if (isFloat(dtype)) return (v) => v;
  return Math.trunc;
}

const meanOf: Reduction = (stack, dtype) => {
  const first = stack[0]!;
  const outDtype = first.dtype;
  const cast = castTo(outDtype);
  const f32 = dtype === 'float32';
  const n = first.bands[0]?.length ?? 0;
  const bands: BandArray[] = [];
  const masks: Uint8Array[] = [];
  for (let b = 0; b < first.bands.length; b++) {
    const out = allocate(outDtype, n);
    const mask = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const [sum, count] = validSum(stack, b, i, f32);
      if (count === 0) continue;
      out[i] = cast(sum / count);
      mask[i] = 255;
    }
    bands.push(out);
    masks.push(mask);
  }
  return { dtype: outDtype, bands, masks };
};

const medianOf: Reduction = (stack, dtype) => {
  const first = stack[0]!;
  const outDtype = first.dtype;
  const cast = castTo(outDtype);
  const inexact = isFloat(dtype);
  const f32 = dtype === 'float32';
  const n = first.bands[0]?.length ?? 0;
  const scratch = new Float64Array(stack.length);
  const bands: BandArray[] = [];
  const masks: Uint8Array[] = [];
  for (let b = 0; b < first.bands.length; b++) {
    const out = allocate(outDtype, n);
    const mask = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      let count = 0;
      let nan = false;
      for (let k = 0; k < stack.length; k++) {
        const layer = stack[k]!;
        if (layer.masks[b]![i] === 0) continue;
        const v = layer.bands[b]![i]!;
        if (v !== v) nan = true;
        // Insertion sort of the few values of one pixel.
        let j = count++;
        while (j > 0 && scratch[j - 1]! > v) {
          scratch[j] = scratch[j - 1]!;
          j--;
        }
        scratch[j] = v;
      }
      if (count === 0) continue;
      mask[i] = 255;
      if (nan) {
        out[i] = cast(NaN);
        continue;
      }
      const h = count >> 1;
      const lo = scratch[count % 2 === 1 ? h : h - 1]!;
      const hi = scratch[h]!;
      // Floats: (lo + hi) summed and halved in the stack's precision; integers: a float64 mean.
      const v = inexact ? (f32 ? Math.fround(Math.fround(lo + hi) / 2) : (lo + hi) / 2) : (lo + hi) / 2;
      out[i] = cast(v);
    }
    bands.push(out);
    masks.push(mask);
  }
  return { dtype: outDtype, bands, masks };
};

const stdevOf: Reduction = (stack, dtype) => {
  const first = stack[0]!;
  const f32 = dtype === 'float32';
  const n = first.bands[0]?.length ?? 0;
  const bands: BandArray[] = [];
  const masks: Uint8Array[] = [];
  for (let b = 0; b < first.bands.length; b++) {
    const out = new Float64Array(n);
    const mask = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const [sum, count] = validSum(stack, b, i, f32);
      if (count === 0) continue;
      const mean = sum / count;
      let squares = 0;
      for (let k = 0; k < stack.length; k++) {
        const layer = stack[k]!;
        if (layer.masks[b]![i] === 0) continue;
        const d = layer.bands[b]![i]! - mean;
        squares += d * d;
      }
      out[i] = Math.sqrt(squares / count);
      mask[i] = 255;
    }
    bands.push(out);
    masks.push(mask);
  }
  return { dtype: 'float64', bands, masks };
};

const countOf: Reduction = (stack) => {
  const first = stack[0]!;
  const n = first.bands[0]?.length ?? 0;
  const dtype: DType = stack.length < 256 ? 'uint8' : 'int64';
  const out = allocate(dtype, n);
  for (const layer of stack) {
    const mask = layer.masks[0]!;
    for (let i = 0; i < n; i++) if (mask[i] !== 0) out[i] = out[i]! + 1;
  }
  return { dtype, bands: [out], masks: [new Uint8Array(n).fill(255)] };
};
