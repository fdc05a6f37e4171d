/**
 * An opened STAC item and the raster sources of its assets (what rio-tiler's `STACReader` opens
 * before reading): the item's metadata here; the image verbs (tile, part, preview, point, feature,
 * statistics) are the STAC item reader's (readers/stac.ts), over the same asset sources.
 */
import { parseItem, selectAssets, type StacAsset, type StacItem } from './item.js';
import type { DocumentFetcher } from '../upstream/documents.js';
import type { UrlPolicy } from '../upstream/url-policy.js';
import type { SourceContext, RasterSource, RasterInfo } from '../source/dataset.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { checkAssetCount } from '../errors.js';
import { gdal } from '../gdal/gdal.js';
import { sameCrs, srsFrom, transformBounds, WGS84 } from '../gdal/crs.js';
import { zoomsOfGrid } from '../source/dataset.js';

/** What rio-tiler answers where a CRS gives no usable bounds. */
const WHOLE_WORLD: BBox = [-180, -90, 180, 90];

export class StacItemSources {
  private constructor(
    readonly item: StacItem,
    /** The version of the item document's bytes (upstream/documents.ts). */
    readonly version: string,
    private readonly sources: SourceContext,
    private readonly policy: UrlPolicy,
  ) {}

  static async open(url: string, fetcher: DocumentFetcher, sources: SourceContext): Promise<StacItemSources> {
    const doc = await fetcher.document(url, 'STAC item');
    return new StacItemSources(parseItem(doc.value, url), doc.version, sources, fetcher.policy);
  }

  /** An item already in hand (one a catalogue search found, stac/item.ts `catalogueItem`), `version` naming it. */
  static of(item: StacItem, version: string, sources: SourceContext, policy: UrlPolicy): StacItemSources {
    return new StacItemSources(item, version, sources, policy);
  }

  get assetNames(): string[] {
    return this.item.assets.map((a) => a.name);
  }

  /** Item bounds in WGS84 (rio-tiler 6 uses the item bbox; the proj extension is ignored). */
  get bounds(): BBox {
    return this.item.bbox;
  }

  /** STAC items span every zoom of the TMS (rio-tiler 6). */
  zooms(tms: TileMatrixSet): { minzoom: number; maxzoom: number } {
    return { minzoom: tms.minzoom, maxzoom: tms.maxzoom };
  }

  /**
   * rio-tiler 9's bounds of the item (TiTiler 2.x, the collision `stacProjection`): those of its
   * projection extension's grid (stac/item.ts) in longitude/latitude (a 21-point densified
   * transform), else its bbox.
   */
  projectedBounds(): BBox {
    const { grid, crs } = this.item;
    if (!grid || !crs) return this.bounds;
    try {
      const src = srsFrom(crs);
      if (sameCrs(src, srsFrom(WGS84))) {
        const [w, s, e, n] = grid.bounds;
        return [w, Math.min(s, n), e, Math.max(s, n)];
      }
      const out = transformBounds(src, srsFrom(WGS84), grid.bounds, 21);
      return out.every(Number.isFinite) ? out : WHOLE_WORLD;
    } catch {
      return WHOLE_WORLD;
    }
  }

  /**
   * rio-tiler 9's zooms of the item in a TMS (TiTiler 2.x, the collision `stacProjection`): a COG's
   * of its projection grid (rasterio's `calculate_default_transform` into the TMS's CRS), else every
   * zoom of the TMS, as where rio-tiler cannot tell.
   */
  async projectedZooms(tms: TileMatrixSet): Promise<{ minzoom: number; maxzoom: number }> {
    const { grid, crs } = this.item;
    if (!grid || !crs) return this.zooms(tms);
    try {
      const src = srsFrom(crs);
      const dst = srsFrom(tms.srs);
      if (sameCrs(src, dst)) return zoomsOfGrid(tms, grid.geoTransform, grid.width, grid.height);
      // GDAL's suggested warp output of the grid, through a dataset without bands (nothing is allocated).
      const ds = gdal.drivers.get('MEM').create('', grid.width, grid.height, 0);
      try {
        const [west, south, east, north] = grid.bounds;
        ds.geoTransform = [west, (east - west) / grid.width, 0, north, 0, (south - north) / grid.height];
        ds.srs = src;
        const out = await gdal.suggestedWarpOutputAsync({ src: ds, s_srs: src, t_srs: dst });
        return zoomsOfGrid(tms, out.geoTransform, out.rasterSize.x, out.rasterSize.y);
      } finally {
        ds.close();
      }
    } catch {
      return this.zooms(tms);
    }
  }

  /** The assets to read (all without `names`): at most `maxAssets` of the source context, else 400. */
  assets(names?: readonly string[]): StacAsset[] {
    const picked = selectAssets(this.item, names);
    checkAssetCount(picked.length, this.sources.maxAssets, 'The STAC item');
    return picked;
  }

  /** The raster source of an asset; its href passes the URL policy like the item URL did. */
  source(asset: StacAsset): RasterSource {
    const loc = this.policy.resolve(asset.href, `asset '${asset.name}' href`);
    return this.sources.sourceAt(loc, `asset '${asset.name}' (${asset.href})`);
  }

  /** Per-asset info, read in parallel, in the order asked. */
  async info(tms: TileMatrixSet, names?: readonly string[]): Promise<Array<[string, RasterInfo]>> {
    const assets = this.assets(names);
    const infos = await Promise.all(assets.map((a) => this.source(a).info(tms)));
    return assets.map((a, i) => [a.name, infos[i]!]);
  }
}
