/**
 * A STAC item made from one raster (TiTiler's `/cog/stac`, rio-stac's `create_stac_item`): its
 * footprint in longitude/latitude, the projection extension (EPSG code, native bounds and shape,
 * affine transform, PROJJSON), the raster extension (per band: type, scale, offset, sampling,
 * nodata, unit, statistics and a histogram of a decimated read) and the eo extension (band names),
 * one asset for the raster itself. Field order and number kinds follow pystac's `to_dict`.
 *
 * Bounded like any whole-image read: the statistics read is at most `maxSize` pixels a side, checked
 * against the output and source pixel limits, and reserved in the whole-image gate before it runs.
 */
import type { Dataset } from '../gdal/gdal.js';
import { srsFrom, transformerBetween, transformPoints, WGS84 } from '../gdal/crs.js';
import { projJson } from '../gdal/projjson.js';
import { TesseraError, badRequest } from '../errors.js';
import { checkOutputValues, checkSourcePixels } from '../source/limits.js';
import { float } from '../pyjson.js';
import { arrayStatistics } from '../image/array-statistics.js';
import { estimateImageBytes, sampleBytes, type WholeImageGate } from '../image/whole-image-gate.js';
import { numpyDtype, type RasterSource, type SourceMeta } from '../source/dataset.js';
import { RasterReads } from '../source/reader.js';
import type { DType } from '../image/image-data.js';

const STAC_VERSION = '1.1.0';
const EXTENSIONS = {
  proj: 'https://stac-extensions.github.io/projection/v1.1.0/schema.json',
  raster: 'https://stac-extensions.github.io/raster/v1.1.0/schema.json',
  eo: 'https://stac-extensions.github.io/eo/v1.1.0/schema.json',
};

/** pystac's MediaType values, and `auto` (GeoTIFF, or plain TIFF without a CRS). */
export const ASSET_MEDIA_TYPES = [
  'image/tiff; application=geotiff; profile=cloud-optimized',
  'application/vnd.flatgeobuf',
  'application/geo+json',
  'application/geopackage+sqlite3',
  'image/tiff; application=geotiff',
  'application/x-hdf',
  'application/x-hdf5',
  'text/html',
  'image/jpeg',
  'image/jp2',
  'application/json',
  'image/png',
  'text/plain',
  'image/tiff',
  'application/vnd.google-earth.kml+xml',
  'application/xml',
  'application/pdf',
  'application/netcdf',
  'application/vnd.laszip+copc',
  'application/vnd.pmtiles',
  'application/vnd.apache.parquet',
  'application/vnd.zarr',
  'application/x-parquet',
  'application/vnd+zarr',
  'auto',
] as const;

export interface StacItemOptions {
  /** `YYYY-MM-DD[THH:MM[:SS[.ffffff]]][Z|±HH:MM]`, or `start/end`. */
  datetime?: string;
  extensions: string[];
  collection?: string;
  collectionUrl?: string;
  id?: string;
  assetName: string;
  assetRoles: string[];
  assetMediaType: string;
  assetHref?: string;
  withProj: boolean;
  withRaster: boolean;
  withEo: boolean;
  maxSize: number;
  densify: number;
  precision: number;
  limits: { maxOutputPixels: number; maxSourcePixels: number; gate?: WholeImageGate };
}

/** What the dataset says beyond SourceMeta. */
interface Extras {
  areaOrPoint: string | undefined;
  imagery: Record<string, string>;
  units: string[];
}

function extrasOf(ds: Dataset): Extras {
  const units: string[] = [];
  for (let i = 1; i <= ds.bands.count(); i++) units.push(ds.bands.get(i).unitType ?? '');
  return {
    areaOrPoint: ((ds.getMetadata() ?? {}) as Record<string, string>)['AREA_OR_POINT'],
    imagery: (ds.getMetadata('IMAGERY') ?? {}) as Record<string, string>,
    units,
  };
}

export async function stacItemFromRaster(source: RasterSource, url: string, opts: StacItemOptions): Promise<Record<string, unknown>> {
  const dates = parseDatetime(opts.datetime);
  const meta = await source.meta();
  const extras = await source.use(extrasOf);

  const properties: Record<string, unknown> = {};
  if (dates.kind === 'range') {
    properties['start_datetime'] = dates.start;
    properties['end_datetime'] = dates.end;
  }
  let datetime: string | null = null;
  if (dates.kind !== 'range') {
    const acquired = extras.imagery['ACQUISITIONDATETIME'];
    datetime = dates.kind === 'one' ? dates.value : acquired ? (parseDatetime(acquired).value ?? isoNow()) : isoNow();
  }

  const srs = meta.crs ? srsFrom(meta.crs) : null;
  const [footprint, bbox] = srs ? footprintOf(meta, opts.densify, opts.precision) : worldFootprint();
  const extensions = [...opts.extensions];

  if (opts.withProj) {
    extensions.push(EXTENSIONS.proj);
    const [x0, dx, rx, y0, ry, dy] = meta.geoTransform as [number, number, number, number, number, number];
    const code = srs && srs.getAuthorityName(null) === 'EPSG' ? Number(srs.getAuthorityCode(null)) : null;
    properties['proj:epsg'] = code;
    properties['proj:geometry'] = polygonOf(meta.bounds.map(float) as never);
    properties['proj:bbox'] = meta.bounds.map(float);
    properties['proj:shape'] = [meta.height, meta.width];
    properties['proj:transform'] = [dx, rx, x0, ry, dy, y0, 0, 0, 1].map(float);
    const json = srs ? projJson(srs) : null;
    if (json) properties['proj:projjson'] = json;
  }

  const assetFields: Record<string, unknown> = {};
  if (opts.withRaster) {
    extensions.push(EXTENSIONS.raster);
    assetFields['raster:bands'] = await rasterBands(source, meta, extras, opts);
  }
  if (opts.withEo) {
    extensions.push(EXTENSIONS.eo);
    assetFields['eo:bands'] = meta.bands.map((b, i) => ({ name: `b${i + 1}`, description: b.description || b.colorInterp }));
    const cloud = extras.imagery['CLOUDCOVER'];
    if (cloud !== undefined && Number.isFinite(Number.parseInt(cloud, 10))) properties['eo:cloud_cover'] = Number.parseInt(cloud, 10);
  }
  properties['datetime'] = datetime;

  const mediaType = opts.assetMediaType === 'auto' ? (srs ? 'image/tiff; application=geotiff' : 'image/tiff') : opts.assetMediaType;
  const item: Record<string, unknown> = {
    type: 'Feature',
    stac_version: STAC_VERSION,
    stac_extensions: extensions,
    id: opts.id ?? basename(url),
    geometry: footprint,
    bbox,
    properties,
    links: opts.collection ? [{ rel: 'collection', href: opts.collectionUrl ?? opts.collection, type: 'application/json' }] : [],
    assets: { [opts.assetName]: { href: opts.assetHref ?? url, type: mediaType, ...assetFields, roles: opts.assetRoles } },
  };
  if (opts.collection) item['collection'] = opts.collection;
  return item;
}

/** os.path.basename of the URL as given (query string included, as Python's is). */
function basename(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

function polygonOf([minx, miny, maxx, maxy]: [number, number, number, number]): Record<string, unknown> {
  return {
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
  };
}

function worldFootprint(): [Record<string, unknown>, unknown[]] {
  const bbox = [-180, -90, 180, 90].map(float);
  return [polygonOf(bbox as never), bbox];
}

/**
 * rio-stac's footprint: the native bounds as a polygon, `densify` points put on each edge (numpy's
 * interp between the corners) unless the CRS is EPSG:4326, carried to longitude/latitude and
 * rounded to `precision` decimals when precision ≥ 0; the bbox is that polygon's extent.
 */
function footprintOf(meta: SourceMeta, densify: number, precision: number): [Record<string, unknown>, unknown[]] {
  const [minx, miny, maxx, maxy] = meta.bounds;
  const corners: Array<[number, number]> = [
    [minx, miny],
    [maxx, miny],
    [maxx, maxy],
    [minx, maxy],
    [minx, miny],
  ];
  const srs = srsFrom(meta.crs);
  const wgs84 = srsFrom(WGS84);
  let ring = corners;
  const geographic = srs.getAuthorityName(null) === 'EPSG' && srs.getAuthorityCode(null) === '4326';
  if (densify > 0 && !geographic) {
    ring = [];
    for (let k = 0; k <= 4 * densify; k++) {
      const edge = Math.min(3, Math.floor(k / densify));
      const t = (k - edge * densify) / densify;
      const [ax, ay] = corners[edge]!;
      const [bx, by] = corners[edge + 1]!;
      ring.push(t === 0 ? [ax, ay] : [ax + (bx - ax) * t, ay + (by - ay) * t]);
    }
  }
  const xs = Float64Array.from(ring, (p) => p[0]);
  const ys = Float64Array.from(ring, (p) => p[1]);
  const ct = transformerBetween(srs, wgs84);
  if (ct) {
    const ok = new Uint8Array(ring.length);
    transformPoints(ct, xs, ys, ok, 0, ring.length);
    if (ok.some((v) => v === 0)) throw new TesseraError('BadRequest', "The raster's footprint cannot be carried to longitude/latitude");
  }
  const round = precision >= 0 ? (v: number): number => roundHalfEven(v, precision) : (v: number): number => v;
  const coords = ring.map((_, i) => [round(xs[i]!), round(ys[i]!)]);
  const bbox = [
    Math.min(...coords.map((c) => c[0]!)),
    Math.min(...coords.map((c) => c[1]!)),
    Math.max(...coords.map((c) => c[0]!)),
    Math.max(...coords.map((c) => c[1]!)),
  ];
  return [{ type: 'Polygon', coordinates: [coords.map(([x, y]) => [float(x!), float(y!)])] }, bbox.map(float)];
}

/** Python's round(x, n): to n decimals, ties to even on the decimal representation. */
function roundHalfEven(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  const scaled = x * 10 ** digits;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  const r = diff > 0.5 ? floor + 1 : diff < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
  return Number((r / 10 ** digits).toFixed(digits));
}

/** rio-stac's statistics size: the raster shrunk so its longer side is `maxSize`, rounding up. */
function statisticsSize(width: number, height: number, maxSize: number): [number, number] {
  if (!maxSize || Math.max(width, height) <= maxSize) return [width, height];
  const ratio = height / width;
  return ratio > 1 ? [Math.ceil(maxSize / ratio), maxSize] : [maxSize, Math.ceil(maxSize * ratio)];
}

const GMF_ALL_VALID = 0x01;

async function rasterBands(source: RasterSource, meta: SourceMeta, extras: Extras, opts: StacItemOptions): Promise<Array<Record<string, unknown>>> {
  const [width, height] = statisticsSize(meta.width, meta.height, opts.maxSize);
  const indexes = meta.bands.map((_, i) => i + 1);
  const reader = new RasterReads(source);
  const plan = await reader.planPreview({ width, height });
  checkOutputValues(
    width * height * indexes.length,
    opts.limits,
    `${width}x${height} pixels × ${indexes.length} band(s) of statistics`,
    'use a smaller max_size',
  );
  checkSourcePixels(plan.sourcePixels, opts.limits, 'the statistics', 'use a smaller max_size');
  await opts.limits.gate?.reserve(estimateImageBytes(width * height, indexes.length, sampleBytes(meta.bands[0]?.dataType), true));
  const image = await reader.read(plan, { indexes, resampling: 'nearest', reproject: 'nearest', unscale: false });

  const sampling = extras.areaOrPoint?.toLowerCase();
  const nodata = meta.bands[0]?.nodata ?? null;
  return meta.bands.map((b, i) => {
    const dtype = numpyDtype(b.dataType) as DType;
    const isFloat = dtype === 'float32' || dtype === 'float64';
    const value = (v: number): unknown => (isFloat ? float(v) : v);
    const stats = arrayStatistics(image.bands[i]!, dtype, (b.maskFlags & GMF_ALL_VALID) !== 0 ? null : image.masks[i]!);
    const band: Record<string, unknown> = { data_type: dtype, scale: float(b.scale), offset: float(b.offset) };
    if (sampling) band['sampling'] = sampling;
    if (nodata !== null) band['nodata'] = Number.isNaN(nodata) ? 'nan' : nodata === Infinity ? 'inf' : nodata === -Infinity ? '-inf' : float(nodata);
    if (extras.units[i]) band['unit'] = extras.units[i];
    band['statistics'] = {
      mean: float(stats.mean),
      minimum: value(stats.minimum),
      maximum: value(stats.maximum),
      stddev: float(stats.stddev),
      valid_percent: float(stats.validPercent),
    };
    const edges = stats.histogram.edges;
    band['histogram'] = { count: edges.length, min: float(Math.min(...edges)), max: float(Math.max(...edges)), buckets: stats.histogram.counts };
    return band;
  });
}

// ---- datetimes ----------------------------------------------------------------------------------

type Dates = { kind: 'none'; value?: undefined } | { kind: 'one'; value: string } | { kind: 'range'; start: string; end: string; value?: undefined };

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** pystac's str_to_datetime then datetime_to_str: ISO 8601 in, `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` out. */
function parseDatetime(text: string | undefined): Dates {
  if (text === undefined || text === '') return { kind: 'none' };
  if (text.includes('/')) {
    const [start, end, ...rest] = text.split('/');
    if (rest.length > 0) throw badRequest(`Invalid datetime '${text}': use one date-time or start/end`);
    return { kind: 'range', start: isoText(start!), end: isoText(end!) };
  }
  return { kind: 'one', value: isoText(text) };
}

function isoText(text: string): string {
  const m = ISO.exec(text.trim());
  if (!m) throw badRequest(`Invalid datetime '${text}': expected ISO 8601, such as 2020-01-01 or 2020-01-01T01:01:01Z`);
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac, zone] = m;
  const check = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  if (check.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59)
    throw badRequest(`Invalid datetime '${text}': no such date or time`);
  const micro = frac ? `.${frac.padEnd(6, '0')}` : '';
  const offset = !zone || zone === 'Z' || /^[+-]00:?00$/.test(zone) ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  return `${y}-${mo}-${d}T${h}:${mi}:${s}${micro}${offset}`;
}

function isoNow(): string {
  const now = new Date();
  return `${now.toISOString().slice(0, 23)}000Z`;
}
