/**
 * The area of a lookup (a tile, point or bbox of a search's mosaic) as a shape in longitude/latitude,
 * for a catalogue in memory: GeoJSON as given, or a Web Mercator tile's corners turned as PostGIS
 * turns them (the same doubles pgSTAC compares).
 */
import { srsFrom, transformPoint, WGS84 } from '../gdal/crs.js';
import type { SearchArea } from '../pgstac/database.js';
import { shapeFromGeojson, type Shape } from './geometry.js';

export function areaShape(area: SearchArea): Shape {
  if ('geojson' in area) return shapeFromGeojson(JSON.parse(area.geojson));
  const [left, bottom, right, top] = area.webMercator;
  const from = srsFrom('EPSG:3857');
  const wgs = srsFrom(WGS84);
  const [w, n] = transformPoint(from, wgs, left, top);
  const [e, s] = transformPoint(from, wgs, right, bottom);
  const ring: Array<[number, number]> = [
    [w, s],
    [e, s],
    [e, n],
    [w, n],
    [w, s],
  ];
  return { points: [], lines: [], polygons: [[ring]], bbox: [w, s, e, n] };
}
