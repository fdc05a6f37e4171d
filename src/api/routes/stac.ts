/**
 * /stac (TiTiler 0.18.10's MultiBaseTilerFactory over a STAC item, with its stacViewerExtension),
 * as one family registration (api/factory.ts): the image routes come from the route factory over
 * the STAC item reader (readers/stac.ts), every verb included; here are the family's layer
 * parameters (AssetsBidxExprParams) and the routes that are a STAC item's alone: assets, bounds,
 * per-asset info and /asset_statistics (per asset, its own bands or `asset_expression`).
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { getTms } from '../../tms/registry.js';
import type { BBox } from '../../tms/grid.js';
import { assetNames, datasetUrl, optionalStacLayer, requireAssets, requireLayerFirst, routeQuery, stacLayer, type QueryRoute } from '../params/index.js';
import { sendJson } from '../reply.js';
import { boundsModel, infoModelOf } from '../models.js';
import { stacItemReader } from '../../readers/stac.js';
import { defineFamily } from '../factory.js';
import * as verb from '../verbs.js';
import { ogcMap } from '../ogc-maps.js';
import { choose } from '../generations.js';
import { stacRenderRoutes, urlRenderSource } from '../stac-renders.js';
import { assetStatisticsJson, assetStatisticsParams } from '../asset-statistics.js';

export const stacFamily = defineFamily({
  prefix: '/stac',
  tag: { name: 'SpatioTemporal Asset Catalog', description: 'One STAC item, named by `url`: images of its assets, alone or combined, and their metadata.' },
  docs: [
    { match: /^\/assets$/, summary: "Names of the item's assets", answer: 'json' },
    { match: /^\/asset_statistics$/, summary: "Statistics of each asset's bands, asset by asset", answer: 'json' },
    { match: /^\/renders$/, summary: "The item's renders (STAC render extension), with links to their TileJSON and WMTS", answer: 'json' },
    { match: /^\/renders\//, summary: "One of the item's renders", answer: 'json' },
  ],
  metricsLabel: 'stac',
  disabledBy: 'stac',
  layer: stacLayer,
  // Statistics without assets or an expression read every asset of the item.
  statisticsLayer: optionalStacLayer,
  // The collision `stacAssets`: 0.18's "assets or expression" (400; statistics read every asset), or
  // 2.x's required `assets` (422), but for the every-grid WMTS document, which lists the item's
  // renders alone when the query makes no layer (api/ogc-wmts.ts).
  layerFirst: (settings, routes) =>
    choose(settings, 'stacAssets', {
      '0.18': routes === 'statistics' ? undefined : requireLayerFirst,
      '2': routes === 'wmts' ? undefined : requireAssets,
    }),
  datasets: (services) => ({
    open: async (url, layer) => {
      const stac = await services.stac(url);
      // The collision `stacBandNames`: without an expression, the deployment's generation names the bands.
      const named = layer.expression
        ? layer
        : { ...layer, positional: layer.positional === true || choose(services.settings, 'stacBandNames', { '0.18': false, '2': true }) };
      return stacItemReader(stac, named.assets || named.expression ? named : { ...named, assets: stac.assetNames });
    },
    summary: async (url) => {
      const stac = await services.stac(url);
      // TiTiler 2.x's `/map` draws in the item's own CRS where its projection extension names one (stac/item.ts).
      // The collision `stacProjection`: TiTiler 2.x takes the item's bounds and zooms from its projection extension.
      const projected = choose(services.settings, 'stacProjection', { '0.18': false, '2': true });
      return {
        bounds: projected ? stac.projectedBounds() : stac.bounds,
        zooms: async (tms) => (projected ? stac.projectedZooms(tms) : stac.zooms(tms)),
        ...(stac.item.crs ? { crs: stac.item.crs } : {}),
        // TiTiler 2.x's TileJSON `raster_layers`: the item's renders as its document has them.
        ...(stac.item.renders ? { renders: stac.item.renders } : {}),
      };
    },
  }),
  // The collision `describedBands`: rio-tiler 9's STAC reader weighs a feature's pixels by coverage, 6's does not.
  coverageWeighted: (settings) => choose(settings, 'describedBands', { '0.18': false, '2': true }),
  verbs: [verb.point, verb.preview, verb.bbox, verb.feature, verb.statisticsOfPreview, verb.statisticsOfFeatures, ogcMap],
  routes: stacRoutes,
  viewer: 'stac',
});

async function stacRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const urlOnly = routeQuery({ url: datasetUrl });
  app.get<QueryRoute>('/assets', { schema: { querystring: urlOnly.schema } }, async (request, reply) => {
    const reader = await services.stac(urlOnly.parse(request.query).url);
    return sendJson(reply, reader.assetNames);
  });

  app.get<QueryRoute>('/bounds', { schema: { querystring: urlOnly.schema } }, async (request, reply) => {
    const reader = await services.stac(urlOnly.parse(request.query).url);
    return sendJson(reply, boundsModel(reader.bounds));
  });

  const infoQuery = routeQuery({ url: datasetUrl, assets: assetNames });
  const { info: infoModel, feature: infoFeature } = infoModelOf(services.settings);
  const webMercator = getTms('WebMercatorQuad')!;

  async function assetInfos(url: string, assets: string[] | undefined): Promise<[Record<string, unknown>, BBox]> {
    const reader = await services.stac(url);
    const infos = await reader.info(webMercator, assets);
    return [Object.fromEntries(infos.map(([name, info]) => [name, infoModel(info)])), reader.bounds];
  }

  const infoOptions = {
    schema: { querystring: infoQuery.schema },
    ...(choose(services.settings, 'stacAssets', { '0.18': false, '2': true }) ? { preValidation: requireAssets } : {}),
  };
  app.get<QueryRoute>('/info', infoOptions, async (request, reply) => {
    const p = infoQuery.parse(request.query);
    const [infos] = await assetInfos(p.url, p.assets);
    return sendJson(reply, infos);
  });

  app.get<QueryRoute>('/info.geojson', infoOptions, async (request, reply) => {
    const p = infoQuery.parse(request.query);
    const [infos, bounds] = await assetInfos(p.url, p.assets);
    return sendJson(reply, infoFeature(bounds, infos), 'application/geo+json');
  });

  const assetStatisticsQuery = routeQuery({ url: datasetUrl, ...assetStatisticsParams });
  app.get<QueryRoute>('/asset_statistics', { config: { large: true }, schema: { querystring: assetStatisticsQuery.schema } }, async (request, reply) => {
    const p = assetStatisticsQuery.parse(request.query);
    const describe = choose(services.settings, 'describedBands', { '0.18': false, '2': true });
    return sendJson(reply, await assetStatisticsJson(services, await services.stac(p.url), p, describe));
  });

  await stacRenderRoutes(app, urlRenderSource(services));
}
