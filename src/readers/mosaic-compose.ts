/**
 * Reading a mosaic (rio-tiler 6.8 `mosaic_reader`, cogeo-mosaic's `tile`/`point`): every asset of
 * the tile is read as rio-tiler's `Reader(asset).tile(...)` would read it — or, for assets that are
 * STAC items, as the STAC image verbs read the named assets — and the images are fed, in asset
 * order, to the pixel selection method.
 *
 * Reads run in parallel, at most `concurrency` ahead of the one being fed; results are fed strictly
 * in asset order (so the mosaic is the same whatever finishes first). With `first`, the mosaic
 * stops as soon as no pixel is masked: reads not yet started never start and reads in flight are
 * left unfed, as rio-tiler leaves the rest of its chunk. Assets the tile does not touch (rio-tiler's
 * TileOutsideBounds) are skipped; nothing read at all is a 204.
 */
import { RasterReader, overviewFactor, type ValueOptions, type PointValues, type ReadPlan } from '../source/reader.js';
import type { RasterSource, SourceContext, SourceMeta } from '../source/dataset.js';
import type { UrlPolicy } from '../upstream/url-policy.js';
import { sameCrs, srsFrom, transformBounds, TransformMemo } from '../gdal/crs.js';
import type { SpatialReference } from '../gdal/gdal.js';
import type { StacReader } from '../stac/reader.js';
import { stacItemReader, type StacLayerOptions } from './stac.js';
import { mapLimited } from '../concurrency.js';
import type { ReadLimits } from './reader.js';
import { allocate, intersectMasks, type ImageData } from '../image/image-data.js';
import { resizeNearest } from '../image/stack.js';
import { evaluateExpression, expressionBands, parseExpression, type Expression } from '../image/expression.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { TesseraError, badRequest, invalidBandIndex } from '../errors.js';
import { checkOutputValues, checkSourcePixels } from '../source/limits.js';
import type { Mosaic } from '../mosaic/mosaic.js';
import { pixelSelector, type LayerPlacement, type PixelLayer, type PixelSelection, type PixelSelector } from '../mosaic/methods.js';

/** What a mosaic read needs from the running server. */
export interface MosaicContext {
  sources: SourceContext;
  policy: UrlPolicy;
  openStac(url: string): Promise<StacReader>;
  /** Asset reads in flight per request. */
  concurrency: number;
  /**
   * Below the mosaic's minzoom, how long a tile waits for its assets (ms; 0: as long as the request
   * may last): past it the tile is made of the assets read so far and marked partial.
   */
  lowZoomDeadlineMs: number;
  /** Finish a tile answered in part after the answer (its whole picture goes to the tile cache). */
  finishLater: boolean;
  limits: ReadLimits;
}

/** The layer parameters: `bidx`/`expression` over COG bands (b1, b2 …); `assets`… for STAC items. */
export interface MosaicLayer {
  bidx?: readonly number[];
  expression?: string;
  /** For mosaics of STAC items: which of each item's assets to read (`expression` names them). */
  stac: Omit<StacLayerOptions, 'expression' | 'bidx'>;
}

export interface MosaicTileOptions extends ValueOptions {
  tilesize: number;
  buffer?: number;
  padding?: number;
  pixelSelection: PixelSelection;
}

export interface MosaicTile {
  image: ImageData;
  /** The assets whose pixels were fed to the pixel selection, in order. */
  assetsUsed: string[];
  /** Set when the deadline passed first: the tile's assets, and how many of them were read in time. */
  partial?: { read: number; assets: number };
  /** With `partial`: the whole tile, made after the answer. */
  later?: Promise<MosaicTile>;
}

/** The read options alone, without the tile and selection parameters. */
function valuesOf(opts: ValueOptions): ValueOptions {
  return {
    unscale: opts.unscale,
    resampling: opts.resampling,
    reproject: opts.reproject,
    ...(opts.nodata !== undefined ? { nodata: opts.nodata } : {}),
    ...(opts.transformMemo ? { transformMemo: opts.transformMemo } : {}),
  };
}

/** STAC items are named by their document type, or by a JSON href. */
function isStacItem(mosaic: Mosaic, asset: string): boolean {
  if (mosaic.doc.asset_type?.toUpperCase() === 'STAC') return true;
  const path = asset.split(/[?#]/, 1)[0]!.toLowerCase();
  return path.endsWith('.json') || path.endsWith('.geojson');
}

/** Reads one COG asset's bands (or expression) the way rio-tiler's `Reader` does. */
class CogLayer {
  readonly expression: Expression | undefined;
  private readonly indexes: number[] | undefined;

  constructor(layer: MosaicLayer) {
    if (layer.expression) {
      this.expression = parseExpression(layer.expression);
      // rio-tiler reads exactly the bands the expression names.
      this.indexes = expressionBands(this.expression);
    } else if (layer.bidx && layer.bidx.length > 0) {
      this.indexes = [...layer.bidx];
    }
  }

  checkIndexes(count: number, label: string): void {
    for (const i of this.indexes ?? []) {
      if (i > count) throw invalidBandIndex(i, count, label);
    }
  }

  /** How many bands an asset of `count` bands gives. */
  outputBands(count: number): number {
    if (this.expression) return this.expression.blocks.length;
    return this.indexes ? this.indexes.length : Math.max(1, count);
  }

  valueOptions(opts: ValueOptions): ValueOptions {
    return this.indexes ? { ...opts, indexes: this.indexes } : opts;
  }

  /** rio-tiler `apply_expression`: one mask for every output, masked where any band read is. */
  apply(img: ImageData): ImageData {
    const expr = this.expression;
    if (!expr) return img;
    const n = img.width * img.height;
    const inputs = new Map(img.bandNames.map((name, i) => [name, { dtype: img.dtype, array: img.bands[i]! }]));
    const result = evaluateExpression(expr, inputs, n);
    const mask = intersectMasks(img.masks, n);
    return {
      ...img,
      dtype: result.dtype,
      bands: result.bands,
      masks: result.bands.map(() => mask),
      bandNames: expr.blocks.map((b) => b.name),
      datasetStatistics: undefined,
    };
  }

  applyToPoint(p: PointValues): PointValues {
    const expr = this.expression;
    if (!expr) return p;
    const inputs = new Map(
      p.bandNames.map((name, i) => {
        const array = allocate(p.dtype, 1);
        array[0] = p.values[i]!;
        return [name, { dtype: p.dtype, array }];
      }),
    );
    const result = evaluateExpression(expr, inputs, 1);
    return { dtype: result.dtype, values: result.bands.map((b) => b[0]!), masks: result.bands.map(() => false), bandNames: expr.blocks.map((b) => b.name) };
  }
}

/** What error messages call a document's low-zoom overview (mosaic/overview.ts). */
const OVERVIEW_LABEL = 'mosaic overview';

/** A raster a mosaic document names (an asset, its overview), under the URL policy as every client-given URL. */
function sourceOf(ctx: MosaicContext, href: string, what: string): RasterSource {
  return ctx.sources.sourceAt(ctx.policy.resolve(href, what), `${what} '${href}'`);
}

/** The version of the overview COG (its upstream validators), for the tags of the tiles read from it. */
export async function overviewVersion(ctx: MosaicContext, href: string): Promise<string | undefined> {
  return (await sourceOf(ctx, href, OVERVIEW_LABEL).meta()).version;
}

/** Reads the assets of one mosaic request; built once per request from its parameters. */
export class MosaicReader {
  private readonly cog: CogLayer;

  constructor(
    private readonly mosaic: Mosaic,
    private readonly layer: MosaicLayer,
    private readonly ctx: MosaicContext,
  ) {
    this.cog = new CogLayer(layer);
  }

  async tile(tms: TileMatrixSet, x: number, y: number, z: number, opts: MosaicTileOptions): Promise<MosaicTile> {
    const assets = this.mosaic.assetsForTile(tms, x, y, z);
    if (assets.length === 0) throw new TesseraError('NoContent', `No assets found for tile ${z}-${x}-${y}`);
    const budget = { sourcePixels: 0 };
    const footprint = new TileFootprint(tms, x, y, z);
    // Every asset warps onto this tile's grid: where they share a CRS, their transformations repeat.
    const shared = { ...opts, transformMemo: new TransformMemo() };
    // The overview holds the assets' bands: a mosaic of STAC items (whose requests name assets) reads its items.
    const overview = isStacItem(this.mosaic, assets[0]!) ? undefined : this.mosaic.overviewAt(tms, z, opts.pixelSelection);
    if (overview) {
      // One read of the document's low-zoom overview stands for every asset. A failure to read it is
      // the tile's failure, as an unreadable asset's is, not a fall back onto the assets: the
      // document's author named the file, and a quiet fallback would hide a broken or refused
      // overview behind tiles that are slow (or partial) again, and read it on every request.
      const img = await this.cogTile(overview.href, tms, x, y, z, shared, budget, footprint, false, OVERVIEW_LABEL);
      if (!img) throw new TesseraError('NoContent', 'Method returned an empty array');
      return { image: { ...img, assets: [overview.href] }, assetsUsed: [overview.href] };
    }
    // Below the mosaic's minzoom each asset covers a small part of the tile: it is read for that part alone.
    const partial = z < this.mosaic.zooms(tms).minzoom && opts.buffer === undefined && opts.padding === undefined;
    const read = (asset: string): Promise<ImageData | undefined> =>
      isStacItem(this.mosaic, asset) ? this.stacTile(asset, tms, x, y, z, shared) : this.cogTile(asset, tms, x, y, z, shared, budget, footprint, partial);
    const deadline = partial && this.ctx.lowZoomDeadlineMs > 0 ? Date.now() + this.ctx.lowZoomDeadlineMs : undefined;
    const meter = this.ctx.sources.meter;
    return composite(
      assets,
      read,
      opts.pixelSelection,
      this.ctx.concurrency,
      deadline,
      this.ctx.finishLater ? (meter ? (work) => meter.finishAfter(work) : (work) => work()) : undefined,
    );
  }

  /** Values at a point for every asset that covers it, in asset order (no pixel selection). */
  async point(lon: number, lat: number, coordCrs: string, opts: ValueOptions): Promise<Array<{ asset: string; values: number[]; bandNames: string[] }>> {
    const assets = this.mosaic.assetsForPoint(lon, lat, coordCrs);
    if (assets.length === 0) throw new TesseraError('NoContent', `No assets found for point (${lon},${lat})`);
    const results = await mapLimited(assets, this.ctx.concurrency, (asset) =>
      isStacItem(this.mosaic, asset) ? this.stacPoint(asset, lon, lat, coordCrs, opts) : this.cogPoint(asset, lon, lat, coordCrs, opts),
    );
    const out: Array<{ asset: string; values: number[]; bandNames: string[] }> = [];
    results.forEach((r, i) => {
      if (r) out.push({ asset: assets[i]!, values: r.values, bandNames: r.bandNames });
    });
    return out;
  }

  private reader(asset: string, what = 'mosaic asset'): RasterReader {
    return new RasterReader(sourceOf(this.ctx, asset, what));
  }

  private async cogTile(
    asset: string,
    tms: TileMatrixSet,
    x: number,
    y: number,
    z: number,
    opts: MosaicTileOptions,
    budget: { sourcePixels: number },
    footprint: TileFootprint,
    partial: boolean,
    what = 'mosaic asset',
  ): Promise<ImageData | undefined> {
    const reader = this.reader(asset, what);
    const meta = await reader.meta();
    this.cog.checkIndexes(meta.count, `${what} '${asset}'`);
    if (!footprint.touches(meta)) return undefined;
    const window = partial ? await assetWindow(reader, tms, { x, y, z }, opts.tilesize) : undefined;
    const plan = window
      ? await reader.planPart(window.bounds, { dstCrs: tms.srs, boundsCrs: tms.srs, width: window.width, height: window.height, covered: true })
      : await reader.planTile(tms, x, y, z, opts.tilesize, {
          ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}),
          ...(opts.padding !== undefined ? { padding: opts.padding } : {}),
        });
    const limits = this.ctx.limits;
    const bands = this.cog.outputBands(meta.count);
    checkOutputValues(plan.width * plan.height * bands, limits, `${plan.width}x${plan.height} pixels × ${bands} band(s)`);
    budget.sourcePixels += readCost(meta, plan);
    checkSourcePixels(budget.sourcePixels, limits, "the tile's assets", 'zoom in');
    const img = this.cog.apply(await reader.read(plan, this.cog.valueOptions(valuesOf(opts))));
    if (window) {
      const size = opts.tilesize;
      placements.set(img, {
        at: { col: window.col, row: window.row, width: window.width, height: window.height, stride: size, length: size * size },
        frame: { width: size, height: size, bounds: tms.xyBounds({ x, y, z }) },
      });
    }
    return img;
  }

  private async stacTile(asset: string, tms: TileMatrixSet, x: number, y: number, z: number, opts: MosaicTileOptions): Promise<ImageData | undefined> {
    const reader = await stacItemReader(await this.ctx.openStac(asset), this.stacLayer());
    try {
      const tile = await reader.tile(
        tms,
        { x, y, z },
        {
          ...valuesOf(opts),
          limits: this.ctx.limits,
          tilesize: opts.tilesize,
          ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}),
          ...(opts.padding !== undefined ? { padding: opts.padding } : {}),
        },
      );
      return tile.image;
    } catch (err) {
      if (err instanceof TesseraError && err.kind === 'TileOutsideBounds') return undefined;
      throw err;
    }
  }

  private async cogPoint(asset: string, lon: number, lat: number, coordCrs: string, opts: ValueOptions): Promise<PointValues | undefined> {
    const reader = this.reader(asset);
    const meta = await reader.meta();
    this.cog.checkIndexes(meta.count, `mosaic asset '${asset}'`);
    // rio-tiler's PointOutsideBounds test, done before reading so the mosaic can skip the asset.
    if (!(await reader.contains(lon, lat, coordCrs))) return undefined;
    const p = await reader.point(lon, lat, coordCrs, this.cog.valueOptions(opts));
    return this.cog.applyToPoint(p);
  }

  private async stacPoint(
    asset: string,
    lon: number,
    lat: number,
    coordCrs: string,
    opts: ValueOptions,
  ): Promise<{ values: number[]; bandNames: string[] } | undefined> {
    const reader = await stacItemReader(await this.ctx.openStac(asset), this.stacLayer());
    const inside = await Promise.all(reader.plan.readers().map((r) => r.contains(lon, lat, coordCrs)));
    if (inside.some((i) => !i)) return undefined;
    return reader.point(lon, lat, coordCrs, opts);
  }

  private stacLayer(): StacLayerOptions {
    const { stac, expression, bidx } = this.layer;
    return { ...stac, ...(expression ? { expression } : {}), ...(bidx && bidx.length > 0 ? { bidx } : {}) };
  }
}

/**
 * rio-tiler's `tile_exists` for every asset of one tile: the tile's bounds are transformed into
 * each dataset CRS once (assets of a mosaic mostly share one), then tested for strict intersection.
 */
class TileFootprint {
  private readonly byCrs = new Map<string, BBox>();
  private readonly tmsSrs: SpatialReference;

  constructor(
    private readonly tms: TileMatrixSet,
    private readonly x: number,
    private readonly y: number,
    private readonly z: number,
  ) {
    this.tmsSrs = srsFrom(tms.srs);
  }

  touches(meta: SourceMeta): boolean {
    let tb = this.byCrs.get(meta.crs);
    if (!tb) {
      tb = this.tms.xyBounds({ x: this.x, y: this.y, z: this.z });
      const dsSrs = srsFrom(meta.crs);
      if (!sameCrs(this.tmsSrs, dsSrs)) tb = transformBounds(this.tmsSrs, dsSrs, tb, 21);
      this.byCrs.set(meta.crs, tb);
    }
    // A tile that cannot be expressed in the dataset's CRS is read and left to the warper.
    if (!tb.every(Number.isFinite)) return true;
    const [l, b, r, t] = meta.bounds;
    const [tl, tbm, tr, tt] = [Math.min(tb[0], tb[2]), Math.min(tb[1], tb[3]), Math.max(tb[0], tb[2]), Math.max(tb[1], tb[3])];
    return tl < r && tr > l && tt > b && tbm < t;
  }
}

/** Images read for a part of the tile (below minzoom): where they go, and the whole tile's frame. */
const placements = new WeakMap<ImageData, { at: LayerPlacement; frame: { width: number; height: number; bounds: BBox } }>();

/** The part of a tile's pixel grid an asset is read for, and its bounds in the grid's CRS. */
interface TileWindow {
  col: number;
  row: number;
  width: number;
  height: number;
  bounds: BBox;
}

/**
 * The tile pixels an asset's footprint touches, with a pixel of margin; undefined where that is
 * most of the tile (or the footprint cannot be expressed in the grid's CRS). Outside it a whole-tile
 * read gives only masked pixels, so reading this window alone gives the same tile, but for where
 * the warper's approximate transformer, run over the window's rows instead of the tile's, picks
 * another source pixel (within its error of an eighth of a pixel: 0.6–2% of an asset's pixels on
 * the fixtures, test/mosaic-low-zoom.test.ts). Used below the mosaic's minzoom
 * only, where a tile needs tens to hundreds of assets and warping each onto the whole tile cost
 * most of its time; at minzoom and above tiles stay pixel for pixel as rio-tiler makes them.
 */
async function assetWindow(reader: RasterReader, tms: TileMatrixSet, tile: { x: number; y: number; z: number }, size: number): Promise<TileWindow | undefined> {
  const fp = await reader.footprintIn(tms.srs);
  if (!fp.every(Number.isFinite)) return undefined;
  const [l, b, r, t] = tms.xyBounds(tile);
  const px = (r - l) / size;
  const py = (t - b) / size;
  const col0 = Math.max(0, Math.floor((fp[0] - l) / px) - 1);
  const col1 = Math.min(size, Math.ceil((fp[2] - l) / px) + 1);
  const row0 = Math.max(0, Math.floor((t - fp[3]) / py) - 1);
  const row1 = Math.min(size, Math.ceil((t - fp[1]) / py) + 1);
  if (col1 <= col0 || row1 <= row0 || (col1 - col0) * (row1 - row0) * 2 > size * size) return undefined;
  return { col: col0, row: row0, width: col1 - col0, height: row1 - row0, bounds: [l + col0 * px, t - row1 * py, l + col1 * px, t - row0 * py] };
}

/**
 * Source pixels one asset's tile read costs: the plan's estimate, but never more than the whole
 * dataset at the overview GDAL picks — a low-zoom tile's grid spans far more than a small asset,
 * and only the asset's own pixels are read.
 */
function readCost(meta: SourceMeta, plan: ReadPlan): number {
  const t = plan.target;
  const decimation =
    t.kind === 'warp'
      ? Math.min(t.grid.width / t.width, t.grid.height / t.height)
      : Math.min(Math.abs(t.window.width) / t.width, Math.abs(t.window.height) / t.height);
  const factor = overviewFactor(meta, decimation);
  return Math.min(plan.sourcePixels, Math.ceil((meta.width * meta.height) / (factor * factor)));
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A read in flight, and its outcome once it has one (looked at without waiting when the deadline passes). */
interface Slot {
  pending: Promise<Settled<ImageData | undefined>>;
  settled?: Settled<ImageData | undefined>;
}

/** Pixel selections whose state can be shown part way and carried on (the replace rules but lastband*, whose result drops a band). */
const MAY_SHOW_PART: ReadonlySet<PixelSelection> = new Set(['first', 'highest', 'lowest']);

/**
 * Feeds each asset's image to the pixel selection in asset order, reading ahead in a window of
 * `concurrency` assets: asset i + concurrency starts once asset i has been fed. So once the
 * selection is done (or a read failed) no further read starts, and at most `concurrency` images
 * wait in memory; a slow asset holds the window, as a chunk holds rio-tiler's.
 *
 * With a `deadline` (a time; `first`, `highest` and `lowest` only), the tile is answered when it
 * passes: the selection so far plus the images that have arrived (a copy; a tile with nothing yet
 * waits for its first image), marked partial. The composition carries on in asset order to the
 * whole tile, which `later` gives (for the tile cache), `keepOpen` holding the request's upstream
 * budget open meanwhile; without `keepOpen` it stops there.
 */
function composite(
  assets: readonly string[],
  read: (asset: string) => Promise<ImageData | undefined>,
  method: PixelSelection,
  concurrency: number,
  deadline?: number,
  keepOpen?: <T>(work: () => Promise<T>) => Promise<T>,
): Promise<MosaicTile> {
  const selector = pixelSelector(method);
  const slots: Array<Slot | undefined> = new Array(assets.length);
  const window = Math.max(1, concurrency);
  let started = 0;
  let next = 0;
  let first: ImageData | undefined;
  const used: string[] = [];
  const start = (): void => {
    while (started < assets.length && started < next + window) {
      const k = started++;
      // Settled, never rejected: reads left behind by an early stop must not raise unhandled rejections.
      const slot: Slot = {
        pending: read(assets[k]!).then(
          (value): Settled<ImageData | undefined> => (slot.settled = { ok: true, value }),
          (error: unknown): Settled<ImageData | undefined> => (slot.settled = { ok: false, error }),
        ),
      };
      slots[k] = slot;
    }
  };
  /** Feeds one settled read; true when the selection is done. */
  const feed = (to: PixelSelector, toUsed: string[], i: number, settled: Settled<ImageData | undefined>): boolean => {
    if (!settled.ok) throw settled.error;
    const img = settled.value;
    if (!img) return false;
    const placed = placements.get(img);
    // The first image sets the tile's frame (its size, bounds, CRS and band names).
    if (!first) first = placed ? { ...img, ...placed.frame } : img;
    if (placed) to.feed(sameBands(first, img, assets[i]!), placed.at);
    else to.feed(fitTo(first, img, assets[i]!));
    toUsed.push(assets[i]!);
    return to.exitWhenFilled && to.done();
  };
  const tileOf = (result: PixelLayer | undefined, assetsUsed: string[]): MosaicTile => {
    if (!first || !result) throw new TesseraError('NoContent', 'Method returned an empty array');
    const bandNames = first.bandNames.slice(0, result.bands.length);
    const image: ImageData = {
      width: first.width,
      height: first.height,
      dtype: result.dtype,
      bands: result.bands,
      masks: result.masks,
      bandNames,
      bounds: first.bounds,
      crs: first.crs,
      assets: assetsUsed,
    };
    return { image, assetsUsed };
  };
  /** The rest of the composition, in asset order, until done; with `expired`, stops (undefined) once it resolves and the tile has something. */
  const carryOn = async (expired?: Promise<'late'>): Promise<'late' | undefined> => {
    for (; next < assets.length; next++) {
      start();
      const slot = slots[next]!;
      // The deadline holds once the tile has something to show: until then it waits for the first image.
      const settled = slot.settled ?? (expired && first ? await Promise.race([slot.pending, expired]) : await slot.pending);
      if (settled === 'late') return 'late';
      slots[next] = undefined;
      if (feed(selector, used, next, settled)) break;
    }
    return undefined;
  };
  /** The selection so far and the images that have arrived since, in asset order (a copy). */
  const partNow = (): MosaicTile => {
    const part = pixelSelector(method);
    const partUsed = [...used];
    const sofar = selector.result();
    if (sofar) part.feed(sofar);
    let arrived = 0;
    for (let k = next; k < started; k++) {
      const done = slots[k]!.settled;
      if (!done) continue;
      arrived++;
      if (done.ok && feed(part, partUsed, k, done)) break;
    }
    return { ...tileOf(part.result(), partUsed), partial: { read: next + arrived, assets: assets.length } };
  };

  if (deadline === undefined || !MAY_SHOW_PART.has(method)) return carryOn().then(() => tileOf(selector.result(), used));
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()))));
  return (async (): Promise<MosaicTile> => {
    try {
      if ((await carryOn(expired)) !== 'late') return tileOf(selector.result(), used);
    } finally {
      clearTimeout(timer);
    }
    const part = partNow();
    if (!keepOpen) return part;
    // The request's upstream budget stays open until the whole tile is made, not only until the part is sent.
    const later = keepOpen(() => carryOn().then(() => tileOf(selector.result(), used)));
    // Answered before `later` settles: its failure is only a tile not kept.
    later.catch(() => undefined);
    return { ...part, later };
  })();
}

/** The first image fixes the band count. */
function sameBands(first: ImageData, img: ImageData, asset: string): ImageData {
  if (img.bands.length !== first.bands.length) {
    throw badRequest(`Mosaic assets must have the same number of bands: '${asset}' gives ${img.bands.length}, the first asset ${first.bands.length}`);
  }
  return img;
}

/** The first image fixes the band count and size; later ones of another size are resized (nearest). */
function fitTo(first: ImageData, img: ImageData, asset: string): PixelLayer {
  sameBands(first, img, asset);
  if (img.width === first.width && img.height === first.height) return img;
  const masks = new Map<Uint8Array, Uint8Array>();
  return {
    dtype: img.dtype,
    bands: img.bands.map((b) => resizeNearest(b, img.width, img.height, first.width, first.height)),
    masks: img.masks.map((m) => {
      let r = masks.get(m);
      if (!r) {
        r = resizeNearest(m, img.width, img.height, first.width, first.height);
        masks.set(m, r);
      }
      return r;
    }),
  };
}
