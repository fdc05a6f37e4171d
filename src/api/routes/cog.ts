/**
 * /cog (TiTiler 0.18.10's TilerFactory over rio-tiler's `Reader`, with its cogValidateExtension,
 * stacExtension and cogViewerExtension): a bare Cloud Optimized GeoTIFF named by `url`, as one
 * family registration (api/factory.ts). The image routes come from the route factory over the COG
 * reader (readers/cog.ts), every verb included; here are the family's layer parameters
 * (BidxExprParams: `bidx`, an expression over `b1 … bn`) and its own routes: bounds, info,
 * info.geojson, validate and stac.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { WEB_MERCATOR_QUAD, getTms } from '../../tms/registry.js';
import { bandLayer, datasetUrl, routeQuery, stacItem, validateStrict, type QueryRoute } from '../params/index.js';
import { sendJson } from '../reply.js';
import { boundsModel, cogValidateModel, infoModelOf } from '../models.js';
import { cogReader } from '../../readers/cog.js';
import { defineFamily } from '../factory.js';
import * as verb from '../verbs.js';
import { ogcMap } from '../ogc-maps.js';
import { validateCog } from '../../source/cog-validation.js';
import { stacItemFromRaster } from '../../stac/from-raster.js';
import { rasterSummary } from '../raster-summary.js';

export const cogFamily = defineFamily({
  prefix: '/cog',
  tag: { name: 'Cloud Optimized GeoTIFF', description: 'One Cloud Optimized GeoTIFF, named by `url`: tiles, images, values, statistics and metadata.' },
  docs: [
    { match: /^\/info$/, summary: 'Metadata of the COG (bands, data type, nodata, overviews, zooms)', answer: 'json', schema: 'Info' },
    { match: /^\/stac$/, summary: 'A STAC item made from the COG, with projection, raster and eo extensions', answer: 'json', schema: 'StacItem' },
    { match: /^\/validate$/, summary: 'Whether a GeoTIFF is a valid COG, with its errors, warnings and layout', answer: 'json', schema: 'CogValidation' },
  ],
  metricsLabel: 'cog',
  disabledBy: 'cog',
  layer: bandLayer,
  datasets: (services) => ({
    open: (url, layer) => cogReader(services.cog(url), url, layer),
    summary: (url) => rasterSummary(services.cog(url)),
  }),
  verbs: [verb.point, verb.preview, verb.bbox, verb.feature, verb.statisticsOfPreview, verb.statisticsOfFeatures, ogcMap],
  // TilerFactory weighs a feature's pixels by the fraction of each the feature covers.
  coverageWeighted: true,
  routes: cogRoutes,
  viewer: 'cog',
});

async function cogRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const webMercator = getTms(WEB_MERCATOR_QUAD)!;
  const { info: infoModel, feature: infoFeature } = infoModelOf(services.settings);
  const urlOnly = routeQuery({ url: datasetUrl });
  const validateQuery = routeQuery({ url: datasetUrl, strict: validateStrict });
  const stacQuery = routeQuery({ url: datasetUrl, item: stacItem });
  const limits = { maxOutputPixels: services.settings.maxOutputPixels, maxSourcePixels: services.settings.maxSourcePixels, gate: services.wholeImages };

  app.get<QueryRoute>('/bounds', { schema: { querystring: urlOnly.schema } }, async (request, reply) => {
    const source = services.cog(urlOnly.parse(request.query).url);
    return sendJson(reply, boundsModel(await source.geographicBounds()));
  });

  app.get<QueryRoute>('/info', { schema: { querystring: urlOnly.schema } }, async (request, reply) => {
    const source = services.cog(urlOnly.parse(request.query).url);
    return sendJson(reply, infoModel(await source.info(webMercator)));
  });

  // TiTiler's cogValidateExtension (rio-cogeo's cog_info).
  app.get<QueryRoute>('/validate', { schema: { summary: 'Validate a COG', querystring: validateQuery.schema } }, async (request, reply) => {
    const p = validateQuery.parse(request.query);
    const source = services.cog(p.url);
    return sendJson(reply, cogValidateModel(await validateCog(source, services.bytesOf(source), { strict: p.strict, zoomGrid: webMercator })));
  });

  // TiTiler's stacExtension (rio-stac's create_stac_item): a STAC item made from the COG.
  app.get<QueryRoute>(
    '/stac',
    {
      schema: { summary: 'A STAC item made from the COG, with projection, raster and eo extensions', querystring: stacQuery.schema },
      config: { large: true },
    },
    async (request, reply) => {
      const p = stacQuery.parse(request.query);
      return sendJson(reply, await stacItemFromRaster(services.cog(p.url), p.url, { ...p.item, limits }));
    },
  );

  app.get<QueryRoute>('/info.geojson', { schema: { querystring: urlOnly.schema } }, async (request, reply) => {
    const source = services.cog(urlOnly.parse(request.query).url);
    const [info, bounds] = await Promise.all([source.info(webMercator), source.geographicBounds()]);
    return sendJson(reply, infoFeature(bounds, infoModel(info)), 'application/geo+json');
  });
}
