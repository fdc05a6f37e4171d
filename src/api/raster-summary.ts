/**
 * What the route factory needs of one raster (a COG named by `url`, or an asset of a catalogue's
 * item): its bounds, zooms, own CRS, bounds in another CRS, and what TiTiler 2.x's TileJSON adds of
 * it (its bands' descriptions and dtype).
 */
import type { RasterSource } from '../source/dataset.js';
import { WEB_MERCATOR_QUAD, getTms } from '../tms/registry.js';
import { boundsIn } from '../ogc/tilesets.js';
import type { DatasetSummary } from './factory.js';

export async function rasterSummary(source: RasterSource): Promise<DatasetSummary> {
  const own = (await source.meta()).crs;
  return {
    bounds: await source.geographicBounds(),
    ...(own ? { crs: own } : {}),
    zooms: (tms) => source.zooms(tms),
    boundsIn: async (srs) => {
      const meta = await source.meta();
      return boundsIn(meta.bounds, meta.crs, srs);
    },
    // rio-tiler 8 describes a band without a description by its name.
    describe: async () => {
      const info = await source.info(getTms(WEB_MERCATOR_QUAD)!);
      return { bandDescriptions: info.band_descriptions.map(([name, d]): [string, string] => [name, d || name]), dtype: info.dtype };
    },
  };
}
