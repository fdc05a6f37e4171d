/**
 * What OGC API – Tiles documents say of a dataset in a grid (TiTiler 2.x's `/tiles` and
 * `/tiles/{tileMatrixSetId}`, titiler/core/factory.py `tilesets`, and the limits of its WMTS layers):
 * the grid's geographic CRS (morecantile 7's `geographic_crs`: the geodetic CRS of the grid's own),
 * named by its OGC URI as rio-tiler's `CRS_to_uri` names it, and the rows and columns of each matrix
 * that a bounding box covers (titiler/core/utils.py `tms_limits`, over morecantile's `tile`). Pure
 * arithmetic over the grid and one coordinate transform per corner; no HTTP, no dataset read.
 */
import type { SpatialReference } from '../gdal/gdal.js';
import { sameCrs, srsFrom, transformBounds, transformPoint } from '../gdal/crs.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { badRequest } from '../errors.js';

/** Most zoom levels one document lists: a range is sized by the client, so it is bounded (TiTiler's is not). */
const MAX_LEVELS = 64;

/** A CRS as a transform takes it (`EPSG:4269`) and as OGC documents name it. */
export interface NamedCrs {
  srs: string;
  uri: string;
}

const geographic = new Map<string, NamedCrs>();

/** `http://www.opengis.net/def/crs/{authority}/0/{code}`: rio-tiler's form (version 0 when the authority names none). */
function ogcUri(authority: string, code: string): string {
  const [name, version] = authority.includes('_') ? authority.split('_', 2) : [authority, '0'];
  return `http://www.opengis.net/def/crs/${name}/${version}/${code}`;
}

/** The geographic CRS of a grid: its own when it is geographic (WorldCRS84Quad), else its geodetic base. */
export function geographicCrsOf(tms: TileMatrixSet): NamedCrs {
  let found = geographic.get(tms.id);
  if (!found) {
    const own = srsFrom(tms.srs);
    // A geographic grid is its own (OGC:CRS84 stays CRS84: GDAL would name it EPSG:4326).
    const named = own.isGeographic() ? /^(\w+):(\w+)$/.exec(tms.srs) : null;
    const geog = own.isGeographic() ? own : own.cloneGeogCS();
    const authority = named?.[1] ?? geog.getAuthorityName(null);
    const code = named?.[2] ?? geog.getAuthorityCode(null);
    found = authority && code ? { srs: `${authority}:${code}`, uri: ogcUri(authority, code) } : { srs: 'EPSG:4326', uri: ogcUri('EPSG', '4326') };
    geographic.set(tms.id, found);
  }
  return found;
}

/** The OGC URI of a CRS given as text (EPSG:4326 …), or undefined when it has no authority code. */
export function crsUriOf(text: string): string | undefined {
  const srs = srsFrom(text);
  const authority = srs.getAuthorityName(null);
  const code = srs.getAuthorityCode(null);
  return authority && code ? ogcUri(authority, code) : undefined;
}

/**
 * `bounds` (in `fromSrs`) in `toSrs`, as rio-tiler's `get_geographic_bounds` gives them: a 21-point
 * densified transform, the whole world when nothing transforms.
 */
export function boundsIn(bounds: BBox, fromSrs: string, toSrs: string): BBox {
  const from = srsFrom(fromSrs);
  const to = srsFrom(toSrs);
  if (sameCrs(from, to)) return [...bounds];
  const out = transformBounds(from, to, bounds, 21);
  return out.every(Number.isFinite) ? out : [-180, -90, 180, 90];
}

/** A point in the grid's CRS, infinite where it does not transform (pyproj's answer; morecantile then takes tile 0). */
function toGrid(from: SpatialReference, to: SpatialReference, x: number, y: number): [number, number] {
  try {
    return transformPoint(from, to, x, y);
  } catch {
    return [Infinity, Infinity];
  }
}

/** The rows and columns of one matrix a bounding box covers (an OGC `TileMatrixLimits`). */
export interface TileMatrixLimits {
  tileMatrix: string;
  minTileRow: number;
  maxTileRow: number;
  minTileCol: number;
  maxTileCol: number;
}

/**
 * The limits of every matrix from `minzoom` (raised to the grid's first) to `maxzoom`, for `bounds`
 * given in `geographicSrs` (longitude first): the tiles holding the upper-left and lower-right
 * corners, as TiTiler 2.x writes them (the upper limits capped at the matrix size, not size − 1).
 * A range of more than MAX_LEVELS zooms, or a zoom the grid has no matrix for, is a 400.
 */
export function tileMatrixLimits(tms: TileMatrixSet, bounds: BBox, zooms: { minzoom: number; maxzoom: number }, geographicSrs: string): TileMatrixLimits[] {
  const from = srsFrom(geographicSrs);
  const to = srsFrom(tms.srs);
  const [ulx, uly] = toGrid(from, to, bounds[0], bounds[3]);
  const [lrx, lry] = toGrid(from, to, bounds[2], bounds[1]);
  const first = Math.max(zooms.minzoom, tms.minzoom);
  if (zooms.maxzoom - first >= MAX_LEVELS) throw badRequest(`Zooms ${zooms.minzoom} to ${zooms.maxzoom} of ${tms.id}: at most ${MAX_LEVELS} levels`);
  const out: TileMatrixLimits[] = [];
  for (let zoom = first; zoom <= zooms.maxzoom; zoom++) {
    let matrix: ReturnType<TileMatrixSet['matrix']>;
    try {
      matrix = tms.matrix(zoom);
    } catch {
      throw badRequest(`${tms.id} has no matrix for zoom ${zoom}`);
    }
    const ul = tms.tileAt(ulx, uly, zoom, false);
    const lr = tms.tileAt(lrx, lry, zoom, false);
    out.push({
      tileMatrix: matrix.id,
      minTileRow: Math.max(Math.min(ul.y, lr.y), 0),
      maxTileRow: Math.min(Math.max(ul.y, lr.y), matrix.matrixHeight),
      minTileCol: Math.max(Math.min(ul.x, lr.x), 0),
      maxTileCol: Math.min(Math.max(ul.x, lr.x), matrix.matrixWidth),
    });
  }
  return out;
}
