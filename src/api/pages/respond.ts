/**
 * How tessera answers with a page: HTML with a Content-Security-Policy that lets it load from itself
 * and, for map tiles only, from the configured basemap's host; and the map page of any reader
 * family's TileJSON (the route factory mounts it beside the family's tiles).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../config.js';
import type { TileMatrixSet } from '../../tms/grid.js';
import { baseUrl, queryPairs, urlencode } from '../urls.js';
import { mapGrid } from './map-grid.js';
import { mapPage, type Basemap } from './html.js';

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

export function basemapOf(settings: Settings): Basemap | null {
  return settings.basemapUrl ? { url: settings.basemapUrl, attribution: settings.basemapAttribution } : null;
}

export function sendHtml(reply: FastifyReply, html: string, csp: string): FastifyReply {
  return reply.type(HTML).header('content-security-policy', csp).send(html);
}

/** The map page of a family's TileJSON (`prefix`: '/cog', '/stac' …) in `tms`, with the page's whole query forwarded. */
export function mapPageResponder(
  settings: Settings,
): (request: FastifyRequest, reply: FastifyReply, prefix: string, tms: TileMatrixSet, url: string) => FastifyReply {
  const csp = contentSecurityPolicy(settings.basemapUrl);
  const basemap = basemapOf(settings);
  return (request, reply, prefix, tms, url) => {
    // TiTiler forwards the page's whole query to the TileJSON, re-encoded with urlencode.
    const pairs = queryPairs(request);
    const tilejsonUrl = `${baseUrl(request)}${prefix}/${tms.id}/tilejson.json${pairs.length > 0 ? `?${urlencode(pairs)}` : ''}`;
    return sendHtml(reply, mapPage({ root: settings.rootPath, title: `tessera map · ${url}`, tilejsonUrl, grid: mapGrid(tms), basemap }), csp);
  };
}
