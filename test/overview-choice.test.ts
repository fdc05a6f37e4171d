/**
 * The overview a RasterIO read takes, by GDAL 3.10's rule (TiTiler's) and GDAL 3.6's (tessera's),
 * at the switch points measured on both GDALs for a 4096-px raster with 2×, 4× and 8× overviews
 * (src/source/overview-choice.ts): each rule must switch between the two samples that bracket it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { overviewForRead } from '../src/source/overview-choice.js';

const SIZE = 4096;
const OVERVIEWS: Array<[number, number]> = [
  [2048, 2048],
  [1024, 1024],
  [512, 512],
];

/** The level read into a buf×buf buffer (the measured samples: 4096 / buf is the factor named). */
const level = (buf: number, nearest: boolean, rule: 'gdal-3.10' | 'gdal-3.6'): number | undefined =>
  overviewForRead(SIZE, SIZE, OVERVIEWS, SIZE, SIZE, buf, buf, nearest, rule);

describe('overviewForRead: the level GDAL reads', () => {
  it('GDAL 3.10, nearest: 2× from 1.5839, 4× from 3.2508, 8× from 6.5958 (measured samples on either side)', () => {
    assert.equal(level(2589, true, 'gdal-3.10'), undefined);
    assert.equal(level(2586, true, 'gdal-3.10'), 0);
    assert.equal(level(1263, true, 'gdal-3.10'), 0);
    assert.equal(level(1260, true, 'gdal-3.10'), 1);
    assert.equal(level(624, true, 'gdal-3.10'), 1);
    assert.equal(level(621, true, 'gdal-3.10'), 2);
  });

  it('GDAL 3.6: 2× only from 1.6671, 4× from 3.3382, 8× from 6.6928', () => {
    assert.equal(level(2460, true, 'gdal-3.6'), undefined);
    assert.equal(level(2457, true, 'gdal-3.6'), 0);
    assert.equal(level(1230, true, 'gdal-3.6'), 0);
    assert.equal(level(1227, true, 'gdal-3.6'), 1);
    assert.equal(level(615, true, 'gdal-3.6'), 1);
    assert.equal(level(612, true, 'gdal-3.6'), 2);
  });

  it('GDAL 3.10, other resamplings: 2× from 1.9016', () => {
    assert.equal(level(2157, false, 'gdal-3.10'), undefined);
    assert.equal(level(2154, false, 'gdal-3.10'), 0);
  });

  it('no overview for a read at or above full resolution', () => {
    assert.equal(overviewForRead(SIZE, SIZE, OVERVIEWS, 256, 256, 256, 256, true, 'gdal-3.10'), undefined);
    assert.equal(overviewForRead(SIZE, SIZE, OVERVIEWS, 256, 256, 512, 512, true, 'gdal-3.10'), undefined);
  });
});
