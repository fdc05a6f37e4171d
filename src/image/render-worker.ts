/**
 * A render thread (see render-threads.ts): post-processes and encodes (or summarises) the images the
 * main thread sends, with the same code the main thread would run. Never loads GDAL: an image that needs one
 * of GDAL's encoders goes back to the main thread as encoder input, after post-processing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { TesseraError } from '../errors.js';
import { configureEncoders, encode, type EncoderSettings, type GeoReference, type RasterData } from './encode/index.js';
import { NeedsMainThread } from './encode/gdal-lazy.js';
import type { ImageFormat } from './formats.js';
import { postProcessAndRender, summariseImage } from './post-process.js';
import { CLOSE_MESSAGE, type RenderReply, type RenderRequest } from './render-threads.js';

const port = parentPort;
if (!port) throw new Error('render-worker.js runs as a worker thread only');
configureEncoders((workerData as { encoders: EncoderSettings }).encoders);

/** Carries the encoder's input out of the pipeline when the encoder is GDAL's. */
class EncodeOnMain {
  constructor(readonly input: { data: RasterData; mask: Uint8Array | undefined; format: ImageFormat; geo: GeoReference | undefined }) {}
}

const encodeHere: typeof encode = async (data, mask, format, geo) => {
  try {
    return await encode(data, mask, format, geo);
  } catch (err) {
    if (err instanceof NeedsMainThread) throw new EncodeOnMain({ data, mask, format, geo });
    throw err;
  }
};

function fail(id: number, err: unknown): void {
  let reply: RenderReply;
  if (err instanceof EncodeOnMain) reply = { id, ok: false, encodeOnMain: err.input };
  else if (err instanceof TesseraError) reply = { id, ok: false, error: { name: err.name, kind: err.kind, message: err.message } };
  else reply = { id, ok: false, error: { name: err instanceof Error ? err.name : 'Error', message: err instanceof Error ? err.message : String(err) } };
  port!.postMessage(reply);
}

port.on('message', (job: RenderRequest | typeof CLOSE_MESSAGE) => {
  // The thread ends by itself once its event loop is empty (pending deflates finish first).
  if (job === CLOSE_MESSAGE) {
    port.close();
    return;
  }
  if (job.kind === 'statistics') {
    try {
      const reply: RenderReply = { id: job.id, ok: true, statistics: summariseImage(job.img, job.spec) };
      port.postMessage(reply);
    } catch (err) {
      fail(job.id, err);
    }
    return;
  }
  postProcessAndRender(job.img, job.format, job.spec, encodeHere).then(
    (out) => {
      // A copy that owns its buffer, handed over without another copy (the encoder's Buffer may be
      // a slice of a larger pooled one, which a structured clone would copy whole).
      const body = new Uint8Array(out.body);
      const reply: RenderReply = { id: job.id, ok: true, body, format: out.format, mediaType: out.mediaType };
      port.postMessage(reply, [body.buffer]);
    },
    (err: unknown) => fail(job.id, err),
  );
});
