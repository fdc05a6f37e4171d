/**
 * An opened mosaic: its document, its grid, and the asset lookups of cogeo-mosaic 7's backend
 * (`assets_for_tile`, `assets_for_point`, `assets_for_bbox`, `get_assets`/`find_quadkeys`): the
 * MosaicJSON asset index (mosaic/asset-index.ts) whatever backend the document came from.
 *
 * Lookups go through the quadkey index, never by enumerating tiles the index does not have: a tile
 * above the quadkey zoom takes its ancestor's key; a tile below it takes every key starting with
 * its own quadkey, found by binary search in the sorted key list (lexicographic order is exactly
 * morecantile's level-by-level children order). cogeo-mosaic enumerates the 4^(qz − z) descendants
 * instead, which takes seconds to minutes at low zooms (cogeo-mosaic#236); the answers are the same.
 * A bbox spanning more index cells than the index has keys is answered by filtering the keys.
 */
import type { AssetIndex } from './asset-index.js';
import type { MosaicDocument } from './document.js';
import type { MosaicOverview } from './overview.js';
import type { PixelSelection } from './methods.js';
import { quadkeyZoomOf } from './document.js';
import { lowerBound, quadkey, quadkeyToTile } from './quadkey.js';
import { getTms, WEB_MERCATOR_QUAD } from '../tms/registry.js';
import { checkTile, type BBox, type TileMatrixSet, type Tile } from '../tms/grid.js';
import { sameCrs, srsFrom, transformBounds, transformPoint, WGS84 } from '../gdal/crs.js';

/** Where the document came from: what the asset-free `/mosaicjson/` answer shows of it. */
export interface MosaicOrigin {
  /** The `url` the client gave. */
  url: string;
  /** False for the SQLite backend, whose model carries no tiles (`tiles: {}` in the document). */
  tilesInDocument: boolean;
  /** The version of the bytes the document was read from (upstream/documents.ts `contentVersion`). */
  version: string;
}

export interface MosaicInfo {
  bounds: BBox;
  center: [number, number, number];
  minzoom: number;
  maxzoom: number;
  name: string;
  quadkeys: string[];
  tilematrixset: string;
}

/** Bbox lookups walk the cells directly up to this many, else filter the index keys. */
const DIRECT_CELLS = 4096;

/**
 * What an asset of a document is read as: a STAC item when the document says its assets are
 * (`asset_type`) or the href is a JSON document, else a raster (cogeo-mosaic reads COGs).
 */
export type MosaicAssetType = 'raster' | 'stac-item';

export class Mosaic implements AssetIndex<string> {
  readonly grid: TileMatrixSet;
  readonly quadkeyZoom: number;
  private sortedKeys: string[] | undefined;

  constructor(
    readonly doc: MosaicDocument,
    readonly origin: MosaicOrigin,
  ) {
    // Documents without a grid are WebMercatorQuad mosaics (every version before 0.0.3).
    this.grid = doc.tilematrixset?.grid ?? getTms(WEB_MERCATOR_QUAD)!;
    this.quadkeyZoom = quadkeyZoomOf(doc);
  }

  get bounds(): BBox {
    return this.doc.bounds;
  }

  get center(): [number, number, number] {
    return this.doc.center;
  }

  /** The version of the document's bytes. */
  get version(): string {
    return this.origin.version;
  }

  /** Assets are named by their URL, prefix included. */
  assetName(asset: string): string {
    return asset;
  }

  /** The document says its assets are STAC items, or the asset's href is a JSON document. */
  assetType(asset: string): MosaicAssetType {
    if (this.stacItemsOnly) return 'stac-item';
    const path = asset.split(/[?#]/, 1)[0]!.toLowerCase();
    return path.endsWith('.json') || path.endsWith('.geojson') ? 'stac-item' : 'raster';
  }

  /** The document says every asset is a STAC item (`asset_type`). */
  get stacItemsOnly(): boolean {
    return this.doc.asset_type?.toUpperCase() === 'STAC';
  }

  /** The mosaic's zoom range when read in its own grid, else the requested grid's. */
  zooms(tms: TileMatrixSet): { minzoom: number; maxzoom: number } {
    return tms === this.grid ? { minzoom: this.doc.minzoom, maxzoom: this.doc.maxzoom } : { minzoom: tms.minzoom, maxzoom: tms.maxzoom };
  }

  /**
   * The document's low-zoom overview (mosaic/overview.ts) when a tile of `tms` at `z` is to be read
   * from it: in the mosaic's own grid, below its minzoom, at or below the overview's maxzoom, and
   * with the pixel selection it was made with (another one must compose the assets to mean what it says).
   * A document of STAC items has none: a request names the items' assets, which one image of bands
   * cannot give (`tessera mosaic overview` refuses to make one).
   */
  overviewAt(tms: TileMatrixSet, z: number, selection: PixelSelection): MosaicOverview | undefined {
    const o = this.doc.overview;
    if (this.stacItemsOnly) return undefined;
    // Up to the document's minzoom: built at minzoom (`--zoom`), its pixels there are the composed
    // tiles' exactly; above minzoom the assets' own resolutions serve better than any overview.
    if (!o || tms !== this.grid || z > this.doc.minzoom || z > o.maxzoom || selection !== o.pixelSelection) return undefined;
    return o;
  }

  /** cogeo-mosaic `info()` as TiTiler calls it (the backend opened in WebMercatorQuad). */
  info(): MosaicInfo {
    const { minzoom, maxzoom } = this.zooms(getTms(WEB_MERCATOR_QUAD)!);
    const [w, s, e, n] = this.bounds;
    const g = this.grid.def;
    return {
      bounds: this.bounds,
      center: [(w + e) / 2, (s + n) / 2, minzoom],
      minzoom,
      maxzoom,
      name: this.doc.name || 'mosaic',
      quadkeys: [],
      // Python's repr of morecantile's TileMatrixSet, closing quote missing as it is there.
      tilematrixset: `<TileMatrixSet title='${g.title}' id='${g.id}' crs='${g.crsUri}>`,
    };
  }

  /** Assets for a tile of `tms`: through the quadkey index in the mosaic's grid, else by the tile's geographic bbox. */
  assetsForTile(tms: TileMatrixSet, x: number, y: number, z: number): string[] {
    checkTile(tms, x, y, z);
    if (tms === this.grid) return this.getAssets(x, y, z);
    const [left, bottom, right, top] = tms.xyBounds({ x, y, z });
    const tmsSrs = srsFrom(tms.srs);
    const wgs = srsFrom(WGS84);
    // morecantile's `bounds()`: the two corners only, not a densified edge.
    const [w, n] = transformPoint(tmsSrs, wgs, left, top);
    const [e, s] = transformPoint(tmsSrs, wgs, right, bottom);
    return this.assetsForBbox([w, s, e, n], WGS84);
  }

  assetsForPoint(lon: number, lat: number, coordCrs: string = WGS84): string[] {
    let [x, y] = [lon, lat];
    const from = srsFrom(coordCrs);
    const wgs = srsFrom(WGS84);
    if (!sameCrs(from, wgs)) [x, y] = safeTransform(from, wgs, x, y);
    const t = this.gridTile(x, y);
    return this.getAssets(t.x, t.y, t.z);
  }

  assetsForBbox(bbox: BBox, coordCrs: string = WGS84): string[] {
    let [xmin, ymin, xmax, ymax] = bbox;
    const from = srsFrom(coordCrs);
    const wgs = srsFrom(WGS84);
    if (!sameCrs(from, wgs)) [xmin, ymin, xmax, ymax] = transformBounds(from, wgs, bbox, 21);
    const tl = this.gridTile(xmin, ymax);
    const br = this.gridTile(xmax, ymin);
    const nx = br.x - tl.x + 1;
    const ny = br.y - tl.y + 1;
    if (nx <= 0 || ny <= 0) return [];
    const lists: string[][] = [];
    const qz = this.quadkeyZoom;
    const min = this.grid.minzoom;
    if (nx * ny <= Math.max(DIRECT_CELLS, this.doc.tiles.size)) {
      for (let x = tl.x; x <= br.x; x++) {
        for (let y = tl.y; y <= br.y; y++) {
          const list = this.doc.tiles.get(quadkey(x, y, qz, min));
          if (list) lists.push(list);
        }
      }
    } else {
      const cells: Array<{ x: number; y: number; list: string[] }> = [];
      for (const [key, list] of this.doc.tiles) {
        const t = quadkeyToTile(key, min);
        if (t.x >= tl.x && t.x <= br.x && t.y >= tl.y && t.y <= br.y) cells.push({ x: t.x, y: t.y, list });
      }
      cells.sort((a, b) => a.x - b.x || a.y - b.y);
      for (const c of cells) lists.push(c.list);
    }
    return this.withPrefix(unique(lists));
  }

  /** cogeo-mosaic `get_assets` for a tile of the mosaic's own grid. */
  getAssets(x: number, y: number, z: number): string[] {
    const qz = this.quadkeyZoom;
    const min = this.grid.minzoom;
    const key = quadkey(x, y, z, min);
    if (z >= qz) {
      const list = this.doc.tiles.get(key.slice(0, qz - min));
      return this.withPrefix(list ? unique([list]) : []);
    }
    const keys = this.keys();
    const lists: string[][] = [];
    for (let i = lowerBound(keys, key); i < keys.length && keys[i]!.startsWith(key); i++) lists.push(this.doc.tiles.get(keys[i]!)!);
    return this.withPrefix(unique(lists));
  }

  /** morecantile `tile(lon, lat, quadkey_zoom)` in the mosaic's grid (clamped to the matrix). */
  private gridTile(lon: number, lat: number): Tile {
    const [x, y] = safeTransform(srsFrom(WGS84), srsFrom(this.grid.srs), lon, lat);
    return this.grid.tileAt(x, y, this.quadkeyZoom, false);
  }

  private keys(): string[] {
    this.sortedKeys ??= [...this.doc.tiles.keys()].sort();
    return this.sortedKeys;
  }

  private withPrefix(assets: string[]): string[] {
    const prefix = this.doc.asset_prefix;
    return prefix ? assets.map((a) => prefix + a) : assets;
  }
}

/** Concatenation with duplicates removed, first occurrence kept. */
function unique(lists: readonly string[][]): string[] {
  if (lists.length === 1) {
    const only = lists[0]!;
    return new Set(only).size === only.length ? [...only] : [...new Set(only)];
  }
  const seen = new Set<string>();
  for (const list of lists) for (const a of list) seen.add(a);
  return [...seen];
}

/** A point that does not transform (outside the projection) lands on the grid's edge, as pyproj's inf does. */
function safeTransform(from: ReturnType<typeof srsFrom>, to: ReturnType<typeof srsFrom>, x: number, y: number): [number, number] {
  try {
    return transformPoint(from, to, x, y);
  } catch {
    return [Infinity, Infinity];
  }
}
