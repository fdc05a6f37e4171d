/**
 * GeoJSON request bodies: a Feature (or a bare geometry) whose geometry is a Polygon or
 * MultiPolygon. Structural mistakes are reported as FastAPI does for a body that does not fit the
 * model (422 with the location of the fault); a well-formed but unusable geometry is a 400.
 */
import { gdal } from '../source/gdal.js';
import { ValidationError } from './errors.js';
import { badRequest } from '../errors.js';

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(loc: Array<string | number>, msg: string, input: unknown): ValidationError {
  return new ValidationError([{ type: 'value_error', loc: ['body', ...loc], msg, input }]);
}

function checkPosition(p: unknown, loc: Array<string | number>): void {
  if (!Array.isArray(p) || p.length < 2 || p.length > 3 || !p.every((n) => typeof n === 'number' && Number.isFinite(n))) {
    throw invalid(loc, 'Value error, a position is an array of 2 or 3 finite numbers', p);
  }
}

function checkPolygon(rings: unknown, loc: Array<string | number>): void {
  if (!Array.isArray(rings) || rings.length === 0) throw invalid(loc, 'Value error, a Polygon needs at least one linear ring', rings);
  rings.forEach((ring, i) => {
    if (!Array.isArray(ring) || ring.length < 4) {
      throw invalid([...loc, i], 'Value error, a linear ring needs at least 4 positions', ring);
    }
    ring.forEach((p, j) => checkPosition(p, [...loc, i, j]));
    const first = ring[0] as number[];
    const last = ring[ring.length - 1] as number[];
    if (first[0] !== last[0] || first[1] !== last[1]) {
      throw invalid([...loc, i], 'Value error, a linear ring must start and end with the same position', ring);
    }
  });
}

/** The geometry of a Feature body (or a bare Polygon/MultiPolygon), as a GDAL geometry. */
export function parseFeatureBody(body: unknown): gdal.Geometry {
  if (!isRecord(body)) throw invalid([], 'Input should be a valid GeoJSON Feature object', body);
  let geometry: unknown = body;
  if (body['type'] === 'Feature') {
    geometry = body['geometry'];
    if (!isRecord(geometry)) throw invalid(['geometry'], 'Input should be a valid GeoJSON geometry object', geometry);
  } else if (body['type'] === 'FeatureCollection') {
    throw badRequest('Expected a GeoJSON Feature, got a FeatureCollection');
  }
  const g = geometry as Json;
  const loc = body === geometry ? ['coordinates'] : ['geometry', 'coordinates'];
  if (g['type'] === 'Polygon') {
    checkPolygon(g['coordinates'], loc);
  } else if (g['type'] === 'MultiPolygon') {
    const polys = g['coordinates'];
    if (!Array.isArray(polys) || polys.length === 0) throw invalid(loc, 'Value error, a MultiPolygon needs at least one polygon', polys);
    polys.forEach((p, i) => checkPolygon(p, [...loc, i]));
  } else {
    throw badRequest(`Unsupported geometry type '${String(g['type'])}': use a Polygon or MultiPolygon`);
  }
  try {
    return gdal.Geometry.fromGeoJson({ type: g['type'], coordinates: g['coordinates'] });
  } catch (err) {
    throw badRequest(`Invalid geometry: ${(err as Error).message}`);
  }
}
