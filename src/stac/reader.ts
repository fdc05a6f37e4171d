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
