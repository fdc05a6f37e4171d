/**
 * `/{prefix}/WMTSCapabilities.xml` as TiTiler 2.x answers it (titiler/extensions/wmts.py 2.4.0,
 * since 1.0): one document listing the dataset in every grid, each a layer named
 * `{url}_{grid}_default`, its zooms per grid from `zooms=grid::min,max` (or `*::…`) else the
 * dataset's. The query is checked as a tile's would be (the layer parameters, rendering …) and
 * carried into every layer's tile URL, but for the WMTS request's own keys and `tilesize` (the
 * matrices say 256 px). With TESSERA_TITILER_API=2 only: under 0.18 the same URL is the one-grid
 * document TiTiler 0.18 deprecated (api/generations.ts, api/factory.ts).
 *
 * Not yet: layers from a STAC item's `renders` (TiTiler 2.x adds one per render).
 */
import type { FastifyInstance, preValidationAsyncHookHandler } from 'fastify';
import type { DatasetSummary } from './factory.js';
import { datasetUrl, gridZooms, routeQuery, tileDocument, wmtsEpsg, type ParamFamily, type QueryRoute } from './params/index.js';
import { baseUrl, queryPairs, requestUrl, urlencode } from './urls.js';
import { getTms, tmsIds } from '../tms/registry.js';
import type { TileMatrixSet } from '../tms/grid.js';
import type { Zooms } from '../readers/reader.js';
import { tileMatrixLimits } from '../ogc/tilesets.js';
import { wmtsGridsCapabilities, type WmtsGridLayer } from '../ogc/wmts-grids.js';
import { MEDIA_TYPES } from '../image/formats.js';
import { pyFloatRepr } from '../pyjson.js';
import { WGS84 } from '../gdal/crs.js';

/** Query keys not carried into the tile URLs (TiTiler 2.x's list, compared lower-case). */
const DROPPED = ['tile_format', 'use_epsg', 'tilesize', 'zooms', 'service', 'request', 'acceptversions', 'sections', 'updatesequence', 'acceptformats'];

/** `EPSG:<code>` for `use_epsg=true` (ArcMap); a grid in OGC:CRS84 keeps its URI (TiTiler 2.4.0 writes `EPSG:None`). */
function epsgName(tms: TileMatrixSet): string {
  const m = /^EPSG:(\d+)$/.exec(tms.srs);
  return m ? `EPSG:${m[1]}` : tms.def.crs;
}

/** The zooms a grid's layer lists: the query's for it, else the query's `*`, else the dataset's. */
async function layerZooms(tms: TileMatrixSet, asked: Map<string, Zooms>, summary: DatasetSummary): Promise<Zooms> {
  return asked.get(tms.id) ?? asked.get('*') ?? (await summary.zooms(tms));
}

/** Mounts the every-grid WMTS document under a family; `families` are what its tiles take (checked here too). */
export function allGridsWmts(
  app: FastifyInstance,
  prefix: string,
  families: Record<string, ParamFamily<unknown>>,
  options: { preValidation?: preValidationAsyncHookHandler },
  summaryOf: (url: string) => Promise<DatasetSummary>,
): void {
  // Every parameter a tile takes is validated and parsed (`checked`); the document reads its own.
  const checked = routeQuery({ ...families, epsg: wmtsEpsg, zooms: gridZooms });
  const own = routeQuery({ url: datasetUrl, document: tileDocument, epsg: wmtsEpsg, zooms: gridZooms });
  app.get<QueryRoute>('/WMTSCapabilities.xml', { schema: { querystring: checked.schema }, ...options }, async (request, reply) => {
    checked.parse(request.query);
    const p = own.parse(request.query);
    const url = p.url;
    const summary = await summaryOf(url);
    const format = p.document.tileFormat ?? 'png';
    const base = `${baseUrl(request)}${prefix}`;
    const layers: WmtsGridLayer[] = [];
    for (const id of tmsIds) {
      const tms = getTms(id)!;
      const zooms = await layerZooms(tms, p.zooms, summary);
      layers.push({
        tms,
        limits: tileMatrixLimits(tms, summary.bounds, zooms, WGS84),
        tileUrl: `${base}/tiles/${id}/{TileMatrix}/{TileCol}/{TileRow}.${format}`,
      });
    }
    const kept = queryPairs(request).filter(([k]) => !DROPPED.includes(k.toLowerCase()));
    const xml = wmtsGridsCapabilities({
      title: url,
      requestUrl: requestUrl(request),
      mediaType: MEDIA_TYPES[format],
      bounds: summary.bounds,
      layers,
      query: urlencode(kept),
      grids: tmsIds.map((id) => {
        const tms = getTms(id)!;
        return { tms, crs: p.epsg ? epsgName(tms) : tms.def.crs };
      }),
      num: pyFloatRepr,
    });
    return reply.type('application/xml').send(Buffer.from(xml, 'utf8'));
  });
}
