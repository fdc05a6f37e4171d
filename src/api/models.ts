/**
 * Response models: the JSON shapes TiTiler's pydantic models produce (key order, which numbers are
 * floats, which keys are dropped when unset), built from core results.
 */
import type { RasterInfo } from '../source/dataset.js';
import type { BBox } from '../tms/grid.js';
import { float, floats } from '../pyjson.js';
import type { CogReport } from '../source/cog-validation.js';
import type { Settings } from '../config.js';
import { crsUriOf } from '../ogc/tilesets.js';
import { choose } from './generations.js';

/** rio-tiler `Info` (exclude-none): declared fields first, then the extras. */
function infoModel(i: RasterInfo): Record<string, unknown> {
  return infoFields(i, { bounds: floats(i.bounds), minzoom: i.minzoom, maxzoom: i.maxzoom }, (_name, description) => description);
}

/** Info's fields after its bounds (and zooms or CRS), in rio-tiler's order; `describe` gives a band's description. */
function infoFields(i: RasterInfo, head: Record<string, unknown>, describe: (name: string, description: string) => string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...head,
    band_metadata: i.band_metadata,
    band_descriptions: i.band_descriptions.map(([name, description]) => [name, describe(name, description)]),
    dtype: i.dtype,
    nodata_type: i.nodata_type,
    colorinterp: i.colorinterp,
    scales: floats(i.scales),
    offsets: floats(i.offsets),
  };
  if (i.colormap) out['colormap'] = i.colormap;
  out['driver'] = i.driver;
  out['count'] = i.count;
  out['width'] = i.width;
  out['height'] = i.height;
  out['overviews'] = i.overviews;
  if (i.nodata_value !== undefined) out['nodata_value'] = float(i.nodata_value);
  return out;
}

/**
 * rio-tiler 9 `Info` (TiTiler 2.x, exclude-none): the dataset's own bounds and its CRS as an OGC URI
 * (WKT without an authority), no zooms, a band without a description described by its name, and
 * `minmax` from the bands' GDAL statistics metadata.
 */
export function infoModelV2(i: RasterInfo, crsUri: (wkt: string) => string | undefined): Record<string, unknown> {
  const native = i.native ?? { bounds: i.bounds, crs: 'EPSG:4326' };
  const out = infoFields(i, { bounds: floats(native.bounds), crs: crsUri(native.crs) ?? native.crs }, (name, description) => description || name);
  const minmax = i.band_metadata
    .map(([, m]) => [m['STATISTICS_MINIMUM'], m['STATISTICS_MAXIMUM']])
    .filter(([lo, hi]) => lo !== undefined && hi !== undefined)
    .map(([lo, hi]) => [float(Number(lo)), float(Number(hi))]);
  if (minmax.length > 0) out['minmax'] = minmax;
  return out;
}

/** The info model of the deployment's generation (collision infoModel): rio-tiler 6's or rio-tiler 9's, and its GeoJSON Feature. */
export function infoModelOf(settings: Settings): {
  info: (i: RasterInfo) => Record<string, unknown>;
  feature: (bounds: BBox, properties: Record<string, unknown>) => Record<string, unknown>;
} {
  return choose(settings, 'infoModel', {
    '0.18': { info: infoModel, feature: (bounds: BBox, properties: Record<string, unknown>) => bboxFeature(bounds, properties) },
    '2': {
      info: (i: RasterInfo) => infoModelV2(i, crsUriOf),
      feature: (bounds: BBox, properties: Record<string, unknown>) => bboxFeature(bounds, properties, true),
    },
  });
}

/**
 * A point's bands in rio-tiler 9's model (TiTiler 2.x): masked values null, the names as read or by
 * position (`b1 …`, 'numbered'), each band's description.
 */
export function pointBandsV2(
  values: readonly number[],
  masked: readonly boolean[] | undefined,
  names: readonly string[] | 'numbered',
  descriptions: readonly string[],
): { values: Array<ReturnType<typeof float> | null>; band_names: readonly string[]; band_descriptions: readonly string[] } {
  return {
    values: values.map((v, i) => (masked?.[i] ? null : float(v))),
    band_names: names === 'numbered' ? values.map((_, i) => `b${i + 1}`) : names,
    band_descriptions: descriptions,
  };
}

export function boundsModel(bounds: BBox): Record<string, unknown> {
  return { bounds: floats(bounds) };
}

/** A GeoJSON Feature whose polygon is a bbox (TiTiler's info.geojson). */
export function bboxFeature(bounds: BBox, properties: Record<string, unknown>, withBbox = false): Record<string, unknown> {
  const [minx, miny, maxx, maxy] = floats(bounds) as [ReturnType<typeof float>, ReturnType<typeof float>, ReturnType<typeof float>, ReturnType<typeof float>];
  return {
    // TiTiler 2.x's Feature carries its `bbox` too (geojson-pydantic's field order: bbox first).
    ...(withBbox ? { bbox: [minx, miny, maxx, maxy] } : {}),
    type: 'Feature',
    geometry: {
      type: 'Polygon',
      coordinates: [
        [
          [minx, miny],
          [maxx, miny],
          [maxx, maxy],
          [minx, maxy],
          [minx, miny],
        ],
      ],
    },
    properties,
  };
}

export interface TileJsonInput {
  tiles: string;
  minzoom: number;
  maxzoom: number;
  bounds: BBox;
  center: [number, number, number];
}

/** TileJSON 2.2.0 as TiTiler's model writes it (unset keys dropped). */
export function tileJsonModel(t: TileJsonInput): Record<string, unknown> {
  return {
    tilejson: '2.2.0',
    version: '1.0.0',
    scheme: 'xyz',
    tiles: [t.tiles],
    minzoom: t.minzoom,
    maxzoom: t.maxzoom,
    bounds: floats(t.bounds),
    center: [float(t.center[0]), float(t.center[1]), t.center[2]],
  };
}

/** rio-cogeo's Info (`/cog/validate`), with the numbers pydantic sends as floats written as floats. */
export function cogValidateModel(r: CogReport): Record<string, unknown> {
  const bands: Record<string, unknown> = {};
  for (const [name, b] of Object.entries(r['Band Metadata'])) bands[name] = { ...b, Offset: float(b.Offset), Scale: float(b.Scale) };
  return {
    ...r,
    Profile: {
      ...r.Profile,
      Nodata: r.Profile.Nodata === null ? null : float(r.Profile.Nodata),
      Scales: floats(r.Profile.Scales),
      Offsets: floats(r.Profile.Offsets),
    },
    GEO: { ...r.GEO, BoundingBox: floats(r.GEO.BoundingBox), Origin: floats(r.GEO.Origin), Resolution: floats(r.GEO.Resolution) },
    'Band Metadata': bands,
  };
}
