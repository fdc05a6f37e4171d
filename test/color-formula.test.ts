/**
 * color_formula parsing and application. The expected images were computed in the parity venv with
 * rio-tiler 6.8's `ImageData.apply_color_formula` (color-operations 0.1, numpy 2.4) on the same
 * deterministic 16×16 images built below: a SHA-256 of the output bands plus a few pixels each.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { applyColorFormula, parseColorFormula, type ColorOperation } from '../src/image/color-formula.js';
import { ARRAY_OF, type DType, type ImageData } from '../src/image/image-data.js';
import { TesseraError } from '../src/errors.js';

/** 16×16 images, pixel i of each band a function of i; pixel 3 masked in every band. */
const RAMPS: Record<string, { dtype: DType; bands: Array<(i: number) => number> }> = {
  uint8: { dtype: 'uint8', bands: [(i) => i, (i) => (i * 7 + 13) % 256, (i) => 255 - i] },
  uint16: { dtype: 'uint16', bands: [(i) => i * 257, (i) => (i * 1031 + 17) % 65536, (i) => 65535 - i * 251] },
  int16: { dtype: 'int16', bands: [(i) => (i - 128) * 200, (i) => (i * 97) % 32768, (i) => -i * 3] },
  uint16x4: {
    dtype: 'uint16',
    bands: [(i) => i * 257, (i) => (i * 1031 + 17) % 65536, (i) => 65535 - i * 251, (i) => i * 100],
  },
};

function ramp(name: string): ImageData {
  const { dtype, bands } = RAMPS[name]!;
  const mask = new Uint8Array(256).fill(255);
  mask[3] = 0;
  return {
    width: 16,
    height: 16,
    dtype,
    bands: bands.map((f) => {
      const a = new ARRAY_OF[dtype](256);
      for (let i = 0; i < 256; i++) a[i] = f(i);
      return a;
    }),
    masks: bands.map(() => mask),
    bandNames: bands.map((_, b) => `b${b + 1}`),
    bounds: [0, 0, 1, 1],
    crs: 'EPSG:4326',
  };
}

interface Expected {
  image: string;
  formula: string;
  sha256: string;
  pixels: Record<number, number[]>;
}

const EXPECTED: Expected[] = [
  {
    image: 'uint8',
    formula: 'Gamma RGB 3.5',
    sha256: '126bdba20923133bfc3bbbb267a07766bc7a2e828711fea73c5a42f2298e4b7f',
    pixels: { 0: [0, 108, 255], 77: [181, 150, 230], 200: [237, 211, 164], 255: [255, 87, 0] },
  },
  {
    image: 'uint8',
    formula: 'gamma r 0.5',
    sha256: 'f2b77913a1ca23fc9d625bd558778b1e7954c4a521338fc7f9bd76bf679c6a60',
    pixels: { 0: [0, 13, 255], 77: [23, 40, 178], 200: [156, 133, 55], 255: [255, 6, 0] },
  },
  {
    image: 'uint8',
    formula: 'gamma gb 2',
    sha256: '4353daac7d70ede245a3d2ac837a29b8ee7cc776a6c1c48cf469c8e67e8dc4b9',
    pixels: { 0: [0, 57, 255], 77: [77, 100, 213], 200: [200, 184, 118], 255: [255, 39, 0] },
  },
  {
    image: 'uint8',
    formula: 'sigmoidal rgb 15 0.35',
    sha256: '747543c8131d445a10118deb5a6767e46940f8fc61ab06ee722230102dd88bfc',
    pixels: { 0: [0, 1, 255], 77: [82, 12, 253], 200: [254, 236, 28], 255: [255, 0, 0] },
  },
  {
    image: 'uint8',
    formula: 'sigmoidal RGB -10 0.5',
    sha256: '25895f4803b54b228fe068363d5dbb4efe3ed4bc8faef37d7f3b2f277ba2bf63',
    pixels: { 0: [0, 55, 255], 77: [106, 85, 148], 200: [159, 129, 95], 255: [255, 38, 0] },
  },
  {
    image: 'uint8',
    formula: 'sigmoidal 1 3 0',
    sha256: 'f45d562b41c0d58fbc1cc69b8a134ac67d63d39fd2e33f85c8b40c89e8d34d86',
    pixels: { 0: [0, 13, 255], 77: [119, 40, 178], 200: [232, 133, 55], 255: [255, 6, 0] },
  },
  {
    image: 'uint8',
    formula: 'saturation 1.7',
    sha256: '9742df6ee5638d54b30eb7fa6a041175c99a5aaf0562e63cd11d684c4699b237',
    pixels: { 0: [0, 0, 255], 77: [0, 0, 255], 200: [222, 122, 0], 255: [255, 0, 0] },
  },
  {
    image: 'uint8',
    formula: 'saturation 0.3',
    sha256: 'ecdb9f90e750d3d284a7761ad65f8062cf73bfe053fe5997461b360a16c67ef8',
    pixels: { 0: [86, 66, 128], 77: [79, 64, 102], 200: [167, 143, 120], 255: [176, 110, 94] },
  },
  {
    image: 'uint8',
    formula: 'Gamma RGB 3.5 Saturation 1.7 Sigmoidal RGB 15 0.35',
    sha256: 'e51a7972546af65d9389b1c114063516b47784839471180f119f6d39497ccc4b',
    pixels: { 0: [0, 185, 255], 77: [254, 240, 255], 200: [254, 254, 229], 255: [255, 0, 0] },
  },
  {
    image: 'uint8',
    formula: 'gamma, r, 1.5',
    sha256: '90a8a4707a2c8b5ef55b0713ee101944a4030995c7ae5231c53a37ce3c6e1f1f',
    pixels: { 0: [0, 13, 255], 77: [114, 40, 178], 200: [216, 133, 55], 255: [255, 6, 0] },
  },
  {
    image: 'uint16',
    formula: 'Gamma RGB 3.5',
    sha256: '06aba8e511dd2619739dd9743d6aa6aa373d2972f71530f27f869f7775c1c9bc',
    pixels: { 0: [0, 24, 255], 77: [181, 163, 230], 200: [237, 147, 168], 255: [255, 71, 87] },
  },
  {
    image: 'uint16',
    formula: 'gamma b 0.7',
    sha256: 'c8385f49e6807363b68492c3340c752e1a6eb44f887f6f1ca5b0a033e8d0ba9a',
    pixels: { 0: [0, 0, 255], 77: [77, 53, 154], 200: [200, 37, 32], 255: [255, 3, 1] },
  },
  {
    image: 'uint16',
    formula: 'sigmoidal rgb 15 0.35',
    sha256: '9469b22ca51398db0c861c58d67568005435fc7bd5bad53f38b5eab4cf031be1',
    pixels: { 0: [0, 0, 255], 77: [82, 27, 253], 200: [254, 10, 36], 255: [255, 0, 0] },
  },
  {
    image: 'uint16',
    formula: 'saturation 1.7',
    sha256: 'e65dfb079fcc734cf695691059e8325be50fadd421efc79ddca76942ffe53e6d',
    pixels: { 0: [0, 0, 255], 77: [0, 23, 255], 200: [252, 0, 32], 255: [255, 0, 0] },
  },
  {
    image: 'uint16',
    formula: 'Gamma RGB 3.5 Saturation 1.7 Sigmoidal RGB 15 0.35',
    sha256: '99353a7b38fcaec066f4a065b49501dedcaee4a8152247ce422225e39b291451',
    pixels: { 0: [0, 0, 255], 77: [253, 249, 255], 200: [255, 218, 251], 255: [255, 0, 24] },
  },
  {
    image: 'int16',
    formula: 'gamma rgb 1.2',
    sha256: '2b980d90a62463f02c0915abc652c0daa05ce90c2a844c860623fb1fa05a21db',
    pixels: { 0: [0, 0, 0], 77: [0, 74, 0], 200: [128, 164, 0], 255: [206, 201, 0] },
  },
  {
    image: 'int16',
    formula: 'saturation 2',
    sha256: '14cd400c3e41a8ebc6bda708f255195250aded2996050193c1c3f454d8928d1e',
    pixels: { 0: [0, 0, 0], 77: [0, 63, 0], 200: [38, 161, 0], 255: [178, 199, 0] },
  },
  {
    image: 'uint16x4',
    formula: 'saturation 1.5 gamma 1 2',
    sha256: 'c53c033a32d7302c764486e9b022aa392d8a01083568e9627e27fa707b65fe50',
    pixels: { 0: [0, 0, 255, 0], 77: [93, 34, 234, 29], 200: [245, 0, 39, 77], 255: [255, 0, 0, 99] },
  },
];

function badRequest(fn: () => unknown, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof TesseraError, `expected a TesseraError, got ${String(err)}`);
    assert.equal(err.kind, 'BadRequest');
    assert.match(err.message, message);
    return true;
  });
}

describe('parseColorFormula', () => {
  it('parses operations, band lists and values as color-operations does', () => {
    const ops: ColorOperation[] = parseColorFormula('Gamma RGB 3.5 Saturation 1.7 Sigmoidal RGB 15 0.35');
    assert.deepEqual(ops, [
      { op: 'gamma', bands: [1, 2, 3], g: 3.5 },
      { op: 'saturation', proportion: 1.7 },
      { op: 'sigmoidal', bands: [1, 2, 3], contrast: 15, bias: 0.35 },
    ]);
    assert.deepEqual(parseColorFormula('gamma, bR, 1e1'), [{ op: 'gamma', bands: [1, 3], g: 10 }]);
    assert.deepEqual(parseColorFormula('GAMMA 31 2_0.5'), [{ op: 'gamma', bands: [1, 3], g: 20.5 }]);
    assert.deepEqual(parseColorFormula('sigmoidal g -5 .5'), [{ op: 'sigmoidal', bands: [2], contrast: -5, bias: 0.5 }]);
    assert.deepEqual(parseColorFormula('gamma r inf'), [{ op: 'gamma', bands: [1], g: Infinity }]);
    assert.deepEqual(parseColorFormula('gamma r +1.'), [{ op: 'gamma', bands: [1], g: 1 }]);
    // Python's zip drops arguments beyond what the operation takes.
    assert.deepEqual(parseColorFormula('gamma g 2 7'), [{ op: 'gamma', bands: [2], g: 2 }]);
    assert.deepEqual(parseColorFormula(''), []);
  });

  it('refuses bad formulas with a 400 that says what is wrong', () => {
    badRequest(() => parseColorFormula('brightness rgb 2'), /'brightness' is not a valid operation/);
    badRequest(() => parseColorFormula('gamma rgb 2  saturation 1'), /empty item/);
    badRequest(() => parseColorFormula(' gamma rgb 2'), /empty item/);
    badRequest(() => parseColorFormula('gamma rgb 2 '), /empty item/);
    badRequest(() => parseColorFormula('gamma'), /Gamma needs a band list/);
    badRequest(() => parseColorFormula('gamma rgb'), /Gamma needs a value \(g\), got 0/);
    badRequest(() => parseColorFormula('sigmoidal rgb 10'), /Sigmoidal needs 2 values \(contrast, bias\), got 1/);
    badRequest(() => parseColorFormula('saturation'), /Saturation needs a value \(proportion\)/);
    badRequest(() => parseColorFormula('saturation rgb 1.5'), /value 'rgb' is not a number/);
    badRequest(() => parseColorFormula('gamma rgx 2'), /band list 'rgx' has 'x'/);
    badRequest(() => parseColorFormula('gamma 4 2'), /band must be between 1 and 3, got 4/);
    badRequest(() => parseColorFormula('gamma 0 2'), /band must be between 1 and 3, got 0/);
    badRequest(() => parseColorFormula('gamma r 0x10'), /value '0x10' is not a number/);
    badRequest(() => parseColorFormula('gamma r nan'), /value 'nan' is not a number/);
    badRequest(() => parseColorFormula('gamma r 1__0'), /value '1__0' is not a number/);
    badRequest(() => parseColorFormula('gamma r 1.5.'), /value '1.5.' is not a number/);
    badRequest(() => parseColorFormula('gamma r 0'), /greater than 0/);
    badRequest(() => parseColorFormula('gamma r -1'), /greater than 0/);
    badRequest(() => parseColorFormula('sigmoidal r 10 1.5'), /bias must be between 0 and 1/);
    badRequest(() => parseColorFormula('sigmoidal r 10 -0.1'), /bias must be between 0 and 1/);
  });
});

describe('applyColorFormula', () => {
  for (const e of EXPECTED) {
    it(`${e.image}: ${e.formula}`, () => {
      const img = ramp(e.image);
      const out = applyColorFormula(img, parseColorFormula(e.formula));
      assert.equal(out.dtype, 'uint8');
      assert.equal(out.bands.length, img.bands.length);
      for (const [pixel, want] of Object.entries(e.pixels)) {
        assert.deepEqual(
          out.bands.map((b) => b[Number(pixel)]),
          want,
          `pixel ${pixel}`,
        );
      }
      const hash = createHash('sha256');
      for (const band of out.bands) {
        assert.ok(band instanceof Uint8Array);
        hash.update(band);
      }
      assert.equal(hash.digest('hex'), e.sha256);
      assert.deepEqual(out.masks, img.masks);
      // The input is not modified.
      assert.equal(img.bands[0]![200], RAMPS[e.image]!.bands[0]!(200));
    });
  }

  it('returns the image itself for no operation', () => {
    const img = ramp('uint8');
    assert.equal(applyColorFormula(img, []), img);
  });

  it('refuses float data, bands the image lacks and saturation on fewer than 3 bands', () => {
    const u8 = ramp('uint8');
    const float: ImageData = { ...u8, dtype: 'float32', bands: u8.bands.map((b) => Float32Array.from(b)) };
    badRequest(() => applyColorFormula(float, parseColorFormula('gamma r 2')), /color_formula needs integer data; use rescale first/);
    const oneBand: ImageData = { ...u8, bands: [u8.bands[0]!], masks: [u8.masks[0]!], bandNames: ['b1'] };
    badRequest(() => applyColorFormula(oneBand, parseColorFormula('gamma rg 2')), /Gamma acts on band 2, the image has 1 band$/);
    badRequest(() => applyColorFormula(oneBand, parseColorFormula('saturation 2')), /Saturation needs 3 bands/);
    // One band is enough for operations on band 1 only.
    assert.equal(applyColorFormula(oneBand, parseColorFormula('gamma r 2')).bands.length, 1);
  });
});
