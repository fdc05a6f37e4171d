/**
 * The optional verbs of a reader family, each a route group of TiTiler's TilerFactory (`point`,
 * `preview`, `part` as /bbox, `feature`, `statistics` GET and POST). A family lists the ones it
 * offers (api/routes/cog.ts: all; api/routes/mosaic.ts: the areas, as TiTiler 2.x's MosaicTilerFactory
 * with add_part, add_statistics and add_ogc_maps); a family whose path names its dataset (a pgSTAC
 * search) reads no `url` (VerbContext.datasetQuery); a
 * verb is typed by the reader method it calls (readers/reader.ts), so a family whose reader lacks
 * the method cannot list it (api/factory.ts, `Verb`). A verb not listed is not mounted: its URLs
 * are the router's 404 and absent from /api.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  coordCrs,
  datasetValues,
  dstCrs,
  formatQuery,
  partSize,
  postProcessFor,
  previewSize,
  routeQuery,
  statistics,
  type ParamFamily,
  type PathRoute,
  type QueryRoute,
} from './params/index.js';
import { parseBBoxPath, parseFormat, parseLonLat, parseSizeFormat } from './path-params.js';
import { renderSpec, sendImage } from './image-response.js';
import { parseFeatureBody, parseFeatureOrCollectionBody, featureBodyToJson } from './geojson.js';
import { notFound, sendJson } from './reply.js';
import { imageFamilies, type ReaderWith, type Verb, type VerbContext } from './factory.js';
import type { ImageFormat } from '../image/formats.js';
import type { RenderSpec, StatisticsSpec } from '../image/post-process.js';
import { statisticsMapToJson } from '../image/statistics-json.js';
import { passesDescriptionsOn, type AlgorithmRef } from '../image/algorithms/index.js';
import { floats } from '../pyjson.js';
import { badRequest } from '../errors.js';
import type { Reader, ReaderImage } from '../readers/reader.js';
import { roundHalfEven2, type BandStatistics } from '../image/statistics.js';
import type { Settings } from '../config.js';
import { algorithmGeneration, choose, type Generation } from './generations.js';
import type { gdal } from '../gdal/gdal.js';
import { pointBandsV2 } from './models.js';

/** Features read at once by POST /statistics: each read already runs its sources in parallel. */
const FEATURE_CONCURRENCY = 8;
/** Largest FeatureCollection POST /statistics takes; zonal statistics over more go in batches. */
const MAX_STATISTICS_FEATURES = 1000;

/** Whole-image routes run under the whole-image gate (image/whole-image-gate.ts). */
const LARGE = { large: true };

/** `format` as a path piece (`/preview.{format}`, `/feature.{format}`). */
type FormatRoute = PathRoute<{ format: string }>;

/** Values of every band at a longitude/latitude (rio-tiler `point`). */
export const point: Verb<ReaderWith<'point'>> = {
  mount: <L>(app: FastifyInstance, ctx: VerbContext<L, ReaderWith<'point'>>) => {
    const pointQuery = routeQuery({ url: ctx.datasetQuery, layer: ctx.layer, values: datasetValues, coordCrs });
    const gen = describedBands(ctx);
    app.get<PathRoute<{ lonlat: string }>>('/point/:lonlat', { schema: { querystring: pointQuery.schema }, ...ctx.routeOptions }, async (request, reply) => {
      const lonlat = parseLonLat(request.params.lonlat);
      if (!lonlat) return notFound(reply);
      const p = pointQuery.parse(request.query);
      const reader = await ctx.open(ctx.dataset(request, p.url), p.layer);
      if (await ctx.unchanged(request, reply, reader)) return reply;
      const result = await reader.point(lonlat[0], lonlat[1], p.coordCrs, p.values);
      if (gen === '0.18') return sendJson(reply, { coordinates: floats(lonlat), values: floats(result.values), band_names: result.bandNames });
      // TiTiler 2.x's Point model: masked values are null, and each band's description follows its name.
      return sendJson(reply, {
        coordinates: floats(lonlat),
        ...pointBandsV2(result.values, result.masked, result.numberedOutputs ? 'numbered' : result.bandNames, result.bandDescriptions ?? result.bandNames),
      });
    });
  },
};

/** The whole dataset as one image (rio-tiler `preview`), `format` from the path or the query. */
export const preview: Verb<ReaderWith<'preview'>> = {
  mount: <L>(app: FastifyInstance, ctx: VerbContext<L, ReaderWith<'preview'>>) => {
    const previewFamilies = { ...imageFamilies(ctx.layer, ctx.services.settings, ctx.datasetQuery), size: previewSize, dstCrs };
    const previewQuery = routeQuery(previewFamilies);
    const previewFormatQuery = routeQuery({ ...previewFamilies, format: formatQuery });
    const aspect = keepsAspect(ctx);
    const answer = async (
      request: FastifyRequest,
      reply: FastifyReply,
      p: ReturnType<typeof previewQuery.parse>,
      format: ImageFormat | undefined,
    ): Promise<FastifyReply> => {
      const reader = await ctx.open(ctx.dataset(request, p.url), p.layer);
      if (await ctx.unchanged(request, reply, reader)) return reply;
      const result = await reader.preview(
        { ...p.size, ...(p.dstCrs ? { dstCrs: p.dstCrs } : {}), ...(aspect ? { keepAspect: true } : {}) },
        { ...p.values, limits: ctx.limits, deferExpression: true },
      );
      return sendImage(reply, ctx.services.renderer, result.image, format, renderSpec(p.algorithm, p.render, result));
    };
    app.get<QueryRoute>('/preview', { schema: { querystring: previewFormatQuery.schema }, config: LARGE, ...ctx.routeOptions }, (request, reply) => {
      const p = previewFormatQuery.parse(request.query);
      return answer(request, reply, p, p.format);
    });
    // The path's format first: its error comes before the query's.
    app.get<FormatRoute>('/preview.:format', { schema: { querystring: previewQuery.schema }, config: LARGE, ...ctx.routeOptions }, (request, reply) => {
      const format = parseFormat(request.params.format);
      return answer(request, reply, previewQuery.parse(request.query), format);
    });
  },
};

/** An image of a bounding box (rio-tiler `part`), its size and format in the path. */
export const bbox: Verb<ReaderWith<'part'>> = {
  mount: <L>(app: FastifyInstance, ctx: VerbContext<L, ReaderWith<'part'>>) => {
    const partQuery = routeQuery({ ...imageFamilies(ctx.layer, ctx.services.settings, ctx.datasetQuery), size: partSize, dstCrs, coordCrs });
    const aspect = keepsAspect(ctx);
    app.get<PathRoute<{ '*': string }>>(
      '/bbox/*',
      { schema: { querystring: partQuery.schema }, config: LARGE, ...ctx.routeOptions },
      async (request, reply) => {
        const parsed = parseBBoxPath(request.params['*']);
        if (!parsed) return notFound(reply);
        const [minx, miny, maxx, maxy] = parsed.bbox;
        if (!parsed.bbox.every(Number.isFinite) || minx >= maxx || miny >= maxy) {
          throw badRequest(`Invalid bbox ${parsed.bbox.join(',')}: expected finite minx < maxx and miny < maxy`);
        }
        const p = partQuery.parse(request.query);
        const size = p.size(parsed.width !== undefined && parsed.height !== undefined ? { width: parsed.width, height: parsed.height } : undefined);
        const reader = await ctx.open(ctx.dataset(request, p.url), p.layer);
        if (await ctx.unchanged(request, reply, reader)) return reply;
        const result = await reader.part(
          parsed.bbox,
          { ...size, boundsCrs: p.coordCrs, dstCrs: p.dstCrs ?? p.coordCrs, ...(aspect ? { keepAspect: true } : {}) },
          { ...p.values, limits: ctx.limits, deferExpression: true },
        );
        if (result.headers) reply.headers(result.headers);
        return sendImage(reply, ctx.services.renderer, result.image, parsed.format, renderSpec(p.algorithm, p.render, result));
      },
    );
  },
};

/** An image of a GeoJSON Feature's area, outside it masked (rio-tiler `feature`); size and format from the path or the query. */
export const feature: Verb<ReaderWith<'feature'>> = {
  mount: <L>(app: FastifyInstance, ctx: VerbContext<L, ReaderWith<'feature'>>) => {
    const partFamilies = { ...imageFamilies(ctx.layer, ctx.services.settings, ctx.datasetQuery), size: partSize, dstCrs, coordCrs };
    const partQuery = routeQuery(partFamilies);
    const featureFormatQuery = routeQuery({ ...partFamilies, format: formatQuery });
    const aspect = keepsAspect(ctx);
    // The path's pieces, then the body, then the query, each refused before the next is read.
    const answer = async (
      request: FastifyRequest,
      reply: FastifyReply,
      shape: gdal.Geometry,
      p: ReturnType<typeof partQuery.parse>,
      format: ImageFormat | undefined,
      fixed?: { width: number; height: number },
    ): Promise<FastifyReply> => {
      const size = p.size(fixed);
      const reader = await ctx.open(ctx.dataset(request, p.url), p.layer);
      const result = await reader.feature(
        shape,
        p.coordCrs,
        { ...size, dstCrs: p.dstCrs ?? p.coordCrs, ...(aspect ? { keepAspect: true } : {}) },
        { ...p.values, limits: ctx.limits, deferExpression: true },
      );
      if (result.headers) reply.headers(result.headers);
      return sendImage(reply, ctx.services.renderer, result.image, format, renderSpec(p.algorithm, p.render, result));
    };
    app.post<QueryRoute>('/feature', { schema: { querystring: featureFormatQuery.schema }, config: LARGE, ...ctx.routeOptions }, (request, reply) => {
      const shape = parseFeatureBody(request.body);
      const p = featureFormatQuery.parse(request.query);
      return answer(request, reply, shape, p, p.format);
    });
    app.post<FormatRoute>('/feature.:format', { schema: { querystring: partQuery.schema }, config: LARGE, ...ctx.routeOptions }, (request, reply) => {
      const format = parseFormat(request.params.format);
      const shape = parseFeatureBody(request.body);
      return answer(request, reply, shape, partQuery.parse(request.query), format);
    });
    app.post<PathRoute<{ sizeformat: string }>>(
      '/feature/:sizeformat',
      { schema: { querystring: partQuery.schema }, config: LARGE, ...ctx.routeOptions },
      (request, reply) => {
        const parsed = parseSizeFormat(request.params.sizeformat);
        if (!parsed) return notFound(reply);
        const shape = parseFeatureBody(request.body);
        return answer(request, reply, shape, partQuery.parse(request.query), parsed.format, { width: parsed.width, height: parsed.height });
      },
    );
  },
};

/** Which model the point and statistics bodies follow: a family only 2.x has answers 2.x's (collision describedBands). */
function describedBands<L, R extends Reader>(ctx: VerbContext<L, R>): Generation {
  return ctx.generation === '2' ? '2' : choose(ctx.services.settings, 'describedBands', { '0.18': '0.18', '2': '2' });
}

/** Whether one of width/height sizes the other by the read's aspect ratio (collision outputSize); a family only 2.x has does. */
function keepsAspect<L, R extends Reader>(ctx: VerbContext<L, R>): boolean {
  return ctx.generation === '2' || choose(ctx.services.settings, 'outputSize', { '0.18': false, '2': true });
}

/**
 * Statistics in rio-tiler 9's model (TiTiler 2.x): bands keyed `b1 … bn` after an expression or an
 * algorithm, each band's `description` (the reader's, or the algorithm's output band name, but for
 * the ops that pass the input's on), and with a feature's coverage, `valid_percent` the share of the
 * pixels the feature touches (`count_nonzero(coverage)`) that are valid, at most 100.
 */
function describeStatistics(stats: Map<string, BandStatistics>, result: ReaderImage, algorithm: AlgorithmRef | undefined): Map<string, BandStatistics> {
  const names = [...stats.keys()];
  // Most algorithms name and describe their own outputs; TiTiler's ops (cast, ceil, floor) pass the input's on.
  const inputBands = algorithm === undefined || passesDescriptionsOn(algorithm);
  const described = inputBands && result.bandDescriptions?.length === names.length ? result.bandDescriptions : names;
  // An expression's or an algorithm's outputs are b1 … bn in rio-tiler 9 (an algorithm's own names describe them).
  const keys = algorithm !== undefined || result.numberedOutputs ? names.map((_, i) => `b${i + 1}`) : names;
  let covered = 0;
  if (result.coverage) for (const c of result.coverage) if (c !== 0) covered++;
  const out = new Map<string, BandStatistics>();
  names.forEach((name, i) => {
    const s = stats.get(name)!;
    s.description = described[i]!;
    if (result.coverage) s.validPercent = covered === 0 ? 0 : roundHalfEven2(Math.min(s.validPixels / covered, 1) * 100);
    out.set(keys[i]!, s);
  });
  return out;
}

/** The statistics step's spec: the expression the reader left, the algorithm, the options, the feature's coverage. */
function statisticsSpec(algorithm: RenderSpec['algorithm'], options: StatisticsSpec['options'], result: ReaderImage): StatisticsSpec {
  return {
    ...(result.expression ? { expression: result.expression } : {}),
    algorithm,
    options,
    ...(result.coverage ? { coverage: result.coverage } : {}),
  };
}

/** A statistics route's query: the dataset, layer and values, `sizing` (the output's size and CRS), then the algorithm and statistics options. */
function statisticsQuery<L, S extends Record<string, ParamFamily<unknown>>>(url: ParamFamily<string>, layer: ParamFamily<L>, sizing: S, settings: Settings) {
  return routeQuery({ url, layer, values: datasetValues, ...sizing, algorithm: postProcessFor(algorithmGeneration(settings)), statistics });
}

/** GET /statistics: statistics and histograms of every band, over the preview (rio-tiler `statistics`). */
export const statisticsOfPreview: Verb<ReaderWith<'preview'>> = {
  mount: <L>(app: FastifyInstance, ctx: VerbContext<L, ReaderWith<'preview'>>) => {
    const previewStatisticsQuery = statisticsQuery(ctx.datasetQuery, ctx.statisticsLayer, { size: previewSize }, ctx.services.settings);
    const gen = describedBands(ctx);
    const aspect = keepsAspect(ctx);
    const options = { config: LARGE, schema: { querystring: previewStatisticsQuery.schema }, ...ctx.statisticsRouteOptions };
    app.get<QueryRoute>('/statistics', options, async (request, reply) => {
      const p = previewStatisticsQuery.parse(request.query);
      const reader = await ctx.open(ctx.dataset(request, p.url), p.layer);
      if (await ctx.unchanged(request, reply, reader)) return reply;
      // Read here, summarised in a render thread: sorting 64 M values for percentiles takes seconds.
      const result = await reader.preview(aspect ? { ...p.size, keepAspect: true } : p.size, {
        ...p.values,
        limits: ctx.statisticsLimits,
        deferExpression: true,
      });
      const stats = await ctx.services.renderer.statistics(result.image, statisticsSpec(p.algorithm, p.statistics, result));
      return sendJson(reply, statisticsMapToJson(gen === '2' ? describeStatistics(stats, result, p.algorithm) : stats));
    });
  },
};

/**
 * POST /statistics: statistics of every band within each Feature of a GeoJSON Feature or
 * FeatureCollection. Over a mosaic (TiTiler 2.x's MosaicTilerFactory) each feature's properties
 * also name the assets its image was made of (`used_assets`).
 */
function featureStatistics(usedAssets: boolean): Verb<ReaderWith<'statisticsOfFeatures'>> {
  return {
    mount: <L>(app: FastifyInstance, ctx: VerbContext<L, ReaderWith<'statisticsOfFeatures'>>) => {
      const featureStatisticsQuery = statisticsQuery(ctx.datasetQuery, ctx.statisticsLayer, { size: partSize, dstCrs, coordCrs }, ctx.services.settings);
      const gen = describedBands(ctx);
      const aspect = keepsAspect(ctx);
      const options = { config: LARGE, schema: { querystring: featureStatisticsQuery.schema }, ...ctx.statisticsRouteOptions };
      app.post<QueryRoute>('/statistics', options, async (request, reply) => {
        const body = parseFeatureOrCollectionBody(request.body);
        if (body.features.length > MAX_STATISTICS_FEATURES) {
          throw badRequest(`Too many features: ${body.features.length}, at most ${MAX_STATISTICS_FEATURES} per request`);
        }
        const p = featureStatisticsQuery.parse(request.query);
        const size = p.size();
        const reader = await ctx.open(ctx.dataset(request, p.url), p.layer);
        // Each feature's statistics, and the assets its image was made of (the reader's images name them).
        const assetsOf = new Map<Map<string, BandStatistics>, string[]>();
        const stats = await reader.statisticsOfFeatures(
          body.features.map((f) => f.shape),
          p.coordCrs,
          { ...size, boundsCrs: p.coordCrs, dstCrs: p.dstCrs ?? p.coordCrs, alignBoundsWithDataset: true, ...(aspect ? { keepAspect: true } : {}) },
          { ...p.values, limits: ctx.statisticsLimits, deferExpression: true, weighByCoverage: ctx.coverageWeighted },
          FEATURE_CONCURRENCY,
          async (result) => {
            const computed = await ctx.services.renderer.statistics(result.image, statisticsSpec(p.algorithm, p.statistics, result));
            const s = gen === '2' ? describeStatistics(computed, result, p.algorithm) : computed;
            assetsOf.set(s, result.image.assets ?? []);
            return s;
          },
        );
        const extra = usedAssets ? stats.map((s) => ({ used_assets: assetsOf.get(s) ?? [] })) : undefined;
        return sendJson(reply, featureBodyToJson(body, stats.map(statisticsMapToJson), extra), 'application/geo+json');
      });
    },
  };
}

export const statisticsOfFeatures = featureStatistics(false);
/** POST /statistics over a mosaic: each feature's properties name the assets it was read from. */
export const mosaicStatisticsOfFeatures = featureStatistics(true);
