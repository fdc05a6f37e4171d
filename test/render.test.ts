/**
 * renderImage against TiTiler 0.18.10's `render_image` and rio-tiler's `rescale_array`. Expected
 * pixels were computed with the parity venv (titiler.core.utils.render_image on rio-tiler
 * ImageData, numpy 2.4, rasterio 1.4) for the same small arrays, the PNGs decoded with rasterio.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { ARRAY_OF, type DType, type ImageData } from '../src/image/image-data.js';
import { renderImage, rescaleToUint8 } from '../src/image/render.js';
import { encodePngPlanes, DEFAULT_PNG_LEVEL } from '../src/image/encode/png.js';
import { encode } from '../src/image/encode/index.js';
import { colormapCanBeTransparent, namedColormap, parseColormapJson, type ColorMap } from '../src/image/colormap.js';
import { postProcessAndRender } from '../src/image/post-process.js';

const W = 4;
const H = 5;

function hex(text: string): number[] {
  return Array.from(Buffer.from(text, 'hex'));
}

/** rio-tiler's masked arrays: `true` = masked; tessera's masks are 0 (masked) / 255 (valid). */
function toMask(masked: readonly boolean[]): Uint8Array {
  return Uint8Array.from(masked, (m) => (m ? 0 : 255));
}

function image(dtype: DType, values: readonly (readonly number[])[], masked: readonly (readonly boolean[])[], extra: Partial<ImageData> = {}): ImageData {
  return {
    width: W,
    height: H,
    dtype,
    bands: values.map((v) => {
      const band = new ARRAY_OF[dtype](v.length);
      band.set(v);
      return band;
    }),
    masks: masked.map(toMask),
    bandNames: values.map((_, i) => `b${i + 1}`),
    bounds: [0, 0, W, H],
    crs: 'EPSG:4326',
    ...extra,
  };
}

/** Decodes a PNG/JPEG/WebP with sharp into planes (gray images: gray [+ alpha]). */
async function decodePlanes(buf: Buffer): Promise<{ channels: number; planes: number[][] }> {
  const meta = await sharp(buf).metadata();
  const { data, info } = await sharp(buf).raw().toBuffer({ resolveWithObject: true });
  const n = info.channels;
  const pixels = info.width * info.height;
  const plane = (c: number): number[] => Array.from({ length: pixels }, (_, i) => data[i * n + c]!);
  const channels = meta.channels ?? 0;
  const indexes = channels <= 2 ? (meta.hasAlpha ? [0, n - 1] : [0]) : Array.from({ length: channels }, (_, c) => c);
  return { channels, planes: indexes.map(plane) };
}

// ---- inputs (the same arrays were given to TiTiler) ----------------------------------------------

const F0 = [-1e38, -5.5, 0, 1.5, 1000.25, 3e38, NaN, 7, 8, -3e38, 1e30, 2.5e38, 12, 13, 14, 15, 16, 17, 18, 19];
const F1 = F0.map((v) => (Number.isNaN(v) ? 0 : v * -2)); // ±6e38 and -5e38 overflow to ±Infinity in float32
const FM0 = Array.from({ length: 20 }, (_, i) => i === 2 || i === 5 || i === 9);
const FM1 = Array.from({ length: 20 }, (_, i) => i === 2 || i === 9);

const I0 = [-32768, -5, 0, 5, 100, 1000, 32767, -1, -200, 300, 7, -7, 20000, -20000, 1, 2, 3, 4, 5, 6];
const I1 = I0.map((v) => Math.floor(v / 2));
const I2 = I0.map((v) => ((((v * 3) % 65536) + 65536) % 65536) - 32768);
const IM = [0, 1, 2].map((b) => Array.from({ length: 20 }, (_, i) => i === 1 || i === 6 || (b === 2 && i === 13)));

describe('renderImage: automatic rescaling as TiTiler (PNG output, decoded)', () => {
  it('float32 without statistics: dtype range in float32 arithmetic, and the mask-row quirk', async () => {
    const out = await renderImage(image('float32', [F0, F1], [FM0, FM1]), { format: 'png', returnMask: true });
    assert.equal(out.format, 'png');
    assert.equal(out.mediaType, 'image/png');
    const { channels, planes } = await decodePlanes(out.body);
    // two data bands + the mask: GDAL's PNG driver (and tessera) writes them as RGB
    assert.equal(channels, 3);
    assert.deepEqual(planes[0], hex('5a7f007f7f00007f7f0f00007f7f007f7f7f007f'));
    // band 2 keeps pixel (2, 0) although it is masked: TiTiler masks it with mask row 1 (all valid)
    assert.deepEqual(planes[1], hex('007f7f7f7f007f7f7f007f007f7f7f7f7f7f7f7f'));
    assert.deepEqual(planes[2], hex('ffff00ffffffffffff00ffffffffffffffffffff'));
  });

  it('float32 with dataset statistics', async () => {
    const img = image('float32', [F0, F1], [FM0, FM1], {
      datasetStatistics: [
        [0.5, 100.25],
        [-10, 10.75],
      ],
    });
    const { planes } = await decodePlanes((await renderImage(img, { format: 'png', returnMask: true })).body);
    assert.deepEqual(planes[0], hex('00000002ffff0010130000ff1d1f0025272a002f'));
    assert.deepEqual(planes[1], hex('ffff7a5600007a0000ff00000000000000000000'));
  });

  it('int16 without statistics: `v - min` wraps around in int16, as numpy computes it', async () => {
    const out = await renderImage(image('int16', [I0, I1, I2], IM), { format: 'png', returnMask: true });
    const { channels, planes } = await decodePlanes(out.body);
    assert.equal(channels, 4);
    assert.deepEqual(planes, [
      hex('000081818100007f7e00817fcf00818181008181'),
      hex('3f7f00818183007f7f82007fa858008181810081'),
      hex('81000000010b7f00fe030000eb15000000000000'),
      hex('ff00ffffffff00ffffffffffffffffffffffffff'),
    ]);
  });

  it('int16 with one statistics range for three bands (applied to all), without the mask', async () => {
    const img = image('int16', [I0, I1, I2], IM, { datasetStatistics: [[-100, 300]] });
    const out = await renderImage(img, { format: 'png', returnMask: false });
    const { channels, planes } = await decodePlanes(out.body);
    assert.equal(channels, 3);
    assert.deepEqual(planes, [
      hex('00003f427f00ff3f0000443bff00404141004243'),
      hex('003d00415fff003f009f003dff00004040410041'),
      hex('3fff000000003dffff0000ffff00000000000000'),
    ]);
  });

  it('keeps uint16 for PNG (16-bit output) but not for JPEG', async () => {
    const values = Array.from({ length: 20 }, (_, i) => i * 3000);
    const img = image('uint16', [values], [Array<boolean>(20).fill(false)]);
    const png = await renderImage(img, { format: 'png', returnMask: true });
    assert.equal((await sharp(png.body).metadata()).depth, 'ushort');
    const jpeg = await renderImage(img, { format: 'jpeg', returnMask: true });
    assert.equal((await sharp(jpeg.body).metadata()).depth, 'uchar');
  });
});

describe('rescaleToUint8 against rio-tiler rescale_array with the 2-D mask', () => {
  // 3 bands of 4×5; mask pixels (1,0), (0,1) and (3,2) invalid. Band b is masked by mask row b.
  const MASK = Uint8Array.from([255, 0, 255, 255, 0, 255, 255, 255, 255, 255, 255, 0, 255, 255, 255, 255, 255, 255, 255, 255]);
  const STATS: Array<[number, number]> = [
    [-50.5, 200.25],
    [0, 1000],
    [10, 20],
  ];
  const BASE: Record<string, string[]> = {
    uint16: ['0', '65535', '0', '1', '2', '21845', '9362', '100', '12345', '77'],
    uint32: ['0', '4294967295', '0', '1', '2', '1431655765', '613566756', '100', '12345', '77'],
    int32: ['-2147483648', '2147483647', '0', '1', '-1', '715827882', '-715827883', '100', '12345', '77'],
    int8: ['-128', '127', '0', '1', '-1', '42', '-43', '100', '57', '77'],
    int64: ['-9223372036854775808', '9223372036854775807', '0', '1', '-1', '3074457345618258602', '-3074457345618258603', '100', '12345', '77'],
    float64: ['0', '1', '-1', '1e300', '-1e30', '123.456', 'NaN', 'Infinity', '5e-324', '42'],
    int16: ['-32768', '32767', '0', '1', '-1', '10922', '-10923', '100', '12345', '77'],
    float32: ['0', '1', '-1', '1e38', '-1e30', '123.456', 'NaN', 'Infinity', '1e-45', '42'],
  };
  const EXPECTED: Record<string, { dtypeRange: string; statistics: string }> = {
    uint16: {
      dtypeRange: '0000000000002400300000ff000000552400300000ff000000552400000000ff000000550000300000ff000000552400300000000000000024003000',
      statistics: '330033343500ff99ff0033ff330035ffff00ff8100ff000000ffff19001300ff000000ff0019ff1300ff000000ffff00ffff000000000000ffffff00',
    },
    uint32: {
      dtypeRange: '0000000000002400000000ff000000552400000000ff000000552400000000ff000000550000000000ff000000552400000000000000000024000000',
      statistics: '330033343500ff99ff0033ff330035ffff00ff8100ff000000ffff19001300ff000000ff0019ff1300ff000000ffff00ffff000000000000ffffff00',
    },
    int32: {
      dtypeRange: '000081817f0055818100000081007fab550081810000818100ab55810081000000817fab00818181000081007fab55008181000081817f0055818100',
      statistics: '0000333432000099ff0000ff330032ff0000ff8100ff000000ff0019001300ff000000ff0019ff1300ff000000ff0000ffff00000000000000ffff00',
    },
    int8: {
      dtypeRange: '000080817f0055e4b90000ff80007faa5500b9cd00ff808100aa55e400cd00ff00817faa00e4b9cd00ff80007faa5500b9cd000080817f0055e4b900',
      statistics: '00003334320007996d0000b43300325e07006d8100200000000a0019001300200000000a00190e1300ff000000ff0000ffff00000000000000ffff00',
    },
    int64: {
      dtypeRange: '000081817f0055818100000081007fab550081810000818100ab55810081000000817fab00818181000081007fab55008181000081817f0055818100',
      statistics: '0000333432000099ff0000ff330032ff0000ff8100ff000000ff0019001300ff000000ff0019ff1300ff000000ff0000ffff00000000000000ffff00',
    },
    float64: {
      dtypeRange: '000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
      statistics: '330032ff000000ff33003334320000b00000335e000000ff001f00ff000a000000ff001f00ff000a0000000000ff000000ff000000ff000000ff0000',
    },
    int16: {
      dtypeRange: '000081817f005581b100000081007fab5500b1810000818100ab55810081000000817fab0081b181000081007fab5500b181000081817f005581b100',
      statistics: '0000333432000099ff0000ff330032ff0000ff8100ff000000ff0019001300ff000000ff0019ff1300ff000000ff0000ffff00000000000000ffff00',
    },
    float32: {
      dtypeRange: '7f007f007f0000007f007f7f7f007f7f00007f7f007f7f00007f0000007f7f7f00007f7f00007f7f7f7f7f007f7f00007f7f7f007f007f0000007f00',
      statistics: '330032ff000000ff33003334320000b00000335e000000ff001f00ff000a000000ff001f00ff000a0000000000ff000000ff000000ff000000ff0000',
    },
  };
  const RANGES: Record<string, [number, number]> = {
    uint16: [0, 65535],
    uint32: [0, 4294967295],
    int32: [-2147483648, 2147483647],
    int8: [-128, 127],
    int64: [-(2 ** 63), 2 ** 63], // the doubles nearest int64's bounds, -9223372036854775808 and 9223372036854775807
    float64: [-Number.MAX_VALUE, Number.MAX_VALUE],
    int16: [-32768, 32767],
    float32: [-3.4028234663852886e38, 3.4028234663852886e38],
  };

  for (const [dtype, base] of Object.entries(BASE)) {
    const values = Array.from({ length: 3 * W * H }, (_, i) => Number(base[i % base.length]));
    const bands = [0, 1, 2].map((b) => {
      const arr = new ARRAY_OF[dtype as DType](W * H);
      for (let i = 0; i < W * H; i++) arr[i] = values[b * W * H + i]!;
      return arr;
    });
    const flat = (planes: Uint8Array[]): string => Buffer.concat(planes).toString('hex');

    it(`${dtype}: dtype range`, () => {
      const out = rescaleToUint8(bands, dtype as DType, MASK, W, H, [RANGES[dtype]!], 'dtype');
      assert.equal(flat(out), EXPECTED[dtype]!.dtypeRange);
    });

    it(`${dtype}: statistics`, () => {
      const out = rescaleToUint8(bands, dtype as DType, MASK, W, H, STATS, 'statistics');
      assert.equal(flat(out), EXPECTED[dtype]!.statistics);
    });
  }

  it("falls back to each pixel's own mask for bands beyond the mask's rows (TiTiler fails there)", () => {
    const one = Uint8Array.from([10, 20, 30, 40]);
    const mask = Uint8Array.from([255, 0, 255, 255]); // 4×1 image, 2 bands: band 2 has no mask row
    const out = rescaleToUint8([Uint16Array.from(one), Uint16Array.from(one)], 'uint16', mask, 4, 1, [[0, 40]], 'statistics');
    // (v / 40) * 255 truncated: 63, 127, 191, 255; the masked pixel is 0 in both bands
    assert.deepEqual([...out[0]!], [63, 0, 191, 255]);
    assert.deepEqual([...out[1]!], [63, 0, 191, 255]);
  });
});

describe('renderImage: format choice, mask and colormap', () => {
  const rgb = [0, 1, 2].map((b) => Array.from({ length: 20 }, (_, i) => (i * 10 + b * 60) % 256));
  const allValid = [0, 1, 2].map(() => Array<boolean>(20).fill(false));

  it('chooses JPEG when every pixel is valid', async () => {
    const out = await renderImage(image('uint8', rgb, allValid), { returnMask: true });
    assert.equal(out.format, 'jpeg');
    assert.equal(out.mediaType, 'image/jpeg');
    assert.equal((await sharp(out.body).metadata()).format, 'jpeg');
  });

  it('chooses PNG (with alpha) when a pixel is masked in every band, even with returnMask false', async () => {
    const masked = [0, 1, 2].map(() => Array.from({ length: 20 }, (_, i) => i === 7));
    const out = await renderImage(image('uint8', rgb, masked), { returnMask: true });
    assert.equal(out.format, 'png');
    const { channels, planes } = await decodePlanes(out.body);
    assert.equal(channels, 4);
    assert.deepEqual(planes.slice(0, 3), rgb);
    assert.deepEqual(
      planes[3],
      Array.from({ length: 20 }, (_, i) => (i === 7 ? 0 : 255)),
    );

    const noMask = await renderImage(image('uint8', rgb, masked), { returnMask: false });
    assert.equal(noMask.format, 'png');
    assert.equal((await decodePlanes(noMask.body)).channels, 3);
  });

  it('a pixel masked in one band only is still valid (any band valid)', async () => {
    const partly = [0, 1, 2].map((b) => Array.from({ length: 20 }, (_, i) => b === 0 && i === 7));
    assert.equal((await renderImage(image('uint8', rgb, partly), { returnMask: true })).format, 'jpeg');
  });

  it('npy: the mask is the last band only when returned', async () => {
    const masked = [0, 1, 2].map(() => Array.from({ length: 20 }, (_, i) => i === 0));
    const withMask = await renderImage(image('uint8', rgb, masked), { format: 'npy', returnMask: true });
    const without = await renderImage(image('uint8', rgb, masked), { format: 'npy', returnMask: false });
    assert.equal(withMask.mediaType, 'application/x-binary');
    assert.match(withMask.body.toString('latin1', 10, 80), /'shape': \(4, 5, 4\)/);
    assert.match(without.body.toString('latin1', 10, 80), /'shape': \(3, 5, 4\)/);
  });

  it('jpg is sent as image/jpg', async () => {
    const out = await renderImage(image('uint8', rgb, allValid), { format: 'jpg', returnMask: true });
    assert.equal(out.mediaType, 'image/jpg');
  });

  it("uses the colormap's bands and mask, and decides the format after it", async () => {
    const gray = image('float32', [Array.from({ length: 20 }, (_, i) => i / 2)], [Array<boolean>(20).fill(false)], {
      datasetStatistics: [[0, 1]],
    });
    let calls = 0;
    const colormap = (img: ImageData): ImageData => {
      calls++;
      const v = img.bands[0]!;
      const red = Uint8Array.from(v, (x) => x * 20);
      const green = Uint8Array.from(v, (x) => 255 - x * 20);
      const blue = new Uint8Array(v.length).fill(7);
      const alpha = Uint8Array.from(v, (x) => (x === 3 ? 0 : 255)); // an entry with alpha 0
      return { ...img, dtype: 'uint8', bands: [red, green, blue], masks: [alpha, alpha, alpha], datasetStatistics: undefined };
    };
    const out = await renderImage(gray, { returnMask: true, colormap });
    assert.equal(calls, 1);
    assert.equal(out.format, 'png');
    const { channels, planes } = await decodePlanes(out.body);
    assert.equal(channels, 4);
    // uint8 colormap output is written as is (the float statistics no longer apply)
    assert.deepEqual(
      planes[0],
      Array.from({ length: 20 }, (_, i) => (i / 2) * 20),
    );
    assert.deepEqual(
      planes[1],
      Array.from({ length: 20 }, (_, i) => 255 - (i / 2) * 20),
    );
    assert.deepEqual(
      planes[3],
      Array.from({ length: 20 }, (_, i) => (i === 6 ? 0 : 255)),
    );
  });
});

describe('renderImage: PNG content hint', () => {
  const rgb = [0, 1, 2].map((b) => Array.from({ length: W * H }, (_, i) => (i * 37 + b * 61) % 256));
  const masked = [0, 1, 2].map(() => Array.from({ length: W * H }, (_, i) => i === 3));
  const planes = [...rgb.map((band) => Uint8Array.from(band)), Uint8Array.from({ length: W * H }, (_, i) => (i === 3 ? 0 : 255))];

  it('encodes read pixels as imagery, and algorithm output or colormapped pixels as a graphic', async () => {
    const read = await renderImage(image('uint8', rgb, masked), { format: 'png', returnMask: true });
    assert.deepEqual(read.body, await encodePngPlanes(planes, W, H, DEFAULT_PNG_LEVEL, 'imagery'));
    const made = await renderImage(image('uint8', rgb, masked), { format: 'png', returnMask: true, synthetic: true });
    assert.deepEqual(made.body, await encodePngPlanes(planes, W, H, DEFAULT_PNG_LEVEL, 'graphic'));
    const colored = await renderImage(image('uint8', [rgb[0]!], [masked[0]!]), {
      format: 'png',
      returnMask: true,
      colormap: () => image('uint8', rgb, masked),
    });
    assert.deepEqual(colored.body, await encodePngPlanes(planes, W, H, DEFAULT_PNG_LEVEL, 'graphic'));
  });
});

/** The PNG colour type (IHDR byte 25): 2 RGB, 3 palette, 6 RGBA. */
function colourType(png: Buffer): number {
  return png[25]!;
}

describe('renderImage: band layout of colormapped PNGs (what GDAL and rasterio read)', () => {
  const values = Array.from({ length: W * H }, (_, i) => i % 3);
  const valid = Array.from({ length: W * H }, () => false);

  it('says which colormaps can make a pixel transparent', () => {
    assert.equal(colormapCanBeTransparent(namedColormap('viridis')), false);
    const opaqueTable = JSON.stringify(Object.fromEntries(Array.from({ length: 256 }, (_, v) => [v, [v, v, v, 255]])));
    assert.equal(colormapCanBeTransparent(parseColormapJson(opaqueTable)), false);
    assert.equal(colormapCanBeTransparent(parseColormapJson(opaqueTable.replace('"7":[7,7,7,255]', '"7":[7,7,7,254]'))), true);
    // values a discrete or interval colormap does not list are transparent black (rio-tiler)
    assert.equal(colormapCanBeTransparent(parseColormapJson('{"1": [255, 0, 0, 255]}')), true);
    assert.equal(colormapCanBeTransparent(parseColormapJson('[[[0, 10], [255, 0, 0, 255]]]')), true);
  });

  it('writes RGBA when the colormap has transparent entries (TiTiler 4 bands), palette indexes for an opaque one', async () => {
    const gray = image('uint8', [values], [valid]);
    const transparent = parseColormapJson('{"0": [255, 255, 255, 0], "1": [255, 0, 0, 255], "2": [0, 255, 0, 255]}');
    const rgba = await postProcess(gray, transparent);
    assert.equal(colourType(rgba), 6);
    const opaque = await postProcess(gray, namedColormap('viridis'));
    assert.equal(colourType(opaque), 3);
    // the same pixels either way once decoded
    const decoded = await decodePlanes(rgba);
    assert.equal(decoded.channels, 4);
    assert.deepEqual(
      decoded.planes[3],
      values.map((v) => (v === 0 ? 0 : 255)),
    );
  });

  it('never writes pngraw as palette indexes: raw values are read as bands', async () => {
    const few = [0, 1, 2].map((b) => Uint8Array.from({ length: W * H }, (_, i) => (i % 2) * 100 + b));
    const body = await encode({ bands: few, dtype: 'uint8', width: W, height: H, content: 'graphic' }, undefined, 'pngraw');
    assert.equal(colourType(body), 2);
  });
});

async function postProcess(img: ImageData, cmap: ColorMap): Promise<Buffer> {
  const out = await postProcessAndRender(img, 'png', { algorithm: undefined, rescale: undefined, colorFormula: undefined, colormap: cmap, returnMask: true });
  return out.body;
}
