/**
 * A MosaicJSON 0.0.3 document from the footprints of its COGs, as cogeo-mosaic 7.2's
 * `MosaicJSON.from_urls` makes it (what `cogeo-mosaic create` writes), so that a document made
 * by `tessera mosaic create` is the one the Python tools would make for the same COGs:
 * - footprints truncated to the grid's geographic bbox (`get_dataset_info`);
 * - minzoom and maxzoom the largest of the COGs', with cogeo-mosaic's warnings when they differ,
 *   unless given; COGs of different data types refused (its MultipleDataTypeError);
 * - quadkey zoom the one given, else minzoom (`quadkey_zoom or minzoom`: 0 means minzoom too);
 * - bounds the union of the footprints, center their middle at minzoom;
 * - tiles as burn.ts finds them;
 * - fields in the model's order, bounds and center as Python floats (`model_dump(exclude_none=True)`).
 * Pure: footprints in, document out (WebMercatorQuad, cogeo-mosaic's default grid).
 */
import { badRequest } from '../errors.js';
import { float, floats } from '../pyjson.js';
import type { BBox } from '../tms/grid.js';
import { getTms, WEB_MERCATOR_QUAD } from '../tms/registry.js';
import { indexCells } from './burn.js';

/** What cogeo-mosaic reads of a COG (`get_dataset_info`), as `/cog/info` reports it. */
export interface MosaicFootprint {
  url: string;
  /** Geographic bounds [west, south, east, north]. */
  bounds: BBox;
  minzoom: number;
  maxzoom: number;
  /** numpy's name of the first band's type (`uint16`). */
  datatype: string;
}

export interface MosaicOptions {
  minzoom?: number | undefined;
  maxzoom?: number | undefined;
  quadkeyZoom?: number | undefined;
  name?: string | undefined;
  description?: string | undefined;
  attribution?: string | undefined;
}

export interface BuiltMosaic {
  /** The document, ready for `pyDumps` (tiles as a Map: its keys stay in order). */
  document: Record<string, unknown>;
  /** cogeo-mosaic's warnings (zoom levels that differ between the COGs). */
  warnings: string[];
  quadkeyZoom: number;
  quadkeys: number;
}

/**
 * Quadkeys a document may list: beyond this one is tens of megabytes, more than tessera (and other
 * servers) will read for a request; cogeo-mosaic would first allocate the whole tile range.
 */
const MAX_QUADKEYS = 1_000_000;

export function buildMosaicJson(footprints: readonly MosaicFootprint[], options: MosaicOptions = {}): BuiltMosaic {
  if (footprints.length === 0) throw badRequest('no COG to make a mosaic of');
  const grid = getTms(WEB_MERCATOR_QUAD)!;
  const warnings: string[] = [];
  const zoomOf = (given: number | undefined, key: 'minzoom' | 'maxzoom', warning: string): number => {
    if (given !== undefined) return given;
    const values = new Set(footprints.map((f) => f[key]));
    if (values.size > 1) warnings.push(`${warning} (${[...values].sort((a, b) => a - b).join(', ')}): ${key} ${Math.max(...values)} is used`);
    return Math.max(...values);
  };
  const minzoom = zoomOf(options.minzoom, 'minzoom', 'Multiple MinZoom, Assets different minzoom values');
  const maxzoom = zoomOf(options.maxzoom, 'maxzoom', 'Multiple MaxZoom, Assets have multiple resolution values');
  const datatypes = [...new Set(footprints.map((f) => f.datatype))];
  if (datatypes.length > 1) {
    throw badRequest(`the COGs have different data types (${datatypes.join(', ')}): a mosaic's assets must share one (cogeo-mosaic's MultipleDataTypeError)`);
  }
  const quadkeyZoom = options.quadkeyZoom || minzoom;
  if (options.quadkeyZoom === 0 && minzoom !== 0) warnings.push(`quadkey zoom 0 means the minzoom in a MosaicJSON document: ${minzoom} is used`);

  // get_dataset_info: the footprint polygon's corners, each truncated to the grid's bbox.
  const [bl, bb, br, bt] = grid.def.geographicBbox;
  const lon = (v: number): number => Math.min(Math.max(v, bl), br);
  const lat = (v: number): number => Math.min(Math.max(v, bb), bt);
  const boxes = footprints.map((f): BBox => [lon(f.bounds[0]), lat(f.bounds[1]), lon(f.bounds[2]), lat(f.bounds[3])]);
  const bounds: BBox = [Infinity, Infinity, -Infinity, -Infinity];
  for (const [w, s, e, n] of boxes) {
    bounds[0] = Math.min(bounds[0], w, e);
    bounds[1] = Math.min(bounds[1], s);
    bounds[2] = Math.max(bounds[2], w, e);
    bounds[3] = Math.max(bounds[3], n);
  }

  const tiles = new Map<string, string[]>();
  for (const cell of indexCells(grid, boxes, quadkeyZoom, MAX_QUADKEYS)) {
    tiles.set(
      cell.key,
      cell.members.map((i) => footprints[i]!.url),
    );
  }

  // The model's field order; unset optional fields are left out.
  const document: Record<string, unknown> = { mosaicjson: '0.0.3' };
  if (options.name) document['name'] = options.name;
  if (options.description) document['description'] = options.description;
  document['version'] = '1.0.0';
  if (options.attribution) document['attribution'] = options.attribution;
  Object.assign(document, {
    minzoom,
    maxzoom,
    quadkey_zoom: quadkeyZoom,
    bounds: floats(bounds),
    center: [float((bounds[0] + bounds[2]) / 2), float((bounds[1] + bounds[3]) / 2), minzoom],
    tiles,
  });
  return { document, warnings, quadkeyZoom, quadkeys: tiles.size };
}
