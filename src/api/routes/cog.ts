/**
 * /cog (TiTiler 0.18.10's TilerFactory over rio-tiler's `Reader`): a bare Cloud Optimized GeoTIFF
 * named by `url`. The image route families come from the route factory over the COG reader
 * (readers/cog.ts); here are the family's layer parameters (BidxExprParams: `bidx`, an expression
 * over `b1 … bn`) and its metadata routes: bounds, info and info.geojson.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { WEB_MERCATOR_QUAD, getTms } from '../../tms/registry.js';
import { bandLayerSchema, querySchema, stacItemSchema, urlSchema, type Query } from '../params.js';
import { sendJson } from '../reply.js';
import { bboxFeature, boundsModel, cogValidateModel, infoModel } from '../models.js';
import { parseExpression } from '../../image/expression.js';
import { cogReader, expressionBands, type CogLayerOptions } from '../../readers/cog.js';
import { readerRoutes, type ReaderFamily } from '../factory.js';
import { validateCog } from '../../source/cog-validation.js';
import { ASSET_MEDIA_TYPES, stacItemFromRaster } from '../../stac/from-raster.js';

type Req = FastifyRequest<{ Querystring: Query & { url: string } }>;

/** BidxExprParams, parsed: an expression must name bands as `b{i}` (400 before anything is read). */
function cogLayerOptions(q: Query): CogLayerOptions {
  const expression = typeof q['expression'] === 'string' && q['expression'] !== '' ? q['expression'] : undefined;
  if (expression) expressionBands(parseExpression(expression));
  const bidx = (q['bidx'] as number[] | undefined)?.filter((i) => Number.isInteger(i));
  return { ...(expression ? { expression } : {}), ...(bidx && bidx.length > 0 ? { bidx } : {}) };
}

export function cogFamily(services: Services): ReaderFamily {
  return {
    prefix: '/cog',
    layerSchema: bandLayerSchema,
    checkLayer: (q) => void cogLayerOptions(q),
    open: (q) => cogReader(services.cog(q.url), q.url, cogLayerOptions(q)),
    summary: async (q) => {
      const source = services.cog(q.url);
      return { bounds: await source.geographicBounds(), zooms: (tms) => source.zooms(tms) };
    },
    // TilerFactory weighs a feature's pixels by the fraction of each the feature covers.
    coverageWeighted: true,
  };
}

export function cogRoutes(services: Services) {
  const images = readerRoutes(services, cogFamily(services));
  const webMercator = getTms(WEB_MERCATOR_QUAD)!;
  const urlOnly = { querystring: querySchema(['url'], urlSchema) };

  return async function plugin(app: FastifyInstance): Promise<void> {
    await app.register(images);

    app.get('/bounds', { schema: urlOnly }, async (req, reply) => {
      const source = services.cog((req as Req).query.url);
      return sendJson(reply, boundsModel(await source.geographicBounds()));
    });

    app.get('/info', { schema: urlOnly }, async (req, reply) => {
      const source = services.cog((req as Req).query.url);
      return sendJson(reply, infoModel(await source.info(webMercator)));
    });

    // TiTiler's cogValidateExtension (rio-cogeo's cog_info).
    const validateQuery = querySchema(['url'], { ...urlSchema, strict: { type: 'boolean', default: false, description: 'Treat warnings as errors' } });
    app.get('/validate', { schema: { summary: 'Validate a COG', querystring: validateQuery } }, async (req, reply) => {
      const q = (req as FastifyRequest<{ Querystring: { url: string; strict: boolean } }>).query;
      const source = services.cog(q.url);
      return sendJson(reply, cogValidateModel(await validateCog(source, services.bytesOf(source), { strict: q.strict, zoomGrid: webMercator })));
    });

    // TiTiler's stacExtension (rio-stac's create_stac_item): a STAC item made from the COG.
    const stacQuery = querySchema(['url'], urlSchema, stacItemSchema(ASSET_MEDIA_TYPES));
    app.get('/stac', { schema: { summary: 'A STAC item made from the COG, with projection, raster and eo extensions', querystring: stacQuery }, config: { large: true } }, async (req, reply) => {
      const q = (req as FastifyRequest<{ Querystring: Query & { url: string } }>).query;
      const text = (name: string): string | undefined => (typeof q[name] === 'string' ? (q[name] as string) : undefined);
      const list = (name: string): string[] => (Array.isArray(q[name]) ? (q[name] as string[]) : []);
      const source = services.cog(q.url);
      const settings = services.settings;
      const item = await stacItemFromRaster(source, q.url, {
        ...(text('datetime') !== undefined ? { datetime: text('datetime')! } : {}),
        extensions: list('extensions'),
        ...(text('collection') !== undefined ? { collection: text('collection')! } : {}),
        ...(text('collection_url') !== undefined ? { collectionUrl: text('collection_url')! } : {}),
        ...(text('id') !== undefined ? { id: text('id')! } : {}),
        assetName: text('asset_name') ?? 'data',
        assetRoles: list('asset_roles'),
        assetMediaType: text('asset_media_type') ?? 'auto',
        ...(text('asset_href') !== undefined ? { assetHref: text('asset_href')! } : {}),
        withProj: q['with_proj'] !== false,
        withRaster: q['with_raster'] !== false,
        withEo: q['with_eo'] !== false,
        maxSize: q['max_size'] as number,
        densify: q['geometry_densify'] as number,
        precision: q['geometry_precision'] as number,
        limits: { maxOutputPixels: settings.maxOutputPixels, maxSourcePixels: settings.maxSourcePixels, gate: services.wholeImages },
      });
      return sendJson(reply, item);
    });

    app.get('/info.geojson', { schema: urlOnly }, async (req, reply) => {
      const source = services.cog((req as Req).query.url);
      const [info, bounds] = await Promise.all([source.info(webMercator), source.geographicBounds()]);
      return sendJson(reply, bboxFeature(bounds, infoModel(info)), 'application/geo+json');
    });
  };
}
