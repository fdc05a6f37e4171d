/**
 * What a map page needs to know about a TileMatrixSet to draw its tiles in place: the CRS as a
 * proj4 definition (from GDAL's OSR, as TiTiler takes it from pyproj), the grid origin, and one
 * resolution per zoom level. The browser turns this into a Leaflet CRS (proj4leaflet), so tiles of
 * any grid line up with the data bounds; Web Mercator uses Leaflet's own CRS.
 */
import type { TileMatrixSet } from '../../tms/grid.js';
import { WEB_MERCATOR_QUAD } from '../../tms/registry.js';
import { srsFrom } from '../../gdal/crs.js';

export interface MapGrid {
  id: string;
  title: string;
  /** True when Leaflet's built-in EPSG:3857 CRS is the grid (and an XYZ basemap fits it). */
  webMercator: boolean;
  /** The CRS code the page registers the proj4 definition under (e.g. `EPSG:3035`). */
  code: string;
  proj4: string;
  /** Top-left corner of the grid in x/y order. */
  origin: [number, number];
  /** The grid's extent in x/y order: Leaflet requests no tile outside it. */
  bounds: [number, number, number, number];
  /** Cell size of every zoom level from 0 to `maxzoom`, indexed by zoom (Leaflet's zoom is the index). */
  resolutions: number[];
  minzoom: number;
  maxzoom: number;
  tileSize: number;
}

const cache = new Map<string, MapGrid>();

/** The map description of a grid (cached: grids never change while tessera runs). */
export function mapGrid(tms: TileMatrixSet): MapGrid {
  let grid = cache.get(tms.id);
  if (!grid) {
    grid = describe(tms);
    cache.set(tms.id, grid);
  }
  return grid;
}

function describe(tms: TileMatrixSet): MapGrid {
  // Leaflet zooms are array indexes, so grids starting below 0 (CDB1GlobalGrid) start at 0 here.
  const minzoom = Math.max(0, tms.minzoom);
  const first = tms.matrix(minzoom);
  const [a, b] = first.pointOfOrigin;
  const origin: [number, number] = tms.def.invertAxis ? [b, a] : [a, b];
  const resolutions: number[] = [];
  for (let z = 0; z <= tms.maxzoom; z++) {
    // Levels above the grid's first one are never requested (minZoom) but must be ordered
    // resolutions for Leaflet's zoom arithmetic: halve-per-level extrapolation keeps them so.
    resolutions.push(z < minzoom ? first.cellSize * 2 ** (minzoom - z) : tms.matrix(z).cellSize);
  }
  return {
    id: tms.id,
    title: tms.title,
    webMercator: tms.id === WEB_MERCATOR_QUAD,
    code: tms.srs,
    proj4: srsFrom(tms.srs).toProj4().trim(),
    origin,
    bounds: [...tms.def.xyBbox],
    resolutions,
    minzoom,
    maxzoom: tms.maxzoom,
    tileSize: first.tileWidth,
  };
}
