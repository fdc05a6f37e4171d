/**
 * The rendering half of every image route, in TiTiler's order: algorithm → rescale →
 * color_formula → colormap + automatic format/dtype → encoder. Parameters are parsed (and
 * refused) before anything is read; `sendImage` runs the steps on the image the reader made.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { badRequest } from '../errors.js';
import type { ImageData } from '../image/image-data.js';
import { parseColorFormula } from '../image/color-formula.js';
import { isEmptyColormap, namedColormap, parseColormapJson, type ColorMap } from '../image/colormap.js';
import type { Renderer, RenderSpec } from '../image/post-process.js';
import type { ImageFormat } from '../image/formats.js';
import { parseAlgorithm, parseRescale, type Query } from './params.js';

/** PostProcessParams, RescalingParams, ColorFormulaParams, ColorMapParams, ImageRenderingParams. */
export function parseRenderOptions(q: Query): RenderSpec {
  const name = typeof q['algorithm'] === 'string' ? q['algorithm'] : undefined;
  const rawParams = typeof q['algorithm_params'] === 'string' ? q['algorithm_params'] : undefined;
  // TiTiler decodes algorithm_params even without an algorithm (and fails with a 500 on bad JSON):
  // bad JSON is refused whether or not it would be used; its shape only matters to an algorithm.
  if (!name && rawParams) assertJson(rawParams, 'algorithm_params');
  const algorithm = parseAlgorithm(name, rawParams);
  const formula = typeof q['color_formula'] === 'string' && q['color_formula'] !== '' ? parseColorFormula(q['color_formula']) : undefined;
  // colormap_name wins over colormap; an empty JSON colormap ({} or []) means none, as in TiTiler.
  let colormap: ColorMap | undefined;
  if (typeof q['colormap_name'] === 'string' && q['colormap_name'] !== '') colormap = namedColormap(q['colormap_name']);
  else if (typeof q['colormap'] === 'string' && q['colormap'] !== '') colormap = parseColormapJson(q['colormap']);
  if (colormap && isEmptyColormap(colormap)) colormap = undefined;
  return {
    // Validated here (a 400 before anything is read); the renderer prepares it again from plain data.
    algorithm: algorithm ? { id: algorithm.id, params: algorithm.params } : undefined,
    rescale: parseRescale(q),
    colorFormula: formula,
    colormap,
    returnMask: q['return_mask'] !== false,
  };
}

function assertJson(text: string, param: string): void {
  try {
    JSON.parse(text);
  } catch {
    throw badRequest(`Could not parse the ${param} value: not valid JSON.`);
  }
}

/** Post-processes and encodes `img` (in a render thread when the server has them), then sends it with TiTiler's media type. */
export async function sendImage(reply: FastifyReply, renderer: Renderer, img: ImageData, format: ImageFormat | undefined, spec: RenderSpec): Promise<FastifyReply> {
  const rendered = await renderer.render(img, format, spec);
  return sendBody(reply.type(rendered.mediaType), rendered.body);
}

/** Bodies past this go out as a stream of CHUNK-byte pieces. */
const STREAM_ABOVE = 8 * 1024 * 1024;
const CHUNK = 1024 * 1024;

/**
 * Sends `body`; a large one (a 256 MB npy or GeoTIFF) as a stream of 1 MiB pieces with its length
 * declared, so that gzip (which @fastify/compress applies to npy and tif, as TiTiler does) takes it
 * piece by piece: given the whole buffer at once, compression held the event loop for ~0.5 s.
 */
function sendBody(reply: FastifyReply, body: Buffer): FastifyReply {
  if (body.length <= STREAM_ABOVE) return reply.send(body);
  const pieces = function* (): Generator<Buffer> {
    for (let at = 0; at < body.length; at += CHUNK) yield body.subarray(at, Math.min(body.length, at + CHUNK));
  };
  return reply.header('content-length', body.length).send(Readable.from(pieces(), { objectMode: false }));
}
