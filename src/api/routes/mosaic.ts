/**
 * /mosaicjson routes (TiTiler 0.18.10's MosaicTilerFactory over cogeo-mosaic 7): the document,
 * bounds, info, tiles with pixel selection, TileJSON, WMTS, point values and the asset lookups.
 * The `url` names the mosaic (http(s), a local file when allowed, or sqlite:///{path}:{name});
 * assets are COG URLs, or STAC item URLs whose assets `assets`/`expression` name.
 *
 * The map page (`/{tileMatrixSetId}/map`) is not here: it comes with the HTML pages.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { getTms, WEB_MERCATOR_QUAD } from '../../tms/registry.js';
import type { TileMatrixSet } from '../../tms/grid.js';
import {
  algorithmSchema,
  coordCrsSchema,
  datasetSchema,
  layerSchema,
  parseCrsParam,
  parseDataset,
  parseImageParams,
  parseLayer,
  parseTile,
  querySchema,
  renderSchema,
  tileSchema,
  tilejsonSchema,
  tmsPathSchema,
  urlSchema,
  type ImageFormat,
  type Query,
} from '../params.js';
import { parseLonLat, parseTilePath } from '../path-params.js';
import { ValidationError, type ValidationDetail } from '../errors.js';
import { parseRenderOptions, sendImage } from '../image-response.js';
import { baseUrl, forwardedQuery, requestUrl } from '../urls.js';
import { sendJson } from '../reply.js';
import { bboxFeature, boundsModel, tileJsonModel } from '../models.js';
import { float, floats, pyFloatRepr } from '../../pyjson.js';
import { wmtsCapabilities } from '../../ogc/wmts.js';
import { MEDIA_TYPES } from '../../image/formats.js';
import type { ValueOptions } from '../../source/reader.js';
import { MosaicStore } from '../../mosaic/store.js';
import { MosaicReader, type MosaicContext, type MosaicLayer } from '../../mosaic/reader.js';
import { mosaicDocumentJson, parseMosaicDocument } from '../../mosaic/document.js';
import { PIXEL_SELECTION_METHODS, type PixelSelection } from '../../mosaic/methods.js';
import { type Mosaic, type MosaicInfo } from '../../mosaic/mosaic.js';
import { checkTile } from '../../tms/grid.js';
import { TesseraError, badRequest } from '../../errors.js';

const WGS84 = 'EPSG:4326';

/** Query keys a TileJSON / WMTS tile URL does not forward (TiTiler's lists, compared lower-case). */
const TILEJSON_DROPPED = ['tilematrixsetid', 'tile_format', 'tile_scale', 'minzoom', 'maxzoom'];
const WMTS_DROPPED = [...TILEJSON_DROPPED, 'service', 'request'];

/** Past this, X-Assets is left out: proxies and clients refuse very long headers. */
const MAX_ASSETS_HEADER = 8192;

const pixelSelectionSchema = { pixel_selection: { type: 'string', enum: [...PIXEL_SELECTION_METHODS], default: 'first' } };
const tmsParams = { type: 'object', properties: tmsPathSchema, required: ['tileMatrixSetId'] };

type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query & { url: string } }>;

interface TileDocQuery extends Query {
  url: string;
  tile_format?: ImageFormat;
  tile_scale: number;
  minzoom?: number;
  maxzoom?: number;
}

function valueOptions(q: Query): ValueOptions {
  const d = parseDataset(q);
  return { unscale: d.unscale, resampling: d.resampling, reproject: d.reproject, ...(d.nodata !== undefined ? { nodata: d.nodata } : {}) };
}

/** BidxExprParams, plus the STAC layer parameters for mosaics of STAC items. */
function mosaicLayer(q: Query): MosaicLayer {
  const l = parseLayer(q, false);
  return {
    ...(l.bidx ? { bidx: l.bidx } : {}),
    ...(l.expression ? { expression: l.expression } : {}),
    stac: { ...(l.assets ? { assets: l.assets } : {}), assetAsBand: l.assetAsBand, assetBidx: l.assetBidx },
  };
}

function infoModel(info: MosaicInfo): Record<string, unknown> {
  return {
    bounds: floats(info.bounds),
    center: [float(info.center[0]), float(info.center[1]), info.center[2]],
    minzoom: info.minzoom,
    maxzoom: info.maxzoom,
    name: info.name,
    quadkeys: info.quadkeys,
    tilematrixset: info.tilematrixset,
  };
}

// ---- path segments FastAPI types as numbers -------------------------------------------------------

const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf|infinity|nan)$/i;

function pathNumbers(entries: ReadonlyArray<[string, string]>, kind: 'int' | 'float'): number[] {
  const details: ValidationDetail[] = [];
  const values = entries.map(([name, text]) => {
    const t = text.trim();
    if (kind === 'int' ? !INT_RE.test(t) : !FLOAT_RE.test(t)) {
      details.push(
        kind === 'int'
          ? { type: 'int_parsing', loc: ['path', name], msg: 'Input should be a valid integer, unable to parse string as an integer', input: text }
          : { type: 'float_parsing', loc: ['path', name], msg: 'Input should be a valid number, unable to parse string as a number', input: text },
      );
      return 0;
    }
    return Number(t.toLowerCase().replace(/^([+-]?)inf(inity)?$/, '$1Infinity'));
  });
  if (details.length > 0) throw new ValidationError(details);
  return values;
}

/**
 * `{minx},{miny},{maxx},{maxy}` or `{lon},{lat}` (the bbox route first, as TiTiler registers it;
 * Starlette's greedy segments put extra commas into the first number, which then fails to parse).
 */
function parseCoords(text: string): { bbox: [number, number, number, number] } | { point: [number, number] } | undefined {
  const parts = text.split(',');
  if (parts.length >= 4) {
    const head = parts.slice(0, parts.length - 3).join(',');
    const [minx, miny, maxx, maxy] = pathNumbers([['minx', head], ['miny', parts.at(-3)!], ['maxx', parts.at(-2)!], ['maxy', parts.at(-1)!]], 'float');
    return { bbox: [minx!, miny!, maxx!, maxy!] };
  }
  if (parts.length >= 2) {
    const [lon, lat] = pathNumbers([['lon', parts.slice(0, -1).join(',')], ['lat', parts.at(-1)!]], 'float');
    return { point: [lon!, lat!] };
  }
  return undefined;
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('application/json').send({ detail: 'Not Found' });
}

/** Printable ASCII only in a header (asset names may hold anything). */
function headerValue(assets: readonly string[]): string | undefined {
  const escape = (c: string): string => {
    try {
      return encodeURIComponent(c);
    } catch {
      return '?'; // a lone surrogate
    }
  };
  const text = assets.map((a) => a.replace(/[^\x20-\x7e]/gu, escape)).join(',');
  return text.length <= MAX_ASSETS_HEADER ? text : undefined;
}

export function mosaicRoutes(services: Services) {
  const settings = services.settings;
  const store = new MosaicStore({
    fetcher: services.fetcher,
    cacheTtlMs: settings.documentCacheTtlMs,
    cacheSize: settings.documentCacheSize,
    maxBytes: settings.maxDocumentBytes,
  });
  const ctx: MosaicContext = {
    sources: services.sources,
    policy: services.policy,
    openStac: (url) => services.stac(url),
    concurrency: settings.mosaicConcurrency,
    limits: { maxOutputPixels: settings.maxOutputPixels, maxSourcePixels: settings.maxSourcePixels },
  };
  const webMercator = getTms(WEB_MERCATOR_QUAD)!;

  return async function plugin(app: FastifyInstance): Promise<void> {
    const urlOnly = { querystring: querySchema(['url'], urlSchema) };
    const open = (req: FastifyRequest): Promise<Mosaic> => store.open((req as Req).query.url);

    app.get('/', { schema: urlOnly }, async (req, reply) => {
      const mosaic = await open(req);
      return sendJson(reply, mosaicDocumentJson(mosaic.doc, mosaic.origin.tilesInDocument));
    });

    // TiTiler's POST /validate: `true` for a valid document, 422 naming the fault otherwise.
    app.post('/validate', async (req, reply) => {
      try {
        parseMosaicDocument(req.body);
      } catch (err) {
        if (err instanceof TesseraError && err.kind === 'BadRequest') {
          throw new ValidationError([{ type: 'value_error', loc: ['body'], msg: err.message, input: null }]);
        }
        throw err;
      }
      return sendJson(reply, true);
    });

    app.get('/bounds', { schema: urlOnly }, async (req, reply) => sendJson(reply, boundsModel((await open(req)).bounds)));

    app.get('/info', { schema: urlOnly }, async (req, reply) => sendJson(reply, infoModel((await open(req)).info())));

    app.get('/info.geojson', { schema: urlOnly }, async (req, reply) => {
      const info = (await open(req)).info();
      return sendJson(reply, bboxFeature(info.bounds, infoModel(info)), 'application/geo+json');
    });

    const imageQuery = [urlSchema, layerSchema, datasetSchema, tileSchema, algorithmSchema, renderSchema, pixelSelectionSchema];

    app.get(
      '/tiles/:tileMatrixSetId/:z/:x/:last',
      {
        schema: {
          params: { type: 'object', properties: { ...tmsPathSchema, z: { type: 'string' }, x: { type: 'string' }, last: { type: 'string' } } },
          querystring: querySchema(['url'], ...imageQuery),
        },
      },
      async (req, reply) => {
        const request = req as Req;
        const q = request.query;
        const path = parseTilePath(request.params['z']!, request.params['x']!, request.params['last']!);
        const tms = getTms(request.params['tileMatrixSetId']!)!;
        const layer = mosaicLayer(q);
        const values = valueOptions(q);
        const tile = parseTile(q);
        const render = parseRenderOptions(q);
        checkTile(tms, path.x, path.y, path.z);
        const mosaic = await store.open(q.url);
        if (settings.mosaicStrictZoom) {
          const { minzoom, maxzoom } = mosaic.zooms(tms);
          if (path.z < minzoom || path.z > maxzoom) throw badRequest(`Invalid ZOOM level ${path.z}. Should be between ${minzoom} and ${maxzoom}`);
        }
        const result = await new MosaicReader(mosaic, layer, ctx).tile(tms, path.x, path.y, path.z, {
          ...values,
          tilesize: 256 * path.scale,
          ...(tile.buffer ? { buffer: tile.buffer } : {}),
          ...(tile.padding ? { padding: tile.padding } : {}),
          pixelSelection: (q['pixel_selection'] as PixelSelection | undefined) ?? 'first',
        });
        if (settings.mosaicAssetsHeader) {
          const header = headerValue(result.assetsUsed);
          if (header !== undefined) reply.header('x-assets', header);
        }
        return sendImage(reply, services.renderer, result.image, path.format, render);
      },
    );

    const tileDocQuery = [...imageQuery, tilejsonSchema];

    app.get('/:tileMatrixSetId/tilejson.json', { schema: { params: tmsParams, querystring: querySchema(['url'], ...tileDocQuery) } }, async (req, reply) => {
      const request = req as FastifyRequest<{ Params: { tileMatrixSetId: string }; Querystring: TileDocQuery }>;
      const q = request.query;
      parseImageParams(q, false);
      const tms = getTms(request.params.tileMatrixSetId)!;
      const mosaic = await store.open(q.url);
      const zooms = mosaic.zooms(tms);
      const minzoom = q.minzoom ?? zooms.minzoom;
      const maxzoom = q.maxzoom ?? zooms.maxzoom;
      if (minzoom < 0 || maxzoom > 30) throw badRequest('TileJSON minzoom and maxzoom must be between 0 and 30');
      const suffix = `@${q.tile_scale}x${q.tile_format ? `.${q.tile_format}` : ''}`;
      const tiles = `${baseUrl(request)}/mosaicjson/tiles/${tms.id}/{z}/{x}/{y}${suffix}${forwardedQuery(request, TILEJSON_DROPPED)}`;
      const [cx, cy, cz] = mosaic.doc.center;
      return sendJson(reply, tileJsonModel({ tiles, minzoom, maxzoom, bounds: mosaic.bounds, center: [cx, cy, q.minzoom ?? cz] }));
    });

    app.get('/:tileMatrixSetId/WMTSCapabilities.xml', { schema: { params: tmsParams, querystring: querySchema(['url'], ...tileDocQuery) } }, async (req, reply) => {
      const request = req as FastifyRequest<{ Params: { tileMatrixSetId: string }; Querystring: TileDocQuery }>;
      const q = request.query;
      parseImageParams(q, false);
      const tms = getTms(request.params.tileMatrixSetId)!;
      const format = q.tile_format ?? 'png';
      const mosaic = await store.open(q.url);
      const zooms = mosaic.zooms(tms);
      const minzoom = q.minzoom ?? zooms.minzoom;
      const maxzoom = q.maxzoom ?? zooms.maxzoom;
      checkZoomRange(tms, minzoom, maxzoom);
      const template =
        `${baseUrl(request)}/mosaicjson/tiles/${tms.id}/{TileMatrix}/{TileCol}/{TileRow}@${q.tile_scale}x.${format}` + forwardedQuery(request, WMTS_DROPPED);
      const xml = wmtsCapabilities({
        title: q.url,
        layerName: 'Mosaic',
        requestUrl: requestUrl(request),
        tileTemplate: template,
        mediaType: MEDIA_TYPES[format],
        tms,
        // TiTiler 0.18 leaves this empty for mosaics (fixed in 0.19); clients need it.
        supportedCrs: tms.def.crs,
        bounds: mosaic.bounds,
        minzoom,
        maxzoom,
        num: pyFloatRepr,
      });
      return reply.type('application/xml').send(Buffer.from(xml, 'utf8'));
    });

    app.get(
      '/point/:lonlat',
      { schema: { querystring: querySchema(['url'], urlSchema, layerSchema, datasetSchema, coordCrsSchema) } },
      async (req, reply) => {
        const request = req as Req;
        const lonlat = parseLonLat(request.params['lonlat']!);
        if (!lonlat) return notFound(reply);
        const q = request.query;
        const layer = mosaicLayer(q);
        const values = valueOptions(q);
        const coordCrs = parseCrsParam(q, 'coord_crs') ?? WGS84;
        const mosaic = await store.open(q.url);
        const points = await new MosaicReader(mosaic, layer, ctx).point(lonlat[0], lonlat[1], coordCrs, values);
        return sendJson(reply, {
          coordinates: floats(lonlat),
          values: points.map((p) => [p.asset, floats(p.values), p.bandNames]),
        });
      },
    );

    const assetsSchema = { querystring: querySchema(['url'], urlSchema, coordCrsSchema) };

    // One route for both `{minx},{miny},{maxx},{maxy}/assets` and `{lon},{lat}/assets`: the
    // number of values decides, so a bbox is never read as a point.
    app.get('/:coords/assets', { schema: assetsSchema }, async (req, reply) => {
      const request = req as Req;
      const coords = parseCoords(request.params['coords']!);
      if (!coords) return notFound(reply);
      const coordCrs = parseCrsParam(request.query, 'coord_crs') ?? WGS84;
      const mosaic = await store.open(request.query.url);
      if ('bbox' in coords) return sendJson(reply, mosaic.assetsForBbox(coords.bbox, coordCrs));
      return sendJson(reply, mosaic.assetsForPoint(coords.point[0], coords.point[1], coordCrs));
    });

    const tileAssets = async (req: FastifyRequest, reply: FastifyReply, tms: TileMatrixSet): Promise<FastifyReply> => {
      const request = req as Req;
      const [z, x, y] = pathNumbers(
        [
          ['z', request.params['z']!],
          ['x', request.params['x']!],
          ['y', request.params['y']!],
        ],
        'int',
      );
      const mosaic = await store.open(request.query.url);
      return sendJson(reply, mosaic.assetsForTile(tms, x!, y!, z!));
    };
    app.get('/:z/:x/:y/assets', { schema: { querystring: querySchema(['url'], urlSchema) } }, (req, reply) => tileAssets(req, reply, webMercator));
    app.get('/:tileMatrixSetId/:z/:x/:y/assets', { schema: { params: { type: 'object', properties: tmsPathSchema }, querystring: querySchema(['url'], urlSchema) } }, (req, reply) =>
      tileAssets(req, reply, getTms((req as Req).params['tileMatrixSetId']!)!),
    );
  };
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
