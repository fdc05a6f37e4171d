/**
 * The upstream gateway: GDAL reads remote rasters through a loopback HTTP server of tessera's own
 * (gateway-worker.ts, in its own thread) rather than reaching upstream itself.
 *
 * - **One round trip to open a file, not two.** GDAL 3.6's /vsicurl/ always sends a HEAD for the
 *   file size before its first ranged read, and no setting avoids it for plain URLs. The gateway
 *   answers that HEAD with one ranged GET of the file's first bytes (size from Content-Range) and
 *   serves GDAL's first read from those bytes.
 * - **Every connection passes the policies.** curl follows redirects wherever they point and
 *   connects to whatever a name resolves to; the gateway's client (client.ts) follows redirects
 *   itself under the URL policy and connects only to addresses the network policy allows.
 *
 * GDAL names a file as `/vsicurl/http://127.0.0.1:<port>/<token>/<lane>/<scheme>/<host><path>?<query>`:
 * the original path stays last, so GDAL's extension checks see the same file name. The lane names
 * the dataset handle that reads, so that the bytes it fetches are charged to the request holding
 * it (budget.ts); `gdalPath` gives lane 0 (unmetered), `onLane` another. The token, a
 * per-process secret, keeps other local processes from using the port as a proxy; `redactGateway`
 * takes it out of any text shown to a client.
 *
 * Where GDAL must reach upstream through an HTTP proxy (curl's http_proxy), turn the gateway off
 * (TESSERA_UPSTREAM_GATEWAY=off): its own requests do not use one.
 */
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { UrlPolicyOptions } from './url-policy.js';
import type { GatewayWorkerData } from './gateway-worker.js';
import { UNMETERED_LANE, type BudgetMemory } from './budget.js';
import type { HostStats } from './client.js';
import { TesseraError, type ErrorKind } from '../errors.js';
import type { Credentials, ObjectScheme, ObjectStoreOptions } from './object-stores.js';

export interface GatewayOptions {
  policy: UrlPolicyOptions;
  connectTimeoutMs: number;
  timeoutMs: number;
  /** Bytes read from the start of a file on open: at least what GDAL's first read asks for. */
  probeBytes: number;
  /** Per-request upstream byte budgets, charged by lane. */
  budgets: BudgetMemory;
  /** /vsicurl/'s download chunk (CPL_VSIL_CURL_CHUNK_SIZE; GDAL's default 16 KiB without it): blocks are fetched ahead in whole chunks. */
  chunkBytes?: number;
  /** How object URLs are reached (none: they fail); the gateway's thread holds the credentials (see `credentials`). */
  stores?: ObjectStoreOptions;
}

/** An image of a TIFF by its size and tiling (a block's column and row are counted in it). */
export interface PrefetchImage {
  width: number;
  height: number;
  blockWidth: number;
  blockHeight: number;
}

const START_TIMEOUT_MS = 10_000;

/**
 * The status the gateway answers when tessera's own policy refuses an upstream (an address of a
 * refused network, a redirect to a refused place). No upstream means it for us (an upstream answer
 * with it is passed on as 502), so `gdalOpenError` can tell a refusal from an upstream fault in
 * GDAL's message.
 */
export const GATEWAY_REFUSED_STATUS = 470;
/** The status the gateway answers when the reading request has spent its upstream byte budget. */
export const GATEWAY_BUDGET_STATUS = 471;

export class UpstreamGateway {
  private readonly token = randomBytes(16).toString('hex');
  /** [0]: upstream faults the gateway has seen (5xx, cut bodies, timeouts, failed connections). */
  private readonly faultCounter = new Int32Array(new SharedArrayBuffer(4));
  private worker: Worker;
  private port = 0;
  private closing = false;
  private asked = 0;
  /** Questions asked of the thread and not yet answered, by id (one listener answers them all). */
  private readonly questions = new Map<number, (answer: unknown) => void>();

  constructor(private readonly opts: GatewayOptions) {
    keepCurlOffProxies();
    this.worker = this.spawn();
  }

  /** The GDAL path that reads `url` (an http(s) URL the policy allowed) through the gateway, on lane 0. */
  gdalPath(url: string): string {
    const u = new URL(url);
    return `/vsicurl/http://127.0.0.1:${this.port}/${this.token}/${UNMETERED_LANE}/${u.protocol.slice(0, -1)}/${u.host}${u.pathname}${u.search}`;
  }

  /** `path` (from `gdalPath`) read on `lane`; any other path as it is. */
  onLane(path: string, lane: number): string {
    const prefix = `/vsicurl/http://127.0.0.1:${this.port}/${this.token}/${UNMETERED_LANE}/`;
    return path.startsWith(prefix) ? `/vsicurl/http://127.0.0.1:${this.port}/${this.token}/${lane}/${path.slice(prefix.length)}` : path;
  }

  /**
   * How many upstream faults the gateway has seen so far. A GDAL call that fails while this number
   * stays the same failed on bytes upstream served whole: the file is damaged, not the server.
   */
  faults(): number {
    return Atomics.load(this.faultCounter, 0);
  }

  /**
   * The upstream counts of GDAL's reads, per host, asked of the gateway's thread (for /metrics);
   * empty if it does not answer within a second. Counts restart with a replacement thread.
   */
  async hostStats(): Promise<Array<[string, HostStats]>> {
    return ((await this.ask({ type: 'host-stats' })) as Array<[string, HostStats]> | undefined) ?? [];
  }

  /**
   * The validators (ETag, Last-Modified, size) upstream sent with the last probe of the file a GDAL
   * path from `gdalPath` names, as one string; undefined when it sent none or the gateway has
   * forgotten the file (answers are then tagged by their content, api/etag.ts).
   */
  async version(path: string): Promise<string | undefined> {
    const prefix = `/vsicurl/http://127.0.0.1:${this.port}`;
    if (!path.startsWith(prefix)) return undefined;
    const answer = await this.ask({ type: 'version', path: path.slice(prefix.length) });
    return typeof answer === 'string' ? answer : undefined;
  }

  /**
   * Starts fetching blocks (column, row) of the image of `image`'s size and tiling in the file a GDAL path from
   * `gdalPath` names, charged to the request in `slot` (-1: none), for reads about to ask for them:
   * GDAL's requests for those bytes are then answered from them. Only files whose block tables the
   * probe that opened them holds (COGs); otherwise nothing happens.
   */
  prefetch(path: string, image: PrefetchImage, blocks: Array<[number, number]>, slot: number): void {
    const prefix = `/vsicurl/http://127.0.0.1:${this.port}`;
    if (!path.startsWith(prefix) || blocks.length === 0) return;
    this.worker.postMessage({ type: 'prefetch', path: path.slice(prefix.length), image, blocks, slot });
  }

  /**
   * The credentials of an object store, as the gateway's thread holds them: one credential chain
   * per process, fetched once per expiry, whether GDAL's reads or this thread's documents need them.
   */
  async credentials(scheme: ObjectScheme): Promise<Credentials> {
    const answer = (await this.ask({ type: 'credentials', scheme }, this.opts.timeoutMs)) as
      | { credentials?: Credentials; error?: string; kind?: ErrorKind }
      | undefined;
    if (answer?.credentials) return answer.credentials;
    const kind = answer?.kind === 'UpstreamForbidden' ? 'UpstreamForbidden' : 'UpstreamError';
    throw new TesseraError(kind, answer?.error ?? 'the upstream gateway did not give credentials in time');
  }

  /**
   * Has the gateway's thread serve `bytes` on loopback for the warm-up (warm-up.ts): the URL to read
   * them at through `gdalPath`, the only address the thread lets past its policies, until
   * `endWarmUp`; undefined when the thread did not answer in time. Call only before the server
   * listens.
   */
  async warmUpstream(bytes: Uint8Array): Promise<string | undefined> {
    const url = await this.ask({ type: 'warm-start', bytes });
    return typeof url === 'string' ? url : undefined;
  }

  endWarmUp(): void {
    this.worker.postMessage({ type: 'warm-end' });
  }

  /** A question to the gateway's thread, answered within `timeoutMs` (a second) or undefined. */
  private ask(question: Record<string, unknown>, timeoutMs = 1000): Promise<unknown> {
    const id = ++this.asked;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.questions.delete(id);
        resolve(undefined);
      }, timeoutMs);
      this.questions.set(id, (answer) => {
        clearTimeout(timer);
        this.questions.delete(id);
        resolve(answer);
      });
      this.worker.postMessage({ ...question, id });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.worker.terminate();
  }

  /**
   * Starts the thread and waits (blocking, a few milliseconds) until it listens, so that paths can
   * be handed out synchronously from the start. A replacement thread listens on the same port:
   * paths already given to GDAL stay valid.
   */
  private spawn(): Worker {
    const ready = new Int32Array(new SharedArrayBuffer(4));
    const workerData: GatewayWorkerData = { ...this.opts, token: this.token, port: this.port, ready, faults: this.faultCounter };
    const worker = new Worker(new URL('./gateway-worker.js', import.meta.url), { workerData });
    // The gateway must not keep a process alive by itself (tests, the CLI's one-shot commands).
    worker.unref();
    Atomics.wait(ready, 0, 0, START_TIMEOUT_MS);
    const port = Atomics.load(ready, 0);
    if (port <= 0) {
      void worker.terminate();
      throw new Error(port < 0 ? `the upstream gateway could not listen on 127.0.0.1:${this.port}` : 'the upstream gateway did not start');
    }
    this.port = port;
    // A failing thread exits after 'error'; without a listener the error would end the process.
    worker.on('error', () => undefined);
    worker.on('message', (msg: { type?: string; id?: number; answer?: unknown }) => {
      if (msg?.type === 'answer' && typeof msg.id === 'number') this.questions.get(msg.id)?.(msg.answer);
    });
    worker.once('exit', () => {
      if (this.closing) return;
      try {
        this.worker = this.spawn();
      } catch {
        // Reads now fail with "could not connect": clear errors, and the server keeps serving.
      }
    });
    return worker;
  }
}

/** curl would send even loopback requests to a proxy named by `http_proxy` unless `no_proxy` says not to. */
function keepCurlOffProxies(): void {
  const current = process.env['no_proxy'] ?? process.env['NO_PROXY'] ?? '';
  if (current.split(',').some((h) => h.trim() === '127.0.0.1' || h.trim() === '*')) return;
  process.env['no_proxy'] = current ? `${current},127.0.0.1` : '127.0.0.1';
}

const GATEWAY_URL = /http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/\d+\/(https?|s3|gs|az)\//g;

/** `text` (a GDAL message) with gateway URLs turned back into the upstream URLs they stand for. */
export function redactGateway(text: string): string {
  return text.replace(GATEWAY_URL, '$1://');
}
