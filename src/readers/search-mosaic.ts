/**
 * A mosaic of a pgSTAC search (titiler-pgstac 3.2.0's MosaicTilerFactory over its `PGSTACBackend`
 * and `SimpleSTACReader`): the search's asset index (pgstac/search-index.ts) gives each tile's STAC
 * items in the search's order, and each item is read with the request's layer (`assets`,
 * `expression`, `asset_bidx` …) as /stac reads an item (readers/stac.ts), its asset hrefs under the
 * URL and network policies as any client-given URL. Composition, pixel selection, low zooms and
 * X-Assets are every mosaic's (readers/mosaic.ts, mosaic-compose.ts).
 */
import type { PgstacItem, SearchIndex } from '../pgstac/search-index.js';
import { catalogueItem } from '../stac/item.js';
import { StacItemSources } from '../stac/reader.js';
import { MosaicCompositor, type MosaicSources } from './mosaic-compose.js';
import { MosaicReader, compositorContext, type MosaicContext, type MosaicTileSettings } from './mosaic.js';
import { stacItemReader, type StacLayerOptions } from './stac.js';

/** The STAC item of a search's answer, its assets read as the URL policy allows. */
function searchItemSources(item: PgstacItem, ctx: MosaicContext): StacItemSources {
  const name = `${item.collection}/${item.id}`;
  return StacItemSources.of(catalogueItem(item, name), name, ctx.sources, ctx.policy);
}

function searchSources(index: SearchIndex, layer: StacLayerOptions, ctx: MosaicContext): MosaicSources<PgstacItem> {
  return { index, open: (item) => stacItemReader(searchItemSources(item, ctx), layer) };
}

/** A search's mosaic read with one request's layer. */
export class SearchMosaicReader extends MosaicReader<PgstacItem> {
  constructor(
    readonly index: SearchIndex,
    layer: StacLayerOptions,
    settings: MosaicTileSettings,
    ctx: MosaicContext,
  ) {
    super(searchSources(index, layer, ctx), compositorContext(ctx), settings);
  }
}

/** The compositor of a search's items for one request's layer (the point route). */
export function searchCompositor(index: SearchIndex, layer: StacLayerOptions, ctx: MosaicContext): MosaicCompositor<PgstacItem> {
  return new MosaicCompositor(searchSources(index, layer, ctx), compositorContext(ctx));
}
