/**
 * The Fastify application: TiTiler's global behaviour (CORS, compression, Cache-Control, JSON error
 * bodies, OpenAPI at /api) and the route families. The reader families are a list of registrations
 * (FAMILIES, as TiTiler's application/main.py includes one TilerFactory router per family): each is
 * mounted at its prefix unless its disable setting is on, and /api and /metrics take its tag and
 * label from it.
 */
import type { RequestTiming } from '../catalog/timing.js';
import zlib from 'node:zlib';
import { randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import cors from '@fastify/cors';
import compress from '@fastify/compress';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Services } from '../services.js';
import type { BudgetRelease } from '../upstream/budget.js';
import { answerClientError, installErrorHandling, MAX_HEADER_BYTES } from './errors.js';
import { LoopWatchdog } from './watchdog.js';
import { installJsonBodyParser, MAX_BODY_BYTES } from './json-body.js';
import { normaliseBooleans, PARSER_DEFAULT, type Query } from './params/index.js';
import { tmsRoutes } from './routes/tms.js';
import { stacFamily } from './routes/stac.js';
import { cogFamily } from './routes/cog.js';
import { mosaicFamily } from './routes/mosaic.js';
import { collectionFamily, searchFamily, searchRegistration } from './routes/pgstac.js';
import { itemFamily } from './routes/pgstac-items.js';
import { assetFamily } from './routes/pgstac-assets.js';
import { algorithmRoutes } from './routes/algorithms.js';
import { colormapRoutes } from './routes/colormaps.js';
import { pageRoutes } from './routes/pages.js';
import { ogcRoutes } from './routes/ogc.js';
import { demoRoutes } from './routes/demo.js';
import { pyDumps } from '../pyjson.js';
import { completeOpenApi } from './openapi.js';
import { algorithmGeneration, choose, TITILER_2_RELEASE } from './generations.js';
import { installMetrics } from './metrics.js';
import { installEncodingTags, installEtags } from './etag.js';
import { installTileCache } from './tile-cache.js';
import { isWarmUp } from './warm-up-request.js';
import { TESSERA_VERSION } from '../version.js';
import { gdal } from '../gdal/gdal.js';
import type { FamilyRegistration } from './factory.js';

/** The reader families, mounted in this order (their /api tags come in it too). */
export const FAMILIES: readonly FamilyRegistration[] = [cogFamily, stacFamily, mosaicFamily, searchFamily, collectionFamily, itemFamily, assetFamily];

declare module 'fastify' {
  interface FastifyInstance {
    /** The event-loop watchdog (api/watchdog.ts): stalls seen, the worst, delay percentiles. */
    watchdog: LoopWatchdog;
    /** True once shutdown began: /readyz answers 503 (server.ts). */
    draining: boolean;
    /** The root path ('' or '/prefix') generated URLs carry (api/urls.ts). */
    rootPath: string;
  }
  interface FastifyContextConfig {
    /** The route reads whole images: it runs under the whole-image gate (image/whole-image-gate.ts). */
    large?: boolean;
    /** The route's answers are tiles, kept in the tile cache (api/tile-cache.ts). */
    tileCache?: boolean;
  }
}

/** `url` without the root path `root` at its start (only a whole segment). */
function stripRoot(url: string, root: string): string {
  if (!(url === root || url.startsWith(`${root}/`) || url.startsWith(`${root}?`))) return url;
  const rest = url.slice(root.length);
  return rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
}

/** A request id taken from the caller: a short token, nothing a log reader could trip on. */
const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** Each request's upstream byte count, read when its log line is written. */
const upstreamOf = new WeakMap<object, BudgetRelease>();
/** Each request's catalogue lookups (a catalogue in memory), for its Server-Timing. */
const catalogTimingOf = new WeakMap<object, RequestTiming>();

export interface AppOptions {
  logger?: boolean | object;
  /** The reader families to mount (default FAMILIES). */
  families?: readonly FamilyRegistration[];
}

export async function buildApp(services: Services, opts: AppOptions = {}): Promise<FastifyInstance> {
  const settings = services.settings;
  // TiTiler's TITILER_API_DISABLE_COG/STAC/MOSAIC (or tessera's TESSERA_DISABLE_*) leave a family out.
  const families = (opts.families ?? FAMILIES).filter(
    (f) => (f.disabledBy === undefined || !settings.disabledFamilies.includes(f.disabledBy)) && f.enabled(settings),
  );
  const app = Fastify({
    logger: opts.logger ?? { level: settings.logLevel },
    trustProxy: settings.trustProxy,
    bodyLimit: MAX_BODY_BYTES,
    // URLs carry colormaps, expressions and GeoJSON-ish parameters: 64 KiB of URL and headers
    // (Node's default 16 KiB refused a 400-entry colormap). Over it: 431 with a JSON detail.
    http: { maxHeaderSize: MAX_HEADER_BYTES },
    clientErrorHandler: answerClientError,
    // PARSER_DEFAULT annotates a query parameter with the default its parser applies (shown by /api).
    ajv: { customOptions: { coerceTypes: 'array', allErrors: true, removeAdditional: false, useDefaults: true, keywords: [PARSER_DEFAULT] } },
    // A path piece is bounded by the URL's own limit (431 past it); a smaller one answered 414 without a detail.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_HEADER_BYTES },
    // Each request carries a deadline; the handler's own work is bounded by upstream timeouts.
    requestTimeout: settings.requestTimeoutMs,
    // One log line per request, written when it ends (below), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // Behind a proxy that does not strip the root path, requests still carry it: route without it.
    ...(settings.rootPath ? { rewriteUrl: (req: { url?: string }) => stripRoot(req.url ?? '/', settings.rootPath) } : {}),
    // The caller's X-Request-Id when it is a sane token, else a fresh one; always sent back.
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });

  // First of all hooks, so that every answer (a 401, a 404 …) carries it.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  // Overload: past maxInFlight requests, a new one is answered 503 at once (Retry-After) instead of
  // joining queues whose latency would grow without bound. Health checks and the metrics scrape
  // always pass: monitoring must keep working when it matters most.
  let inFlight = 0;
  const ALWAYS = /^\/(healthz|readyz|metrics)(\?|$)/;
  app.addHook('onRequest', async (request, reply) => {
    if (inFlight >= settings.maxInFlight && !ALWAYS.test(request.url)) {
      return reply
        .code(503)
        .header('retry-after', '1')
        .type('application/json')
        .send(pyDumps({ detail: `Server busy: ${inFlight} requests in flight (TESSERA_MAX_IN_FLIGHT); retry shortly` }));
    }
    inFlight++;
    reply.raw.once('close', () => inFlight--);
  });

  const watchdog = new LoopWatchdog(settings.stallWarnMs, (stall) =>
    app.log.warn({ stalledMs: stall.stalledMs, inFlight: stall.inFlight }, `event loop stalled for ${stall.stalledMs} ms; requests in flight named`),
  );
  app.decorate('watchdog', watchdog);
  app.decorate('draining', false);
  app.decorate('rootPath', settings.rootPath);
  app.addHook('onReady', async () => void watchdog.start());
  installMetrics(app, services, watchdog, families);

  installErrorHandling(app);
  installJsonBodyParser(app);

  await app.register(cors, {
    origin: settings.corsOrigins.includes('*') ? true : settings.corsOrigins,
    credentials: true,
    methods: ['GET', 'POST', 'HEAD', 'OPTIONS'],
  });
  // After CORS, so that a 401 carries its headers and a browser page can read it.
  if (settings.accessToken) requireAccessToken(app, settings.accessToken);
  // After the token check (a cached tile is no more public than a rendered one), before compression.
  installTileCache(app, services.tiles, (request) => isWarmUp(request, services.warmUpToken));
  // Before compression: the tag is of the answer's bytes before encoding (api/etag.ts) ...
  installEtags(app);
  await app.register(compress, {
    global: true,
    threshold: 0,
    encodings: ['br', 'gzip', 'deflate'],
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } },
    zlibOptions: { level: 6 },
    // TiTiler compresses everything but already-compressed images (JPEG, PNG, JP2, WebP).
    customTypes: /^(application\/(json|geo\+json|xml|x-binary)|text\/|image\/tiff)/,
  });
  // ... and, once compressed, carries its coding: each encoding is its own representation.
  installEncodingTags(app);
  // OpenAPI 3.1: its schemas are JSON Schema 2020-12, whose numeric exclusiveMinimum the parameter
  // schemas use (3.0 wants a boolean there, and validators refused the document).
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'tessera',
        description: `Raster tiles and metadata from COGs, STAC items and MosaicJSON, for TiTiler 0.18 and 2.x clients; where the two generations give a URL different meanings, this server answers as TiTiler ${choose(settings, 'api', { '0.18': '0.18 (TESSERA_TITILER_API=0.18)', '2': '2.x (TESSERA_TITILER_API=2)' })}.`,
        version: TESSERA_VERSION,
      },
    },
  });
  // /api and /api.html show one document: the plugin's, completed once (api/openapi.ts).
  let openApi: Record<string, unknown> | undefined;
  const completedApi = (spec: Record<string, unknown>): Record<string, unknown> => (openApi ??= completeOpenApi(spec, families, settings));
  await app.register(swaggerUi, { routePrefix: '/api.html', transformSpecification: (spec) => completedApi(spec as Record<string, unknown>) });

  // pydantic accepts yes/no/on/off/1/0 for booleans; the schema validator only true/false.
  app.addHook('preValidation', async (request) => {
    if (request.query && typeof request.query === 'object') normaliseBooleans(request.query as Query);
  });

  // The request deadline: a client never waits longer than requestTimeoutMs for an answer. The
  // request's upstream byte budget starts here too (entered before any await, so that the rest of
  // the request's asynchronous flow charges it), and so does its hold on the whole-image gate.
  app.addHook('onRequest', async (request, reply) => {
    reply.raw.once('close', watchdog.begin(request.id, request.method, request.url));
    const budget = services.budgets.enter();
    upstreamOf.set(request, budget);
    if (services.inMemory) catalogTimingOf.set(request, services.inMemory.timing.enterRequest());
    reply.raw.once('close', budget);
    if (request.routeOptions.config.large === true) reply.raw.once('close', services.wholeImages.enter(Date.now() + settings.requestTimeoutMs));
    const timer = setTimeout(() => {
      if (!reply.sent) {
        request.log.warn('request deadline passed');
        reply
          .code(504)
          .type('application/json')
          .send(pyDumps({ detail: `Request did not complete within ${settings.requestTimeoutMs} ms` }));
      }
    }, settings.requestTimeoutMs);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
  });

  // Server-Timing: what the catalogue's lookups took, on every answer that looked items up; and
  // whether a search it read is held in part (a STAC API's search past TESSERA_CATALOG_API_MAX_ITEMS).
  app.addHook('onSend', async (request, reply, payload) => {
    const timing = catalogTimingOf.get(request);
    if (timing && timing.lookups > 0) reply.header('server-timing', `catalog;dur=${(timing.seconds * 1000).toFixed(3)};desc="${timing.lookups} lookups"`);
    if (timing?.truncated) reply.header('x-tessera-catalog-truncated', timing.truncated);
    return payload;
  });

  // Draining: answers close their connections, so that shutdown does not wait on kept-alive ones.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (app.draining) reply.header('connection', 'close');
    return payload;
  });

  // The request's one log line: what was asked (the path and route pattern; the query can carry
  // tokens and signed URLs, so it is left out), the answer, its time and size, the upstream bytes.
  app.addHook('onResponse', async (request, reply) => {
    const length = Number(reply.getHeader('content-length'));
    request.log[isWarmUp(request, services.warmUpToken) ? 'debug' : 'info'](
      {
        method: request.method,
        path: request.url.split('?')[0],
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        bytesOut: Number.isFinite(length) ? length : null,
        upstreamRequests: upstreamOf.get(request)?.requests() ?? 0,
        upstreamBytes: upstreamOf.get(request)?.spent() ?? 0,
        cache: reply.getHeader('x-cache') ?? null,
      },
      'request',
    );
  });

  // TiTiler's Cache-Control middleware (GET/HEAD, not /healthz, unless already set), but for
  // successful answers only: TiTiler also marks 4xx public for an hour, so one passing upstream
  // failure became an hour of missing tiles in every CDN and browser. Errors are not stored.
  app.addHook('onSend', async (request, reply, payload) => {
    const method = request.method;
    if (method !== 'GET' && method !== 'HEAD') return payload;
    if (reply.statusCode >= 400) reply.header('cache-control', 'no-store');
    else if (!request.url.startsWith('/healthz') && !reply.hasHeader('cache-control') && settings.cacheControl)
      reply.header('cache-control', settings.cacheControl);
    return payload;
  });

  const health = Buffer.from(
    choose(settings, 'healthz', {
      '0.18': '{"ping":"pong!"}',
      '2': JSON.stringify({ versions: { titiler: TITILER_2_RELEASE, tessera: TESSERA_VERSION, gdal: gdal.version } }),
    }),
  );
  app.get('/healthz', async (_request, reply) => reply.type('application/json').send(health));
  // Ready: serving and not draining (server.ts sets draining on SIGTERM, before it closes).
  app.get('/readyz', { schema: { summary: 'Readiness: 200 while serving, 503 while shutting down' } }, async (_request, reply) =>
    app.draining
      ? reply
          .code(503)
          .type('application/json')
          .header('cache-control', 'no-store')
          .send(pyDumps({ detail: 'Shutting down' }))
      : reply
          .type('application/json')
          .header('cache-control', 'no-store')
          .send(pyDumps({ ready: true })),
  );
  app.get('/api', { schema: { hide: true } }, async () => completedApi(app.swagger() as unknown as Record<string, unknown>));

  await app.register(tmsRoutes);
  await app.register(colormapRoutes(settings));
  for (const family of families) await app.register(family.plugin(services), { prefix: family.prefix });
  await searchRegistration(app, services);
  await app.register(algorithmRoutes(algorithmGeneration(settings)));
  await app.register(ogcRoutes({ settings, prefixes: families.map((f) => f.prefix) }));
  await app.register(pageRoutes(services));

  if (settings.demoDir) {
    await app.register(demoRoutes(settings.demoDir));
  }

  app.addHook('onClose', async () => {
    watchdog.stop();
    await services.close();
  });
  return app;
}

/** Paths open without the token, as in TiTiler: the API documents and the files pages load. */
const OPEN_PATHS = /^\/(api(\.html)?([/?]|$)|static\/|favicon\.ico)/;

/**
 * TiTiler's global access token: every request but CORS preflights and OPEN_PATHS must carry
 * `?access_token=` equal to it, else 401 with TiTiler's detail. Compared in constant time.
 */
function requireAccessToken(app: FastifyInstance, token: string): void {
  const expected = Buffer.from(token, 'utf8');
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS' || OPEN_PATHS.test(request.url)) return;
    const given = new URL(request.url, 'http://x').searchParams.get('access_token');
    if (!given)
      return reply
        .code(401)
        .type('application/json')
        .send(pyDumps({ detail: 'Missing `access_token`' }));
    const offered = Buffer.from(given, 'utf8');
    if (offered.length !== expected.length || !timingSafeEqual(offered, expected)) {
      return reply
        .code(401)
        .type('application/json')
        .send(pyDumps({ detail: 'Invalid `access_token`' }));
    }
  });
}
