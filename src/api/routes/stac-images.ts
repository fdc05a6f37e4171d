/**
 * /stac image routes: tiles, preview, bbox, feature (POST) and point. Each parses its parameter
 * families, resolves the assets (or expression) to read, reads through the STAC image verbs and
 * hands the image to the shared rendering step.
 */
import { checkTile } from '../../tms/grid.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { getTms } from '../../tms/registry.js';
import {
  algorithmSchema,
  coordCrsSchema,
  datasetSchema,
  dstCrsSchema,
  layerSchema,
  parseCrsParam,
  parseDataset,
  parseLayer,
  parseSize,
  parseTile,
  partSizeSchema,
  previewSizeSchema,
  querySchema,
  renderSchema,
  requireLayerFirst,
  tileSchema,
  tmsPathSchema,
  urlSchema,
  type Query,
} from '../params.js';
import { parseBBoxPath, parseFormat, parseLonLat, parseSizeFormat, parseTilePath } from '../path-params.js';
import { LayerPlan, stacFeature, stacPart, stacPoint, stacPreview, stacTile, type ReadLimits } from '../../stac/images.js';
import type { ValueOptions } from '../../source/reader.js';
import { parseRenderOptions, sendImage } from '../image-response.js';
import type { RenderSpec } from '../../image/post-process.js';
import { parseFeatureBody } from '../geojson.js';
import { sendJson } from '../reply.js';
import { floats } from '../../pyjson.js';
import { TesseraError } from '../../errors.js';
import type { ImageFormat } from '../../image/formats.js';

const WGS84 = 'EPSG:4326';

type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query & { url: string } }>;

export function valueOptions(q: Query): ValueOptions {
  const d = parseDataset(q);
  return { unscale: d.unscale, resampling: d.resampling, reproject: d.reproject, ...(d.nodata !== undefined ? { nodata: d.nodata } : {}) };
}

export function layerOptions(q: Query) {
  const l = parseLayer(q, true);
  return {
    ...(l.assets ? { assets: l.assets } : {}),
    ...(l.expression ? { expression: l.expression } : {}),
    assetAsBand: l.assetAsBand,
    assetBidx: l.assetBidx,
    ...(l.bidx ? { bidx: l.bidx } : {}),
  };
}

/** PartFeatureParams + CoordCRSParams + DstCRSParams: `dst_crs` defaults to the coordinates' CRS. */
export function partOptions(q: Query, fixed?: { width: number; height: number }) {
  const size = parseSize(q, fixed);
  const coordCrs = parseCrsParam(q, 'coord_crs') ?? WGS84;
  const dstCrs = parseCrsParam(q, 'dst_crs') ?? coordCrs;
  return { size, coordCrs, dstCrs };
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('application/json').send({ detail: 'Not Found' });
}

/**
 * The layer's expression left to the renderer: readers hand over the stacked assets and the
 * expression is evaluated with the rest of the rendering, off the main thread.
 */
function withLayerExpression(render: RenderSpec, plan: LayerPlan): RenderSpec {
  return plan.expression ? { ...render, expression: plan.expression.text } : render;
}

export function stacImageRoutes(services: Services) {
  const limits: ReadLimits = { maxOutputPixels: services.settings.maxOutputPixels, maxSourcePixels: services.settings.maxSourcePixels, gate: services.wholeImages };

  return async function plugin(app: FastifyInstance): Promise<void> {
    const imageQuery = [urlSchema, layerSchema, datasetSchema, algorithmSchema, renderSchema];

    app.get(
      '/tiles/:tileMatrixSetId/:z/:x/:last',
      {
        schema: {
          params: { type: 'object', properties: { ...tmsPathSchema, z: { type: 'string' }, x: { type: 'string' }, last: { type: 'string' } } },
          querystring: querySchema(['url'], ...imageQuery, tileSchema),
        },
        preValidation: requireLayerFirst,
      },
      async (req, reply) => {
        const request = req as Req;
        const q = request.query;
        const path = parseTilePath(request.params['z']!, request.params['x']!, request.params['last']!);
        const tms = getTms(request.params['tileMatrixSetId']!)!;
        const tile = parseTile(q);
        const layer = layerOptions(q);
        const values = valueOptions(q);
        const render = parseRenderOptions(q);
        checkTile(tms, path.x, path.y, path.z);
        const stac = await services.stac(q.url);
        const plan = await LayerPlan.resolve(stac, layer);
        const img = await stacTile(
          stac,
          plan,
          tms,
          { x: path.x, y: path.y, z: path.z },
          { ...values, tilesize: 256 * path.scale, ...(tile.buffer ? { buffer: tile.buffer } : {}), ...(tile.padding ? { padding: tile.padding } : {}) },
          limits,
          false,
        );
        return sendImage(reply, services.renderer, img, path.format, withLayerExpression(render, plan));
      },
    );

    const previewSchema = { querystring: querySchema(['url'], ...imageQuery, previewSizeSchema, dstCrsSchema) };
    const preview = async (req: FastifyRequest, reply: FastifyReply, format: ImageFormat | undefined): Promise<FastifyReply> => {
      const q = (req as Req).query;
      const layer = layerOptions(q);
      const values = valueOptions(q);
      const size = parseSize(q);
      const dstCrs = parseCrsParam(q, 'dst_crs');
      const render = parseRenderOptions(q);
      const stac = await services.stac(q.url);
      const plan = await LayerPlan.resolve(stac, layer);
      const img = await stacPreview(plan, { ...size, ...(dstCrs ? { dstCrs } : {}) }, values, limits, false);
      return sendImage(reply, services.renderer, img, format, withLayerExpression(render, plan));
    };
    app.get('/preview', { schema: previewSchema, preValidation: requireLayerFirst, config: { large: true } }, (req, reply) => preview(req, reply, undefined));
    app.get('/preview.:format', { schema: previewSchema, preValidation: requireLayerFirst, config: { large: true } }, (req, reply) =>
      preview(req, reply, parseFormat((req as Req).params['format']!)),
    );

    const partSchema = { querystring: querySchema(['url'], ...imageQuery, partSizeSchema, dstCrsSchema, coordCrsSchema) };
    app.get('/bbox/*', { schema: partSchema, preValidation: requireLayerFirst, config: { large: true } }, async (req, reply) => {
      const request = req as Req;
      const parsed = parseBBoxPath(request.params['*']!);
      if (!parsed) return notFound(reply);
      const q = request.query;
      const layer = layerOptions(q);
      const values = valueOptions(q);
      const fixed = parsed.width !== undefined && parsed.height !== undefined ? { width: parsed.width, height: parsed.height } : undefined;
      const { size, coordCrs, dstCrs } = partOptions(q, fixed);
      const render = parseRenderOptions(q);
      const [minx, miny, maxx, maxy] = parsed.bbox;
      if (!parsed.bbox.every(Number.isFinite) || minx >= maxx || miny >= maxy) {
        throw new TesseraError('BadRequest', `Invalid bbox ${parsed.bbox.join(',')}: expected finite minx < maxx and miny < maxy`);
      }
      const stac = await services.stac(q.url);
      const plan = await LayerPlan.resolve(stac, layer);
      const img = await stacPart(plan, parsed.bbox, { ...size, boundsCrs: coordCrs, dstCrs }, values, limits, false);
      return sendImage(reply, services.renderer, img, parsed.format, withLayerExpression(render, plan));
    });

    const featureSchema = { querystring: querySchema(['url'], ...imageQuery, partSizeSchema, dstCrsSchema, coordCrsSchema) };
    const feature = async (req: FastifyRequest, reply: FastifyReply, format: ImageFormat | undefined, fixed?: { width: number; height: number }): Promise<FastifyReply> => {
      const q = (req as Req).query;
      const shape = parseFeatureBody(req.body);
      const layer = layerOptions(q);
      const values = valueOptions(q);
      const { size, coordCrs, dstCrs } = partOptions(q, fixed);
      const render = parseRenderOptions(q);
      const stac = await services.stac(q.url);
      const plan = await LayerPlan.resolve(stac, layer);
      const img = await stacFeature(plan, shape, coordCrs, { ...size, dstCrs }, values, limits, false);
      return sendImage(reply, services.renderer, img, format, withLayerExpression(render, plan));
    };
    app.post('/feature', { schema: featureSchema, preValidation: requireLayerFirst, config: { large: true } }, (req, reply) => feature(req, reply, undefined));
    app.post('/feature.:format', { schema: featureSchema, preValidation: requireLayerFirst, config: { large: true } }, (req, reply) =>
      feature(req, reply, parseFormat((req as Req).params['format']!)),
    );
    app.post('/feature/:sizeformat', { schema: featureSchema, preValidation: requireLayerFirst, config: { large: true } }, (req, reply) => {
      const parsed = parseSizeFormat((req as Req).params['sizeformat']!);
      if (!parsed) return notFound(reply);
      return feature(req, reply, parsed.format, { width: parsed.width, height: parsed.height });
    });

    const pointSchema = { querystring: querySchema(['url'], urlSchema, layerSchema, datasetSchema, coordCrsSchema) };
    app.get('/point/:lonlat', { schema: pointSchema, preValidation: requireLayerFirst }, async (req, reply) => {
      const request = req as Req;
      const lonlat = parseLonLat(request.params['lonlat']!);
      if (!lonlat) return notFound(reply);
      const q = request.query;
      const layer = layerOptions(q);
      const values = valueOptions(q);
      const coordCrs = parseCrsParam(q, 'coord_crs') ?? WGS84;
      const stac = await services.stac(q.url);
      const plan = await LayerPlan.resolve(stac, layer);
      const point = await stacPoint(plan, lonlat[0], lonlat[1], coordCrs, values);
      return sendJson(reply, { coordinates: floats(lonlat), values: floats(point.values), band_names: point.bandNames });
    });
  };
}
