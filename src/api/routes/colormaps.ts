/**
 * GET /colorMaps and /colorMaps/{colorMapId}: the named colormaps, as TiTiler 0.18.10's
 * ColorMapFactory lists and serves them: the JSON table, or with `format=` a legend image (a 256×20
 * ramp of the colormap's values, `orientation=vertical` 20×256, `width`/`height` resized nearest).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { badRequest } from '../../errors.js';
import { colormapNames, namedColormap } from '../../image/colormap.js';
import { IMAGE_FORMATS, type ImageFormat } from '../../image/formats.js';
import { postProcessAndRender } from '../../image/post-process.js';
import type { ImageData } from '../../image/image-data.js';
import { baseUrl } from '../urls.js';
import { sendJson } from '../reply.js';

interface ColorMapQuery {
  format?: string;
  orientation?: string;
  height?: number;
  width?: number;
}

/** Largest legend side: a legend is a few hundred pixels; nothing needs more. */
const MAX_LEGEND_SIDE = 4096;

/**
 * The legend's values (rio-tiler's linear colormap ramp: 0 … 255 along the long side), at the asked
 * size, resized nearest as rio-tiler's `ImageData.resize` does.
 */
function legendImage(q: ColorMapQuery): ImageData {
  const vertical = q.orientation === 'vertical';
  const width = q.width ?? (vertical ? 20 : 256);
  const height = q.height ?? (vertical ? 256 : 20);
  if (width < 1 || height < 1 || width > MAX_LEGEND_SIDE || height > MAX_LEGEND_SIDE) {
    throw badRequest(`Legend width and height must be between 1 and ${MAX_LEGEND_SIDE}, got ${width}x${height}`);
  }
  const along = vertical ? height : width;
  const ramp = Uint8Array.from({ length: along }, (_, i) => Math.min(255, Math.floor(((i + 0.5) * 256) / along)));
  const values = new Uint8Array(width * height);
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) values[row * width + col] = ramp[vertical ? row : col]!;
  }
  return {
    width,
    height,
    dtype: 'uint8',
    bands: [values],
    masks: [new Uint8Array(width * height).fill(255)],
    bandNames: ['b1'],
    bounds: [0, 0, width, height],
    crs: '',
  };
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
        const cmap = namedColormap(request.params.colorMapId);
        const format = request.query.format as ImageFormat | undefined;
        if (format !== undefined) {
          const rendered = await postProcessAndRender(legendImage(request.query), format, {
            algorithm: undefined,
            rescale: undefined,
            colorFormula: undefined,
            colormap: cmap,
            returnMask: true,
          });
          return reply.type(rendered.mediaType).send(rendered.body);
        }
        if (cmap.kind !== 'lut') throw new Error(`named colormap ${request.params.colorMapId} is not a lookup table`);
        // {"0": [r, g, b, a], …, "255": [...]}: integer-like keys keep ascending order in JS objects.
        const body: Record<string, number[]> = {};
        for (let i = 0; i < 256; i++) body[String(i)] = Array.from(cmap.table.subarray(i * 4, i * 4 + 4));
        return sendJson(reply, body);
      },
    );
  };
}
