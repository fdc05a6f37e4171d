import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getTms, tmsIds } from '../src/tms/registry.js';
import { tmsDocumentV1 } from '../src/tms/document.js';
import { srsFrom } from '../src/gdal/crs.js';

const close = (a: number, b: number, rel = 1e-12): boolean => Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b));

describe('TileMatrixSet registry', () => {
  it("serves TiTiler 0.18.10's thirteen grids plus NZTM2000", () => {
    assert.deepEqual(tmsIds, [
      'CDB1GlobalGrid',
      'CanadianNAD83_LCC',
      'EuropeanETRS89_LAEAQuad',
      'GNOSISGlobalGrid',
      'LINZAntarticaMapTilegrid',
      'NZTM2000',
      'NZTM2000Quad',
      'UPSAntarcticWGS84Quad',
      'UPSArcticWGS84Quad',
      'UTM31WGS84Quad',
      'WGS1984Quad',
      'WebMercatorQuad',
      'WorldCRS84Quad',
      'WorldMercatorWGS84Quad',
    ]);
  });
});

describe('WebMercatorQuad math', () => {
  const tms = getTms('WebMercatorQuad')!;
  const E = 20037508.342789244;

  it('has zooms 0–24 and the world at z0', () => {
    assert.equal(tms.minzoom, 0);
    assert.equal(tms.maxzoom, 24);
    const [l, b, r, t] = tms.xyBounds({ x: 0, y: 0, z: 0 });
    assert.ok(close(l, -E) && close(b, -E) && close(r, E) && close(t, E));
  });

  it('splits tiles in quarters and finds the tile of a point', () => {
    const [l, b, r, t] = tms.xyBounds({ x: 1, y: 0, z: 1 });
    assert.ok(Math.abs(l) < 1e-6 && Math.abs(b) < 1e-6 && close(r, E) && close(t, E));
    assert.deepEqual(tms.tileAt(1, 1, 1), { x: 1, y: 0, z: 1 });
    assert.deepEqual(tms.tileAt(-1, -1, 1), { x: 0, y: 1, z: 1 });
    // clamped to the matrix like morecantile
    assert.deepEqual(tms.tileAt(10 * E, -10 * E, 2), { x: 3, y: 3, z: 2 });
  });

  it('chooses zooms for resolutions as morecantile\'s "auto" strategy', () => {
    const res0 = tms.matrix(0).cellSize;
    assert.equal(tms.zoomForResolution(res0), 0);
    assert.equal(tms.zoomForResolution(res0 / 2 ** 8), 8);
    assert.equal(tms.zoomForResolution((res0 / 2 ** 8) * 1.3), 8); // nearer to z8 than z7 in ratio terms
    assert.equal(tms.zoomForResolution((res0 / 2 ** 8) * 1.5), 7);
    assert.equal(tms.zoomForResolution(1e-9), 24);
  });

  it('extrapolates matrices beyond the last as morecantile does', () => {
    const m = tms.matrix(26);
    assert.equal(m.matrixWidth, 2 ** 26);
    assert.ok(close(m.cellSize, tms.matrix(24).cellSize / 4));
  });

  it('gives the TMS 1.0 document of the spec', () => {
    const doc = tmsDocumentV1(tms) as {
      type: string;
      identifier: string;
      supportedCRS: string;
      boundingBox: { lowerCorner: number[] };
      tileMatrix: Array<Record<string, unknown>>;
    };
    assert.equal(doc.type, 'TileMatrixSetType');
    assert.equal(doc.identifier, 'WebMercatorQuad');
    assert.equal(doc.supportedCRS, 'http://www.opengis.net/def/crs/EPSG/0/3857');
    assert.ok(close(doc.boundingBox.lowerCorner[0]!, -E));
    assert.equal(doc.tileMatrix.length, 25);
    assert.deepEqual(Object.keys(doc.tileMatrix[0]!), [
      'type',
      'identifier',
      'scaleDenominator',
      'topLeftCorner',
      'tileWidth',
      'tileHeight',
      'matrixWidth',
      'matrixHeight',
    ]);
    assert.ok(close(doc.tileMatrix[0]!['scaleDenominator'] as number, 559082264.0287178, 1e-9));
  });
});

describe('grids with inverted axes and variable widths', () => {
  it('reads lat/lon origins in x/y order (WGS1984Quad)', () => {
    const tms = getTms('WGS1984Quad')!;
    const [l, b, r, t] = tms.xyBounds({ x: 0, y: 0, z: 0 });
    assert.deepEqual([l, b, r, t], [-180, -90, 0, 90]);
  });

  it('coalesces tiles near the poles (CDB1GlobalGrid)', () => {
    const tms = getTms('CDB1GlobalGrid')!;
    assert.equal(tms.minzoom, -10);
    // row 0 of zoom 0 coalesces 12 tiles: x 0..11 share one extent
    const a = tms.xyBounds({ x: 0, y: 0, z: 0 });
    const b = tms.xyBounds({ x: 11, y: 0, z: 0 });
    assert.deepEqual(a, b);
    assert.equal(tms.tileAt(-170, 89.9, 0, false).x % 12, 0);
    assert.throws(() => tms.matrix(99));
  });

  it('every grid has a positive extent and consistent matrices', () => {
    for (const id of tmsIds) {
      const tms = getTms(id)!;
      const [l, b, r, t] = tms.extent;
      assert.ok(r > l && t > b, id);
      for (let z = tms.minzoom; z <= tms.maxzoom; z++) assert.ok(tms.matrix(z).cellSize > 0, `${id} z${z}`);
    }
  });
});

describe('TMS 1.0 documents describe the tiles served', () => {
  /** morecantile's `meters_per_unit`, from GDAL: 2πa/360 for a geographic CRS, else the linear unit. */
  function metersPerUnit(crs: string): number {
    const srs = srsFrom(crs);
    return srs.isGeographic() ? (2 * Math.PI * Number(srs.getAttrValue('SPHEROID', 1))) / 360 : srs.getLinearUnits().value;
  }

  it('every grid, at its first, a middle and its deepest zoom: a TMS 1.0 reader finds each tile within 0.01 px', () => {
    for (const id of tmsIds) {
      const tms = getTms(id)!;
      const doc = tmsDocumentV1(tms) as {
        supportedCRS: string;
        tileMatrix: Array<{
          identifier: string;
          scaleDenominator: number;
          topLeftCorner: [number, number];
          tileWidth: number;
          tileHeight: number;
          matrixWidth: number;
          matrixHeight: number;
        }>;
      };
      const mpu = metersPerUnit(doc.supportedCRS);
      const levels = doc.tileMatrix;
      for (const m of [levels[0]!, levels[Math.floor(levels.length / 2)]!, levels.at(-1)!]) {
        // As a TMS 1.0 reader derives it: cell size from the scale, origin in the CRS's axis order.
        const cell = (m.scaleDenominator * 0.28e-3) / mpu;
        const [ox, oy] = tms.def.invertAxis ? [m.topLeftCorner[1], m.topLeftCorner[0]] : m.topLeftCorner;
        const z = Number(m.identifier);
        // Rows of coalesced tiles (variableMatrixWidths, near the poles) are wider: sample the middle row there.
        const coalesced = (m as { variableMatrixWidths?: unknown[] }).variableMatrixWidths !== undefined;
        const midY = Math.floor(m.matrixHeight / 2);
        const corners: Array<[number, number]> = coalesced
          ? [
              [0, midY],
              [m.matrixWidth - 1, midY],
            ]
          : [
              [0, 0],
              [m.matrixWidth - 1, m.matrixHeight - 1],
            ];
        for (const [x, y] of [...corners, [Math.floor(m.matrixWidth / 3), midY]] as const) {
          const served = tms.xyBounds({ x, y, z });
          const left = ox + x * m.tileWidth * cell;
          const top = oy - y * m.tileHeight * cell;
          const off = Math.max(Math.abs(left - served[0]), Math.abs(top - served[3])) / cell;
          assert.ok(off < 0.01, `${id} z${z} ${x}/${y}: the document puts the tile ${off.toFixed(3)} px away`);
        }
      }
    }
  });
});
