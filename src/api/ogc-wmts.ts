/**
 * `/{prefix}/WMTSCapabilities.xml` as TiTiler 2.x answers it (titiler/extensions/wmts.py 2.4.0,
 * since 1.0): one document listing the dataset in every grid, each a layer named
 * `{url}_{grid}_default`, its zooms per grid from `zooms=grid::min,max` (or `*::…`) else the
 * dataset's. The query is checked as a tile's would be (the layer parameters, rendering …) and
 * carried into every layer's tile URL, but for the WMTS request's own keys and `tilesize` (the
 * matrices say 256 px). With TESSERA_TITILER_API=2 only: under 0.18 the same URL is the one-grid
 * document TiTiler 0.18 deprecated (api/generations.ts, api/factory.ts).
 *
 * Layers from a summary's `renders` (a catalogue search's `defaults`) come first, one per render and grid.
 */
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { DatasetSummary } from './factory.js';
import { gridZooms, routeQuery, tileDocument, wmtsEpsg, type ParamFamily, type QueryRoute } from './params/index.js';
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

/** What the every-grid document needs of its family. */
export interface WmtsFamily {
  /** The family's prefix as the request reached it (a path piece filled in): where its tile URLs point. */
  prefixOf(request: FastifyRequest): string;
  /** The query parameter naming the dataset (`url`), or none where the path names it. */
  datasetQuery: ParamFamily<string>;
  /** The dataset a request names (the path's, else the parsed `url`): also what titles the layers. */
  dataset(request: FastifyRequest, parsedUrl: string): string;
  /** The dataset's summary, given the request's layer. */
  summary(named: string, layer: unknown): Promise<DatasetSummary>;
}

/** Python's `str()` of a render's value (urlencode's `doseq`): lists expand, floats as Python writes them. */
function renderPairs(values: Record<string, unknown>): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const text = (v: unknown): string => {
    if (typeof v === 'boolean') return v ? 'True' : 'False';
    if (typeof v === 'object' && v !== null && 'value' in v && typeof (v as { value: unknown }).value === 'number')
      return pyFloatRepr((v as { value: number }).value);
    return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  };
  for (const [key, v] of Object.entries(values)) {
    // A render's own tile size is not carried: the matrices say 256 px (titiler.mosaic's wmtsExtension).
    if (key === 'tilesize' || key === 'tilematrixsets' || key === 'spatial_extent') continue;
    for (const x of Array.isArray(v) ? v : [v]) pairs.push([key, text(x)]);
  }
  return pairs;
}

/**
 * Mounts the every-grid WMTS document under a family; `families` are what its tiles take (checked
 * here too). A summary with `renders` (a catalogue search's `defaults`) adds, before the query's own
 * layer, one layer per render and grid with the render's query (titiler.mosaic 2.3's wmtsExtension).
 */
export function allGridsWmts(
  app: FastifyInstance,
  families: Record<string, ParamFamily<unknown>>,
  options: { preValidation?: preValidationAsyncHookHandler },
  family: WmtsFamily,
): void {
  // Every parameter a tile takes is validated and parsed (`checked`); the document reads its own.
  const checked = routeQuery({ ...families, epsg: wmtsEpsg, zooms: gridZooms });
  const own = routeQuery({ url: family.datasetQuery, document: tileDocument, epsg: wmtsEpsg, zooms: gridZooms });
  app.get<QueryRoute>('/WMTSCapabilities.xml', { schema: { querystring: checked.schema }, ...options }, async (request, reply) => {
    const all = checked.parse(request.query) as { layer?: unknown };
    const p = own.parse(request.query);
    const named = family.dataset(request, p.url);
    const summary = await family.summary(named, all.layer);
    const title = summary.title ?? named;
    const format = p.document.tileFormat ?? 'png';
    const base = `${baseUrl(request)}${family.prefixOf(request)}`;
    const layers: WmtsGridLayer[] = [];
    const gridLayers = async (render: string | undefined, query: string | undefined, asked: Map<string, Zooms>): Promise<void> => {
      for (const id of tmsIds) {
        const tms = getTms(id)!;
        const zooms = await layerZooms(tms, asked, summary);
        layers.push({
          tms,
          limits: tileMatrixLimits(tms, summary.bounds, zooms, WGS84),
          tileUrl: `${base}/tiles/${id}/{TileMatrix}/{TileCol}/{TileRow}.${format}`,
          ...(render !== undefined ? { render } : {}),
          ...(query !== undefined ? { query } : {}),
        });
      }
    };
    for (const [name, values] of Object.entries(summary.renders ?? {})) {
      if (typeof values !== 'object' || values === null) continue;
      await gridLayers(name, urlencode(renderPairs(values as Record<string, unknown>)), new Map());
    }
    await gridLayers(undefined, undefined, p.zooms);
    const kept = queryPairs(request).filter(([k]) => !DROPPED.includes(k.toLowerCase()));
    const xml = wmtsGridsCapabilities({
      title,
      requestUrl: requestUrl(request),
      mediaType: MEDIA_TYPES[format],
      bounds: summary.bounds,
      ...(summary.boundsText ? { boundsText: summary.boundsText } : {}),
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
