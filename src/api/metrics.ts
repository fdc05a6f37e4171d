/**
 * `/metrics` in Prometheus's text format (prom-client): what an operator graphs and alerts on.
 *
 * - Requests: `tessera_http_requests_total` and `tessera_http_request_duration_seconds` by route
 *   family (a reader family's label from its registration, api/factory.ts; else the route's first
 *   path segment), route pattern (never the raw URL: clients choose those), method and status;
 *   requests in flight; bytes sent.
 * - Upstream, by host (at most 100 hosts, then "other"): requests, failures without an answer,
 *   answers by status class, bytes received and seconds spent; `kind="gdal"` for GDAL's raster
 *   reads through the gateway, `kind="direct"` for tessera's own (STAC items, MosaicJSON, a file's
 *   first bytes when it does not open, COG layouts).
 * - Caches: hits and misses of the document cache, the raster metadata cache, the tile caches, the
 *   GDAL block caches as the handle pool sees them (source/pool.ts BlockCacheStats), and the pgSTAC
 *   catalogue's item lookups, with a catalogue. Upstream latency per host as a histogram.
 * - The pgSTAC catalogue, when one is configured: queries, failed queries, seconds spent in them,
 *   connections open and idle, queries waiting for a connection.
 * - Capacity: GDAL handles open, in use and waited for, reads warm or cold; whole-image requests running, waiting and
 *   the bytes they hold; event-loop stalls seen by the watchdog.
 * - Process and event loop: prom-client's default metrics (CPU, memory, heap, GC, event-loop lag).
 */
import client from 'prom-client';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { LOOKUP_BUCKETS } from '../catalog/timing.js';
import { PARTIAL_HEADER } from '../readers/mosaic.js';
import { UPSTREAM_LATENCY_BUCKETS, type HostStats } from '../upstream/client.js';
import type { LoopWatchdog } from './watchdog.js';
import { isWarmUp } from './warm-up-request.js';

/** The first path segments of the routes outside the reader families, each its own label. */
const OTHER_ROUTES = new Set(['tileMatrixSets', 'colorMaps', 'algorithms', 'api', 'api.html', 'healthz', 'metrics', 'static', 'demo']);

/** What the metrics know of a reader family: where it is mounted and the label its requests carry. */
export interface MetricsFamily {
  prefix: string;
  metricsLabel: string;
}

/** The label of a route pattern: its reader family's, else its first path segment when tessera serves it. */
function labelOf(route: string | undefined, families: readonly MetricsFamily[]): string {
  if (!route) return 'unmatched';
  const family = families.find((f) => route === f.prefix || route.startsWith(`${f.prefix}/`));
  if (family) return family.metricsLabel;
  const first = route.split('/')[1] ?? '';
  return OTHER_ROUTES.has(first) ? first : first === '' ? 'pages' : 'other';
}

export function installMetrics(app: FastifyInstance, services: Services, watchdog: LoopWatchdog, families: readonly MetricsFamily[]): client.Registry {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });

  const labels = ['family', 'route', 'method', 'status'] as const;
  const requests = new client.Counter({ name: 'tessera_http_requests_total', help: 'HTTP requests answered', labelNames: labels, registers: [registry] });
  const duration = new client.Histogram({
    name: 'tessera_http_request_duration_seconds',
    help: 'Time from the request to the end of its answer',
    labelNames: ['family', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const sent = new client.Counter({
    name: 'tessera_http_response_bytes_total',
    help: 'Bytes of answers sent (after compression)',
    labelNames: ['family'],
    registers: [registry],
  });
  const inFlight = new client.Gauge({ name: 'tessera_http_requests_in_flight', help: 'Requests being answered', registers: [registry] });
  const partial = new client.Counter({
    name: 'tessera_mosaic_partial_tiles_total',
    help: 'Mosaic tiles below minzoom answered with the assets that arrived before TESSERA_MOSAIC_LOW_ZOOM_DEADLINE_MS',
    registers: [registry],
  });

  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (!isWarmUp(request, services.warmUpToken)) inFlight.inc();
  });
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    if (isWarmUp(request, services.warmUpToken)) return;
    inFlight.dec();
    const route = request.routeOptions.url;
    const family = labelOf(route, families);
    const status = String(reply.statusCode);
    requests.inc({ family, route: route ?? 'unmatched', method: request.method, status });
    duration.observe({ family, status }, reply.elapsedTime / 1000);
    const length = Number(reply.getHeader('content-length'));
    if (Number.isFinite(length)) sent.inc({ family }, length);
    if (reply.hasHeader(PARTIAL_HEADER)) partial.inc();
  });

  upstreamMetrics(registry, services);
  cacheMetrics(registry, services);
  capacityMetrics(registry, services, watchdog);
  catalogueMetrics(registry, services);

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const text = await registry.metrics();
    return reply.header('cache-control', 'no-store').type(registry.contentType).send(text);
  });
  return registry;
}

/** A counter whose values are read at scrape time from counts kept elsewhere. */
function collectedCounter(
  registry: client.Registry,
  name: string,
  help: string,
  labelNames: string[],
  read: () => Promise<Array<[Record<string, string>, number]>> | Array<[Record<string, string>, number]>,
): void {
  new client.Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const [labels, value] of await read()) this.inc(labels, value);
    },
  });
}

function upstreamMetrics(registry: client.Registry, services: Services): void {
  const sources = async (): Promise<Array<[string, Array<[string, HostStats]>]>> => [
    ['direct', services.client.hostStats()],
    ['gdal', services.gateway ? await services.gateway.hostStats() : []],
  ];
  const perHost = (pick: (s: HostStats) => Array<[Record<string, string>, number]>) => async (): Promise<Array<[Record<string, string>, number]>> =>
    (await sources()).flatMap(([kind, hosts]) =>
      hosts.flatMap(([host, s]) => pick(s).map(([labels, v]) => [{ kind, host, ...labels }, v] as [Record<string, string>, number])),
    );
  collectedCounter(
    registry,
    'tessera_upstream_requests_total',
    'Upstream requests sent',
    ['kind', 'host'],
    perHost((s) => [[{}, s.requests]]),
  );
  collectedCounter(
    registry,
    'tessera_upstream_errors_total',
    'Upstream requests that failed without an answer (refused, reset, timed out)',
    ['kind', 'host'],
    perHost((s) => [[{}, s.errors]]),
  );
  collectedCounter(
    registry,
    'tessera_upstream_answers_total',
    'Upstream answers by status class',
    ['kind', 'host', 'status'],
    perHost((s) => Object.entries(s.answers).map(([status, n]) => [{ status }, n])),
  );
  collectedCounter(
    registry,
    'tessera_upstream_bytes_total',
    'Bytes received from upstream',
    ['kind', 'host'],
    perHost((s) => [[{}, s.bytes]]),
  );
  collectedCounter(
    registry,
    'tessera_upstream_seconds_total',
    'Seconds spent on upstream requests (divide by requests for the mean latency)',
    ['kind', 'host'],
    perHost((s) => [[{}, s.seconds]]),
  );
  new CollectedHistogram(
    'tessera_upstream_request_duration_seconds',
    'Time from sending an upstream request to the end of its answer (or its failure)',
    ['kind', 'host'],
    UPSTREAM_LATENCY_BUCKETS,
    async () => (await sources()).flatMap(([kind, hosts]) => hosts.map(([host, s]) => ({ labels: { kind, host }, counts: s.latency, sum: s.seconds }))),
    registry,
  );
}

/** Observations of one label set, as a histogram's buckets: `counts[i]` fell in bucket i, the last above every bound. */
interface BucketCounts {
  labels: Record<string, string>;
  counts: readonly number[];
  sum: number;
}

/**
 * A histogram whose bucket counts are read at scrape time from counts kept elsewhere (the gateway's
 * thread counts its own requests). prom-client's Histogram formats what `getForPromString` gives
 * (its `get` too), so that is where the counts read are laid out as buckets, sum and count.
 */
class CollectedHistogram extends client.Histogram<string> {
  constructor(
    private readonly metricName: string,
    private readonly helpText: string,
    labelNames: string[],
    private readonly bounds: readonly number[],
    private readonly read: () => Promise<BucketCounts[]>,
    registry: client.Registry,
  ) {
    super({ name: metricName, help: helpText, labelNames, buckets: [...bounds], registers: [registry] });
  }

  async getForPromString(): Promise<{ name: string; help: string; type: string; aggregator: client.Aggregator; values: client.MetricValueWithName<string>[] }> {
    const name = this.metricName;
    const values: client.MetricValueWithName<string>[] = [];
    for (const { labels, counts, sum } of await this.read()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += counts[i] ?? 0;
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative });
      });
      cumulative += counts[this.bounds.length] ?? 0;
      values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative });
      values.push({ metricName: `${name}_sum`, labels, value: sum });
      values.push({ metricName: `${name}_count`, labels, value: cumulative });
    }
    return { name, help: this.helpText, type: 'histogram', aggregator: 'sum', values };
  }
}

function cacheMetrics(registry: client.Registry, services: Services): void {
  const caches = (): Array<[string, { hits: number; misses: number }]> => [
    ['documents', services.fetcher.cacheStats],
    ['raster_metadata', services.sources.metaStats],
    ['tiles_memory', services.tiles.memoryStats],
    ['tiles_redis', services.tiles.redisStats],
    ['gdal_blocks', services.pool.blockCacheStats],
    ...(services.searches ? [['pgstac_items', services.searches.lookups.stats()] as [string, { hits: number; misses: number }]] : []),
  ];
  collectedCounter(registry, 'tessera_cache_hits_total', 'Lookups answered from a cache', ['cache'], () => caches().map(([cache, s]) => [{ cache }, s.hits]));
  collectedCounter(registry, 'tessera_cache_misses_total', 'Lookups a cache could not answer', ['cache'], () =>
    caches().map(([cache, s]) => [{ cache }, s.misses]),
  );
  collectedCounter(
    registry,
    'tessera_cache_errors_total',
    'Lookups and writes of the shared tile cache that failed (Redis down or slow): tiles were made without it',
    ['cache'],
    () => [[{ cache: 'tiles_redis' }, services.tiles.redisStats.errors]],
  );
}

/** The pgSTAC catalogue (pgstac/database.ts), when TESSERA_PGSTAC_DSN names one. */
function catalogueMetrics(registry: client.Registry, services: Services): void {
  const inMemory = services.inMemory;
  if (inMemory) {
    const lookups = new client.Histogram({
      name: 'tessera_catalog_lookup_seconds',
      help: "Item lookups of a tile, point or bbox in the catalogue held in memory (TESSERA_CATALOG: stac-geoparquet, or a STAC API's searches), in seconds",
      buckets: LOOKUP_BUCKETS,
      registers: [registry],
    });
    inMemory.timing.onLookup = (seconds) => lookups.observe(seconds);
  }
  const catalogue = services.searches?.catalogue;
  if (!catalogue) return;
  collectedCounter(registry, 'tessera_pgstac_queries_total', 'Queries sent to the pgSTAC catalogue', [], () => [[{}, catalogue.stats().queries]]);
  collectedCounter(registry, 'tessera_pgstac_query_errors_total', 'Catalogue queries that failed (the database down or slow, or pgSTAC refusing)', [], () => [
    [{}, catalogue.stats().failures],
  ]);
  collectedCounter(registry, 'tessera_pgstac_query_seconds_total', 'Seconds spent on catalogue queries, waiting for a connection included', [], () => [
    [{}, catalogue.stats().seconds],
  ]);
  gauge(registry, 'tessera_pgstac_connections', 'Connections to the catalogue open', () => catalogue.stats().total);
  gauge(registry, 'tessera_pgstac_connections_idle', 'Connections to the catalogue idle', () => catalogue.stats().idle);
  gauge(registry, 'tessera_pgstac_waiting', 'Catalogue queries waiting for a connection (TESSERA_PGSTAC_POOL_SIZE)', () => catalogue.stats().waiting);
}

function gauge(registry: client.Registry, name: string, help: string, read: () => number): void {
  new client.Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

function capacityMetrics(registry: client.Registry, services: Services, watchdog: LoopWatchdog): void {
  gauge(registry, 'tessera_gdal_handles_open', 'GDAL dataset handles open or opening', () => services.pool.stats.handles);
  gauge(registry, 'tessera_gdal_handles_busy', 'GDAL dataset handles in use by a call', () => services.pool.stats.busy);
  gauge(registry, 'tessera_gdal_handle_waiters', 'GDAL calls waiting for a handle of their source', () => services.pool.stats.waiting);
  gauge(registry, 'tessera_gdal_sources', 'Rasters with pooled handles', () => services.pool.stats.sources);
  collectedCounter(
    registry,
    'tessera_gdal_reads_total',
    "Pixel reads by what their handle's block cache held: warm (every block read before), cold (some not), untracked (no blocks named)",
    ['blocks'],
    () => Object.entries(services.pool.blockCacheStats.reads).map(([blocks, n]) => [{ blocks }, n]),
  );
  gauge(registry, 'tessera_whole_image_running', 'Whole-image requests (previews, parts, statistics) holding a slot', () => services.wholeImages.stats.running);
  gauge(registry, 'tessera_whole_image_waiting', 'Whole-image requests waiting for a slot or for memory', () => services.wholeImages.stats.waiting);
  gauge(registry, 'tessera_tile_requests_running', 'Tile requests being made (TESSERA_TILE_REQUESTS)', () => services.tileAdmission.stats.running);
  gauge(registry, 'tessera_tile_requests_waiting', 'Tile requests waiting for their turn', () => services.tileAdmission.stats.waiting);
  gauge(registry, 'tessera_whole_image_bytes', 'Bytes the running whole-image requests hold, as estimated', () => services.wholeImages.stats.bytes);
  collectedCounter(registry, 'tessera_event_loop_stalls_total', 'Times the event loop was blocked longer than TESSERA_STALL_WARN_MS', [], () => [
    [{}, watchdog.stalls],
  ]);
}
