/**
 * /stac statistics routes, as TiTiler 0.18.10's MultiBaseTilerFactory answers them:
 * - GET /statistics: a preview (max_size 1024) of the assets or expression, every asset by
 *   default, through the optional algorithm, summarised per band (`asset_b1`, … or the
 *   expression blocks);
 * - POST /statistics: the same over each feature of a GeoJSON Feature or FeatureCollection (read
 *   at full resolution for the feature's bounds, snapped to the output grid, and masked outside
 *   the geometry), added to each feature's properties. TiTiler keeps only the last feature's
 *   statistics (and then fails to validate its own answer); every feature gets its own here.
 *   No coverage weighting: TiTiler's STAC variant does not pass one.
 * - GET /asset_statistics: per asset, its own bands (`b1`, …) or its `asset_expression`.
 * Every read is planned first, so the request limits apply before a pixel is fetched.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
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
  partSizeSchema,
  previewSizeSchema,
  querySchema,
  urlSchema,
  type Query,
} from '../params.js';
import { LayerPlan, stacPreview, type LayerOptions, type ReadLimits } from '../../stac/images.js';
import type { StacReader } from '../../stac/reader.js';
import { RasterReader, applyCutline, type PartOptions, type ReadPlan, type ValueOptions } from '../../source/reader.js';
import { nonAlphaIndexes } from '../../source/read.js';
import { parseAlgorithm } from './algorithms.js';
import type { AlgorithmStep } from '../../image/algorithms/index.js';
import { parseFeatureOrCollectionBody, featureBodyToJson, type BodyFeature } from '../geojson.js';
import { imageStatistics, parseStatisticsOptions, type StatisticsOptions } from '../../image/statistics.js';
import { statisticsMapToJson } from '../../image/statistics-json.js';
import { parseExpression, type Expression } from '../../image/expression.js';
import { sendJson } from '../reply.js';
import type { StatisticsSpec } from '../../image/post-process.js';
import { estimateImageBytes, sampleBytes } from '../../image/whole-image-gate.js';
import { badRequest } from '../../errors.js';

const WGS84 = 'EPSG:4326';

/** Features read at once by POST /statistics: each read already runs its assets in parallel. */
const FEATURE_CONCURRENCY = 8;
/** Largest FeatureCollection POST /statistics takes; zonal statistics over more go in batches. */
export const MAX_STATISTICS_FEATURES = 1000;

type Req = FastifyRequest<{ Querystring: Query & { url: string } }>;

/** StatisticsParams and HistogramParams (`p` integers and `c` numbers are validated as FastAPI does: 422). */
const statisticsSchema = {
  categorical: { type: 'boolean' },
  c: { type: 'array', items: { type: 'number' } },
  p: { type: 'array', items: { type: 'integer' } },
  histogram_bins: { type: 'string' },
  histogram_range: { type: 'string' },
};

/** AssetsBidxParams of /asset_statistics: no cross-asset expression, but one per asset. */
const assetStatisticsLayerSchema = {
  assets: { type: 'array', items: { type: 'string' } },
  bidx: { type: 'array', items: { type: 'integer' } },
  asset_bidx: { type: 'array', items: { type: 'string' } },
  asset_expression: { type: 'array', items: { type: 'string' } },
};

function valueOptions(q: Query): ValueOptions {
  const d = parseDataset(q);
  return { unscale: d.unscale, resampling: d.resampling, reproject: d.reproject, ...(d.nodata !== undefined ? { nodata: d.nodata } : {}) };
}

/** AssetsBidxExprParamsOptional: without assets or expression, every asset of the item. */
function statisticsLayer(q: Query, stac: StacReader): LayerOptions {
  const l = parseLayer(q, false);
  const assets = l.assets && l.assets.length > 0 ? l.assets : l.expression ? undefined : stac.assetNames;
  return {
    ...(assets ? { assets } : {}),
    ...(l.expression ? { expression: l.expression } : {}),
    assetAsBand: l.assetAsBand,
    assetBidx: l.assetBidx,
    ...(l.bidx ? { bidx: l.bidx } : {}),
  };
}

function algorithmOf(q: Query): AlgorithmStep | undefined {
  const name = typeof q['algorithm'] === 'string' ? q['algorithm'] : undefined;
  return parseAlgorithm(name, typeof q['algorithm_params'] === 'string' ? q['algorithm_params'] : undefined);
}

/** What becomes of a layer's image: its expression (left to this step by the reader) and algorithm, then statistics. */
function statisticsSpec(layer: LayerPlan, algorithm: AlgorithmStep | undefined, options: StatisticsOptions): StatisticsSpec {
  return {
    ...(layer.expression ? { expression: layer.expression.text } : {}),
    algorithm: algorithm ? { id: algorithm.id, params: algorithm.params } : undefined,
    options,
  };
}

/**
 * Statistics of a feature that misses the data, without an image of its extent: those of a small
 * all-masked stand-in (same bands, dtype and algorithm), counted over the feature's whole window.
 */
async function emptyFeatureStatistics(layer: LayerPlan, plans: ReadPlan[], values: ValueOptions, algorithm: AlgorithmStep | undefined, opts: StatisticsOptions): Promise<Record<string, unknown>> {
  const standIn = plans.map((p) => ({ ...p, width: Math.min(p.width, 16), height: Math.min(p.height, 16) }));
  const img = await layer.read(standIn, values);
  const stats = imageStatistics(algorithm ? algorithm.apply(img) : img, opts);
  const total = Math.max(...plans.map((p) => p.width)) * Math.max(...plans.map((p) => p.height));
  for (const band of stats.values()) band.maskedPixels = total - band.validPixels;
  return statisticsMapToJson(stats);
}

function checkSourceTotal(total: number, limits: ReadLimits, what: string): void {
  if (total > limits.maxSourcePixels) {
    throw badRequest(`Requested area is too large: reading ${what} needs ${total} source pixels, above the limit of ${limits.maxSourcePixels}; use smaller areas, max_size or width/height`);
  }
}

/** Runs `fn` over `items` with at most `limit` calls pending; results in item order. */
async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

// ---- /asset_statistics --------------------------------------------------------------------------

/** `asset_expression` values `asset|expression` (everything after the first `|` is the expression). */
function parseAssetExpressions(q: Query): Map<string, Expression> {
  const out = new Map<string, Expression>();
  for (const entry of (q['asset_expression'] as string[] | undefined) ?? []) {
    const bar = entry.indexOf('|');
    if (bar <= 0 || bar === entry.length - 1) {
      throw badRequest(`Invalid asset_expression '${entry}': expected 'asset|expression', e.g. 'data|b1*b2+b3'`);
    }
    out.set(entry.slice(0, bar), parseExpression(entry.slice(bar + 1)));
  }
  return out;
}

/** The bands an asset expression reads (rio-tiler `parse_expression`: its `b{i}` names); 400 for other names. */
function expressionIndexes(expr: Expression, asset: string): number[] {
  const indexes = expr.variables.map((v) => /^b(\d+)$/.exec(v)).filter((m) => m !== null).map((m) => Number(m[1]));
  if (indexes.length === 0) throw badRequest(`Could not find any valid bands in '${expr.text}' expression (asset '${asset}').`);
  expr.checkVariables(indexes.map((i) => `b${i}`));
  return indexes;
}

interface AssetJob {
  name: string;
  reader: RasterReader;
  expression: Expression | undefined;
  indexes: number[] | undefined;
  plan: ReadPlan;
  bands: number;
}

// ---- routes -------------------------------------------------------------------------------------

export function stacStatisticsRoutes(services: Services) {
  const limits: ReadLimits = { maxOutputPixels: services.settings.maxOutputPixels, maxSourcePixels: services.settings.maxSourcePixels, gate: services.wholeImages, statistics: true };

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get(
      '/statistics',
      { config: { large: true }, schema: { querystring: querySchema(['url'], urlSchema, layerSchema, datasetSchema, previewSizeSchema, algorithmSchema, statisticsSchema) } },
      async (req, reply) => {
        const q = (req as Req).query;
        const values = valueOptions(q);
        const size = parseSize(q);
        const algorithm = algorithmOf(q);
        const opts = parseStatisticsOptions(q);
        const stac = await services.stac(q.url);
        const plan = await LayerPlan.resolve(stac, statisticsLayer(q, stac));
        // Read here, summarised in a render thread: sorting 64 M values for percentiles takes seconds.
        const img = await stacPreview(plan, size, values, limits, false);
        return sendJson(reply, statisticsMapToJson(await services.renderer.statistics(img, statisticsSpec(plan, algorithm, opts))));
      },
    );

    app.post(
      '/statistics',
      {
        config: { large: true },
        schema: {
          querystring: querySchema(['url'], urlSchema, layerSchema, datasetSchema, partSizeSchema, dstCrsSchema, coordCrsSchema, algorithmSchema, statisticsSchema),
        },
      },
      async (req, reply) => {
        const q = (req as Req).query;
        const body = parseFeatureOrCollectionBody(req.body);
        if (body.features.length > MAX_STATISTICS_FEATURES) {
          throw badRequest(`Too many features: ${body.features.length}, at most ${MAX_STATISTICS_FEATURES} per request`);
        }
        const values = valueOptions(q);
        const size = parseSize(q);
        const coordCrs = parseCrsParam(q, 'coord_crs') ?? WGS84;
        const dstCrs = parseCrsParam(q, 'dst_crs') ?? coordCrs;
        const algorithm = algorithmOf(q);
        const opts = parseStatisticsOptions(q);
        const stac = await services.stac(q.url);
        const layer = await LayerPlan.resolve(stac, statisticsLayer(q, stac));
        const part: PartOptions = { ...size, boundsCrs: coordCrs, dstCrs, alignBoundsWithDataset: true };

        // rio-tiler `feature`: the part of the shape's bounds, then the cutline. Planned for
        // every feature first, so that the limits hold for the whole request. A feature that
        // misses the data reads nothing, so the limits do not apply to its extent.
        const planFeature = async (f: BodyFeature): Promise<ReadPlan[]> => {
          const env = f.shape.getEnvelope();
          const plans = await Promise.all(layer.readers().map((r) => r.planPart([env.minX, env.minY, env.maxX, env.maxY], part)));
          if (!plans.every((p) => p.empty)) await layer.checkLimits(plans, limits);
          return plans;
        };
        const plans = await Promise.all(body.features.map(planFeature));
        checkSourceTotal(plans.flat().reduce((s, p) => s + p.sourcePixels, 0), limits, `the ${body.features.length} feature(s)`);
        // Each feature reserved its own bytes; FEATURE_CONCURRENCY of them are read at once.
        const held = (await Promise.all(plans.map((p) => layer.heldBytes(p, true)))).sort((a, b) => b - a);
        await services.wholeImages.reserve(held.slice(0, FEATURE_CONCURRENCY).reduce((a, b) => a + b, 0));

        const statistics = await mapWithConcurrency(body.features, FEATURE_CONCURRENCY, async (f, i) => {
          const featurePlans = plans[i]!;
          if (featurePlans.every((p) => p.empty)) return emptyFeatureStatistics(layer, featurePlans, values, algorithm, opts);
          const img = await applyCutline(await layer.read(featurePlans, values, false), f.shape, coordCrs);
          return statisticsMapToJson(await services.renderer.statistics(img, statisticsSpec(layer, algorithm, opts)));
        });
        return sendJson(reply, featureBodyToJson(body, statistics), 'application/geo+json');
      },
    );

    app.get(
      '/asset_statistics',
      { config: { large: true }, schema: { querystring: querySchema(['url'], urlSchema, assetStatisticsLayerSchema, datasetSchema, previewSizeSchema, statisticsSchema) } },
      async (req, reply) => {
        const q = (req as Req).query;
        const layer = parseLayer({ ...q, expression: undefined }, false);
        const expressions = parseAssetExpressions(q);
        const values = valueOptions(q);
        const size = parseSize(q);
        const opts = parseStatisticsOptions(q);
        const stac = await services.stac(q.url);
        const names = layer.assets && layer.assets.length > 0 ? [...new Set(layer.assets)] : undefined;

        const jobs = await Promise.all(
          stac.assets(names).map(async (asset): Promise<AssetJob> => {
            const reader = new RasterReader(stac.source(asset));
            const meta = await reader.meta();
            const expression = expressions.get(asset.name);
            const indexes = expression ? expressionIndexes(expression, asset.name) : (layer.assetBidx.get(asset.name) ?? layer.bidx);
            for (const i of indexes ?? []) {
              if (i < 1 || i > meta.count) throw badRequest(`Invalid band index ${i} for asset '${asset.name}': it has ${meta.count} band(s)`);
            }
            const plan = await reader.planPreview(size);
            return { name: asset.name, reader, expression, indexes, plan, bands: (indexes ?? nonAlphaIndexes(meta)).length };
          }),
        );
        const outputValues = jobs.reduce((s, j) => s + j.plan.width * j.plan.height * j.bands, 0);
        if (outputValues > limits.maxOutputPixels) {
          throw badRequest(`Requested images are too large: ${outputValues} values over ${jobs.length} asset(s) exceed the limit of ${limits.maxOutputPixels}; use max_size or width/height`);
        }
        checkSourceTotal(jobs.reduce((s, j) => s + j.plan.sourcePixels, 0), limits, `the ${jobs.length} asset(s)`);
        const held = await Promise.all(jobs.map(async (j) => estimateImageBytes(j.plan.width * j.plan.height, j.bands, sampleBytes((await j.reader.meta()).bands[0]?.dataType), true)));
        await services.wholeImages.reserve(held.reduce((a, b) => a + b, 0));

        const results = await Promise.all(
          jobs.map(async (j) => {
            const img = await j.reader.read(j.plan, { ...values, ...(j.indexes ? { indexes: j.indexes } : {}) });
            const spec: StatisticsSpec = { ...(j.expression ? { expression: j.expression.text } : {}), algorithm: undefined, options: opts };
            return [j.name, statisticsMapToJson(await services.renderer.statistics(img, spec))] as const;
          }),
        );
        return sendJson(reply, Object.fromEntries(results));
      },
    );
  };
}
