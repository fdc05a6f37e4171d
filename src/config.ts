/** Settings, from TESSERA_* environment variables (command-line flags override a few). */
import os from 'node:os';
import { DEFAULT_PNG_LEVEL } from './image/encode/png.js';
import { defaultImageBytes } from './image/whole-image-gate.js';

export interface Settings {
  host: string;
  port: number;
  /** Server processes sharing the port (see cluster.ts); 1 serves from the starting process. */
  workers: number;
  /** Worker threads per process that post-process and encode images (image/render-threads.ts); 0: the main thread does. */
  renderThreads: number;
  /** Whole-image requests (previews, parts, statistics) running at once per process; more wait (image/whole-image-gate.ts). */
  largeRequests: number;
  /** Bytes whole-image requests may hold together per process, estimated before reading; more wait. */
  maxImageBytes: number;
  /** Cache-Control added to GET/HEAD responses below 500 (TiTiler's TITILER_API_CACHECONTROL). */
  cacheControl: string;
  corsOrigins: string[];
  /** Local folders the `url` parameter may point into; empty means no local files at all. */
  allowedLocalRoots: string[];
  /** When non-empty, upstream hosts must match one of these (`example.com`, `*.example.com`). */
  allowedHosts: string[];
  deniedHosts: string[];
  /** CIDRs of non-public networks upstream connections may reach (network-policy.ts); empty: public unicast only. */
  allowedNetworks: string[];
  /** GDAL drivers a raster may be opened with (GTiff: a COG is a GeoTIFF); nothing else is ever opened. */
  allowedDrivers: string[];
  /** Connect and total timeouts for every upstream fetch (documents and raster ranges). */
  upstreamConnectTimeoutMs: number;
  upstreamTimeoutMs: number;
  /** Read remote rasters through the upstream gateway (source/gateway.ts); off: GDAL reaches upstream itself. */
  upstreamGateway: boolean;
  /** Bytes one request may fetch from upstream, documents and raster reads together (upstream/budget.ts). */
  maxUpstreamBytes: number;
  /** Largest JSON document (STAC item, MosaicJSON) fetched, in bytes. */
  maxDocumentBytes: number;
  /** Deadline of a whole request. */
  requestTimeoutMs: number;
  /** Parsed STAC items are kept this long. */
  documentCacheTtlMs: number;
  documentCacheSize: number;
  /** Open GDAL dataset handles: per source (a handle serves one call at a time) and in total. */
  handlesPerSource: number;
  maxHandles: number;
  /** Largest output image a request may ask for, in values (width × height × bands). */
  maxOutputPixels: number;
  /** Largest number of source pixels one request may read (after the overview choice). */
  maxSourcePixels: number;
  /** Send the `X-Assets` header (the assets a mosaic tile used) on mosaic tiles. */
  mosaicAssetsHeader: boolean;
  /** Asset reads in flight per mosaic request. */
  mosaicConcurrency: number;
  /** Refuse mosaic tiles outside the mosaic's zoom range (TiTiler's MOSAIC_STRICT_ZOOM). */
  mosaicStrictZoom: boolean;
  /** Folder of the demo data served under /demo/, if any. */
  demoDir: string | undefined;
  /**
   * XYZ tile URL template of a Web Mercator basemap under the map pages (`{z}/{x}/{y}`); empty means
   * none, so the pages never reach outside tessera (air-gapped deployments).
   */
  basemapUrl: string;
  /** Attribution shown with the basemap (HTML allowed, as the basemap's licence usually requires). */
  basemapAttribution: string;
  /** zlib level (0–9) of `png` output (TiTiler's is 6); `pngraw` always uses 1. */
  pngLevel: number;
  logLevel: string;
  /** On SIGTERM: answer /readyz 503 for this long (load balancers notice) before closing. */
  shutdownDelayMs: number;
  /** Then how long requests in flight may take to finish before the process exits anyway. */
  shutdownGraceMs: number;
  /** Requests in flight past which new ones get 503 with Retry-After at once. */
  maxInFlight: number;
  /** When set, every route but the API docs and static files needs `?access_token=` equal to it (TiTiler's global_access_token). */
  accessToken: string | undefined;
  /** Route families left out (TiTiler's TITILER_API_DISABLE_COG/STAC/MOSAIC). */
  disabledFamilies: Array<'cog' | 'stac' | 'mosaicjson'>;
  /** An event-loop stall longer than this is logged with the requests in flight (api/watchdog.ts). */
  stallWarnMs: number;
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(value: string | undefined): string {
  const level = (value ?? 'info').trim().toLowerCase() || 'info';
  if (!LOG_LEVELS.includes(level)) throw new Error(`TESSERA_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${value}'`);
  return level;
}

/** A boolean as operators write it (1/0, true/false, yes/no, on/off); undefined when unset or unreadable. */
function boolFrom(value: string | undefined): boolean | undefined {
  const raw = value?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  return undefined;
}

function bool(name: string, fallback: boolean): boolean {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = boolFrom(raw);
  if (value === undefined) throw new Error(`${name} must be true or false, got '${raw}'`);
  return value;
}

function int(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got '${raw}'`);
  return Math.floor(n);
}

function zlibLevel(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 9) throw new Error(`${name} must be an integer from 0 to 9, got '${raw}'`);
  return n;
}

/** A basemap tile template: absolute http(s) or a path on this server, with {z}, {x} and {y}. */
function basemapTemplate(value: string | undefined): string {
  const raw = (value ?? '').trim();
  if (raw === '') return '';
  if (!/^(https?:\/\/|\/)/.test(raw) || !['{z}', '{x}', '{y}'].every((p) => raw.includes(p))) {
    throw new Error(`TESSERA_BASEMAP_URL must be an http(s) URL or a path with {z}, {x} and {y}, got '${raw}'`);
  }
  return raw;
}

export function loadSettings(overrides: Partial<Settings> = {}): Settings {
  const env = process.env;
  const settings: Settings = {
    host: env['TESSERA_HOST'] ?? '127.0.0.1',
    port: int('TESSERA_PORT', 8000),
    workers: Math.min(64, Math.max(1, int('TESSERA_WORKERS', 1))),
    renderThreads: -1,
    largeRequests: Math.max(1, int('TESSERA_LARGE_REQUESTS', os.availableParallelism())),
    maxImageBytes: Math.max(1, int('TESSERA_MAX_IMAGE_BYTES', defaultImageBytes())),
    // TiTiler 0.18's settings are honoured where tessera's own are not set.
    cacheControl: env['TESSERA_CACHE_CONTROL'] ?? env['TITILER_API_CACHECONTROL'] ?? 'public, max-age=3600',
    corsOrigins: list(env['TESSERA_CORS_ORIGINS'] ?? env['TITILER_API_CORS_ORIGINS'] ?? '*'),
    allowedLocalRoots: list(env['TESSERA_ALLOWED_LOCAL_ROOTS']),
    allowedHosts: list(env['TESSERA_ALLOWED_HOSTS']),
    deniedHosts: list(env['TESSERA_DENIED_HOSTS']),
    allowedNetworks: list(env['TESSERA_ALLOWED_NETWORKS']),
    allowedDrivers: env['TESSERA_ALLOWED_DRIVERS'] === undefined ? ['GTiff'] : list(env['TESSERA_ALLOWED_DRIVERS']),
    upstreamConnectTimeoutMs: int('TESSERA_UPSTREAM_CONNECT_TIMEOUT_MS', 5_000),
    upstreamTimeoutMs: int('TESSERA_UPSTREAM_TIMEOUT_MS', 15_000),
    upstreamGateway: bool('TESSERA_UPSTREAM_GATEWAY', true),
    maxDocumentBytes: int('TESSERA_MAX_DOCUMENT_BYTES', 32 * 1024 * 1024),
    maxUpstreamBytes: Math.max(1, int('TESSERA_MAX_UPSTREAM_BYTES', 256 * 1024 * 1024)),
    requestTimeoutMs: int('TESSERA_REQUEST_TIMEOUT_MS', 30_000),
    documentCacheTtlMs: int('TESSERA_DOCUMENT_CACHE_TTL_MS', 300_000),
    documentCacheSize: int('TESSERA_DOCUMENT_CACHE_SIZE', 512),
    handlesPerSource: Math.max(1, int('TESSERA_HANDLES_PER_SOURCE', Math.max(4, os.availableParallelism()))),
    maxHandles: Math.max(1, int('TESSERA_MAX_HANDLES', 256)),
    maxOutputPixels: int('TESSERA_MAX_OUTPUT_PIXELS', 64 * 1024 * 1024),
    maxSourcePixels: int('TESSERA_MAX_SOURCE_PIXELS', 256 * 1024 * 1024),
    mosaicAssetsHeader: bool('TESSERA_MOSAIC_ASSETS_HEADER', true),
    mosaicConcurrency: Math.max(1, int('TESSERA_MOSAIC_CONCURRENCY', 8)),
    mosaicStrictZoom: bool('TESSERA_MOSAIC_STRICT_ZOOM', false),
    demoDir: env['TESSERA_DEMO_DIR'] || undefined,
    basemapUrl: basemapTemplate(env['TESSERA_BASEMAP_URL']),
    basemapAttribution: env['TESSERA_BASEMAP_ATTRIBUTION'] ?? '',
    pngLevel: zlibLevel('TESSERA_PNG_LEVEL', DEFAULT_PNG_LEVEL),
    logLevel: logLevel(env['TESSERA_LOG_LEVEL']),
    shutdownDelayMs: int('TESSERA_SHUTDOWN_DELAY_MS', 0),
    shutdownGraceMs: int('TESSERA_SHUTDOWN_GRACE_MS', 10_000),
    maxInFlight: Math.max(1, int('TESSERA_MAX_QUEUE', 1024)),
    accessToken: (env['TESSERA_ACCESS_TOKEN'] ?? env['TITILER_API_GLOBAL_ACCESS_TOKEN']) || undefined,
    disabledFamilies: (['cog', 'stac', 'mosaicjson'] as const).filter((family) => {
      const name = family === 'mosaicjson' ? 'MOSAIC' : family.toUpperCase();
      return bool(`TESSERA_DISABLE_${name}`, bool(`TITILER_API_DISABLE_${name}`, false));
    }),
    stallWarnMs: Math.max(1, int('TESSERA_STALL_WARN_MS', 200)),
  };
  const merged = { ...settings, ...overrides };
  // One process with a render thread per core is the default (one set of GDAL caches for all
  // cores); several processes get no render threads unless asked, as they already fill the cores.
  if (merged.renderThreads < 0) {
    const explicit = env['TESSERA_RENDER_THREADS'];
    merged.renderThreads = explicit !== undefined ? Math.min(64, Math.max(0, int('TESSERA_RENDER_THREADS', 0))) : merged.workers > 1 ? 0 : os.availableParallelism();
  }
  return merged;
}
