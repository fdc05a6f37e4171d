/**
 * GeoJSON request bodies: a Feature (or a bare geometry) whose geometry is a Polygon or
 * MultiPolygon, and for statistics a Feature or a FeatureCollection of them. Structural mistakes
 * are reported as FastAPI does for a body that does not fit the model (422 with the location of
 * the fault); a well-formed but unusable geometry is a 400. Statistics bodies are echoed back the
 * way TiTiler's pydantic models write them (`featureBodyToJson`).
 */
import { gdal } from '../gdal/gdal.js';
import { ValidationError } from './errors.js';
import { badRequest } from '../errors.js';
import { float, type PyFloat } from '../pyjson.js';

type Json = Record<string, unknown>;
type Loc = Array<string | number>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(loc: Loc, msg: string, input: unknown): ValidationError {
  return new ValidationError([{ type: 'value_error', loc: ['body', ...loc], msg, input }]);
}

function checkPosition(p: unknown, loc: Loc): void {
  if (!Array.isArray(p) || p.length < 2 || p.length > 3 || !p.every((n) => typeof n === 'number' && Number.isFinite(n))) {
    throw invalid(loc, 'Value error, a position is an array of 2 or 3 finite numbers', p);
  }
}

/** Most positions one body may hold, all its features together: rasterising and reprojecting cost grows with them. */
const MAX_VERTICES = 200_000;

/** Positions counted so far in one body. */
interface Tally {
  vertices: number;
}

function checkPolygon(rings: unknown, loc: Loc, tally: Tally): void {
  if (!Array.isArray(rings) || rings.length === 0) throw invalid(loc, 'Value error, a Polygon needs at least one linear ring', rings);
  rings.forEach((ring, i) => {
    if (!Array.isArray(ring) || ring.length < 4) {
      throw invalid([...loc, i], 'Value error, a linear ring needs at least 4 positions', ring);
    }
    tally.vertices += ring.length;
    if (tally.vertices > MAX_VERTICES)
      throw badRequest(`The GeoJSON body has more than ${MAX_VERTICES} vertices; simplify the geometries or send fewer features`);
    ring.forEach((p, j) => {
      checkPosition(p, [...loc, i, j]);
    });
    const first = ring[0] as number[];
    const last = ring[ring.length - 1] as number[];
    if (first[0] !== last[0] || first[1] !== last[1]) {
      throw invalid([...loc, i], 'Value error, a linear ring must start and end with the same position', ring);
    }
  });
}

/** A Polygon or MultiPolygon object (at `loc` in the body) as a GDAL geometry. */
function polygonGeometry(g: Json, loc: Loc, tally: Tally): gdal.Geometry {
  const coordinatesLoc = [...loc, 'coordinates'];
  if (g['type'] === 'Polygon') {
    checkPolygon(g['coordinates'], coordinatesLoc, tally);
  } else if (g['type'] === 'MultiPolygon') {
    const polys = g['coordinates'];
    if (!Array.isArray(polys) || polys.length === 0) throw invalid(coordinatesLoc, 'Value error, a MultiPolygon needs at least one polygon', polys);
    polys.forEach((p, i) => {
      checkPolygon(p, [...coordinatesLoc, i], tally);
    });
  } else {
    throw badRequest(`Unsupported geometry type '${String(g['type'])}': use a Polygon or MultiPolygon`);
  }
  try {
    return gdal.Geometry.fromGeoJson({ type: g['type'], coordinates: g['coordinates'] });
  } catch (err) {
    throw badRequest(`Invalid geometry: ${(err as Error).message}`);
  }
}

/** The geometry of a Feature body (or a bare Polygon/MultiPolygon), as a GDAL geometry. */
export function parseFeatureBody(body: unknown): gdal.Geometry {
  if (!isRecord(body)) throw invalid([], 'Input should be a valid GeoJSON Feature object', body);
  // FastAPI's 422 for a body that is not the Feature model, entry for entry as TiTiler answers it.
  if (body['type'] === 'FeatureCollection') {
    throw new ValidationError([
      { type: 'literal_error', loc: ['body', 'type'], msg: "Input should be 'Feature'", input: 'FeatureCollection', ctx: { expected: "'Feature'" } },
      ...(['geometry', 'properties'] as const)
        .filter((key) => !(key in body))
        .map((key) => ({ type: 'missing', loc: ['body', key], msg: 'Field required', input: body })),
    ]);
  }
  if (body['type'] !== 'Feature') return polygonGeometry(body, [], { vertices: 0 });
  const geometry = body['geometry'];
  if (!isRecord(geometry)) throw invalid(['geometry'], 'Input should be a valid GeoJSON geometry object', geometry);
  return polygonGeometry(geometry, ['geometry'], { vertices: 0 });
}

// ---- Feature or FeatureCollection (POST statistics) --------------------------------------------

/** One feature of a statistics body: its shape, and what TiTiler's model keeps of it to echo. */
export interface BodyFeature {
  shape: gdal.Geometry;
  geometry: { type: string; coordinates: unknown; bbox?: number[] };
  /** `null` when the feature had none (TiTiler answers `{}` plus the statistics). */
  properties: Json | null;
  id?: string | number;
  bbox?: number[];
}

export interface FeatureBody {
  type: 'Feature' | 'FeatureCollection';
  features: BodyFeature[];
  bbox?: number[];
}

/** GeoJSON `bbox`: 4 or 6 numbers (geojson-pydantic's BBox), absent or null meaning none. */
function parseBbox(value: unknown, loc: Loc): number[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || (value.length !== 4 && value.length !== 6) || !value.every((n) => typeof n === 'number' && Number.isFinite(n))) {
    throw invalid(loc, 'Value error, a bbox is an array of 4 or 6 finite numbers', value);
  }
  return value as number[];
}

function parseBodyFeature(f: unknown, loc: Loc, tally: Tally): BodyFeature {
  if (!isRecord(f) || f['type'] !== 'Feature') throw invalid(loc, "Input should be a GeoJSON object of type 'Feature'", f);
  const geometry = f['geometry'];
  if (geometry === null || geometry === undefined) throw badRequest('Invalid geometry: a feature without geometry has no pixels to summarise');
  if (!isRecord(geometry)) throw invalid([...loc, 'geometry'], 'Input should be a valid GeoJSON geometry object', geometry);
  const shape = polygonGeometry(geometry, [...loc, 'geometry'], tally);
  // geojson-pydantic requires `properties` (null allowed); a missing one is read as null here.
  const properties = f['properties'] ?? null;
  if (properties !== null && !isRecord(properties)) throw invalid([...loc, 'properties'], 'Input should be a valid dictionary', properties);
  const id = f['id'];
  if (id !== undefined && id !== null && typeof id !== 'string' && !(typeof id === 'number' && Number.isInteger(id))) {
    throw invalid([...loc, 'id'], 'Input should be a valid integer or string', id);
  }
  const out: BodyFeature = {
    shape,
    geometry: { type: geometry['type'] as string, coordinates: geometry['coordinates'] },
    properties,
  };
  const geometryBbox = parseBbox(geometry['bbox'], [...loc, 'geometry', 'bbox']);
  if (geometryBbox) out.geometry.bbox = geometryBbox;
  if (typeof id === 'string' || typeof id === 'number') out.id = id;
  const bbox = parseBbox(f['bbox'], [...loc, 'bbox']);
  if (bbox) out.bbox = bbox;
  return out;
}

/**
 * A GeoJSON Feature or FeatureCollection whose geometries are Polygons or MultiPolygons (TiTiler's
 * `Union[FeatureCollection, Feature]` body). 422 for what does not fit the model, 400 for a
 * geometry no statistics can be computed over.
 */
export function parseFeatureOrCollectionBody(body: unknown): FeatureBody {
  if (!isRecord(body)) throw invalid([], 'Input should be a valid GeoJSON Feature or FeatureCollection object', body);
  if (body['type'] === 'Feature') {
    const feature = parseBodyFeature(body, [], { vertices: 0 });
    return { type: 'Feature', features: [feature] };
  }
  if (body['type'] !== 'FeatureCollection') {
    throw invalid(['type'], "Input should be 'Feature' or 'FeatureCollection'", body['type'] ?? null);
  }
  const features = body['features'];
  if (!Array.isArray(features)) throw invalid(['features'], 'Input should be a valid list of features', features ?? null);
  const tally: Tally = { vertices: 0 };
  const out: FeatureBody = { type: 'FeatureCollection', features: features.map((f, i) => parseBodyFeature(f, ['features', i], tally)) };
  const bbox = parseBbox(body['bbox'], ['bbox']);
  if (bbox) out.bbox = bbox;
  return out;
}

/** Nested coordinate arrays with every number a Python float (geojson-pydantic positions are floats). */
function floatCoordinates(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(floatCoordinates);
  return typeof value === 'number' ? float(value) : value;
}

const floatList = (values: readonly number[]): PyFloat[] => values.map(float);

/**
 * The body echoed back as TiTiler's response model writes it: `bbox` (when given), `type`,
 * `geometry`, `properties` with `statistics` first and the client's properties after it (those
 * whose value is null dropped), `id` (when given); coordinates and bboxes as floats; other
 * members of the objects are not kept. `statistics[i]` belongs to feature i.
 */
export function featureBodyToJson(body: FeatureBody, statistics: readonly unknown[], extra?: ReadonlyArray<Record<string, unknown>>): unknown {
  const features = body.features.map((f, i) => {
    const properties: Json = { statistics: statistics[i] };
    for (const [key, value] of Object.entries(f.properties ?? {})) {
      if (key !== 'statistics' && value !== null) properties[key] = value;
    }
    // Set after the feature's own, as TiTiler's `properties.update` (a mosaic's `used_assets`).
    for (const [key, value] of Object.entries(extra?.[i] ?? {})) properties[key] = value;
    const geometry: Json = {};
    if (f.geometry.bbox) geometry['bbox'] = floatList(f.geometry.bbox);
    geometry['type'] = f.geometry.type;
    geometry['coordinates'] = floatCoordinates(f.geometry.coordinates);
    const out: Json = {};
    if (f.bbox) out['bbox'] = floatList(f.bbox);
    out['type'] = 'Feature';
    out['geometry'] = geometry;
    out['properties'] = properties;
    if (f.id !== undefined) out['id'] = f.id;
    return out;
  });
  if (body.type === 'Feature') return features[0];
  const out: Json = {};
  if (body.bbox) out['bbox'] = floatList(body.bbox);
  out['type'] = 'FeatureCollection';
  out['features'] = features;
  return out;
}
