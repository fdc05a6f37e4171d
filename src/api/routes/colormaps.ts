/**
 * GET /colorMaps and /colorMaps/{colorMapId}: the named colormaps, as TiTiler 0.18.10's
 * ColorMapFactory lists and serves them: the JSON table, or with `format=` a legend image (a 256×20
 * ramp of the colormap's values, `orientation=vertical` 20×256, `width`/`height` resized nearest).
 * TiTiler 2.4.0's (titiler/core/factory.py, ColorMapFactory) beside it: the list's shape is the
 * collision `colorMaps` (src/api/generations.ts); `f=` (html, json or an image format) is 2.x's
 * alone and answered always; the Accept header chooses HTML only under TESSERA_TITILER_API=2.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { badRequest } from '../../errors.js';
import { ValidationError, expectedList } from '../errors.js';
import type { Settings } from '../../config.js';
import { choose } from '../generations.js';
import { acceptedMediaType } from '../negotiate.js';
import { sendHtml } from '../pages/respond.js';
import { colormapNames, namedColormap } from '../../image/colormap.js';
import { IMAGE_FORMATS, type ImageFormat } from '../../image/formats.js';
import { postProcessAndRender } from '../../image/post-process.js';
import type { ImageData } from '../../image/image-data.js';
import { baseUrl } from '../urls.js';
import { sendJson } from '../reply.js';
import { escapeHtml, plainPage } from '../pages/html.js';

interface ColorMapQuery {
  format?: string;
  f?: string;
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

/** The forms `f=` takes on `/colorMaps/{colorMapId}` (2.x's MediaType names; `tiff` is a `tif`). */
const F_FORMS = ['html', 'json', 'png', 'npy', 'tif', 'tiff', 'jpeg', 'jpg', 'jp2', 'webp', 'pngraw'] as const;
type FForm = (typeof F_FORMS)[number];

/** `f` when given (422 outside `forms`), else under 2 the Accept header over html and json, else json. */
function outputOf<T extends string>(request: FastifyRequest, f: string | undefined, forms: readonly T[], settings: Settings): T | 'json' | 'html' {
  if (f !== undefined) {
    if ((forms as readonly string[]).includes(f)) return f as T;
    const expected = expectedList(forms);
    throw new ValidationError([{ type: 'literal_error', loc: ['query', 'f'], msg: `Input should be ${expected}`, input: f, ctx: { expected } }]);
  }
  const byAccept = choose(settings, 'colorMaps', {
    '0.18': undefined,
    '2': acceptedMediaType(String(request.headers.accept ?? ''), ['text/html', 'application/json'] as const),
  });
  return byAccept === 'text/html' ? 'html' : 'json';
}

/** Markup and the embedded legend image; nothing else. */
const PAGE_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/** 2.4.0's list: `{colormaps: [{id, links: [{href, rel: item, type, title}]}]}`. */
function colormapList2(base: string): Record<string, unknown> {
  return {
    colormaps: colormapNames().map((id) => ({
      id,
      links: [{ href: `${base}/colorMaps/${id}`, rel: 'item', type: 'application/json', title: `Definition of ${id} ColorMap` }],
    })),
  };
}

/** 0.18.10's list: the names and three links. */
function colormapList018(base: string): Record<string, unknown> {
  return {
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
  };
}

export function colormapRoutes(settings: Settings): FastifyPluginAsync {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<{ Querystring: { f?: string } }>(
      '/colorMaps',
      { schema: { querystring: { type: 'object', properties: { f: { type: 'string', description: 'Response MediaType (TiTiler 2.x): html or json.' } } } } },
      async (request, reply) => {
        const base = baseUrl(request);
        if (outputOf(request, request.query.f, ['html', 'json'] as const, settings) === 'html') {
          const items = colormapNames()
            .map((id) => `<li><a href="${escapeHtml(`${base}/colorMaps/${id}`)}">${escapeHtml(id)}</a></li>`)
            .join('\n');
          return sendHtml(reply, plainPage('ColorMaps', `<h1>ColorMaps</h1>\n<ul>\n${items}\n</ul>`), PAGE_CSP);
        }
        // TiTiler lists the names in its directory-listing order, which varies between installs;
        // ours are sorted.
        return sendJson(reply, choose(settings, 'colorMaps', { '0.18': colormapList018(base), '2': colormapList2(base) }));
      },
    );

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
              f: { type: 'string', description: 'Response MediaType (TiTiler 2.x): html, json or an image format.' },
              orientation: { type: 'string', enum: ['vertical', 'horizontal'] },
              height: { type: 'integer' },
              width: { type: 'integer' },
            },
          },
        },
      },
      async (request, reply) => {
        const id = request.params.colorMapId;
        const cmap = namedColormap(id);
        const output: FForm = outputOf(request, request.query.f, F_FORMS, settings);
        // `f` (2.x) wins over `format` (0.18); 2.x renders `f=html` as a page with the vertical legend.
        const image: ImageFormat | undefined =
          request.query.f !== undefined
            ? output === 'html' || output === 'json'
              ? undefined
              : output === 'tiff'
                ? 'tif'
                : output
            : (request.query.format as ImageFormat | undefined);
        if (output === 'html') {
          const legend = await postProcessAndRender(legendImage({ orientation: 'vertical' }), 'png', {
            algorithm: undefined,
            rescale: undefined,
            colorFormula: undefined,
            colormap: cmap,
            returnMask: true,
          });
          const src = `data:image/png;base64,${Buffer.from(legend.body).toString('base64')}`;
          return sendHtml(reply, plainPage(id, `<h1>${escapeHtml(id)}</h1>\n<img height=600 src="${src}" alt="${escapeHtml(id)}">`), PAGE_CSP);
        }
        if (image !== undefined) {
          const rendered = await postProcessAndRender(legendImage(request.query), image, {
            algorithm: undefined,
            rescale: undefined,
            colorFormula: undefined,
            colormap: cmap,
            returnMask: true,
          });
          return reply.type(rendered.mediaType).send(rendered.body);
        }
        if (cmap.kind !== 'lut') throw new Error(`named colormap ${id} is not a lookup table`);
        // {"0": [r, g, b, a], …, "255": [...]}: integer-like keys keep ascending order in JS objects.
        const body: Record<string, number[]> = {};
        for (let i = 0; i < 256; i++) body[String(i)] = Array.from(cmap.table.subarray(i * 4, i * 4 + 4));
        return sendJson(reply, body);
      },
    );
  };
}
