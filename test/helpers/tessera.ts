/**
 * A tessera for route tests. By default it is in-process: requests go through Fastify's `inject`
 * (light-my-request), with no socket, as TiTiler's and LINZ basemaps' route tests do. Tests where the
 * socket is the point (keep-alive and shutdown, slow clients, the watchdog, raw HTTP framing) ask
 * for `{ listen: true }` and get a server on 127.0.0.1.
 *
 * `get` and `request` answer a WHATWG `Response` either way, so a test reads the same in both modes.
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { loadSettings, type Settings } from '../../src/config.js';
import { Services } from '../../src/services.js';
import { buildApp } from '../../src/api/app.js';
import type { FamilyRegistration } from '../../src/api/factory.js';

/** What a test sends beyond the path (fetch's init, narrowed to what the tests use). */
export interface TestRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface RunningTessera {
  /** Where the server answers: its socket's address, or (in-process) the origin its URLs are built on. */
  url: string;
  app: FastifyInstance;
  services: Services;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  request(path: string, init?: TestRequest): Promise<Response>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Listen on 127.0.0.1 (a real socket) instead of answering in-process. */
  listen?: boolean;
  /** The reader families to mount instead of tessera's own (api/app.ts, FAMILIES). */
  families?: readonly FamilyRegistration[];
}

/** Loopback only: the tests' file servers listen there, and tessera refuses it by default. */
export const LOOPBACK: string[] = ['127.0.0.0/8', '::1/128'];

/** The origin in-process requests carry (light-my-request's default Host). Nothing listens there. */
const IN_PROCESS_ORIGIN = 'http://localhost:80';

/** Statuses whose answers have no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The body as fetch gives it: decompressed, with Content-Encoding left in the headers. */
function decoded(payload: Buffer, encoding: string | null): Buffer {
  if (payload.length === 0) return payload;
  if (encoding === 'gzip') return gunzipSync(payload);
  if (encoding === 'br') return brotliDecompressSync(payload);
  if (encoding === 'deflate') return inflateSync(payload);
  return payload;
}

async function injected(app: FastifyInstance, path: string, init: TestRequest = {}): Promise<Response> {
  const res = await app.inject({
    method: (init.method ?? 'GET') as InjectOptions['method'],
    url: path,
    headers: init.headers ?? {},
    ...(init.body !== undefined ? { payload: init.body } : {}),
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, String(v));
  }
  const body = NULL_BODY.has(res.statusCode) || init.method === 'HEAD' ? null : new Uint8Array(decoded(res.rawPayload, headers.get('content-encoding')));
  return new Response(body, { status: res.statusCode, headers });
}

export async function startTessera(overrides: Partial<Settings> = {}, options: StartOptions = {}): Promise<RunningTessera> {
  const services = new Services(loadSettings({ logLevel: 'silent', allowedNetworks: LOOPBACK, ...overrides }));
  const app = await buildApp(services, { logger: false, ...(options.families ? { families: options.families } : {}) });
  if (options.listen) {
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    return {
      url: address,
      app,
      services,
      get: (path, headers = {}) => fetch(`${address}${path}`, { headers }),
      request: (path, init = {}) => fetch(`${address}${path}`, init),
      close: () => app.close(),
    };
  }
  await app.ready();
  return {
    url: IN_PROCESS_ORIGIN,
    app,
    services,
    get: (path, headers = {}) => injected(app, path, { headers }),
    request: (path, init) => injected(app, path, init),
    close: () => app.close(),
  };
}
