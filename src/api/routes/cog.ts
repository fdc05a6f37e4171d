/**
 * /cog (TiTiler 0.18.10's TilerFactory over rio-tiler's `Reader`): a bare Cloud Optimized GeoTIFF
 * named by `url`. The image route families come from the route factory over the COG reader
 * (readers/cog.ts); here are the family's layer parameters (BidxExprParams: `bidx`, an expression
 * over `b1 … bn`) and its metadata routes: bounds, info and info.geojson.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { WEB_MERCATOR_QUAD, getTms } from '../../tms/registry.js';
import { bandLayer, datasetUrl, routeQuery, stacItem, validateStrict } from '../params/index.js';
import { sendJson } from '../reply.js';
import { bboxFeature, boundsModel, cogValidateModel, infoModel } from '../models.js';
import { cogReader, type CogLayerOptions } from '../../readers/cog.js';
import { readerRoutes, type ReaderFamily } from '../factory.js';
import { validateCog } from '../../source/cog-validation.js';
import { stacItemFromRaster } from '../../stac/from-raster.js';

type Req = FastifyRequest<{ Querystring: Record<string, unknown> }>;

function cogFamily(services: Services): ReaderFamily<CogLayerOptions> {
  return {
    prefix: '/cog',
    layer: bandLayer,
    open: (url, layer) => cogReader(services.cog(url), url, layer),
    summary: async (url) => {
      const source = services.cog(url);
      return { bounds: await source.geographicBounds(), zooms: (tms) => source.zooms(tms) };
    },
    // TilerFactory weighs a feature's pixels by the fraction of each the feature covers.
    coverageWeighted: true,
  };
}

export function cogRoutes(services: Services) {
  const images = readerRoutes(services, cogFamily(services));
  const webMercator = getTms(WEB_MERCATOR_QUAD)!;
  const urlOnly = routeQuery({ url: datasetUrl });
  const validateQuery = routeQuery({ url: datasetUrl, strict: validateStrict });
  const stacQuery = routeQuery({ url: datasetUrl, item: stacItem });
  const limits = { maxOutputPixels: services.settings.maxOutputPixels, maxSourcePixels: services.settings.maxSourcePixels, gate: services.wholeImages };

  return async function plugin(app: FastifyInstance): Promise<void> {
    await app.register(images);

    app.get('/bounds', { schema: { querystring: urlOnly.schema } }, async (req, reply) => {
      const source = services.cog(urlOnly.parse((req as Req).query).url);
      return sendJson(reply, boundsModel(await source.geographicBounds()));
    });

    app.get('/info', { schema: { querystring: urlOnly.schema } }, async (req, reply) => {
      const source = services.cog(urlOnly.parse((req as Req).query).url);
      return sendJson(reply, infoModel(await source.info(webMercator)));
    });

    // TiTiler's cogValidateExtension (rio-cogeo's cog_info).
    app.get('/validate', { schema: { summary: 'Validate a COG', querystring: validateQuery.schema } }, async (req, reply) => {
      const p = validateQuery.parse((req as Req).query);
      const source = services.cog(p.url);
      return sendJson(reply, cogValidateModel(await validateCog(source, services.bytesOf(source), { strict: p.strict, zoomGrid: webMercator })));
    });

    // TiTiler's stacExtension (rio-stac's create_stac_item): a STAC item made from the COG.
    app.get(
      '/stac',
      {
        schema: { summary: 'A STAC item made from the COG, with projection, raster and eo extensions', querystring: stacQuery.schema },
        config: { large: true },
      },
      async (req, reply) => {
        const p = stacQuery.parse((req as Req).query);
        return sendJson(reply, await stacItemFromRaster(services.cog(p.url), p.url, { ...p.item, limits }));
      },
    );

    app.get('/info.geojson', { schema: { querystring: urlOnly.schema } }, async (req, reply) => {
      const source = services.cog(urlOnly.parse((req as Req).query).url);
      const [info, bounds] = await Promise.all([source.info(webMercator), source.geographicBounds()]);
      return sendJson(reply, bboxFeature(bounds, infoModel(info)), 'application/geo+json');
    });
  };
}
