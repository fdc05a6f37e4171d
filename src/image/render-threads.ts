/**
 * Post-processing and encoding on worker threads, so one process uses every core while keeping one
 * GDAL block cache, one curl cache and one set of dataset handles for all of them.
 *
 * Why: a tile costs ~8 ms of JavaScript on a single event loop, about half of it after the read
 * (rescale, colormap, PNG row filters, zlib calls); with the whole pipeline on one loop, one process
 * made 105-128 tiles/s on two cores (benchmark stac-rgb mix, c=16), with render threads 174. Several
 * server processes (cluster.ts) reach ~190 but multiply GDAL's caches and everything else: over the
 * four tile mixes two processes peaked at 1015 MiB, one with render threads at 612 MiB. Readers stay
 * on the main thread (gdal-async loads in one thread per process); images go to the least busy
 * render thread as plain data and come back encoded.
 *
 * GeoTIFF and JPEG 2000 (GDAL's encoders) are rendered on the main thread; the rare image a render
 * thread finds it needs GDAL for (a 4-band JPEG is CMYK) comes back post-processed, to be encoded here.
 */
import { Worker } from 'node:worker_threads';
import { TesseraError, type ErrorKind } from '../errors.js';
import type { BandArray, ImageData } from './image-data.js';
import type { ImageFormat } from './formats.js';
import type { RenderedImage } from './render.js';
import type { BandStatistics } from './statistics.js';
import { postProcessAndRender, summariseImage, type Renderer, type RenderSpec, type StatisticsSpec } from './post-process.js';
import { encode, type EncoderSettings, type GeoReference, type RasterData } from './encode/index.js';
import { MEDIA_TYPES } from './formats.js';

/** main → render thread: an image to render, or to summarise. */
export type RenderRequest =
  | { id: number; kind: 'render'; img: ImageData; format: ImageFormat | undefined; spec: RenderSpec }
  | { id: number; kind: 'statistics'; img: ImageData; spec: StatisticsSpec };

/** render thread → main */
export type RenderReply =
  | { id: number; ok: true; body: Uint8Array; format: ImageFormat; mediaType: string }
  | { id: number; ok: true; statistics: Map<string, BandStatistics> }
  | { id: number; ok: false; encodeOnMain: { data: RasterData; mask: Uint8Array | undefined; format: ImageFormat; geo: GeoReference | undefined } }
  | { id: number; ok: false; error: { name: string; kind?: ErrorKind; message: string } };

interface Job {
  resolve(out: RenderedImage | Map<string, BandStatistics>): void;
  reject(err: unknown): void;
}

interface Thread {
  worker: Worker;
  jobs: Map<number, Job>;
}

const GDAL_FORMATS: ReadonlySet<ImageFormat> = new Set(['tif', 'jp2']);
/** Longest a close waits for the jobs in flight. */
const CLOSE_WAIT_MS = 5_000;
/** main → render thread: close your port and end when idle. */
export const CLOSE_MESSAGE = 'close';

export class RenderThreads implements Renderer {
  private readonly threads: Thread[] = [];
  private nextId = 1;
  private closing = false;

  constructor(
    count: number,
    private readonly encoders: EncoderSettings,
  ) {
    if (!Number.isInteger(count) || count < 1) throw new TesseraError('Internal', `render threads: expected a positive count, got ${count}`);
    for (let i = 0; i < count; i++) this.threads.push(this.spawn());
  }

  get size(): number {
    return this.threads.length;
  }

  render(img: ImageData, format: ImageFormat | undefined, spec: RenderSpec): Promise<RenderedImage> {
    if ((format && GDAL_FORMATS.has(format)) || this.closing) return postProcessAndRender(img, format, spec);
    return this.send((id, moved) => ({ id, kind: 'render', img: moved, format, spec }), img) as Promise<RenderedImage>;
  }

  /** Statistics are the heaviest pass over a whole image (sorting for percentiles): seconds at 64 M values. */
  statistics(img: ImageData, spec: StatisticsSpec): Promise<Map<string, BandStatistics>> {
    if (this.closing) return Promise.resolve(summariseImage(img, spec));
    return this.send((id, moved) => ({ id, kind: 'statistics', img: moved, spec }), img) as Promise<Map<string, BandStatistics>>;
  }

  /** Sends a job about `img` to the least busy thread. */
  private send(message: (id: number, img: ImageData) => RenderRequest, img: ImageData): Promise<RenderedImage | Map<string, BandStatistics>> {
    let thread = this.threads[0]!;
    for (const t of this.threads) if (t.jobs.size < thread.jobs.size) thread = t;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.jobs.set(id, { resolve, reject });
      // The image's buffers move to the thread (no copy); the caller is done with them.
      const { img: moved, buffers } = transferable(img);
      try {
        thread.worker.postMessage(message(id, moved), buffers);
      } catch (err) {
        thread.jobs.delete(id);
        reject(err);
      }
    });
  }

  /**
   * Stops the threads: once the jobs they hold have answered, each is asked to close its port and
   * ends when its own event loop is empty; only one that has not ended after CLOSE_WAIT_MS is
   * terminated. Node 20 aborts the whole process ("close before init" in node_zlib.cc) when a worker
   * is terminated while one of its zlib streams is still being set up on the pool, which a PNG
   * deflate can be even after its job answered.
   */
  async close(): Promise<void> {
    this.closing = true;
    const deadline = Date.now() + CLOSE_WAIT_MS;
    while (this.threads.some((t) => t.jobs.size > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await Promise.all(
      this.threads.map(async (t) => {
        // Held (the threads are unref'd while they serve) so that the process waits for the end.
        t.worker.ref();
        const ended = new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()) + 1000);
          t.worker.once('exit', () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        t.worker.postMessage(CLOSE_MESSAGE);
        if (!(await ended)) await t.worker.terminate();
      }),
    );
  }

  private spawn(): Thread {
    const worker = new Worker(new URL('./render-worker.js', import.meta.url), { workerData: { encoders: this.encoders } });
    // Idle render threads must not keep a process alive (tests, the CLI's one-shot commands).
    worker.unref();
    const thread: Thread = { worker, jobs: new Map() };
    worker.on('message', (reply: RenderReply) => this.settle(thread, reply));
    const fail = (why: string): void => {
      const index = this.threads.indexOf(thread);
      if (index < 0) return;
      const err = new TesseraError('Internal', `a render thread stopped (${why})`);
      for (const job of thread.jobs.values()) job.reject(err);
      thread.jobs.clear();
      if (this.closing) return;
      this.threads[index] = this.spawn();
    };
    worker.on('error', (err) => fail(err.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    return thread;
  }

  private settle(thread: Thread, reply: RenderReply): void {
    const job = thread.jobs.get(reply.id);
    if (!job) return;
    thread.jobs.delete(reply.id);
    if (reply.ok && 'statistics' in reply) {
      job.resolve(reply.statistics);
    } else if (reply.ok) {
      const body = Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength);
      job.resolve({ body, format: reply.format, mediaType: reply.mediaType });
    } else if ('encodeOnMain' in reply) {
      const { data, mask, format, geo } = reply.encodeOnMain;
      encode(data, mask, format, geo).then((body) => job.resolve({ body, format, mediaType: MEDIA_TYPES[format] }), job.reject);
    } else {
      const e = reply.error;
      job.reject(e.kind ? new TesseraError(e.kind, e.message) : Object.assign(new Error(e.message), { name: e.name }));
    }
  }
}

/**
 * `img` ready to move to another thread, and the buffers to transfer: each array must own its whole
 * ArrayBuffer (a band that is a view into a larger buffer is cut to its own bytes first), and arrays
 * that are the same object stay the same object (bands sharing one mask), as the renderer relies on.
 * The transferred buffers are detached here afterwards: readers make fresh arrays for every request
 * and nothing keeps them once the image is rendered.
 */
function transferable(img: ImageData): { img: ImageData; buffers: ArrayBuffer[] } {
  const seen = new Map<BandArray, BandArray>();
  const buffers = new Set<ArrayBuffer>();
  const own = <T extends BandArray>(a: T): T => {
    let out = seen.get(a);
    if (!out) {
      out = a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && !buffers.has(a.buffer as ArrayBuffer) ? a : a.slice();
      buffers.add(out.buffer as ArrayBuffer);
      seen.set(a, out);
    }
    return out as T;
  };
  const moved: ImageData = {
    ...img,
    bands: img.bands.map(own),
    masks: img.masks.map(own),
  };
  return { img: moved, buffers: [...buffers] };
}
