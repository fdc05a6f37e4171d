/**
 * OGC API – Tiles documents of a reader family, as TiTiler 2.x has them (titiler/core/factory.py
 * 2.4.0, `tilesets`; the mosaic factory's are the same): `/tiles`, the list of the dataset's
 * tilesets (one per grid), and `/tiles/{tileMatrixSetId}`, one tileset with the rows and columns each
 * zoom covers. JSON, or HTML when `f=html` or the Accept header prefers it. TiTiler 0.18 has neither
 * route, so both are answered whatever TESSERA_TITILER_API says (api/generations.ts).
 *
 * They take the dataset's `url` only (a STAC item needs no `assets` here, as in TiTiler); the rest of
 * the query travels into the tile and map links, as TiTiler forwards it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../config.js';
import type { DatasetSummary } from './factory.js';
import { datasetUrl, documentFormat, routeQuery, tilesetCrs, tmsPathSchema, type PathRoute, type QueryRoute } from './params/index.js';
import { family as paramFamily, int } from './params/family.js';
import { baseUrl, queryPairs, urlencode } from './urls.js';
import { sendJson } from './reply.js';
import { documentOutput } from './negotiate.js';
import { contentSecurityPolicy, sendHtml } from './pages/respond.js';
import { documentPage, type DocumentLink } from './pages/html.js';
import { getTms, tmsIds } from '../tms/registry.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { boundsIn, crsUriOf, geographicCrsOf, tileMatrixLimits } from '../ogc/tilesets.js';
import { float } from '../pyjson.js';
import { WGS84 } from '../gdal/crs.js';

/** The zooms a tileset document announces instead of the dataset's (its own `minzoom`/`maxzoom`, not TileJSON's). */
const tilesetZooms = paramFamily(
  'tileset zooms',
  {
    minzoom: { schema: int, doc: "Minimum zoom written in the document, instead of the dataset's." },
    maxzoom: { schema: int, doc: "Maximum zoom written in the document, instead of the dataset's." },
  },
  (q) => ({ minzoom: q['minzoom'] as number | undefined, maxzoom: q['maxzoom'] as number | undefined }),
);

/** The OGC "tiling scheme" relation of a tileset's grid. */
const TILING_SCHEME = 'http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme';

/** `{z}`, `{x}`, `{y}` as Starlette's url_for writes them into a path (percent-encoded braces). */
const TILE_TEMPLATE = '%7Bz%7D/%7Bx%7D/%7By%7D';

/** The dataset's bounds in `srs`: the family's own transform when it has one (a COG from its native CRS), else from longitude/latitude. */
async function datasetBounds(summary: DatasetSummary, srs: string): Promise<BBox> {
  return summary.boundsIn ? summary.boundsIn(srs) : boundsIn(summary.bounds, WGS84, srs);
}

function boundingBox(bounds: BBox, crsUri: string | undefined): Record<string, unknown> {
  const [minx, miny, maxx, maxy] = bounds.map(float);
  return { lowerLeft: [minx, miny], upperRight: [maxx, maxy], ...(crsUri ? { crs: crsUri } : {}) };
}

/** The request's query, re-encoded as Python's urlencode does, without the keys in `dropped`. */
function queryString(request: FastifyRequest, dropped: readonly string[] = []): string {
  const pairs = queryPairs(request).filter(([k]) => !dropped.includes(k.toLowerCase()));
  return pairs.length > 0 ? `?${urlencode(pairs)}` : '';
}

/** The document as JSON, or as a page when the client asks for HTML. */
function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  f: 'html' | 'json' | undefined,
  settings: Settings,
  title: string,
  doc: Record<string, unknown>,
  links: DocumentLink[],
): FastifyReply {
  if (documentOutput(request, f) === 'html') {
    return sendHtml(reply, documentPage({ root: settings.rootPath, title, links, json: doc }), contentSecurityPolicy(settings.basemapUrl));
  }
  return sendJson(reply, doc);
}

/** `/tiles` and `/tiles/{tileMatrixSetId}` under a family's `prefix`. */
export function tilesetRoutes(app: FastifyInstance, prefix: string, summaryOf: (url: string) => Promise<DatasetSummary>, settings: Settings): void {
  const listQuery = routeQuery({ url: datasetUrl, crs: tilesetCrs, f: documentFormat });
  const tilesetQuery = routeQuery({ url: datasetUrl, zooms: tilesetZooms, f: documentFormat });

  app.get<QueryRoute>('/tiles', { schema: { querystring: listQuery.schema } }, async (request, reply) => {
    const p = listQuery.parse(request.query);
    const summary = await summaryOf(p.url);
    const srs = p.crs ?? WGS84;
    const box = boundingBox(await datasetBounds(summary, srs), crsUriOf(srs));
    const base = `${baseUrl(request)}${prefix}`;
    const qs = queryString(request, ['crs']);
    const tilesets = tmsIds.map((id) => {
      const tms = getTms(id)!;
      return {
        title: `tileset tiled using ${id} TileMatrixSet`,
        dataType: 'map',
        crs: tms.def.crs,
        links: [
          { href: `${base}/tiles/${id}${qs}`, rel: 'self', type: 'application/json', title: `Tileset tiled using ${id} TileMatrixSet` },
          { href: `${base}/tiles/${id}/${TILE_TEMPLATE}${qs}`, rel: 'tile', title: 'Templated link for retrieving Raster tiles' },
          { href: `${baseUrl(request)}/tileMatrixSets/${id}`, rel: TILING_SCHEME, type: 'application/json', title: `Definition of '${id}' tileMatrixSet` },
        ],
        boundingBox: box,
        accessConstraints: 'unclassified',
      };
    });
    const links = tilesets.map((t) => t.links[0]!);
    return answer(request, reply, p.f, settings, 'Tilesets', { tilesets }, links);
  });

  app.get<PathRoute<{ tileMatrixSetId: string }>>(
    '/tiles/:tileMatrixSetId',
    { schema: { params: { type: 'object', properties: tmsPathSchema, required: ['tileMatrixSetId'] }, querystring: tilesetQuery.schema } },
    async (request, reply) => {
      const p = tilesetQuery.parse(request.query);
      const tms: TileMatrixSet = getTms(request.params.tileMatrixSetId)!;
      const summary = await summaryOf(p.url);
      const geographic = geographicCrsOf(tms);
      const [bounds, defaults] = await Promise.all([datasetBounds(summary, geographic.srs), summary.zooms(tms)]);
      const zooms = { minzoom: p.zooms.minzoom ?? defaults.minzoom, maxzoom: p.zooms.maxzoom ?? defaults.maxzoom };
      const base = `${baseUrl(request)}${prefix}`;
      const qs = queryString(request);
      const links: DocumentLink[] = [
        { href: `${base}/tiles/${tms.id}`, rel: 'self', type: 'application/json', title: `Tileset tiled using ${tms.id} TileMatrixSet` },
        { href: `${base}/tiles/${tms.id}/${TILE_TEMPLATE}${qs}`, rel: 'tile', title: 'Templated link for retrieving Raster tiles' },
        {
          href: `${baseUrl(request)}/tileMatrixSets/${tms.id}`,
          rel: TILING_SCHEME,
          type: 'application/json',
          title: `Definition of '${tms.id}' tileMatrixSet`,
        },
        { href: `${base}/${tms.id}/map.html${qs}`, rel: 'data', type: 'text/html', title: `Map viewer for '${tms.id}' tileMatrixSet` },
      ];
      const doc = {
        title: `tileset tiled using ${tms.id} TileMatrixSet`,
        dataType: 'map',
        crs: tms.def.crs,
        links: links.map((l) =>
          // TiTiler marks the tile link templated (after its relation, before its title).
          l.rel === 'tile' ? { href: l.href, rel: l.rel, templated: true, title: l.title } : l,
        ),
        tileMatrixSetLimits: tileMatrixLimits(tms, bounds, zooms, geographic.srs),
        boundingBox: boundingBox(bounds, geographic.uri),
        accessConstraints: 'unclassified',
      };
      return answer(request, reply, p.f, settings, tms.id, doc, links);
    },
  );
}
