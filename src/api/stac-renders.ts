/**
 * A STAC item's `renders` as TiTiler 2.x answers them (titiler/extensions/render.py 2.4.0,
 * `stacRenderExtension`, and TileJSON's `raster_layers`): `/stac/renders` lists the item's named
 * sets of tile parameters, `/stac/renders/{render_id}` one of them, each in the RenderItem model
 * (adapted to 2.x's per-asset options), with links to its TileJSON and WMTS document where the
 * parameters are ones a tile takes. Only TiTiler 2.x clients send these: answered whatever the setting.
 *
 * Whether a render's parameters are ones a tile takes is asked of the family's own TileJSON route,
 * in process (TiTiler runs the tile route's parameter dependencies over them): the same parsing and
 * the same 4xx, nothing read but the item.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { TesseraError, badRequest } from '../errors.js';
import { float } from '../pyjson.js';
import { datasetUrl, routeQuery, type PathRoute, type QueryRoute, type RouteQuery } from './params/index.js';
import { sendJson } from './reply.js';
import { baseUrl, queryPairs, quotePlus, requestUrl } from './urls.js';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const sequence = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

/** titiler's `_adapt_render_for_v2`: `asset_bidx` and `asset_expression` folded into the assets' `|` options. */
export function adaptForV2(render: Record<string, unknown>): Record<string, unknown> {
  const out = { ...render };
  const assets = out['assets'];
  if (!assets) return out;
  const options = new Map<string, string[]>(sequence(assets).map((a) => [String(a), []]));
  for (const [key, option] of [
    ['asset_bidx', 'bidx'],
    ['asset_expression', 'expression'],
  ] as const) {
    const entries = out[key];
    delete out[key];
    if (!entries) continue;
    for (const entry of sequence(entries)) {
      const [asset, value] = String(entry).split('|');
      if (asset !== undefined && value !== undefined) options.get(asset)?.push(`${option}=${value}`);
    }
  }
  out['assets'] = [...options].map(([asset, opts]) => (opts.length > 0 ? `${asset}|${opts.join('|')}` : asset));
  return out;
}

/** RenderItem's declared fields, in its order (the rest follow, as pydantic writes extras), None left out. */
const RENDER_FIELDS = ['title', 'assets', 'expression', 'rescale', 'nodata', 'colormap_name', 'colormap', 'color_formula', 'resampling', 'minmax_zoom'];

function renderModel(render: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const typed: Record<string, (v: unknown) => unknown> = {
    rescale: (v) => (Array.isArray(v) ? v.map((r) => (Array.isArray(r) ? r.map((x) => (typeof x === 'number' ? float(x) : x)) : r)) : v),
    nodata: (v) => (typeof v === 'number' ? float(v) : v),
  };
  for (const key of RENDER_FIELDS) {
    const v = render[key];
    if (v !== undefined && v !== null) out[key] = typed[key] ? typed[key](v) : v;
  }
  for (const [key, v] of Object.entries(render)) if (!RENDER_FIELDS.includes(key) && v !== null && v !== undefined) out[key] = v;
  return out;
}

/** Python's `str()` of a JSON value (urlencode's `doseq` writes each element with it). */
function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null || v === undefined) return 'None';
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (isRecord(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  return String(v);
}

/** Python's `repr()` inside a list or dict: strings quoted. */
function pyRepr(v: unknown): string {
  return typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : pyStr(v);
}

/** Python's `urlencode(params, doseq=True)`. */
export function urlencodeDoseq(params: Record<string, unknown>): string {
  const pairs: string[] = [];
  for (const [key, v] of Object.entries(params)) {
    for (const x of Array.isArray(v) ? v : [v]) pairs.push(`${quotePlus(key)}=${quotePlus(pyStr(x))}`);
  }
  return pairs.join('&');
}

/** titiler's Link model, in its field order. */
interface RenderLink {
  href: string;
  rel: string;
  type?: string;
  templated?: boolean;
  title: string;
}

/** Renders one list answers: each is checked by a request of its own (a TileJSON's parsing), so their number is bounded. */
export const MAX_RENDERS = 100;

/**
 * Whether the TileJSON route of the family at `prefix` takes `query` (as TiTiler's check_query_params
 * asks its tile route's dependencies), asked in process with the request's access token.
 */
export async function tileRouteTakes(app: FastifyInstance, request: FastifyRequest, prefix: string, query: string): Promise<boolean> {
  const token = queryPairs(request).find(([k]) => k === 'access_token');
  const res = await app.inject({
    method: 'GET',
    url: `${prefix}/WebMercatorQuad/tilejson.json?${query}${token ? `&access_token=${quotePlus(token[1])}` : ''}`,
    headers: { ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}) },
  });
  return res.statusCode === 200;
}

/**
 * Where a family's renders come from: `/stac` names its item by `url` (kept in every link, as
 * TiTiler writes it); the catalogue's items by their path (their links carry no `url`).
 */
export interface RenderSource {
  /** The routes' own query parameters (`url`, or none). */
  query: RouteQuery<Record<string, unknown>>;
  /** The item's renders, from the parsed query and the request's path. */
  renders(request: FastifyRequest, query: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The query parameters naming the dataset in every link (`{url}`, or nothing). */
  datasetParams(query: Record<string, unknown>): Record<string, unknown>;
  /** The family's path for this request (`/stac`, `/collections/c/items/i`). */
  prefix(request: FastifyRequest): string;
}

/** `/stac`'s renders: the item `url` names. */
export function urlRenderSource(services: Services): RenderSource {
  return {
    query: routeQuery({ url: datasetUrl }),
    renders: async (_request, query) => (await services.stac(String(query['url']))).item.renders ?? {},
    datasetParams: (query) => ({ url: query['url'] }),
    prefix: () => '/stac',
  };
}

export async function stacRenderRoutes(app: FastifyInstance, source: RenderSource): Promise<void> {
  const query = source.query;

  const item = async (request: FastifyRequest, id: string, given: unknown, dataset: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const prefix = source.prefix(request);
    const at = `${baseUrl(request)}${prefix}`;
    const self = urlencodeDoseq(dataset);
    const links: RenderLink[] = [
      {
        href: `${at}/renders/${encodeURIComponent(id)}${self ? `?${self}` : ''}`,
        rel: 'self',
        type: 'application/json',
        title: `STAC Renders metadata for ${id}`,
      },
    ];
    const render = adaptForV2(isRecord(given) ? given : {});
    const params = urlencodeDoseq({ ...dataset, ...render });
    const valid = await tileRouteTakes(app, request, prefix, params);
    if (valid) {
      // Starlette's url_for escapes the template's braces.
      links.push({ href: `${at}/%7BtileMatrixSetId%7D/tilejson.json?${params}`, rel: 'tilesets-map', templated: true, title: `tilejson file for ${id}` });
      links.push({ href: `${at}/WMTSCapabilities.xml?${params}`, rel: 'tilesets-map', templated: true, title: `WMTS service for ${id}` });
    }
    return { valid, params: renderModel(render), links };
  };

  app.get<QueryRoute>('/renders', { schema: { querystring: query.schema } }, async (request, reply) => {
    const p = query.parse(request.query);
    const renders = await source.renders(request, p);
    const count = Object.keys(renders).length;
    if (count > MAX_RENDERS) throw badRequest(`The item has ${count} renders: at most ${MAX_RENDERS} are listed (ask for one at /renders/{render_id})`);
    const out: Record<string, unknown> = {};
    for (const [id, render] of Object.entries(renders)) out[id] = await item(request, id, render, source.datasetParams(p));
    return sendJson(reply, {
      renders: out,
      links: [{ href: requestUrl(request), rel: 'self', type: 'application/json', title: 'List STAC Renders metadata' }],
    });
  });

  const renderParams = { type: 'object', properties: { render_id: { type: 'string', description: "The render's name in the item's `renders`." } } };
  app.get<PathRoute<{ render_id: string }>>('/renders/:render_id', { schema: { params: renderParams, querystring: query.schema } }, async (request, reply) => {
    const p = query.parse(request.query);
    const renders = await source.renders(request, p);
    const id = request.params.render_id;
    if (!Object.hasOwn(renders, id)) throw new TesseraError('NotFound', 'Render not found');
    return sendJson(reply, await item(request, id, renders[id], source.datasetParams(p)));
  });
}
