/**
 * The encoders, checked by decoding what they write: PNG/JPEG/WebP with sharp's decoders (and against
 * GDAL's own JPEG/WebP drivers, which TiTiler uses), GeoTIFF and JPEG 2000 with GDAL, npy byte for
 * byte against `numpy.save` output computed with the parity venv's numpy 2.4 (through rio-tiler's
 * `render(..., img_format="NPY")`, so the mask band and dtype promotion are TiTiler's).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { gdal } from '../src/gdal/gdal.js';
import { TesseraError } from '../src/errors.js';
import { ARRAY_OF, type BandArray, type DType } from '../src/image/image-data.js';
import { encode, type RasterData } from '../src/image/encode/index.js';
import { IMAGE_FORMATS, MEDIA_TYPES } from '../src/image/formats.js';

const W = 16;
const H = 12;
const PIXELS = W * H;

/** A smooth, JPEG-friendly test band. */
function band8(seed: number): Uint8Array {
  return Uint8Array.from({ length: PIXELS }, (_, i) => Math.round(128 + 90 * Math.sin((i % W) / 5 + seed) * Math.cos(Math.floor(i / W) / 4 + seed)));
}

const MASK = Uint8Array.from({ length: PIXELS }, (_, i) => (i % W < 3 && Math.floor(i / W) < 4 ? 0 : 255));

function raster(dtype: DType, bands: BandArray[]): RasterData {
  return { dtype, bands, width: W, height: H };
}

async function rejectsBadRequest(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof TesseraError);
    assert.equal(err.kind, 'BadRequest');
    assert.match(err.message, pattern);
    return true;
  });
}

/** sharp's decoder: planes in the file's own layout (gray images: gray [+ alpha]). */
async function decode8(buf: Buffer): Promise<{ channels: number; space: string; planes: number[][] }> {
  const meta = await sharp(buf).metadata();
  const { data, info } = await sharp(buf).raw().toBuffer({ resolveWithObject: true });
  const n = info.channels;
  const plane = (c: number): number[] => Array.from({ length: PIXELS }, (_, i) => data[i * n + c]!);
  const channels = meta.channels ?? 0;
  const indexes = channels <= 2 ? (meta.hasAlpha ? [0, n - 1] : [0]) : Array.from({ length: channels }, (_, c) => c);
  return { channels, space: meta.space ?? '', planes: indexes.map(plane) };
}

let opened = 0;
/** Opens encoded bytes with GDAL, hands the dataset to `check`, frees everything. */
async function withGdal<T>(buf: Buffer, check: (ds: gdal.Dataset) => T): Promise<T> {
  const path = `/vsimem/encode-test-${opened++}`;
  gdal.vsimem.set(buf, path);
  const ds = await gdal.openAsync(path);
  try {
    return check(ds);
  } finally {
    ds.close();
    gdal.vsimem.release(path);
  }
}

/** What GDAL's own driver writes for the same bands (TiTiler's encoder), decoded by sharp. */
async function gdalReference(driver: string, bands: Uint8Array[], options: Record<string, string>): Promise<Buffer> {
  const mem = await gdal.drivers.get('MEM').createAsync('', W, H, bands.length, 'Byte');
  bands.forEach((b, i) => {
    mem.bands.get(i + 1).pixels.write(0, 0, W, H, b);
  });
  if (bands.length === 4) mem.bands.get(4).colorInterpretation = 'Alpha';
  const path = `/vsimem/encode-test-ref-${opened++}`;
  const out = await gdal.drivers.get(driver).createCopyAsync(path, mem, options);
  out.close();
  mem.close();
  return gdal.vsimem.release(path);
}

describe('media types', () => {
  it("are TiTiler 0.18's for every format", () => {
    assert.deepEqual([...IMAGE_FORMATS], ['png', 'npy', 'tif', 'jpeg', 'jpg', 'jp2', 'webp', 'pngraw']);
    assert.deepEqual(MEDIA_TYPES, {
      png: 'image/png',
      npy: 'application/x-binary',
      tif: 'image/tiff; application=geotiff',
      jpeg: 'image/jpeg',
      jpg: 'image/jpg',
      jp2: 'image/jp2',
      webp: 'image/webp',
      pngraw: 'image/png',
    });
  });
});

describe('npy', () => {
  // rio_tiler.utils.render(data, mask, img_format="NPY") for 2×3 arrays, mask [[255, 0, 255], [255, 255, 0]]
  const mask = Uint8Array.from([255, 0, 255, 255, 255, 0]);
  const small = (dtype: DType, ...bands: number[][]): RasterData => ({
    dtype,
    width: 3,
    height: 2,
    bands: bands.map((v) => {
      const b = new ARRAY_OF[dtype](6);
      b.set(v);
      return b;
    }),
  });
  const NUMPY: Record<string, [RasterData, Uint8Array | undefined, string]> = {
    'int8 + mask → int16': [
      small('int8', [-128, -1, 0, 1, 2, 127]),
      mask,
      'k05VTVBZAQB2AHsnZGVzY3InOiAnPGkyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAqA////AAABAAIAfwD/AAAA/wD/AP8AAAA=',
    ],
    'int8 alone': [
      small('int8', [-128, -1, 0, 1, 2, 127]),
      undefined,
      'k05VTVBZAQB2AHsnZGVzY3InOiAnfGkxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDEsIDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAqA/wABAn8=',
    ],
    'uint16 ×2 + mask': [
      small('uint16', [0, 65535, 300, 1, 2, 3], [9, 8, 7, 6, 5, 4]),
      mask,
      'k05VTVBZAQB2AHsnZGVzY3InOiAnPHUyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsIDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAP//LAEBAAIAAwAJAAgABwAGAAUABAD/AAAA/wD/AP8AAAA=',
    ],
    'float32 + mask': [
      small('float32', [0.5, -1.25, NaN, 1e30, 2, 3]),
      mask,
      'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAA/AACgvwAAwH/K8klxAAAAQAAAQEAAAH9DAAAAAAAAf0MAAH9DAAB/QwAAAAA=',
    ],
    'int64 + mask': [
      small('int64', [-9007199254740991, -1, 0, 1, 4294967296, 9007199254740991]),
      mask,
      'k05VTVBZAQB2AHsnZGVzY3InOiAnPGk4JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoBAAAAAADg////////////AAAAAAAAAAABAAAAAAAAAAAAAAABAAAA////////HwD/AAAAAAAAAAAAAAAAAAAA/wAAAAAAAAD/AAAAAAAAAP8AAAAAAAAAAAAAAAAAAAA=',
    ],
    'bool + mask → uint8': [
      small('bool', [1, 0, 1, 0, 0, 1]),
      mask,
      'k05VTVBZAQB2AHsnZGVzY3InOiAnfHUxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoBAAEAAAH/AP///wA=',
    ],
    'float64 alone': [
      small('float64', [0.1, -2.5, 1e300, 5e-324, 2, 3]),
      undefined,
      'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY4JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDEsIDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAqamZmZmZm5PwAAAAAAAATAnHUAiDzkN34BAAAAAAAAAAAAAAAAAABAAAAAAAAACEA=',
    ],
  };
  for (const [name, [data, m, expected]] of Object.entries(NUMPY)) {
    it(`${name}: the same bytes as numpy.save`, async () => {
      const out = await encode(data, m, 'npy');
      assert.equal(out.toString('base64'), expected);
    });
  }
});

describe('png', () => {
  const r = band8(0);
  const g = band8(1);
  const b = band8(2);
  const x = band8(3);
  const cases: Array<[string, Uint8Array[], Uint8Array | undefined, number, string]> = [
    ['1 band → gray', [r], undefined, 1, 'b-w'],
    ['1 band + mask → gray + alpha', [r], MASK, 2, 'b-w'],
    ['2 bands → gray + alpha (GDAL)', [r, g], undefined, 2, 'b-w'],
    ['2 bands + mask → RGB (GDAL)', [r, g], MASK, 3, 'srgb'],
    ['3 bands → RGB', [r, g, b], undefined, 3, 'srgb'],
    ['3 bands + mask → RGBA', [r, g, b], MASK, 4, 'srgb'],
    ['4 bands → RGBA', [r, g, b, x], undefined, 4, 'srgb'],
  ];
  for (const [name, bands, mask, channels, space] of cases) {
    it(name, async () => {
      const out = await decode8(await encode(raster('uint8', bands), mask, 'png'));
      assert.equal(out.channels, channels);
      assert.equal(out.space, space);
      assert.deepEqual(
        out.planes,
        [...bands, ...(mask ? [mask] : [])].map((p) => [...p]),
      );
    });
  }

  it('refuses 4 bands + mask and 5 bands with a 400', async () => {
    await rejectsBadRequest(encode(raster('uint8', [r, g, b, x]), MASK, 'png'), /PNG format cannot hold 5 bands \(4 data bands \+ the mask band\)/);
    await rejectsBadRequest(encode(raster('uint8', [r, g, b, x, r]), undefined, 'pngraw'), /cannot hold 5 bands: it takes 1 \(gray\)/);
  });

  it('writes uint16 as 16-bit PNG with the mask stretched to 0–65535 (png and pngraw)', async () => {
    const v = Uint16Array.from({ length: PIXELS }, (_, i) => (i * 347 + 11) % 65536);
    for (const format of ['png', 'pngraw'] as const) {
      const buf = await encode(raster('uint16', [v]), MASK, format);
      assert.equal((await sharp(buf).metadata()).depth, 'ushort');
      await withGdal(buf, (ds) => {
        assert.equal(ds.bands.count(), 2);
        assert.equal(ds.bands.get(1).dataType, 'UInt16');
        assert.deepEqual([...ds.bands.get(1).pixels.read(0, 0, W, H)], [...v]);
        assert.deepEqual(
          [...ds.bands.get(2).pixels.read(0, 0, W, H)],
          [...MASK].map((m) => (m ? 65535 : 0)),
        );
      });
    }
  });

  it('pngraw is faster-compressed: larger than png for the same pixels', async () => {
    const bands = [r, g, b];
    const png = await encode(raster('uint8', bands), MASK, 'png');
    const raw = await encode(raster('uint8', bands), MASK, 'pngraw');
    assert.ok(raw.length > png.length, `${raw.length} > ${png.length}`);
    assert.deepEqual((await decode8(raw)).planes, (await decode8(png)).planes);
  });

  it("refuses dtypes other than uint8/uint16 with a 400 (GDAL's PNG driver fails on them)", async () => {
    await rejectsBadRequest(encode(raster('float32', [new Float32Array(PIXELS)]), undefined, 'pngraw'), /PNG format cannot hold float32 data/);
    await rejectsBadRequest(encode(raster('int16', [new Int16Array(PIXELS)]), MASK, 'png'), /cannot hold int16 data/);
  });
});

describe('jpeg', () => {
  const bands = [band8(0), band8(1), band8(2)];

  // sharp's libjpeg-turbo and this machine's GDAL (Debian's libjpeg-turbo) at the same settings. TiTiler's
  // wheels carry libjpeg 9, whose colour differs: the parity suite compares with it by PSNR.
  it("decodes to the same pixels as GDAL's JPEG driver at quality 85 (gray and RGB)", async () => {
    for (const set of [[bands[0]!], bands]) {
      const ours = await encode(raster('uint8', set), undefined, 'jpeg');
      const theirs = await gdalReference('JPEG', set, { QUALITY: '85' });
      const a = await decode8(ours);
      assert.equal(a.channels, set.length);
      assert.deepEqual(a.planes, (await decode8(theirs)).planes);
    }
  });

  it('drops the mask; jpg is the same encoder', async () => {
    const withMask = await encode(raster('uint8', bands), MASK, 'jpeg');
    const without = await encode(raster('uint8', bands), undefined, 'jpg');
    assert.equal((await sharp(withMask).metadata()).channels, 3);
    assert.deepEqual((await decode8(withMask)).planes, (await decode8(without)).planes);
  });

  it('writes 4 bands as CMYK, as GDAL does', async () => {
    const meta = await sharp(await encode(raster('uint8', [...bands, band8(3)]), MASK, 'jpeg')).metadata();
    assert.equal(meta.space, 'cmyk');
    assert.equal(meta.channels, 4);
  });

  it('refuses 2 bands and non-uint8 data with a 400', async () => {
    await rejectsBadRequest(encode(raster('uint8', bands.slice(0, 2)), undefined, 'jpeg'), /JPEG format cannot hold 2 bands/);
    await rejectsBadRequest(encode(raster('uint16', [new Uint16Array(PIXELS)]), undefined, 'jpeg'), /cannot hold uint16 data/);
  });
});

describe('webp', () => {
  const bands = [band8(0), band8(1), band8(2)];

  it("decodes to the same pixels as GDAL's WEBP driver (quality 75, lossy), with the mask as alpha", async () => {
    const ours = await decode8(await encode(raster('uint8', bands), MASK, 'webp'));
    const theirs = await decode8(await gdalReference('WEBP', [...bands, MASK], { QUALITY: '75', LOSSLESS: 'FALSE' }));
    assert.equal(ours.channels, 4);
    assert.deepEqual(ours.planes, theirs.planes);
    assert.deepEqual(ours.planes[3], [...MASK]);
  });

  it("leaves an opaque mask out, as libwebp leaves it out of the file: the same picture as GDAL's with the alpha band", async () => {
    const opaque = new Uint8Array(PIXELS).fill(255);
    const ours = await encode(raster('uint8', bands), opaque, 'webp');
    const theirs = await gdalReference('WEBP', [...bands, opaque], { QUALITY: '75', LOSSLESS: 'FALSE' });
    const [a, b] = [await decode8(ours), await decode8(theirs)];
    assert.equal(a.channels, b.channels);
    assert.deepEqual(a.planes, b.planes);
    // and byte for byte what sharp writes when handed the opaque alpha plane itself
    const rgba = Buffer.alloc(PIXELS * 4);
    for (let i = 0; i < PIXELS; i++) [rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2], rgba[4 * i + 3]] = [bands[0]![i]!, bands[1]![i]!, bands[2]![i]!, 255];
    const withAlpha = await sharp(rgba, { raw: { width: W, height: H, channels: 4 } })
      .toColourspace('srgb')
      .webp({ quality: 75, lossless: false })
      .toBuffer();
    assert.ok(ours.equals(withAlpha));
  });

  it("repeats a single band to RGB (as rio-tiler does before GDAL's driver)", async () => {
    const gray = bands[0]!;
    const out = await decode8(await encode(raster('uint8', [gray]), MASK, 'webp'));
    const theirs = await decode8(await gdalReference('WEBP', [gray, gray, gray, MASK], { QUALITY: '75', LOSSLESS: 'FALSE' }));
    assert.equal(out.channels, 4);
    assert.deepEqual(out.planes, theirs.planes);
    assert.equal((await decode8(await encode(raster('uint8', [gray]), undefined, 'webp'))).channels, 3);
  });

  it('takes 2 bands only with the mask (3 channels), like GDAL', async () => {
    assert.equal((await decode8(await encode(raster('uint8', bands.slice(0, 2)), MASK, 'webp'))).channels, 3);
    await rejectsBadRequest(encode(raster('uint8', bands.slice(0, 2)), undefined, 'webp'), /WEBP format cannot hold 2 bands: it takes 3 \(RGB\) or 4 \(RGBA\)/);
    await rejectsBadRequest(encode(raster('uint8', [...bands, band8(3)]), MASK, 'webp'), /cannot hold 5 bands/);
    await rejectsBadRequest(encode(raster('float32', [new Float32Array(PIXELS)]), MASK, 'webp'), /cannot hold float32 data/);
  });
});

describe('tif', () => {
  const geo = { bounds: [100, 200, 260, 320] as [number, number, number, number], crs: 'EPSG:32632' };

  it('uint16 RGB + mask: GeoTIFF with geotransform, CRS and an alpha band in the data dtype', async () => {
    const bands = [0, 1, 2].map((k) => Uint16Array.from({ length: PIXELS }, (_, i) => (i * 977 + k * 10007) % 65536));
    const buf = await encode(raster('uint16', bands), MASK, 'tif', geo);
    await withGdal(buf, (ds) => {
      assert.equal(ds.driver.description, 'GTiff');
      assert.equal(ds.rasterSize.x, W);
      assert.equal(ds.rasterSize.y, H);
      assert.deepEqual(ds.geoTransform, [100, 10, 0, 320, 0, -10]);
      assert.equal(ds.srs?.getAuthorityCode(null), '32632');
      assert.equal(ds.bands.count(), 4);
      assert.equal(ds.bands.get(4).colorInterpretation, 'Alpha');
      for (let k = 0; k < 3; k++) {
        assert.equal(ds.bands.get(k + 1).dataType, 'UInt16');
        assert.deepEqual([...ds.bands.get(k + 1).pixels.read(0, 0, W, H)], [...bands[k]!]);
      }
      assert.equal(ds.bands.get(4).dataType, 'UInt16');
      assert.deepEqual([...ds.bands.get(4).pixels.read(0, 0, W, H)], [...MASK]);
    });
  });

  it("int8 is a signed byte TIFF; the 255 mask is stored as -1 like numpy's astype(int8)", async () => {
    const v = Int8Array.from({ length: PIXELS }, (_, i) => (i % 256) - 128);
    const buf = await encode(raster('int8', [v]), MASK, 'tif', geo);
    await withGdal(buf, (ds) => {
      assert.equal(ds.bands.count(), 2);
      assert.equal(ds.bands.get(1).getMetadata('IMAGE_STRUCTURE')['PIXELTYPE'], 'SIGNEDBYTE');
      assert.deepEqual([...new Int8Array(ds.bands.get(1).pixels.read(0, 0, W, H).buffer)], [...v]);
      assert.deepEqual([...ds.bands.get(2).pixels.read(0, 0, W, H)], [...MASK]);
      assert.equal(ds.bands.get(2).colorInterpretation, 'Alpha');
    });
  });

  it('float32 and int64 keep their dtype; without a georeference there is no geotransform', async () => {
    const f = Float32Array.from({ length: PIXELS }, (_, i) => (i === 5 ? NaN : i * -0.25));
    await withGdal(await encode(raster('float32', [f]), undefined, 'tif'), (ds) => {
      assert.equal(ds.bands.count(), 1);
      assert.equal(ds.bands.get(1).dataType, 'Float32');
      assert.equal(ds.geoTransform, null);
      assert.deepEqual([...ds.bands.get(1).pixels.read(0, 0, W, H)], [...f]);
    });
    const big = Float64Array.from({ length: PIXELS }, (_, i) => (i - 100) * 2 ** 40);
    await withGdal(await encode(raster('int64', [big]), MASK, 'tif', geo), (ds) => {
      assert.equal(ds.bands.get(1).dataType, 'Int64');
      assert.deepEqual([...ds.bands.get(1).pixels.read(0, 0, W, H, undefined, { data_type: 'Float64' })], [...big]);
      assert.deepEqual([...ds.bands.get(2).pixels.read(0, 0, W, H, undefined, { data_type: 'Float64' })], [...MASK]);
    });
  });
});

describe('jp2', () => {
  it("is a J2K codestream (as TiTiler's extension-less in-memory file) with data + mask bands", async () => {
    const v = Uint16Array.from({ length: PIXELS }, () => 1000);
    const buf = await encode(raster('uint16', [v]), MASK, 'jp2');
    assert.equal(buf.subarray(0, 4).toString('hex'), 'ff4fff51'); // SOC + SIZ markers, no JP2 boxes
    await withGdal(buf, (ds) => {
      assert.equal(ds.driver.description, 'JP2OpenJPEG');
      assert.equal(ds.bands.count(), 2);
      assert.equal(ds.bands.get(1).dataType, 'UInt16');
      const data = ds.bands.get(1).pixels.read(0, 0, W, H);
      const alpha = ds.bands.get(2).pixels.read(0, 0, W, H);
      // lossy (GDAL's default quality 25): values come back within about 1%
      for (let i = 0; i < PIXELS; i++) {
        assert.ok(Math.abs(data[i]! - 1000) <= 10, `data ${data[i]}`);
        assert.ok(Math.abs(alpha[i]! - MASK[i]!) <= 3, `alpha ${alpha[i]} vs ${MASK[i]}`);
      }
    });
  });

  it('refuses dtypes JP2OpenJPEG cannot write with a 400', async () => {
    await rejectsBadRequest(encode(raster('float32', [new Float32Array(PIXELS)]), undefined, 'jp2'), /JPEG2000 format cannot hold float32 data/);
  });
});

describe('housekeeping', () => {
  it('leaves no in-memory files behind, also after failures', async () => {
    await rejectsBadRequest(encode(raster('float64', [new Float64Array(PIXELS)]), MASK, 'jp2'), /float64/);
    await encode(raster('uint8', [band8(0)]), MASK, 'tif');
    await encode(raster('uint8', [band8(0)]), MASK, 'jp2');
    let left: string[] = [];
    try {
      left = gdal.fs.readDir('/vsimem/tessera-encode');
    } catch {
      left = []; // the folder no longer exists
    }
    assert.deepEqual(left, []);
  });

  it('rejects bands that do not match the size as an internal error', async () => {
    await assert.rejects(
      encode({ dtype: 'uint8', width: W, height: H, bands: [new Uint8Array(5)] }, undefined, 'png'),
      (err: unknown) => err instanceof TesseraError && err.kind === 'Internal',
    );
  });
});
