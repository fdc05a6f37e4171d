/**
 * MosaicJSON documents and asset lookups against cogeo-mosaic 7.2 / morecantile 5.4: every expected
 * value, in test/fixtures/expected/mosaic-document.json, is computed by
 * tools/expected/mosaic_document.py with cogeo-mosaic's own model and MemoryBackend
 * (`assets_for_tile/point/bbox`, zoom range), TiTiler 0.18.10's mosaic endpoints (documents dumped and
 * `info` answered as TiTiler writes them) and morecantile (quadkeys), from the documents and queries in
 * mosaic-document-cases.json — except the low-zoom guard case, derived by hand (cogeo-mosaic would
 * enumerate 4^18 quadkeys). After changing the cases, re-run (from the repository root):
 * .parity/venv/bin/python tools/expected/mosaic_document.py
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseMosaicDocument, mosaicDocumentJson } from '../src/mosaic/document.js';
import { Mosaic } from '../src/mosaic/mosaic.js';
import { quadkey, quadkeyToTile } from '../src/mosaic/quadkey.js';
import { pyDumps } from '../src/pyjson.js';
import { getTms } from '../src/tms/registry.js';
import { TesseraError } from '../src/errors.js';
import type { BBox } from '../src/tms/grid.js';
import { REPO_ROOT } from './helpers/paths.js';

const WEB_MERCATOR = getTms('WebMercatorQuad')!;
const WGS1984 = getTms('WGS1984Quad')!;

function open(doc: unknown): Mosaic {
  return new Mosaic(parseMosaicDocument(doc), { url: 'memory', tilesInDocument: true, version: 'test' });
}

type Assets = Record<string, string[]>;
interface Cases {
  documents: { lookup: unknown; full: unknown; fixture: unknown };
  lookups: { lookup: { bbox_3857: BBox; point_3857: [number, number] } };
}
interface Expected {
  lookup: {
    tile_assets: Assets;
    point_assets: Assets;
    bbox_assets: Assets;
    bbox_3857_assets: string[];
    point_3857_assets: string[];
    wgs1984quad_tile_assets: Assets;
    zooms: Record<'WebMercatorQuad' | 'WGS1984Quad', { minzoom: number; maxzoom: number }>;
    info: unknown;
  };
  full: { dump_body: string; info_body: string; tile_assets: Assets };
  fixture: { dump_body: string };
  quadkeys: Record<string, string>;
}

const readExpected = (name: string): unknown => JSON.parse(readFileSync(path.join(REPO_ROOT, 'test/fixtures/expected', name), 'utf8'));
/** The documents and queries, and cogeo-mosaic's answers keyed by query (written by the script named above). */
const CASES = readExpected('mosaic-document-cases.json') as Cases;
const EXPECTED = readExpected('mosaic-document.json') as Expected;

/** A 0.0.3 document over 32 cells at quadkey zoom 9 (with holes), nine assets repeated in varying orders. */
const LOOKUP_DOC = CASES.documents.lookup;

const TILE_ASSETS = EXPECTED.lookup.tile_assets;
const POINT_ASSETS = EXPECTED.lookup.point_assets;
const BBOX_ASSETS = EXPECTED.lookup.bbox_assets;
const WGS_TILE_ASSETS = EXPECTED.lookup.wgs1984quad_tile_assets;
const { bbox_3857: BBOX_3857_QUERY, point_3857: POINT_3857_QUERY } = CASES.lookups.lookup;
const BBOX_3857 = EXPECTED.lookup.bbox_3857_assets;
const POINT_3857 = EXPECTED.lookup.point_3857_assets;
const LOOKUP_ZOOMS = EXPECTED.lookup.zooms;
const LOOKUP_INFO = EXPECTED.lookup.info;

/** Every field of the model, a WebMercatorQuad `tilematrixset`, integral bounds, no center. */
const FULL_DOC = CASES.documents.full;
const FULL_DUMP = EXPECTED.full.dump_body;
const FULL_INFO = EXPECTED.full.info_body;
const FULL_TILES = EXPECTED.full.tile_assets;

/** The 0.0.2 document of TiTiler's mosaic fixture (no version, a center). */
const FIXTURE_DOC = CASES.documents.fixture;
const FIXTURE_DUMP = EXPECTED.fixture.dump_body;

const key = (...n: number[]): string => n.join(',');

describe('MosaicJSON documents', () => {
  it('dumps the 0.0.2 fixture as TiTiler does (defaults filled in, floats kept)', () => {
    assert.equal(pyDumps(mosaicDocumentJson(parseMosaicDocument(FIXTURE_DOC))), FIXTURE_DUMP);
  });

  it('dumps every 0.0.3 field as the model writes it (tilematrixset, colormap keys as ints, computed center)', () => {
    const text = pyDumps(mosaicDocumentJson(parseMosaicDocument(FULL_DOC)));
    // Known difference: JSON.parse puts integer-like keys ("122") before others ("033"), so
    // `tiles` keeps its entries but not their order; everything else is byte for byte.
    assert.deepEqual(JSON.parse(text), JSON.parse(FULL_DUMP));
    const withoutTiles = (t: string): string => t.replace(/"tiles":\{[^}]*\}/, '');
    assert.equal(withoutTiles(text), withoutTiles(FULL_DUMP));
  });

  it('writes tiles: {} for backends whose model carries no tiles (SQLite)', () => {
    const out = mosaicDocumentJson(parseMosaicDocument(FIXTURE_DOC), false);
    assert.deepEqual(out['tiles'], {});
  });

  it('recognises the registered grid in a tilematrixset and answers info like cogeo-mosaic', () => {
    const m = open(FULL_DOC);
    assert.equal(m.grid, WEB_MERCATOR);
    assert.equal(JSON.stringify(m.info()), JSON.stringify(JSON.parse(FULL_INFO)));
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['not an object', [1, 2], /expected a JSON object/],
    ['no mosaicjson', { tiles: {} }, /'mosaicjson' is required/],
    ['no tiles', { mosaicjson: '0.0.2' }, /'tiles' is required/],
    ['a quadkey with a 4', { mosaicjson: '0.0.2', minzoom: 3, tiles: { '014': ['a'] } }, /invalid quadkey '014'/],
    ['a quadkey of the wrong zoom', { mosaicjson: '0.0.2', minzoom: 3, tiles: { '01': ['a'] } }, /quadkey '01' of 2 digits/],
    ['assets that are not strings', { mosaicjson: '0.0.2', minzoom: 1, tiles: { '0': [1] } }, /must be an array of strings/],
    ['minzoom out of range', { mosaicjson: '0.0.2', minzoom: 31, tiles: {} }, /'minzoom' must be between 0 and 30/],
    ['bounds of three numbers', { mosaicjson: '0.0.2', bounds: [1, 2, 3], tiles: {} }, /'bounds' must be an array of 4 numbers/],
    ['a fractional center zoom', { mosaicjson: '0.0.2', center: [1, 2, 7.5], tiles: {} }, /'center'/],
    ['a name that is a number', { mosaicjson: '0.0.2', name: 5, tiles: {} }, /'name' must be a string/],
    [
      'a grid that is not a quadtree',
      {
        mosaicjson: '0.0.3',
        tiles: {},
        tilematrixset: {
          id: 'TwoByOne',
          crs: 'http://www.opengis.net/def/crs/EPSG/0/4326',
          tileMatrices: [
            { id: '0', scaleDenominator: 1, cellSize: 0.703125, pointOfOrigin: [90, -180], tileWidth: 256, tileHeight: 256, matrixWidth: 2, matrixHeight: 1 },
            {
              id: '1',
              scaleDenominator: 0.5,
              cellSize: 0.3515625,
              pointOfOrigin: [90, -180],
              tileWidth: 256,
              tileHeight: 256,
              matrixWidth: 4,
              matrixHeight: 2,
            },
          ],
        },
      },
      /does not support quadtree/,
    ],
  ];
  for (const [what, doc, message] of bad) {
    it(`refuses a document with ${what} (400 naming the field)`, () => {
      assert.throws(
        () => parseMosaicDocument(doc),
        (err: unknown) => err instanceof TesseraError && err.kind === 'BadRequest' && message.test(err.message),
      );
    });
  }
});

describe('quadkeys (morecantile 5.4 values)', () => {
  const cases: Array<[number, number, number, string]> = Object.entries(EXPECTED.quadkeys).map(([k, qk]) => {
    const [x, y, z] = k.split(',').map(Number) as [number, number, number];
    return [x, y, z, qk];
  });
  for (const [x, y, z, qk] of cases) {
    it(`Tile(${x}, ${y}, ${z}) ↔ '${qk}'`, () => {
      assert.equal(quadkey(x, y, z), qk);
      assert.deepEqual(quadkeyToTile(qk), { x, y, z });
    });
  }
});

describe('asset lookups (cogeo-mosaic 7.2 values)', () => {
  const m = open(LOOKUP_DOC);

  for (const [k, want] of Object.entries(TILE_ASSETS)) {
    const [x, y, z] = k.split(',').map(Number) as [number, number, number];
    it(`tile ${z}/${x}/${y} (quadkey zoom 9) → ${want.length} assets in cogeo-mosaic's order`, () => {
      assert.deepEqual(m.assetsForTile(WEB_MERCATOR, x, y, z), want);
    });
  }
  for (const [k, want] of Object.entries(POINT_ASSETS)) {
    const [lon, lat] = k.split(',').map(Number) as [number, number];
    it(`point ${lon},${lat} → ${want.length} assets`, () => assert.deepEqual(m.assetsForPoint(lon, lat), want));
  }
  for (const [k, want] of Object.entries(BBOX_ASSETS)) {
    const bbox = k.split(',').map(Number) as [number, number, number, number];
    it(`bbox ${k} → ${want.length} assets (x-major, first occurrence kept)`, () => assert.deepEqual(m.assetsForBbox(bbox), want));
  }
  it('a bbox and a point given in EPSG:3857 are reprojected first', () => {
    assert.deepEqual(m.assetsForBbox(BBOX_3857_QUERY, 'EPSG:3857'), BBOX_3857);
    assert.deepEqual(m.assetsForPoint(...POINT_3857_QUERY, 'EPSG:3857'), POINT_3857);
  });
  for (const [k, want] of Object.entries(WGS_TILE_ASSETS)) {
    const [x, y, z] = k.split(',').map(Number) as [number, number, number];
    it(`WGS1984Quad tile ${z}/${x}/${y} is looked up by its geographic bounds → ${want.length} assets`, () => {
      assert.deepEqual(m.assetsForTile(WGS1984, x, y, z), want);
    });
  }
  it('zoom range: the mosaic’s in its own grid, the grid’s in another', () => {
    assert.deepEqual(m.zooms(WEB_MERCATOR), LOOKUP_ZOOMS.WebMercatorQuad);
    assert.deepEqual(m.zooms(WGS1984), LOOKUP_ZOOMS.WGS1984Quad);
  });
  it('info: center from the bounds, name, WebMercatorQuad repr', () => {
    assert.equal(JSON.stringify(m.info()), JSON.stringify(LOOKUP_INFO));
  });
  it('asset_prefix-less documents and documents with one: prefix prepended on lookup only', () => {
    const full = open(FULL_DOC);
    for (const [k, want] of Object.entries(FULL_TILES)) {
      const [x, y, z] = k.split(',').map(Number) as [number, number, number];
      assert.deepEqual(full.assetsForTile(WEB_MERCATOR, x, y, z), want, key(x, y, z));
    }
  });
  it('refuses a tile the grid does not have', () => {
    assert.throws(
      () => m.assetsForTile(WEB_MERCATOR, 128, 0, 7),
      (e: unknown) => e instanceof TesseraError && e.kind === 'BadRequest',
    );
    assert.throws(
      () => m.assetsForTile(WEB_MERCATOR, 0, 0, 31),
      (e: unknown) => e instanceof TesseraError && e.kind === 'BadRequest',
    );
  });

  it('answers a z0 tile of a quadkey-zoom-18 mosaic from its index, in quadkey order, without enumerating 4^18 cells', () => {
    // Hand-derived: descendants come in lexicographic quadkey order, duplicates dropped.
    const keys = ['333333333333333333', '000000000000000001', '120000000000000000', '000000000000000000'];
    const doc = { mosaicjson: '0.0.2', minzoom: 18, maxzoom: 20, tiles: Object.fromEntries(keys.map((k, i) => [k, [`a${i}`, 'shared']])) };
    const deep = open(doc);
    const t0 = performance.now();
    const got = deep.assetsForTile(WEB_MERCATOR, 0, 0, 0);
    const ms = performance.now() - t0;
    assert.deepEqual(got, ['a3', 'shared', 'a1', 'a2', 'a0']);
    assert.ok(ms < 50, `took ${ms.toFixed(1)} ms`);
    // A z1 tile holds the keys starting with its own digit only.
    assert.deepEqual(deep.assetsForTile(WEB_MERCATOR, 1, 1, 1), ['a0', 'shared']);
    // The world as a bbox at zoom 18 is 4^18 cells: answered by filtering the four keys, x-major
    // (a3 and a1 share x = 0, y = 0 and 1; then a2; a0 is the last column).
    const t1 = performance.now();
    assert.deepEqual(deep.assetsForBbox([-180, -89, 180, 89]), ['a3', 'shared', 'a1', 'a2', 'a0']);
    // Between ±85° the first and last rows are left out: only a2 is inside.
    assert.deepEqual(deep.assetsForBbox([-180, -85, 180, 85]), ['a2', 'shared']);
    assert.ok(performance.now() - t1 < 50);
  });
});
