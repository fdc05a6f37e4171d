/** rio-tiler's coverage array: the fraction of each pixel a shape covers, burnt all-touched on a 10× finer grid. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gdal } from '../src/gdal/gdal.js';
import { coverageArray } from '../src/source/reader.js';
import type { ImageData } from '../src/image/image-data.js';

function image(width: number, height: number): ImageData {
  return {
    width,
    height,
    dtype: 'uint8',
    bands: [new Uint8Array(width * height)],
    masks: [new Uint8Array(width * height).fill(255)],
    bandNames: ['b1'],
    bounds: [0, 0, width, height],
    crs: 'EPSG:4326',
  };
}

const polygon = (wkt: string): gdal.Geometry => gdal.Geometry.fromWKT(wkt);

describe('coverage array', () => {
  it('counts the fine cells a shape touches in each pixel', async () => {
    // x 0.25–0.75 touches fine columns 2…7 of pixel (0, 0); y 3.05–3.95 all ten fine rows.
    const cov = await coverageArray(image(4, 4), polygon('POLYGON((0.25 3.05, 0.75 3.05, 0.75 3.95, 0.25 3.95, 0.25 3.05))'), 'EPSG:4326');
    // numpy's float32 means: ten rows of 0.6 summed in order, divided by ten (TiTiler's value exactly).
    assert.equal(cov[0], Math.fround(0.59999996));
    assert.deepEqual([...cov.subarray(1)], new Array(15).fill(0));
  });

  it('is 1 inside a shape that covers the image, and between 0 and 1 along a diagonal edge', async () => {
    const full = await coverageArray(image(3, 2), polygon('POLYGON((-1 -1, 4 -1, 4 3, -1 3, -1 -1))'), 'EPSG:4326');
    assert.deepEqual([...full], [1, 1, 1, 1, 1, 1]);
    const triangle = await coverageArray(image(4, 4), polygon('POLYGON((0 0, 4 0, 0 4, 0 0))'), 'EPSG:4326');
    // The edge x + y = 4 crosses the pixels of the main diagonal (row = column).
    const diagonal = [triangle[0]!, triangle[5]!, triangle[10]!, triangle[15]!];
    for (const v of diagonal) assert.ok(v > 0.4 && v < 0.75, `diagonal pixel ${v}`);
    assert.equal(triangle[3 * 4 + 0], 1, 'the bottom-left pixel is inside');
    assert.equal(triangle[3], 0, 'the top-right pixel is outside');
  });

  it('transforms the shape into the image CRS first', async () => {
    const img = { ...image(2, 2), bounds: [0, 0, 222638.98, 222638.98] as [number, number, number, number], crs: 'EPSG:3857' };
    const cov = await coverageArray(img, polygon('POLYGON((-1 -1, 3 -1, 3 3, -1 3, -1 -1))'), 'EPSG:4326');
    assert.deepEqual([...cov], [1, 1, 1, 1]);
  });

  it('refuses an image whose fine grid would be too large', async () => {
    await assert.rejects(coverageArray(image(20_000, 20_000), polygon('POLYGON((0 0, 1 0, 1 1, 0 0))'), 'EPSG:4326'), /too large for coverage/);
  });
});
