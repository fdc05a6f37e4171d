/**
 * tessera's HTML pages and the files they load: `/` (landing page), `/stac/{tms}/map`,
 * `/mosaicjson/{tms}/map` (and TiTiler's deprecated `/stac/map`, `/mosaicjson/map`), `/stac/viewer`,
 * and `/static/...` (tessera's page scripts, Leaflet, proj4, proj4leaflet from node_modules).
 * Pages never load anything from another host unless a basemap is configured, and say so to the
 * browser with a Content-Security-Policy.
 *
 * The map routes take the same query as the TileJSON they draw and check it the same way, so a bad
 * request fails here with TiTiler's status and detail rather than later inside the page.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { Services } from '../../services.js';
import type { Settings } from '../../config.js';
import { getTms, WEB_MERCATOR_QUAD } from '../../tms/registry.js';
import { PIXEL_SELECTION_METHODS } from '../../mosaic/methods.js';
import {
  algorithmSchema,
  bandLayerSchema,
  datasetSchema,
  gridQuerySchema,
  layerSchema,
  parseImageParams,
  querySchema,
  renderSchema,
  requireLayerFirst,
  tileSchema,
  tilejsonSchema,
  tmsPathSchema,
  urlSchema,
  type Query,
} from '../params.js';
import { baseUrl, queryPairs, urlencode } from '../urls.js';
import { landingOptions } from '../pages/landing.js';
import { SERVED_EXTENSIONS, staticMounts } from '../pages/assets.js';
import { mapGrid } from '../pages/map-grid.js';
import { landingPage, mapPage, viewerPage, type Basemap } from '../pages/html.js';

const HTML = 'text/html; charset=utf-8';
const TMS_PARAMS = { type: 'object', properties: tmsPathSchema, required: ['tileMatrixSetId'] };

type MapRequest = FastifyRequest<{ Params: { tileMatrixSetId?: string }; Querystring: Query & { url: string } }>;

/** Which TileJSON a map page draws. */
interface MapFamily {
  /** Route prefix of the TileJSON (`stac`, `mosaicjson`). */
  prefix: string;
  /** TiTiler's "assets or expression" rule (STAC only). */
  layerRequired: boolean;
  /** Its query's parameter families (the form without a grid adds the grid's). */
  query: Array<Record<string, unknown>>;
}

const STAC_MAP: MapFamily = {
  prefix: 'stac',
  layerRequired: true,
  query: [urlSchema, layerSchema, datasetSchema, tileSchema, algorithmSchema, renderSchema, tilejsonSchema],
};

const COG_MAP: MapFamily = {
  prefix: 'cog',
  layerRequired: false,
  query: [urlSchema, bandLayerSchema, datasetSchema, tileSchema, algorithmSchema, renderSchema, tilejsonSchema],
};

const MOSAIC_MAP: MapFamily = {
  prefix: 'mosaicjson',
  layerRequired: false,
  query: [urlSchema, layerSchema, datasetSchema, tileSchema, algorithmSchema, renderSchema, tilejsonSchema, { pixel_selection: { type: 'string', enum: [...PIXEL_SELECTION_METHODS], default: 'first' } }],
};

/** The one place pages may load from besides tessera: the configured basemap's host. */
function contentSecurityPolicy(basemapUrl: string): string {
  const images = ["'self'", 'data:', 'blob:'];
  const origin = /^(https?:\/\/)([^/?#]+)/i.exec(basemapUrl);
  // A subdomain template (`{s}.tile.example.org`) becomes a CSP wildcard host.
  if (origin) images.push(`${origin[1]}${origin[2]!.replace(/\{[^}]*\}/g, '*')}`);
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src ${images.join(' ')}`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; ');
}

function basemapOf(settings: Settings): Basemap | null {
  return settings.basemapUrl ? { url: settings.basemapUrl, attribution: settings.basemapAttribution } : null;
}

// ---- routes -----------------------------------------------------------------------------------------

function sendHtml(reply: FastifyReply, html: string, csp: string): FastifyReply {
  return reply.type(HTML).header('content-security-policy', csp).send(html);
}

export function pageRoutes(services: Services) {
  const settings = services.settings;
  const basemap = basemapOf(settings);
  const csp = contentSecurityPolicy(settings.basemapUrl);

  return async function plugin(app: FastifyInstance): Promise<void> {
    const mounts = staticMounts();
    for (const mount of mounts) {
      await app.register(fastifyStatic, {
        root: mount.root,
        prefix: mount.prefix,
        decorateReply: false,
        cacheControl: false, // the application's Cache-Control applies
        index: false,
        allowedPath: (pathName) => SERVED_EXTENSIONS.has(path.extname(pathName)),
      });
    }

    const favicon = await fs.readFile(path.join(mounts[0]!.root, 'favicon.svg'));
    app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => reply.type('image/svg+xml').send(favicon));

    app.get('/', { schema: { hide: true } }, async (request, reply) => {
      const html = landingPage(await landingOptions(baseUrl(request), settings.demoDir));
      return sendHtml(reply, html, csp);
    });

    function mapHandler(family: MapFamily) {
      return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
        const request = req as MapRequest;
        parseImageParams(request.query, family.layerRequired);
        // The form without a grid takes it from the query (TiTiler 0.18.10's deprecated /map).
        const tms = getTms(request.params.tileMatrixSetId ?? (request.query['tileMatrixSetId'] as string | undefined) ?? WEB_MERCATOR_QUAD)!;
        // TiTiler forwards the page's whole query to the TileJSON, re-encoded with urlencode.
        const pairs = queryPairs(request);
        const tilejsonUrl = `${baseUrl(request)}/${family.prefix}/${tms.id}/tilejson.json${pairs.length > 0 ? `?${urlencode(pairs)}` : ''}`;
        const html = mapPage({ title: `tessera map · ${request.query.url}`, tilejsonUrl, grid: mapGrid(tms), basemap });
        return sendHtml(reply, html, csp);
      };
    }

    for (const family of [COG_MAP, STAC_MAP, MOSAIC_MAP]) {
      const preValidation = family.layerRequired ? requireLayerFirst : undefined;
      app.get(
        `/${family.prefix}/:tileMatrixSetId/map`,
        { schema: { params: TMS_PARAMS, querystring: querySchema(['url'], ...family.query) }, ...(preValidation ? { preValidation } : {}) },
        mapHandler(family),
      );
      app.get(
        `/${family.prefix}/map`,
        { schema: { querystring: querySchema(['url'], ...family.query, gridQuerySchema), deprecated: true }, ...(preValidation ? { preValidation } : {}) },
        mapHandler(family),
      );
    }

    const viewerGrid = mapGrid(getTms(WEB_MERCATOR_QUAD)!);
    app.get('/stac/viewer', async (_request, reply) => {
      const html = viewerPage({
        endpoints: {
          info: '/stac/info',
          statistics: '/stac/statistics',
          tilejson: `/stac/${WEB_MERCATOR_QUAD}/tilejson.json`,
          map: `/stac/${WEB_MERCATOR_QUAD}/map`,
          colorMaps: '/colorMaps',
          algorithms: '/algorithms',
        },
        grid: viewerGrid,
        basemap,
      });
      return sendHtml(reply, html, csp);
    });
  };
}

