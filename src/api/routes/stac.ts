/**
 * /stac routes over a STAC item: assets, bounds, info, info.geojson, tilejson and WMTS capabilities.
 * The image routes (tiles, preview, bbox, feature, point, statistics) join this plugin with the
 * image pipeline and share its parameter families.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { getTms } from '../../tms/registry.js';
import type { BBox, TileMatrixSet } from '../../tms/grid.js';
import {
  algorithmSchema,
  assetsSchema,
  datasetSchema,
  layerSchema,
  parseImageParams,
  requireLayerFirst,
  querySchema,
  renderSchema,
  tileSchema,
  tilejsonSchema,
  tmsPathSchema,
  urlSchema,
  type ImageFormat,
  type Query,
} from '../params.js';
import { baseUrl, forwardedQuery, requestUrl } from '../urls.js';
import { sendJson } from '../reply.js';
import { bboxFeature, boundsModel, infoModel, tileJsonModel } from '../models.js';
import { wmtsCapabilities } from '../../ogc/wmts.js';
import { MEDIA_TYPES } from '../../image/formats.js';
import { pyFloatRepr } from '../../pyjson.js';
import { badRequest } from '../../errors.js';

const tmsParams = { type: 'object', properties: tmsPathSchema, required: ['tileMatrixSetId'] };

/** Keys a tilejson/map tile URL does not forward (TiTiler's list, compared lower-case). */
const TILEJSON_DROPPED = ['tilematrixsetid', 'tile_format', 'tile_scale', 'minzoom', 'maxzoom'];
const WMTS_DROPPED = [...TILEJSON_DROPPED, 'service', 'use_epsg', 'request'];

interface TileDocQuery extends Query {
  url: string;
  tile_format?: ImageFormat;
  tile_scale: number;
  minzoom?: number;
  maxzoom?: number;
  use_epsg?: boolean;
}

type TmsRequest = FastifyRequest<{ Params: { tileMatrixSetId: string }; Querystring: TileDocQuery }>;

function zoomRange(q: TileDocQuery, defaults: { minzoom: number; maxzoom: number }): { minzoom: number; maxzoom: number } {
  return { minzoom: q.minzoom ?? defaults.minzoom, maxzoom: q.maxzoom ?? defaults.maxzoom };
}

export function stacRoutes(services: Services) {
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get<{ Querystring: { url: string } }>(
      '/assets',
      { schema: { querystring: querySchema(['url'], urlSchema) } },
      async (request, reply) => {
        const reader = await services.stac(request.query.url);
        return sendJson(reply, reader.assetNames);
      },
    );

    app.get<{ Querystring: { url: string } }>(
      '/bounds',
      { schema: { querystring: querySchema(['url'], urlSchema) } },
      async (request, reply) => {
        const reader = await services.stac(request.query.url);
        return sendJson(reply, boundsModel(reader.bounds));
      },
    );

    const infoSchema = { querystring: querySchema(['url'], urlSchema, assetsSchema) };
    const webMercator = getTms('WebMercatorQuad')!;

    async function assetInfos(url: string, assets: string[] | undefined): Promise<[Record<string, unknown>, BBox]> {
      const reader = await services.stac(url);
      const infos = await reader.info(webMercator, assets?.filter((a) => a !== ''));
      return [Object.fromEntries(infos.map(([name, info]) => [name, infoModel(info)])), reader.bounds];
    }

    app.get<{ Querystring: { url: string; assets?: string[] } }>('/info', { schema: infoSchema }, async (request, reply) => {
      const [infos] = await assetInfos(request.query.url, request.query.assets);
      return sendJson(reply, infos);
    });

    app.get<{ Querystring: { url: string; assets?: string[] } }>('/info.geojson', { schema: infoSchema }, async (request, reply) => {
      const [infos, bounds] = await assetInfos(request.query.url, request.query.assets);
      return sendJson(reply, bboxFeature(bounds, infos), 'application/geo+json');
    });

    const tileDocSchema = {
      params: tmsParams,
      querystring: querySchema(['url'], urlSchema, layerSchema, datasetSchema, tileSchema, algorithmSchema, renderSchema, tilejsonSchema),
    };

    app.get('/:tileMatrixSetId/tilejson.json', { schema: tileDocSchema, preValidation: requireLayerFirst }, async (req, reply) => {
      const request = req as TmsRequest;
      const q = request.query;
      parseImageParams(q, true);
      const tms = getTms(request.params.tileMatrixSetId)!;
      const reader = await services.stac(q.url);
      const { minzoom, maxzoom } = zoomRange(q, reader.zooms(tms));
      if (minzoom < 0 || maxzoom > 30) throw badRequest('TileJSON minzoom and maxzoom must be between 0 and 30');
      const suffix = `@${q.tile_scale}x${q.tile_format ? `.${q.tile_format}` : ''}`;
      const tiles = `${baseUrl(request)}/stac/tiles/${tms.id}/{z}/{x}/{y}${suffix}${forwardedQuery(request, TILEJSON_DROPPED)}`;
      const [minx, miny, maxx, maxy] = reader.bounds;
      return sendJson(
        reply,
        tileJsonModel({ tiles, minzoom, maxzoom, bounds: reader.bounds, center: [(minx + maxx) / 2, (miny + maxy) / 2, minzoom] }),
      );
    });

    const wmtsSchema = {
      params: tmsParams,
      querystring: querySchema(['url'], urlSchema, layerSchema, datasetSchema, tileSchema, algorithmSchema, renderSchema, tilejsonSchema, {
        use_epsg: { type: 'boolean' },
      }),
    };

    app.get('/:tileMatrixSetId/WMTSCapabilities.xml', { schema: wmtsSchema, preValidation: requireLayerFirst }, async (req, reply) => {
      const request = req as TmsRequest;
      const q = request.query;
      parseImageParams(q, true);
      const tms = getTms(request.params.tileMatrixSetId)!;
      const format = q.tile_format ?? 'png';
      const reader = await services.stac(q.url);
      const { minzoom, maxzoom } = zoomRange(q, reader.zooms(tms));
      checkZoomRange(tms, minzoom, maxzoom);
      const template =
        `${baseUrl(request)}/stac/tiles/${tms.id}/{TileMatrix}/{TileCol}/{TileRow}@${q.tile_scale}x.${format}` +
        forwardedQuery(request, WMTS_DROPPED);
      const xml = wmtsCapabilities({
        title: q.url,
        layerName: 'Dataset',
        requestUrl: requestUrl(request),
        tileTemplate: template,
        mediaType: MEDIA_TYPES[format],
        tms,
        supportedCrs: q.use_epsg ? epsgName(tms) : tms.def.crs,
        bounds: reader.bounds,
        minzoom,
        maxzoom,
        num: pyFloatRepr,
      });
      return reply.type('application/xml').send(Buffer.from(xml, 'utf8'));
    });
  };
}

/** `EPSG:<code>` for `use_epsg=true` (ArcMap); grids in OGC:CRS84 have none and keep their URI. */
function epsgName(tms: TileMatrixSet): string {
  const m = /^EPSG:(\d+)$/.exec(tms.srs);
  return m ? `EPSG:${m[1]}` : tms.def.crs;
}

/** A WMTS document lists every matrix in the range: refuse ranges the grid does not have. */
function checkZoomRange(tms: TileMatrixSet, minzoom: number, maxzoom: number): void {
  if (minzoom > maxzoom) throw badRequest(`minzoom (${minzoom}) must not be greater than maxzoom (${maxzoom})`);
  if (minzoom < tms.minzoom) throw badRequest(`minzoom ${minzoom} is below ${tms.id}'s first matrix (${tms.minzoom})`);
  if (maxzoom - minzoom > 64) throw badRequest('zoom range too large (at most 64 levels)');
  try {
    tms.matrix(maxzoom);
  } catch {
    throw badRequest(`${tms.id} has no matrix for zoom ${maxzoom}`);
  }
}
