/**
 * The one way tessera sends HTTP requests upstream: documents (STAC items, MosaicJSON) and the
 * gateway's raster ranges. node's http/https with keep-alive agents whose sockets resolve names
 * through the network policy (the address checked is the address connected to), IP literals checked
 * before a socket opens, redirects followed here so that every hop passes the URL and network
 * policies (curl and fetch would follow them anywhere), and a connect timeout of its own.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { TesseraError } from '../errors.js';
import { NetworkRefused } from './network-policy.js';
import type { UrlPolicy } from './url-policy.js';
import { isObjectUrl, type ObjectStores } from './object-stores.js';

/** A redirect or an address that tessera's policies refuse; nothing refused was contacted. */
export class UpstreamRefused extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamRefused';
  }
}

/** An upstream that did not connect, or did not answer, in time. */
export class UpstreamTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamTimeout';
  }
}

export interface UpstreamClientOptions {
  policy: UrlPolicy;
  connectTimeoutMs: number;
  /** Sockets per upstream host (keep-alive). */
  maxSockets?: number;
  maxRedirects?: number;
  userAgent?: string;
  /** Called for every request sent (each redirect hop too): the current request's count, for its log line. */
  onRequest?: () => void;
  /** How object URLs (`s3://…`, `gs://…`, `az://…`) become signed requests; without it they fail. */
  stores?: ObjectStores | undefined;
}

/** What one upstream host has been asked and answered, for /metrics. */
export interface HostStats {
  requests: number;
  /** Requests that failed without an answer (refused, reset, timed out). */
  errors: number;
  /** Answers by status class: '2xx', '3xx', '4xx', '5xx'. */
  answers: Record<string, number>;
  /** Bytes received on the socket for these requests (headers included). */
  bytes: number;
  /** Seconds from sending to the end of the answer, summed (with `requests`, the mean latency). */
  seconds: number;
  /**
   * The same durations counted by UPSTREAM_LATENCY_BUCKETS: `latency[i]` requests took at most
   * bucket i's seconds and more than bucket i-1's; the last entry counts those slower than every
   * bucket (plain numbers, to cross from the gateway's thread).
   */
  latency: number[];
}

/** Upper bounds (seconds) of the upstream latency histogram's buckets: a range read on a LAN to a slow object store. */
export const UPSTREAM_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

function observe(stats: HostStats, seconds: number): void {
  stats.seconds += seconds;
  let i = 0;
  while (i < UPSTREAM_LATENCY_BUCKETS.length && seconds > UPSTREAM_LATENCY_BUCKETS[i]!) i++;
  stats.latency[i] = (stats.latency[i] ?? 0) + 1;
}

/** Hosts are client-chosen: past this many, the rest are counted together as "other". */
const MAX_TRACKED_HOSTS = 100;

export interface UpstreamRequest {
  /** A single `bytes=a-b` range, passed on as is. */
  range?: string | undefined;
  accept?: string;
  /** Ends the request (and its body) when aborted: the caller's total deadline. */
  signal: AbortSignal;
  /** Called for every request this sends (each redirect hop too), beside the client's own `onRequest`. */
  onSend?: () => void;
  /** A JSON body to POST instead of a GET (a STAC API search); 307/308 redirects send it again, others turn to a GET. */
  json?: string | undefined;
}

export class UpstreamClient {
  private readonly agents: { 'http:': http.Agent; 'https:': https.Agent };
  private readonly hosts = new Map<string, HostStats>();

  constructor(private readonly opts: UpstreamClientOptions) {
    const agentOptions = { keepAlive: true, maxSockets: opts.maxSockets ?? 64, lookup: opts.policy.network.lookup };
    this.agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };
  }

  /**
   * GETs `url` (already allowed by the URL policy), or POSTs `req.json` to it, following redirects that the policies allow.
   * Resolves with the final response, body unread (the caller consumes or destroys it). Refusals
   * reject with UpstreamRefused, timeouts with UpstreamTimeout, network failures with node's error.
   */
  async get(url: string, req: UpstreamRequest): Promise<IncomingMessage> {
    // A store's redirect is not followed: the signature is for the store, and the bucket's own answer says what is wrong.
    if (isObjectUrl(url)) return this.once(url, req);
    let current = url;
    let hopReq = req;
    const maxRedirects = this.opts.maxRedirects ?? 5;
    for (let hop = 0; hop <= maxRedirects; hop++) {
      const res = await this.once(current, hopReq);
      const location = res.headers.location;
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && location) {
        res.resume();
        current = this.redirectTarget(location, current);
        // As browsers and curl do: only 307 and 308 repeat a POST; the others are followed with a GET.
        if (hopReq.json !== undefined && status !== 307 && status !== 308) hopReq = { ...hopReq, json: undefined };
        continue;
      }
      return res;
    }
    throw new TesseraError('UpstreamError', `too many redirects (more than ${maxRedirects})`);
  }

  /** Per-host counts since start (a copy). */
  hostStats(): Array<[string, HostStats]> {
    return [...this.hosts].map(([host, s]) => [host, { ...s, answers: { ...s.answers }, latency: [...s.latency] }]);
  }

  private statsOf(host: string): HostStats {
    let stats = this.hosts.get(host);
    if (!stats) {
      const key = this.hosts.size < MAX_TRACKED_HOSTS ? host : 'other';
      stats = this.hosts.get(key) ?? {
        requests: 0,
        errors: 0,
        answers: {},
        bytes: 0,
        seconds: 0,
        latency: new Array<number>(UPSTREAM_LATENCY_BUCKETS.length + 1).fill(0),
      };
      this.hosts.set(key, stats);
    }
    return stats;
  }

  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }

  private redirectTarget(location: string, from: string): string {
    let next: string;
    try {
      next = new URL(location, from).href;
    } catch {
      throw new UpstreamRefused(`redirect to an invalid location '${location}'`);
    }
    try {
      const loc = this.opts.policy.resolve(next, 'redirect');
      if (loc.kind !== 'http') throw new Error('a redirect may only lead to http(s)');
      return loc.url;
    } catch (err) {
      throw new UpstreamRefused(`redirect to a refused location: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }

  /**
   * One request. A kept-alive socket the server closed while idle fails on reuse (ECONNRESET/EPIPE
   * before any answer): that request is sent again, once, on a fresh socket, as HTTP clients do
   * for idempotent requests. Under load a soak met it about once in 75,000 requests.
   */
  private async once(url: string, req: UpstreamRequest, retried = false): Promise<IncomingMessage> {
    if (!isObjectUrl(url)) return this.send(new URL(url), {}, url, req, retried);
    if (!this.opts.stores) throw new TesseraError('UpstreamError', `'${url}': object stores are not configured in this process`);
    const prepared = await this.opts.stores.prepare(url);
    return this.send(new URL(prepared.url), prepared.headers, url, req, retried);
  }

  /** One request to `target` with `extra` headers (an object store's signature); `url` is what it stands for, asked again on a stale socket. */
  private send(target: URL, extra: Record<string, string>, url: string, req: UpstreamRequest, retried: boolean): Promise<IncomingMessage> {
    const network = this.opts.policy.network;
    try {
      network.checkLiteral(target.hostname);
    } catch (err) {
      return Promise.reject(err instanceof NetworkRefused ? new UpstreamRefused(err.message, { cause: err }) : err);
    }
    return new Promise((resolve, reject) => {
      const lib = target.protocol === 'https:' ? https : http;
      const headers: Record<string, string> = { 'User-Agent': this.opts.userAgent ?? 'tessera', 'Accept-Encoding': 'identity', ...extra };
      if (req.range) headers['Range'] = req.range;
      if (req.accept) headers['Accept'] = req.accept;
      if (req.json !== undefined) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = String(Buffer.byteLength(req.json));
      }
      const agent = this.agents[target.protocol as 'http:' | 'https:'];
      const request = lib.request(target, { method: req.json === undefined ? 'GET' : 'POST', headers, agent, signal: req.signal });
      const stats = this.statsOf(target.host);
      stats.requests++;
      this.opts.onRequest?.();
      req.onSend?.();
      const started = performance.now();
      let socket: Socket | undefined;
      let socketBytesAtStart = 0;
      const connectTimer = setTimeout(
        () => request.destroy(new UpstreamTimeout(`could not connect within ${this.opts.connectTimeoutMs} ms`)),
        this.opts.connectTimeoutMs,
      );
      request.once('socket', (s: Socket) => {
        socket = s;
        socketBytesAtStart = s.bytesRead;
        network.checkSocket(s);
        // A kept-alive socket is already connected.
        if (!s.connecting) clearTimeout(connectTimer);
        else s.once('connect', () => clearTimeout(connectTimer));
      });
      request.once('response', (res) => {
        clearTimeout(connectTimer);
        const status = `${Math.floor((res.statusCode ?? 0) / 100)}xx`;
        stats.answers[status] = (stats.answers[status] ?? 0) + 1;
        res.once('close', () => {
          observe(stats, (performance.now() - started) / 1000);
          stats.bytes += Math.max(0, (socket?.bytesRead ?? socketBytesAtStart) - socketBytesAtStart);
        });
        resolve(res);
      });
      request.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(connectTimer);
        stats.errors++;
        observe(stats, (performance.now() - started) / 1000);
        if (!retried && request.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') && !req.signal.aborted) {
          resolve(this.once(url, req, true));
          return;
        }
        if (err instanceof NetworkRefused) reject(new UpstreamRefused(err.message, { cause: err }));
        else if (err.name === 'AbortError' || err.name === 'TimeoutError') reject(new UpstreamTimeout('upstream did not answer in time'));
        else reject(err);
      });
      request.end(req.json);
    });
  }
}
