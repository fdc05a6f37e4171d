/**
 * /mosaicjson (TiTiler 0.18.10's MosaicTilerFactory over cogeo-mosaic 7), as one family
 * registration (api/factory.ts): tiles with pixel selection, TileJSON, WMTS and the map page come
 * from the route factory over the MosaicJSON reader (readers/mosaic.ts), with the area verbs TiTiler
 * 2.x's mosaic factory offers when asked (`/bbox`, `/feature`, POST `/statistics`, `/map` under
 * TESSERA_TITILER_API=2; TiTiler 0.18 has none, and 2.4.0's application leaves them off); here are
 * the document, validate, bounds, info, point values (every asset's) and the asset lookups, also at
 * TiTiler 2.x's paths (titiler/mosaic/factory.py 2.4.0: `/tiles/{tms}/{z}/{x}/{y}/assets`,
 * `/point/{lon},{lat}/assets`, `/bbox/…/assets`); the point body is the collision `mosaicPoint`.
 * The `url` names the mosaic (http(s), a local file when allowed, or sqlite:///{path}:{name});
 * assets are COG URLs, or STAC item URLs whose assets `assets`/`expression` name.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { getTms } from '../../tms/registry.js';
import type { TileMatrixSet } from '../../tms/grid.js';
import {
  combine,
  coordCrs,
  datasetUrl,
  datasetValues,
  gridQuery,
  mosaicLayer,
  pixelSelection,
  routeQuery,
  tmsPathSchema,
  type PathRoute,
  type Query,
  type QueryRoute,
} from '../params/index.js';
import { parseLonLat } from '../path-params.js';
import { ValidationError, type ValidationDetail } from '../errors.js';
import { notFound, sendJson } from '../reply.js';
import { bboxFeature, boundsModel, pointBandsV2 } from '../models.js';
import { float, floats } from '../../pyjson.js';
import { MosaicDocumentReader, documentCompositor, type MosaicLayer } from '../../readers/mosaic.js';
import type { Settings } from '../../config.js';
import { defineFamily } from '../factory.js';
import { mosaicDocumentJson, parseMosaicDocument } from '../../mosaic/document.js';
import type { Mosaic, MosaicInfo } from '../../mosaic/mosaic.js';
import { TesseraError } from '../../errors.js';
import { choose } from '../generations.js';
import * as verb from '../verbs.js';
import { ogcMap } from '../ogc-maps.js';

/** The path of a tile's asset lookup (the grid in it, or in the query for the form without). */
type TileAssetsRoute = PathRoute<{ tileMatrixSetId?: string; z: string; x: string; y: string }>;

/** What a mosaic tile reads of each asset, and how it picks each pixel among them. */
const mosaicTileLayer = combine('MosaicLayer with PixelSelectionParams', { layer: mosaicLayer, selection: pixelSelection });

/** cogeo-mosaic 9's Info (TiTiler 2.x): the bounds with their CRS, the document's zooms and grid under `mosaic_`, quadkeys left out. */
function infoModelV2(info: MosaicInfo): Record<string, unknown> {
  return {
    bounds: floats(info.bounds),
    crs: 'http://www.opengis.net/def/crs/EPSG/0/4326',
    name: info.name,
    quadkeys: [],
    mosaic_tilematrixset: info.tilematrixset,
    mosaic_minzoom: info.minzoom,
    mosaic_maxzoom: info.maxzoom,
  };
}

/** cogeo-mosaic 7's Info (TiTiler 0.18). */
function infoModel(info: MosaicInfo): Record<string, unknown> {
  return {
    bounds: floats(info.bounds),
    center: [float(info.center[0]), float(info.center[1]), info.center[2]],
    minzoom: info.minzoom,
    maxzoom: info.maxzoom,
    name: info.name,
    quadkeys: info.quadkeys,
    tilematrixset: info.tilematrixset,
  };
}

// ---- path segments FastAPI types as numbers -------------------------------------------------------

const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|inf|infinity|nan)$/i;

function pathNumbers(entries: ReadonlyArray<[string, string]>, kind: 'int' | 'float'): number[] {
  const details: ValidationDetail[] = [];
  const values = entries.map(([name, text]) => {
    const t = text.trim();
    if (kind === 'int' ? !INT_RE.test(t) : !FLOAT_RE.test(t)) {
      details.push(
        kind === 'int'
          ? { type: 'int_parsing', loc: ['path', name], msg: 'Input should be a valid integer, unable to parse string as an integer', input: text }
          : { type: 'float_parsing', loc: ['path', name], msg: 'Input should be a valid number, unable to parse string as a number', input: text },
      );
      return 0;
    }
    return Number(t.toLowerCase().replace(/^([+-]?)inf(inity)?$/, '$1Infinity'));
  });
  if (details.length > 0) throw new ValidationError(details);
  return values;
}

/**
 * `{minx},{miny},{maxx},{maxy}` or `{lon},{lat}` (the bbox route first, as TiTiler registers it;
 * Starlette's greedy segments put extra commas into the first number, which then fails to parse).
 */
function parseCoords(text: string): { bbox: [number, number, number, number] } | { point: [number, number] } | undefined {
  const parts = text.split(',');
  if (parts.length >= 4) {
    const head = parts.slice(0, parts.length - 3).join(',');
    const [minx, miny, maxx, maxy] = pathNumbers(
      [
        ['minx', head],
        ['miny', parts.at(-3)!],
        ['maxx', parts.at(-2)!],
        ['maxy', parts.at(-1)!],
      ],
      'float',
    );
    return { bbox: [minx!, miny!, maxx!, maxy!] };
  }
  if (parts.length >= 2) {
    const [lon, lat] = pathNumbers(
      [
        ['lon', parts.slice(0, -1).join(',')],
        ['lat', parts.at(-1)!],
      ],
      'float',
    );
    return { point: [lon!, lat!] };
  }
  return undefined;
}

/**
 * The collision `stacBandNames` in a mosaic of STAC items: without an expression, the deployment's
 * generation names the items' bands (`{asset}_b{i}`, or `b1 … bn` as rio-tiler 9's STACReader).
 */
function namedByGeneration(layer: MosaicLayer, settings: Settings): MosaicLayer {
  if (layer.expression || layer.stac.positional) return layer;
  return choose(settings, 'stacBandNames', { '0.18': false, '2': true }) ? { ...layer, stac: { ...layer.stac, positional: true } } : layer;
}

export const mosaicFamily = defineFamily({
  prefix: '/mosaicjson',
  tag: { name: 'MosaicJSON', description: 'A MosaicJSON document, named by `url`: tiles made of the COGs or STAC items it lists, and its asset lookups.' },
  docs: [
    { match: /^\/validate$/, summary: 'Validate a MosaicJSON document', answer: 'json' },
    { match: /\/assets$/, summary: 'Assets of the mosaic that cover a point or a tile', answer: 'json' },
    { match: /^\/?$/, summary: 'The MosaicJSON document itself', answer: 'json' },
  ],
  metricsLabel: 'mosaicjson',
  disabledBy: 'mosaicjson',
  layer: mosaicTileLayer,
  datasets: (services) => ({
    open: async (url, l) =>
      new MosaicDocumentReader(
        await services.mosaics.open(url),
        {
          layer: namedByGeneration(l.layer, services.settings),
          pixelSelection: l.selection,
          strictZoom: services.settings.mosaicStrictZoom,
          assetsHeader: services.settings.mosaicAssetsHeader,
        },
        services.mosaicContext,
      ),
    summary: async (url) => {
      const mosaic = await services.mosaics.open(url);
      return { bounds: mosaic.bounds, zooms: async (tms) => mosaic.zooms(tms), center: mosaic.doc.center };
    },
  }),
  // TiTiler 2.x's MosaicTilerFactory with add_part, add_statistics and add_ogc_maps: areas composed
  // from the assets the document finds for them (readers/mosaic-compose.ts). A mosaic has no preview
  // (nor GET /statistics), and its point answer lists every asset (below).
  verbs: [verb.bbox, verb.feature, verb.mosaicStatisticsOfFeatures, ogcMap],
  // rio-tiler 9's mosaic statistics weigh each pixel by the fraction of it the feature covers.
  coverageWeighted: true,
  // TiTiler 0.18 leaves SupportedCRS empty for mosaics (fixed in 0.19) and takes no use_epsg.
  wmts: { layerName: 'Mosaic', useEpsg: false },
  routes: mosaicRoutes,
});

async function mosaicRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const store = services.mosaics;
  const ctx = services.mosaicContext;
  const urlOnly = routeQuery({ url: datasetUrl });
  const open = (query: Query): Promise<Mosaic> => store.open(urlOnly.parse(query).url);

  app.get<QueryRoute>('/', { schema: { querystring: urlOnly.schema } }, async (request, reply) => {
    const mosaic = await open(request.query);
    return sendJson(reply, mosaicDocumentJson(mosaic.doc, mosaic.origin.tilesInDocument));
  });

  // TiTiler's POST /validate: `true` for a valid document, 422 naming the fault otherwise.
  app.post('/validate', async (req, reply) => {
    try {
      parseMosaicDocument(req.body);
    } catch (err) {
      if (err instanceof TesseraError && err.kind === 'BadRequest') {
        throw new ValidationError([{ type: 'value_error', loc: ['body'], msg: err.message, input: null }]);
      }
      throw err;
    }
    return sendJson(reply, true);
  });

  app.get<QueryRoute>('/bounds', { schema: { querystring: urlOnly.schema } }, async (request, reply) =>
    sendJson(reply, boundsModel((await open(request.query)).bounds)),
  );

  // The collision `infoModel`: cogeo-mosaic 7's model or 9's, whose Feature carries its bbox.
  const v2 = choose(services.settings, 'infoModel', { '0.18': false, '2': true });
  const model = v2 ? infoModelV2 : infoModel;
  app.get<QueryRoute>('/info', { schema: { querystring: urlOnly.schema } }, async (request, reply) =>
    sendJson(reply, model((await open(request.query)).info())),
  );

  app.get<QueryRoute>('/info.geojson', { schema: { querystring: urlOnly.schema } }, async (request, reply) => {
    const info = (await open(request.query)).info();
    return sendJson(reply, bboxFeature(info.bounds, model(info), v2), 'application/geo+json');
  });

  const pointQuery = routeQuery({ url: datasetUrl, layer: mosaicLayer, values: datasetValues, coordCrs });
  app.get<PathRoute<{ lonlat: string }>>('/point/:lonlat', { schema: { querystring: pointQuery.schema } }, async (request, reply) => {
    const lonlat = parseLonLat(request.params.lonlat);
    if (!lonlat) return notFound(reply);
    const p = pointQuery.parse(request.query);
    const mosaic = await store.open(p.url);
    const points = await documentCompositor(mosaic, namedByGeneration(p.layer, services.settings), ctx).point(lonlat[0], lonlat[1], p.coordCrs, p.values);
    return sendJson(
      reply,
      choose<() => Record<string, unknown>>(services.settings, 'mosaicPoint', {
        '0.18': () => ({ coordinates: floats(lonlat), values: points.map((p) => [p.asset, floats(p.values), p.bandNames]) }),
        // rio-tiler 9: masked values are null; a band is described by the dataset's description, else
        // by its name; an expression's outputs are named b1 … bn and described by their blocks (each
        // band in them replaced by its description).
        '2': () => ({
          coordinates: floats(lonlat),
          assets: points.map((pt) => ({
            name: pt.asset,
            ...pointBandsV2(pt.values, pt.masked, p.layer.expression ? 'numbered' : pt.bandNames, pt.bandDescriptions ?? pt.bandNames),
          })),
        }),
      })(),
    );
  });

  const assetsQuery = routeQuery({ url: datasetUrl, coordCrs });

  // One route for both `{minx},{miny},{maxx},{maxy}/assets` and `{lon},{lat}/assets`: the
  // number of values decides, so a bbox is never read as a point.
  app.get<PathRoute<{ coords: string }>>('/:coords/assets', { schema: { querystring: assetsQuery.schema } }, async (request, reply) => {
    const coords = parseCoords(request.params.coords);
    if (!coords) return notFound(reply);
    const p = assetsQuery.parse(request.query);
    const mosaic = await store.open(p.url);
    if ('bbox' in coords) return sendJson(reply, mosaic.assetsForBbox(coords.bbox, p.coordCrs));
    return sendJson(reply, mosaic.assetsForPoint(coords.point[0], coords.point[1], p.coordCrs));
  });

  // TiTiler 2.x's paths of the same lookups (0.22): `/point/{lon},{lat}/assets` and
  // `/bbox/{minx},{miny},{maxx},{maxy}/assets`, answered under both settings.
  app.get<PathRoute<{ lonlat: string }>>('/point/:lonlat/assets', { schema: { querystring: assetsQuery.schema } }, async (request, reply) => {
    const parts = request.params.lonlat.split(',');
    if (parts.length < 2) return notFound(reply);
    const [lon, lat] = pathNumbers(
      [
        ['lon', parts.slice(0, -1).join(',')],
        ['lat', parts.at(-1)!],
      ],
      'float',
    );
    const p = assetsQuery.parse(request.query);
    return sendJson(reply, (await store.open(p.url)).assetsForPoint(lon!, lat!, p.coordCrs));
  });
  app.get<PathRoute<{ bbox: string }>>('/bbox/:bbox/assets', { schema: { querystring: assetsQuery.schema } }, async (request, reply) => {
    const coords = request.params.bbox.split(',').length >= 4 ? parseCoords(request.params.bbox) : undefined;
    if (!coords || !('bbox' in coords)) return notFound(reply);
    const p = assetsQuery.parse(request.query);
    return sendJson(reply, (await store.open(p.url)).assetsForBbox(coords.bbox, p.coordCrs));
  });

  const tileAssets = async (request: FastifyRequest<TileAssetsRoute>, reply: FastifyReply, url: string, tms: TileMatrixSet): Promise<FastifyReply> => {
    const [z, x, y] = pathNumbers(
      [
        ['z', request.params.z],
        ['x', request.params.x],
        ['y', request.params.y],
      ],
      'int',
    );
    const mosaic = await store.open(url);
    return sendJson(reply, mosaic.assetsForTile(tms, x!, y!, z!));
  };
  // The form without a grid takes it from the query, as TiTiler's does (WebMercatorQuad by default).
  const deprecatedTileAssetsQuery = routeQuery({ url: datasetUrl, grid: gridQuery });
  app.get<TileAssetsRoute>('/:z/:x/:y/assets', { schema: { querystring: deprecatedTileAssetsQuery.schema } }, (request, reply) => {
    const p = deprecatedTileAssetsQuery.parse(request.query);
    return tileAssets(request, reply, p.url, p.grid);
  });
  app.get<TileAssetsRoute>(
    '/:tileMatrixSetId/:z/:x/:y/assets',
    {
      schema: {
        // Every piece of the path, so that /api names them all (z, x, y checked as whole numbers by tileAssets: 422).
        params: { type: 'object', properties: { ...tmsPathSchema, z: { type: 'string' }, x: { type: 'string' }, y: { type: 'string' } } },
        querystring: urlOnly.schema,
      },
    },
    (request, reply) => tileAssets(request, reply, urlOnly.parse(request.query).url, getTms(request.params.tileMatrixSetId!)!),
  );
  // TiTiler 2.x's path of it (0.22), answered under both settings.
  app.get<TileAssetsRoute>(
    '/tiles/:tileMatrixSetId/:z/:x/:y/assets',
    {
      schema: {
        params: { type: 'object', properties: { ...tmsPathSchema, z: { type: 'string' }, x: { type: 'string' }, y: { type: 'string' } } },
        querystring: urlOnly.schema,
      },
    },
    (request, reply) => tileAssets(request, reply, urlOnly.parse(request.query).url, getTms(request.params.tileMatrixSetId!)!),
  );
}
