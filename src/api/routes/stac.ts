/**
 * /stac (TiTiler 0.18.10's MultiBaseTilerFactory over a STAC item): the image route families come
 * from the route factory (api/factory.ts) over the STAC item reader (readers/stac.ts); here are the
 * family's layer parameters (AssetsBidxExprParams) and the routes that are a STAC item's alone:
 * assets, bounds, per-asset info and /asset_statistics (per asset, its own bands or `asset_expression`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { getTms } from '../../tms/registry.js';
import type { BBox } from '../../tms/grid.js';
import {
  assetsSchema,
  datasetSchema,
  layerSchema,
  parseLayer,
  parseSize,
  previewSizeSchema,
  querySchema,
  requireLayerFirst,
  urlSchema,
  type Query,
} from '../params.js';
import { sendJson } from '../reply.js';
import { bboxFeature, boundsModel, infoModel } from '../models.js';
import { badRequest } from '../../errors.js';
import type { StacReader } from '../../stac/reader.js';
import { stacItemReader, type StacLayerOptions } from '../../readers/stac.js';
import { RasterReader, type ReadPlan } from '../../source/reader.js';
import { nonAlphaIndexes } from '../../source/read.js';
import { parseExpression, type Expression } from '../../image/expression.js';
import { parseStatisticsOptions } from '../../image/statistics.js';
import { statisticsMapToJson } from '../../image/statistics-json.js';
import type { StatisticsSpec } from '../../image/post-process.js';
import { estimateImageBytes, sampleBytes } from '../../image/whole-image-gate.js';
import { readerRoutes, statisticsSchema, valueOptions, type ReaderFamily } from '../factory.js';

type Req = FastifyRequest<{ Querystring: Query & { url: string } }>;

/** AssetsBidxExprParams, parsed; `required` applies TiTiler's "assets or expression" rule (400). */
function stacLayerOptions(q: Query, required: boolean): StacLayerOptions {
  const l = parseLayer(q, required);
  return {
    ...(l.assets ? { assets: l.assets } : {}),
    ...(l.expression ? { expression: l.expression } : {}),
    assetAsBand: l.assetAsBand,
    assetBidx: l.assetBidx,
    ...(l.bidx ? { bidx: l.bidx } : {}),
  };
}

/** AssetsBidxExprParamsOptional (statistics): without assets or expression, every asset of the item. */
function statisticsLayer(q: Query, stac: StacReader): StacLayerOptions {
  const l = stacLayerOptions(q, false);
  return l.assets && l.assets.length > 0 ? l : l.expression ? l : { ...l, assets: stac.assetNames };
}

export function stacFamily(services: Services): ReaderFamily {
  return {
    prefix: '/stac',
    layerSchema,
    layerFirst: requireLayerFirst,
    checkLayer: (q) => void stacLayerOptions(q, true),
    open: async (q) => stacItemReader(await services.stac(q.url), stacLayerOptions(q, true)),
    openForStatistics: async (q) => {
      const stac = await services.stac(q.url);
      return stacItemReader(stac, statisticsLayer(q, stac));
    },
    summary: async (q) => {
      const stac = await services.stac(q.url);
      return { bounds: stac.bounds, zooms: async (tms) => stac.zooms(tms) };
    },
  };
}

/** AssetsBidxParams of /asset_statistics: no cross-asset expression, but one per asset. */
const assetStatisticsLayerSchema = {
  assets: { type: 'array', items: { type: 'string' } },
  bidx: { type: 'array', items: { type: 'integer' } },
  asset_bidx: { type: 'array', items: { type: 'string' } },
  asset_expression: { type: 'array', items: { type: 'string' } },
};

function checkSourceTotal(total: number, maxSourcePixels: number, what: string): void {
  if (total > maxSourcePixels) {
    throw badRequest(`Requested area is too large: reading ${what} needs ${total} source pixels, above the limit of ${maxSourcePixels}; use smaller areas, max_size or width/height`);
  }
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

export function stacRoutes(services: Services) {
  const limits = { maxOutputPixels: services.settings.maxOutputPixels, maxSourcePixels: services.settings.maxSourcePixels };
  const images = readerRoutes(services, stacFamily(services));

  return async function plugin(app: FastifyInstance): Promise<void> {
    await app.register(images);

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
        checkSourceTotal(jobs.reduce((s, j) => s + j.plan.sourcePixels, 0), limits.maxSourcePixels, `the ${jobs.length} asset(s)`);
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
