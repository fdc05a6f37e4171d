/**
 * The MosaicJSON reader (cogeo-mosaic's backend as TiTiler's MosaicTilerFactory uses it): tiles
 * composed from the document's assets by the pixel selection (mosaic-compose.ts), with the assets
 * used named in the answer's `X-Assets` header. Bounds and zooms are the document's. A mosaic has
 * no preview, part or feature; its point answer lists every asset (the family's own route).
 */
import type { Mosaic } from '../mosaic/mosaic.js';
import { MosaicReader, overviewVersion, type MosaicContext, type MosaicLayer, type MosaicTile } from './mosaic-compose.js';
import type { PixelSelection } from '../mosaic/methods.js';
import { checkTile, type BBox, type TileMatrixSet } from '../tms/grid.js';
import { badRequest } from '../errors.js';
import type { Reader, ReaderImage, TileReadOptions, Zooms } from './reader.js';

/**
 * On a mosaic tile made before every asset arrived (below minzoom, past the low-zoom deadline):
 * `read/assets`, the assets that arrived in time and all of the tile's.
 */
export const PARTIAL_HEADER = 'x-tessera-partial';

/** Past this, X-Assets is left out: proxies and clients refuse very long headers. */
const MAX_ASSETS_HEADER = 8192;

export interface MosaicReadOptions {
  layer: MosaicLayer;
  pixelSelection: PixelSelection;
  /** Refuse tiles outside the document's zoom range (TiTiler's MOSAIC_STRICT_ZOOM). */
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

export class MosaicDocumentReader implements Reader {
  constructor(
    readonly mosaic: Mosaic,
    private readonly opts: MosaicReadOptions,
    private readonly ctx: MosaicContext,
  ) {}

  get bounds(): BBox {
    return this.mosaic.bounds;
  }

  async zooms(tms: TileMatrixSet): Promise<Zooms> {
    return this.mosaic.zooms(tms);
  }

  /**
   * The document's version alone: it names every asset of every tile, and opening the assets of a
   * tile to learn theirs would cost what a low-zoom tile's reads cost. An asset replaced under the
   * same URL keeps its tiles' tags until the document changes (the tile cache's TTL still holds).
   * A tile read from the document's low-zoom overview is one file: its version is in the tag too,
   * so a rebuilt overview under the same URL changes the tiles' tags (none when it has no validator).
   */
  async version(tile?: { tms: TileMatrixSet; z: number }): Promise<string | undefined> {
    const doc = this.mosaic.origin.version;
    const overview = tile ? this.mosaic.overviewAt(tile.tms, tile.z, this.opts.pixelSelection) : undefined;
    if (!overview) return doc;
    const file = await overviewVersion(this.ctx, overview.href);
    return file === undefined ? undefined : JSON.stringify([doc, overview.href, file]);
  }

  async tile(tms: TileMatrixSet, tile: { x: number; y: number; z: number }, opts: TileReadOptions): Promise<ReaderImage> {
    const { x, y, z } = tile;
    checkTile(tms, x, y, z);
    if (this.opts.strictZoom) {
      const { minzoom, maxzoom } = this.mosaic.zooms(tms);
      if (z < minzoom || z > maxzoom) throw badRequest(`Invalid ZOOM level ${z}. Should be between ${minzoom} and ${maxzoom}`);
    }
    const result = await new MosaicReader(this.mosaic, this.opts.layer, this.ctx).tile(tms, x, y, z, {
      unscale: opts.unscale,
      resampling: opts.resampling,
      reproject: opts.reproject,
      ...(opts.nodata !== undefined ? { nodata: opts.nodata } : {}),
      tilesize: opts.tilesize,
      ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}),
      ...(opts.padding !== undefined ? { padding: opts.padding } : {}),
      pixelSelection: this.opts.pixelSelection,
    });
    const image = (tile: MosaicTile): ReaderImage => {
      const header = this.opts.assetsHeader ? assetsHeaderValue(tile.assetsUsed) : undefined;
      const headers: Record<string, string> = {};
      if (header !== undefined) headers['x-assets'] = header;
      // A tile made before all its assets arrived: said, and kept by no cache (api/tile-cache.ts, etag.ts).
      if (tile.partial) {
        headers[PARTIAL_HEADER] = `${tile.partial.read}/${tile.partial.assets}`;
        headers['cache-control'] = 'no-store';
      }
      return { image: tile.image, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
    };
    const later = result.later?.then(image);
    // Whoever takes `later` may drop it (no tile cache): its failure must never be an unhandled rejection.
    later?.catch(() => undefined);
    return { ...image(result), ...(later ? { later } : {}) };
  }
}
