/**
 * /stac (TiTiler 0.18.10's MultiBaseTilerFactory over a STAC item): the image route families come
 * from the route factory (api/factory.ts) over the STAC item reader (readers/stac.ts); here are the
 * family's layer parameters (AssetsBidxExprParams) and the routes that are a STAC item's alone:
 * assets, bounds, per-asset info and /asset_statistics (per asset, its own bands or `asset_expression`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { getTms } from '../../tms/registry.js';
import type { BBox } from '../../tms/grid.js';
import {
  assetNames,
  assetStatisticsLayer,
  datasetUrl,
  datasetValues,
  optionalStacLayer,
  previewSize,
  requireLayerFirst,
  routeQuery,
  stacLayer,
  statistics,
} from '../params/index.js';
import { sendJson } from '../reply.js';
import { bboxFeature, boundsModel, infoModel } from '../models.js';
import { stacItemReader, type StacLayerOptions } from '../../readers/stac.js';
import { assetStatistics } from '../../readers/stac-asset-statistics.js';
import { statisticsMapToJson } from '../../image/statistics-json.js';
import { readerRoutes, type ReaderFamily } from '../factory.js';

type Req = FastifyRequest<{ Querystring: Record<string, unknown> }>;

function stacFamily(services: Services): ReaderFamily<StacLayerOptions> {
  return {
    prefix: '/stac',
    layer: stacLayer,
    // Statistics without assets or an expression read every asset of the item.
    statisticsLayer: optionalStacLayer,
    layerFirst: requireLayerFirst,
    open: async (url, layer) => {
      const stac = await services.stac(url);
      return stacItemReader(stac, layer.assets || layer.expression ? layer : { ...layer, assets: stac.assetNames });
    },
    summary: async (url) => {
      const stac = await services.stac(url);
      return { bounds: stac.bounds, zooms: async (tms) => stac.zooms(tms) };
    },
  };
}

export function stacRoutes(services: Services) {
  const limits = { maxOutputPixels: services.settings.maxOutputPixels, maxSourcePixels: services.settings.maxSourcePixels, gate: services.wholeImages };
  const images = readerRoutes(services, stacFamily(services));

  return async function plugin(app: FastifyInstance): Promise<void> {
    await app.register(images);

    const urlOnly = routeQuery({ url: datasetUrl });
    app.get('/assets', { schema: { querystring: urlOnly.schema } }, async (req, reply) => {
      const reader = await services.stac(urlOnly.parse((req as Req).query).url);
      return sendJson(reply, reader.assetNames);
    });

    app.get('/bounds', { schema: { querystring: urlOnly.schema } }, async (req, reply) => {
      const reader = await services.stac(urlOnly.parse((req as Req).query).url);
      return sendJson(reply, boundsModel(reader.bounds));
    });

    const infoQuery = routeQuery({ url: datasetUrl, assets: assetNames });
    const webMercator = getTms('WebMercatorQuad')!;

    async function assetInfos(url: string, assets: string[] | undefined): Promise<[Record<string, unknown>, BBox]> {
      const reader = await services.stac(url);
      const infos = await reader.info(webMercator, assets);
      return [Object.fromEntries(infos.map(([name, info]) => [name, infoModel(info)])), reader.bounds];
    }

    app.get('/info', { schema: { querystring: infoQuery.schema } }, async (req, reply) => {
      const p = infoQuery.parse((req as Req).query);
      const [infos] = await assetInfos(p.url, p.assets);
      return sendJson(reply, infos);
    });

    app.get('/info.geojson', { schema: { querystring: infoQuery.schema } }, async (req, reply) => {
      const p = infoQuery.parse((req as Req).query);
      const [infos, bounds] = await assetInfos(p.url, p.assets);
      return sendJson(reply, bboxFeature(bounds, infos), 'application/geo+json');
    });

    const assetStatisticsQuery = routeQuery({ url: datasetUrl, layer: assetStatisticsLayer, values: datasetValues, size: previewSize, statistics });
    app.get('/asset_statistics', { config: { large: true }, schema: { querystring: assetStatisticsQuery.schema } }, async (req, reply) => {
      const p = assetStatisticsQuery.parse((req as Req).query);
      const stac = await services.stac(p.url);
      const results = await assetStatistics(stac, { ...p.layer, size: p.size, statistics: p.statistics }, p.values, limits, (img, spec) =>
        services.renderer.statistics(img, spec),
      );
      return sendJson(reply, Object.fromEntries(results.map(([name, stats]) => [name, statisticsMapToJson(stats)])));
    });
  };
}
