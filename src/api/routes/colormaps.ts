/**
 * GET /colorMaps and /colorMaps/{colorMapId}: the named colormaps, as TiTiler 0.18.10's
 * ColorMapFactory lists and serves them (JSON only: the `format=` legend images are not made yet).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { badRequest } from '../../errors.js';
import { colormapNames, namedColormap } from '../../image/colormap.js';
import { IMAGE_FORMATS } from '../params.js';
import { baseUrl } from '../urls.js';
import { sendJson } from '../reply.js';

interface ColorMapQuery {
  format?: string;
  orientation?: string;
  height?: number;
  width?: number;
}

export function colormapRoutes(): FastifyPluginAsync {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/colorMaps', async (request, reply) => {
      const base = baseUrl(request);
      // TiTiler lists the names in its directory-listing order, which varies between installs;
      // ours are sorted.
      return sendJson(reply, {
        colorMaps: colormapNames(),
        links: [
          { href: `${base}/colorMaps`, rel: 'self', type: 'application/json', title: 'List of available colormaps' },
          {
            href: `${base}/colorMaps/{colorMapId}`,
            rel: 'data',
            type: 'application/json',
            templated: true,
            title: 'Retrieve colorMap metadata',
          },
          {
            href: `${base}/colorMaps/{colorMapId}?format=png`,
            rel: 'data',
            type: 'image/png',
            templated: true,
            title: 'Retrieve colorMap as image',
          },
        ],
      });
    });

    app.get<{ Params: { colorMapId: string }; Querystring: ColorMapQuery }>(
      '/colorMaps/:colorMapId',
      {
        schema: {
          // The id is an exact (case-sensitive) choice in TiTiler: unknown ids are a 422.
          params: {
            type: 'object',
            properties: { colorMapId: { type: 'string', enum: [...colormapNames()] } },
            required: ['colorMapId'],
          },
          querystring: {
            type: 'object',
            properties: {
              format: { type: 'string', enum: [...IMAGE_FORMATS] },
              orientation: { type: 'string', enum: ['vertical', 'horizontal'] },
              height: { type: 'integer' },
              width: { type: 'integer' },
            },
          },
        },
      },
      async (request, reply) => {
        if (request.query.format !== undefined) {
          throw badRequest(`Colormap images (format=${request.query.format}) are not available; omit format for the JSON table`);
        }
        const cmap = namedColormap(request.params.colorMapId);
        if (cmap.kind !== 'lut') throw new Error(`named colormap ${request.params.colorMapId} is not a lookup table`);
        // {"0": [r, g, b, a], …, "255": [...]}: integer-like keys keep ascending order in JS objects.
        const body: Record<string, number[]> = {};
        for (let i = 0; i < 256; i++) body[String(i)] = Array.from(cmap.table.subarray(i * 4, i * 4 + 4));
        return sendJson(reply, body);
      },
    );
  };
}
