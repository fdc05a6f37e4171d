/** GET /tileMatrixSets and /tileMatrixSets/{tileMatrixSetId} (TMS 1.0 documents). */
import type { FastifyInstance } from 'fastify';
import { getTms, tmsIds } from '../../tms/registry.js';
import { tmsDocumentV1 } from '../../tms/document.js';
import { tmsPathSchema } from '../params/index.js';
import { baseUrl } from '../urls.js';
import { sendJson } from '../reply.js';

export async function tmsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/tileMatrixSets', async (request, reply) => {
    const base = baseUrl(request);
    return sendJson(reply, {
      tileMatrixSets: tmsIds.map((id) => ({
        id,
        title: getTms(id)!.title,
        links: [{ href: `${base}/tileMatrixSets/${id}`, rel: 'item', type: 'application/json' }],
      })),
    });
  });

  app.get<{ Params: { tileMatrixSetId: string } }>(
    '/tileMatrixSets/:tileMatrixSetId',
    { schema: { params: { type: 'object', properties: tmsPathSchema, required: ['tileMatrixSetId'] } } },
    async (request, reply) => sendJson(reply, tmsDocumentV1(getTms(request.params.tileMatrixSetId)!)),
  );
}
