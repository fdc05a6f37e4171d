/**
 * The OpenAPI document at /api, completed for the people and generators that read it. Fastify's
 * swagger plugin describes each route from its JSON schema; what a reader also needs is written
 * here, once: a tag per route family (Swagger UI at /api.html groups by them), a summary per route,
 * the media types each answers with, a description of every parameter (one text per parameter
 * name: a name means the same thing on every route that takes it), and the paths TiTiler documents
 * where tessera matches several URL forms with one route (`/tiles/{z}/{x}/{y}@{scale}x.{format}`
 * and its three shorter forms are one route with a catch-all last segment here).
 *
 * Pure: it takes the plugin's document and returns a new one; app.ts computes it once.
 */
import { IMAGE_FORMATS, MEDIA_TYPES } from '../image/formats.js';

type Json = Record<string, unknown>;
interface Parameter extends Json {
  name: string;
  in: string;
  schema?: Json;
  description?: string;
  required?: boolean;
}
interface Operation extends Json {
  parameters?: Parameter[];
  summary?: string;
  tags?: string[];
  responses?: Record<string, Json>;
}

const FAMILY_TAGS: Array<[string, string]> = [
  ['/cog', 'Cloud Optimized GeoTIFF'],
  ['/stac', 'SpatioTemporal Asset Catalog'],
  ['/mosaicjson', 'MosaicJSON'],
  ['/tileMatrixSets', 'Tiling Schemes'],
  ['/algorithms', 'Algorithms'],
  ['/colorMaps', 'ColorMaps'],
  ['/healthz', 'Health Check'],
  ['/readyz', 'Health Check'],
];

const IMAGE_TYPES = [...new Set(Object.values(MEDIA_TYPES))];

type Answer = 'json' | 'geojson' | 'xml' | 'html' | 'image' | 'json-or-image';

const numbers = (n?: number): Json => ({ type: 'array', items: { type: 'number' }, ...(n ? { minItems: n, maxItems: n } : {}) });
const strings: Json = { type: 'array', items: { type: 'string' } };
const object = (properties: Record<string, Json>, required: string[] = Object.keys(properties)): Json => ({ type: 'object', properties, required });

/** Schemas of the JSON answers, in components.schemas. */
const SCHEMAS: Record<string, Json> = {
  Bounds: object({ bounds: numbers(4) }),
  TileJSON: object(
    {
      tilejson: { type: 'string' },
      name: { type: 'string' },
      version: { type: 'string' },
      scheme: { type: 'string', enum: ['xyz', 'tms'] },
      tiles: strings,
      minzoom: { type: 'integer' },
      maxzoom: { type: 'integer' },
      bounds: numbers(4),
      center: numbers(3),
    },
    ['tilejson', 'tiles', 'minzoom', 'maxzoom', 'bounds', 'center'],
  ),
  Info: object(
    {
      bounds: numbers(4),
      minzoom: { type: 'integer' },
      maxzoom: { type: 'integer' },
      band_metadata: { type: 'array', items: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'object' }] } },
      band_descriptions: { type: 'array', items: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'string' }] } },
      dtype: { type: 'string' },
      nodata_type: { type: 'string', enum: ['Alpha', 'Mask', 'Internal', 'Nodata', 'None'] },
      colorinterp: strings,
      scales: numbers(),
      offsets: numbers(),
      colormap: { type: 'object' },
      driver: { type: 'string' },
      count: { type: 'integer' },
      width: { type: 'integer' },
      height: { type: 'integer' },
      overviews: { type: 'array', items: { type: 'integer' } },
      nodata_value: { type: ['number', 'null'] },
    },
    ['bounds', 'band_metadata', 'band_descriptions', 'dtype', 'nodata_type'],
  ),
  BandStatistics: object({
    min: { type: 'number' },
    max: { type: 'number' },
    mean: { type: 'number' },
    count: { type: 'number' },
    sum: { type: 'number' },
    std: { type: 'number' },
    median: { type: 'number' },
    majority: { type: 'number' },
    minority: { type: 'number' },
    unique: { type: 'number' },
    histogram: { type: 'array', items: numbers() },
    valid_percent: { type: 'number' },
    masked_pixels: { type: 'number' },
    valid_pixels: { type: 'number' },
  }),
  Statistics: { type: 'object', description: 'Band name → its statistics', additionalProperties: { $ref: '#/components/schemas/BandStatistics' } },
  Point: object({ coordinates: numbers(2), values: { type: 'array', items: { type: ['number', 'null'] } }, band_names: strings }),
  CogValidation: object({ Path: { type: 'string' }, Driver: { type: 'string' }, COG: { type: 'boolean' }, COG_errors: { type: ['array', 'null'], items: { type: 'string' } }, COG_warnings: { type: ['array', 'null'], items: { type: 'string' } }, Profile: { type: 'object' }, GEO: { type: 'object' }, Tags: { type: 'object' }, IFD: { type: 'array', items: { type: 'object' } } }),
  StacItem: object({ type: { type: 'string', const: 'Feature' }, stac_version: { type: 'string' }, stac_extensions: strings, id: { type: 'string' }, geometry: { type: 'object' }, bbox: numbers(4), properties: { type: 'object' }, links: { type: 'array', items: { type: 'object' } }, assets: { type: 'object' } }, ['type', 'stac_version', 'id', 'geometry', 'properties', 'links', 'assets']),
  HTTPError: object({ detail: { type: 'string' } }),
  ValidationError: object({
    detail: { type: 'array', items: object({ type: { type: 'string' }, loc: { type: 'array', items: { type: ['string', 'integer'] } }, msg: { type: 'string' }, input: {} }, ['type', 'loc', 'msg']) },
  }),
};

/** Routes by the path after their family prefix: a summary, what they answer with and its schema. */
const ROUTES: Array<{ match: RegExp; method?: string; family?: string; summary: string; answer: Answer; schema?: string }> = [
  { match: /^\/tiles\//, summary: 'A map tile of the dataset in a tile matrix set', answer: 'image' },
  { match: /tilejson\.json$/, summary: 'TileJSON 3.0 of the dataset\'s tiles', answer: 'json', schema: 'TileJSON' },
  { match: /WMTSCapabilities\.xml$/, summary: 'OGC WMTS 1.0 capabilities of the dataset\'s tiles (for QGIS, ArcGIS, OpenLayers)', answer: 'xml' },
  { match: /\/map$/, summary: 'A full-window web map of the dataset\'s tiles', answer: 'html' },
  { match: /^\/viewer$/, summary: 'An interactive viewer: choose bands, rescale, colormap, algorithm', answer: 'html' },
  { match: /^\/point\//, summary: 'Values of every band at a longitude/latitude (or a point in coord_crs)', answer: 'json', schema: 'Point' },
  { match: /^\/preview/, summary: 'The whole dataset as one image, at most max_size pixels a side', answer: 'image' },
  { match: /^\/bbox\//, summary: 'An image of a bounding box', answer: 'image' },
  { match: /^\/feature/, summary: 'An image of the area of a GeoJSON Feature, outside it masked', answer: 'image' },
  { match: /^\/statistics$/, method: 'get', summary: 'Statistics and histograms of every band', answer: 'json', schema: 'Statistics' },
  { match: /^\/statistics$/, method: 'post', summary: 'Statistics of every band within each Feature of a GeoJSON Feature or FeatureCollection', answer: 'geojson' },
  { match: /^\/asset_statistics$/, summary: 'Statistics of each asset\'s bands, asset by asset', answer: 'json' },
  { match: /^\/bounds$/, summary: 'Bounds of the dataset in longitude/latitude', answer: 'json', schema: 'Bounds' },
  { match: /^\/info$/, summary: 'Metadata of the COG (bands, data type, nodata, overviews, zooms)', answer: 'json', schema: 'Info', family: '/cog' },
  { match: /^\/info$/, summary: 'Metadata of the dataset (bands, data type, nodata, overviews, zooms)', answer: 'json' },
  { match: /^\/info\.geojson$/, summary: 'Metadata of the dataset as a GeoJSON Feature of its bounds', answer: 'geojson' },
  { match: /^\/stac$/, summary: 'A STAC item made from the COG, with projection, raster and eo extensions', answer: 'json', schema: 'StacItem' },
  { match: /^\/assets$/, summary: 'Names of the item\'s assets', answer: 'json' },
  { match: /^\/validate$/, method: 'get', summary: 'Whether a GeoTIFF is a valid COG, with its errors, warnings and layout', answer: 'json', schema: 'CogValidation' },
  { match: /^\/validate$/, method: 'post', summary: 'Validate a MosaicJSON document', answer: 'json' },
  { match: /\/assets$/, summary: 'Assets of the mosaic that cover a point or a tile', answer: 'json' },
  { match: /^\/?$/, summary: 'The MosaicJSON document itself', answer: 'json' },
];

/** Routes outside the reader families, by whole path. */
const OTHER_ROUTES: Record<string, { summary: string; answer: Answer }> = {
  '/tileMatrixSets': { summary: 'The tile matrix sets (grids) tiles can be cut in', answer: 'json' },
  '/tileMatrixSets/{tileMatrixSetId}': { summary: 'One tile matrix set\'s definition', answer: 'json' },
  '/algorithms': { summary: 'The algorithms images can be processed with', answer: 'json' },
  '/algorithms/{algorithmId}': { summary: 'One algorithm\'s inputs, outputs and parameters', answer: 'json' },
  '/colorMaps': { summary: 'The names of the colormaps', answer: 'json' },
  '/colorMaps/{colorMapId}': { summary: 'One colormap, as JSON or as a legend image (format=png, …)', answer: 'json-or-image' },
  '/healthz': { summary: 'Health check: the server answers', answer: 'json' },
  '/readyz': { summary: 'Readiness: 200 while serving, 503 while shutting down', answer: 'json' },
};

/** One description per parameter name, whatever the route. */
export const PARAMETER_DOCS: Record<string, string> = {
  url: 'URL of the dataset (a COG, a STAC item or a MosaicJSON document, by family).',
  tileMatrixSetId: 'Identifier of the tile matrix set (see /tileMatrixSets). Default: WebMercatorQuad.',
  z: 'Zoom level: the identifier of a tile matrix of the tile matrix set.',
  x: 'Column of the tile in its tile matrix (0 at the left).',
  y: 'Row of the tile in its tile matrix (0 at the top).',
  scale: 'Tile size scale: 1 gives 256×256 tiles, 2 gives 512×512, up to 4.',
  format: 'Output format; by default PNG when the image needs a mask, else JPEG.',
  lon: 'Longitude (or x in coord_crs).',
  lat: 'Latitude (or y in coord_crs).',
  minx: 'Bounding box: minimum x (in coord_crs).',
  miny: 'Bounding box: minimum y (in coord_crs).',
  maxx: 'Bounding box: maximum x (in coord_crs).',
  maxy: 'Bounding box: maximum y (in coord_crs).',
  width: 'Output width in pixels.',
  height: 'Output height in pixels.',
  bidx: 'Band indexes to read (1-based); repeat for several bands.',
  expression: 'Band math over the bands (b1, b2 … for a COG; asset_b1 … for a STAC item), `;` between output bands.',
  assets: 'Names of the assets to read; repeat for several.',
  asset_bidx: 'Band indexes per asset, as `asset|1,2,3`; repeat for several assets.',
  asset_expression: 'Band math per asset, as `asset|b1/b2`.',
  asset_as_band: 'Name the bands after their assets (one band per asset) instead of asset_b1 ….',
  nodata: 'Nodata value overriding the dataset\'s (a number, or nan / inf / -inf).',
  unscale: 'Apply the bands\' internal scale and offset.',
  resampling: 'Resampling when reading at another resolution (RasterIO). Default: nearest.',
  reproject: 'Resampling when reprojecting (warp kernel). Default: nearest.',
  rescale: 'Linear rescale of values to 0–255, as `min,max`; repeat once per band.',
  color_formula: 'rio-color formula: gamma, sigmoidal and saturation operations, e.g. `gamma rgb 1.3, sigmoidal rgb 8 0.4`.',
  colormap_name: 'Name of a colormap (see /colorMaps) for one-band output.',
  colormap: 'A colormap as JSON: {value: [r, g, b, a]} or a list of [[min, max], [r, g, b, a]] intervals.',
  return_mask: 'Add the mask as an alpha band (or transparency) to the output. Default: true.',
  algorithm: 'Algorithm applied to the image (see /algorithms), such as hillshade.',
  algorithm_params: 'The algorithm\'s parameters, as JSON.',
  buffer: 'Pixels added around each tile before processing, then trimmed (a multiple of 0.5); algorithms that look at neighbours need it.',
  padding: 'Pixels read around each tile to avoid edge artefacts when resampling. Default: 0.',
  tile_format: 'Format of the tile URLs in TileJSON or WMTS documents.',
  tile_scale: 'Tile size scale of the tile URLs: 1 gives 256×256, 2 gives 512×512.',
  minzoom: 'Minimum zoom written in the document, instead of the dataset\'s.',
  maxzoom: 'Maximum zoom written in the document, instead of the dataset\'s.',
  use_epsg: 'Write the CRS as EPSG:n instead of an OGC URI in the capabilities (for ArcMap).',
  coord_crs: 'CRS of the given coordinates. Default: EPSG:4326 (longitude/latitude).',
  dst_crs: 'CRS of the output image. Default: the dataset\'s (bbox and feature: coord_crs).',
  max_size: 'Maximum width or height of the output, in pixels (aspect ratio kept).',
  categorical: 'Count each distinct value instead of computing a histogram.',
  c: 'Values whose pixels are counted (categorical statistics); repeat for several.',
  p: 'Percentiles reported, repeat for several. Default: 2 and 98.',
  histogram_bins: 'Number of equal-width histogram bins (default 10), or the bin edges separated by commas.',
  histogram_range: 'Range of the histogram, as `min,max`. Default: the band\'s minimum and maximum.',
  pixel_selection: 'How a mosaic picks each pixel among overlapping assets. Default: first.',
  orientation: 'Orientation of a colormap legend image.',
  colorMapId: 'Name of a colormap.',
  algorithmId: 'Identifier of an algorithm.',
  strict: 'Treat warnings as errors: a file with warnings is not a valid COG.',
  datetime: 'Date and time of the item, in UTC unless an offset is given (2020-01-01, 2020-01-01T01:01:01Z), or start/end.',
  extensions: 'URL of a STAC extension the item implements; repeat for several.',
  collection: 'Identifier of the collection the item belongs to (adds a collection link).',
  collection_url: 'URL of that collection, for the collection link. Default: the identifier.',
  id: 'Identifier of the item. Default: the file name.',
  asset_name: 'Name of the asset the raster becomes. Default: data.',
  asset_roles: 'Role of the asset; repeat for several.',
  asset_media_type: 'Media type of the asset; auto gives GeoTIFF (or TIFF when the raster has no CRS).',
  asset_href: 'URL written as the asset\'s href. Default: the url read.',
  with_proj: 'Add the projection extension: EPSG code, native bounds, shape, transform, PROJJSON.',
  with_raster: 'Add the raster extension: per band type, scale, offset, nodata, statistics and histogram.',
  with_eo: 'Add the eo extension: band names and descriptions, cloud cover when the file has it.',
  geometry_densify: 'Points added on each edge of the footprint before it is carried to longitude/latitude (at most 10000).',
  geometry_precision: 'Decimals the footprint\'s coordinates are rounded to; -1 keeps them whole.',
};

const IMAGE_PATH_PARAMS: Record<string, Json> = {
  y: { type: 'integer', minimum: 0 },
  scale: { type: 'integer', minimum: 1, maximum: 4 },
  format: { type: 'string', enum: [...IMAGE_FORMATS] },
  lon: { type: 'number' },
  lat: { type: 'number' },
  minx: { type: 'number' },
  miny: { type: 'number' },
  maxx: { type: 'number' },
  maxy: { type: 'number' },
  width: { type: 'integer', minimum: 1 },
  height: { type: 'integer', minimum: 1 },
};

/** Routes served with and without a trailing slash, documented as TiTiler documents them. */
const DOCUMENTED_AS: Record<string, string> = { '/mosaicjson': '/mosaicjson/' };

/** Catch-all route segments → the URL forms TiTiler documents for them. */
const EXPANSIONS: Array<{ segment: string; forms: string[] }> = [
  { segment: '{last}', forms: ['{y}@{scale}x.{format}', '{y}@{scale}x', '{y}.{format}', '{y}'] },
  { segment: '{*}', forms: ['{minx},{miny},{maxx},{maxy}/{width}x{height}.{format}', '{minx},{miny},{maxx},{maxy}.{format}'] },
  { segment: '{lonlat}', forms: ['{lon},{lat}'] },
  { segment: '{coords}', forms: ['{lon},{lat}', '{minx},{miny},{maxx},{maxy}'] },
  { segment: '{sizeformat}', forms: ['{width}x{height}.{format}'] },
];

function familyOf(path: string): { prefix: string; tag: string } | undefined {
  const hit = FAMILY_TAGS.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`));
  return hit ? { prefix: hit[0], tag: hit[1] } : undefined;
}

function content(answer: Answer, schema?: string): Json {
  const image = Object.fromEntries(IMAGE_TYPES.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]));
  const json = { 'application/json': { schema: schema ? { $ref: `#/components/schemas/${schema}` } : { type: 'object' } } };
  switch (answer) {
    case 'json':
      return json;
    case 'geojson':
      return { 'application/geo+json': { schema: { type: 'object' } } };
    case 'xml':
      return { 'application/xml': { schema: { type: 'string' } } };
    case 'html':
      return { 'text/html': { schema: { type: 'string' } } };
    case 'image':
      return image;
    case 'json-or-image':
      return { ...json, ...image };
  }
}

interface About {
  summary: string;
  answer: Answer;
  schema?: string;
}

function describe(path: string, method: string): About | undefined {
  const other = OTHER_ROUTES[path];
  if (other) return other;
  const family = familyOf(path);
  if (!family) return undefined;
  const rest = path.slice(family.prefix.length);
  return ROUTES.find((r) => r.match.test(rest) && (!r.method || r.method === method) && (!r.family || r.family === family.prefix));
}

function documentParameter(p: Parameter): Parameter {
  const description = p.description ?? PARAMETER_DOCS[p.name];
  // Path segments parsed by the handler (to answer TiTiler's errors) are plain strings to the router.
  const typed = p.in === 'path' && IMAGE_PATH_PARAMS[p.name] && p.schema?.['type'] === 'string' && !p.schema['enum'] ? { schema: IMAGE_PATH_PARAMS[p.name] } : {};
  return { ...p, ...typed, ...(description ? { description } : {}) };
}

/** The operation at one of a catch-all route's documented forms: path parameters as the form names them. */
function atForm(op: Operation, form: string, catchAll: string): Operation {
  const names = [...form.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  // A value the form's path gives is not a query parameter there (the query's `format` serves only
  // the forms without one).
  const kept = (op.parameters ?? []).filter((p) => !(p.in === 'path' && `{${p.name}}` === catchAll) && !names.includes(p.name));
  const added = names.map((name): Parameter => ({ name, in: 'path', required: true, schema: IMAGE_PATH_PARAMS[name] ?? { type: 'string' } }));
  return { ...op, parameters: [...kept, ...added] };
}

export function completeOpenApi(doc: Json): Json {
  const paths = (doc['paths'] ?? {}) as Record<string, Record<string, Operation>>;
  const out: Record<string, Record<string, Operation>> = {};
  const tags = new Set<string>();
  for (const [route, item] of Object.entries(paths)) {
    const path = DOCUMENTED_AS[route] ?? route;
    const expansion = EXPANSIONS.find((e) => path.includes(e.segment));
    const forms = expansion ? expansion.forms.map((f) => path.replace(expansion.segment, f)) : [path];
    for (const [method, original] of Object.entries(item)) {
      const about = describe(path, method);
      const family = familyOf(path);
      if (family) tags.add(family.tag);
      expansion?.forms.forEach((form, i) => {
        (out[forms[i]!] ??= {})[method] = complete(atForm(original, form, expansion.segment), about, family?.tag);
      });
      if (!expansion) (out[path] ??= {})[method] = complete(original, about, family?.tag);
    }
  }
  const components = (doc['components'] ?? {}) as Json;
  return {
    ...doc,
    paths: out,
    components: { ...components, schemas: { ...((components['schemas'] ?? {}) as Json), ...SCHEMAS } },
    tags: [...new Set(FAMILY_TAGS.map(([, tag]) => tag))].filter((tag) => tags.has(tag)).map((name) => ({ name })),
  };
}

function complete(op: Operation, about: About | undefined, tag: string | undefined): Operation {
  const responses: Record<string, Json> = { ...(op.responses ?? {}) };
  if (about) {
    const ok = (responses['200'] ?? { description: 'Successful response' }) as Json;
    responses['200'] = { ...ok, description: ok['description'] === 'Default Response' ? 'Successful response' : ok['description'], content: content(about.answer, about.schema) };
  }
  const json = (schema: string): Json => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
  responses['422'] ??= { description: 'A parameter is missing or not of its type (pydantic\'s error list)', content: json('ValidationError') };
  responses['4XX'] ??= { description: 'The request is wrong, or names something that does not exist: `detail` says why', content: json('HTTPError') };
  responses['5XX'] ??= { description: 'The upstream failed or did not answer in time: `detail` says why', content: json('HTTPError') };
  return {
    ...op,
    ...(op.summary ? {} : about ? { summary: about.summary } : {}),
    ...(tag ? { tags: op.tags ?? [tag] } : {}),
    parameters: (op.parameters ?? []).map(documentParameter),
    responses,
  };
}
