/**
 * The route factory (TiTiler's `TilerFactory(reader=…)`, included by `application/main.py` with its
 * prefix and tags) and the declaration of a reader family. A family (api/routes/cog.ts, stac.ts,
 * mosaic.ts) is one `defineFamily({...})` value that says where it is mounted, how to open its reader
 * and which layer parameters it takes, which of the optional verbs it offers (api/verbs.ts), its own
 * routes, its OpenAPI tag and route documentation, its metrics label, the setting that leaves it out
 * and its viewer. app.ts mounts the list of them; /api and /metrics read their tags and labels from it.
 *
 * Every family gets tiles (in a grid, and the deprecated forms without one), TileJSON, WMTS
 * capabilities and the map page, here. A verb is a route group of its own (api/verbs.ts) that needs
 * a reader with that verb of the contract (readers/reader.ts): a family lists only verbs its reader
 * has, or it does not compile, and a verb it does not list is not mounted (the router's 404).
 *
 * Each route lists its parameter families (api/params/) and parses all of them before anything is
 * read, so a bad query gets the same 4xx on a tile, a TileJSON, a WMTS document and a map page.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { Services } from '../services.js';
import type { Settings } from '../config.js';
import { getTms } from '../tms/registry.js';
import { checkTile, type BBox, type TileMatrixSet } from '../tms/grid.js';
import {
  datasetUrl,
  datasetValues,
  gridQuery,
  postProcessFor,
  renderingFor,
  routeQuery,
  tileDocument,
  wmtsDocument,
  tileFormatQuery,
  tileMargins,
  tileSize,
  tmsPathSchema,
  wmtsEpsg,
  type ParamFamily,
  type Parsed,
  type PathRoute,
} from './params/index.js';
import { family as paramFamily } from './params/family.js';
import { parseTilePath } from './path-params.js';
import { renderSpec, sendImage } from './image-response.js';
import { sendJson } from './reply.js';
import { inputTags, type AnswerIfUnchanged } from './etag.js';
import { keepWhole } from './tile-cache.js';
import { baseUrl, forwardedQuery, requestUrl } from './urls.js';
import { tileJsonModel } from './models.js';
import { mapPageResponder, viewerRoute, type ViewerKind } from './pages/respond.js';
import type { ApiTag, RouteDoc } from './openapi.js';
import { wmtsCapabilities } from '../ogc/wmts.js';
import { MEDIA_TYPES, formatOf } from '../image/formats.js';
import { float, pyFloatRepr } from '../pyjson.js';
import { TesseraError, badRequest } from '../errors.js';
import type { ReadLimits, Reader, Zooms } from '../readers/reader.js';
import { algorithmGeneration, choose } from './generations.js';
import { tilesetRoutes } from './ogc-tiles.js';
import { allGridsWmts } from './ogc-wmts.js';

/** What the metadata routes need of a dataset, without reading a band (TileJSON, WMTS). */
export interface DatasetSummary {
  bounds: BBox;
  zooms(tms: TileMatrixSet): Promise<Zooms>;
  /** TileJSON's center when the dataset names one (a mosaic document); else the bounds' middle. */
  center?: [number, number, number];
  /** Named sets of parameters (TiTiler 2.x's `renders`): TileJSON 3.0.0's `raster_layers`, a WMTS layer each. */
  renders?: Record<string, unknown>;
  /**
   * The renders are a STAC item's (the render extension: WMTS lists those a tile takes, checked as
   * TiTiler's wmtsExtension does) even where the path names the dataset; else, so named, a search's
   * `defaults`, listed as given.
   */
  rendersOfItem?: boolean;
  /** What titles its WMTS layers where not the name the request gives (a collection's search: its hash). */
  title?: string;
  /** Its bounds' numbers as the dataset writes them, for the documents that copy them (a STAC item's ints stay ints in WMTS). */
  boundsText?: readonly string[];
  /** Bounds in another CRS (`EPSG:4269` …) from the dataset's own, where it has one (a COG); else the OGC routes carry `bounds` over. */
  boundsIn?(srs: string): Promise<BBox>;
  /** The dataset's own CRS, where it has one (a COG): OGC API – Maps draws in it by default (api/ogc-maps.ts). */
  crs?: string;
  /** What TiTiler 2.x's TileJSON adds of a single dataset's info (a COG): its bands' descriptions and its dtype. */
  describe?(): Promise<{ bandDescriptions: Array<[string, string]>; dtype: string }>;
}

/** How a family reaches its datasets, given the server's services: a request's reader, and a dataset's summary. */
export interface Datasets<L, R extends Reader> {
  /** The reader of a dataset (`url`) and layer. */
  open(url: string, layer: L): Promise<R>;
  /** Bounds and zooms of the dataset alone (`layer`: the request's, where it names the dataset further, as a collection's filters do). */
  summary(url: string, layer?: L): Promise<DatasetSummary>;
}

/** A reader whose optional verbs `M` of the contract (readers/reader.ts) are there. */
export type ReaderWith<M extends keyof Reader> = Reader & Required<Pick<Reader, M>>;

/** Options every route reading a layer takes: the family's layer check before schema validation, if any. */
interface LayerRouteOptions {
  preValidation?: preValidationAsyncHookHandler;
}

/** What a verb's routes are given: the family's layers and reader, the server's services and limits. */
export interface VerbContext<L, R extends Reader> {
  readonly services: Services;
  readonly limits: ReadLimits;
  /** The limits of the statistics routes (the statistics' copies of the values count too). */
  readonly statisticsLimits: ReadLimits;
  readonly layer: ParamFamily<L>;
  readonly statisticsLayer: ParamFamily<L>;
  readonly routeOptions: LayerRouteOptions;
  /** The statistics routes' and the every-grid WMTS document's (RouteFamily.layerFirst). */
  readonly statisticsRouteOptions: LayerRouteOptions;
  readonly wmtsRouteOptions: LayerRouteOptions;
  /** POST /statistics weighs each pixel by the fraction a feature covers. */
  readonly coverageWeighted: boolean;
  /** 304 before reading when the client holds the answer already (api/etag.ts). */
  readonly unchanged: AnswerIfUnchanged;
  /** The query parameter naming the dataset (`url`), or none where the path names it (RouteFamily.datasetParam). */
  readonly datasetQuery: ParamFamily<string>;
  /** The dataset a request names: the path's piece, else the parsed `url`. */
  dataset(request: FastifyRequest, parsedUrl: string): string;
  /** The family's prefix as the request reached it (its path piece filled in): where its URLs point. */
  prefixOf(request: FastifyRequest): string;
  /** RouteFamily.generation. */
  readonly generation: '0.18' | '2';
  open(url: string, layer: L): Promise<R>;
  /** The dataset's own CRS, where it has one (DatasetSummary.crs). */
  nativeCrs(url: string): Promise<string | undefined>;
}

/**
 * An optional verb's routes (TiTiler's factory methods `point`, `preview`, `part`, `feature`,
 * `statistics`), for families whose reader is an `R`. `mount` is a property of function type
 * (checked contravariantly), so a verb fits only families whose reader has the methods it calls.
 */
export interface Verb<R extends Reader> {
  readonly mount: <L>(app: FastifyInstance, ctx: VerbContext<L, R>) => void;
}

/**
 * A reader family, declared once. `L` is what its layer parameters parse into; `M` are the reader
 * methods its verbs call, so its opener must give a reader that has them (a `ReaderWith<M>`).
 */
export interface RouteFamily<L, M extends keyof Reader> {
  /** Where the family is mounted ('/cog'): TileJSON and WMTS point their tile URLs under it. */
  prefix: string;
  /** The tag /api groups the family's routes under. */
  tag: ApiTag;
  /** What /api says of the family's own routes (`routes`), before the factory's descriptions. */
  docs?: readonly RouteDoc[];
  /** The `family` label of its requests in /metrics. */
  metricsLabel: string;
  /** The setting that leaves it out (TiTiler's TITILER_API_DISABLE_COG …): its entry in `settings.disabledFamilies`. */
  disabledBy?: Settings['disabledFamilies'][number];
  /** Mounted only when this says so (a catalogue's family needs the catalogue's address); default: always. */
  enabled?(settings: Settings): boolean;
  /**
   * Where a request names its dataset: the `url` query parameter (default), or this piece of the
   * prefix's path (`/searches/:search_id`: 'search_id'), whose value `open` and `summary` are given; several
   * pieces (`['collection_id', 'item_id']`) give them the JSON list of their values (its verbs then
   * read no `url`: VerbContext.datasetQuery and dataset).
   */
  datasetParam?: string | readonly string[];
  /**
   * The TiTiler generation the family's tile routes and TileJSON follow whatever TESSERA_TITILER_API
   * says, for families only one generation has (titiler-pgstac 3 is a TiTiler 2.x application): with
   * '2', TileJSON is 3.0.0 with `tilesize=512` in its tile URL and the family's renders, tiles
   * without a size are the grid's, and the 0.18 forms without a grid, WMTS and the map page are not
   * mounted. Default '0.18'.
   */
  generation?: '0.18' | '2';
  /** The layer parameters of image, point and document routes (BidxExprParams, AssetsBidxExprParams …). */
  layer: ParamFamily<L>;
  /** The layer of the statistics routes, where it may be left out (STAC: every asset). Default: `layer`. */
  statisticsLayer?: ParamFamily<L>;
  /**
   * Layer checks that come before schema validation (TiTiler's "assets or expression" 400), as the
   * deployment's generation makes them, for the image and document routes (`reads`), the statistics
   * routes and the every-grid WMTS document.
   */
  layerFirst?(settings: Settings, routes: 'reads' | 'statistics' | 'wmts'): preValidationAsyncHookHandler | undefined;
  /**
   * How a request's reader is opened and a dataset summarised, given the server's services. `M` is
   * read from `verbs` alone (NoInfer): an opener whose reader lacks one of their methods is refused.
   */
  datasets(services: Services): Datasets<L, ReaderWith<NoInfer<M>>>;
  /** The optional verbs it offers (api/verbs.ts), each with the reader method it calls; tiles, TileJSON, WMTS and the map always. */
  verbs: ReadonlyArray<Verb<ReaderWith<M>>>;
  /**
   * POST /statistics weighs each pixel by the fraction a feature covers: rio-tiler's Reader does, its
   * STAC reader only from rio-tiler 7 (TiTiler 2.x), so a family may ask the settings.
   */
  coverageWeighted?: boolean | ((settings: Settings) => boolean);
  /** WMTS layer name (TiTiler: 'Dataset', 'Mosaic') and whether `use_epsg` is taken (default true). */
  wmts?: { layerName: string; useEpsg: boolean };
  /** Routes that are the family's alone (bounds, info, a mosaic's asset lookups …), under its prefix. */
  routes?(app: FastifyInstance, services: Services): Promise<void>;
  /** Its viewer page at `{prefix}/viewer`, if it has one. */
  viewer?: ViewerKind;
}

/** A family as the application mounts it: what /api, /metrics and the settings know of it, and its routes. */
export interface FamilyRegistration {
  readonly prefix: string;
  readonly tag: ApiTag;
  readonly docs: readonly RouteDoc[];
  readonly metricsLabel: string;
  readonly disabledBy: Settings['disabledFamilies'][number] | undefined;
  /** Whether the settings let it be mounted. */
  enabled(settings: Settings): boolean;
  /** Every route of the family, to be registered under `prefix`. */
  plugin(services: Services): FastifyPluginAsync;
}

/** One family's registration (its layer and reader types stay inside `plugin`). */
export function defineFamily<L, M extends keyof Reader = never>(family: RouteFamily<L, M>): FamilyRegistration {
  return {
    prefix: family.prefix,
    tag: family.tag,
    docs: family.docs ?? [],
    metricsLabel: family.metricsLabel,
    disabledBy: family.disabledBy,
    enabled: (settings) => family.enabled?.(settings) ?? true,
    plugin: (services) => familyRoutes(services, family),
  };
}

/** Keys a TileJSON / map tile URL does not forward (TiTiler's list, compared lower-case). */
const TILEJSON_DROPPED = ['tilematrixsetid', 'tile_format', 'tile_scale', 'minzoom', 'maxzoom'];
/** WMTS matrices say 256 px tiles: a `tilesize` is not forwarded into its tile URLs (as TiTiler 2.x's WMTS drops it). */
const WMTS_DROPPED = [...TILEJSON_DROPPED, 'service', 'use_epsg', 'request', 'tilesize'];

/** `EPSG:<code>` for `use_epsg=true` (ArcMap); grids in OGC:CRS84 have none and keep their URI. */
function epsgName(tms: TileMatrixSet): string {
  const m = /^EPSG:(\d+)$/.exec(tms.srs);
  return m ? `EPSG:${m[1]}` : tms.def.crs;
}

/** A WMTS document lists every matrix in the range: refuse ranges the grid does not have. */
function checkZoomRange(tms: TileMatrixSet, minzoom: number, maxzoom: number): void {
  if (minzoom > maxzoom) throw badRequest(`minzoom (${minzoom}) must not be greater than maxzoom (${maxzoom})`);
  if (minzoom < tms.minzoom) throw badRequest(`minzoom ${minzoom} is below ${tms.id}'s first matrix (${tms.minzoom})`);
  if (maxzoom - minzoom > 64) throw badRequest('zoom range too large (at most 64 levels)');
  try {
    tms.matrix(maxzoom);
  } catch {
    throw badRequest(`${tms.id} has no matrix for zoom ${maxzoom}`);
  }
}

/** The grid piece of a path: there in the routes with a grid, absent in the deprecated forms. */
interface GridPath {
  tileMatrixSetId?: string;
}
type GridRequest = FastifyRequest<PathRoute<GridPath>>;
type TileRequest = FastifyRequest<PathRoute<GridPath & { z: string; x: string; last: string }>>;

/** The route's grid: its `{tileMatrixSetId}` path piece, else the query's (the deprecated forms, WebMercatorQuad by default). */
function gridOf(request: GridRequest): TileMatrixSet {
  const id = request.params.tileMatrixSetId;
  return id !== undefined ? getTms(id)! : gridQuery.parse(request.query);
}

/** Route options running `check` before schema validation, if there is one. */
function hookOptions(check: preValidationAsyncHookHandler | undefined): LayerRouteOptions {
  return check ? { preValidation: check } : {};
}

/** Every route of a family under its prefix: the factory's, its verbs, its own, its viewer. */
function familyRoutes<L, M extends keyof Reader>(services: Services, family: RouteFamily<L, M>): FastifyPluginAsync {
  const settings = services.settings;
  const named = family.datasetParam;
  // Several path pieces (`/collections/:collection_id/items/:item_id`) name the dataset together: their values as a JSON list.
  const pieces = named === undefined ? [] : typeof named === 'string' ? [named] : named;
  const pieceOf = (request: FastifyRequest, piece: string): string => (request.params as Record<string, string | undefined>)[piece] ?? '';
  const fromPath = (request: FastifyRequest): string =>
    pieces.length === 1 ? pieceOf(request, pieces[0]!) : JSON.stringify(pieces.map((piece) => pieceOf(request, piece)));
  const limits: ReadLimits = { maxOutputPixels: settings.maxOutputPixels, maxSourcePixels: settings.maxSourcePixels, gate: services.wholeImages };
  const datasets = family.datasets(services);
  const ctx: VerbContext<L, ReaderWith<M>> = {
    services,
    limits,
    statisticsLimits: { ...limits, statistics: true },
    layer: family.layer,
    statisticsLayer: family.statisticsLayer ?? family.layer,
    routeOptions: hookOptions(family.layerFirst?.(settings, 'reads')),
    statisticsRouteOptions: hookOptions(family.layerFirst?.(settings, 'statistics')),
    wmtsRouteOptions: hookOptions(family.layerFirst?.(settings, 'wmts')),
    coverageWeighted: typeof family.coverageWeighted === 'function' ? family.coverageWeighted(settings) : family.coverageWeighted === true,
    unchanged: inputTags(settings),
    datasetQuery: named !== undefined ? datasetInPath : datasetUrl,
    dataset: (request, parsedUrl) => (named !== undefined ? fromPath(request) : parsedUrl),
    prefixOf: (request) => pieces.reduce((prefix, piece) => prefix.replace(`:${piece}`, encodeURIComponent(pieceOf(request, piece))), family.prefix),
    generation: family.generation ?? '0.18',
    open: (url, layer) => datasets.open(url, layer),
    nativeCrs: async (url) => (await datasets.summary(url)).crs,
  };
  return async function plugin(app: FastifyInstance): Promise<void> {
    tileRoutes(app, ctx);
    // The OGC tilesets read `url` (a family whose path names its dataset has none yet).
    if (named === undefined) tilesetRoutes(app, family.prefix, (url) => datasets.summary(url), settings);
    documentRoutes(app, ctx, family, datasets);
    for (const verb of family.verbs) verb.mount(app, ctx);
    await family.routes?.(app, services);
    if (family.viewer) viewerRoute(settings, family.prefix, family.viewer)(app);
  };
}

/** The dataset named by a piece of the path: no query parameter. */
const datasetInPath = paramFamily('Dataset in the path', {}, () => '');

/**
 * The image families every picture route takes, in the order TiTiler's dependencies run (the
 * algorithms of the deployment's generation; `url`: the dataset's, or none where the path names it).
 */
export function imageFamilies<L>(layer: ParamFamily<L>, settings: Settings, url: ParamFamily<string> = datasetUrl) {
  return {
    url,
    layer,
    values: datasetValues,
    algorithm: postProcessFor(algorithmGeneration(settings)),
    render: renderingFor(choose(settings, 'imageEncoding', { '0.18': '0.18', '2': '2' })),
  };
}

// ---- tiles ----------------------------------------------------------------------------------------
// Where the path leaves them out, `scale` and `format` come from the query (TiTiler's routes
// without `@{scale}x` or `.{format}` take them as query parameters).
function tileRoutes<L, R extends Reader>(app: FastifyInstance, ctx: VerbContext<L, R>): void {
  const { services, limits } = ctx;
  const image = imageFamilies(ctx.layer, services.settings, ctx.datasetQuery);
  const tileQuery = routeQuery({ ...image, margins: tileMargins, size: tileSize, fallback: tileFormatQuery });
  const deprecatedTileQuery = routeQuery({ ...image, margins: tileMargins, size: tileSize, fallback: tileFormatQuery, grid: gridQuery });
  // TiTiler 2.x's `tilesize` wins; else a scale the request named (0.18); else the collision's default
  // size (a family only 2.x has, such as titiler-pgstac's, answers as 2.x whatever the setting).
  const gridSize = (tms: TileMatrixSet, z: number): number => tms.matrix(z).tileWidth;
  const defaultSize = ctx.generation === '2' ? gridSize : choose(services.settings, 'defaultTileSize', { '0.18': () => 256, '2': gridSize });
  const tile = async (request: TileRequest, reply: FastifyReply, query: typeof tileQuery | typeof deprecatedTileQuery): Promise<FastifyReply> => {
    // The path first (its 422s come before the query's 400s), its format and scale falling back on the query's.
    const path = parseTilePath(request.params.z, request.params.x, request.params.last, tileFormatQuery.parse(request.query));
    const p = query.parse(request.query);
    const tms = gridOf(request);
    checkTile(tms, path.x, path.y, path.z);
    const reader = await ctx.open(ctx.dataset(request, p.url), p.layer);
    if (await ctx.unchanged(request, reply, reader, { tms, z: path.z })) return reply;
    // Made in turn with the other tiles (concurrency.ts, AdmissionGate); a client that leaves
    // while its tile waits for its turn is dropped from the queue.
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort(new TesseraError('ClientGone', 'the client went away before its tile was made')));
    return services.tileAdmission.run(async () => {
      const result = await reader.tile(
        tms,
        { x: path.x, y: path.y, z: path.z },
        {
          ...p.values,
          limits,
          tilesize: p.size ?? (path.scaled ? 256 * path.scale : defaultSize(tms, path.z)),
          ...(p.margins.buffer ? { buffer: p.margins.buffer } : {}),
          ...(p.margins.padding ? { padding: p.margins.padding } : {}),
          deferExpression: true,
        },
      );
      if (result.headers) reply.headers(result.headers);
      const spec = renderSpec(p.algorithm, p.render, result);
      // A tile answered in part: the whole one goes to the tile cache once made, with the tag of its inputs.
      if (result.later)
        keepWhole(services.tiles, request.url, reply.getHeader('etag'), result.later, (img) => services.renderer.render(img, path.format, spec));
      return await sendImage(reply, services.renderer, result.image, path.format, spec);
    }, gone.signal);
  };
  const tileParams = { type: 'object', properties: { z: { type: 'string' }, x: { type: 'string' }, last: { type: 'string' } } };
  app.get<PathRoute<TileRequest['params']>>(
    '/tiles/:tileMatrixSetId/:z/:x/:last',
    {
      schema: { params: { ...tileParams, properties: { ...tileParams.properties, ...tmsPathSchema } }, querystring: tileQuery.schema },
      config: { tileCache: true },
      ...ctx.routeOptions,
    },
    (request, reply) => tile(request, reply, tileQuery),
  );
  if (ctx.generation === '2') return;
  app.get<PathRoute<TileRequest['params']>>(
    '/tiles/:z/:x/:last',
    { schema: { params: tileParams, querystring: deprecatedTileQuery.schema, deprecated: true }, config: { tileCache: true }, ...ctx.routeOptions },
    (request, reply) => tile(request, reply, deprecatedTileQuery),
  );
}

// ---- TileJSON, WMTS and the map page: everything the tiles parse, parsed here too -----------------
function documentRoutes<L, M extends keyof Reader>(
  app: FastifyInstance,
  ctx: VerbContext<L, ReaderWith<M>>,
  family: RouteFamily<L, M>,
  datasets: Datasets<L, ReaderWith<M>>,
): void {
  const options = ctx.routeOptions;
  const documentFamilies = {
    ...imageFamilies(ctx.layer, ctx.services.settings, ctx.datasetQuery),
    margins: tileMargins,
    size: tileSize,
    document: tileDocument,
  };
  const tileDoc = async (
    request: FastifyRequest,
    p: { url: string; layer: L; document: { minzoom: number | undefined; maxzoom: number | undefined } },
    tms: TileMatrixSet,
  ) => {
    const summary = await datasets.summary(ctx.dataset(request, p.url), p.layer);
    const defaults = await summary.zooms(tms);
    const zooms = { minzoom: p.document.minzoom ?? defaults.minzoom, maxzoom: p.document.maxzoom ?? defaults.maxzoom };
    return { summary, zooms };
  };

  // A TileJSON in the grid of its path asked without `tilesize`: 0.18's tile URLs, or 2.x's at 512 px
  // (api/generations.ts); a family only 2.x has answers as 2.x whatever the setting.
  const gen2 = ctx.generation === '2';
  const tileJsonSize = gen2 ? 512 : choose(ctx.services.settings, 'tilejsonTiles', { '0.18': undefined, '2': 512 });
  const tileJsonBody = gen2 ? '2' : choose(ctx.services.settings, 'tilejsonBody', { '0.18': '0.18', '2': '2' });

  // Each document in the grid of its path, and (deprecated, 0.18's families) in the grid of the query.
  (gen2 ? gridForm : gridForms)(app, 'tilejson.json', documentFamilies, options, async (request, reply, p) => {
    const tms = gridOf(request);
    const { summary, zooms } = await tileDoc(request, p, tms);
    // TileJSON's model bounds both (TiTiler answers 500 when its response validation fails).
    for (const [name, zoom] of Object.entries(zooms)) {
      if (zoom < 0 || zoom > 30) throw badRequest(`TileJSON ${name} must be between 0 and 30, got ${zoom}`);
    }
    // A `tilesize` is a TiTiler 2.x request: its tile URL has no scale (the size travels in the query),
    // as has, under TESSERA_TITILER_API=2, the grid-path form asked without one (512 px added, as 2.x).
    const added = p.size === undefined && request.params.tileMatrixSetId !== undefined ? tileJsonSize : undefined;
    const scale = p.size === undefined && added === undefined ? `@${p.document.tileScale}x` : '';
    const suffix = `${scale}${p.document.tileFormat ? `.${p.document.tileFormat}` : ''}`;
    const query = forwardedQuery(request, TILEJSON_DROPPED);
    const sized = added === undefined ? query : `${query}${query ? '&' : '?'}tilesize=${added}`;
    const tiles = `${baseUrl(request)}${ctx.prefixOf(request)}/tiles/${tms.id}/{z}/{x}/{y}${suffix}${sized}`;
    const [minx, miny, maxx, maxy] = summary.bounds;
    const center: [number, number, number] = summary.center
      ? [summary.center[0], summary.center[1], p.document.minzoom ?? summary.center[2]]
      : [(minx + maxx) / 2, (miny + maxy) / 2, zooms.minzoom];
    const doc = tileJsonModel({ tiles, ...zooms, bounds: summary.bounds, center });
    if (tileJsonBody === '0.18') return sendJson(reply, doc);
    // TileJSON 3.0.0 as TiTiler 2.x's model writes it: the center is always the bounds' middle at
    // minzoom (a mosaic's own center is not read), `raster_layers` (no renders here), and a single
    // dataset's band descriptions and dtype.
    const described = summary.describe ? await summary.describe() : undefined;
    return sendJson(reply, {
      ...doc,
      tilejson: '3.0.0',
      center: [float((minx + maxx) / 2), float((miny + maxy) / 2), zooms.minzoom],
      raster_layers: summary.renders ?? {},
      ...(described ? { band_descriptions: described.bandDescriptions, data_type: described.dtype } : {}),
    });
  });
  const mapPage = mapPageResponder(ctx.services.settings);
  // The every-grid WMTS document, its dataset and tile URLs where the request names them (a path's piece or `url`).
  const wmtsFamily = {
    prefixOf: (request: FastifyRequest) => ctx.prefixOf(request),
    datasetQuery: ctx.datasetQuery,
    dataset: (request: FastifyRequest, url: string) => ctx.dataset(request, url),
    summary: (named: string, layer: unknown) => datasets.summary(named, layer as L),
  };
  if (gen2) {
    // A family only TiTiler 2.x has (titiler-pgstac's): its map page and every-grid WMTS document, nothing deprecated.
    gridForm(app, 'map.html', documentFamilies, options, async (request, reply, p) =>
      mapPage(request, reply, ctx.prefixOf(request), gridOf(request), ctx.dataset(request, p.url), p.size === undefined ? [['tilesize', '256']] : []),
    );
    allGridsWmts(app, documentFamilies, ctx.wmtsRouteOptions, wmtsFamily);
    return;
  }

  const wmtsOptions = family.wmts ?? { layerName: 'Dataset', useEpsg: true };
  const wmtsDocumentFamilies = { ...documentFamilies, document: wmtsDocument };
  const wmtsFamilies = wmtsOptions.useEpsg ? { ...wmtsDocumentFamilies, epsg: wmtsEpsg } : wmtsDocumentFamilies;
  const oneGridWmts = async (request: GridRequest, reply: FastifyReply, p: Parsed<typeof wmtsFamilies>): Promise<FastifyReply> => {
    const tms = gridOf(request);
    const { summary, zooms } = await tileDoc(request, p, tms);
    checkZoomRange(tms, zooms.minzoom, zooms.maxzoom);
    const format = p.document.tileFormat ?? 'png'; // the WMTS family's default
    const template = `${baseUrl(request)}${family.prefix}/tiles/${tms.id}/{TileMatrix}/{TileCol}/{TileRow}@${p.document.tileScale}x.${format}${forwardedQuery(request, WMTS_DROPPED)}`;
    const xml = wmtsCapabilities({
      title: p.url,
      layerName: wmtsOptions.layerName,
      requestUrl: requestUrl(request),
      tileTemplate: template,
      mediaType: MEDIA_TYPES[formatOf(format)],
      tms,
      supportedCrs: 'epsg' in p && p.epsg === true ? epsgName(tms) : tms.def.crs,
      bounds: summary.bounds,
      ...zooms,
      num: pyFloatRepr,
    });
    return reply.type('application/xml').send(Buffer.from(xml, 'utf8'));
  };
  gridForm(app, 'WMTSCapabilities.xml', wmtsFamilies, options, oneGridWmts);

  // The map page draws the TileJSON above on a Leaflet map; its query is checked the same way.
  gridForm(app, 'map', documentFamilies, options, async (request, reply, p) => mapPage(request, reply, family.prefix, gridOf(request), p.url));
  // TiTiler 2.x's map page (0.22 moved it to `map.html`): the same page, its TileJSON asked for
  // 256 px tiles unless the page names a `tilesize` (titiler/core/factory.py 2.4.0, map_viewer).
  gridForm(app, 'map.html', documentFamilies, options, async (request, reply, p) =>
    mapPage(request, reply, family.prefix, gridOf(request), p.url, p.size === undefined ? [['tilesize', '256']] : []),
  );

  // Where the generations give the grid-less forms other meanings (api/generations.ts).
  const settings = ctx.services.settings;
  choose(settings, 'wmts', {
    '0.18': () => queryGridForm(app, 'WMTSCapabilities.xml', wmtsFamilies, options, oneGridWmts),
    '2': () => allGridsWmts(app, documentFamilies, ctx.wmtsRouteOptions, wmtsFamily),
  })();
  choose(settings, 'prefixMap', {
    '0.18': () =>
      queryGridForm(app, 'map', documentFamilies, options, async (request, reply, p) => mapPage(request, reply, family.prefix, gridOf(request), p.url)),
    // OGC API – Maps is a verb (api/ogc-maps.ts) of the families whose readers make previews and parts.
    '2': () => undefined,
  })();
}

/** A route in the grid of its path: `/{tileMatrixSetId}/{name}`. */
function gridForm<F extends Record<string, ParamFamily<unknown>>>(
  app: FastifyInstance,
  name: string,
  families: F,
  options: LayerRouteOptions,
  answer: (request: GridRequest, reply: FastifyReply, p: Parsed<F>) => Promise<FastifyReply>,
): void {
  const query = routeQuery(families);
  const params = { type: 'object', properties: tmsPathSchema, required: ['tileMatrixSetId'] };
  app.get<PathRoute<GridPath>>(`/:tileMatrixSetId/${name}`, { schema: { params, querystring: query.schema }, ...options }, (request, reply) =>
    answer(request, reply, query.parse(request.query)),
  );
}

/** The same route in the grid of the query (`/{name}`, `tileMatrixSetId=`): the forms TiTiler 0.18 deprecated. */
function queryGridForm<F extends Record<string, ParamFamily<unknown>>>(
  app: FastifyInstance,
  name: string,
  families: F,
  options: LayerRouteOptions,
  answer: (request: GridRequest, reply: FastifyReply, p: Parsed<F>) => Promise<FastifyReply>,
): void {
  const deprecated = routeQuery({ ...families, grid: gridQuery });
  app.get<PathRoute<GridPath>>(`/${name}`, { schema: { querystring: deprecated.schema, deprecated: true }, ...options }, (request, reply) =>
    answer(request, reply, deprecated.parse(request.query)),
  );
}

/** A route in the grid of its path and, deprecated, in the grid of the query. */
function gridForms<F extends Record<string, ParamFamily<unknown>>>(
  app: FastifyInstance,
  name: string,
  families: F,
  options: LayerRouteOptions,
  answer: (request: GridRequest, reply: FastifyReply, p: Parsed<F>) => Promise<FastifyReply>,
): void {
  gridForm(app, name, families, options, answer);
  queryGridForm(app, name, families, options, answer);
}
