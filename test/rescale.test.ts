/**
 * The rescale step against rio-tiler 6.8's `rescale_image` under numpy 2.4: every expected byte
 * below was computed in the parity venv with float bounds, as TiTiler parses `rescale=min,max`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyRescale, castToUint8 } from '../src/image/rescale.js';
import { ARRAY_OF, type DType, type ImageData } from '../src/image/image-data.js';

function image(dtype: DType, bands: number[][], masks?: number[][]): ImageData {
  const n = bands[0]!.length;
  const arrays = bands.map((values) => {
    const a = new ARRAY_OF[dtype](n);
    values.forEach((v, i) => {
      a[i] = v;
    });
    return a;
  });
  const maskArrays = bands.map((_, b) => Uint8Array.from(masks?.[b] ?? new Array<number>(n).fill(255)));
  return {
    width: n,
    height: 1,
    dtype,
    bands: arrays,
    masks: maskArrays,
    bandNames: bands.map((_, b) => `b${b + 1}`),
    bounds: [0, 0, 1, 1],
    crs: 'EPSG:4326',
  };
}

const bytes = (img: ImageData, band = 0): number[] => Array.from(img.bands[band]!);

describe('applyRescale', () => {
  it('stretches uint16 to uint8 with truncation, masked pixels to 0, mask kept', () => {
    const mask = [255, 255, 255, 255, 255, 0];
    const img = image('uint16', [[0, 1234, 4000, 5000, 65535, 1]], [mask]);
    const out = applyRescale(img, [[0, 4000]]);
    assert.equal(out.dtype, 'uint8');
    assert.ok(out.bands[0] instanceof Uint8Array);
    assert.deepEqual(bytes(out), [0, 78, 255, 255, 255, 0]);
    assert.equal(out.masks[0], img.masks[0]);
    assert.deepEqual(Array.from(out.masks[0]!), mask);
  });

  it('handles signed integers', () => {
    assert.deepEqual(bytes(applyRescale(image('int8', [[-128, -100, -1, 0, 50, 127]]), [[-100, 100]])), [0, 0, 126, 127, 191, 255]);
    assert.deepEqual(bytes(applyRescale(image('int16', [[-32768, -5, 0, 7, 1000]]), [[-10, 10]])), [0, 63, 127, 216, 255]);
    assert.deepEqual(bytes(applyRescale(image('int64', [[0, 1, 2 ** 40, -(2 ** 40)]]), [[0, 2 ** 41]])), [0, 0, 127, 0]);
    assert.deepEqual(bytes(applyRescale(image('uint32', [[0, 3000000000, 4294967295]]), [[0, 4294967295]])), [0, 178, 255]);
  });

  it('computes float32 bands in float32 where numpy does', () => {
    // Each value gives a different byte than the same value as float64 would.
    assert.deepEqual(bytes(applyRescale(image('float32', [[0.3423529267311096]]), [[0.1, 0.7]])), [103]);
    assert.deepEqual(bytes(applyRescale(image('float32', [[1.3980392217636108, 1.429411768913269, 1.4796078205108643]]), [[0.3, 1.9]])), [174, 179, 188]);
    assert.deepEqual(bytes(applyRescale(image('float32', [[1093.22705078125, 1212.2882080078125]]), [[1000.1, 1300.7]])), [79, 180]);
    assert.deepEqual(bytes(applyRescale(image('float64', [[0.3423529267311096]]), [[0.1, 0.7]])), [102]);
  });

  it('maps non-finite values as numpy casts them', () => {
    assert.deepEqual(bytes(applyRescale(image('float64', [[-Infinity, Infinity, NaN, 0.5]]), [[0, 1]])), [0, 255, 0, 127]);
  });

  it("gives numpy's bytes for degenerate ranges", () => {
    // min == max: 0/0 = NaN → 0
    assert.deepEqual(bytes(applyRescale(image('uint8', [[0, 1, 2, 3]]), [[5, 5]])), [0, 0, 0, 0]);
    assert.deepEqual(bytes(applyRescale(image('float32', [[0, 1, 2, NaN]]), [[1, 1]])), [0, 0, 0, 0]);
    // min > max: everything clips to max, then (max - min) / (max - min) = 1
    assert.deepEqual(bytes(applyRescale(image('uint8', [[0, 100, 200, 255]]), [[100, 0]])), [255, 255, 255, 255]);
    // a NaN bound
    assert.deepEqual(bytes(applyRescale(image('uint8', [[0, 100, 200, 255]]), [[NaN, 200]])), [0, 0, 0, 0]);
    assert.deepEqual(bytes(applyRescale(image('uint8', [[0, 100, 200, 255]]), [[0, NaN]])), [0, 0, 0, 0]);
  });

  it("gives numpy's bytes for degenerate ranges over float64 bands (expression results)", () => {
    // rio-tiler linear_rescale(...).astype('uint8') on float64 arrays
    assert.deepEqual(bytes(applyRescale(image('float64', [[0, 1, 2, NaN]]), [[1, 1]])), [0, 0, 0, 0]);
    assert.deepEqual(bytes(applyRescale(image('float64', [[0, 1, 2, 5]]), [[3, 1]])), [255, 255, 255, 255]);
    assert.deepEqual(bytes(applyRescale(image('float64', [[0, 1, 2]]), [[NaN, 2]])), [0, 0, 0]);
    assert.deepEqual(bytes(applyRescale(image('float64', [[-1, 0, 1e300]]), [[-Infinity, Infinity]])), [0, 0, 0]);
    assert.deepEqual(bytes(applyRescale(image('float64', [[-2, 0.25, 7]]), [[-1, 1]])), [0, 159, 255]);
  });

  it('writes bool bands back as 0/1', () => {
    assert.deepEqual(bytes(applyRescale(image('bool', [[1, 0]]), [[0, 100]])), [1, 0]);
  });

  it('uses one range per band, or the first range for all when the counts differ', () => {
    const bands = [
      [0, 50, 100],
      [0, 50, 100],
      [0, 50, 100],
    ];
    const perBand = applyRescale(image('uint8', bands), [
      [0, 100],
      [0, 200],
      [50, 100],
    ]);
    assert.deepEqual(
      perBand.bands.map((b) => Array.from(b)),
      [
        [0, 127, 255],
        [0, 63, 127],
        [0, 0, 255],
      ],
    );
    const firstOnly = applyRescale(image('uint8', bands), [
      [0, 200],
      [0, 100],
    ]);
    assert.deepEqual(
      firstOnly.bands.map((b) => Array.from(b)),
      [
        [0, 63, 127],
        [0, 63, 127],
        [0, 63, 127],
      ],
    );
  });

  it('leaves the image alone for an empty list (TiTiler skips the step)', () => {
    const img = image('uint16', [[1, 2]]);
    assert.equal(applyRescale(img, []), img);
  });
});

describe('castToUint8 (numpy float → uint8 on x86-64)', () => {
  it('truncates and keeps the low byte within int32, else 0', () => {
    const cases: Array<[number, number]> = [
      [NaN, 0],
      [Infinity, 0],
      [-Infinity, 0],
      [256, 0],
      [300.7, 44],
      [-1, 255],
      [-0.5, 0],
      [1e10, 0],
      [-1e10, 0],
      [255.9, 255],
      [1e20, 0],
      [4294967301, 0],
    ];
    for (const [x, want] of cases) assert.equal(castToUint8(x), want, `castToUint8(${x})`);
  });
});
