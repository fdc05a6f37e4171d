/**
 * tessera's HTML pages and the files they load: `/` (landing page) and `/static/...` (tessera's page
 * scripts, Leaflet, proj4, proj4leaflet from node_modules). The map pages of every reader family
 * (`/{family}/{tms}/map`, `/{family}/map`) and the viewers a family has (`/cog/viewer`,
 * `/stac/viewer`) are mounted by the route factory with the family's tiles (api/factory.ts,
 * api/pages/respond.ts). Pages never load anything from another host unless a basemap is
 * configured, and say so to the browser with a Content-Security-Policy.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { Services } from '../../services.js';
import { baseUrl } from '../urls.js';
import type { QueryRoute } from '../params/index.js';
import { landingOptions, withAccessToken } from '../pages/landing.js';
import { SERVED_EXTENSIONS, staticMounts } from '../pages/assets.js';
import { landingPage } from '../pages/html.js';
import { contentSecurityPolicy, sendHtml } from '../pages/respond.js';

export function pageRoutes(services: Services) {
  const settings = services.settings;
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

    app.get<QueryRoute>('/', { schema: { hide: true } }, async (request, reply) => {
      const options = await landingOptions(baseUrl(request), settings.demoDir, settings.rootPath);
      // Behind TiTiler's global access token, the page's links carry the token it was opened with.
      const token = request.query['access_token'];
      const html = landingPage(typeof token === 'string' && token !== '' ? withAccessToken(options, token) : options);
      return sendHtml(reply, html, csp);
    });
  };
}
