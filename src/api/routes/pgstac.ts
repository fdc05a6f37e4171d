/**
 * /searches (titiler-pgstac 3.2.0's "STAC Search" routes over a pgSTAC catalogue, docs/catalogue.md):
 * `POST /searches/register` stores a STAC item search in pgSTAC's `searches` table (pgSTAC's hash of
 * it names it, so every replica and titiler-pgstac itself share it), and the family under
 * `/searches/{search_id}` serves it as a mosaic: tiles and TileJSON from the route factory (a family
 * of TiTiler generation 2, named by the path), and here `info`, the asset lookups of a tile, a point
 * and a bbox, and the values at a point, every item found with its own.
 *
 * Each read takes pgSTAC's search limits (`scan_limit`, `items_limit`, `time_limit`, `exitwhenfull`,
 * `skipcovered`; titiler-pgstac's PgSTACParams, their defaults from settings) and the layer as /stac
 * takes it (`assets`, `expression`, `asset_bidx`, `asset_as_band`, `bidx`) with `pixel_selection`.
 * Mounted only when TESSERA_PGSTAC_DSN (or DATABASE_URL) names the database.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { TesseraError, badRequest } from '../../errors.js';
import { getTms } from '../../tms/registry.js';
import { float, floats, PyFloat, pyFloatRepr, pyLoads } from '../../pyjson.js';
import type { SearchLimits, SearchRecord } from '../../pgstac/database.js';
import type { Searches } from '../../pgstac/searches.js';
import { parseRegisterBody, type CollectionQuery } from '../../pgstac/search-body.js';
import { defaultsParams, searchRenders } from '../../pgstac/renders.js';
import type { ItemLookup } from '../../pgstac/search-index.js';
import { SearchMosaicReader, searchCompositor } from '../../readers/search-mosaic.js';
import { combine, coordCrs, datasetValues, pixelSelection, requireLayerFirst, routeQuery, stacLayer, tmsPathSchema, type PathRoute } from '../params/index.js';
import { bool, family, int, str, type ParamFamily, type Query } from '../params/family.js';
import { parseBBox, parseLonLat } from '../path-params.js';
import { notFound, sendJson } from '../reply.js';
import { baseUrl, queryPairs, urlencode } from '../urls.js';
import { installPyJsonBodyParser } from '../json-body.js';
import { defineFamily, type FamilyRegistration } from '../factory.js';
import { ValidationError } from '../errors.js';
import * as verb from '../verbs.js';
import { pointBandsV2 } from '../models.js';

const LIMIT_DOCS = {
  scan_limit: 'Return as soon as pgSTAC has scanned N items (default TESSERA_PGSTAC_SCAN_LIMIT, 10000).',
  items_limit: 'Return as soon as pgSTAC has found N items for the area (default TESSERA_PGSTAC_ITEMS_LIMIT, 100).',
  time_limit: 'Return after N seconds of scanning, with the items found (default TESSERA_PGSTAC_TIME_LIMIT, 5).',
  exitwhenfull: 'Return as soon as the items found cover the area (default true).',
  skipcovered: 'Leave out the items that the items before them cover (default true).',
};

/** PgSTACParams: the limits a request names (0 or none: the default, as titiler-pgstac's `or`). */
const searchLimits = family(
  'PgSTACParams',
  {
    scan_limit: { schema: int, doc: LIMIT_DOCS.scan_limit },
    items_limit: { schema: int, doc: LIMIT_DOCS.items_limit },
    time_limit: { schema: int, doc: LIMIT_DOCS.time_limit },
    exitwhenfull: { schema: bool, doc: LIMIT_DOCS.exitwhenfull },
    skipcovered: { schema: bool, doc: LIMIT_DOCS.skipcovered },
  },
  (q: Query): Partial<SearchLimits> => {
    const out: Partial<SearchLimits> = {};
    for (const [param, key] of [
      ['scan_limit', 'scanLimit'],
      ['items_limit', 'itemsLimit'],
      ['time_limit', 'timeLimitSeconds'],
    ] as const) {
      const v = q[param] as number | undefined;
      if (v === undefined || v === 0) continue;
      if (v < 0) throw badRequest(`Invalid ${param} ${v}: expected a positive number (0 or none: the default)`);
      out[key] = v;
    }
    if (typeof q['exitwhenfull'] === 'boolean') out.exitWhenFull = q['exitwhenfull'];
    if (typeof q['skipcovered'] === 'boolean') out.skipCovered = q['skipcovered'];
    return out;
  },
);

function searchesOf(services: Services): Searches {
  if (!services.searches) throw new TesseraError('Internal', 'no catalogue is configured (TESSERA_PGSTAC_DSN or TESSERA_CATALOG)');
  return services.searches;
}

/** Items pgSTAC may look at for one area at most: past it a search is a scan of the catalogue, not a mosaic's lookup. */
const MAX_SCAN_LIMIT = 1_000_000;

/**
 * The limits of a request, bounded before the database is asked: `time_limit` by the request's own
 * deadline, `items_limit` by the assets one read may open (TESSERA_MAX_ASSETS: a tile of more is a 400
 * anyway, and the lookup's answer stays that size), `scan_limit` by MAX_SCAN_LIMIT.
 */
function checkedLimits(services: Services, limits: Partial<SearchLimits>): Partial<SearchLimits> {
  const maxAssets = services.settings.maxAssets;
  if (limits.itemsLimit !== undefined && limits.itemsLimit > maxAssets) {
    throw badRequest(`Invalid items_limit ${limits.itemsLimit}: one read opens at most ${maxAssets} items' assets (TESSERA_MAX_ASSETS)`);
  }
  if (limits.scanLimit !== undefined && limits.scanLimit > MAX_SCAN_LIMIT) {
    throw badRequest(`Invalid scan_limit ${limits.scanLimit}: at most ${MAX_SCAN_LIMIT} items are scanned for one area`);
  }
  const seconds = limits.timeLimitSeconds;
  if (seconds !== undefined && seconds * 1000 + 1000 >= services.settings.requestTimeoutMs) {
    throw badRequest(`Invalid time_limit ${seconds}: a request ends after ${services.settings.requestTimeoutMs} ms (TESSERA_REQUEST_TIMEOUT_MS)`);
  }
  return limits;
}

/** titiler-pgstac's CollectionIdParams (but the path's `collection_id`): the filters that make a collection's search. */
const collectionQuery = family(
  'CollectionIdParams',
  {
    ids: { schema: str, doc: 'Item ids, comma-separated.' },
    bbox: { schema: str, doc: 'Items intersecting this bounding box (minx,miny,maxx,maxy in longitude/latitude).' },
    // One description per parameter name across tessera: /cog/stac's `datetime` says what this one means too.
    datetime: { schema: str, doc: 'Date and time of the item, in UTC unless an offset is given (2020-01-01, 2020-01-01T01:01:01Z), or start/end.' },
    query: { schema: str, doc: 'The STAC API Query extension: a URL-encoded JSON object of {property: {operator: value}}.' },
    sortby: { schema: str, doc: 'Properties to sort by, comma-separated, `-` before one for descending (`-datetime`).' },
    filter: {
      schema: str,
      doc: "A CQL2 filter, in `filter-lang`: CQL2-text (`eo:cloud_cover < 10 AND datetime > TIMESTAMP('2024-01-01T00:00:00Z')`) or CQL2-JSON.",
    },
    'filter-lang': {
      schema: { type: 'string', enum: ['cql2-text', 'cql2-json'] },
      doc: 'The language of `filter`. Default: cql2-text (which reads JSON text as CQL2-JSON, as cql2 does).',
    },
  },
  (q): CollectionQuery => {
    const out: CollectionQuery = { filterLang: (q['filter-lang'] as CollectionQuery['filterLang'] | undefined) ?? 'cql2-text' };
    for (const key of ['ids', 'bbox', 'datetime', 'query', 'sortby', 'filter'] as const) {
      const v = q[key];
      if (typeof v === 'string') out[key] = v;
    }
    return out;
  },
);

/** A family with nothing to name beyond its path. */
const noQuery = family('No query', {}, () => undefined);

/**
 * How a family of mosaics over the catalogue finds its search: a registered search named by the path
 * (/searches), or the search titiler-pgstac registers for a collection and the query's filters
 * (/collections).
 */
interface SearchSource<Q> {
  /** The path piece naming it. */
  param: string;
  /** The query parameters that name the search further. */
  query: ParamFamily<Q>;
  /** The search's id (pgSTAC's hash). */
  hash(services: Services, named: string, query: Q): Promise<string>;
}

const SEARCH_SOURCE: SearchSource<undefined> = { param: 'search_id', query: noQuery, hash: async (_services, id) => id };
const COLLECTION_SOURCE: SearchSource<CollectionQuery> = {
  param: 'collection_id',
  query: collectionQuery,
  hash: (services, id, q) => searchesOf(services).collectionSearch(id, q),
};

/** A catalogue family: the search's mosaic at titiler-pgstac's URLs under `prefix`. */
function catalogueFamily<Q>(
  prefix: string,
  tag: { name: string; description: string },
  what: string,
  metricsLabel: string,
  source: SearchSource<Q>,
): FamilyRegistration {
  return defineFamily({
    prefix,
    tag,
    docs: [
      { match: /^\/info$/, summary: `The record in pgSTAC of ${what}, and links to its documents`, answer: 'json' },
      { match: /\/assets$/, summary: `The STAC items ${what} finds for a tile, a point or a bbox`, answer: 'json' },
      { match: /^\/point\//, summary: `Values of each item ${what} finds at a point`, answer: 'json' },
    ],
    metricsLabel,
    enabled: (settings) => settings.pgstacDsn !== undefined || settings.catalog !== undefined,
    datasetParam: source.param,
    generation: '2',
    // What a tile reads of each item, how it picks each pixel among them, pgSTAC's limits, and what names the search.
    layer: combine(`${tag.name} layer`, { layer: stacLayer, selection: pixelSelection, limits: searchLimits, source: source.query }),
    layerFirst: (_settings, routes) => (routes === 'statistics' ? undefined : requireLayerFirst),
    datasets: (services) => ({
      open: async (named, l) =>
        new SearchMosaicReader(
          await searchesOf(services).index(await source.hash(services, named, l.source), checkedLimits(services, l.limits)),
          // rio-tiler 9 names an item's bands b1 … bn (as /stac under TESSERA_TITILER_API=2): the keys of /statistics.
          l.layer.expression ? l.layer : { ...l.layer, positional: true },
          { pixelSelection: l.selection, strictZoom: services.settings.mosaicStrictZoom, assetsHeader: services.settings.mosaicAssetsHeader },
          services.mosaicContext,
        ),
      summary: async (named, l) => {
        // Asked only with the request's layer (its tilesets, which read `url`, are not mounted for a path-named family).
        if (!l) throw new TesseraError('Internal', `${prefix}: a summary needs the request's layer`);
        const index = await searchesOf(services).index(await source.hash(services, named, l.source));
        // titiler-pgstac's WMTS titles the layers with the search's id (a collection's too).
        return { bounds: index.bounds, zooms: async (tms) => index.zooms(tms), renders: searchRenders(index.record.metadata), title: index.hash };
      },
    }),
    // titiler-pgstac 3.2.0's add_part and add_statistics (not add_ogc_maps): areas of the search's mosaic.
    verbs: [verb.bbox, verb.feature, verb.mosaicStatisticsOfFeatures],
    coverageWeighted: true,
    routes: (app, services) => catalogueRoutes(app, services, prefix, source),
  });
}

export const searchFamily = catalogueFamily(
  '/searches/:search_id',
  { name: 'STAC Search', description: 'A STAC item search registered in the pgSTAC catalogue: tiles of the items it finds, newest on top by default.' },
  'the search',
  'searches',
  SEARCH_SOURCE,
);

export const collectionFamily = catalogueFamily(
  '/collections/:collection_id',
  {
    name: 'STAC Collection',
    description:
      'A collection of the pgSTAC catalogue, filtered by the query (ids, bbox, datetime, query, sortby, a CQL2-text or CQL2-JSON filter): tiles of its items.',
  },
  'the collection',
  'collections',
  COLLECTION_SOURCE,
);

/** A link of titiler-pgstac's Link model (`href`, `rel`, `templated` when set, `title`). */
function link(href: string, rel: string, title: string, templated = false): Record<string, unknown> {
  return { href, rel, ...(templated ? { templated: true } : {}), title };
}

/** The Metadata model of a stored search as titiler-pgstac writes it: its fields first, then the rest, none null. */
function metadataModel(metadata: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { type: metadata['type'] ?? 'search' };
  const floatsOf = (v: unknown): unknown => (Array.isArray(v) ? v.map((x) => (typeof x === 'number' ? float(x) : x)) : v);
  const known: Record<string, (v: unknown) => unknown> = {
    bounds: floatsOf,
    minzoom: (v) => (v instanceof PyFloat ? v.value : v),
    maxzoom: (v) => (v instanceof PyFloat ? v.value : v),
    name: (v) => v,
    assets: (v) => v,
    defaults: (v) => v,
  };
  for (const [key, shape] of Object.entries(known)) if (metadata[key] !== undefined && metadata[key] !== null) out[key] = shape(metadata[key]);
  for (const [key, v] of Object.entries(metadata)) if (key !== 'type' && !(key in known) && v !== null && v !== undefined) out[key] = v;
  return out;
}

/** titiler-pgstac's Search model (`hash`, `search`, `_where`, `orderby`, `lastused`, `usecount`, `metadata`; none null). */
function searchModel(record: SearchRecord): Record<string, unknown> {
  return {
    hash: record.hash,
    search: record.search,
    ...(record.where !== null ? { _where: record.where } : {}),
    ...(record.orderby !== null ? { orderby: record.orderby } : {}),
    lastused: record.lastused,
    usecount: record.usecount,
    metadata: metadataModel(record.metadata),
  };
}

/** The links of a registered search (the register route's): what tessera serves of it. */
function searchLinks(request: FastifyRequest, hash: string): Array<Record<string, unknown>> {
  const base = `${baseUrl(request)}/searches/${encodeURIComponent(hash)}`;
  return [
    link(`${base}/info`, 'metadata', 'Mosaic metadata'),
    link(`${base}/{tileMatrixSetId}/tilejson.json`, 'tilejson', 'Link for TileJSON (Template URL)', true),
    link(`${base}/{tileMatrixSetId}/map.html`, 'map', 'Link for Map viewer (Template URL)', true),
    link(`${base}/WMTSCapabilities.xml`, 'wmts', 'WMTS Capabilities link.'),
  ];
}

/** A render's values as a query string (Python's `urlencode(values, doseq=True)`). */
function renderQuery(values: Record<string, unknown>): string {
  const pairs: Array<[string, string]> = [];
  for (const [key, v] of Object.entries(values)) for (const x of Array.isArray(v) ? v : [v]) pairs.push([key, pyStr(x)]);
  return urlencode(pairs);
}

/** An item lookup's items as pgSTAC wrote them (floats stay floats). */
function itemsJson(lookup: ItemLookup): unknown {
  const doc = pyLoads(lookup.text) as { features?: unknown };
  return Array.isArray(doc.features) ? doc.features : [];
}

/** Python's `str()` of a query value (urlencode's `doseq`). */
function pyStr(v: unknown): string {
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v instanceof PyFloat) return pyFloatRepr(v.value);
  if (v === null || v === undefined) return 'None';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

type NamedRoute<P = object> = PathRoute<Record<string, string> & P>;

async function catalogueRoutes<Q>(app: FastifyInstance, services: Services, prefix: string, source: SearchSource<Q>): Promise<void> {
  const searches = searchesOf(services);
  const ctx = services.mosaicContext;
  const named = (request: FastifyRequest): string => (request.params as Record<string, string>)[source.param] ?? '';
  /** The search a request names, and its asset index with the request's limits. */
  const indexOf = async (request: FastifyRequest, q: Q, limits: Partial<SearchLimits>) =>
    searches.index(await source.hash(services, named(request), q), checkedLimits(services, limits));
  const base = (request: FastifyRequest): string => `${baseUrl(request)}${prefix.replace(`:${source.param}`, encodeURIComponent(named(request)))}`;

  const infoQuery = routeQuery({ source: source.query });
  app.get<NamedRoute>('/info', { schema: { querystring: infoQuery.schema } }, async (request, reply) => {
    const record = await searches.record(await source.hash(services, named(request), infoQuery.parse(request.query).source), true);
    const at = base(request);
    // searchInfoExtension's links: the search's TileJSON and map page, and each again per render, and WMTS.
    const layers = Object.entries(searchRenders(record.metadata)).map(([name, values]) => [name, renderQuery(values as Record<string, unknown>)] as const);
    const tilejson = `${at}/{tileMatrixSetId}/tilejson.json`;
    const map = `${at}/{tileMatrixSetId}/map.html`;
    const links = [
      link(`${at}/info`, 'self', 'Mosaic metadata'),
      link(tilejson, 'tilejson', 'TileJSON link (Template URL).', true),
      ...layers.map(([name, qs]) => link(`${tilejson}?${qs}`, 'tilejson', `TileJSON link for \`${name}\` layer (Template URL).`, true)),
      link(map, 'map', 'Map viewer link (Template URL).', true),
      ...layers.map(([name, qs]) => link(`${map}?${qs}`, 'map', `Map viewer link for \`${name}\` layer (Template URL).`, true)),
      link(`${at}/WMTSCapabilities.xml`, 'wmts', 'WMTS Capabilities link.'),
    ];
    return sendJson(reply, { search: searchModel(record), links });
  });

  const limitsQuery = routeQuery({ source: source.query, limits: searchLimits });
  const tileAssetsParams = {
    type: 'object',
    properties: { ...tmsPathSchema, z: { type: 'string' }, x: { type: 'string' }, y: { type: 'string' } },
  };
  app.get<NamedRoute<{ tileMatrixSetId: string; z: string; x: string; y: string }>>(
    '/tiles/:tileMatrixSetId/:z/:x/:y/assets',
    { schema: { params: tileAssetsParams, querystring: limitsQuery.schema } },
    async (request, reply) => {
      const { z, x, y } = request.params;
      const [zi, xi, yi] = wholeNumbers({ z, x, y });
      const p = limitsQuery.parse(request.query);
      const index = await indexOf(request, p.source, p.limits);
      return sendJson(reply, itemsJson(await index.tileLookup(getTms(request.params.tileMatrixSetId)!, xi!, yi!, zi!)));
    },
  );

  const lookupQuery = routeQuery({ source: source.query, coordCrs, limits: searchLimits });
  app.get<NamedRoute<{ lonlat: string }>>('/point/:lonlat/assets', { schema: { querystring: lookupQuery.schema } }, async (request, reply) => {
    const lonlat = parseLonLat(request.params.lonlat);
    if (!lonlat) return notFound(reply);
    const p = lookupQuery.parse(request.query);
    const index = await indexOf(request, p.source, p.limits);
    return sendJson(reply, itemsJson(await index.pointLookup(lonlat[0], lonlat[1], p.coordCrs)));
  });

  app.get<NamedRoute<{ bounds: string }>>('/bbox/:bounds/assets', { schema: { querystring: lookupQuery.schema } }, async (request, reply) => {
    const bbox = parseBBox(request.params.bounds);
    if (!bbox) return notFound(reply);
    const p = lookupQuery.parse(request.query);
    const index = await indexOf(request, p.source, p.limits);
    return sendJson(reply, itemsJson(await index.bboxLookup(bbox, p.coordCrs)));
  });

  // TiTiler 2.x's mosaic point: each item that covers the point, its values and band names.
  const pointQuery = routeQuery({ source: source.query, limits: searchLimits, coordCrs, layer: stacLayer, values: datasetValues });
  app.get<NamedRoute<{ lonlat: string }>>(
    '/point/:lonlat',
    { schema: { querystring: pointQuery.schema }, preValidation: requireLayerFirst },
    async (request, reply) => {
      const lonlat = parseLonLat(request.params.lonlat);
      if (!lonlat) return notFound(reply);
      const p = pointQuery.parse(request.query);
      const index = await indexOf(request, p.source, p.limits);
      const points = await searchCompositor(index, p.layer, ctx).point(lonlat[0], lonlat[1], p.coordCrs, p.values);
      return sendJson(reply, {
        coordinates: floats(lonlat),
        assets: points.map((pt) => ({
          name: pt.asset,
          ...pointBandsV2(pt.values, pt.masked, 'numbered', pt.bandNames),
        })),
      });
    },
  );
}

/** Path pieces FastAPI types as integers (422 otherwise). */
function wholeNumbers(pieces: Record<string, string>): number[] {
  const details = Object.entries(pieces)
    .filter(([, text]) => !/^[+-]?\d+$/.test(text.trim()))
    .map(([name, text]) => ({
      type: 'int_parsing',
      loc: ['path', name],
      msg: 'Input should be a valid integer, unable to parse string as an integer',
      input: text,
    }));
  if (details.length > 0) throw new ValidationError(details);
  return Object.values(pieces).map(Number);
}

/** The list's own query parameters; every other one filters the searches' metadata (titiler-pgstac's `list_searches`). */
const LIST_PARAMS = new Set(['limit', 'offset', 'sortby']);

/**
 * `POST /searches/register`: the search stored in pgSTAC, its id (pgSTAC's hash) and links; and
 * `GET /searches/` (and the deprecated `/searches/list`): the registered mosaics, a page at a time.
 */
export async function searchRegistration(app: FastifyInstance, services: Services): Promise<void> {
  if (!services.searches) return;
  const searches = services.searches;
  const listQuery = {
    type: 'object',
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 10, description: 'Page size limit' },
      offset: { type: 'integer', minimum: 0, default: 0, description: 'Page offset' },
      sortby: { type: 'string', description: 'Sort by a metadata property, `lastused` or `usecount`, `-` before one for descending; comma-separated.' },
    },
  };
  const list = async (request: FastifyRequest<{ Querystring: { limit: number; offset: number; sortby?: string } }>, reply: FastifyReply) => {
    const { limit, offset, sortby } = request.query;
    // Starlette's QueryParams as a dict: each key once (its first place), its last value.
    const params = new Map<string, string>();
    for (const [k, v] of queryPairs(request)) params.set(k, v);
    const filters = [...params].filter(([k]) => !LIST_PARAMS.has(k.toLowerCase()));
    const order = (sortby ?? '')
      .split(',')
      .filter(() => Boolean(sortby))
      .map((s) => {
        const m = /^([+-]?)(.*)$/s.exec(s.trimStart())!;
        return { property: m[2]!, descending: m[1] === '-' };
      });
    const { matched, records } = await searches.list(filters, order, limit, offset);
    const endpoint = `${baseUrl(request)}/searches/list`;
    const page = (at: number): string => {
      const qs = new Map(params);
      qs.set('limit', String(limit));
      qs.set('offset', String(at));
      return `${endpoint}?${urlencode([...qs])}`;
    };
    const links = [{ href: page(offset), rel: 'self' }];
    if (records.length < matched) links.push({ href: page(offset + records.length), rel: 'next' });
    if (offset > 0) links.push({ href: page(Math.max(0, offset - limit)), rel: 'prev' });
    return sendJson(reply, {
      // The list links a search's info and TileJSON only (titiler-pgstac's list_searches).
      searches: records.map((record) => ({ search: searchModel(record), links: searchLinks(request, record.hash).slice(0, 2) })),
      links,
      context: { returned: records.length, limit, matched },
    });
  };
  app.get('/searches/', { schema: { querystring: listQuery } }, list);
  app.get('/searches/list', { schema: { querystring: listQuery, deprecated: true } }, list);

  await app.register(async (scope) => {
    installPyJsonBodyParser(scope);
    scope.post('/searches/register', async (request, reply) => {
      const record = await searches.register(parseRegisterBody(request.body));
      const links = searchLinks(request, record.hash);
      const tilejson = links[1]!['href'] as string;
      for (const [name, values] of Object.entries(defaultsParams(record.metadata))) {
        links.push(link(`${tilejson}?${renderQuery(values)}`, 'tilejson', `TileJSON link for \`${name}\` layer (Template URL).`, true));
      }
      return sendJson(reply, { id: record.hash, links });
    });
  });
}
