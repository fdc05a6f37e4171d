/**
 * How tessera answers with a page: HTML with a Content-Security-Policy that lets it load from itself
 * and, for map tiles only, from the configured basemap's host; the map page of any reader family's
 * TileJSON, and a family's viewer (TiTiler's cogViewerExtension and stacViewerExtension). The route
 * factory (api/factory.ts) mounts both beside the family's tiles.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../config.js';
import type { TileMatrixSet } from '../../tms/grid.js';
import { getTms, WEB_MERCATOR_QUAD } from '../../tms/registry.js';
import { baseUrl, queryPairs, urlencode } from '../urls.js';
import { mapGrid } from './map-grid.js';
import { mapPage, viewerPage, type Basemap, type ViewerPageOptions } from './html.js';

const HTML = 'text/html; charset=utf-8';

/** The one place pages may load from besides tessera: the configured basemap's host. */
export function contentSecurityPolicy(basemapUrl: string): string {
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

export function sendHtml(reply: FastifyReply, html: string, csp: string): FastifyReply {
  return reply.type(HTML).header('content-security-policy', csp).send(html);
}

/** The map page of a family's TileJSON (`prefix`: '/cog', '/stac' …) in `tms`, with the page's whole query forwarded. */
export function mapPageResponder(
  settings: Settings,
): (request: FastifyRequest, reply: FastifyReply, prefix: string, tms: TileMatrixSet, url: string, added?: Array<[string, string]>) => FastifyReply {
  const csp = contentSecurityPolicy(settings.basemapUrl);
  const basemap = basemapOf(settings);
  return (request, reply, prefix, tms, url, added = []) => {
    // TiTiler forwards the page's whole query to the TileJSON, re-encoded with urlencode (2.x's
    // map.html adds `tilesize` when the page was not given one: `added`).
    const pairs = [...queryPairs(request), ...added];
    const tilejsonUrl = `${baseUrl(request)}${prefix}/${tms.id}/tilejson.json${pairs.length > 0 ? `?${urlencode(pairs)}` : ''}`;
    return sendHtml(reply, mapPage({ root: settings.rootPath, title: `tessera map · ${url}`, tilejsonUrl, grid: mapGrid(tms), basemap }), csp);
  };
}

/** What a family's viewer views: a STAC item (its assets) or one COG (its bands). */
export type ViewerKind = ViewerPageOptions['kind'];

/** GET /viewer under a family's prefix (`/cog`, `/stac`): the page, made once, over the family's routes. */
export function viewerRoute(settings: Settings, prefix: string, kind: ViewerKind): (app: FastifyInstance) => void {
  const csp = contentSecurityPolicy(settings.basemapUrl);
  // Relative to the page's <base>: the server's root path applies.
  const family = prefix.replace(/^\//, '');
  const html = viewerPage({
    kind,
    root: settings.rootPath,
    endpoints: {
      info: `${family}/info`,
      statistics: `${family}/statistics`,
      tilejson: `${family}/${WEB_MERCATOR_QUAD}/tilejson.json`,
      map: `${family}/${WEB_MERCATOR_QUAD}/map`,
      colorMaps: 'colorMaps',
      algorithms: 'algorithms',
    },
    grid: mapGrid(getTms(WEB_MERCATOR_QUAD)!),
    basemap: basemapOf(settings),
  });
  const summary = `${kind === 'cog' ? 'COG' : 'STAC'} viewer`;
  return (app) => {
    app.get('/viewer', { schema: { summary } }, async (_request, reply) => sendHtml(reply, html, csp));
  };
}
