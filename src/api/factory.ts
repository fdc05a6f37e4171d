/**
 * The route factory (TiTiler's `TilerFactory(reader=…)`): registers the image route families for any
 * reader family — tiles (in a grid, and the deprecated forms without one), TileJSON, WMTS
 * capabilities, the map page, point, preview, bbox, feature and statistics — with one definition per parameter
 * family. A reader family (readers/cog.ts, readers/stac.ts …) says only how to open its reader from
 * a request and which layer parameters it takes; routes that are a family's alone (STAC `/assets`,
 * `/asset_statistics`) stay in its own route file.
 *
 * Every route parses all of its parameters before anything is read, so a bad query gets the same
 * 4xx on a tile, a TileJSON and a WMTS document.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { Services } from '../services.js';
import { getTms, WEB_MERCATOR_QUAD } from '../tms/registry.js';
import { checkTile, type BBox, type TileMatrixSet } from '../tms/grid.js';
import {
  algorithmSchema,
  coordCrsSchema,
  datasetSchema,
  dstCrsSchema,
  gridQuerySchema,
  parseAlgorithm,
  parseCrsParam,
  parseDataset,
  parseSize,
  parseTile,
  partSizeSchema,
  previewSizeSchema,
  querySchema,
  renderSchema,
  tileSchema,
  tilejsonSchema,
  tmsPathSchema,
  urlSchema,
  IMAGE_FORMATS,
  type ImageFormat,
  type Query,
} from './params.js';
import { parseBBoxPath, parseFormat, parseLonLat, parseSizeFormat, parseTilePath } from './path-params.js';
import { parseRenderOptions, sendImage } from './image-response.js';
import { parseFeatureBody, parseFeatureOrCollectionBody, featureBodyToJson } from './geojson.js';
import { sendJson } from './reply.js';
import { baseUrl, forwardedQuery, requestUrl } from './urls.js';
import { tileJsonModel } from './models.js';
import { mapPageResponder } from './pages/respond.js';
import { wmtsCapabilities } from '../ogc/wmts.js';
import { MEDIA_TYPES } from '../image/formats.js';
import { floats, pyFloatRepr } from '../pyjson.js';
import { TesseraError, badRequest } from '../errors.js';
import type { ValueOptions } from '../source/reader.js';
import type { RenderSpec, StatisticsSpec } from '../image/post-process.js';
import { parseStatisticsOptions } from '../image/statistics.js';
import { statisticsMapToJson } from '../image/statistics-json.js';
import type { ReadLimits, Reader, ReaderImage, Zooms } from '../readers/reader.js';

type Schema = Record<string, unknown>;
type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query & { url: string } }>;

const WGS84 = 'EPSG:4326';

/** What the metadata routes need of a dataset, without reading a band (TileJSON, WMTS). */
export interface DatasetSummary {
  bounds: BBox;
  zooms(tms: TileMatrixSet): Promise<Zooms>;
  /** TileJSON's center when the dataset names one (a mosaic document); else the bounds' middle. */
  center?: [number, number, number];
}

/** A family of readers, as the factory mounts it. */
export interface ReaderFamily {
  /** Where the family is mounted ('/cog'): TileJSON and WMTS point their tile URLs under it. */
  prefix: string;
  /** Query schema of the family's layer parameters (BidxExprParams, AssetsBidxExprParams …). */
  layerSchema: Schema;
  /** Layer checks that come before schema validation (TiTiler's "assets or expression" 400). */
  layerFirst?: preValidationAsyncHookHandler;
  /** Parses the layer parameters (400 on semantic mistakes) without reading anything. */
  checkLayer(q: Query): void;
  /** The reader of a request: its dataset (`url`) and its layer. */
  open(q: Query & { url: string }): Promise<Reader>;
  /** The reader for statistics routes, where the family's layer may default (STAC: every asset). */
  openForStatistics?(q: Query & { url: string }): Promise<Reader>;
  /** Bounds and zooms of the dataset alone. */
  summary(q: Query & { url: string }): Promise<DatasetSummary>;
  /** POST /statistics weighs each pixel by the fraction a feature covers (rio-tiler's Reader does; its STAC reader does not). */
  coverageWeighted?: boolean;
  /** Route groups the family takes from the factory (default all); a family answers the others its own way. */
  mount?: { point?: boolean; wholeImages?: boolean; statistics?: boolean; featureStatistics?: boolean };
  /** WMTS layer name (TiTiler: 'Dataset', 'Mosaic') and whether `use_epsg` is taken (default true). */
  wmts?: { layerName: string; useEpsg: boolean };
}

/** DatasetParams, as read options. */
export function valueOptions(q: Query): ValueOptions {
  const d = parseDataset(q);
  return { unscale: d.unscale, resampling: d.resampling, reproject: d.reproject, ...(d.nodata !== undefined ? { nodata: d.nodata } : {}) };
}

/** PartFeatureParams + CoordCRSParams + DstCRSParams: `dst_crs` defaults to the coordinates' CRS. */
export function partOptions(q: Query, fixed?: { width: number; height: number }) {
  const size = parseSize(q, fixed);
  const coordCrs = parseCrsParam(q, 'coord_crs') ?? WGS84;
  const dstCrs = parseCrsParam(q, 'dst_crs') ?? coordCrs;
  return { size, coordCrs, dstCrs };
}

/** StatisticsParams and HistogramParams (`p` integers and `c` numbers are validated as FastAPI does: 422). */
export const statisticsSchema: Schema = {
  categorical: { type: 'boolean' },
  c: { type: 'array', items: { type: 'number' } },
  p: { type: 'array', items: { type: 'integer' } },
  histogram_bins: { type: 'string' },
  histogram_range: { type: 'string' },
};

/** Features read at once by POST /statistics: each read already runs its sources in parallel. */
const FEATURE_CONCURRENCY = 8;
/** Largest FeatureCollection POST /statistics takes; zonal statistics over more go in batches. */
export const MAX_STATISTICS_FEATURES = 1000;

/** Keys a TileJSON / map tile URL does not forward (TiTiler's list, compared lower-case). */
const TILEJSON_DROPPED = ['tilematrixsetid', 'tile_format', 'tile_scale', 'minzoom', 'maxzoom'];
const WMTS_DROPPED = [...TILEJSON_DROPPED, 'service', 'use_epsg', 'request'];

/** `format` and `scale` as query parameters, for the routes whose path has no place for them. */
const formatQuerySchema: Schema = {
  format: { type: 'string', enum: [...IMAGE_FORMATS] },
  scale: { type: 'integer', exclusiveMinimum: 0, maximum: 4 },
};

function queryFormat(req: FastifyRequest): ImageFormat | undefined {
  return (req as Req).query['format'] as ImageFormat | undefined;
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('application/json').send({ detail: 'Not Found' });
}

/** The render step's spec, with the expression the reader left to it. */
function renderSpec(render: RenderSpec, result: ReaderImage): RenderSpec {
  return result.expression ? { ...render, expression: result.expression } : render;
}

function algorithmOf(q: Query) {
  const name = typeof q['algorithm'] === 'string' ? q['algorithm'] : undefined;
  return parseAlgorithm(name, typeof q['algorithm_params'] === 'string' ? q['algorithm_params'] : undefined);
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

/** The grid of a route: its `{tileMatrixSetId}` path piece, or (forms without one) the query's, WebMercatorQuad by default. */
function gridOf(request: Req): TileMatrixSet {
  const id = request.params['tileMatrixSetId'] ?? (request.query['tileMatrixSetId'] as string | undefined) ?? WEB_MERCATOR_QUAD;
  return getTms(id)!;
}

export function readerRoutes(services: Services, family: ReaderFamily) {
  const settings = services.settings;
  const limits: ReadLimits = { maxOutputPixels: settings.maxOutputPixels, maxSourcePixels: settings.maxSourcePixels, gate: services.wholeImages };
  const statisticsLimits: ReadLimits = { ...limits, statistics: true };
  const layer = family.layerSchema;
  const imageQuery = [urlSchema, layer, datasetSchema, algorithmSchema, renderSchema];
  const preValidation = family.layerFirst ? { preValidation: family.layerFirst } : {};
  const mount = { point: true, wholeImages: true, statistics: true, featureStatistics: true, ...family.mount };
  const mapPage = mapPageResponder(settings);

  return async function plugin(app: FastifyInstance): Promise<void> {
    // ---- tiles ----------------------------------------------------------------------------------
    const tileParams = { type: 'object', properties: { z: { type: 'string' }, x: { type: 'string' }, last: { type: 'string' } } };
    const tile = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const request = req as Req;
      const q = request.query;
      const path = parseTilePath(request.params['z']!, request.params['x']!, request.params['last']!, {
        ...(q['scale'] !== undefined ? { scale: q['scale'] as number } : {}),
        ...(q['format'] !== undefined ? { format: q['format'] as ImageFormat } : {}),
      });
      const tms = gridOf(request);
      const margins = parseTile(q);
      const values = valueOptions(q);
      const render = parseRenderOptions(q);
      family.checkLayer(q);
      checkTile(tms, path.x, path.y, path.z);
      const reader = await family.open(q);
      const result = await reader.tile(
        tms,
        { x: path.x, y: path.y, z: path.z },
        {
          ...values,
          limits,
          tilesize: 256 * path.scale,
          ...(margins.buffer ? { buffer: margins.buffer } : {}),
          ...(margins.padding ? { padding: margins.padding } : {}),
          deferExpression: true,
        },
      );
      if (result.headers) reply.headers(result.headers);
      return sendImage(reply, services.renderer, result.image, path.format, renderSpec(render, result));
    };
    // Where the path leaves them out, `scale` and `format` come from the query (TiTiler's routes
    // without `@{scale}x` or `.{format}` take them as query parameters).
    const tileQuery = [...imageQuery, tileSchema, formatQuerySchema];
    app.get('/tiles/:tileMatrixSetId/:z/:x/:last', {
      schema: { params: { ...tileParams, properties: { ...tileParams.properties, ...tmsPathSchema } }, querystring: querySchema(['url'], ...tileQuery) },
      config: { tileCache: true },
      ...preValidation,
    }, tile);
    app.get('/tiles/:z/:x/:last', { schema: { params: tileParams, querystring: querySchema(['url'], ...tileQuery, gridQuerySchema), deprecated: true }, config: { tileCache: true }, ...preValidation }, tile);

    // ---- TileJSON and WMTS ---------------------------------------------------------------------
    const tileDocQuery = [...imageQuery, tileSchema, tilejsonSchema];
    const tileDoc = async (request: Req): Promise<{ tms: TileMatrixSet; summary: DatasetSummary; zooms: Zooms }> => {
      const q = request.query;
      // Everything the tiles will parse, parsed now: a query whose tiles would all fail is refused here.
      parseTile(q);
      valueOptions(q);
      parseRenderOptions(q);
      family.checkLayer(q);
      const tms = gridOf(request);
      const summary = await family.summary(q);
      const defaults = await summary.zooms(tms);
      const zooms = { minzoom: (q['minzoom'] as number | undefined) ?? defaults.minzoom, maxzoom: (q['maxzoom'] as number | undefined) ?? defaults.maxzoom };
      return { tms, summary, zooms };
    };

    const tilejson = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const request = req as Req;
      const q = request.query;
      const { tms, summary, zooms } = await tileDoc(request);
      if (zooms.minzoom < 0 || zooms.maxzoom > 30) throw badRequest('TileJSON minzoom and maxzoom must be between 0 and 30');
      const format = q['tile_format'] as ImageFormat | undefined;
      const suffix = `@${q['tile_scale'] as number}x${format ? `.${format}` : ''}`;
      const tiles = `${baseUrl(request)}${family.prefix}/tiles/${tms.id}/{z}/{x}/{y}${suffix}${forwardedQuery(request, TILEJSON_DROPPED)}`;
      const [minx, miny, maxx, maxy] = summary.bounds;
      const center: [number, number, number] = summary.center
        ? [summary.center[0], summary.center[1], (q['minzoom'] as number | undefined) ?? summary.center[2]]
        : [(minx + maxx) / 2, (miny + maxy) / 2, zooms.minzoom];
      return sendJson(reply, tileJsonModel({ tiles, ...zooms, bounds: summary.bounds, center }));
    };
    const tmsParams = { type: 'object', properties: tmsPathSchema, required: ['tileMatrixSetId'] };
    app.get('/:tileMatrixSetId/tilejson.json', { schema: { params: tmsParams, querystring: querySchema(['url'], ...tileDocQuery) }, ...preValidation }, tilejson);
    app.get('/tilejson.json', { schema: { querystring: querySchema(['url'], ...tileDocQuery, gridQuerySchema), deprecated: true }, ...preValidation }, tilejson);

    const wmtsOptions = family.wmts ?? { layerName: 'Dataset', useEpsg: true };
    const wmtsQuery = wmtsOptions.useEpsg ? [...tileDocQuery, { use_epsg: { type: 'boolean' } }] : tileDocQuery;
    const wmts = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const request = req as Req;
      const q = request.query;
      const { tms, summary, zooms } = await tileDoc(request);
      checkZoomRange(tms, zooms.minzoom, zooms.maxzoom);
      const format = (q['tile_format'] as ImageFormat | undefined) ?? 'png';
      const template =
        `${baseUrl(request)}${family.prefix}/tiles/${tms.id}/{TileMatrix}/{TileCol}/{TileRow}@${q['tile_scale'] as number}x.${format}` + forwardedQuery(request, WMTS_DROPPED);
      const xml = wmtsCapabilities({
        title: q.url,
        layerName: wmtsOptions.layerName,
        requestUrl: requestUrl(request),
        tileTemplate: template,
        mediaType: MEDIA_TYPES[format],
        tms,
        supportedCrs: wmtsOptions.useEpsg && q['use_epsg'] ? epsgName(tms) : tms.def.crs,
        bounds: summary.bounds,
        ...zooms,
        num: pyFloatRepr,
      });
      return reply.type('application/xml').send(Buffer.from(xml, 'utf8'));
    };
    app.get('/:tileMatrixSetId/WMTSCapabilities.xml', { schema: { params: tmsParams, querystring: querySchema(['url'], ...wmtsQuery) }, ...preValidation }, wmts);
    app.get('/WMTSCapabilities.xml', { schema: { querystring: querySchema(['url'], ...wmtsQuery, gridQuerySchema), deprecated: true }, ...preValidation }, wmts);

    // ---- map page: the TileJSON above drawn on a Leaflet map, its query checked the same way ----
    const map = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const request = req as Req;
      const q = request.query;
      parseTile(q);
      valueOptions(q);
      parseRenderOptions(q);
      family.checkLayer(q);
      return mapPage(request, reply, family.prefix, gridOf(request), q.url);
    };
    app.get('/:tileMatrixSetId/map', { schema: { params: tmsParams, querystring: querySchema(['url'], ...tileDocQuery) }, ...preValidation }, map);
    app.get('/map', { schema: { querystring: querySchema(['url'], ...tileDocQuery, gridQuerySchema), deprecated: true }, ...preValidation }, map);

    // ---- point ---------------------------------------------------------------------------------
    if (mount.point) app.get('/point/:lonlat', { schema: { querystring: querySchema(['url'], urlSchema, layer, datasetSchema, coordCrsSchema) }, ...preValidation }, async (req, reply) => {
      const request = req as Req;
      const lonlat = parseLonLat(request.params['lonlat']!);
      if (!lonlat) return notFound(reply);
      const q = request.query;
      const values = valueOptions(q);
      const coordCrs = parseCrsParam(q, 'coord_crs') ?? WGS84;
      family.checkLayer(q);
      const reader = await family.open(q);
      if (!reader.point) return notFound(reply);
      const point = await reader.point(lonlat[0], lonlat[1], coordCrs, values);
      return sendJson(reply, { coordinates: floats(lonlat), values: floats(point.values), band_names: point.bandNames });
    });

    if (mount.wholeImages) wholeImageRoutes(app);
    if (mount.statistics) statisticsRoutes(app);
  };

  // ---- whole images: preview, bbox, feature ------------------------------------------------------
  function wholeImageRoutes(app: FastifyInstance): void {
    const previewSchema = { querystring: querySchema(['url'], ...imageQuery, previewSizeSchema, dstCrsSchema) };
    const previewWithFormat = { querystring: querySchema(['url'], ...imageQuery, previewSizeSchema, dstCrsSchema, { format: formatQuerySchema['format'] }) };
    const preview = async (req: FastifyRequest, reply: FastifyReply, format: ImageFormat | undefined): Promise<FastifyReply> => {
      const q = (req as Req).query;
      const values = valueOptions(q);
      const size = parseSize(q);
      const dstCrs = parseCrsParam(q, 'dst_crs');
      const render = parseRenderOptions(q);
      family.checkLayer(q);
      const reader = await family.open(q);
      if (!reader.preview) return notFound(reply);
      const result = await reader.preview({ ...size, ...(dstCrs ? { dstCrs } : {}) }, { ...values, limits, deferExpression: true });
      return sendImage(reply, services.renderer, result.image, format, renderSpec(render, result));
    };
    app.get('/preview', { schema: previewWithFormat, config: { large: true }, ...preValidation }, (req, reply) => preview(req, reply, queryFormat(req)));
    app.get('/preview.:format', { schema: previewSchema, config: { large: true }, ...preValidation }, (req, reply) => preview(req, reply, parseFormat((req as Req).params['format']!)));

    const partSchema = { querystring: querySchema(['url'], ...imageQuery, partSizeSchema, dstCrsSchema, coordCrsSchema) };
    app.get('/bbox/*', { schema: partSchema, config: { large: true }, ...preValidation }, async (req, reply) => {
      const request = req as Req;
      const parsed = parseBBoxPath(request.params['*']!);
      if (!parsed) return notFound(reply);
      const q = request.query;
      const values = valueOptions(q);
      const fixed = parsed.width !== undefined && parsed.height !== undefined ? { width: parsed.width, height: parsed.height } : undefined;
      const { size, coordCrs, dstCrs } = partOptions(q, fixed);
      const render = parseRenderOptions(q);
      const [minx, miny, maxx, maxy] = parsed.bbox;
      if (!parsed.bbox.every(Number.isFinite) || minx >= maxx || miny >= maxy) {
        throw new TesseraError('BadRequest', `Invalid bbox ${parsed.bbox.join(',')}: expected finite minx < maxx and miny < maxy`);
      }
      family.checkLayer(q);
      const reader = await family.open(q);
      if (!reader.part) return notFound(reply);
      const result = await reader.part(parsed.bbox, { ...size, boundsCrs: coordCrs, dstCrs }, { ...values, limits, deferExpression: true });
      return sendImage(reply, services.renderer, result.image, parsed.format, renderSpec(render, result));
    });

    const featureSchema = { querystring: querySchema(['url'], ...imageQuery, partSizeSchema, dstCrsSchema, coordCrsSchema) };
    const featureWithFormat = { querystring: querySchema(['url'], ...imageQuery, partSizeSchema, dstCrsSchema, coordCrsSchema, { format: formatQuerySchema['format'] }) };
    const feature = async (req: FastifyRequest, reply: FastifyReply, format: ImageFormat | undefined, fixed?: { width: number; height: number }): Promise<FastifyReply> => {
      const q = (req as Req).query;
      const shape = parseFeatureBody(req.body);
      const values = valueOptions(q);
      const { size, coordCrs, dstCrs } = partOptions(q, fixed);
      const render = parseRenderOptions(q);
      family.checkLayer(q);
      const reader = await family.open(q);
      if (!reader.feature) return notFound(reply);
      const result = await reader.feature(shape, coordCrs, { ...size, dstCrs }, { ...values, limits, deferExpression: true });
      return sendImage(reply, services.renderer, result.image, format, renderSpec(render, result));
    };
    app.post('/feature', { schema: featureWithFormat, config: { large: true }, ...preValidation }, (req, reply) => feature(req, reply, queryFormat(req)));
    app.post('/feature.:format', { schema: featureSchema, config: { large: true }, ...preValidation }, (req, reply) => feature(req, reply, parseFormat((req as Req).params['format']!)));
    app.post('/feature/:sizeformat', { schema: featureSchema, config: { large: true }, ...preValidation }, (req, reply) => {
      const parsed = parseSizeFormat((req as Req).params['sizeformat']!);
      if (!parsed) return notFound(reply);
      return feature(req, reply, parsed.format, { width: parsed.width, height: parsed.height });
    });

  }

  // ---- statistics ------------------------------------------------------------------------------
  function statisticsRoutes(app: FastifyInstance): void {
    const openForStatistics = (q: Query & { url: string }): Promise<Reader> => (family.openForStatistics ?? family.open)(q);
    const statisticsSpec = (q: Query, result: ReaderImage): StatisticsSpec => {
      const algorithm = algorithmOf(q);
      return {
        ...(result.expression ? { expression: result.expression } : {}),
        algorithm: algorithm ? { id: algorithm.id, params: algorithm.params } : undefined,
        options: parseStatisticsOptions(q),
        ...(result.coverage ? { coverage: result.coverage } : {}),
      };
    };

    app.get(
      '/statistics',
      { config: { large: true }, schema: { querystring: querySchema(['url'], urlSchema, layer, datasetSchema, previewSizeSchema, algorithmSchema, statisticsSchema) } },
      async (req, reply) => {
        const q = (req as Req).query;
        const values = valueOptions(q);
        const size = parseSize(q);
        algorithmOf(q);
        parseStatisticsOptions(q);
        const reader = await openForStatistics(q);
        if (!reader.preview) return notFound(reply);
        // Read here, summarised in a render thread: sorting 64 M values for percentiles takes seconds.
        const result = await reader.preview(size, { ...values, limits: statisticsLimits, deferExpression: true });
        return sendJson(reply, statisticsMapToJson(await services.renderer.statistics(result.image, statisticsSpec(q, result))));
      },
    );

    if (!mount.featureStatistics) return;
    app.post(
      '/statistics',
      {
        config: { large: true },
        schema: { querystring: querySchema(['url'], urlSchema, layer, datasetSchema, partSizeSchema, dstCrsSchema, coordCrsSchema, algorithmSchema, statisticsSchema) },
      },
      async (req, reply) => {
        const q = (req as Req).query;
        const body = parseFeatureOrCollectionBody(req.body);
        if (body.features.length > MAX_STATISTICS_FEATURES) {
          throw badRequest(`Too many features: ${body.features.length}, at most ${MAX_STATISTICS_FEATURES} per request`);
        }
        const values = valueOptions(q);
        const { size, coordCrs, dstCrs } = partOptions(q);
        algorithmOf(q);
        parseStatisticsOptions(q);
        const reader = await openForStatistics(q);
        if (!reader.statisticsOfFeatures) return notFound(reply);
        const stats = await reader.statisticsOfFeatures(
          body.features.map((f) => f.shape),
          coordCrs,
          { ...size, boundsCrs: coordCrs, dstCrs, alignBoundsWithDataset: true },
          { ...values, limits: statisticsLimits, deferExpression: true, weighByCoverage: family.coverageWeighted === true },
          FEATURE_CONCURRENCY,
          (result) => services.renderer.statistics(result.image, statisticsSpec(q, result)),
        );
        return sendJson(reply, featureBodyToJson(body, stats.map(statisticsMapToJson)), 'application/geo+json');
      },
    );
  }
}
