/**
 * Tiles are where the grid documents say, and where TiTiler 0.18.10 puts them: for every grid, at
 * its first, a middle and its deepest zoom, a GeoTIFF tile of a world raster is fetched from both
 * servers; its georeferencing (origin and pixel size, read by GDAL) must match the tile that
 * tessera's own `/tileMatrixSets/{id}` document describes (read as a TMS 1.0 reader reads it: cell
 * size from scaleDenominator) and TiTiler's tile, each within 0.01 px. NZTM2000, which TiTiler does
 * not serve, is checked against its document only.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import gdal from 'gdal-async';
import { get, startParity, type Parity } from './harness.js';
import { getTms, tmsIds } from '../../src/tms/registry.js';
import { srsFrom, transformPoint, WGS84 } from '../../src/gdal/crs.js';

/** A 1° Byte raster of the whole world in EPSG:4326, a GeoTIFF in memory. */
function worldRaster(): Buffer {
  const mem = gdal.open('', 'w', 'MEM', 360, 180, 1, 'Byte');
  mem.geoTransform = [-180, 1, 0, 90, 0, -1];
  mem.srs = srsFrom(WGS84);
  const values = new Uint8Array(360 * 180);
  for (let i = 0; i < values.length; i++) values[i] = 1 + (i % 250);
  mem.bands.get(1).pixels.write(0, 0, 360, 180, values);
  const path = '/vsimem/parity-world.tif';
  gdal.drivers.get('GTiff').createCopy(path, mem, ['TILED=YES']).close();
  mem.close();
  return gdal.vsimem.release(path);
}

/** Origin, pixel size, width and height of a GeoTIFF answer. */
function georeferencing(body: Buffer): [number, number, number, number, number, number] {
  const path = `/vsimem/parity-tile-${Math.random().toString(36).slice(2)}.tif`;
  gdal.vsimem.set(body, path);
  try {
    const ds = gdal.open(path);
    const gt = ds.geoTransform!;
    const { x: width, y: height } = ds.rasterSize;
    ds.close();
    return [gt[0]!, gt[3]!, gt[1]!, gt[5]!, width, height];
  } finally {
    gdal.vsimem.release(path);
  }
}

interface DocMatrix {
  identifier: string;
  scaleDenominator: number;
  topLeftCorner: [number, number];
  tileWidth: number;
  tileHeight: number;
}

/** morecantile's `meters_per_unit`: 2πa/360 for a geographic CRS, else the linear unit. */
function metersPerUnit(crs: string): number {
  const srs = srsFrom(crs);
  return srs.isGeographic() ? (2 * Math.PI * Number(srs.getAttrValue('SPHEROID', 1))) / 360 : srs.getLinearUnits().value;
}

/** A binary answer (the harness's `get` reads text). */
async function fetchTile(base: string, path: string): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(60_000) });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

describe('parity with TiTiler 0.18.10: tiles are where the grid documents say', { timeout: 300_000 }, () => {
  let parity: Parity | undefined;

  before(async () => {
    parity = await startParity();
    parity.fileserver.put('/world.tif', worldRaster(), 'image/tiff');
  });
  after(async () => {
    await parity?.stop();
  });

  for (const id of tmsIds) {
    it(`${id}: first, middle and deepest zoom`, async () => {
      const p = parity!;
      const tms = getTms(id)!;
      const doc = JSON.parse((await get(p.tessera.url, `/tileMatrixSets/${id}`)).body) as { supportedCRS: string; tileMatrix: DocMatrix[] };
      const mpu = metersPerUnit(doc.supportedCRS);
      // A point well inside the grid: the middle of its extent, nudged off tile edges.
      const [l, b, r, t] = tms.extent;
      const px = l + (r - l) * 0.4321;
      const py = b + (t - b) * 0.5678;
      const titilerServes = id !== 'NZTM2000';
      const zooms = [tms.minzoom, Math.floor((tms.minzoom + tms.maxzoom) / 2), tms.maxzoom];
      for (const z of zooms) {
        const tile = tms.tileAt(px, py, z);
        const path = `/cog/tiles/${id}/${z}/${tile.x}/${tile.y}.tif?url=${encodeURIComponent(`${p.fileserver.url}/world.tif`)}`;
        const ours = await fetchTile(p.tessera.url, path);
        assert.equal(ours.status, 200, `tessera ${path}: ${ours.body.toString('utf8', 0, 200)}`);
        const [ox, oy, dx, dy, width, height] = georeferencing(ours.body);

        const m = doc.tileMatrix.find((mm) => mm.identifier === String(z))!;
        const cell = (m.scaleDenominator * 0.28e-3) / mpu;
        const [cx, cy] = tms.def.invertAxis ? [m.topLeftCorner[1], m.topLeftCorner[0]] : m.topLeftCorner;
        const docLeft = cx + tile.x * m.tileWidth * cell;
        const docTop = cy - tile.y * m.tileHeight * cell;
        // In pixels of the tile served (a tile is drawn at 256 px even where the matrix says fewer).
        const offDoc = Math.max(Math.abs(ox - docLeft), Math.abs(oy - docTop)) / dx;
        assert.ok(offDoc < 0.01, `${id} z${z} ${tile.x}/${tile.y}: the tile is ${offDoc.toFixed(4)} px from where the document puts it`);
        const [spanX, spanY] = [m.tileWidth * cell, m.tileHeight * cell];
        assert.ok(Math.abs(dx * width - spanX) / dx < 0.01, `${id} z${z}: the tile is ${dx * width} wide, the document's ${spanX}`);
        assert.ok(Math.abs(-dy * height - spanY) / -dy < 0.01, `${id} z${z}: the tile is ${-dy * height} high, the document's ${spanY}`);

        if (titilerServes) {
          const theirs = await fetchTile(p.titiler.url, path);
          assert.equal(theirs.status, 200, `TiTiler ${path}: ${theirs.body.toString('utf8', 0, 200)}`);
          const [tx, ty, tdx, tdy] = georeferencing(theirs.body);
          const offTitiler = Math.max(Math.abs(ox - tx), Math.abs(oy - ty)) / dx;
          assert.ok(offTitiler < 0.01, `${id} z${z} ${tile.x}/${tile.y}: ${offTitiler.toFixed(4)} px from TiTiler's tile`);
          assert.ok(Math.abs(dx - tdx) / dx < 1e-6 && Math.abs(dy - tdy) / -dy < 1e-6, `${id} z${z}: pixel size ${dx},${dy} vs TiTiler's ${tdx},${tdy}`);
        }
      }
      // The point the tiles were chosen by is in longitude/latitude somewhere on Earth.
      assert.ok(transformPoint(srsFrom(tms.srs), srsFrom(WGS84), px, py).every(Number.isFinite));
    });
  }
});
