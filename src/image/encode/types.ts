/**
 * What the encoders take: whole bands of one dtype (no per-band masks; the renderer has already
 * reduced those to the one 2-D mask it hands over, or none) and, for GeoTIFF, where the pixels are.
 */
import type { BandArray, DType } from '../image-data.js';
import type { BBox } from '../../tms/grid.js';
import type { PngContent, PngLayout } from './png.js';

export interface RasterData {
  /** One array per band, each `width * height` long, row-major. */
  bands: readonly BandArray[];
  dtype: DType;
  width: number;
  height: number;
  /**
   * What the pixels are, for encoders whose compression suits one kind better (PNG): 'graphic' for
   * colormapped, shaded or other synthetic pixels, 'imagery' (the default) for sensor values.
   */
  content?: PngContent;
  /**
   * Whether a PNG may hold a graphic as palette indexes ('any', the default) or must write one channel
   * per band ('planes'), because a reader of bands must get the bands TiTiler's file has (see PngLayout).
   */
  pngLayout?: PngLayout;
  /**
   * Write the alpha band of GeoTIFF and JPEG 2000 in the data's dtype range, its largest value where
   * valid and its smallest where masked (rio-tiler 8, TiTiler 2.x); else 255 and 0 (TiTiler 0.18).
   */
  maskInDtypeRange?: boolean;
}

export interface GeoReference {
  /** West, south, east, north of the pixel grid, in `crs`. */
  bounds: BBox;
  /** WKT or a user string GDAL understands; empty when unknown. */
  crs: string;
}
