/**
 * The reader contract (src/readers/reader.ts), asked directly of every reader — the COG reader, the
 * STAC item reader and the MosaicJSON reader — with the same cases and no HTTP in between (only the
 * Range file server that stands for object storage): bounds, zooms, a tile inside the data and one
 * outside, values at a point and outside it, a version that holds, and the whole-image verbs where
 * the reader has them (a mosaic has none, as in TiTiler). Expected values are TiTiler's for the
 * fixtures (shared/spec/titiler-reference.md §12; test/contract.test.ts asks the same over the routes).
 *
 * Across readers: the STAC item's asset B01 is the COG B01.tif, so their tiles and points agree
 * value for value; the mosaic's tile is `first` over its assets' COG tiles, read through the same
 * contract. The mosaic's asset points come from its compositor (readers/mosaic-compose.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFileServer, fixtureItem, fixtureMosaic, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { LOOPBACK } from './helpers/tessera.js';
import { loadSettings } from '../src/config.js';
import { Services } from '../src/services.js';
import { cogReader } from '../src/readers/cog.js';
import { stacItemReader } from '../src/readers/stac.js';
import { MosaicDocumentReader, documentCompositor, type MosaicLayer } from '../src/readers/mosaic.js';
import type { Reader, ReadOptions, ReaderImage } from '../src/readers/reader.js';
import { imageStatistics, parseStatisticsOptions } from '../src/image/statistics.js';
import type { ImageData } from '../src/image/image-data.js';
import { gdal } from '../src/gdal/gdal.js';
import { WGS84 } from '../src/gdal/crs.js';
import { getTms, WEB_MERCATOR_QUAD } from '../src/tms/registry.js';
import type { BBox } from '../src/tms/grid.js';

const TMS = getTms(WEB_MERCATOR_QUAD)!;
const VALUES = { unscale: false, resampling: 'nearest', reproject: 'nearest' } as const;
/** B01.tif's WGS84 bounds and the fixture item's bbox (titiler-reference.md §12). */
const B01_BOUNDS: BBox = [23.106076243528157, 31.505173744374172, 24.296464503939948, 32.519334871696195];
const ITEM_BBOX: BBox = [23.293255090449595, 31.505183020453774, 24.296453548295318, 32.51147809805106];
const MOSAIC_BOUNDS: BBox = [-75.98703377403767, 44.93504283303786, -71.337604724099, 47.096855991923235];
const NO_STAC_LAYER = { assetAsBand: false, assetBidx: new Map<string, readonly number[]>() };

type Tile = { x: number; y: number; z: number };

interface ReaderCase {
  name: string;
  open(): Promise<Reader>;
  bounds: BBox;
  zooms: [number, number];
  inside: Tile;
  outside: Tile;
  /** What a tile outside the data is: rio-tiler's TileOutsideBounds, or a mosaic without assets there (a 204). */
  outsideKind: 'TileOutsideBounds' | 'NoContent';
  /** Band names of a tile. */
  bandNames: string[];
  /** A point inside the data and its values (TiTiler's), where the reader has the point verb. */
  point?: { at: [number, number]; values: number[]; bandNames: string[] };
  /** The reader has preview, part, feature and feature statistics (a mosaic has all but preview: 'across readers'). */
  wholeImages: boolean;
}

function validPixels(img: ImageData): number {
  let n = 0;
  for (const v of img.masks[0]!) if (v !== 0) n++;
  return n;
}

describe('the reader contract, asked of each reader directly', () => {
  let files: FileServer;
  let services: Services;
  const url = (name: string): string => `${files.url}/${name}`;
  const limits = (): ReadOptions['limits'] => ({ maxOutputPixels: services.settings.maxOutputPixels, maxSourcePixels: services.settings.maxSourcePixels });
  const mosaicLayer: MosaicLayer = { stac: NO_STAC_LAYER };

  const cases: ReaderCase[] = [
    {
      name: 'COG',
      open: () => cogReader(services.cog(url('B01.tif')), url('B01.tif'), {}),
      bounds: B01_BOUNDS,
      zooms: [8, 8],
      inside: { x: 289, y: 207, z: 9 },
      outside: { x: 128, y: 128, z: 9 },
      outsideKind: 'TileOutsideBounds',
      bandNames: ['b1'],
      point: { at: [23.878, 32.063], values: [3565], bandNames: ['b1'] },
      wholeImages: true,
    },
    {
      name: 'STAC item',
      open: async () => stacItemReader(await services.stac(url('item.json')), { ...NO_STAC_LAYER, assets: ['B01'] }),
      bounds: ITEM_BBOX,
      zooms: [0, 24],
      inside: { x: 289, y: 207, z: 9 },
      outside: { x: 128, y: 128, z: 9 },
      outsideKind: 'TileOutsideBounds',
      bandNames: ['B01_b1'],
      point: { at: [23.878, 32.063], values: [3565], bandNames: ['B01_b1'] },
      wholeImages: true,
    },
    {
      name: 'MosaicJSON',
      open: async () =>
        new MosaicDocumentReader(
          await services.mosaics.open(url('mosaic.json')),
          { layer: mosaicLayer, pixelSelection: 'first', strictZoom: false, assetsHeader: true },
          services.mosaicContext,
        ),
      bounds: MOSAIC_BOUNDS,
      zooms: [7, 9],
      inside: { x: 152, y: 183, z: 9 },
      outside: { x: 128, y: 128, z: 9 },
      outsideKind: 'NoContent',
      bandNames: ['b1', 'b2', 'b3'],
      wholeImages: false,
    },
  ];

  before(async () => {
    files = await startFileServer(FIXTURES);
    files.put('/item.json', await fixtureItem(files.url));
    files.put('/mosaic.json', JSON.stringify(await fixtureMosaic(files.url)));
    services = new Services(loadSettings({ logLevel: 'silent', allowedNetworks: LOOPBACK, renderThreads: 0, tileCacheBytes: 0 }));
  });
  after(async () => {
    await services?.close();
    await files?.close();
  });

  for (const c of cases) {
    describe(c.name, () => {
      it('gives its WGS84 bounds and its zooms in a grid', async () => {
        const reader = await c.open();
        reader.bounds.forEach((v, i) => {
          assert.ok(Math.abs(v - c.bounds[i]!) < 1e-6, `bounds[${i}] ${v} vs ${c.bounds[i]}`);
        });
        const zooms = await reader.zooms(TMS);
        assert.deepEqual([zooms.minzoom, zooms.maxzoom], c.zooms);
      });

      it('reads a tile inside the data, at any tile size', async () => {
        const reader = await c.open();
        const tile = await reader.tile(TMS, c.inside, { ...VALUES, limits: limits(), tilesize: 256 });
        assert.deepEqual([tile.image.width, tile.image.height], [256, 256]);
        assert.deepEqual(tile.image.bandNames, c.bandNames);
        assert.ok(validPixels(tile.image) > 1000, `${validPixels(tile.image)} valid pixels`);
        const big = await reader.tile(TMS, c.inside, { ...VALUES, limits: limits(), tilesize: 512 });
        assert.deepEqual([big.image.width, big.image.height], [512, 512]);
      });

      it(`says a tile outside the data is ${c.outsideKind}`, async () => {
        const reader = await c.open();
        await assert.rejects(reader.tile(TMS, c.outside, { ...VALUES, limits: limits(), tilesize: 256 }), { kind: c.outsideKind });
      });

      it(
        c.point
          ? 'reads the values at a point, and says a point outside the data is PointOutsideBounds'
          : 'has no point verb (its asset points are the compositor’s)',
        async () => {
          const reader = await c.open();
          if (!c.point) {
            assert.equal(reader.point, undefined);
            return;
          }
          const [lon, lat] = c.point.at;
          assert.deepEqual(await reader.point!(lon, lat, WGS84, VALUES), {
            values: c.point.values,
            bandNames: c.point.bandNames,
            masked: c.point.values.map(() => false),
            // TiTiler 2.x's descriptions: the files have none, so the names.
            bandDescriptions: c.point.bandNames,
          });
          await assert.rejects(reader.point!(0, 0, WGS84, VALUES), { kind: 'PointOutsideBounds' });
        },
      );

      it('has a version that holds from call to call and reader to reader', async () => {
        const [one, two] = [await c.open(), await c.open()];
        const v = await one.version();
        assert.equal(typeof v, 'string', 'the fixtures are served with validators');
        assert.equal(await one.version(), v);
        assert.equal(await two.version(), v);
        assert.equal(await one.version({ tms: TMS, z: c.inside.z }), v, 'a tile of it has the same');
      });

      it(c.wholeImages ? 'makes previews, parts, feature images and feature statistics' : 'has no preview (as TiTiler 2.x mosaic backends)', async () => {
        const reader = await c.open();
        if (!c.wholeImages) {
          assert.equal(reader.preview, undefined);
          return;
        }
        const opts = { ...VALUES, limits: limits() };
        const preview = await reader.preview!({ maxSize: 64 }, opts);
        assert.deepEqual([preview.image.width, preview.image.height], [64, 64]);
        // titiler-reference.md §12: this bbox at max_size 64 is 15×14 (the native resolution is coarser).
        const bbox: BBox = [23.878, 32.063, 23.966, 32.145];
        const part = await reader.part!(bbox, { maxSize: 64, boundsCrs: WGS84, dstCrs: WGS84 }, opts);
        assert.deepEqual([part.image.width, part.image.height], [15, 14]);
        const shape = gdal.Geometry.fromGeoJson({
          type: 'Polygon',
          coordinates: [
            [
              [bbox[0], bbox[1]],
              [bbox[2], bbox[1]],
              [bbox[2], bbox[3]],
              [bbox[0], bbox[1]],
            ],
          ],
        });
        const feature = await reader.feature!(shape, WGS84, { maxSize: 64, dstCrs: WGS84 }, opts);
        assert.ok(
          validPixels(feature.image) > 0 && validPixels(feature.image) < feature.image.width * feature.image.height,
          'the triangle masks part of its bbox',
        );
        const statistics = parseStatisticsOptions({});
        const stats = await reader.statisticsOfFeatures!([shape], WGS84, { maxSize: 64, boundsCrs: WGS84, dstCrs: WGS84 }, opts, 1, async (r: ReaderImage) =>
          imageStatistics(r.image, statistics),
        );
        assert.deepEqual([...stats[0]!.keys()], c.bandNames);
        assert.ok(stats[0]!.get(c.bandNames[0]!)!.count > 0);
      });
    });
  }

  describe('across readers', () => {
    it('the STAC item reads its asset as the COG reader reads the file', async () => {
      const [cog, item] = [await cases[0]!.open(), await cases[1]!.open()];
      const opts = { ...VALUES, limits: limits(), tilesize: 256 };
      const [a, b] = await Promise.all([cog.tile(TMS, cases[0]!.inside, opts), item.tile(TMS, cases[1]!.inside, opts)]);
      assert.deepEqual(b.image.bands, a.image.bands);
      assert.deepEqual(b.image.masks, a.image.masks);
    });

    it("the mosaic's parts, feature images and feature statistics are `first` over its assets' parts", async () => {
      const mosaic = await cases[2]!.open();
      const opts = { ...VALUES, limits: limits() };
      // Inside cog1, west of cog2: the first asset fills it, so it is cog1's own part.
      const bbox: BBox = [-75.5, 45.5, -74.8, 46];
      const part = await mosaic.part!(bbox, { width: 64, height: 48, boundsCrs: WGS84, dstCrs: WGS84 }, opts);
      const cog1 = await cogReader(services.cog(url('cog1.tif')), url('cog1.tif'), {});
      const own = await cog1.part(bbox, { width: 64, height: 48, boundsCrs: WGS84, dstCrs: WGS84 }, opts);
      assert.deepEqual(part.image.bands, own.image.bands);
      assert.equal(part.headers?.['x-assets'], url('cog1.tif'));
      const shape = gdal.Geometry.fromGeoJson({
        type: 'Polygon',
        coordinates: [
          [
            [-75.5, 45.5],
            [-74.8, 45.5],
            [-74.8, 46],
            [-75.5, 45.5],
          ],
        ],
      });
      const feature = await mosaic.feature!(shape, WGS84, { width: 64, height: 48, dstCrs: WGS84 }, opts);
      assert.ok(validPixels(feature.image) > 0 && validPixels(feature.image) < 64 * 48, 'the triangle masks part of its bbox');
      const statistics = parseStatisticsOptions({});
      const stats = await mosaic.statisticsOfFeatures!([shape], WGS84, { width: 64, height: 48, boundsCrs: WGS84, dstCrs: WGS84 }, opts, 1, async (r) =>
        imageStatistics(r.image, statistics),
      );
      assert.deepEqual([...stats[0]!.keys()], ['b1', 'b2', 'b3']);
    });

    it("the mosaic's tile is `first` over its assets' COG tiles, and names them in X-Assets", async () => {
      const mosaic = await cases[2]!.open();
      const opts = { ...VALUES, limits: limits(), tilesize: 256 };
      const tile = await mosaic.tile(TMS, cases[2]!.inside, opts);
      const assets = tile.headers?.['x-assets']?.split(',') ?? [];
      assert.ok(assets.length > 0, 'names its assets');
      const reads = await Promise.all(assets.map(async (a) => (await cogReader(services.cog(a), a, {})).tile(TMS, cases[2]!.inside, opts)));
      const n = 256 * 256;
      for (let b = 0; b < 3; b++) {
        for (let i = 0; i < n; i++) {
          const from = reads.find((r) => r.image.masks[b]![i] !== 0);
          assert.equal(tile.image.masks[b]![i] !== 0, from !== undefined, `band ${b} pixel ${i}: valid where an asset is`);
          if (from) assert.equal(tile.image.bands[b]![i], from.image.bands[b]![i], `band ${b} pixel ${i}`);
        }
      }
    });

    it("the mosaic's point lists each covering asset's values, as its COG reader gives them", async () => {
      const mosaic = await services.mosaics.open(url('mosaic.json'));
      const points = await documentCompositor(mosaic, mosaicLayer, services.mosaicContext).point(-73, 46, WGS84, VALUES);
      assert.deepEqual(
        points.map((p) => p.asset),
        [url('cog1.tif'), url('cog2.tif')],
      );
      for (const p of points) {
        const own = await (await cogReader(services.cog(p.asset), p.asset, {})).point!(-73, 46, WGS84, VALUES);
        assert.deepEqual({ values: p.values, bandNames: p.bandNames, masked: p.masked, bandDescriptions: p.bandDescriptions }, own);
      }
    });
  });
});
