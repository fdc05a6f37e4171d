/**
 * TiTiler's `/asset_statistics` answer, shared by the families that read one STAC item (`/stac`,
 * named by `url`; an item of the catalogue, named by its path): each asset asked read on its own
 * at preview size (readers/stac-asset-statistics.ts), its statistics by asset name.
 */
import type { Services } from '../services.js';
import type { StacItemSources } from '../stac/reader.js';
import { assetStatistics } from '../readers/stac-asset-statistics.js';
import { statisticsMapToJson } from '../image/statistics-json.js';
import { assetStatisticsLayer, datasetValues, previewSize, statistics, type Parsed } from './params/index.js';

/** The query of /asset_statistics, but the dataset: each asset's bands (or its expression), read as a preview. */
export const assetStatisticsParams = { layer: assetStatisticsLayer, values: datasetValues, size: previewSize, statistics };
type AssetStatisticsQuery = Parsed<typeof assetStatisticsParams>;

/**
 * /asset_statistics' answer: the statistics of each asset asked, by name (the item's `/stac` or the
 * catalogue's), each band `describe`d in rio-tiler 9's model.
 */
export async function assetStatisticsJson(
  services: Services,
  stac: StacItemSources,
  p: AssetStatisticsQuery,
  describe: boolean,
): Promise<Record<string, unknown>> {
  const limits = { maxOutputPixels: services.settings.maxOutputPixels, maxSourcePixels: services.settings.maxSourcePixels, gate: services.wholeImages };
  const results = await assetStatistics(stac, { ...p.layer, size: p.size, statistics: p.statistics, describe }, p.values, limits, (img, spec) =>
    services.renderer.statistics(img, spec),
  );
  return Object.fromEntries(results.map(([name, stats]) => [name, statisticsMapToJson(stats)]));
}
