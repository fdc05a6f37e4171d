/**
 * The rendering half of every image route, in TiTiler's order: algorithm → rescale →
 * color_formula → colormap + automatic format/dtype → encoder. The parameters were parsed (and
 * refused) before anything was read (api/params/rendering.ts); `sendImage` runs the steps on the
 * image the reader made.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { ImageData } from '../image/image-data.js';
import type { Renderer, RenderSpec } from '../image/post-process.js';
import type { ImageFormat } from '../image/formats.js';
import type { ReaderImage } from '../readers/reader.js';

/** The render step's spec: the algorithm, the rendering, and the expression the reader left to it. */
export function renderSpec(algorithm: RenderSpec['algorithm'], render: Omit<RenderSpec, 'algorithm' | 'expression'>, result: ReaderImage): RenderSpec {
  // The dataset's own colormap when the request names none (TiTiler: `colormap or dst_colormap`).
  const colormap = render.colormap ?? result.colormap;
  return { ...render, colormap, algorithm, ...(result.expression ? { expression: result.expression } : {}) };
}

/** Post-processes and encodes `img` (in a render thread when the server has them), then sends it with TiTiler's media type. */
export async function sendImage(
  reply: FastifyReply,
  renderer: Renderer,
  img: ImageData,
  format: ImageFormat | undefined,
  spec: RenderSpec,
): Promise<FastifyReply> {
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
