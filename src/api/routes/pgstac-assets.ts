/**
 * /collections/{collection_id}/items/{item_id}/assets/{asset_id} (titiler-pgstac 3.2.0's "STAC
 * Asset" routes, a TiTiler 2.x TilerFactory over the asset's href, mounted there only with
 * `enable_assets_endpoints`): one asset of an item of the catalogue, read as /cog reads a COG — its
 * href under the URL and network policies as any URL a client gives. Mounted with
 * TESSERA_CATALOG_ASSET_ROUTES and a catalogue. An asset the item has not is a 404 (titiler-pgstac's
 * KeyError is a 500).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { TesseraError } from '../../errors.js';
import { assetHref } from '../../stac/item.js';
import { cogReader } from '../../readers/cog.js';
import { getTms, WEB_MERCATOR_QUAD } from '../../tms/registry.js';
import { bandLayer, type PathRoute } from '../params/index.js';
import { sendJson } from '../reply.js';
import { bboxFeature, infoModelV2 } from '../models.js';
import { crsUriOf } from '../../ogc/tilesets.js';
import { defineFamily } from '../factory.js';
import { rasterSummary } from '../raster-summary.js';
import * as verb from '../verbs.js';

/** The asset's raster: the item from the catalogue, the asset's href through the URL policy. */
async function assetSource(services: Services, collection: string, item: string, asset: string) {
  if (!services.searches) throw new TesseraError('Internal', 'no catalogue is configured');
  const href = assetHref(await services.searches.item(collection, item), asset);
  if (href === undefined) throw new TesseraError('NotFound', `No asset '${asset}' in item '${item}' of the '${collection}' collection`);
  return { href, source: services.cog(href) };
}

function namedAsset(named: string): [string, string, string] {
  const [collection, item, asset] = JSON.parse(named) as [string, string, string];
  return [collection, item, asset];
}

export const assetFamily = defineFamily({
  prefix: '/collections/:collection_id/items/:item_id/assets/:asset_id',
  tag: {
    name: 'STAC Asset',
    description: "One asset of an item of the catalogue, read as /cog reads a COG (titiler-pgstac's assets endpoints; TESSERA_CATALOG_ASSET_ROUTES).",
  },
  docs: [{ match: /^\/info(\.geojson)?$/, summary: "Metadata of the asset's raster (rio-tiler 9's Info)", answer: 'json' }],
  metricsLabel: 'assets',
  enabled: (settings) => settings.catalogAssetRoutes && (settings.pgstacDsn !== undefined || settings.catalog !== undefined),
  datasetParam: ['collection_id', 'item_id', 'asset_id'],
  generation: '2',
  layer: bandLayer,
  datasets: (services) => ({
    open: async (named, layer) => {
      const { href, source } = await assetSource(services, ...namedAsset(named));
      return cogReader(source, href, layer);
    },
    summary: async (named) => rasterSummary((await assetSource(services, ...namedAsset(named))).source),
  }),
  // TiTiler 2.x's TilerFactory: every verb but OGC Maps (add_ogc_maps is off there).
  verbs: [verb.point, verb.preview, verb.bbox, verb.feature, verb.statisticsOfPreview, verb.statisticsOfFeatures],
  coverageWeighted: true,
  routes: assetRoutes,
});

type AssetRoute = PathRoute<{ collection_id: string; item_id: string; asset_id: string }>;

async function assetRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const webMercator = getTms(WEB_MERCATOR_QUAD)!;
  const of = async (request: FastifyRequest<AssetRoute>) => {
    const { collection_id, item_id, asset_id } = request.params;
    const { source } = await assetSource(services, collection_id, item_id, asset_id);
    return { info: infoModelV2(await source.info(webMercator), crsUriOf), bounds: await source.geographicBounds() };
  };
  app.get<AssetRoute>('/info', async (request, reply) => sendJson(reply, (await of(request)).info));
  app.get<AssetRoute>('/info.geojson', async (request, reply) => {
    const { info, bounds } = await of(request);
    return sendJson(reply, bboxFeature(bounds, info, true), 'application/geo+json');
  });
}
