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

/** One answer asked: an asset, and its 2.x options where it was given some. */
export interface AssetStatisticsEntry {
  name: string;
  /** The key of an asset given with 2.x options (`name|indexes=[1]`); the asset's name otherwise. */
  label?: string;
  indexes?: readonly number[];
  expression?: Expression;
  /** Band names (STAC `bands`/`eo:bands`). */
  bands?: readonly string[];
}

export interface AssetStatisticsRequest {
  /** The answers to make, in order (one per key), or one for every asset of the item. */
  entries: readonly AssetStatisticsEntry[] | undefined;
  bidx: number[] | undefined;
  /** 0.18's `asset_bidx` and `asset_expression`, by asset. */
  assetBidx: ReadonlyMap<string, number[]>;
  expressions: ReadonlyMap<string, Expression>;
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
  indexes: readonly number[] | undefined;
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
  const entries: readonly AssetStatisticsEntry[] = request.entries ?? stac.assetNames.map((name) => ({ name }));
  const assets = stac.assets(entries.map((e) => e.name));
  const jobs = await Promise.all(
    entries.map(async (entry, k): Promise<AssetJob> => {
      const asset = assets[k]!;
      const raster = new RasterReads(stac.source(asset));
      const meta = await raster.meta();
      const expression = entry.expression ?? (entry.label === undefined ? request.expressions.get(asset.name) : undefined);
      const indexes = expression
        ? expressionBands(expression, `asset '${asset.name}'`)
        : entry.bands
          ? bandIndexes(asset, entry.bands)
          : (entry.indexes ?? (entry.label === undefined ? request.assetBidx.get(asset.name) : undefined) ?? request.bidx);
      for (const i of indexes ?? []) {
        if (i < 1 || i > meta.count) throw invalidBandIndex(i, meta.count, `asset '${asset.name}'`);
      }
      const plan = await raster.planPreview(request.size);
      return {
        name: entry.label ?? asset.name,
        numbered: entry.label !== undefined,
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
