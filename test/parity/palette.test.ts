/**
 * Colour tables in and out. A COG with its own colour table (a land-cover map: one band, ColorInterp=Palette) is drawn in its
 * colours when the request names no colormap, as TiTiler 0.18.10 draws it (its factory renders with
 * `colormap or dst_colormap`, rio-tiler's Reader keeping band 1's `colormap(1)`): tiles, previews
 * (JPEG: three bands, not one) and parts, compared decoded with TiTiler's; a colormap the request
 * names still wins. The COG is made here with GDAL: a 256-entry table and a 5-entry one (values it
 * does not list are transparent).
 *
 * A user colormap with transparent entries (TiTiler's `test_AutoFormat_Colormap`): TiTiler's PNG
 * reads as four bands (RGB + alpha) in GDAL and rasterio; tessera's must too, not as one band of
 * palette indexes, with the same values band for band.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { gdal } from '../../src/gdal/gdal.js';
import { compareArrays, decodePng, fetchBoth, PASS } from './pixels.js';
import { startParity, type Parity } from './harness.js';

/** A 512² Byte COG in EPSG:3857 with a colour table of `entries` colours and values 0…entries+1 in bands of 32 rows. */
function palettedCog(entries: number): Buffer {
  const size = 512;
  const mem = gdal.open('', 'w', 'MEM', size, size, 1, gdal.GDT_Byte);
  mem.srs = gdal.SpatialReference.fromEPSG(3857);
  // Around 23.5°E 32°N, 40 m pixels.
  mem.geoTransform = [2_615_000, 40, 0, 3_770_000, 0, -40];
  const band = mem.bands.get(1);
  const values = new Uint8Array(size * size);
  for (let row = 0; row < size; row++)
    for (let col = 0; col < size; col++) values[row * size + col] = (Math.floor(row / 32) + Math.floor(col / 64)) % (entries + 2);
  band.pixels.write(0, 0, size, size, values);
  const table = new gdal.ColorTable(gdal.GPI_RGB);
  for (let i = 0; i < entries; i++) table.set(i, { c1: (i * 53) % 256, c2: (i * 97) % 256, c3: (i * 151) % 256, c4: 255 });
  band.colorTable = table;
  band.colorInterpretation = gdal.GCI_PaletteIndex;
  const out = `/vsimem/palette-${entries}.tif`;
  gdal.translate(out, mem, ['-of', 'COG', '-co', 'BLOCKSIZE=256', '-co', 'OVERVIEW_RESAMPLING=NEAREST']).close();
  mem.close();
  const bytes = gdal.vsimem.release(out);
  return bytes;
}

describe('parity: a paletted COG is drawn in its own colours', { timeout: 180_000 }, () => {
  let p: Parity;
  before(async () => {
    p = await startParity();
    p.fileserver.put('/palette256.tif', palettedCog(256), 'image/tiff');
    p.fileserver.put('/palette5.tif', palettedCog(5), 'image/tiff');
  });
  after(() => p?.stop());

  const cases: Array<[string, string]> = [
    ['tile, 256-entry table', '/cog/tiles/WebMercatorQuad/12/2316/1663.png?url={file:palette256.tif}'],
    ['tile, 5-entry table (others transparent)', '/cog/tiles/WebMercatorQuad/12/2316/1663.png?url={file:palette5.tif}'],
    ['preview', '/cog/preview.png?url={file:palette256.tif}&max_size=128'],
    ['bbox', '/cog/bbox/23.52,31.92,23.64,32.02/100x100.png?url={file:palette5.tif}'],
    ['a named colormap wins', '/cog/tiles/WebMercatorQuad/12/2316/1663.png?url={file:palette256.tif}&colormap_name=viridis'],
  ];
  for (const [name, template] of cases) {
    it(name, async () => {
      const { path, titiler, tessera } = await fetchBoth(p, template);
      assert.equal(tessera.status, titiler.status, `${path}: ${tessera.body.toString().slice(0, 200)}`);
      assert.equal(titiler.status, 200, path);
      const [a, b] = await Promise.all([decodePng(titiler.body), decodePng(tessera.body)]);
      assert.equal(b.channels, a.channels, `${path}: ${b.channels} channels against TiTiler's ${a.channels}`);
      assert.equal(a.channels, 4, 'drawn in colour with a mask');
      const { within, maskEqual } = compareArrays(a.values, b.values, a.channels, 1);
      assert.ok(within >= PASS, `${path}: ${(within * 100).toFixed(2)}% of values within ±1`);
      assert.equal(maskEqual, 1, `${path}: masks equal`);
    });
  }

  it('previews as JPEG in three bands, as TiTiler', async () => {
    const { titiler, tessera } = await fetchBoth(p, '/cog/preview.jpeg?url={file:palette256.tif}&max_size=128');
    assert.equal(tessera.status, 200);
    const [a, b] = await Promise.all([sharp(titiler.body).metadata(), sharp(tessera.body).metadata()]);
    assert.equal(a.channels, 3);
    assert.equal(b.channels, 3);
  });
});

/** The bands of an image as GDAL (and so rasterio) reads the file: count, colour interpretations and values, band-sequential. */
function gdalBands(body: Buffer, name: string): { count: number; interpretations: string[]; values: Float64Array } {
  const file = `/vsimem/${name}-${process.hrtime.bigint()}.png`;
  gdal.vsimem.set(Buffer.from(body), file);
  try {
    const ds = gdal.open(file);
    const { x: width, y: height } = ds.rasterSize;
    const bands = ds.bands.map((band) => band);
    const values = new Float64Array(width * height * bands.length);
    bands.forEach((band, b) => {
      values.set(band.pixels.read(0, 0, width, height) as Uint8Array, b * width * height);
    });
    const interpretations = bands.map((band) => band.colorInterpretation ?? 'undefined');
    ds.close();
    return { count: bands.length, interpretations, values };
  } finally {
    gdal.vsimem.release(file);
  }
}

describe('parity: a user colormap with transparent entries gives an RGBA PNG (GDAL reads four bands)', { timeout: 180_000 }, () => {
  let p: Parity;
  before(async () => {
    p = await startParity();
  });
  after(() => p?.stop());

  // TiTiler's test_AutoFormat_Colormap: values 0–1 transparent white, then two opaque ranges.
  const intervals = encodeURIComponent(
    JSON.stringify([
      [
        [0, 1],
        [255, 255, 255, 0],
      ],
      [
        [2, 6000],
        [255, 0, 0, 255],
      ],
      [
        [6001, 300000],
        [0, 255, 0, 255],
      ],
    ]),
  );
  // A 256-entry table whose entries below 100 are half transparent (a lookup table, not intervals).
  const table = encodeURIComponent(
    JSON.stringify(Object.fromEntries(Array.from({ length: 256 }, (_, v) => [String(v), [v, 255 - v, 128, v < 100 ? 128 : 255]]))),
  );
  const cases: Array<[string, string]> = [
    ["TiTiler's test_AutoFormat_Colormap (preview, automatic format)", `/cog/preview?url={file:cog.tif}&bidx=1&colormap=${intervals}`],
    ['a tile with intervals', `/cog/tiles/WebMercatorQuad/8/87/49.png?url={file:cog.tif}&colormap=${intervals}`],
    ['a lookup table with half-transparent entries', `/cog/preview.png?url={file:cog.tif}&max_size=256&rescale=0,8000&colormap=${table}`],
  ];
  for (const [name, template] of cases) {
    it(name, async () => {
      const { path, titiler, tessera } = await fetchBoth(p, template);
      assert.equal(titiler.status, 200, `${path}: TiTiler ${titiler.body.toString().slice(0, 200)}`);
      assert.equal(tessera.status, 200, `${path}: ${tessera.body.toString().slice(0, 200)}`);
      assert.equal(tessera.type, titiler.type);
      const a = gdalBands(titiler.body, 'titiler');
      const b = gdalBands(tessera.body, 'tessera');
      assert.equal(a.count, 4, "TiTiler's answer reads as RGBA");
      assert.equal(b.count, a.count, `${name}: GDAL reads ${b.count} bands (${b.interpretations.join(', ')}) against TiTiler's ${a.count}`);
      assert.deepEqual(b.interpretations, a.interpretations);
      const { within, maskEqual } = compareArrays(a.values, b.values, a.count, 1);
      assert.equal(within, 1, `${name}: ${(within * 100).toFixed(2)}% of values within ±1`);
      assert.equal(maskEqual, 1, `${name}: alpha equal`);
    });
  }
});
