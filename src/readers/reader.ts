/**
 * The reader contract (rio-tiler's `BaseReader`, martin's `Source`): what every dataset family — a
 * COG, a STAC item, a mosaic — offers the routes, and what a mosaic's compositor reads each of its
 * assets through (readers/mosaic-compose.ts). A reader is opened per request from the dataset's
 * URL and the layer the query names (bands, assets, expression, pixel selection), so its verbs take
 * only where and how to read. The route factory (api/factory.ts) registers every route family for
 * any reader; a family without a verb (a mosaic has no preview) leaves it out.
 *
 * Results carry what the answer needs beside the pixels: an expression the reader left to the
 * renderer (evaluated off the main thread with the rest of the rendering) and response headers
 * (a mosaic tile's `X-Assets`). A tile that does not touch the data is a TileOutsideBounds error,
 * a point outside it PointOutsideBounds (rio-tiler's exceptions), which a mosaic skips.
 */
import type { gdal } from '../gdal/gdal.js';
import type { PartOptions, ValueOptions } from '../source/reader.js';
import type { PixelLimits } from '../source/limits.js';
import type { ImageData } from '../image/image-data.js';
import type { ColorMap } from '../image/colormap.js';
import type { BandStatistics } from '../image/statistics.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';

export interface Zooms {
  minzoom: number;
  maxzoom: number;
}

/** Bounds on the work a request may ask for, checked on the read plans before a pixel is read. */
export interface ReadLimits extends PixelLimits {
  /** Where whole-image requests reserve a slot and the bytes their reads will hold (none: not counted). */
  gate?: import('../image/whole-image-gate.js').WholeImageGate;
  /** The answer is statistics of the image, whose copies of the values add to what the read holds. */
  statistics?: boolean;
  /** Reads that share one source-pixel limit (the assets of a mosaic tile), instead of each read having its own. */
  sourcePixelBudget?: SourcePixelBudget;
}

/**
 * A source-pixel limit shared by several reads: each adds what it reads of its rasters — its plan's
 * pixels, but never more than the whole raster at the overview read (a low-zoom tile's grid spans
 * far more than a small asset) — and the sum is held to `maxSourcePixels`, the 400 naming `what`
 * and suggesting `hint`.
 */
export interface SourcePixelBudget {
  used: number;
  what: string;
  hint: string;
}

/** How every verb reads: values (nodata, unscale, resampling), limits, and who evaluates the expression. */
export interface ReadOptions extends ValueOptions {
  limits: ReadLimits;
  /** Leave the layer's expression to the caller (ReaderImage.expression) instead of evaluating it here. */
  deferExpression?: boolean;
}

export interface TileReadOptions extends ReadOptions {
  tilesize: number;
  buffer?: number;
  padding?: number;
  /**
   * Read only the block of the tile the data covers, where that is a small part of it (a mosaic
   * below its minzoom: each asset covers a little of the tile): the image is then that block and
   * `placement` says where it goes. Without buffer or padding; a reader may read the whole tile.
   */
  coveredPart?: boolean;
}

export interface PreviewSize {
  maxSize?: number;
  height?: number;
  width?: number;
  dstCrs?: string;
  /** PartOptions.keepAspect. */
  keepAspect?: boolean;
}

export interface ReaderImage {
  image: ImageData;
  /** The layer's expression, when deferred: the renderer evaluates it first. */
  expression?: string;
  /** Headers the answer carries (a mosaic tile's `X-Assets`). */
  headers?: Record<string, string>;
  /** The fraction of each pixel a feature covers, when statistics are weighted by it. */
  coverage?: Float32Array;
  /**
   * The dataset's own colormap (a paletted COG's colour table): the picture is drawn with it when the
   * request names none, as TiTiler renders with `colormap or dst_colormap`.
   */
  colormap?: ColorMap;
  /** A tile answered in part (a mosaic past its low-zoom deadline): the whole tile, made after the answer. */
  later?: Promise<ReaderImage>;
  /** What TiTiler 2.x describes the bands with after the layer's expression (LayerPlan.bandDescriptions); none where unknown. */
  bandDescriptions?: string[];
  /** The bands are the layer expression's outputs, which TiTiler 2.x names `b1 … bn` (0.18 by their blocks). */
  numberedOutputs?: boolean;
  /** A tile read for its covered part (TileReadOptions.coveredPart): the tile pixel where the image's first pixel goes. */
  placement?: { col: number; row: number };
}

export interface ReaderPoint {
  /** Band values at the point, by band name, and the sources they came from when there are several. */
  values: number[];
  bandNames: string[];
  /** Per value, true where the data is masked there (nodata, outside the mask): TiTiler 2.x answers such values as null. */
  masked?: boolean[];
  /** What TiTiler 2.x describes each value's band with (ReaderImage.bandDescriptions). */
  bandDescriptions?: string[];
  /** ReaderImage.numberedOutputs. */
  numberedOutputs?: boolean;
}

export interface Reader {
  /** Bounds in WGS84 (lon/lat). */
  readonly bounds: BBox;
  /**
   * What identifies the version of every input the layer reads (documents by their bytes, rasters
   * by their upstream validators), without reading a pixel; undefined when an input has none.
   * Answers are tagged by it, so that a revalidation costs no rendering (api/etag.ts). `tile`, for
   * a tile answer: which tile (a mosaic reads another file below its minzoom when it has an overview).
   */
  version(tile?: { tms: TileMatrixSet; z: number }): Promise<string | undefined>;
  /** Zoom levels of `tms` the dataset spans. */
  zooms(tms: TileMatrixSet): Promise<Zooms>;
  /** The tile's image; TileOutsideBounds when it does not touch the data. */
  tile(tms: TileMatrixSet, tile: { x: number; y: number; z: number }, opts: TileReadOptions): Promise<ReaderImage>;
  /** Values at a point; PointOutsideBounds when it is not inside the data. */
  point?(lon: number, lat: number, coordCrs: string, opts: ValueOptions): Promise<ReaderPoint>;
  preview?(size: PreviewSize, opts: ReadOptions): Promise<ReaderImage>;
  part?(bbox: BBox, part: PartOptions, opts: ReadOptions): Promise<ReaderImage>;
  feature?(shape: gdal.Geometry, shapeCrs: string, part: PartOptions, opts: ReadOptions): Promise<ReaderImage>;
  /**
   * Statistics of each shape's pixels (rio-tiler `feature`, then `statistics`), `concurrency` shapes
   * at a time, the limits holding for all of them together; a shape that misses the data reads
   * nothing. `summarise` makes the statistics of an image (in a render thread); with
   * `weighByCoverage` (rio-tiler's Reader) each pixel counts by the fraction the shape covers.
   */
  statisticsOfFeatures?(
    shapes: gdal.Geometry[],
    shapeCrs: string,
    part: PartOptions,
    opts: ReadOptions & { weighByCoverage?: boolean },
    concurrency: number,
    summarise: (result: ReaderImage) => Promise<Map<string, BandStatistics>>,
  ): Promise<Array<Map<string, BandStatistics>>>;
}
