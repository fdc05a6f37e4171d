/**
 * `/conformance`, the OGC API conformance declaration TiTiler 2.x answers (titiler/application/
 * main.py 2.4.0): JSON, or HTML when `f=html` or the Accept header prefers it. TiTiler 0.18 has no
 * such route, so it is answered whatever TESSERA_TITILER_API says; what it declares follows what is
 * mounted (api/ogc-common.ts). The landing page, which the two generations answer differently, is
 * in api/routes/pages.ts.
 */
import type { FastifyInstance } from 'fastify';
import { documentFormat, routeQuery, type QueryRoute } from '../params/index.js';
import { conformsTo, type OgcServer } from '../ogc-common.js';
import { documentOutput } from '../negotiate.js';
import { sendJson } from '../reply.js';
import { contentSecurityPolicy, sendHtml } from '../pages/respond.js';
import { documentPage } from '../pages/html.js';

export function ogcRoutes(server: OgcServer) {
  const query = routeQuery({ f: documentFormat });
  const doc = { conformsTo: conformsTo(server) };
  const csp = contentSecurityPolicy(server.settings.basemapUrl);
  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get<QueryRoute>(
      '/conformance',
      { schema: { summary: 'The OGC API conformance classes the server declares', querystring: query.schema } },
      async (request, reply) => {
        const p = query.parse(request.query);
        if (documentOutput(request, p.f) === 'html')
          return sendHtml(reply, documentPage({ root: server.settings.rootPath, title: 'Conformance', links: [], json: doc }), csp);
        return sendJson(reply, doc);
      },
    );
  };
}
