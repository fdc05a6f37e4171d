/**
 * The quadkeys a MosaicJSON index lists for a set of footprints, and the footprints under each, found
 * as cogeo-mosaic 7.2's `MosaicJSON._create_mosaic` finds them, so that `tessera mosaic create`
 * writes the tiles `cogeo-mosaic create` writes:
 *
 * 1. supermorecado's `burnTiles.burn`: the footprints' extrema (shrunk by 1e-10°, kept inside the
 *    grid's bbox) give a range of tiles at the quadkey zoom, and the footprints, projected into the
 *    grid's CRS, are rasterized onto that range, one cell per tile, with rasterio's
 *    `features.rasterize(all_touched=True)` (GDAL 3.10).
 * 2. Every burned tile whose lon/lat bounds (morecantile's `feature`) intersect a footprint (shapely's
 *    `intersects`: touching counts) is listed with all the footprints it intersects, in input
 *    order; tiles come in the raster's row-major order (numpy's `where`), which is the key order
 *    of the document.
 *
 * A footprint is an axis-aligned lon/lat rectangle, and stays one in a cylindrical grid's CRS
 * (WebMercatorQuad: x follows longitude alone, y latitude alone), so nothing is rasterized here:
 * GDAL's rule for a rectangle reduces to a handful of runs of cells (`burnRectangle`), and only
 * burned cells are visited. That keeps deep quadkey zooms, whose tile range cogeo-mosaic allocates
 * as one array, to the cost of the cells actually listed.
 */
import { badRequest } from '../errors.js';
import { srsFrom, transformPoint, WGS84 } from '../gdal/crs.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { quadkey } from './quadkey.js';

/** Cells `c0..c1` × `r0..r1` (inclusive) of a burn raster. */
export interface CellRun {
  c0: number;
  c1: number;
  r0: number;
  r1: number;
}

/** GDAL's EPSILON_INTERSECT_ONLY: an edge this close (in pixels) to a cell boundary lies on it. */
const ON_EDGE = 1e-4;

/** supermorecado shrinks the footprints' extrema by this much (degrees) before finding the tile range. */
const EXTREMA_EPSILON = 1.0e-10;

/**
 * The cells GDAL 3.10 burns for an axis-aligned rectangle with `all_touched`, in pixel coordinates
 * (x right, rows down) of a `width` × `height` raster. Two passes, as gdalrasterize.cpp makes them:
 * - the edge walk (llrasterize.cpp `GDALdllImageLineAllTouched`, intersect-only): an edge within
 *   ON_EDGE of a cell boundary burns nothing; another burns the cells it runs through, from the
 *   cell holding its start to the one holding its end less ON_EDGE. An edge whose ends share a
 *   column is walked as a vertical one (GDAL before 3.11), so a short horizontal edge can vanish;
 * - the fill (`GDALdllImageFilledPolygon`): rows whose centre lies between the top and bottom edges
 *   (both included: the bottom edge is burned on its own when a centre is on it), columns between
 *   the vertical edges rounded to the nearest boundary.
 * Checked against rasterio on random rectangles near cell boundaries (test/mosaic-create.test.ts).
 */
export function burnRectangle(xa: number, xb: number, ra: number, rb: number, width: number, height: number): CellRun[] {
  const runs: CellRun[] = [];
  const add = (c0: number, c1: number, r0: number, r1: number): void => {
    const run = { c0: Math.max(c0, 0), c1: Math.min(c1, width - 1), r0: Math.max(r0, 0), r1: Math.min(r1, height - 1) };
    if (run.c0 <= run.c1 && run.r0 <= run.r1) runs.push(run);
  };
  // |v − round(v)|: C's round() and Math.round differ only at .5, far from a boundary either way.
  const onBoundary = (v: number): boolean => Math.abs(v - Math.round(v)) < ON_EDGE;
  const edge = (x0: number, y0: number, x1: number, y1: number): void => {
    if ((y0 < 0 && y1 < 0) || (y0 > height && y1 > height) || (x0 < 0 && x1 < 0) || (x0 > width && x1 > width)) return;
    if (x0 > x1) [x0, y0, x1, y1] = [x1, y1, x0, y0];
    if (Math.floor(x0) === Math.floor(x1) || Math.abs(x0 - x1) < 0.01) {
      if (onBoundary(x0) && onBoundary(x1)) return;
      const col = Math.floor(x1);
      if (col < 0 || col >= width) return;
      add(col, col, Math.floor(Math.min(y0, y1)), Math.floor(Math.max(y0, y1) - ON_EDGE));
      return;
    }
    // A rectangle's other edges are horizontal.
    if (onBoundary(y0) && onBoundary(y1)) return;
    add(Math.floor(x0), Math.floor(x1 - ON_EDGE), Math.floor(y0), Math.floor(y0));
  };
  const [left, right] = xa <= xb ? [xa, xb] : [xb, xa];
  const [top, bottom] = ra <= rb ? [ra, rb] : [rb, ra];
  if (right < 0 || left > width || bottom < 0 || top > height) return runs;
  edge(left, top, left, bottom);
  edge(left, bottom, right, bottom);
  edge(right, bottom, right, top);
  edge(right, top, left, top);
  // The fill's rows run from the truncated top to the truncated bottom; a centre must lie inside.
  let first = Math.max(Math.trunc(top), 0);
  let last = Math.min(Math.trunc(bottom), height - 1);
  while (first <= last && first + 0.5 < top) first++;
  while (last >= first && last + 0.5 > bottom) last--;
  if (first <= last) add(Math.floor(left + 0.5), Math.floor(right + 0.5) - 1, first, last);
  return runs;
}

/** One key of the index: a quadkey and the footprints (indices into the input) listed under it. */
export interface IndexCell {
  key: string;
  members: number[];
}

/**
 * The index cells at `zoom` for footprints given as lon/lat boxes [west, south, east, north] inside
 * the grid's geographic bbox (cogeo-mosaic truncates its footprints to it), in document order.
 * More than `maxCells` cells is refused: such a document is too large to write or serve.
 */
export function indexCells(grid: TileMatrixSet, boxes: readonly BBox[], zoom: number, maxCells: number): IndexCell[] {
  if (boxes.length === 0) return [];
  const gridSrs = srsFrom(grid.srs);
  const wgs = srsFrom(WGS84);
  const toGrid = (lon: number, lat: number): [number, number] => transformPoint(wgs, gridSrs, lon, lat);
  const toLonLat = (x: number, y: number): [number, number] => transformPoint(gridSrs, wgs, x, y);
  // A box crossing the antimeridian has west > east; as a polygon it is the box between them.
  const footprints = boxes.map(([a, s, b, n]) => ({ w: Math.min(a, b), s, e: Math.max(a, b), n }));

  // burnTiles.find_extrema (truncate=True) and tile_extrema.
  const [bl, bb, br, bt] = grid.def.geographicBbox;
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const f of footprints) {
    minX = Math.min(minX, f.w);
    minY = Math.min(minY, f.s);
    maxX = Math.max(maxX, f.e);
    maxY = Math.max(maxY, f.n);
  }
  const ul = grid.tileAt(...toGrid(Math.max(minX + EXTREMA_EPSILON, bl), Math.min(maxY - EXTREMA_EPSILON, bt)), zoom, false);
  const lr = grid.tileAt(...toGrid(Math.min(maxX - EXTREMA_EPSILON, br), Math.max(minY + EXTREMA_EPSILON, bb)), zoom, false);
  const xmin = Math.min(ul.x, lr.x);
  const xmax = Math.max(ul.x, lr.x) + 1;
  const ymin = Math.min(ul.y, lr.y);
  const ymax = Math.max(ul.y, lr.y) + 1;
  const width = xmax - xmin;
  const height = ymax - ymin;

  // burnTiles.make_transform: the corners of the range, to lon/lat and back (morecantile's ul, then xy).
  const corner = (x: number, y: number): [number, number] => {
    const [left, , , top] = grid.xyBounds({ x, y, z: zoom });
    return toGrid(...toLonLat(left, top));
  };
  const [ulx, uly] = corner(xmin, ymin);
  const [lrx, lry] = corner(xmax, ymax);
  const xcell = (lrx - ulx) / width;
  const ycell = (uly - lry) / height;
  // GDAL maps coordinates to pixels with the inverse geotransform, computed as GDALInvGeoTransform
  // does for a north-up one; the same operations give the same doubles near cell boundaries.
  const gt = [ulx, xcell, 0, uly, 0, -ycell] as const;
  const inv = [-gt[0] / gt[1], 1 / gt[1], -gt[3] / gt[5], 1 / gt[5]] as const;
  const runs: CellRun[] = [];
  for (const [west, south, east, north] of boxes) {
    const [xw, yn] = toGrid(west, north);
    const [xe, ys] = toGrid(east, south);
    for (const run of burnRectangle(inv[0] + xw * inv[1], inv[0] + xe * inv[1], inv[2] + yn * inv[3], inv[2] + ys * inv[3], width, height)) runs.push(run);
  }

  // Tile bounds in lon/lat (morecantile's feature: the bounds transformed, densified, which for a
  // cylindrical grid are the corners'); a column's longitudes and a row's latitudes are shared.
  const lons = new Map<number, number>();
  const lats = new Map<number, number>();
  const edgeLon = (x: number, y: number): number => {
    let lon = lons.get(x);
    if (lon === undefined) {
      const [left, , , top] = grid.xyBounds({ x, y, z: zoom });
      lon = toLonLat(left, top)[0];
      lons.set(x, lon);
    }
    return lon;
  };
  const edgeLat = (x: number, y: number): number => {
    let lat = lats.get(y);
    if (lat === undefined) {
      const [left, , , top] = grid.xyBounds({ x, y, z: zoom });
      // The grid's top edge is its bbox's (morecantile transforms the same origin for both): the
      // value truncated footprints reach, whatever PROJ's last digits make of it here.
      lat = y === 0 ? bt : toLonLat(left, top)[1];
      lats.set(y, lat);
    }
    return lat;
  };
  // Row by row (only rows some run covers), columns in order: numpy.where's order.
  runs.sort((a, b) => a.r0 - b.r0);
  const cells: IndexCell[] = [];
  let active: CellRun[] = [];
  let next = 0;
  let row = 0;
  while (next < runs.length || active.length > 0) {
    if (active.length === 0) row = Math.max(row, runs[next]!.r0);
    while (next < runs.length && runs[next]!.r0 <= row) active.push(runs[next++]!);
    active = active.filter((run) => run.r1 >= row);
    if (active.length === 0) continue;
    const y = ymin + row;
    const north = edgeLat(xmin, y);
    const south = edgeLat(xmin, y + 1);
    const inRow = footprints.flatMap((f, i) => (f.s <= north && south <= f.n ? [i] : []));
    for (const [c0, c1] of mergedSpans(active)) {
      for (let c = c0; c <= c1; c++) {
        const x = xmin + c;
        const west = edgeLon(x, y);
        const east = edgeLon(x + 1, y);
        const members = inRow.filter((i) => footprints[i]!.w <= east && west <= footprints[i]!.e);
        if (members.length === 0) continue;
        if (cells.length >= maxCells) {
          throw badRequest(`the mosaic would list more than ${maxCells} quadkeys at zoom ${zoom}: choose a lower quadkey zoom`);
        }
        cells.push({ key: quadkey(x, y, zoom, grid.minzoom), members });
      }
    }
    row++;
  }
  return cells;
}

/** The column spans of the runs covering one row, merged and in order. */
function mergedSpans(runs: readonly CellRun[]): Array<[number, number]> {
  const spans = runs.map((r): [number, number] => [r.c0, r.c1]).sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [c0, c1] of spans) {
    const last = out[out.length - 1];
    if (last && c0 <= last[1] + 1) last[1] = Math.max(last[1], c1);
    else out.push([c0, c1]);
  }
  return out;
}
