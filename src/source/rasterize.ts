/**
 * Burns a polygon into a pixel grid with GDAL's rasterizer and ALL_TOUCHED, as rio-tiler's
 * `feature` does (rasterio.features.rasterize), so masks agree at the edges pixel for pixel.
 */
import { gdal } from '../gdal/gdal.js';
import type { BBox } from '../tms/grid.js';
import { fromBounds } from './geometry.js';

/** 1 where the pixel is outside `geometry` (a gdal Geometry in the grid's CRS), else 0. */
export async function outsideMask(geometry: gdal.Geometry, bounds: BBox, width: number, height: number): Promise<Uint8Array> {
  const raster = gdal.open('', 'w', 'MEM', width, height, 1, 'Byte');
  const vector = gdal.open('', 'w', 'Memory');
  try {
    raster.geoTransform = fromBounds(bounds, width, height);
    const layer = vector.layers.create('shape', null, gdal.wkbUnknown);
    const feature = new gdal.Feature(layer);
    feature.setGeometry(geometry);
    layer.features.add(feature);
    await gdal.rasterizeAsync(raster, vector, ['-burn', '1', '-at']);
    const burnt = new Uint8Array(width * height);
    await raster.bands.get(1).pixels.readAsync(0, 0, width, height, burnt);
    for (let i = 0; i < burnt.length; i++) burnt[i] = burnt[i] ? 0 : 1;
    return burnt;
  } finally {
    vector.close();
    raster.close();
  }
}
