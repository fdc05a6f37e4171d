/**
 * `/{prefix}/WMTSCapabilities.xml` as TiTiler 2.x answers it (titiler/extensions/wmts.py 2.4.0,
 * since 1.0): one document listing the dataset in every grid, each a layer named
 * `{url}_{grid}_default`, its zooms per grid from `zooms=grid::min,max` (or `*::…`) else the
 * dataset's. The query is checked as a tile's would be (the layer parameters, rendering …) and
 * carried into every layer's tile URL, but for the WMTS request's own keys and `tilesize` (the
 * matrices say 256 px). With TESSERA_TITILER_API=2 only: under 0.18 the same URL is the one-grid
 * document TiTiler 0.18 deprecated (api/generations.ts, api/factory.ts).
 *
 * A dataset's renders come first, each a layer per grid named `{title}_{grid}_{render}`, as the TiTiler
 * whose URLs the family answers writes them:
 * - a dataset named by `url` (a STAC item's renders, api/stac-renders.ts; titiler.extensions' WMTS):
 *   the renders whose parameters the tile route takes, with their `tilematrixsets` zooms and
 *   `spatial_extent` box when they name them; their tile URLs carry the dataset's `url` (TiTiler
 *   2.4.0 leaves it out, so its render layers' tiles fail);
 * - a dataset named by the path (a catalogue search's `defaults`, an item of the catalogue;
 *   titiler.mosaic 2.3's wmtsExtension): every render as given, without its tile size, zooms or box.
 */
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { DatasetSummary } from './factory.js';
import { datasetUrl, gridZooms, routeQuery, tileDocument, wmtsEpsg, type ParamFamily, type QueryRoute } from './params/index.js';
import { baseUrl, queryPairs, requestUrl, urlencode } from './urls.js';
import { getTms, tmsIds } from '../tms/registry.js';
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import type { Zooms } from '../readers/reader.js';
import { tileMatrixLimits } from '../ogc/tilesets.js';
import { wmtsGridsCapabilities, type WmtsGridLayer } from '../ogc/wmts-grids.js';
import { MEDIA_TYPES, formatOf, type FormatName } from '../image/formats.js';
import { MAX_RENDERS, tileRouteTakes, urlencodeDoseq } from './stac-renders.js';
import { badRequest, TesseraError } from '../errors.js';
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

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A render's `[min, max]` zooms for a grid from its `tilematrixsets` (`{grid: [min, max]}`, `*` for any), if it names them. */
function renderZooms(tilematrixsets: unknown, id: string): Zooms | undefined {
  if (!isRecord(tilematrixsets)) return undefined;
  const z = tilematrixsets[id] ?? tilematrixsets['*'];
  return Array.isArray(z) && z.length === 2 && z.every((v) => Number.isInteger(v)) ? { minzoom: z[0] as number, maxzoom: z[1] as number } : undefined;
}

/**
 * The layers of the dataset's renders, render by render, every grid (see the module's comment): `url`
 * the dataset's where the query names it, undefined where the path does (a search, or an item of
 * the catalogue: DatasetSummary.rendersOfItem).
 */
async function renderLayers(
  app: FastifyInstance,
  request: FastifyRequest,
  prefix: string,
  url: string | undefined,
  summary: DatasetSummary,
  format: FormatName,
): Promise<WmtsGridLayer[]> {
  const renders = Object.entries(summary.renders ?? {});
  if (renders.length > MAX_RENDERS) throw badRequest(`The dataset has ${renders.length} renders: a WMTS document lists at most ${MAX_RENDERS}`);
  const base = `${baseUrl(request)}${prefix}`;
  const out: WmtsGridLayer[] = [];
  for (const [name, given] of renders) {
    if (!isRecord(given)) continue;
    if (url === undefined && !summary.rendersOfItem) {
      const query = urlencode(renderPairs(given));
      for (const id of tmsIds) {
        const tms = getTms(id)!;
        const tileUrl = `${base}/tiles/${id}/{TileMatrix}/{TileCol}/{TileRow}.${format}`;
        out.push({ tms, limits: tileMatrixLimits(tms, summary.bounds, await summary.zooms(tms), WGS84), tileUrl, name, query });
      }
      continue;
    }
    // A render's tiles are cut at the matrices' size: its `tilesize` is not carried.
    const { tilesize: _size, ...values } = given;
    const query = urlencodeDoseq({ ...(url !== undefined ? { url } : {}), ...values });
    if (!(await tileRouteTakes(app, request, prefix, query))) continue;
    const extent = values['spatial_extent'];
    const bounds = Array.isArray(extent) && extent.length === 4 && extent.every((v) => typeof v === 'number') ? (extent as BBox) : undefined;
    for (const id of tmsIds) {
      const tms = getTms(id)!;
      const zooms = renderZooms(values['tilematrixsets'], id) ?? (await summary.zooms(tms));
      out.push({
        tms,
        limits: tileMatrixLimits(tms, bounds ?? summary.bounds, zooms, WGS84),
        tileUrl: `${base}/tiles/${id}/{TileMatrix}/{TileCol}/{TileRow}.${format}`,
        name,
        query,
        ...(bounds ? { bounds } : {}),
      });
    }
  }
  return out;
}

/**
 * Mounts the every-grid WMTS document under a family; `families` are what its tiles take (checked
 * here too). The dataset's renders come first (the module's comment), then the query's own layer.
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
    const p = own.parse(request.query);
    const url = family.datasetQuery === datasetUrl ? p.url : undefined;
    // titiler.extensions' WMTS (a dataset named by `url`): a query the tile route refuses (no assets
    // of an item) makes no layer of its own, and only a document left without any layer is refused.
    let layer: unknown;
    let queryLayer = true;
    try {
      layer = (checked.parse(request.query) as { layer?: unknown }).layer;
    } catch (err) {
      if (url === undefined || !(err instanceof TesseraError && err.kind === 'BadRequest')) throw err;
      queryLayer = false;
    }
    const named = family.dataset(request, p.url);
    const summary = await family.summary(named, layer);
    const title = summary.title ?? named;
    const format = p.document.tileFormat ?? 'png';
    const prefix = family.prefixOf(request);
    const base = `${baseUrl(request)}${prefix}`;
    const layers: WmtsGridLayer[] = await renderLayers(app, request, prefix, url, summary, format);
    for (const id of queryLayer ? tmsIds : []) {
      const tms = getTms(id)!;
      const zooms = await layerZooms(tms, p.zooms, summary);
      layers.push({
        tms,
        limits: tileMatrixLimits(tms, summary.bounds, zooms, WGS84),
        tileUrl: `${base}/tiles/${id}/{TileMatrix}/{TileCol}/{TileRow}.${format}`,
      });
    }
    if (layers.length === 0) throw badRequest('Could not find any valid layers in metadata or construct one from Query Parameters.');
    const kept = queryPairs(request).filter(([k]) => !DROPPED.includes(k.toLowerCase()));
    const xml = wmtsGridsCapabilities({
      title,
      requestUrl: requestUrl(request),
      mediaType: MEDIA_TYPES[formatOf(format)],
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
