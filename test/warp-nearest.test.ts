/**
 * The JavaScript nearest-neighbour warp against GDAL's own: gdalwarp (`-r near`, default error
 * threshold) over rasters whose pixel values are their own column and row tells which source pixel
 * GDAL takes for every output pixel; the JS warp must take the same one, everywhere. Then the same
 * at the reader level: tiles of the shared fixtures read through the JS path and through gdalwarp
 * (`engine: 'gdal'`) must agree in every value and mask.
 */
import type { BandArray } from '../src/image/image-data.js';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import gdal from 'gdal-async';
import {
  gatherMasked,
  gatherMaskedPlanes,
  invGeoTransform,
  nearestIndex,
  rasterIoNearestIndex,
  rasterIoNearestSample,
  warpChunks,
  type GeoTransform6,
  type NearestWarpInput,
} from '../src/source/warp-nearest.js';
import { srsFrom, transformerBetween, transformPoint, transformPoints, TransformMemo } from '../src/gdal/crs.js';
import { DatasetPool } from '../src/source/pool.js';
import { SourceContext } from '../src/source/dataset.js';
import { RasterReads } from '../src/source/reader.js';
import { readRaster, type ReadOptions, type WithHandle } from '../src/source/read.js';
import { getTms } from '../src/tms/registry.js';
import { FIXTURES } from './helpers/paths.js';

/** A Float64 MEM raster: band 1 holds each pixel's column, band 2 its row. */
function indexRaster(width: number, height: number, gt: GeoTransform6, crs: string): gdal.Dataset {
  const ds = gdal.open('', 'w', 'MEM', width, height, 2, 'Float64');
  ds.geoTransform = [...gt];
  ds.srs = srsFrom(crs);
  const cols = new Float64Array(width * height);
  const rows = new Float64Array(width * height);
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) {
      cols[r * width + c] = c;
      rows[r * width + c] = r;
    }
  }
  ds.bands.get(1).pixels.write(0, 0, width, height, cols);
  ds.bands.get(2).pixels.write(0, 0, width, height, rows);
  return ds;
}

/** The source offset gdalwarp takes for each output pixel (-1 where it writes nothing). */
function gdalwarpPicks(src: gdal.Dataset, dstCrs: string, te: number[], width: number, height: number, extra: string[] = []): Int32Array {
  const out = gdal.warp(
    '/vsimem/warp-nearest-test.mem',
    null,
    [src],
    ['-of', 'MEM', '-t_srs', dstCrs, '-r', 'near', '-te', ...te.map(String), '-ts', String(width), String(height), '-dstnodata', '-1', ...extra],
  );
  const cols = out.bands.get(1).pixels.read(0, 0, width, height) as Float64Array;
  const rows = out.bands.get(2).pixels.read(0, 0, width, height) as Float64Array;
  out.close();
  const sw = src.rasterSize.x;
  return Int32Array.from(cols, (c, i) => (c < 0 ? -1 : rows[i]! * sw + c));
}

/**
 * The source offset GDAL's warped VRT gives for each output pixel when one of its bands is read at
 * outW×outH (its blocks warped one by one, then RasterIO's nearest neighbour when smaller).
 */
function warpedVrtPicks(src: gdal.Dataset, dstCrs: string, te: number[], width: number, height: number, outW = width, outH = height): Int32Array {
  const path = '/vsimem/warp-nearest-test.vrt';
  const vrt = gdal.warp(
    path,
    null,
    [src],
    ['-of', 'VRT', '-t_srs', dstCrs, '-r', 'near', '-te', ...te.map(String), '-ts', String(width), String(height), '-dstnodata', '-1'],
  );
  const read = (band: number): Float64Array => {
    const out = new Float64Array(outW * outH);
    vrt.bands.get(band).pixels.read(0, 0, width, height, out, { buffer_width: outW, buffer_height: outH, resampling: 'NearestNeighbour' });
    return out;
  };
  const cols = read(1);
  const rows = read(2);
  vrt.close();
  gdal.vsimem.release(path);
  const sw = src.rasterSize.x;
  return Int32Array.from(cols, (c, i) => (c < 0 ? -1 : rows[i]! * sw + c));
}

function jsPicks(
  srcGt: GeoTransform6,
  srcCrs: string,
  sw: number,
  sh: number,
  dstCrs: string,
  te: number[],
  width: number,
  height: number,
  validity?: Uint8Array,
  memo?: TransformMemo,
  more: Pick<NearestWarpInput, 'pieces' | 'sample'> = {},
): Int32Array {
  const ct = transformerBetween(srsFrom(dstCrs), srsFrom(srcCrs))!;
  const dstGt: GeoTransform6 = [te[0]!, (te[2]! - te[0]!) / width, 0, te[3]!, 0, -((te[3]! - te[1]!) / height)];
  return nearestIndex({
    transform: { dstGt, ct, srcInv: invGeoTransform(srcGt)!, ...(memo ? { memo } : {}) },
    srcWidth: sw,
    srcHeight: sh,
    width,
    height,
    ...(validity ? { validity } : {}),
    ...more,
  })!;
}

/** Elements that differ (NaN equals NaN); a length mismatch counts as all. */
function differences(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Math.max(a.length, b.length);
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) n++;
  return n;
}

let seed = 20261121;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}

/** A square box in `dstCrs` around the source pixel (fc·width, fr·height), `half` source pixels wide. */
function boxAround(srcGt: GeoTransform6, srcCrs: string, sw: number, sh: number, dstCrs: string, fc: number, fr: number, half: number): number[] {
  const X = srcGt[0] + fc * sw * srcGt[1];
  const Y = srcGt[3] + fr * sh * srcGt[5];
  const [cx, cy] = transformPoint(srsFrom(srcCrs), srsFrom(dstCrs), X, Y);
  const [ex] = transformPoint(srsFrom(srcCrs), srsFrom(dstCrs), X + half * srcGt[1], Y);
  const h = Math.abs(ex - cx);
  return [cx - h, cy - h, cx + h, cy + h];
}

describe('nearest warp: the pixels gdalwarp picks', () => {
  const cases: { name: string; crs: string; gt: GeoTransform6; size: number; dst: string }[] = [
    { name: 'UTM 33N at 25 m → Web Mercator', crs: 'EPSG:32633', gt: [450000, 25, 0, 4950000, 0, -25], size: 1200, dst: 'EPSG:3857' },
    { name: 'UTM 21N at 300 m → WGS84', crs: 'EPSG:32621', gt: [300000, 300, 0, 8300000, 0, -300], size: 900, dst: 'EPSG:4326' },
    { name: 'WGS84 → Web Mercator, high latitude', crs: 'EPSG:4326', gt: [-60, 0.01, 0, 75, 0, -0.01], size: 1000, dst: 'EPSG:3857' },
    { name: 'UTM 33N → LAEA Europe', crs: 'EPSG:32633', gt: [300000, 100, 0, 5200000, 0, -100], size: 1000, dst: 'EPSG:3035' },
  ];
  for (const c of cases) {
    it(`${c.name}: every output pixel, inside the raster, over its edges, up- and downsampled`, () => {
      const src = indexRaster(c.size, c.size, c.gt, c.crs);
      let compared = 0;
      try {
        for (let k = 0; k < 12; k++) {
          // Mostly inside; every third box sits on an edge with most of it still on the raster
          // (gdalwarp warps such boxes in one piece; see the reader-level gate for the others).
          const onEdge = k % 3 === 2;
          const fc = onEdge ? 0.12 : 0.25 + 0.5 * random();
          const fr = onEdge ? 0.5 : 0.25 + 0.5 * random();
          const half = onEdge ? 0.15 * c.size : (0.01 + 0.2 * random()) * c.size;
          const te = boxAround(c.gt, c.crs, c.size, c.size, c.dst, fc, fr, half);
          const [w, h] = (
            [
              [256, 256],
              [300, 200],
              [5, 5],
              [1024, 64],
            ] as const
          )[k % 4]!;
          const expected = gdalwarpPicks(src, c.dst, te, w, h);
          const actual = jsPicks(c.gt, c.crs, c.size, c.size, c.dst, te, w, h);
          assert.equal(differences(actual, expected), 0, `box ${k} (${w}×${h}) ${te.join(',')}`);
          compared += expected.length;
          if (onEdge && c.crs !== 'EPSG:4326')
            assert.ok(
              expected.some((v) => v === -1) && expected.some((v) => v >= 0),
              `edge box ${k}: pixels on and off the raster (${expected.filter((v) => v === -1).length} off)`,
            );
        }
      } finally {
        src.close();
      }
      assert.ok(compared > 300_000);
    });
  }

  for (const c of cases) {
    it(`${c.name}: boxes mostly off the raster, which gdalwarp cuts into pieces`, () => {
      const src = indexRaster(c.size, c.size, c.gt, c.crs);
      let chunked = 0;
      try {
        const corners: Array<[number, number]> = [
          [0, 0],
          [1, 0],
          [0, 1],
          [1, 1],
          [0, 0.5],
          [0.5, 1],
        ];
        corners.forEach(([fc, fr], k) => {
          for (const half of [0.08, 0.2]) {
            const te = boxAround(c.gt, c.crs, c.size, c.size, c.dst, fc, fr, half * c.size);
            const [w, h] = (
              [
                [256, 256],
                [512, 256],
                [300, 180],
              ] as const
            )[k % 3]!;
            const expected = gdalwarpPicks(src, c.dst, te, w, h);
            const actual = jsPicks(c.gt, c.crs, c.size, c.size, c.dst, te, w, h);
            assert.equal(differences(actual, expected), 0, `corner ${fc},${fr} half ${half} (${w}×${h})`);
            const ct = transformerBetween(srsFrom(c.dst), srsFrom(c.crs))!;
            const dstGt: GeoTransform6 = [te[0]!, (te[2]! - te[0]!) / w, 0, te[3]!, 0, -((te[3]! - te[1]!) / h)];
            if ((warpChunks({ dstGt, ct, srcInv: invGeoTransform(c.gt)! }, c.size, c.size, w, h)?.length ?? 0) > 1) chunked++;
          }
        });
      } finally {
        src.close();
      }
      // The comparison is only worth something if gdalwarp did cut most of these warps.
      assert.ok(chunked >= 8, `${chunked} of 12 warps cut into pieces`);
    });
  }

  for (const c of cases) {
    it(`${c.name}: a warped VRT's reads — one region for a whole-image read, 512×128 blocks for a band, only the pixels a smaller read takes`, () => {
      // The boxes gdalwarp cuts into pieces (mostly off the raster), where how GDAL cuts a warp
      // shows: rio-tiler reads a tile through a warped VRT, which GDAL ≥ 3.10 warps in one region
      // (a read of all bands) or block by block (a band), never with gdalwarp's fill-ratio cuts.
      const src = indexRaster(c.size, c.size, c.gt, c.crs);
      let differsFromGdalwarp = 0;
      try {
        const boxes: Array<[number, number, number]> = [
          [0, 0, 0.08],
          [1, 0.5, 0.2],
          [0.5, 1, 0.2],
          [0.3, 0.6, 0.05],
        ];
        for (const [fc, fr, half] of boxes) {
          const te = boxAround(c.gt, c.crs, c.size, c.size, c.dst, fc, fr, half * c.size);
          for (const [w, h] of [
            [256, 256],
            [700, 300],
          ] as const) {
            const whole = jsPicks(c.gt, c.crs, c.size, c.size, c.dst, te, w, h, undefined, undefined, { pieces: { kind: 'whole' } });
            assert.equal(differences(whole, gdalwarpPicks(src, c.dst, te, w, h, ['-wo', 'SRC_FILL_RATIO_HEURISTICS=NO'])), 0, `whole, ${fc},${fr} (${w}×${h})`);
            if (differences(whole, gdalwarpPicks(src, c.dst, te, w, h)) > 0) differsFromGdalwarp++;
            const blocks = { pieces: { kind: 'blocks', width: 512, height: 128 } } as const;
            assert.equal(
              differences(jsPicks(c.gt, c.crs, c.size, c.size, c.dst, te, w, h, undefined, undefined, blocks), warpedVrtPicks(src, c.dst, te, w, h)),
              0,
              `blocks, ${fc},${fr} (${w}×${h})`,
            );
            // Read back smaller, by a factor that is no power of two, and from an offset window.
            for (const [ow, oh] of [
              [97, 61],
              [256, 256],
            ] as const) {
              const sample = rasterIoNearestSample(w, h, { x: 0, y: 0, w, h }, ow, oh);
              const picked = jsPicks(c.gt, c.crs, c.size, c.size, c.dst, te, w, h, undefined, undefined, { ...blocks, sample });
              assert.equal(differences(picked, warpedVrtPicks(src, c.dst, te, w, h, ow, oh)), 0, `sampled ${ow}×${oh}, ${fc},${fr} (${w}×${h})`);
            }
          }
        }
      } finally {
        src.close();
      }
      // The cases are worth something only where gdalwarp's own pieces give other pixels (over
      // WGS84 at this scale the approximation is exact enough that no cut moves a pixel).
      if (c.crs !== 'EPSG:4326') assert.ok(differsFromGdalwarp >= 1, `${differsFromGdalwarp} warps where gdalwarp's pieces differ`);
    });
  }

  it('a sampled warp takes, for every output pixel, the pixel the whole warp gives there', () => {
    const gt: GeoTransform6 = [300000, 300, 0, 5400000, 0, -300];
    const te = boxAround(gt, 'EPSG:32633', 900, 900, 'EPSG:3857', 0.9, 0.4, 300);
    const [w, h] = [1300, 700];
    const validity = new Uint8Array(900 * 900).fill(255).fill(0, 0, 900 * 300);
    for (const pieces of [{ kind: 'gdalwarp' }, { kind: 'whole' }, { kind: 'blocks', width: 512, height: 128 }] as const) {
      const full = jsPicks(gt, 'EPSG:32633', 900, 900, 'EPSG:3857', te, w, h, validity, undefined, { pieces });
      for (const win of [
        { x: 0, y: 0, w, h },
        { x: 3.25, y: 10.5, w: w - 20.7, h: h - 31 },
      ]) {
        for (const [ow, oh] of [
          [256, 256],
          [2000, 1000],
          [33, 7],
        ] as const) {
          const { rows, cols } = rasterIoNearestSample(w, h, win, ow, oh);
          const got = jsPicks(gt, 'EPSG:32633', 900, 900, 'EPSG:3857', te, w, h, validity, undefined, { pieces, sample: { rows, cols } });
          const want = Int32Array.from({ length: ow * oh }, (_, i) => full[rows[Math.trunc(i / ow)]! * w + cols[i % ow]!]!);
          assert.equal(differences(got, want), 0, `${pieces.kind} ${JSON.stringify(win)} → ${ow}×${oh}`);
          assert.ok(got.some((v) => v >= 0) && got.some((v) => v < 0), 'the box holds pixels on and off the raster');
        }
      }
    }
  });

  it('four rasters meeting under one box (a mosaic corner tile), warped through one shared memo', () => {
    // Four 400×400 rasters in UTM 31N, edge to edge, under a Web Mercator box over the point where
    // they meet: each warp is mostly off its raster, so gdalwarp cuts it into pieces.
    const size = 400;
    const res = 30;
    const x0 = 440000;
    const y0 = 5000000;
    const gts: GeoTransform6[] = [
      [x0, res, 0, y0 + size * res, 0, -res],
      [x0 + size * res, res, 0, y0 + size * res, 0, -res],
      [x0, res, 0, y0, 0, -res],
      [x0 + size * res, res, 0, y0, 0, -res],
    ];
    const memo = new TransformMemo();
    for (const [w, h] of [
      [256, 256],
      [300, 180],
    ] as const) {
      const te = boxAround(gts[3]!, 'EPSG:32631', size, size, 'EPSG:3857', 0, 0, 90);
      gts.forEach((gt, k) => {
        const src = indexRaster(size, size, gt, 'EPSG:32631');
        try {
          const expected = gdalwarpPicks(src, 'EPSG:3857', te, w, h);
          assert.ok(expected.some((v) => v >= 0) && expected.some((v) => v < 0), `raster ${k} covers part of the box`);
          assert.equal(differences(jsPicks(gt, 'EPSG:32631', size, size, 'EPSG:3857', te, w, h, undefined, memo), expected), 0, `raster ${k}, ${w}×${h}`);
        } finally {
          src.close();
        }
      });
    }
    // The later rasters' warps found many of their points in the memo.
    const { points, hits } = memo.stats;
    assert.ok(hits > points / 4, `${hits} of ${points} points from the memo`);
  });

  it('rows halved by the approximate transformer, levels deep, take the pixels gdalwarp takes; their anchors are transformed in batches beforehand', () => {
    // A 300 m UTM raster under a box of its whole width: rows curve enough to be halved more than
    // once (GDALApproxTransform), the case whose anchors are prefetched a level at a time.
    const c = { crs: 'EPSG:32633', gt: [300000, 300, 0, 5400000, 0, -300] as GeoTransform6, size: 900 };
    const te = boxAround(c.gt, c.crs, c.size, c.size, 'EPSG:3857', 0.5, 0.5, 420);
    const src = indexRaster(c.size, c.size, c.gt, c.crs);
    try {
      for (const [w, h] of [
        [256, 256],
        [1024, 32],
      ] as const) {
        const memo = new TransformMemo(1 << 15);
        const expected = gdalwarpPicks(src, 'EPSG:3857', te, w, h);
        assert.equal(differences(jsPicks(c.gt, c.crs, c.size, c.size, 'EPSG:3857', te, w, h, undefined, memo), expected), 0, `${w}×${h}`);
        // One warp, a fresh memo: only prefetched anchors can be found in it, at least three per
        // row halved once (without the prefetch, next to none).
        const { hits } = memo.stats;
        assert.ok(hits >= 3 * h, `${hits} points found in the memo for ${h} rows`);
      }
    } finally {
      src.close();
    }
  });

  it('a transparent source pixel is never taken', () => {
    const gt: GeoTransform6 = [450000, 25, 0, 4950000, 0, -25];
    const size = 400;
    const validity = new Uint8Array(size * size).fill(255);
    for (let r = 0; r < size; r++) for (let c = 0; c < size / 2; c++) validity[r * size + c] = 0;
    const te = boxAround(gt, 'EPSG:32633', size, size, 'EPSG:3857', 0.5, 0.5, 80);
    const open = jsPicks(gt, 'EPSG:32633', size, size, 'EPSG:3857', te, 128, 128);
    const masked = jsPicks(gt, 'EPSG:32633', size, size, 'EPSG:3857', te, 128, 128, validity);
    let hidden = 0;
    for (let i = 0; i < open.length; i++) {
      const taken = open[i]!;
      if (taken >= 0 && taken % size < size / 2) {
        assert.equal(masked[i], -1);
        hidden++;
      } else assert.equal(masked[i], taken);
    }
    assert.ok(hidden > 1000 && hidden < open.length - 1000, `${hidden} pixels came from the transparent half`);
  });
});

describe('TransformMemo: remembered transformations are the ones PROJ gives', () => {
  /** Copies of the points, transformed by transformPoints. */
  function direct(ct: gdal.CoordinateTransformation, xs: Float64Array, ys: Float64Array): { xs: Float64Array; ys: Float64Array; ok: Uint8Array } {
    const out = { xs: xs.slice(), ys: ys.slice(), ok: new Uint8Array(xs.length) };
    transformPoints(ct, out.xs, out.ys, out.ok, 0, xs.length);
    return out;
  }

  it('the same doubles and failures as transformPoints, first time and remembered, and bypassed for another transformation', () => {
    // Lon/lat to Web Mercator: the poles and beyond give non-finite or failed points.
    const ct = transformerBetween(srsFrom('EPSG:4326'), srsFrom('EPSG:3857'))!;
    const n = 500;
    const xs = new Float64Array(n);
    const ys = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      xs[i] = -180 + random() * 360;
      ys[i] = i % 50 === 0 ? 90 : i % 77 === 0 ? 95 : -89 + random() * 178;
    }
    // Some points twice within one call.
    xs.copyWithin(400, 0, 30);
    ys.copyWithin(400, 0, 30);
    const expected = direct(ct, xs, ys);
    assert.ok(
      expected.ok.some((v) => v === 0),
      'some points fail',
    );
    const memo = new TransformMemo();
    for (const pass of [1, 2]) {
      const got = { xs: xs.slice(), ys: ys.slice(), ok: new Uint8Array(n).fill(7) };
      // In two calls over parts of the arrays, as the warp makes them.
      memo.transform(ct, got.xs, got.ys, got.ok, 0, 300);
      memo.transform(ct, got.xs, got.ys, got.ok, 300, n - 300);
      for (let i = 0; i < n; i++) {
        assert.ok(
          Object.is(got.xs[i], expected.xs[i]) && Object.is(got.ys[i], expected.ys[i]),
          `pass ${pass} point ${i}: ${got.xs[i]},${got.ys[i]} against ${expected.xs[i]},${expected.ys[i]}`,
        );
        assert.equal(got.ok[i], expected.ok[i], `pass ${pass} point ${i} ok`);
      }
    }
    const { points, hits, remembered } = memo.stats;
    assert.equal(points, 2 * n);
    assert.equal(remembered, n - 30, 'each distinct point remembered once');
    assert.equal(hits, n + 30, 'the second pass, and the repeats of the first, from the memo');
    // Another transformation is not the memo's: its points go to PROJ and are not remembered.
    const other = transformerBetween(srsFrom('EPSG:4326'), srsFrom('EPSG:32631'))!;
    const ox = Float64Array.of(2, 3, 4);
    const oy = Float64Array.of(45, 46, 47);
    const want = direct(other, ox, oy);
    const ok = new Uint8Array(3);
    memo.transform(other, ox, oy, ok, 0, 3);
    assert.deepEqual([...ox, ...oy, ...ok], [...want.xs, ...want.ys, ...want.ok]);
    assert.equal(memo.stats.remembered, n - 30);
  });
});

describe('RasterIO nearest resampling: the pixels GDAL reads', () => {
  it('windows decimated, enlarged and copied as GDAL RasterIO does', () => {
    const size = 300;
    const src = indexRaster(size, size, [0, 1, 0, 0, 0, -1], 'EPSG:3857');
    try {
      const cases = [
        { win: { x: 0, y: 0, w: 300, h: 300 }, out: [256, 256] },
        { win: { x: 17, y: 3, w: 251, h: 199 }, out: [256, 256] },
        { win: { x: 5, y: 9, w: 64, h: 64 }, out: [256, 256] },
        { win: { x: 0, y: 0, w: 300, h: 300 }, out: [77, 123] },
        { win: { x: 2, y: 2, w: 256, h: 256 }, out: [256, 256] },
      ];
      for (const { win, out } of cases) {
        const [ow, oh] = out as [number, number];
        const cols = new Float64Array(ow * oh);
        const rows = new Float64Array(ow * oh);
        src.bands.get(1).pixels.read(win.x, win.y, win.w, win.h, cols, { buffer_width: ow, buffer_height: oh, resampling: 'NearestNeighbour' });
        src.bands.get(2).pixels.read(win.x, win.y, win.w, win.h, rows, { buffer_width: ow, buffer_height: oh, resampling: 'NearestNeighbour' });
        const expected = Int32Array.from(cols, (c, i) => rows[i]! * size + c);
        assert.equal(differences(rasterIoNearestIndex(size, size, win, ow, oh), expected), 0, JSON.stringify({ win, out }));
      }
    } finally {
      src.close();
    }
  });
});

describe('gatherMasked: the gathered band and its nodata mask in one pass', () => {
  const index = Int32Array.from([2, -1, 0, 1, 3, -1]);
  it('masks fill and nodata values, per array type', () => {
    const u16 = gatherMasked(Uint16Array.from([7, 0, 9, 65535]), index, 0);
    assert.deepEqual([...u16.band], [9, 0, 7, 0, 65535, 0]);
    assert.deepEqual([...u16.mask], [255, 0, 255, 0, 255, 0]);
    const u8 = gatherMasked(Uint8Array.from([255, 3, 255, 4]), index, 255);
    assert.deepEqual([...u8.band], [255, 255, 255, 3, 4, 255]);
    assert.deepEqual([...u8.mask], [0, 0, 0, 255, 255, 0]);
    const i16 = gatherMasked(Int16Array.from([-9999, 5, -1, -9999]), index, -9999);
    assert.ok(i16.band instanceof Int16Array);
    assert.deepEqual([...i16.band], [-1, -9999, -9999, 5, -9999, -9999]);
    assert.deepEqual([...i16.mask], [255, 0, 0, 255, 0, 0]);
  });
  it('NaN nodata matches NaN values and fills with NaN', () => {
    const f32 = gatherMasked(Float32Array.from([1.5, NaN, -2, 0]), index, NaN);
    assert.ok(f32.band instanceof Float32Array);
    assert.deepEqual([...f32.band], [-2, NaN, 1.5, NaN, 0, NaN]);
    assert.deepEqual([...f32.mask], [255, 0, 255, 0, 255, 0]);
    const f32nd = gatherMasked(Float32Array.from([-3.5, 2, 0.25, -3.5]), index, -3.5);
    assert.deepEqual([...f32nd.band], [0.25, -3.5, -3.5, 2, -3.5, -3.5]);
    assert.deepEqual([...f32nd.mask], [255, 0, 0, 255, 0, 0]);
  });
});

describe('gatherMaskedPlanes: every plane of a read in one pass', () => {
  // Random planes with nodata sprinkled in, gathered through an index with holes: the one-pass
  // three-plane loops must give exactly what gatherMasked gives plane by plane.
  const random = (n: number, seed: number): number[] => Array.from({ length: n }, (_, i) => ((i + 1) * 2654435761 + seed * 40503) >>> 20);
  const index = Int32Array.from(random(5000, 1), (v, i) => (i % 17 === 0 ? -1 : v % 900));
  const cases: Array<[string, (v: number[]) => BandArray, number]> = [
    ['uint8', (v) => Uint8Array.from(v, (x) => (x % 7 === 0 ? 9 : x & 0xff)), 9],
    ['uint16', (v) => Uint16Array.from(v, (x) => (x % 5 === 0 ? 0 : x)), 0],
    ['float32', (v) => Float32Array.from(v, (x) => (x % 3 === 0 ? -1.5 : x / 7)), -1.5],
    ['int16', (v) => Int16Array.from(v, (x) => (x % 4 === 0 ? -9999 : x - 2000)), -9999],
  ];
  for (const [name, make, nodata] of cases) {
    for (const count of [1, 3, 4]) {
      it(`${count} ${name} plane(s) as gatherMasked gives them`, () => {
        const planes = Array.from({ length: count }, (_, p) => make(random(900, p + 2)));
        const got = gatherMaskedPlanes(planes, index, nodata);
        planes.forEach((plane, p) => {
          const want = gatherMasked(plane, index, nodata);
          assert.equal(got.bands[p]!.constructor, plane.constructor);
          assert.deepEqual([...got.bands[p]!], [...want.band]);
          assert.deepEqual([...got.masks[p]!], [...want.mask]);
        });
        assert.ok(got.masks.some((m) => m.includes(0)) && got.masks.some((m) => m.includes(255)), 'the case holds both valid and masked pixels');
      });
    }
  }
});

describe('reader: JS warp and gdalwarp read the same tiles', () => {
  const pool = new DatasetPool({ handlesPerSource: 2, maxHandles: 32 });
  const ctx = new SourceContext(pool, { ttlMs: 0, size: 16 });
  after(() => pool.closeAll());

  const files = ['cog.tif', 'TCI.tif', 'cog_with_nan.tif', 'B09.tif', 'dem.tif'];
  for (const file of files) {
    it(`${file}: tiles in three grids, all bands and one, equal in every value and mask`, async () => {
      const source = ctx.source(path.join(FIXTURES, file), file);
      const reader = new RasterReads(source);
      const meta = await reader.meta();
      const withHandle: WithHandle = (fn, affinity) => source.use(fn, affinity);
      const [l, b, r, t] = meta.bounds;
      let tiles = 0;
      let inJs = 0;
      for (const tmsId of ['WebMercatorQuad', 'WorldCRS84Quad', 'EuropeanETRS89_LAEAQuad']) {
        const tms = getTms(tmsId)!;
        // 0.02 and 0.98: tiles over the raster's corners, mostly off it, which gdalwarp warps in pieces.
        for (const f of [0.02, 0.3, 0.5, 0.7, 0.98]) {
          const [lon, lat] = transformPoint(srsFrom(meta.crs), srsFrom('EPSG:4326'), l + f * (r - l), b + (1 - f) * (t - b));
          const [X, Y] = transformPoint(srsFrom('EPSG:4326'), srsFrom(tms.srs), lon, lat);
          void X;
          for (const dz of [-1, 0, 2]) {
            // The source pixel's size in the grid's CRS picks the native zoom.
            const [X1] = transformPoint(srsFrom(meta.crs), srsFrom(tms.srs), l + f * (r - l) + meta.geoTransform[1]!, b + (1 - f) * (t - b));
            const [X0] = transformPoint(srsFrom(meta.crs), srsFrom(tms.srs), l + f * (r - l), b + (1 - f) * (t - b));
            let zoom = tms.zoomForResolution(Math.abs(X1 - X0)) + dz;
            zoom = Math.max(tms.minzoom, Math.min(tms.maxzoom, zoom));
            const tile = tms.tileAt(X, Y, zoom);
            const plan = await reader.planTile(tms, tile.x, tile.y, zoom, 256, {});
            if (plan.target.kind !== 'warp' || plan.empty) continue;
            for (const indexes of meta.count > 1 ? [undefined, [meta.count]] : [undefined]) {
              const opts: ReadOptions = { resampling: 'nearest', reproject: 'nearest', ...(indexes ? { indexes } : {}) };
              const js = await readRaster(withHandle, meta, plan.target, opts);
              const gd = await readRaster(withHandle, meta, plan.target, { ...opts, engine: 'gdal' });
              assert.equal(gd.warpedBy, 'gdal');
              if (js.warpedBy === 'js') inJs++;
              assert.equal(js.bands.length, gd.bands.length);
              js.bands.forEach((band, i) => {
                assert.equal(differences(band, gd.bands[i]!), 0, `${tmsId} ${zoom}/${tile.x}/${tile.y} band ${i}`);
                assert.equal(differences(js.masks[i]!, gd.masks[i]!), 0, `${tmsId} ${zoom}/${tile.x}/${tile.y} mask ${i}`);
              });
              tiles++;
            }
          }
        }
      }
      assert.ok(tiles >= 6, `${tiles} tiles compared`);
      // Every one of these tiles, on the raster or over its edge, is warped in JavaScript.
      assert.equal(inJs, tiles, `${inJs} of ${tiles} tiles warped in JavaScript`);
    });
  }
});
