/**
 * /collections/{collection_id}/items/{item_id} (titiler-pgstac 3.2.0's "STAC Item" routes, a TiTiler
 * 2.x MultiBaseTilerFactory over its PgSTACReader): one item of the pgSTAC catalogue, read from
 * pgSTAC (`search` with its id and collection, kept a while as titiler-pgstac keeps it; 404 `No item
 * '…' found in '…' collection`) and then read as /stac reads an item (readers/stac.ts): its assets of
 * a raster media type, each href under the URL and network policies as any URL a client gives.
 *
 * Tiles, TileJSON, the map page and WMTS come from the route factory (a family of TiTiler generation
 * 2 named by two pieces of its path); here `assets`, `info` and `info.geojson` (rio-tiler 9's model)
 * `point`, `asset_statistics` and `renders` (the item's STAC `renders`, also TileJSON's
 * `raster_layers`); the optional verbs (preview, bbox, feature, statistics) from api/verbs.ts.
 * Mounted only with a catalogue (TESSERA_PGSTAC_DSN or TESSERA_CATALOG).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../services.js';
import { TesseraError } from '../../errors.js';
import { floats, PyFloat, pyFloatRepr } from '../../pyjson.js';
import type { Searches } from '../../pgstac/searches.js';
import { parseItem } from '../../stac/item.js';
import { StacItemSources } from '../../stac/reader.js';
import { stacItemReader, type StacLayerOptions } from '../../readers/stac.js';
import { assetNames, coordCrs, datasetValues, requireLayerFirst, routeQuery, stacLayer, type PathRoute } from '../params/index.js';
import { parseLonLat } from '../path-params.js';
import { notFound, sendJson } from '../reply.js';
import { bboxFeature, infoModelV2, pointBandsV2 } from '../models.js';
import { getTms } from '../../tms/registry.js';
import { crsUriOf } from '../../ogc/tilesets.js';
import { defineFamily } from '../factory.js';
import { ValidationError } from '../errors.js';
import * as verb from '../verbs.js';
import { adaptForV2, stacRenderRoutes } from '../stac-renders.js';
import { assetStatisticsJson, assetStatisticsParams } from '../asset-statistics.js';

const PREFIX = '/collections/:collection_id/items/:item_id';

function searchesOf(services: Services): Searches {
  if (!services.searches) throw new TesseraError('Internal', 'no pgSTAC catalogue is configured (TESSERA_PGSTAC_DSN)');
  return services.searches;
}

/** The item the path names (`["collection", "item"]` from the factory, or the request's two pieces). */
async function itemSources(
  services: Services,
  collection: string,
  id: string,
): Promise<{ sources: StacItemSources; doc: Record<string, unknown>; bboxText: string[] | undefined }> {
  const read = await searchesOf(services).item(collection, id);
  const doc = plain(read) as Record<string, unknown>;
  const name = `${collection}/${id}`;
  const ctx = services.mosaicContext;
  // The bbox's numbers as the item writes them (pystac keeps ints ints; WMTS copies them).
  const bbox = read['bbox'];
  const bboxText = Array.isArray(bbox) && bbox.length === 4 ? bbox.map((v) => (v instanceof PyFloat ? pyFloatRepr(v.value) : String(v))) : undefined;
  return { sources: StacItemSources.of(parseItem(doc, name), name, ctx.sources, ctx.policy), doc, bboxText };
}

/** pyLoads' values as plain JSON values (floats as numbers). */
function plain(v: unknown): unknown {
  if (v instanceof PyFloat) return v.value;
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

function namedItem(named: string): [string, string] {
  const pieces = JSON.parse(named) as [string, string];
  return [pieces[0], pieces[1]];
}

/** The item's STAC `renders` (render extension) as its document has them. */
function rendersOf(doc: Record<string, unknown>): Record<string, unknown> | undefined {
  const properties = doc['properties'];
  const renders = typeof properties === 'object' && properties !== null ? (properties as Record<string, unknown>)['renders'] : undefined;
  return typeof renders === 'object' && renders !== null && !Array.isArray(renders) ? (renders as Record<string, unknown>) : undefined;
}

/** The item's renders as TileJSON's `raster_layers` and WMTS layers, adapted to TiTiler 2.x as titiler-pgstac does. */
function itemRenders(doc: Record<string, unknown>): Record<string, unknown> {
  const renders = rendersOf(doc) ?? {};
  return Object.fromEntries(Object.entries(renders).map(([name, render]) => [name, isRecord(render) ? adaptForV2(render) : render]));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every asset when the request names none (TiTiler 2.x reads them all for info; tiles need some). */
function withAssets(layer: StacLayerOptions, sources: StacItemSources): StacLayerOptions {
  return layer.assets || layer.expression ? layer : { ...layer, assets: sources.assetNames };
}

export const itemFamily = defineFamily({
  prefix: PREFIX,
  tag: {
    name: 'STAC Item',
    description: 'One item of the catalogue (pgSTAC, or stac-geoparquet in memory), named by its collection and id: images of its assets and their metadata.',
  },
  docs: [
    { match: /^\/info(\.geojson)?$/, summary: "Metadata of the item's assets (rio-tiler 9's Info)", answer: 'json' },
    { match: /^\/assets$/, summary: "Names of the item's assets", answer: 'json' },
    { match: /^\/point\//, summary: "Values of the item's assets at a point", answer: 'json' },
    { match: /^\/asset_statistics$/, summary: "Statistics of each asset's bands, asset by asset", answer: 'json' },
    { match: /^\/renders$/, summary: "The item's renders (STAC render extension), with links to their TileJSON and WMTS", answer: 'json' },
    { match: /^\/renders\//, summary: "One of the item's renders", answer: 'json' },
  ],
  metricsLabel: 'items',
  enabled: (settings) => settings.pgstacDsn !== undefined || settings.catalog !== undefined,
  datasetParam: ['collection_id', 'item_id'],
  generation: '2',
  layer: stacLayer,
  layerFirst: (_settings, routes) => (routes === 'statistics' ? undefined : requireLayerFirst),
  datasets: (services) => ({
    open: async (named, layer) => {
      const { sources } = await itemSources(services, ...namedItem(named));
      // A TiTiler 2.x application: bands are named by position (b1 …) without an expression.
      return stacItemReader(sources, withAssets(layer.expression ? layer : { ...layer, positional: true }, sources));
    },
    summary: async (named) => {
      const { sources, doc, bboxText } = await itemSources(services, ...namedItem(named));
      // TiTiler's WMTS titles a dataset that is not a URL (an item) 'TiTiler'. titiler-pgstac's
      // PgSTACReader is rio-tiler 9's STACReader: bounds and zooms from the projection extension
      // where it gives a grid (else the bbox, its numbers as the item writes them, and every zoom).
      const gridded = sources.item.grid !== undefined;
      return {
        bounds: sources.projectedBounds(),
        zooms: async (tms) => sources.projectedZooms(tms),
        renders: itemRenders(doc),
        rendersOfItem: true,
        title: 'TiTiler',
        ...(bboxText && !gridded ? { boundsText: bboxText } : {}),
      };
    },
  }),
  // titiler-pgstac's item factory (TiTiler 2.x's MultiBaseTilerFactory): preview, bbox, feature and
  // statistics; no OGC Maps `/map` (add_ogc_maps is off there). `point` is the family's own (below).
  coverageWeighted: true,
  verbs: [verb.preview, verb.bbox, verb.feature, verb.statisticsOfPreview, verb.statisticsOfFeatures],
  routes: itemRoutes,
});

type ItemRoute<P = object> = PathRoute<{ collection_id: string; item_id: string } & P>;

async function itemRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const of = (request: FastifyRequest<ItemRoute>) => itemSources(services, request.params.collection_id, request.params.item_id);

  app.get<ItemRoute>('/assets', async (request, reply) => sendJson(reply, (await of(request)).sources.assetNames));

  // rio-tiler 9's Info of each asset asked, and as a GeoJSON Feature over the item's bbox.
  const infoQuery = routeQuery({ assets: assetNames });
  const webMercator = getTms('WebMercatorQuad')!;
  const infos = async (request: FastifyRequest<ItemRoute>) => {
    const assets = infoQuery.parse(request.query).assets;
    // TiTiler 2.x's item info names its assets (FastAPI's 422 for the missing parameter).
    if (!assets) throw new ValidationError([{ type: 'missing', loc: ['query', 'assets'], msg: 'Field required', input: null }]);
    const { sources } = await of(request);
    const read = await sources.info(webMercator, assets);
    return { infos: Object.fromEntries(read.map(([name, info]) => [name, infoModelV2(info, crsUriOf)])), bounds: sources.bounds };
  };
  app.get<ItemRoute>('/info', { schema: { querystring: infoQuery.schema } }, async (request, reply) => sendJson(reply, (await infos(request)).infos));
  app.get<ItemRoute>('/info.geojson', { schema: { querystring: infoQuery.schema } }, async (request, reply) => {
    const { infos: read, bounds } = await infos(request);
    // geojson_pydantic 2's Feature, as TiTiler 2.x writes it, names its bbox first.
    return sendJson(reply, { bbox: floats(bounds), ...bboxFeature(bounds, read) }, 'application/geo+json');
  });

  // TiTiler 2.x's point: the values (masked ones null), band names by position (`b1` …), described as `{asset}_b1` ….
  const pointQuery = routeQuery({ layer: stacLayer, values: datasetValues, coordCrs });
  app.get<ItemRoute<{ lonlat: string }>>(
    '/point/:lonlat',
    { schema: { querystring: pointQuery.schema }, preValidation: requireLayerFirst },
    async (request, reply) => {
      const lonlat = parseLonLat(request.params.lonlat);
      if (!lonlat) return notFound(reply);
      const p = pointQuery.parse(request.query);
      const { sources } = await of(request);
      // Named as 0.18 names an item's bands (`visual_b1`): TiTiler 2.x's descriptions; its names are by position.
      const reader = await stacItemReader(sources, withAssets(p.layer, sources));
      const result = await reader.point(lonlat[0], lonlat[1], p.coordCrs, p.values);
      return sendJson(reply, {
        coordinates: floats(lonlat),
        ...pointBandsV2(result.values, result.masked, 'numbered', result.bandNames),
      });
    },
  );

  const assetStatisticsQuery = routeQuery(assetStatisticsParams);
  app.get<ItemRoute>('/asset_statistics', { config: { large: true }, schema: { querystring: assetStatisticsQuery.schema } }, async (request, reply) => {
    const p = assetStatisticsQuery.parse(request.query);
    return sendJson(reply, await assetStatisticsJson(services, (await of(request)).sources, p, true));
  });

  // The item's renders: its links name it by its path (titiler-pgstac writes `url=` with the
  // item's Python repr there, which no route reads: a deliberate difference).
  await stacRenderRoutes(app, {
    query: routeQuery({}),
    renders: async (request) => rendersOf((await of(request as FastifyRequest<ItemRoute>)).doc) ?? {},
    datasetParams: () => ({}),
    prefix: (request) => {
      const { collection_id, item_id } = (request as FastifyRequest<ItemRoute>).params;
      return `/collections/${encodeURIComponent(collection_id)}/items/${encodeURIComponent(item_id)}`;
    },
  });
}
