/**
 * The index side of a mosaic: which assets a tile, a point or a bbox needs, in the order the pixel
 * selection takes them (cogeo-mosaic's `BaseBackend.assets_for_tile` / `assets_for_point` /
 * `assets_for_bbox`; titiler-pgstac's `PGSTACBackend` answers the same questions from a search),
 * and what a reader of the mosaic says of it: bounds, zooms, center, a version for ETags, and the
 * raster that stands for every asset at low zoom where the index names one.
 *
 * An index knows nothing of how an asset is read: the compositor (readers/mosaic-compose.ts) opens
 * each asset through the reader contract, as rio-tiler's `mosaic_reader(assets, reader)` takes the
 * assets and a function that reads one. MosaicJSON (mosaic/mosaic.ts: file, http and SQLite
 * backends) is one implementation; an index over a STAC search or a catalogue is another.
 * Lookups may be synchronous (an index in memory) or not (a database query).
 */
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import type { PixelSelection } from './methods.js';

/** A raster made once from the assets (a low-zoom overview) that a tile may be read from instead of them. */
export interface IndexOverview {
  href: string;
}

export interface AssetIndex<A = string> {
  /** Bounds in WGS84 (lon/lat). */
  readonly bounds: BBox;
  /** Longitude, latitude and zoom a map opens at. */
  readonly center: readonly [number, number, number];
  /** What identifies this version of the index (a document by its bytes); undefined when it has none. */
  readonly version: string | undefined;
  /** The zoom range of the mosaic read in `tms`. */
  zooms(tms: TileMatrixSet): { minzoom: number; maxzoom: number };
  /** How an asset is named in answers (the `X-Assets` header, point values). */
  assetName(asset: A): string;
  /** The assets of a tile of `tms`, in priority order, without repeats. */
  assetsForTile(tms: TileMatrixSet, x: number, y: number, z: number): readonly A[] | Promise<readonly A[]>;
  /** The assets at a point given in `coordCrs`, in priority order. */
  assetsForPoint(lon: number, lat: number, coordCrs: string): readonly A[] | Promise<readonly A[]>;
  /** The assets a bbox given in `coordCrs` touches, in priority order. */
  assetsForBbox(bbox: BBox, coordCrs: string): readonly A[] | Promise<readonly A[]>;
  /**
   * The raster standing for every asset of a tile of `tms` at zoom `z` composed with `selection`,
   * where the index names one (mosaic/overview.ts); the tile is then read from it alone.
   */
  overviewAt?(tms: TileMatrixSet, z: number, selection: PixelSelection): IndexOverview | undefined;
}
