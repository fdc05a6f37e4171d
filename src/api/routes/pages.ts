/**
 * tessera's HTML pages and the files they load: `/` (landing page) and `/static/...` (tessera's page
 * scripts, Leaflet, proj4, proj4leaflet from node_modules). `/` is also TiTiler 2.x's OGC landing
 * document (JSON unless Accept prefers HTML, titiler/application/main.py 2.4.0); which of the two a
 * request without `f` gets is the collision `landing` (api/generations.ts); `f=json` or `f=html`,
 * sent only by 2.x clients, is answered as asked under both settings. The map pages of every reader family
 * (`/{family}/{tms}/map`, `/{family}/map`) and the viewers a family has (`/cog/viewer`,
 * `/stac/viewer`) are mounted by the route factory with the family's tiles (api/factory.ts,
 * api/pages/respond.ts). Pages never load anything from another host unless a basemap is
 * configured, and say so to the browser with a Content-Security-Policy.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { Services } from '../../services.js';
import { baseUrl } from '../urls.js';
import type { QueryRoute } from '../params/index.js';
import { landingOptions, withAccessToken } from '../pages/landing.js';
import { SERVED_EXTENSIONS, staticMounts } from '../pages/assets.js';
import { landingPage } from '../pages/html.js';
import { contentSecurityPolicy, sendHtml } from '../pages/respond.js';
import { documentFormat, routeQuery } from '../params/index.js';
import { documentOutput } from '../negotiate.js';
import { choose } from '../generations.js';
import { landingDocument } from '../ogc-common.js';
import { sendJson } from '../reply.js';

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

    // 0.18 takes no query here (an `f` it does not know is ignored); 2.x validates `f` (422).
    const landingQuery = routeQuery({ f: documentFormat });
    const landing = choose(settings, 'landing', {
      '0.18': { schema: {}, output: (_request: FastifyRequest, f: 'html' | 'json' | undefined) => f ?? 'html' },
      '2': { schema: { querystring: landingQuery.schema }, output: documentOutput },
    });
    app.get<QueryRoute>(
      '/',
      { schema: { summary: 'The landing page: HTML, or the OGC API landing document (JSON)', ...landing.schema } },
      async (request, reply) => {
        const f = request.query['f'];
        if (landing.output(request, f === 'json' || f === 'html' ? f : undefined) === 'json') return sendJson(reply, landingDocument(baseUrl(request)));
        const options = await landingOptions(baseUrl(request), settings.demoDir, settings.rootPath, settings.catalog);
        // Behind TiTiler's global access token, the page's links carry the token it was opened with.
        const token = request.query['access_token'];
        const html = landingPage(typeof token === 'string' && token !== '' ? withAccessToken(options, token) : options);
        return sendHtml(reply, html, csp);
      },
    );
  };
}
