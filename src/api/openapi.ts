/**
 * The OpenAPI document at /api, completed for the people and generators that read it. Fastify's
 * swagger plugin describes each route from its JSON schema; what a reader also needs is written
 * here, once: a tag per route family (Swagger UI at /api.html groups by them), a summary per route,
 * the media types each answers with, a description of every parameter (one text per parameter
 * name: a name means the same thing on every route that takes it), and the paths TiTiler documents
 * where tessera matches several URL forms with one route (`/tiles/{z}/{x}/{y}@{scale}x.{format}`
 * and its three shorter forms are one route with a catch-all last segment here).
 *
 * The reader families bring their own tag and the documentation of their own routes (their
 * registrations, api/factory.ts); this module documents the factory's routes and the rest.
 *
 * Where TiTiler 0.18 and 2.x clients send different URL forms, each form says whose it is
 * (`x-titiler-generation`, and a sentence in its description); where the two give one URL different
 * meanings, the route documented is the one the deployment's TESSERA_TITILER_API chose, and its
 * description says what the other value answers (api/generations.ts).
 *
 * Pure: it takes the plugin's document, the families and the settings, and returns a new document; app.ts computes it once.
 */
import { IMAGE_FORMATS, MEDIA_TYPES } from '../image/formats.js';
import { parameterDocs, PARSER_DEFAULT } from './params/index.js';
import type { Settings } from '../config.js';
import { choose, formOf } from './generations.js';

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

/** An OpenAPI tag: /api.html shows the routes under it as one section. */
export interface ApiTag {
  name: string;
  description: string;
}

type Answer = 'json' | 'geojson' | 'xml' | 'html' | 'image' | 'json-or-image' | 'json-or-html';

/** What /api says of the routes a pattern matches (the path after the family prefix): a summary, what they answer with and its schema. */
export interface RouteDoc {
  match: RegExp;
  method?: string;
  summary: string;
  answer: Answer;
  schema?: string;
}

/** What /api knows of a reader family: where it is mounted, its tag, and the documentation of its own routes. */
export interface ApiFamily {
  prefix: string;
  tag: ApiTag;
  docs?: readonly RouteDoc[];
}

/** The tags of the routes outside the reader families, by path prefix. */
const OTHER_TAGS: Array<[string, ApiTag]> = [
  ['/tileMatrixSets', { name: 'Tiling Schemes', description: 'The tile matrix sets (grids) tiles can be cut in.' }],
  ['/algorithms', { name: 'Algorithms', description: 'The algorithms images can be processed with.' }],
  ['/colorMaps', { name: 'ColorMaps', description: 'The colormaps one-band images can be coloured with, as JSON or legends.' }],
  ['/healthz', { name: 'Health Check', description: 'Whether the server answers and is ready to serve.' }],
  ['/conformance', { name: 'OGC Common', description: 'The OGC API landing document and conformance classes (TiTiler 2.x).' }],
  ['/', { name: 'OGC Common', description: 'The OGC API landing document and conformance classes (TiTiler 2.x).' }],
  ['/readyz', { name: 'Health Check', description: 'Whether the server answers and is ready to serve.' }],
  // Beside the /searches/{search_id} family, under its tag.
  ['/searches/register', { name: 'STAC Search', description: '' }],
  ['/searches/', { name: 'STAC Search', description: '' }],
  ['/searches/list', { name: 'STAC Search', description: '' }],
];

const IMAGE_TYPES = [...new Set(Object.values(MEDIA_TYPES))];

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
  CogValidation: object({
    Path: { type: 'string' },
    Driver: { type: 'string' },
    COG: { type: 'boolean' },
    COG_errors: { type: ['array', 'null'], items: { type: 'string' } },
    COG_warnings: { type: ['array', 'null'], items: { type: 'string' } },
    Profile: { type: 'object' },
    GEO: { type: 'object' },
    Tags: { type: 'object' },
    IFD: { type: 'array', items: { type: 'object' } },
  }),
  StacItem: object(
    {
      type: { type: 'string', const: 'Feature' },
      stac_version: { type: 'string' },
      stac_extensions: strings,
      id: { type: 'string' },
      geometry: { type: 'object' },
      bbox: numbers(4),
      properties: { type: 'object' },
      links: { type: 'array', items: { type: 'object' } },
      assets: { type: 'object' },
    },
    ['type', 'stac_version', 'id', 'geometry', 'properties', 'links', 'assets'],
  ),
  HTTPError: object({ detail: { type: 'string' } }),
  ValidationError: object({
    detail: {
      type: 'array',
      items: object({ type: { type: 'string' }, loc: { type: 'array', items: { type: ['string', 'integer'] } }, msg: { type: 'string' }, input: {} }, [
        'type',
        'loc',
        'msg',
      ]),
    },
  }),
};

/** The factory's routes (api/factory.ts, api/verbs.ts) and those every family has, by the path after the family prefix. */
const ROUTES: RouteDoc[] = [
  { match: /^\/tiles$/, summary: "The dataset's OGC API tilesets, one per tile matrix set", answer: 'json-or-html' },
  {
    match: /^\/tiles\/\{tileMatrixSetId\}$/,
    summary: "The dataset's OGC API tileset in a tile matrix set: the tiles each zoom covers",
    answer: 'json-or-html',
  },
  { match: /^\/tiles\//, summary: 'A map tile of the dataset in a tile matrix set', answer: 'image' },
  { match: /tilejson\.json$/, summary: "TileJSON 3.0 of the dataset's tiles", answer: 'json', schema: 'TileJSON' },
  { match: /WMTSCapabilities\.xml$/, summary: "OGC WMTS 1.0 capabilities of the dataset's tiles (for QGIS, ArcGIS, OpenLayers)", answer: 'xml' },
  { match: /\/\{tileMatrixSetId\}\/map(\.html)?$/, summary: "A full-window web map of the dataset's tiles", answer: 'html' },
  { match: /^\/viewer$/, summary: 'An interactive viewer: choose bands, rescale, colormap, algorithm', answer: 'html' },
  { match: /^\/point\//, summary: 'Values of every band at a longitude/latitude (or a point in coord_crs)', answer: 'json', schema: 'Point' },
  { match: /^\/preview/, summary: 'The whole dataset as one image, at most max_size pixels a side', answer: 'image' },
  { match: /^\/bbox\//, summary: 'An image of a bounding box', answer: 'image' },
  { match: /^\/feature/, summary: 'An image of the area of a GeoJSON Feature, outside it masked', answer: 'image' },
  { match: /^\/statistics$/, method: 'get', summary: 'Statistics and histograms of every band', answer: 'json', schema: 'Statistics' },
  {
    match: /^\/statistics$/,
    method: 'post',
    summary: 'Statistics of every band within each Feature of a GeoJSON Feature or FeatureCollection',
    answer: 'geojson',
  },
  { match: /^\/bounds$/, summary: 'Bounds of the dataset in longitude/latitude', answer: 'json', schema: 'Bounds' },
  { match: /^\/info$/, summary: 'Metadata of the dataset (bands, data type, nodata, overviews, zooms)', answer: 'json' },
  { match: /^\/info\.geojson$/, summary: 'Metadata of the dataset as a GeoJSON Feature of its bounds', answer: 'geojson' },
];

/** `/{prefix}/map`, as the deployment's generation means it (api/generations.ts, collision `prefixMap`). */
function prefixMapDoc(settings: Settings): RouteDoc {
  return choose(settings, 'prefixMap', {
    '0.18': { match: /^\/map$/, summary: "A full-window web map of the dataset's tiles, in the grid of tileMatrixSetId", answer: 'html' },
    '2': { match: /^\/map$/, summary: 'OGC API – Maps: an image of the dataset (bbox, crs, width, height, f)', answer: 'image' },
  });
}

/** Routes outside the reader families, by whole path. */
const OTHER_ROUTES: Record<string, { summary: string; answer: Answer }> = {
  '/': { summary: 'The landing page: the OGC API landing document (JSON) or the HTML page', answer: 'json-or-html' },
  '/conformance': { summary: 'The OGC API conformance classes the server declares', answer: 'json-or-html' },
  '/tileMatrixSets': { summary: 'The tile matrix sets (grids) tiles can be cut in', answer: 'json' },
  '/tileMatrixSets/{tileMatrixSetId}': { summary: "One tile matrix set's definition", answer: 'json' },
  '/algorithms': { summary: 'The algorithms images can be processed with', answer: 'json' },
  '/algorithms/{algorithmId}': { summary: "One algorithm's inputs, outputs and parameters", answer: 'json' },
  '/colorMaps': { summary: 'The names of the colormaps', answer: 'json' },
  '/colorMaps/{colorMapId}': { summary: 'One colormap, as JSON or as a legend image (format=png, …)', answer: 'json-or-image' },
  '/healthz': { summary: 'Health check: the server answers', answer: 'json' },
  '/readyz': { summary: 'Readiness: 200 while serving, 503 while shutting down', answer: 'json' },
  '/searches/register': { summary: 'Register a STAC item search (with its metadata) in the pgSTAC catalogue: its id and links', answer: 'json' },
  '/searches/': { summary: 'The registered mosaics of the pgSTAC catalogue, filtered by metadata properties, a page at a time', answer: 'json' },
  '/searches/list': { summary: 'The registered mosaics (deprecated: /searches/)', answer: 'json' },
};

/**
 * Descriptions of the parameters no family declares (path pieces, the colormap legend's query). A
 * name a family declares (`tileMatrixSetId`, `format`, `width` …) has its family's description
 * wherever it appears (api/params/).
 */
const OTHER_PARAMETER_DOCS: Record<string, string> = {
  z: 'Zoom level: the identifier of a tile matrix of the tile matrix set.',
  x: 'Column of the tile in its tile matrix (0 at the left).',
  y: 'Row of the tile in its tile matrix (0 at the top).',
  lon: 'Longitude (or x in coord_crs).',
  lat: 'Latitude (or y in coord_crs).',
  minx: 'Bounding box: minimum x (in coord_crs).',
  miny: 'Bounding box: minimum y (in coord_crs).',
  maxx: 'Bounding box: maximum x (in coord_crs).',
  maxy: 'Bounding box: maximum y (in coord_crs).',
  orientation: 'Orientation of a colormap legend image.',
  colorMapId: 'Name of a colormap.',
  algorithmId: 'Identifier of an algorithm.',
  search_id: "A registered search's identifier (pgSTAC's hash of it).",
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

/** Catch-all route segments → the URL forms TiTiler documents for them. */
const EXPANSIONS: Array<{ segment: string; forms: string[] }> = [
  { segment: '{last}', forms: ['{y}@{scale}x.{format}', '{y}@{scale}x', '{y}.{format}', '{y}'] },
  { segment: '{*}', forms: ['{minx},{miny},{maxx},{maxy}/{width}x{height}.{format}', '{minx},{miny},{maxx},{maxy}.{format}'] },
  { segment: '{lonlat}', forms: ['{lon},{lat}'] },
  { segment: '{coords}', forms: ['{lon},{lat}', '{minx},{miny},{maxx},{maxy}'] },
  { segment: '{bbox}', forms: ['{minx},{miny},{maxx},{maxy}'] },
  { segment: '{sizeformat}', forms: ['{width}x{height}.{format}'] },
  { segment: '{bounds}', forms: ['{minx},{miny},{maxx},{maxy}'] },
];

/** The operation with every `{name}` of its path declared (a path piece of the family's prefix, `{search_id}`, is in no route's schema). */
function withPathParameters(op: Operation, path: string): Operation {
  const declared = new Set((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name));
  const missing = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).filter((name) => !declared.has(name));
  if (missing.length === 0) return op;
  const added = missing.map((name): Parameter => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  return { ...op, parameters: [...added, ...(op.parameters ?? [])] };
}

/** Whether `path` is under `prefix`. */
const under = (path: string, prefix: string): boolean => path === prefix || path.startsWith(`${prefix}/`);

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
    case 'json-or-html':
      return { ...json, 'text/html': { schema: { type: 'string' } } };
  }
}

interface About {
  summary: string;
  answer: Answer;
  schema?: string;
}

/** The family's own documentation of a route first, then the factory's. */
function describe(path: string, method: string, family: ApiFamily | undefined, settings: Settings): About | undefined {
  const other = OTHER_ROUTES[path];
  if (other) return other;
  if (!family) return undefined;
  const rest = path.slice(family.prefix.length);
  const fits = (r: RouteDoc): boolean => r.match.test(rest) && (!r.method || r.method === method);
  return family.docs?.find(fits) ?? [prefixMapDoc(settings), ...ROUTES].find(fits);
}

/** Every family's parameter descriptions (checked: one text per name). */
const familyDocs = parameterDocs();

function documentParameter(p: Parameter): Parameter {
  const description = p.description ?? familyDocs.get(p.name) ?? OTHER_PARAMETER_DOCS[p.name];
  // Path segments parsed by the handler (to answer TiTiler's errors) are plain strings to the router.
  const typed =
    p.in === 'path' && IMAGE_PATH_PARAMS[p.name] && p.schema?.['type'] === 'string' && !p.schema['enum'] ? { schema: IMAGE_PATH_PARAMS[p.name] } : {};
  return withParserDefault({ ...p, ...typed, ...(description ? { description } : {}) });
}

/** The default a parameter's parser applies (its family's parserDefault), as the schema's `default`. */
function withParserDefault(p: Parameter): Parameter {
  if (!p.schema || !(PARSER_DEFAULT in p.schema)) return p;
  const { [PARSER_DEFAULT]: value, ...schema } = p.schema;
  return { ...p, schema: { ...schema, default: value } };
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

export function completeOpenApi(doc: Json, mounted: readonly ApiFamily[], settings: Settings): Json {
  // A prefix with a path piece (`/searches/:search_id`) as OpenAPI writes it (`/searches/{search_id}`).
  const families = mounted.map((f) => ({ ...f, prefix: f.prefix.replace(/:(\w+)/g, '{$1}') }));
  const paths = (doc['paths'] ?? {}) as Record<string, Record<string, Operation>>;
  const out: Record<string, Record<string, Operation>> = {};
  // Every tag, the families' first, in the order they are mounted.
  const allTags: Array<[string, ApiTag]> = [...families.map((f): [string, ApiTag] => [f.prefix, f.tag]), ...OTHER_TAGS];
  const used = new Set<string>();
  for (const [route, item] of Object.entries(paths)) {
    const family = families.find((f) => under(route, f.prefix));
    // A family's root is served with and without a trailing slash, and documented as TiTiler does: with.
    const path = route === family?.prefix ? `${route}/` : route;
    const tag = allTags.find(([prefix]) => under(route, prefix))?.[1].name;
    if (tag) used.add(tag);
    const expansion = EXPANSIONS.find((e) => path.includes(e.segment));
    const forms = expansion ? expansion.forms.map((f) => path.replace(expansion.segment, f)) : [path];
    for (const [method, original] of Object.entries(item)) {
      const about = describe(path, method, family, settings);
      expansion?.forms.forEach((form, i) => {
        const key = forms[i]!;
        out[key] ??= {};
        out[key][method] = inDialect(marked(complete(withPathParameters(atForm(original, form, expansion.segment), key), about, tag), key, settings), settings);
      });
      if (!expansion) {
        out[path] ??= {};
        out[path][method] = inDialect(marked(complete(withPathParameters(original, path), about, tag), path, settings), settings);
      }
    }
  }
  const components = (doc['components'] ?? {}) as Json;
  const tags = new Map(allTags.map(([, tag]) => [tag.name, tag]));
  return {
    ...doc,
    paths: out,
    components: { ...components, schemas: { ...((components['schemas'] ?? {}) as Json), ...SCHEMAS } },
    tags: [...tags.values()].filter((tag) => used.has(tag.name)),
  };
}

/** The query parameters that name an image format, whose list TiTiler 2.x extends by `tiff`. */
const FORMAT_QUERY_PARAMS = new Set(['format', 'tile_format']);

/**
 * Parameters as the deployment's generation lists them: under 0.18 the format enums are 0.18.10's
 * (`tiff`, TiTiler 2.x's name of `tif`, is taken too and said so in the description), as the 422
 * messages are (api/errors.ts).
 */
function inDialect(op: Operation, settings: Settings): Operation {
  if (settings.titilerApi !== '0.18' || !op.parameters) return op;
  const parameters = op.parameters.map((p) => {
    const values = p.schema?.['enum'];
    if (p.in !== 'query' || !FORMAT_QUERY_PARAMS.has(p.name) || !Array.isArray(values) || !values.includes('tiff')) return p;
    const note = '`tiff` (TiTiler 2.x) is taken too, as `tif`.';
    return { ...p, schema: { ...p.schema, enum: values.filter((v) => v !== 'tiff') }, description: p.description ? `${p.description} ${note}` : note };
  });
  return { ...op, parameters };
}

/** A form one TiTiler generation's clients send (or whose meaning the setting chose) says so. */
function marked(op: Operation, path: string, settings: Settings): Operation {
  const form = formOf(path, settings);
  if (!form) return op;
  const description = typeof op['description'] === 'string' ? `${op['description']}\n\n${form.note}` : form.note;
  return { ...op, description, 'x-titiler-generation': form.generation };
}

function complete(op: Operation, about: About | undefined, tag: string | undefined): Operation {
  const responses: Record<string, Json> = { ...(op.responses ?? {}) };
  if (about) {
    const ok = (responses['200'] ?? { description: 'Successful response' }) as Json;
    responses['200'] = {
      ...ok,
      description: ok['description'] === 'Default Response' ? 'Successful response' : ok['description'],
      content: content(about.answer, about.schema),
    };
  }
  const json = (schema: string): Json => ({ 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } });
  responses['422'] ??= { description: "A parameter is missing or not of its type (pydantic's error list)", content: json('ValidationError') };
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
