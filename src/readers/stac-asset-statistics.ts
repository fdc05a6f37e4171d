/**
 * Statistics per asset of a STAC item (TiTiler's `/asset_statistics`, rio-tiler's
 * `MultiBaseReader.statistics`): each asset read on its own at preview size, with its own bands
 * (`asset_bidx`, else `bidx`) or its own expression over `b1 … bn`. Every asset is planned first, and
 * the limits hold for all of them together before a pixel is read. TiTiler 2.x's per-asset options
 * (`name|bidx=…`, `|expression=…`, `|bands=…`) choose the same, and key the asset's answer as
 * rio-tiler 9 does (`name|indexes=[1,2]`).
 */
import { invalidBandIndex } from '../errors.js';
import { expressionBands, type Expression } from '../image/expression.js';
import type { StatisticsSpec } from '../image/post-process.js';
import type { BandStatistics, StatisticsOptions } from '../image/statistics.js';
import type { ImageData } from '../image/image-data.js';
import { estimateImageBytes, sampleBytes } from '../image/whole-image-gate.js';
import type { StacItemSources } from '../stac/reader.js';
import { RasterReads, type ReadPlan, type ValueOptions } from '../source/reader.js';
import { nonAlphaIndexes } from '../source/read.js';
import type { ReadLimits } from './reader.js';
import { bandIndexes } from './stac.js';
import { readDescriptions } from './layer.js';
import { checkOutputValues, checkSourcePixels } from '../source/limits.js';

export interface AssetStatisticsRequest {
  /** The assets to summarise (deduplicated), or every asset of the item. */
  assets: string[] | undefined;
  bidx: number[] | undefined;
  assetBidx: ReadonlyMap<string, number[]>;
  expressions: ReadonlyMap<string, Expression>;
  /** Band names (STAC `bands`/`eo:bands`) per asset (2.x). */
  assetBands: ReadonlyMap<string, readonly string[]>;
  /** The key of each asset given with 2.x options; the asset's name otherwise. */
  labels: ReadonlyMap<string, string>;
  size: { maxSize?: number; height?: number; width?: number };
  statistics: StatisticsOptions;
  /** rio-tiler 9's model (TiTiler 2.x): each band's statistics carry its `description`. */
  describe?: boolean;
}

interface AssetJob {
  name: string;
  /** Given with 2.x options: expression outputs are keyed `b1 …`. */
  numbered: boolean;
  raster: RasterReads;
  expression: Expression | undefined;
  indexes: number[] | undefined;
  plan: ReadPlan;
  bands: number;
}

/** Statistics of each asset, by asset name in the item's order; `summarise` makes them (in a render thread). */
export async function assetStatistics(
  stac: StacItemSources,
  request: AssetStatisticsRequest,
  values: ValueOptions,
  limits: ReadLimits,
  summarise: (img: ImageData, spec: StatisticsSpec) => Promise<Map<string, BandStatistics>>,
): Promise<Array<[string, Map<string, BandStatistics>]>> {
  const jobs = await Promise.all(
    stac.assets(request.assets).map(async (asset): Promise<AssetJob> => {
      const raster = new RasterReads(stac.source(asset));
      const meta = await raster.meta();
      const expression = request.expressions.get(asset.name);
      const bands = request.assetBands.get(asset.name);
      const indexes = expression
        ? expressionBands(expression, `asset '${asset.name}'`)
        : bands
          ? bandIndexes(asset, bands)
          : (request.assetBidx.get(asset.name) ?? request.bidx);
      for (const i of indexes ?? []) {
        if (i < 1 || i > meta.count) throw invalidBandIndex(i, meta.count, `asset '${asset.name}'`);
      }
      const plan = await raster.planPreview(request.size);
      return {
        name: request.labels.get(asset.name) ?? asset.name,
        numbered: request.labels.has(asset.name),
        raster,
        expression,
        indexes,
        plan,
        bands: (indexes ?? nonAlphaIndexes(meta)).length,
      };
    }),
  );
  const outputValues = jobs.reduce((s, j) => s + j.plan.width * j.plan.height * j.bands, 0);
  checkOutputValues(outputValues, limits, `${outputValues} values over ${jobs.length} asset(s)`);
  checkSourcePixels(
    jobs.reduce((s, j) => s + j.plan.sourcePixels, 0),
    limits,
    `the ${jobs.length} asset(s)`,
  );
  if (limits.gate) {
    const held = await Promise.all(
      jobs.map(async (j) => estimateImageBytes(j.plan.width * j.plan.height, j.bands, sampleBytes((await j.raster.meta()).bands[0]?.dataType), true)),
    );
    await limits.gate.reserve(held.reduce((a, b) => a + b, 0));
  }
  return Promise.all(
    jobs.map(async (j) => {
      const img = await j.raster.read(j.plan, { ...values, ...(j.indexes ? { indexes: j.indexes } : {}) });
      const spec: StatisticsSpec = { ...(j.expression ? { expression: j.expression.text } : {}), algorithm: undefined, options: request.statistics };
      const stats = await summarise(img, spec);
      if (request.describe) {
        const described = readDescriptions(await j.raster.meta(), j.indexes, j.expression);
        [...stats.values()].forEach((s, i) => {
          s.description = described[i] ?? `b${i + 1}`;
        });
      }
      // rio-tiler 9 numbers an expression's outputs `b1 …` (a 2.x option); 0.18's asset_expression keys them by their text.
      const named = j.expression && j.numbered ? new Map([...stats.values()].map((v, i) => [`b${i + 1}`, v])) : stats;
      return [j.name, named] as [string, Map<string, BandStatistics>];
    }),
  );
}
