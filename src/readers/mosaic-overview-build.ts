/**
 * Building a mosaic's low-zoom overview (`tessera mosaic overview`, and the benchmark's large
 * mosaic): the mosaic composed by the server's own compositor (readers/mosaic-compose.ts: the
 * same assets, pixel selection and reads as a tile request below minzoom, without a deadline) tile
 * by tile at one zoom below the document's minzoom, written into one Cloud Optimized GeoTIFF in
 * EPSG:3857 whose pixels are that zoom's WebMercatorQuad pixels, with internal overviews, DEFLATE
 * and a per-dataset mask where no asset had data. A tile at that zoom read from it is the composed
 * tile, pixel for pixel; lower zooms read its overviews.
 *
 * Tiles are written one at a time into a tiled, sparse GeoTIFF beside the output (memory stays at a
 * few tiles, whatever the mosaic's size), which GDAL's COG driver then copies with overviews; the
 * output appears under its name only once complete.
 */
import { promises as fs } from 'node:fs';
import { gdal, type Dataset } from '../gdal/gdal.js';
import { srsFrom, transformBounds, WGS84 } from '../gdal/crs.js';
import { WEB_MERCATOR_QUAD } from '../tms/registry.js';
import { TesseraError } from '../errors.js';
import type { BandArray, DType, ImageData } from '../image/image-data.js';
import { documentCompositor, type MosaicContext } from './mosaic.js';
import type { Mosaic } from '../mosaic/mosaic.js';
import type { PixelSelection } from '../mosaic/methods.js';
import type { OverviewResampling } from '../mosaic/overview.js';

export interface OverviewBuildOptions {
  /** The COG to write. */
  output: string;
  /** The zoom rendered (the COG's full resolution), at most the document's minzoom; default minzoom − 1. */
  zoom?: number;
  pixelSelection: PixelSelection;
  resampling: OverviewResampling;
  /** Tiles composed at once (each reads up to the context's concurrency of assets). */
  threads: number;
  /** After each tile: tiles done of the tiles to compose. */
  onTile?: (done: number, total: number) => void;
}

export interface OverviewBuilt {
  zoom: number;
  /** Tiles with assets (composed), and those of them that had data. */
  tiles: number;
  written: number;
  width: number;
  height: number;
  bytes: number;
}

/**
 * The COG's extent is aligned to the tiles of this many zooms below the one rendered, so that its
 * first overviews (factors 2, 4, 8, 16) are exactly the pixels of those zooms' tiles.
 */
const ALIGNED_LEVELS = 4;
const TILE = 256;

/** numpy dtype → GDAL type the GeoTIFF can hold (GDAL 3.6 has no Int8/Int64 type). */
const GDAL_TYPES: Partial<Record<DType, string>> = {
  uint8: gdal.GDT_Byte,
  uint16: gdal.GDT_UInt16,
  int16: gdal.GDT_Int16,
  uint32: gdal.GDT_UInt32,
  int32: gdal.GDT_Int32,
  float32: gdal.GDT_Float32,
  float64: gdal.GDT_Float64,
};

/** The tile range at `zoom` covering lon/lat `bounds`, and the same range widened to aligned blocks. */
function tileRange(mosaic: Mosaic, zoom: number) {
  const grid = mosaic.grid;
  const [w, s, e, n] = mosaic.bounds;
  const limit = 85.0511287798066;
  const clamped: [number, number, number, number] = [Math.max(-180, w), Math.max(-limit, s), Math.min(180, e), Math.min(limit, n)];
  if (!(clamped[0] < clamped[2] && clamped[1] < clamped[3]))
    throw new Error(`the mosaic's bounds [${mosaic.bounds.join(', ')}] cover no area of WebMercatorQuad`);
  const [minx, miny, maxx, maxy] = transformBounds(srsFrom(WGS84), srsFrom(grid.srs), clamped, 21);
  const res = grid.matrix(zoom).cellSize;
  // Right and bottom edges belong to the tile before them.
  const tl = grid.tileAt(minx, maxy, zoom);
  const br = grid.tileAt(maxx - res / 1024, miny + res / 1024, zoom);
  const step = 2 ** Math.min(ALIGNED_LEVELS, zoom);
  const size = grid.matrix(zoom).matrixWidth;
  const aligned = {
    x0: Math.floor(tl.x / step) * step,
    y0: Math.floor(tl.y / step) * step,
    x1: Math.min(size - 1, (Math.floor(br.x / step) + 1) * step - 1),
    y1: Math.min(size - 1, (Math.floor(br.y / step) + 1) * step - 1),
  };
  return { tl, br, aligned };
}

/** Builds the overview COG of `mosaic` (see the file's comment); throws an Error saying what to do when it cannot. */
export async function buildMosaicOverview(mosaic: Mosaic, ctx: MosaicContext, opts: OverviewBuildOptions): Promise<OverviewBuilt> {
  const grid = mosaic.grid;
  if (grid.id !== WEB_MERCATOR_QUAD) throw new Error(`the mosaic's grid is ${grid.id}: overviews are made for WebMercatorQuad mosaics only`);
  const minzoom = mosaic.doc.minzoom;
  if (minzoom === 0) throw new Error("the mosaic's minzoom is 0: there is no zoom below it to make an overview for");
  const zoom = opts.zoom ?? minzoom - 1;
  if (zoom > minzoom || zoom < 0) throw new Error(`--zoom ${zoom} is above the mosaic's minzoom ${minzoom}: give 0 to ${minzoom}`);
  const { tl, br, aligned } = tileRange(mosaic, zoom);
  if (mosaic.doc.asset_type?.toUpperCase() === 'STAC') {
    throw new Error("the mosaic's assets are STAC items: overviews are made for mosaics of COGs (a request's `assets` could not be read from one image)");
  }

  const tiles: Array<{ x: number; y: number }> = [];
  for (let y = tl.y; y <= br.y; y++) for (let x = tl.x; x <= br.x; x++) if (mosaic.assetsForTile(grid, x, y, zoom).length > 0) tiles.push({ x, y });
  if (tiles.length === 0) throw new Error(`no tile at zoom ${zoom} has an asset: the document's tiles are empty`);

  const width = (aligned.x1 - aligned.x0 + 1) * TILE;
  const height = (aligned.y1 - aligned.y0 + 1) * TILE;
  const [left, , , top] = grid.xyBounds({ x: aligned.x0, y: aligned.y0, z: zoom });
  const res = grid.matrix(zoom).cellSize;
  const part = `${opts.output}.${process.pid}.part.tif`;
  const staging = `${opts.output}.${process.pid}.cog.tif`;

  // The staging file is made when the first tile with data gives the band count and data type.
  let ds: Dataset | undefined;
  let layout: { count: number; dtype: DType } | undefined;
  const create = (img: ImageData): Dataset => {
    const type = GDAL_TYPES[img.dtype];
    if (!type) throw new Error(`the mosaic's tiles are ${img.dtype}, which GDAL 3.6's GeoTIFF cannot hold`);
    // The mask inside the file, not in a .msk beside it: tessera's GDAL settings
    // (GDAL_DISABLE_READDIR_ON_OPEN) would not see a sibling file when the COG driver copies it.
    gdal.config.set('GDAL_TIFF_INTERNAL_MASK', 'YES');
    const created = gdal.open(part, 'w', 'GTiff', width, height, img.bands.length, type, [
      'TILED=YES',
      `BLOCKXSIZE=${TILE}`,
      `BLOCKYSIZE=${TILE}`,
      'SPARSE_OK=TRUE',
      'COMPRESS=DEFLATE',
      'ZLEVEL=1',
      'BIGTIFF=IF_SAFER',
    ]);
    created.srs = srsFrom(grid.srs);
    created.geoTransform = [left, res, 0, top, 0, -res];
    // GMF_PER_DATASET: one mask for every band, kept by the COG driver as an internal mask.
    created.bands.get(1).createMaskBand(0x02);
    layout = { count: img.bands.length, dtype: img.dtype };
    return created;
  };

  // Every band of the assets, no expression: a request's bidx or expression applies to the overview's bands.
  const compositor = documentCompositor(mosaic, { stac: { assetAsBand: false, assetBidx: new Map() } }, ctx);
  const errors: string[] = [];
  let done = 0;
  let written = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    // After a failure no new tile starts: the overview is not written anyway.
    while (next < tiles.length && errors.length === 0) {
      const { x, y } = tiles[next++]!;
      try {
        const tile = await compositor.tile(grid, x, y, zoom, {
          tilesize: TILE,
          pixelSelection: opts.pixelSelection,
          unscale: false,
          resampling: 'nearest',
          reproject: 'nearest',
        });
        ds ??= create(tile.image);
        if (await writeTile(ds, layout!, tile.image, (x - aligned.x0) * TILE, (y - aligned.y0) * TILE)) written++;
      } catch (err) {
        // A tile whose assets have nothing there (every read outside its footprint) is empty, not an error.
        if (!(err instanceof TesseraError && err.kind === 'NoContent')) errors.push(`tile ${zoom}/${x}/${y}: ${(err as Error).message}`);
      }
      opts.onTile?.(++done, tiles.length);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.threads, tiles.length)) }, worker));
    if (errors.length > 0) throw new Error(`the overview was not written: ${errors.join('; ')}`);
    if (!ds || written === 0) throw new Error(`none of the ${tiles.length} tile(s) at zoom ${zoom} has data: nothing to write`);
    await ds.flushAsync();
    ds.close();
    ds = undefined;
    const source = await gdal.openAsync(part);
    try {
      const cog = await gdal.translateAsync(staging, source, [
        '-of',
        'COG',
        '-co',
        'COMPRESS=DEFLATE',
        '-co',
        `BLOCKSIZE=${TILE}`,
        '-co',
        `OVERVIEW_RESAMPLING=${opts.resampling.toUpperCase()}`,
        '-co',
        'SPARSE_OK=TRUE',
        '-co',
        'BIGTIFF=IF_SAFER',
      ]);
      cog.close();
    } finally {
      source.close();
    }
    await fs.rename(staging, opts.output);
    const { size } = await fs.stat(opts.output);
    return { zoom, tiles: tiles.length, written, width, height, bytes: size };
  } finally {
    ds?.close();
    await fs.rm(part, { force: true });
    await fs.rm(staging, { force: true });
  }
}

/** One composed tile into the staging file; false when none of its pixels is valid (nothing written). */
async function writeTile(ds: Dataset, layout: { count: number; dtype: DType }, img: ImageData, px: number, py: number): Promise<boolean> {
  if (img.width !== TILE || img.height !== TILE) throw new Error(`a composed tile is ${img.width}×${img.height}, not ${TILE}×${TILE}`);
  if (img.bands.length !== layout.count || img.dtype !== layout.dtype) {
    throw new Error(`tiles differ in bands or data type (${img.bands.length} × ${img.dtype}, the first ${layout.count} × ${layout.dtype})`);
  }
  // rio-tiler's mask of a masked array: valid where any band is.
  const n = TILE * TILE;
  const mask = new Uint8Array(n);
  let valid = 0;
  for (const m of new Set(img.masks)) {
    for (let i = 0; i < n; i++) {
      if (m[i] !== 0 && mask[i] === 0) {
        mask[i] = 255;
        valid++;
      }
    }
  }
  if (valid === 0) return false;
  // Int8 and int64 never get here (no GDAL type for them in GDAL_TYPES).
  for (let b = 0; b < layout.count; b++) await ds.bands.get(b + 1).pixels.writeAsync(px, py, TILE, TILE, img.bands[b] as Exclude<BandArray, Int8Array>);
  await ds.bands.get(1).getMaskBand()!.pixels.writeAsync(px, py, TILE, TILE, mask);
  return true;
}
