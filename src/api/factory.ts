/**
 * The route factory (TiTiler's `TilerFactory(reader=…)`): registers the image route families for any
 * reader family — tiles (in a grid, and the deprecated forms without one), TileJSON, WMTS
 * capabilities, the map page, point, preview, bbox, feature and statistics. A reader family
 * (api/routes/cog.ts, stac.ts, mosaic.ts) says how to open its reader and which layer parameters
 * it takes; routes that are a family's alone stay in its own route file.
 *
 * Each route lists its parameter families (api/params/) and parses all of them before anything is
 * read, so a bad query gets the same 4xx on a tile, a TileJSON, a WMTS document and a map page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { Services } from '../services.js';
import { getTms } from '../tms/registry.js';
import { checkTile, type BBox, type TileMatrixSet } from '../tms/grid.js';
import {
  coordCrs,
  datasetUrl,
  datasetValues,
  dstCrs,
  formatQuery,
  gridQuery,
  partSize,
  postProcess,
  previewSize,
  rendering,
  routeQuery,
  statistics,
  tileDocument,
  tileFormatQuery,
  tileMargins,
  tmsPathSchema,
  wmtsEpsg,
  type ParamFamily,
  type Query,
} from './params/index.js';
import { parseBBoxPath, parseFormat, parseLonLat, parseSizeFormat, parseTilePath } from './path-params.js';
import { sendImage } from './image-response.js';
import { parseFeatureBody, parseFeatureOrCollectionBody, featureBodyToJson } from './geojson.js';
import { sendJson } from './reply.js';
import { inputTags } from './etag.js';
import { keepWhole } from './tile-cache.js';
import { baseUrl, forwardedQuery, requestUrl } from './urls.js';
import { tileJsonModel } from './models.js';
import { mapPageResponder } from './pages/respond.js';
import { wmtsCapabilities } from '../ogc/wmts.js';
import { MEDIA_TYPES, type ImageFormat } from '../image/formats.js';
import { floats, pyFloatRepr } from '../pyjson.js';
import { TesseraError, badRequest } from '../errors.js';
import type { RenderSpec, StatisticsSpec } from '../image/post-process.js';
import { statisticsMapToJson } from '../image/statistics-json.js';
import type { ReadLimits, Reader, ReaderImage, Zooms } from '../readers/reader.js';

type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query }>;

/** What the metadata routes need of a dataset, without reading a band (TileJSON, WMTS). */
export interface DatasetSummary {
  bounds: BBox;
  zooms(tms: TileMatrixSet): Promise<Zooms>;
  /** TileJSON's center when the dataset names one (a mosaic document); else the bounds' middle. */
  center?: [number, number, number];
}

/** A family of readers, as the factory mounts it; `L` is what its layer parameters parse into. */
export interface ReaderFamily<L> {
  /** Where the family is mounted ('/cog'): TileJSON and WMTS point their tile URLs under it. */
  prefix: string;
  /** The layer parameters of image, point and document routes (BidxExprParams, AssetsBidxExprParams …). */
  layer: ParamFamily<L>;
  /** The layer of the statistics routes, where it may be left out (STAC: every asset). Default: `layer`. */
  statisticsLayer?: ParamFamily<L>;
  /** Layer checks that come before schema validation (TiTiler's "assets or expression" 400). */
  layerFirst?: preValidationAsyncHookHandler;
  /** The reader of a dataset (`url`) and layer. */
  open(url: string, layer: L): Promise<Reader>;
  /** Bounds and zooms of the dataset alone. */
  summary(url: string): Promise<DatasetSummary>;
  /** POST /statistics weighs each pixel by the fraction a feature covers (rio-tiler's Reader does; its STAC reader does not). */
  coverageWeighted?: boolean;
  /** Route groups the family takes from the factory (default all); a family answers the others its own way. */
  mount?: { point?: boolean; wholeImages?: boolean; statistics?: boolean; featureStatistics?: boolean };
  /** WMTS layer name (TiTiler: 'Dataset', 'Mosaic') and whether `use_epsg` is taken (default true). */
  wmts?: { layerName: string; useEpsg: boolean };
}

/** Features read at once by POST /statistics: each read already runs its sources in parallel. */
const FEATURE_CONCURRENCY = 8;
/** Largest FeatureCollection POST /statistics takes; zonal statistics over more go in batches. */
const MAX_STATISTICS_FEATURES = 1000;

/** Keys a TileJSON / map tile URL does not forward (TiTiler's list, compared lower-case). */
const TILEJSON_DROPPED = ['tilematrixsetid', 'tile_format', 'tile_scale', 'minzoom', 'maxzoom'];
const WMTS_DROPPED = [...TILEJSON_DROPPED, 'service', 'use_epsg', 'request'];

function notFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('application/json').send({ detail: 'Not Found' });
}

/** The render step's spec: the algorithm, the rendering, and the expression the reader left to it. */
function renderSpec(algorithm: RenderSpec['algorithm'], render: Omit<RenderSpec, 'algorithm' | 'expression'>, result: ReaderImage): RenderSpec {
  return { ...render, algorithm, ...(result.expression ? { expression: result.expression } : {}) };
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

/** The route's grid: its `{tileMatrixSetId}` path piece, else the query's (the deprecated forms). */
function gridOf(request: Req, fromQuery: TileMatrixSet | undefined): TileMatrixSet {
  const id = request.params['tileMatrixSetId'];
  return id !== undefined ? getTms(id)! : fromQuery!;
}

export function readerRoutes<L>(services: Services, family: ReaderFamily<L>) {
  const settings = services.settings;
  const limits: ReadLimits = { maxOutputPixels: settings.maxOutputPixels, maxSourcePixels: settings.maxSourcePixels, gate: services.wholeImages };
  const statisticsLimits: ReadLimits = { ...limits, statistics: true };
  const preValidation = family.layerFirst ? { preValidation: family.layerFirst } : {};
  const mount = { point: true, wholeImages: true, statistics: true, featureStatistics: true, ...family.mount };
  const mapPage = mapPageResponder(settings);
  /** 304 before reading when the client holds the answer already (api/etag.ts). */
  const unchanged = inputTags(settings);
  const layer = family.layer;
  const statisticsLayer = family.statisticsLayer ?? family.layer;
  /** The image families every picture route takes, in the order TiTiler's dependencies run. */
  const image = { url: datasetUrl, layer, values: datasetValues, algorithm: postProcess, render: rendering };
  const tmsParams = { type: 'object', properties: tmsPathSchema, required: ['tileMatrixSetId'] };

  return async function plugin(app: FastifyInstance): Promise<void> {
    // ---- tiles ----------------------------------------------------------------------------------
    // Where the path leaves them out, `scale` and `format` come from the query (TiTiler's routes
    // without `@{scale}x` or `.{format}` take them as query parameters).
    const tileQuery = routeQuery({ ...image, margins: tileMargins, fallback: tileFormatQuery });
    const deprecatedTileQuery = routeQuery({ ...image, margins: tileMargins, fallback: tileFormatQuery, grid: gridQuery });
    const tile = async (req: FastifyRequest, reply: FastifyReply, query: typeof tileQuery | typeof deprecatedTileQuery): Promise<FastifyReply> => {
      const request = req as Req;
      // The path first (its 422s come before the query's 400s), its format and scale falling back on the query's.
      const path = parseTilePath(request.params['z']!, request.params['x']!, request.params['last']!, tileFormatQuery.parse(request.query));
      const p = query.parse(request.query);
      const tms = gridOf(request, 'grid' in p ? (p.grid as TileMatrixSet) : undefined);
      checkTile(tms, path.x, path.y, path.z);
      const reader = await family.open(p.url, p.layer);
      if (await unchanged(request, reply, reader, { tms, z: path.z })) return reply;
      // Made in turn with the other tiles (concurrency.ts, AdmissionGate); a client that leaves
      // while its tile waits for its turn is dropped from the queue.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort(new TesseraError('ClientGone', 'the client went away before its tile was made')));
      return services.tileAdmission.run(async () => {
        const result = await reader.tile(
          tms,
          { x: path.x, y: path.y, z: path.z },
          {
            ...p.values,
            limits,
            tilesize: 256 * path.scale,
            ...(p.margins.buffer ? { buffer: p.margins.buffer } : {}),
            ...(p.margins.padding ? { padding: p.margins.padding } : {}),
            deferExpression: true,
          },
        );
        if (result.headers) reply.headers(result.headers);
        const spec = renderSpec(p.algorithm, p.render, result);
        // A tile answered in part: the whole one goes to the tile cache once made, with the tag of its inputs.
        if (result.later)
          keepWhole(services.tiles, request.url, reply.getHeader('etag'), result.later, (img) => services.renderer.render(img, path.format, spec));
        return await sendImage(reply, services.renderer, result.image, path.format, spec);
      }, gone.signal);
    };
    const tileParams = { type: 'object', properties: { z: { type: 'string' }, x: { type: 'string' }, last: { type: 'string' } } };
    app.get(
      '/tiles/:tileMatrixSetId/:z/:x/:last',
      {
        schema: { params: { ...tileParams, properties: { ...tileParams.properties, ...tmsPathSchema } }, querystring: tileQuery.schema },
        config: { tileCache: true },
        ...preValidation,
      },
      (req, reply) => tile(req, reply, tileQuery),
    );
    app.get(
      '/tiles/:z/:x/:last',
      { schema: { params: tileParams, querystring: deprecatedTileQuery.schema, deprecated: true }, config: { tileCache: true }, ...preValidation },
      (req, reply) => tile(req, reply, deprecatedTileQuery),
    );

    // ---- TileJSON, WMTS and the map page: everything the tiles parse, parsed here too -------------
    const documentFamilies = { ...image, margins: tileMargins, document: tileDocument };
    const tileDoc = async (p: { url: string; document: { minzoom: number | undefined; maxzoom: number | undefined } }, tms: TileMatrixSet) => {
      const summary = await family.summary(p.url);
      const defaults = await summary.zooms(tms);
      const zooms = { minzoom: p.document.minzoom ?? defaults.minzoom, maxzoom: p.document.maxzoom ?? defaults.maxzoom };
      return { summary, zooms };
    };

    const tilejsonQuery = routeQuery(documentFamilies);
    const deprecatedTilejsonQuery = routeQuery({ ...documentFamilies, grid: gridQuery });
    const tilejson = async (req: FastifyRequest, reply: FastifyReply, query: typeof tilejsonQuery | typeof deprecatedTilejsonQuery): Promise<FastifyReply> => {
      const request = req as Req;
      const p = query.parse(request.query);
      const tms = gridOf(request, 'grid' in p ? (p.grid as TileMatrixSet) : undefined);
      const { summary, zooms } = await tileDoc(p, tms);
      if (zooms.minzoom < 0 || zooms.maxzoom > 30) throw badRequest('TileJSON minzoom and maxzoom must be between 0 and 30');
      const suffix = `@${p.document.tileScale}x${p.document.tileFormat ? `.${p.document.tileFormat}` : ''}`;
      const tiles = `${baseUrl(request)}${family.prefix}/tiles/${tms.id}/{z}/{x}/{y}${suffix}${forwardedQuery(request, TILEJSON_DROPPED)}`;
      const [minx, miny, maxx, maxy] = summary.bounds;
      const center: [number, number, number] = summary.center
        ? [summary.center[0], summary.center[1], p.document.minzoom ?? summary.center[2]]
        : [(minx + maxx) / 2, (miny + maxy) / 2, zooms.minzoom];
      return sendJson(reply, tileJsonModel({ tiles, ...zooms, bounds: summary.bounds, center }));
    };
    app.get('/:tileMatrixSetId/tilejson.json', { schema: { params: tmsParams, querystring: tilejsonQuery.schema }, ...preValidation }, (req, reply) =>
      tilejson(req, reply, tilejsonQuery),
    );
    app.get('/tilejson.json', { schema: { querystring: deprecatedTilejsonQuery.schema, deprecated: true }, ...preValidation }, (req, reply) =>
      tilejson(req, reply, deprecatedTilejsonQuery),
    );

    const wmtsOptions = family.wmts ?? { layerName: 'Dataset', useEpsg: true };
    const wmtsFamilies = wmtsOptions.useEpsg ? { ...documentFamilies, epsg: wmtsEpsg } : documentFamilies;
    const wmtsQuery = routeQuery(wmtsFamilies);
    const deprecatedWmtsQuery = routeQuery({ ...wmtsFamilies, grid: gridQuery });
    const wmts = async (req: FastifyRequest, reply: FastifyReply, query: typeof wmtsQuery | typeof deprecatedWmtsQuery): Promise<FastifyReply> => {
      const request = req as Req;
      const p = query.parse(request.query);
      const tms = gridOf(request, 'grid' in p ? (p.grid as TileMatrixSet) : undefined);
      const { summary, zooms } = await tileDoc(p, tms);
      checkZoomRange(tms, zooms.minzoom, zooms.maxzoom);
      const format = p.document.tileFormat ?? 'png';
      const template = `${baseUrl(request)}${family.prefix}/tiles/${tms.id}/{TileMatrix}/{TileCol}/{TileRow}@${p.document.tileScale}x.${format}${forwardedQuery(request, WMTS_DROPPED)}`;
      const xml = wmtsCapabilities({
        title: p.url,
        layerName: wmtsOptions.layerName,
        requestUrl: requestUrl(request),
        tileTemplate: template,
        mediaType: MEDIA_TYPES[format],
        tms,
        supportedCrs: 'epsg' in p && p.epsg === true ? epsgName(tms) : tms.def.crs,
        bounds: summary.bounds,
        ...zooms,
        num: pyFloatRepr,
      });
      return reply.type('application/xml').send(Buffer.from(xml, 'utf8'));
    };
    app.get('/:tileMatrixSetId/WMTSCapabilities.xml', { schema: { params: tmsParams, querystring: wmtsQuery.schema }, ...preValidation }, (req, reply) =>
      wmts(req, reply, wmtsQuery),
    );
    app.get('/WMTSCapabilities.xml', { schema: { querystring: deprecatedWmtsQuery.schema, deprecated: true }, ...preValidation }, (req, reply) =>
      wmts(req, reply, deprecatedWmtsQuery),
    );

    // The map page draws the TileJSON above on a Leaflet map; its query is checked the same way.
    const mapQuery = routeQuery(documentFamilies);
    const deprecatedMapQuery = routeQuery({ ...documentFamilies, grid: gridQuery });
    const map = (req: FastifyRequest, reply: FastifyReply, query: typeof mapQuery | typeof deprecatedMapQuery): FastifyReply => {
      const request = req as Req;
      const p = query.parse(request.query);
      return mapPage(request, reply, family.prefix, gridOf(request, 'grid' in p ? (p.grid as TileMatrixSet) : undefined), p.url);
    };
    app.get('/:tileMatrixSetId/map', { schema: { params: tmsParams, querystring: mapQuery.schema }, ...preValidation }, async (req, reply) =>
      map(req, reply, mapQuery),
    );
    app.get('/map', { schema: { querystring: deprecatedMapQuery.schema, deprecated: true }, ...preValidation }, async (req, reply) =>
      map(req, reply, deprecatedMapQuery),
    );

    // ---- point ---------------------------------------------------------------------------------
    if (mount.point) {
      const pointQuery = routeQuery({ url: datasetUrl, layer, values: datasetValues, coordCrs });
      app.get('/point/:lonlat', { schema: { querystring: pointQuery.schema }, ...preValidation }, async (req, reply) => {
        const request = req as Req;
        const lonlat = parseLonLat(request.params['lonlat']!);
        if (!lonlat) return notFound(reply);
        const p = pointQuery.parse(request.query);
        const reader = await family.open(p.url, p.layer);
        if (!reader.point) return notFound(reply);
        if (await unchanged(request, reply, reader)) return reply;
        const point = await reader.point(lonlat[0], lonlat[1], p.coordCrs, p.values);
        return sendJson(reply, { coordinates: floats(lonlat), values: floats(point.values), band_names: point.bandNames });
      });
    }

    if (mount.wholeImages) wholeImageRoutes(app);
    if (mount.statistics) statisticsRoutes(app);
  };

  // ---- whole images: preview, bbox, feature ------------------------------------------------------
  function wholeImageRoutes(app: FastifyInstance): void {
    const previewFamilies = { ...image, size: previewSize, dstCrs };
    const previewQuery = routeQuery(previewFamilies);
    const previewFormatQuery = routeQuery({ ...previewFamilies, format: formatQuery });
    /** `format` from the path, or (the form without one) from the query. */
    const preview = async (
      req: FastifyRequest,
      reply: FastifyReply,
      query: typeof previewQuery | typeof previewFormatQuery,
      pathFormat?: ImageFormat,
    ): Promise<FastifyReply> => {
      const p = query.parse((req as Req).query);
      const format = pathFormat ?? (p as { format?: ImageFormat }).format;
      const reader = await family.open(p.url, p.layer);
      if (!reader.preview) return notFound(reply);
      if (await unchanged(req, reply, reader)) return reply;
      const result = await reader.preview({ ...p.size, ...(p.dstCrs ? { dstCrs: p.dstCrs } : {}) }, { ...p.values, limits, deferExpression: true });
      return sendImage(reply, services.renderer, result.image, format, renderSpec(p.algorithm, p.render, result));
    };
    app.get('/preview', { schema: { querystring: previewFormatQuery.schema }, config: { large: true }, ...preValidation }, (req, reply) =>
      preview(req, reply, previewFormatQuery),
    );
    app.get('/preview.:format', { schema: { querystring: previewQuery.schema }, config: { large: true }, ...preValidation }, (req, reply) =>
      preview(req, reply, previewQuery, parseFormat((req as Req).params['format']!)),
    );

    const partFamilies = { ...image, size: partSize, dstCrs, coordCrs };
    const partQuery = routeQuery(partFamilies);
    app.get('/bbox/*', { schema: { querystring: partQuery.schema }, config: { large: true }, ...preValidation }, async (req, reply) => {
      const request = req as Req;
      const parsed = parseBBoxPath(request.params['*']!);
      if (!parsed) return notFound(reply);
      const [minx, miny, maxx, maxy] = parsed.bbox;
      if (!parsed.bbox.every(Number.isFinite) || minx >= maxx || miny >= maxy) {
        throw badRequest(`Invalid bbox ${parsed.bbox.join(',')}: expected finite minx < maxx and miny < maxy`);
      }
      const p = partQuery.parse(request.query);
      const size = p.size(parsed.width !== undefined && parsed.height !== undefined ? { width: parsed.width, height: parsed.height } : undefined);
      const reader = await family.open(p.url, p.layer);
      if (!reader.part) return notFound(reply);
      if (await unchanged(request, reply, reader)) return reply;
      const result = await reader.part(
        parsed.bbox,
        { ...size, boundsCrs: p.coordCrs, dstCrs: p.dstCrs ?? p.coordCrs },
        { ...p.values, limits, deferExpression: true },
      );
      return sendImage(reply, services.renderer, result.image, parsed.format, renderSpec(p.algorithm, p.render, result));
    });

    const featureFormatQuery = routeQuery({ ...partFamilies, format: formatQuery });
    const feature = async (
      req: FastifyRequest,
      reply: FastifyReply,
      query: typeof partQuery | typeof featureFormatQuery,
      pathFormat?: ImageFormat,
      fixed?: { width: number; height: number },
    ): Promise<FastifyReply> => {
      const shape = parseFeatureBody(req.body);
      const p = query.parse((req as Req).query);
      const format = pathFormat ?? (p as { format?: ImageFormat }).format;
      const size = p.size(fixed);
      const reader = await family.open(p.url, p.layer);
      if (!reader.feature) return notFound(reply);
      const result = await reader.feature(shape, p.coordCrs, { ...size, dstCrs: p.dstCrs ?? p.coordCrs }, { ...p.values, limits, deferExpression: true });
      return sendImage(reply, services.renderer, result.image, format, renderSpec(p.algorithm, p.render, result));
    };
    app.post('/feature', { schema: { querystring: featureFormatQuery.schema }, config: { large: true }, ...preValidation }, (req, reply) =>
      feature(req, reply, featureFormatQuery),
    );
    app.post('/feature.:format', { schema: { querystring: partQuery.schema }, config: { large: true }, ...preValidation }, (req, reply) =>
      feature(req, reply, partQuery, parseFormat((req as Req).params['format']!)),
    );
    app.post('/feature/:sizeformat', { schema: { querystring: partQuery.schema }, config: { large: true }, ...preValidation }, (req, reply) => {
      const parsed = parseSizeFormat((req as Req).params['sizeformat']!);
      if (!parsed) return notFound(reply);
      return feature(req, reply, partQuery, parsed.format, { width: parsed.width, height: parsed.height });
    });
  }

  // ---- statistics ------------------------------------------------------------------------------
  function statisticsRoutes(app: FastifyInstance): void {
    const statisticsSpec = (algorithm: RenderSpec['algorithm'], options: StatisticsSpec['options'], result: ReaderImage): StatisticsSpec => ({
      ...(result.expression ? { expression: result.expression } : {}),
      algorithm,
      options,
      ...(result.coverage ? { coverage: result.coverage } : {}),
    });

    const previewStatisticsQuery = routeQuery({
      url: datasetUrl,
      layer: statisticsLayer,
      values: datasetValues,
      size: previewSize,
      algorithm: postProcess,
      statistics,
    });
    app.get('/statistics', { config: { large: true }, schema: { querystring: previewStatisticsQuery.schema } }, async (req, reply) => {
      const p = previewStatisticsQuery.parse((req as Req).query);
      const reader = await family.open(p.url, p.layer);
      if (!reader.preview) return notFound(reply);
      if (await unchanged(req, reply, reader)) return reply;
      // Read here, summarised in a render thread: sorting 64 M values for percentiles takes seconds.
      const result = await reader.preview(p.size, { ...p.values, limits: statisticsLimits, deferExpression: true });
      return sendJson(reply, statisticsMapToJson(await services.renderer.statistics(result.image, statisticsSpec(p.algorithm, p.statistics, result))));
    });

    if (!mount.featureStatistics) return;
    const featureStatisticsQuery = routeQuery({
      url: datasetUrl,
      layer: statisticsLayer,
      values: datasetValues,
      size: partSize,
      dstCrs,
      coordCrs,
      algorithm: postProcess,
      statistics,
    });
    app.post('/statistics', { config: { large: true }, schema: { querystring: featureStatisticsQuery.schema } }, async (req, reply) => {
      const body = parseFeatureOrCollectionBody(req.body);
      if (body.features.length > MAX_STATISTICS_FEATURES) {
        throw badRequest(`Too many features: ${body.features.length}, at most ${MAX_STATISTICS_FEATURES} per request`);
      }
      const p = featureStatisticsQuery.parse((req as Req).query);
      const size = p.size();
      const reader = await family.open(p.url, p.layer);
      if (!reader.statisticsOfFeatures) return notFound(reply);
      const stats = await reader.statisticsOfFeatures(
        body.features.map((f) => f.shape),
        p.coordCrs,
        { ...size, boundsCrs: p.coordCrs, dstCrs: p.dstCrs ?? p.coordCrs, alignBoundsWithDataset: true },
        { ...p.values, limits: statisticsLimits, deferExpression: true, weighByCoverage: family.coverageWeighted === true },
        FEATURE_CONCURRENCY,
        (result) => services.renderer.statistics(result.image, statisticsSpec(p.algorithm, p.statistics, result)),
      );
      return sendJson(reply, featureBodyToJson(body, stats.map(statisticsMapToJson)), 'application/geo+json');
    });
  }
}
