/**
 * Mosaics as readers (TiTiler's MosaicTilerFactory over a cogeo-mosaic backend): tiles composed
 * from an asset index's assets by the pixel selection (mosaic-compose.ts), with the assets used
 * named in the answer's `X-Assets` header. Bounds, zooms and version are the index's. Areas (parts,
 * feature images and their statistics: TiTiler 2.x's `add_part`, `add_statistics`) are composed the
 * same way from the assets the index finds for them; a mosaic has no preview, and its point answer
 * lists every asset (the family's own route).
 *
 * `MosaicReader` works over any asset index and opener; `MosaicDocumentReader` is it over a
 * MosaicJSON document, whose assets are COGs or STAC items (the document's `asset_type`, or a JSON
 * href) opened with the request's layer as the /cog and /stac readers open them.
 */
import type { Mosaic } from '../mosaic/mosaic.js';
import type { PixelSelection } from '../mosaic/methods.js';
import type { RasterSource, SourceContext } from '../source/dataset.js';
import type { PixelLimits } from '../source/limits.js';
import type { UrlPolicy } from '../upstream/url-policy.js';
import type { StacItemSources } from '../stac/reader.js';
import { checkTile, type BBox, type TileMatrixSet } from '../tms/grid.js';
import { badRequest } from '../errors.js';
import { MosaicCompositor, type CompositorContext, type MosaicSources, type MosaicTile } from './mosaic-compose.js';
import { cogBands, cogBandsReader, type CogBands } from './cog.js';
import { stacItemReader, type StacLayerOptions } from './stac.js';
import type { ReadOptions, Reader, ReaderImage, SourcePixelBudget, TileReadOptions, Zooms } from './reader.js';
import { coverageArray, type PartOptions } from '../source/reader.js';
import type { BandStatistics } from '../image/statistics.js';
import type { gdal } from '../gdal/gdal.js';
import { mapLimited } from '../concurrency.js';

/**
 * On a mosaic tile made before every asset arrived (below minzoom, past the low-zoom deadline):
 * `read/assets`, the assets that arrived in time and all of the tile's.
 */
export const PARTIAL_HEADER = 'x-tessera-partial';

/** Past this, X-Assets is left out: proxies and clients refuse very long headers. */
const MAX_ASSETS_HEADER = 8192;

/** How a mosaic's tiles are made and answered. */
export interface MosaicTileSettings {
  pixelSelection: PixelSelection;
  /** Refuse tiles outside the index's zoom range (TiTiler's MOSAIC_STRICT_ZOOM). */
  strictZoom: boolean;
  /** Name the assets a tile used in `X-Assets`. */
  assetsHeader: boolean;
}

/** Printable ASCII only in a header (asset names may hold anything); undefined past the size bound. */
function assetsHeaderValue(assets: readonly string[]): string | undefined {
  const escapeChar = (c: string): string => {
    try {
      return encodeURIComponent(c);
    } catch {
      return '?'; // a lone surrogate
    }
  };
  const text = assets.map((a) => a.replace(/[^\x20-\x7e]/gu, escapeChar)).join(',');
  return text.length <= MAX_ASSETS_HEADER ? text : undefined;
}

/** A mosaic over any asset index, as a reader. */
export class MosaicReader<A> implements Reader {
  private readonly compositor: MosaicCompositor<A>;

  constructor(
    private readonly sources: MosaicSources<A>,
    ctx: CompositorContext,
    private readonly settings: MosaicTileSettings,
  ) {
    this.compositor = new MosaicCompositor(sources, ctx);
  }

  get bounds(): BBox {
    return this.sources.index.bounds;
  }

  async zooms(tms: TileMatrixSet): Promise<Zooms> {
    return this.sources.index.zooms(tms);
  }

  /**
   * The index's version alone: it names every asset of every tile, and opening the assets of a
   * tile to learn theirs would cost what a low-zoom tile's reads cost. An asset replaced under the
   * same URL keeps its tiles' tags until the index changes (the tile cache's TTL still holds).
   * A tile read from the index's low-zoom overview is one file: its version is in the tag too,
   * so a rebuilt overview under the same URL changes the tiles' tags (none when it has no validator).
   */
  async version(tile?: { tms: TileMatrixSet; z: number }): Promise<string | undefined> {
    const { index, overview: opener } = this.sources;
    const overview = tile && opener ? index.overviewAt?.(tile.tms, tile.z, this.settings.pixelSelection) : undefined;
    if (!overview || !opener) return index.version;
    const file = await opener.version(overview.href);
    return file === undefined ? undefined : JSON.stringify([index.version, overview.href, file]);
  }

  async tile(tms: TileMatrixSet, tile: { x: number; y: number; z: number }, opts: TileReadOptions): Promise<ReaderImage> {
    const { x, y, z } = tile;
    checkTile(tms, x, y, z);
    if (this.settings.strictZoom) {
      const { minzoom, maxzoom } = this.sources.index.zooms(tms);
      if (z < minzoom || z > maxzoom) throw badRequest(`Invalid ZOOM level ${z}. Should be between ${minzoom} and ${maxzoom}`);
    }
    const result = await this.compositor.tile(tms, x, y, z, {
      unscale: opts.unscale,
      resampling: opts.resampling,
      reproject: opts.reproject,
      ...(opts.nodata !== undefined ? { nodata: opts.nodata } : {}),
      tilesize: opts.tilesize,
      ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}),
      ...(opts.padding !== undefined ? { padding: opts.padding } : {}),
      pixelSelection: this.settings.pixelSelection,
    });
    const image = (tile: MosaicTile): ReaderImage => this.answer(tile);
    const later = result.later?.then(image);
    // Whoever takes `later` may drop it (no tile cache): its failure must never be an unhandled rejection.
    later?.catch(() => undefined);
    return { ...image(result), ...(later ? { later } : {}) };
  }
  /** A composed image as an answer: the assets it used in `X-Assets` (when the settings say), and whether it is partial. */
  private answer(tile: MosaicTile): ReaderImage {
    const header = this.settings.assetsHeader ? assetsHeaderValue(tile.assetsUsed) : undefined;
    const headers: Record<string, string> = {};
    if (header !== undefined) headers['x-assets'] = header;
    // A tile made before all its assets arrived: said, and kept by no cache (api/tile-cache.ts, etag.ts).
    if (tile.partial) {
      headers[PARTIAL_HEADER] = `${tile.partial.read}/${tile.partial.assets}`;
      headers['cache-control'] = 'no-store';
    }
    return {
      image: tile.image,
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      ...(tile.bandDescriptions ? { bandDescriptions: tile.bandDescriptions } : {}),
      ...(tile.numberedOutputs ? { numberedOutputs: true } : {}),
    };
  }

  /** An image of a bbox from the assets the index finds for it (TiTiler 2.x's mosaic `/bbox`, `/map`). */
  async part(bbox: BBox, part: PartOptions, opts: ReadOptions): Promise<ReaderImage> {
    return this.answer(await this.compositor.part(bbox, part, opts, this.settings.pixelSelection));
  }

  /** An image of a GeoJSON shape's area, outside it masked (TiTiler 2.x's mosaic `/feature`). */
  async feature(shape: gdal.Geometry, shapeCrs: string, part: PartOptions, opts: ReadOptions): Promise<ReaderImage> {
    return this.answer(await this.compositor.feature(shape, shapeCrs, part, opts, this.settings.pixelSelection));
  }

  /**
   * Statistics of each shape's mosaic (TiTiler 2.x's mosaic POST `/statistics`): each shape's
   * `feature`, its pixels weighed by the fraction the shape covers when asked. Every shape's assets
   * share one source-pixel limit, so the request as a whole is bounded; a shape no asset touches
   * makes the whole answer a 204, as rio-tiler's NoAssetFoundError does.
   */
  async statisticsOfFeatures(
    shapes: gdal.Geometry[],
    shapeCrs: string,
    part: PartOptions,
    opts: ReadOptions & { weighByCoverage?: boolean },
    concurrency: number,
    summarise: (result: ReaderImage) => Promise<Map<string, BandStatistics>>,
  ): Promise<Array<Map<string, BandStatistics>>> {
    const budget: SourcePixelBudget = { used: 0, what: `the ${shapes.length} feature(s)' assets`, hint: 'use smaller areas, max_size or width/height' };
    const shared = { ...opts, limits: { ...opts.limits, sourcePixelBudget: budget } };
    return mapLimited(shapes, concurrency, async (shape) => {
      const result = await this.feature(shape, shapeCrs, part, shared);
      const coverage = opts.weighByCoverage ? await coverageArray(result.image, shape, shapeCrs) : undefined;
      return summarise({ ...result, ...(coverage ? { coverage } : {}) });
    });
  }
}

// ---- MosaicJSON ---------------------------------------------------------------------------------

/** What reading a MosaicJSON document's assets needs from the running server. */
export interface MosaicContext {
  sources: SourceContext;
  policy: UrlPolicy;
  openStac(url: string): Promise<StacItemSources>;
  /** Asset reads in flight per request. */
  concurrency: number;
  /** CompositorContext.lowZoomDeadlineMs. */
  lowZoomDeadlineMs: number;
  /** Finish a tile answered in part after the answer (its whole picture goes to the tile cache). */
  finishLater: boolean;
  limits: PixelLimits;
}

/** The layer parameters: `bidx`/`expression` over COG bands (b1, b2 …); `assets`… for STAC items. */
export interface MosaicLayer {
  bidx?: readonly number[];
  expression?: string;
  /** For mosaics of STAC items: which of each item's assets to read (`expression` names them). */
  stac: Omit<StacLayerOptions, 'expression' | 'bidx'>;
}

export interface MosaicReadOptions extends MosaicTileSettings {
  layer: MosaicLayer;
}

/** What error messages call a document's low-zoom overview (mosaic/overview.ts). */
const OVERVIEW_LABEL = 'mosaic overview';
const ASSET_LABEL = 'mosaic asset';

/** A raster a mosaic document names (an asset, its overview), under the URL policy as every client-given URL. */
function sourceOf(ctx: MosaicContext, href: string, what: string): RasterSource {
  return ctx.sources.sourceAt(ctx.policy.resolve(href, what), `${what} '${href}'`);
}

export function compositorContext(ctx: MosaicContext): CompositorContext {
  const meter = ctx.sources.meter;
  const finishLater = ctx.finishLater ? (meter ? <T>(work: () => Promise<T>) => meter.finishAfter(work) : <T>(work: () => Promise<T>) => work()) : undefined;
  return {
    concurrency: ctx.concurrency,
    lowZoomDeadlineMs: ctx.lowZoomDeadlineMs,
    limits: ctx.limits,
    maxAssets: ctx.sources.maxAssets,
    ...(finishLater ? { finishLater } : {}),
  };
}

/**
 * A MosaicJSON document's index and openers for one request's layer: a STAC item read through the
 * named assets as /stac reads it, any other asset (and the document's overview, whose bands are
 * the assets') as /cog reads a COG with `bidx`/`expression`.
 */
function documentSources(mosaic: Mosaic, layer: MosaicLayer, ctx: MosaicContext): MosaicSources<string> {
  let bands: CogBands | undefined;
  const rasterBands = (): CogBands => (bands ??= cogBands(layer));
  const { stac, expression, bidx } = layer;
  const itemLayer: StacLayerOptions = { ...stac, ...(expression ? { expression } : {}), ...(bidx && bidx.length > 0 ? { bidx } : {}) };
  const raster = (href: string, what: string): Promise<Reader> => cogBandsReader(sourceOf(ctx, href, what), href, rasterBands(), `${what} '${href}'`);
  return {
    index: mosaic,
    // A COG's bands and expression are checked before any asset is looked up, unless the
    // document's assets are all STAC items (whose expression names their assets).
    checkLayer: () => {
      if (!mosaic.stacItemsOnly) rasterBands();
    },
    open: async (asset) => (mosaic.assetType(asset) === 'stac-item' ? stacItemReader(await ctx.openStac(asset), itemLayer) : raster(asset, ASSET_LABEL)),
    overview: {
      open: (href) => raster(href, OVERVIEW_LABEL),
      version: async (href) => (await sourceOf(ctx, href, OVERVIEW_LABEL).meta()).version,
    },
  };
}

/** The compositor of a MosaicJSON document's assets for one request's layer (the point route, the overview builder, the benchmark). */
export function documentCompositor(mosaic: Mosaic, layer: MosaicLayer, ctx: MosaicContext): MosaicCompositor<string> {
  return new MosaicCompositor(documentSources(mosaic, layer, ctx), compositorContext(ctx));
}

/** The MosaicJSON reader: a document (any backend: http, file, SQLite) read with one request's layer. */
export class MosaicDocumentReader extends MosaicReader<string> {
  constructor(
    readonly mosaic: Mosaic,
    opts: MosaicReadOptions,
    ctx: MosaicContext,
  ) {
    super(documentSources(mosaic, opts.layer, ctx), compositorContext(ctx), opts);
  }
}
