/**
 * Which overview a GDAL RasterIO read takes (GDALBandGetBestOverviewLevel2, gcore/rasterio.cpp):
 * the coarsest level whose downsampling factor stays under the desired one (that of the less
 * reduced axis) times a threshold. TiTiler's GDAL (3.10) and tessera's (3.6) differ here: 3.10
 * takes a threshold of 1.2 for nearest and 1.0 for other resamplings, plus 0.1; 3.6 takes 1.2 for
 * all and nothing more. So where a 512-px raster with a 256-px overview is read at 1/1.6 of its
 * size, GDAL 3.10 reads the overview and GDAL 3.6 the full resolution. Both rules were measured on
 * both GDALs (tessera 3.6 through gdal-async, TiTiler's 3.10 through rasterio): the 2× overview is
 * read from a factor of 1.5839 against 1.6671, 4× from 3.2508 against 3.3382, 8× from 6.5958
 * against 6.6928 for nearest; in 3.10 from 1.9016 for bilinear.
 */

export type OverviewRule = 'gdal-3.10' | 'gdal-3.6';

/**
 * The level (index into `overviews`, each [width, height]) a read of an xSize×ySize window of a
 * width×height raster into a bufW×bufH buffer takes by `rule`; undefined for the full resolution.
 */
export function overviewForRead(
  width: number,
  height: number,
  overviews: readonly (readonly [number, number])[],
  xSize: number,
  ySize: number,
  bufW: number,
  bufH: number,
  nearest: boolean,
  rule: OverviewRule,
): number | undefined {
  if (!(bufW < xSize || bufH < ySize)) return undefined;
  const desired = xSize / bufW < ySize / bufH || bufH === 1 ? xSize / bufW : ySize / bufH;
  const limit = rule === 'gdal-3.6' ? desired * 1.2 : desired * (nearest ? 1.2 : 1.0) + 0.1;
  let best: number | undefined;
  let bestFactor = 0;
  overviews.forEach(([ow, oh], level) => {
    const factor = Math.min(width / ow, height / oh);
    if (factor >= limit || factor <= bestFactor) return;
    best = level;
    bestFactor = factor;
  });
  return best;
}
