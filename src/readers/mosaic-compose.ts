/**
 * Composing a mosaic (rio-tiler 6.8 `mosaic_reader(mosaic_assets, reader, …)`, cogeo-mosaic's
 * `tile`/`point`): an asset index (mosaic/asset-index.ts) gives the assets of a tile in order, each
 * is opened through the reader contract (readers/reader.ts: a COG, a STAC item or any later reader;
 * which one is the opener's business) and read for the tile, and the images are fed, in asset
 * order, to the pixel selection method (mosaic/methods.ts). As rio-tiler's, the compositor knows
 * neither the index nor the readers it is given.
 *
 * Reads run in parallel, at most `concurrency` ahead of the one being fed; results are fed strictly
 * in asset order (so the mosaic is the same whatever finishes first). With `first`, the mosaic
 * stops as soon as no pixel is masked: reads not yet started never start and reads in flight are
 * left unfed, as rio-tiler leaves the rest of its chunk. Assets the tile does not touch (rio-tiler's
 * TileOutsideBounds) are skipped; nothing read at all is a 204. The tile's assets share one
 * source-pixel limit.
 *
 * Below the index's minzoom (tessera's own; test/mosaic-low-zoom.test.ts): each asset is read for
 * the block of the tile it covers, and past a deadline the tile is answered with the assets read so
 * far and finished after the answer. Where the index names a low-zoom overview for the tile's zoom
 * (AssetIndex.overviewAt), the tile is read from that one raster instead.
 *
 * Areas (rio-tiler 9's mosaic `part` and `feature`): the assets the index finds for a bbox, each read
 * for the whole area as its reader reads a part, composed the same way (no deadline), the first image
 * read fixing the size, bounds and CRS; a feature's image is then cut to its shape.
 */
import { TransformMemo, WGS84 } from '../gdal/crs.js';
import { applyCutline, type PartOptions, type ValueOptions } from '../source/reader.js';
import type { PixelLimits } from '../source/limits.js';
import { mapLimited } from '../concurrency.js';
import type { ReadOptions, Reader, ReaderImage, SourcePixelBudget } from './reader.js';
import type { gdal } from '../gdal/gdal.js';
import type { ImageData } from '../image/image-data.js';
import { resizeNearest } from '../image/stack.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { TesseraError, badRequest, checkAssetCount } from '../errors.js';
import type { AssetIndex } from '../mosaic/asset-index.js';
import { pixelSelector, type LayerPlacement, type PixelLayer, type PixelSelection, type PixelSelector } from '../mosaic/methods.js';

/** Opens one asset of an index as a reader of the request's layer (readers/mosaic.ts opens MosaicJSON's). */
export type AssetOpener<A> = (asset: A) => Promise<Reader>;

/** What a mosaic is made of: its asset index, and how an asset (and the index's low-zoom overview) is opened. */
export interface MosaicSources<A> {
  index: AssetIndex<A>;
  open: AssetOpener<A>;
  /** Checks the request's layer before any asset is looked up (a 400 for bands or an expression no asset could read). */
  checkLayer?: () => void;
  /** The raster the index names as its low-zoom overview (AssetIndex.overviewAt); absent: tiles are never read from one. */
  overview?: OverviewOpener;
}

export interface OverviewOpener {
  /** Opens the overview with the request's layer (its bands are the assets'). */
  open(href: string): Promise<Reader>;
  /** The version of the overview raster (its upstream validators), for the tags of the tiles read from it. */
  version(href: string): Promise<string | undefined>;
}

/** What composing needs from the running server. */
export interface CompositorContext {
  /** Asset reads in flight per request. */
  concurrency: number;
  /**
   * Below the index's minzoom, how long a tile waits for its assets (ms; 0: as long as the request
   * may last): past it the tile is made of the assets read so far and marked partial.
   */
  lowZoomDeadlineMs: number;
  /**
   * Finishes a tile answered in part after the answer (its whole picture goes to the tile cache),
   * holding the request's upstream budget open meanwhile; absent: the part is all.
   */
  finishLater?: <T>(work: () => Promise<T>) => Promise<T>;
  limits: PixelLimits;
  /** Assets one tile or point may read (TESSERA_MAX_ASSETS; none: no limit): more is a 400 before any is opened. */
  maxAssets?: number;
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
  /** The first asset's band descriptions (rio-tiler's mosaic takes the first image's). */
  bandDescriptions?: string[];
  /** The first asset's bands are the layer expression's outputs (ReaderImage.numberedOutputs). */
  numberedOutputs?: boolean;
}

/** Values at a point of one asset that covers it. */
export interface AssetPoint {
  asset: string;
  values: number[];
  bandNames: string[];
  /** Per value, true where masked (when the reader says). */
  masked?: boolean[];
  bandDescriptions?: string[];
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

function isOutside(err: unknown, kind: 'TileOutsideBounds' | 'PointOutsideBounds'): boolean {
  return err instanceof TesseraError && err.kind === kind;
}

/** An asset's image, and where it goes when it was read for a block of the tile. */
interface AssetImage {
  image: ImageData;
  placed?: { at: LayerPlacement; frame: { width: number; height: number; bounds: BBox } };
  bandDescriptions?: string[] | undefined;
  numberedOutputs?: boolean | undefined;
}

/** Composes the tiles and points of one mosaic request; built once per request from its parameters. */
export class MosaicCompositor<A> {
  constructor(
    private readonly sources: MosaicSources<A>,
    private readonly ctx: CompositorContext,
  ) {}

  async tile(tms: TileMatrixSet, x: number, y: number, z: number, opts: MosaicTileOptions): Promise<MosaicTile> {
    const { index, overview: opener } = this.sources;
    this.sources.checkLayer?.();
    const assets = await index.assetsForTile(tms, x, y, z);
    if (assets.length === 0) throw new TesseraError('NoContent', `No assets found for tile ${z}-${x}-${y}`);
    checkAssetCount(assets.length, this.ctx.maxAssets ?? Number.POSITIVE_INFINITY, `Tile ${z}-${x}-${y} of the mosaic`);
    const size = opts.tilesize;
    const frame = { width: size, height: size, bounds: tms.xyBounds({ x, y, z }) };
    const budget: SourcePixelBudget = { used: 0, what: "the tile's assets", hint: 'zoom in' };
    // Every asset warps onto this tile's grid: where they share a CRS, their transformations repeat.
    const values = { ...valuesOf(opts), transformMemo: new TransformMemo() };
    /** One reader's image of the tile (a block of it with `coveredPart`); undefined where it does not touch the data. */
    const read = async (reader: Reader, coveredPart: boolean): Promise<AssetImage | undefined> => {
      let result: ReaderImage;
      try {
        result = await reader.tile(
          tms,
          { x, y, z },
          {
            ...values,
            limits: { ...this.ctx.limits, sourcePixelBudget: budget },
            tilesize: size,
            ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}),
            ...(opts.padding !== undefined ? { padding: opts.padding } : {}),
            ...(coveredPart ? { coveredPart } : {}),
          },
        );
      } catch (err) {
        if (isOutside(err, 'TileOutsideBounds')) return undefined;
        throw err;
      }
      const { image, placement, bandDescriptions, numberedOutputs } = result;
      if (!placement) return { image, bandDescriptions, numberedOutputs };
      const at = { col: placement.col, row: placement.row, width: image.width, height: image.height, stride: size, length: size * size };
      return { image, placed: { at, frame }, bandDescriptions, numberedOutputs };
    };

    const overview = opener ? index.overviewAt?.(tms, z, opts.pixelSelection) : undefined;
    if (opener && overview) {
      // One read of the index's low-zoom overview stands for every asset. A failure to read it is
      // the tile's failure, as an unreadable asset's is, not a fall back onto the assets: the
      // index's author named the file, and a quiet fallback would hide a broken or refused
      // overview behind tiles that are slow (or partial) again, and read it on every request.
      const got = await read(await opener.open(overview.href), false);
      if (!got) throw new TesseraError('NoContent', 'Method returned an empty array');
      return { image: { ...got.image, assets: [overview.href] }, assetsUsed: [overview.href] };
    }
    // Below the index's minzoom each asset covers a small part of the tile: it is read for that part alone.
    const partial = z < index.zooms(tms).minzoom && opts.buffer === undefined && opts.padding === undefined;
    const deadline = partial && this.ctx.lowZoomDeadlineMs > 0 ? Date.now() + this.ctx.lowZoomDeadlineMs : undefined;
    return composite(
      assets.map((a) => index.assetName(a)),
      async (k) => read(await this.sources.open(assets[k]!), partial),
      opts.pixelSelection,
      this.ctx.concurrency,
      deadline,
      this.ctx.finishLater,
    );
  }

  /**
   * An image of a bbox (given in `part.boundsCrs`) composed from every asset the index says it
   * touches, each read for the whole bbox as the asset's reader reads a part (rio-tiler 9's mosaic
   * `part`): the first image read fixes the size, bounds and CRS, later ones of another size are
   * resized onto it. The assets share one source-pixel limit (`opts.limits.sourcePixelBudget`, or
   * one of their own), and each read reserves its bytes at the whole-image gate the limits name.
   */
  async part(bbox: BBox, part: PartOptions, opts: ReadOptions, pixelSelection: PixelSelection): Promise<MosaicTile> {
    const { index } = this.sources;
    this.sources.checkLayer?.();
    const assets = await index.assetsForBbox(bbox, part.boundsCrs ?? WGS84);
    if (assets.length === 0) throw new TesseraError('NoContent', 'No assets found for bbox input');
    checkAssetCount(assets.length, this.ctx.maxAssets ?? Number.POSITIVE_INFINITY, 'The area of the mosaic');
    const budget: SourcePixelBudget = opts.limits.sourcePixelBudget ?? {
      used: 0,
      what: "the area's assets",
      hint: 'use a smaller area, max_size or width/height',
    };
    const limits = { ...opts.limits, sourcePixelBudget: budget };
    const values = valuesOf(opts);
    const read = async (k: number): Promise<AssetImage> => {
      const reader = await this.sources.open(assets[k]!);
      if (!reader.part) throw new TesseraError('Internal', `the reader of mosaic asset '${index.assetName(assets[k]!)}' reads no parts`);
      const { image, bandDescriptions, numberedOutputs } = await reader.part(bbox, part, { ...values, limits });
      return { image, bandDescriptions, numberedOutputs };
    };
    return composite(
      assets.map((a) => index.assetName(a)),
      read,
      pixelSelection,
      this.ctx.concurrency,
    );
  }

  /**
   * An image of a GeoJSON shape's area (rio-tiler 9's mosaic `feature`): the mosaic of its bounding
   * box, in `part.dstCrs` (default the shape's CRS), then everything outside the shape masked.
   */
  async feature(shape: gdal.Geometry, shapeCrs: string, part: PartOptions, opts: ReadOptions, pixelSelection: PixelSelection): Promise<MosaicTile> {
    const env = shape.getEnvelope();
    const tile = await this.part(
      [env.minX, env.minY, env.maxX, env.maxY],
      { ...part, boundsCrs: shapeCrs, dstCrs: part.dstCrs ?? shapeCrs },
      opts,
      pixelSelection,
    );
    return { ...tile, image: await applyCutline(tile.image, shape, shapeCrs) };
  }

  /** Values at a point for every asset that covers it, in asset order (no pixel selection). */
  async point(lon: number, lat: number, coordCrs: string, opts: ValueOptions): Promise<AssetPoint[]> {
    const { index, open } = this.sources;
    this.sources.checkLayer?.();
    const assets = await index.assetsForPoint(lon, lat, coordCrs);
    if (assets.length === 0) throw new TesseraError('NoContent', `No assets found for point (${lon},${lat})`);
    checkAssetCount(assets.length, this.ctx.maxAssets ?? Number.POSITIVE_INFINITY, `Point (${lon},${lat}) of the mosaic`);
    const results = await mapLimited(assets, this.ctx.concurrency, async (asset) => {
      const reader = await open(asset);
      if (!reader.point) throw new TesseraError('Internal', `the reader of mosaic asset '${index.assetName(asset)}' gives no point values`);
      try {
        return await reader.point(lon, lat, coordCrs, opts);
      } catch (err) {
        if (isOutside(err, 'PointOutsideBounds')) return undefined;
        throw err;
      }
    });
    const out: AssetPoint[] = [];
    results.forEach((r, i) => {
      if (!r) return;
      out.push({
        asset: index.assetName(assets[i]!),
        values: r.values,
        bandNames: r.bandNames,
        ...(r.masked ? { masked: r.masked } : {}),
        ...(r.bandDescriptions ? { bandDescriptions: r.bandDescriptions } : {}),
      });
    });
    return out;
  }
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A read in flight, and its outcome once it has one (looked at without waiting when the deadline passes). */
interface Slot {
  pending: Promise<Settled<AssetImage | undefined>>;
  settled?: Settled<AssetImage | undefined>;
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
  read: (k: number) => Promise<AssetImage | undefined>,
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
  let firstDescriptions: string[] | undefined;
  let firstNumbered: boolean | undefined;
  const used: string[] = [];
  const start = (): void => {
    while (started < assets.length && started < next + window) {
      const k = started++;
      // Settled, never rejected: reads left behind by an early stop must not raise unhandled rejections.
      const slot: Slot = {
        pending: read(k).then(
          (value): Settled<AssetImage | undefined> => (slot.settled = { ok: true, value }),
          (error: unknown): Settled<AssetImage | undefined> => (slot.settled = { ok: false, error }),
        ),
      };
      slots[k] = slot;
    }
  };
  /** Feeds one settled read; true when the selection is done. */
  const feed = (to: PixelSelector, toUsed: string[], i: number, settled: Settled<AssetImage | undefined>): boolean => {
    if (!settled.ok) throw settled.error;
    if (!settled.value) return false;
    const { image: img, placed } = settled.value;
    // The first image sets the tile's frame (its size, bounds, CRS and band names).
    if (!first) {
      first = placed ? { ...img, ...placed.frame } : img;
      firstDescriptions = settled.value.bandDescriptions;
      firstNumbered = settled.value.numberedOutputs;
    }
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
    const bandDescriptions = firstDescriptions?.slice(0, result.bands.length);
    return { image, assetsUsed, ...(bandDescriptions ? { bandDescriptions } : {}), ...(firstNumbered ? { numberedOutputs: true } : {}) };
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
