/**
 * Pixel selection methods against rio-tiler 6.8: every expected array, in
 * test/fixtures/expected/mosaic-methods.json, is computed by tools/expected/mosaic_methods.py with
 * rio-tiler's own `PixelSelectionMethod` classes (numpy 2.4) from the stacks in
 * mosaic-methods-cases.json, built there as here — including the data numpy leaves under masked
 * pixels, the output dtypes, and float32 accumulation for mean/median/stdev. After changing the cases,
 * re-run (from the repository root): .parity/venv/bin/python tools/expected/mosaic_methods.py
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pixelSelector, PIXEL_SELECTION_METHODS, type PixelLayer, type PixelSelection } from '../src/mosaic/methods.js';
import { allocate, type DType } from '../src/image/image-data.js';
import { REPO_ROOT } from './helpers/paths.js';

interface Expected {
  dtype: string;
  /** Band-sequential data, masked pixels included. */
  data: number[];
  /** 1 = masked (numpy's convention). */
  mask: number[];
}

interface Cases {
  stacks: {
    small: { values: number[][][]; masks: number[][][] };
    big: { images: number; bands: number; pixels: number };
  };
}

const readExpected = (name: string): unknown => JSON.parse(readFileSync(path.join(REPO_ROOT, 'test/fixtures/expected', name), 'utf8'));
/** The input stacks, and rio-tiler's results for them keyed 'dtype/method' (written by the script named above). */
const CASES = readExpected('mosaic-methods-cases.json') as Cases;
const EXPECTED = readExpected('mosaic-methods.json') as { small: Record<string, Expected>; big: Record<string, Expected> };

/** Three images, two bands, six pixels: covers all-masked pixels, ties and partial masks (1 = masked). */
const SMALL_VALUES = CASES.stacks.small.values;
const SMALL_MASKS = CASES.stacks.small.masks;

function smallLayers(dtype: DType): PixelLayer[] {
  return SMALL_VALUES.map((bands, k) => ({
    dtype,
    bands: bands.map((values) => {
      const out = allocate(dtype, values.length);
      // numpy: array(v).astype(float32) * float32(1.37), in float32.
      values.forEach((v, i) => {
        out[i] = dtype === 'float32' ? Math.fround(v * Math.fround(1.37)) : v;
      });
      return out;
    }),
    masks: SMALL_MASKS[k]!.map((m) => Uint8Array.from(m, (x) => (x ? 0 : 255))),
  }));
}

/** Five images, two bands, forty pixels of arithmetic-sequence values (same formula as the script). */
function bigLayers(dtype: DType): PixelLayer[] {
  const { images: K, bands: B, pixels: N } = CASES.stacks.big;
  const out: PixelLayer[] = [];
  for (let k = 0; k < K; k++) {
    const bands = [];
    const masks = [];
    for (let b = 0; b < B; b++) {
      const band = allocate(dtype, N);
      const mask = new Uint8Array(N);
      for (let i = 0; i < N; i++) {
        const raw = (k * 7919 + b * 3571 + i * 104729) % 10007;
        band[i] = dtype === 'float32' ? Math.fround(raw / 7.3) : raw * 6;
        mask[i] = (k * 31 + b * 7 + i * 17) % 5 === 0 ? 0 : 255;
      }
      bands.push(band);
      masks.push(mask);
    }
    out.push({ dtype, bands, masks });
  }
  return out;
}

function run(method: PixelSelection, layers: PixelLayer[]): PixelLayer {
  const s = pixelSelector(method);
  for (const l of layers) s.feed(l);
  const r = s.result();
  assert.ok(r, 'a result after feeding');
  return r;
}

function check(got: PixelLayer, want: Expected, label: string): void {
  assert.equal(got.dtype, want.dtype, `${label}: dtype`);
  const data = got.bands.flatMap((b) => Array.from(b));
  const mask = got.masks.flatMap((m) => Array.from(m, (x) => (x === 0 ? 1 : 0)));
  assert.deepEqual(mask, want.mask, `${label}: mask`);
  assert.equal(data.length, want.data.length, `${label}: size`);
  data.forEach((v, i) => {
    const w = want.data[i]!;
    // float64 results (stdev) may differ in the last bits from numpy's summation order; the rest is exact.
    if (got.dtype === 'float64') assert.ok(Math.abs(v - w) <= 1e-12 * Math.max(1, Math.abs(w)), `${label}[${i}]: ${v} vs ${w}`);
    else assert.equal(v, w, `${label}[${i}]: ${v} vs ${w}`);
  });
}

const SMALL = EXPECTED.small;
const BIG = EXPECTED.big;

describe('pixel selection methods (rio-tiler 6.8 reference values)', () => {
  for (const key of Object.keys(SMALL)) {
    const [dtype, method] = key.split('/') as [DType, PixelSelection];
    it(`${method} over ${dtype} (masked pixels, ties, all-masked pixels)`, () => check(run(method, smallLayers(dtype)), SMALL[key]!, key));
  }
  for (const key of Object.keys(BIG)) {
    const [dtype, method] = key.split('/') as [DType, PixelSelection];
    it(`${method} over five ${dtype} images`, () => check(run(method, bigLayers(dtype)), BIG[key]!, key));
  }

  it('offers exactly TiTiler 0.18.10’s method names (lastbandhight spelled as there)', () => {
    assert.deepEqual([...PIXEL_SELECTION_METHODS].sort(), ['count', 'first', 'highest', 'lastbandhight', 'lastbandlow', 'lowest', 'mean', 'median', 'stdev']);
  });

  it('first is done once no pixel is masked, and only first may stop early', () => {
    const s = pixelSelector('first');
    assert.equal(s.exitWhenFilled, true);
    assert.equal(s.done(), false, 'nothing fed yet');
    const mk = (values: number[], mask: number[]): PixelLayer => ({ dtype: 'uint8', bands: [Uint8Array.from(values)], masks: [Uint8Array.from(mask)] });
    s.feed(mk([1, 2, 3], [255, 0, 255]));
    assert.equal(s.done(), false);
    s.feed(mk([7, 8, 9], [0, 255, 255]));
    assert.equal(s.done(), true);
    assert.deepEqual(Array.from(s.result()!.bands[0]!), [1, 8, 3]);
    for (const m of PIXEL_SELECTION_METHODS.filter((x) => x !== 'first')) assert.equal(pixelSelector(m).exitWhenFilled, false, m);
  });

  it('first, read four mask bytes at a time, equals the pixel-by-pixel rule on any layout', () => {
    // Partial coverage in blocks (as a mosaic's assets cover a tile), odd lengths, and masks that are
    // views at unaligned offsets (read byte by byte) mixed with aligned ones.
    let seed = 7;
    const rnd = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const n of [1, 5, 64, 1023]) {
      for (const offset of [0, 1, 4]) {
        const layers: PixelLayer[] = [];
        for (let k = 0; k < 4; k++) {
          const values = Uint16Array.from({ length: n }, () => Math.floor(rnd() * 60000));
          const backing = new Uint8Array(n + offset);
          const mask = backing.subarray(offset);
          const from = Math.floor(rnd() * n);
          const to = from + Math.floor(rnd() * (n - from + 1));
          for (let i = from; i < to; i++) mask[i] = rnd() < 0.9 ? 255 : 0;
          layers.push({ dtype: 'uint16', bands: [values], masks: [k % 2 === 0 ? mask : Uint8Array.from(mask)] });
        }
        const want = new Uint16Array(n);
        const wantMask = new Uint8Array(n);
        for (const l of layers) {
          for (let i = 0; i < n; i++) {
            if (wantMask[i] === 0 && l.masks[0]![i] !== 0) {
              want[i] = l.bands[0]![i]!;
              wantMask[i] = 255;
            }
          }
        }
        const s = pixelSelector('first');
        // rio-tiler copies masked data through too: the first image's values stay where nothing covers.
        for (let i = 0; i < n; i++) if (wantMask[i] === 0) want[i] = layers[0]!.bands[0]![i]!;
        for (const l of layers) s.feed(l);
        const r = s.result()!;
        assert.deepEqual(Array.from(r.bands[0]!), Array.from(want), `n=${n} offset=${offset}`);
        assert.deepEqual(Array.from(r.masks[0]!), Array.from(wantMask), `n=${n} offset=${offset}`);
        assert.equal(
          s.done(),
          wantMask.every((m) => m !== 0),
        );
      }
    }
  });

  it('promotes dtypes as numpy.ma.where does (uint8 then uint16 → uint16)', () => {
    const s = pixelSelector('highest');
    s.feed({ dtype: 'uint8', bands: [Uint8Array.from([200, 5])], masks: [Uint8Array.from([255, 255])] });
    s.feed({ dtype: 'uint16', bands: [Uint16Array.from([300, 1])], masks: [Uint8Array.from([255, 255])] });
    const r = s.result()!;
    assert.equal(r.dtype, 'uint16');
    assert.deepEqual(Array.from(r.bands[0]!), [300, 5]);
  });

  it('does not modify the images it is fed', () => {
    const layers = smallLayers('uint16');
    const before = layers.map((l) => l.bands.map((b) => Array.from(b)));
    for (const m of PIXEL_SELECTION_METHODS) run(m, layers);
    assert.deepEqual(
      layers.map((l) => l.bands.map((b) => Array.from(b))),
      before,
    );
  });
});

describe('layers placed on a part of the mosaic (mosaic tiles below minzoom)', () => {
  /** A layer of `w`×`h` pixels with values from `seed`, some masked. */
  function block(w: number, h: number, seed: number): PixelLayer {
    const band = new Uint8Array(w * h).map((_, i) => ((i * 37 + seed * 11) % 200) + 1);
    const mask = new Uint8Array(w * h).map((_, i) => ((i + seed) % 7 === 0 ? 0 : 255));
    return { dtype: 'uint8', bands: [band], masks: [mask] };
  }
  /** The same layer on the whole grid, masked (values 0) elsewhere. */
  function expanded(layer: PixelLayer, col: number, row: number, w: number, h: number, stride: number): PixelLayer {
    const band = new Uint8Array(stride * stride);
    const mask = new Uint8Array(stride * stride);
    for (let r = 0; r < h; r++) {
      band.set(layer.bands[0]!.subarray(r * w, (r + 1) * w) as Uint8Array, (row + r) * stride + col);
      mask.set(layer.masks[0]!.subarray(r * w, (r + 1) * w), (row + r) * stride + col);
    }
    return { dtype: 'uint8', bands: [band], masks: [mask] };
  }

  for (const method of ['first', 'highest', 'lowest', 'mean', 'count'] as const) {
    it(`${method}: the same picture as feeding whole-grid layers`, () => {
      const stride = 16;
      const parts = [
        [2, 3, 9, 5],
        [6, 1, 8, 10],
        [0, 0, 16, 4],
        [10, 8, 6, 8],
      ] as const;
      const placed = pixelSelector(method);
      const whole = pixelSelector(method);
      parts.forEach(([col, row, w, h], k) => {
        const layer = block(w, h, k + 1);
        placed.feed(layer, { col, row, width: w, height: h, stride, length: stride * stride });
        whole.feed(expanded(layer, col, row, w, h, stride));
      });
      const a = placed.result()!;
      const b = whole.result()!;
      assert.deepEqual([...a.masks[0]!], [...b.masks[0]!], 'the same pixels are valid');
      for (let i = 0; i < stride * stride; i++) {
        if (b.masks[0]![i] !== 0) assert.equal(a.bands[0]![i], b.bands[0]![i], `pixel ${i}`);
      }
    });
  }
});
