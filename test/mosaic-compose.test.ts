/**
 * The compositor (readers/mosaic-compose.ts) over a fake asset index and fake readers, all in
 * memory: no raster is opened, nothing goes over HTTP. What rio-tiler's `mosaic_reader` promises
 * and tessera adds is checked on 4×4 tiles whose every pixel is known: assets fed to the pixel
 * selection in index order whatever order their reads finish in, `first` stopping once the tile is
 * full, assets outside the tile skipped, a failing asset failing the tile, covered parts placed
 * below minzoom, one source-pixel budget per tile, the low-zoom deadline (the part answered, the
 * whole made after), the index's overview, and point values per asset. MosaicReader (readers/mosaic.ts)
 * over the same fakes gives the headers (X-Assets, X-Tessera-Partial) and the version.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MosaicCompositor, type CompositorContext, type MosaicSources } from '../src/readers/mosaic-compose.js';
import { MosaicReader } from '../src/readers/mosaic.js';
import type { Reader, ReaderImage, ReaderPoint, TileReadOptions, Zooms } from '../src/readers/reader.js';
import type { AssetIndex, IndexOverview } from '../src/mosaic/asset-index.js';
import type { PixelSelection } from '../src/mosaic/methods.js';
import type { ImageData } from '../src/image/image-data.js';
import { getTms, WEB_MERCATOR_QUAD } from '../src/tms/registry.js';
import type { BBox, TileMatrixSet } from '../src/tms/grid.js';
import { TesseraError } from '../src/errors.js';

const TMS = getTms(WEB_MERCATOR_QUAD)!;
const SIZE = 4;
const N = SIZE * SIZE;
/** A tile below the fake index's minzoom (5), and one at it. */
const LOW = { x: 1, y: 2, z: 3 };
const AT_MIN = { x: 9, y: 11, z: 5 };

/** One fake asset: a value per pixel (null: masked), one band unless `bands` says more. */
interface FakeAsset {
  values: Array<number | null>;
  bands?: number;
  delayMs?: number;
  /** Its read fails with this. */
  fails?: Error;
  /** Its tile does not touch the data (TileOutsideBounds). */
  outside?: boolean;
  /** Read for its covered part: the block of the tile it covers (values are the tile's, row-major). */
  block?: { col: number; row: number; width: number; height: number };
  /** Point values, or PointOutsideBounds. */
  point?: number[] | 'outside';
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What the fakes saw: assets opened, tile reads started and finished, and the options each read got. */
interface Log {
  opened: string[];
  finished: string[];
  options: Map<string, TileReadOptions>;
}

class FakeReader implements Reader {
  readonly bounds: BBox = [-180, -85, 180, 85];

  constructor(
    private readonly name: string,
    private readonly asset: FakeAsset,
    private readonly log: Log,
  ) {}

  async zooms(tms: TileMatrixSet): Promise<Zooms> {
    return { minzoom: tms.minzoom, maxzoom: tms.maxzoom };
  }

  async version(): Promise<string | undefined> {
    return undefined;
  }

  async tile(tms: TileMatrixSet, tile: { x: number; y: number; z: number }, opts: TileReadOptions): Promise<ReaderImage> {
    this.log.options.set(this.name, opts);
    if (this.asset.delayMs) await sleep(this.asset.delayMs);
    this.log.finished.push(this.name);
    if (this.asset.fails) throw this.asset.fails;
    if (this.asset.outside) throw new TesseraError('TileOutsideBounds', 'outside');
    const bounds = tms.xyBounds(tile);
    const block = opts.coveredPart ? this.asset.block : undefined;
    const cols = block ? block.width : opts.tilesize;
    const rows = block ? block.height : opts.tilesize;
    const band = new Uint8Array(cols * rows);
    const mask = new Uint8Array(cols * rows);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const v = this.asset.values[(r + (block?.row ?? 0)) * opts.tilesize + c + (block?.col ?? 0)] ?? null;
        band[r * cols + c] = v ?? 0;
        mask[r * cols + c] = v === null ? 0 : 255;
      }
    }
    const count = this.asset.bands ?? 1;
    const image: ImageData = {
      width: cols,
      height: rows,
      dtype: 'uint8',
      bands: Array.from({ length: count }, () => band.slice()),
      masks: Array.from({ length: count }, () => mask),
      bandNames: Array.from({ length: count }, (_, i) => `b${i + 1}`),
      bounds,
      crs: tms.srs,
    };
    return block ? { image, placement: { col: block.col, row: block.row } } : { image };
  }

  async point(): Promise<ReaderPoint> {
    const p = this.asset.point;
    if (p === 'outside' || p === undefined) throw new TesseraError('PointOutsideBounds', 'Point is outside dataset bounds');
    return { values: p, bandNames: p.map((_, i) => `b${i + 1}`) };
  }
}

/** An index of named fake assets: every tile and point lists `order`; minzoom 5. */
class FakeIndex implements AssetIndex<string> {
  readonly bounds: BBox = [-180, -85, 180, 85];
  readonly center = [0, 0, 5] as const;
  readonly version = 'index-v1';

  constructor(
    private readonly order: string[],
    private readonly overview?: IndexOverview,
  ) {}

  zooms(): { minzoom: number; maxzoom: number } {
    return { minzoom: 5, maxzoom: 9 };
  }

  assetName(asset: string): string {
    return `fake://${asset}`;
  }

  // Asynchronous, as an index over a database answers.
  async assetsForTile(): Promise<string[]> {
    return this.order;
  }

  assetsForPoint(): string[] {
    return this.order;
  }

  assetsForBbox(): string[] {
    return this.order;
  }

  overviewAt(_tms: TileMatrixSet, z: number, selection: PixelSelection): IndexOverview | undefined {
    return this.overview && z < 5 && selection === 'first' ? this.overview : undefined;
  }
}

const CONTEXT: CompositorContext = {
  concurrency: 4,
  lowZoomDeadlineMs: 0,
  limits: { maxOutputPixels: 1e9, maxSourcePixels: 1e9 },
};

/** The fakes, an index over `order` (all of `assets` by default) and the compositor's sources. */
function fakes(assets: Record<string, FakeAsset>, order = Object.keys(assets), overview?: { href: string; asset: FakeAsset }) {
  const log: Log = { opened: [], finished: [], options: new Map() };
  const open = async (name: string): Promise<Reader> => {
    log.opened.push(name);
    const asset = assets[name];
    if (!asset) throw new TesseraError('UpstreamNotFound', `no asset ${name}`);
    return new FakeReader(name, asset, log);
  };
  const sources: MosaicSources<string> = {
    index: new FakeIndex(order, overview ? { href: overview.href } : undefined),
    open,
    ...(overview
      ? {
          overview: {
            open: async (href: string) => {
              log.opened.push(href);
              return new FakeReader(href, overview.asset, log);
            },
            version: async () => 'overview-v7',
          },
        }
      : {}),
  };
  return { log, sources };
}

const compose = (sources: MosaicSources<string>, tile: { x: number; y: number; z: number }, selection: PixelSelection, ctx: Partial<CompositorContext> = {}) =>
  new MosaicCompositor(sources, { ...CONTEXT, ...ctx }).tile(TMS, tile.x, tile.y, tile.z, {
    tilesize: SIZE,
    pixelSelection: selection,
    unscale: false,
    resampling: 'nearest',
    reproject: 'nearest',
  });

/** Values of a 16-pixel tile: `fill(i)` at pixel i, masked where it gives null. */
const pixels = (fill: (i: number) => number | null): Array<number | null> => Array.from({ length: N }, (_, i) => fill(i));
/** The first band and its mask as one list: null where masked. */
const picture = (img: ImageData): Array<number | null> => Array.from(img.bands[0]!, (v, i) => (img.masks[0]![i] ? v : null));

describe('mosaic compositor over a fake index and fake readers', () => {
  it('feeds assets in index order, whatever order their reads finish in', async () => {
    // A finishes last; A's pixels still come first where both have data.
    const { log, sources } = fakes({
      A: { values: pixels((i) => (i < 8 ? 10 : null)), delayMs: 30 },
      B: { values: pixels(() => 20) },
    });
    const tile = await compose(sources, AT_MIN, 'first');
    assert.deepEqual(log.finished, ['B', 'A']);
    assert.deepEqual(tile.assetsUsed, ['fake://A', 'fake://B']);
    assert.deepEqual(tile.image.assets, ['fake://A', 'fake://B']);
    assert.deepEqual(
      picture(tile.image),
      pixels((i) => (i < 8 ? 10 : 20)),
    );
    assert.deepEqual(tile.image.bounds, TMS.xyBounds(AT_MIN));
    assert.equal(tile.partial, undefined);
  });

  it('`first` stops once no pixel is masked: later assets are never opened', async () => {
    const { log, sources } = fakes({ A: { values: pixels(() => 1) }, B: { values: pixels(() => 2) }, C: { values: pixels(() => 3) } });
    const tile = await compose(sources, AT_MIN, 'first', { concurrency: 1 });
    assert.deepEqual(log.opened, ['A']);
    assert.deepEqual(tile.assetsUsed, ['fake://A']);
  });

  it('gives every pixel selection its stack, in order', async () => {
    const assets = {
      A: { values: pixels((i) => (i === 0 ? null : i)) },
      B: { values: pixels((i) => 16 - i) },
    };
    const expected: Array<[PixelSelection, Array<number | null>]> = [
      ['first', pixels((i) => (i === 0 ? 16 : i))],
      ['highest', pixels((i) => (i === 0 ? 16 : Math.max(i, 16 - i)))],
      ['lowest', pixels((i) => (i === 0 ? 16 : Math.min(i, 16 - i)))],
      // numpy.ma.mean over the valid values, cast back to uint8 (truncated).
      ['mean', pixels((i) => (i === 0 ? 16 : Math.trunc((i + 16 - i) / 2)))],
      ['median', pixels((i) => (i === 0 ? 16 : Math.trunc((i + 16 - i) / 2)))],
      ['count', pixels((i) => (i === 0 ? 1 : 2))],
    ];
    for (const [selection, want] of expected) {
      const tile = await compose(fakes(assets).sources, AT_MIN, selection);
      assert.deepEqual(picture(tile.image), want, selection);
      assert.deepEqual(tile.assetsUsed, ['fake://A', 'fake://B'], selection);
    }
    // The last band decides and is dropped.
    const two = { A: { values: pixels(() => 5), bands: 2 }, B: { values: pixels(() => 9), bands: 2 } };
    const low = await compose(fakes(two).sources, AT_MIN, 'lastbandlow');
    assert.equal(low.image.bands.length, 1);
    assert.deepEqual(
      picture(low.image),
      pixels(() => 5),
    );
  });

  it('skips assets outside the tile; nothing read is an empty tile, no asset another', async () => {
    const { sources } = fakes({ A: { values: pixels(() => 1), outside: true }, B: { values: pixels((i) => (i < 4 ? 2 : null)) } });
    const tile = await compose(sources, AT_MIN, 'first');
    assert.deepEqual(tile.assetsUsed, ['fake://B']);
    assert.deepEqual(
      picture(tile.image),
      pixels((i) => (i < 4 ? 2 : null)),
    );

    const outside = fakes({ A: { values: [], outside: true }, B: { values: [], outside: true } });
    await assert.rejects(compose(outside.sources, AT_MIN, 'first'), { kind: 'NoContent', message: 'Method returned an empty array' });
    await assert.rejects(compose(fakes({}).sources, AT_MIN, 'first'), { kind: 'NoContent', message: 'No assets found for tile 5-9-11' });
  });

  it('a failing asset fails the tile, and no read starts after it', async () => {
    const failing = fakes({
      A: { values: pixels((i) => (i < 4 ? 1 : null)) },
      B: { values: [], fails: new TesseraError('UpstreamError', 'B answered 500') },
      C: { values: pixels(() => 3) },
    });
    await assert.rejects(compose(failing.sources, AT_MIN, 'first', { concurrency: 1 }), { kind: 'UpstreamError', message: 'B answered 500' });
    assert.deepEqual(failing.log.opened, ['A', 'B']);
    // An asset that cannot be opened is a failure too.
    const missing = fakes({ A: { values: pixels((i) => (i < 4 ? 1 : null)) } }, ['A', 'gone']);
    await assert.rejects(compose(missing.sources, AT_MIN, 'first'), { kind: 'UpstreamNotFound' });
    // Assets of other band counts cannot be mosaicked.
    const mixed = fakes({ A: { values: pixels((i) => (i < 4 ? 1 : null)) }, B: { values: pixels(() => 2), bands: 3 } });
    await assert.rejects(compose(mixed.sources, AT_MIN, 'first'), { kind: 'BadRequest', message: /same number of bands: 'fake:\/\/B' gives 3/ });
  });

  it('below minzoom asks for covered parts and places them; at minzoom reads whole tiles', async () => {
    const assets = {
      // A covers the 2×2 block at column 1, row 1; B the top-left pixel, read whole.
      A: { values: pixels((i) => (i === 5 || i === 6 || i === 9 || i === 10 ? 40 + i : null)), block: { col: 1, row: 1, width: 2, height: 2 } },
      B: { values: pixels((i) => (i === 0 || i === 5 ? 7 : null)) },
    };
    const low = fakes(assets);
    const tile = await compose(low.sources, LOW, 'first');
    assert.equal(low.log.options.get('A')!.coveredPart, true);
    assert.equal(tile.image.width, SIZE, 'the tile is whole');
    assert.deepEqual(tile.image.bounds, TMS.xyBounds(LOW));
    assert.deepEqual(
      picture(tile.image),
      pixels((i) => ({ 0: 7, 5: 45, 6: 46, 9: 49, 10: 50 })[i] ?? null),
    );
    const whole = fakes(assets);
    await compose(whole.sources, AT_MIN, 'first');
    assert.equal(whole.log.options.get('A')!.coveredPart, undefined);
  });

  it("holds a tile's assets to one source-pixel budget", async () => {
    const { log, sources } = fakes({ A: { values: pixels((i) => (i < 4 ? 1 : null)) }, B: { values: pixels(() => 2) } });
    await compose(sources, AT_MIN, 'first');
    const a = log.options.get('A')!.limits;
    const b = log.options.get('B')!.limits;
    assert.ok(a.sourcePixelBudget, 'a budget is given');
    assert.equal(a.sourcePixelBudget, b.sourcePixelBudget, 'the same one for every asset');
    assert.deepEqual({ what: a.sourcePixelBudget.what, hint: a.sourcePixelBudget.hint }, { what: "the tile's assets", hint: 'zoom in' });
    assert.equal(a.maxSourcePixels, CONTEXT.limits.maxSourcePixels);
    // Each read gets its own expression-evaluating options: nothing is deferred to the renderer.
    assert.equal(log.options.get('A')!.deferExpression, undefined);
  });

  describe('the low-zoom deadline', () => {
    const late = {
      A: { values: pixels((i) => (i < 4 ? 1 : null)) },
      B: { values: pixels((i) => (i < 8 ? 2 : null)), delayMs: 250 },
      C: { values: pixels((i) => (i >= 8 ? 3 : null)) },
    };

    it('answers with the assets read in time, marked partial, and finishes the tile after', async () => {
      const { sources } = fakes(late);
      let kept = 0;
      const started = performance.now();
      const tile = await compose(sources, LOW, 'first', {
        lowZoomDeadlineMs: 40,
        finishLater: (work) => {
          kept++;
          return work();
        },
      });
      assert.ok(performance.now() - started < 200, 'answered before the slow asset');
      assert.deepEqual(tile.partial, { read: 2, assets: 3 });
      assert.deepEqual(tile.assetsUsed, ['fake://A', 'fake://C']);
      assert.deepEqual(
        picture(tile.image),
        pixels((i) => (i < 4 ? 1 : i >= 8 ? 3 : null)),
      );
      assert.equal(kept, 1);
      const whole = await tile.later!;
      assert.equal(whole.partial, undefined);
      assert.deepEqual(whole.assetsUsed, ['fake://A', 'fake://B', 'fake://C']);
      assert.deepEqual(
        picture(whole.image),
        pixels((i) => (i < 4 ? 1 : i < 8 ? 2 : 3)),
      );
    });

    it('without a way to finish later, the part is all', async () => {
      const tile = await compose(fakes(late).sources, LOW, 'first', { lowZoomDeadlineMs: 40 });
      assert.deepEqual(tile.partial, { read: 2, assets: 3 });
      assert.equal(tile.later, undefined);
    });

    it('waits for the first image before answering', async () => {
      const slowFirst = { ...late, A: { ...late.A, delayMs: 80 } };
      const tile = await compose(fakes(slowFirst).sources, LOW, 'first', { lowZoomDeadlineMs: 10 });
      assert.deepEqual(tile.assetsUsed, ['fake://A', 'fake://C']);
      assert.deepEqual(tile.partial, { read: 2, assets: 3 });
    });

    it('holds neither at minzoom nor for selections that need every asset', async () => {
      for (const [tile, selection] of [
        [AT_MIN, 'first'],
        [LOW, 'mean'],
      ] as const) {
        const whole = await compose(fakes(late).sources, tile, selection, { lowZoomDeadlineMs: 40 });
        assert.equal(whole.partial, undefined, `${tile.z} ${selection}`);
        assert.deepEqual(whole.assetsUsed, ['fake://A', 'fake://B', 'fake://C']);
      }
    });
  });

  it("reads a tile from the index's overview alone, where it names one", async () => {
    const { log, sources } = fakes({ A: { values: pixels(() => 1) } }, ['A'], { href: 'overview.tif', asset: { values: pixels(() => 99) } });
    const tile = await compose(sources, LOW, 'first');
    assert.deepEqual(log.opened, ['overview.tif']);
    assert.deepEqual(tile.assetsUsed, ['overview.tif']);
    assert.deepEqual(
      picture(tile.image),
      pixels(() => 99),
    );
    // Another selection, or minzoom: the assets.
    assert.deepEqual((await compose(sources, LOW, 'highest')).assetsUsed, ['fake://A']);
    assert.deepEqual((await compose(sources, AT_MIN, 'first')).assetsUsed, ['fake://A']);
    const empty = fakes({ A: { values: pixels(() => 1) } }, ['A'], { href: 'overview.tif', asset: { values: [], outside: true } });
    await assert.rejects(compose(empty.sources, LOW, 'first'), { kind: 'NoContent' });
  });

  it('gives point values per covering asset, in order, skipping assets the point is outside of', async () => {
    const { sources } = fakes({ A: { values: [], point: [1, 2] }, B: { values: [], point: 'outside' }, C: { values: [], point: [5, 6] } });
    const values = { unscale: false, resampling: 'nearest', reproject: 'nearest' } as const;
    const points = await new MosaicCompositor(sources, CONTEXT).point(1, 2, 'EPSG:4326', values);
    assert.deepEqual(points, [
      { asset: 'fake://A', values: [1, 2], bandNames: ['b1', 'b2'] },
      { asset: 'fake://C', values: [5, 6], bandNames: ['b1', 'b2'] },
    ]);
    await assert.rejects(new MosaicCompositor(fakes({}).sources, CONTEXT).point(1, 2, 'EPSG:4326', values), { kind: 'NoContent' });
  });
});

describe('MosaicReader over a fake index', () => {
  const settings = { pixelSelection: 'first', strictZoom: false, assetsHeader: true } as const;
  const options = { tilesize: SIZE, unscale: false, resampling: 'nearest', reproject: 'nearest', limits: CONTEXT.limits } as const;

  it("names the assets used in X-Assets, a partial tile in X-Tessera-Partial, and takes the index's bounds, zooms and version", async () => {
    const { sources } = fakes({
      A: { values: pixels((i) => (i < 4 ? 1 : null)) },
      B: { values: pixels(() => 2), delayMs: 150 },
    });
    const reader = new MosaicReader(sources, { ...CONTEXT, lowZoomDeadlineMs: 30, finishLater: (work) => work() }, settings);
    assert.deepEqual(reader.bounds, sources.index.bounds);
    assert.deepEqual(await reader.zooms(TMS), { minzoom: 5, maxzoom: 9 });
    assert.equal(await reader.version({ tms: TMS, z: LOW.z }), 'index-v1');
    const part = await reader.tile(TMS, LOW, options);
    assert.deepEqual(part.headers, { 'x-assets': 'fake://A', 'x-tessera-partial': '1/2', 'cache-control': 'no-store' });
    const whole = await part.later!;
    assert.deepEqual(whole.headers, { 'x-assets': 'fake://A,fake://B' });
    const strict = new MosaicReader(sources, CONTEXT, { ...settings, strictZoom: true });
    await assert.rejects(strict.tile(TMS, LOW, options), { kind: 'BadRequest', message: 'Invalid ZOOM level 3. Should be between 5 and 9' });
  });

  it("tags tiles read from the overview with the overview's version too", async () => {
    const { sources } = fakes({ A: { values: pixels(() => 1) } }, ['A'], { href: 'overview.tif', asset: { values: pixels(() => 99) } });
    const reader = new MosaicReader(sources, CONTEXT, settings);
    assert.equal(await reader.version({ tms: TMS, z: LOW.z }), JSON.stringify(['index-v1', 'overview.tif', 'overview-v7']));
    assert.equal(await reader.version({ tms: TMS, z: AT_MIN.z }), 'index-v1');
    assert.deepEqual((await reader.tile(TMS, LOW, options)).headers, { 'x-assets': 'overview.tif' });
  });
});
