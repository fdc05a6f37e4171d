/**
 * Settings, from TESSERA_* environment variables (command-line flags override a few), and from a
 * settings file of the same names (`tessera serve --config FILE` or TESSERA_CONFIG) for what the
 * environment leaves unset.
 */
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { z } from 'zod';
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
  /** Tile requests made at once (0: no limit); the others wait in order (concurrency.ts, AdmissionGate). */
  tileRequests: number;
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
  /** Below a mosaic's minzoom, how long a tile waits for its assets before it is made of those read (0: no deadline). */
  mosaicLowZoomDeadlineMs: number;
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
  /** Take the scheme and host of generated URLs from X-Forwarded-* (set only behind a trusted proxy). */
  trustProxy: boolean;
  /** The path prefix tessera is served under behind a proxy ('' or '/prefix'; TiTiler's root_path). */
  rootPath: string;
  /** Bytes of rendered tiles kept in this process (0: none). */
  tileCacheBytes: number;
  /** A Redis (or Valkey) URL for a tile cache shared by replicas, or undefined. */
  cacheUrl: string | undefined;
  /** Seconds a cached tile is kept. */
  cacheTtlSeconds: number;
  /** An event-loop stall longer than this is logged with the requests in flight (api/watchdog.ts). */
  stallWarnMs: number;
}

/** Every setting: its environment name (and the TiTiler 0.18 name it also answers to), its
 * validation (zod), its default and what it does. `loadSettings` reads them, `tessera serve --help`
 * lists them, and names starting with TESSERA_ that are not here are warned about at start. */
interface SettingSpec {
  env: string;
  /** TiTiler's name for the same setting, read when tessera's is not set. */
  alias?: string;
  /** The value's text (trimmed) to its value; failures name what was expected. */
  schema: z.ZodType;
  /** The default, shown in --help. */
  shown: string;
  doc: string;
}

const TRUTHY = ['1', 'true', 'yes', 'on', 't', 'y'];
const FALSY = ['0', 'false', 'no', 'off', 'f', 'n'];
/** A boolean as operators write it: 1/0, true/false, yes/no, on/off, t/f, y/n (any case). */
const boolean = z.stringbool({ truthy: TRUTHY, falsy: FALSY, case: 'insensitive', error: `expected one of ${[...TRUTHY, ...FALSY].join(', ')}` });
const whole = (min: number, max = Number.MAX_SAFE_INTEGER): z.ZodType<number> =>
  z
    .string()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `expected at least ${min}`).max(max, `expected at most ${max}`));
const text = z.string();
const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0),
);
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** A basemap tile template: absolute http(s) or a path on this server, with {z}, {x} and {y}. */
const basemap = z
  .string()
  .refine(
    (v) => v === '' || (/^(https?:\/\/|\/)/.test(v) && ['{z}', '{x}', '{y}'].every((p) => v.includes(p))),
    'expected an http(s) URL or a path with {z}, {x} and {y}',
  );

const cores = os.availableParallelism();

export const SETTINGS = {
  host: { env: 'TESSERA_HOST', schema: text, shown: '127.0.0.1', doc: 'address to listen on (--host)' },
  port: { env: 'TESSERA_PORT', schema: whole(0, 65535), shown: '8000', doc: 'port to listen on (--port)' },
  workers: { env: 'TESSERA_WORKERS', schema: whole(1, 64), shown: '1', doc: 'server processes sharing the port (--workers)' },
  renderThreads: {
    env: 'TESSERA_RENDER_THREADS',
    schema: whole(0, 64),
    shown: 'cores (0 with several workers)',
    doc: 'threads that post-process and encode images (--render-threads)',
  },
  largeRequests: { env: 'TESSERA_LARGE_REQUESTS', schema: whole(1), shown: 'cores', doc: 'whole-image requests (previews, parts, statistics) running at once' },
  tileRequests: {
    env: 'TESSERA_TILE_REQUESTS',
    schema: whole(0),
    shown: '3 × cores',
    doc: 'tile requests made at once, the others waiting in order (0: no limit)',
  },
  maxImageBytes: { env: 'TESSERA_MAX_IMAGE_BYTES', schema: whole(1), shown: 'memory/8, at most 1 GiB', doc: 'bytes whole-image requests may hold together' },
  cacheControl: {
    env: 'TESSERA_CACHE_CONTROL',
    alias: 'TITILER_API_CACHECONTROL',
    schema: text,
    shown: 'public, max-age=3600',
    doc: 'Cache-Control of successful GET/HEAD answers',
  },
  corsOrigins: { env: 'TESSERA_CORS_ORIGINS', alias: 'TITILER_API_CORS_ORIGINS', schema: commaList, shown: '*', doc: 'allowed CORS origins, comma list' },
  allowedLocalRoots: { env: 'TESSERA_ALLOWED_LOCAL_ROOTS', schema: commaList, shown: 'none', doc: 'local folders `url` may point into' },
  allowedHosts: { env: 'TESSERA_ALLOWED_HOSTS', schema: commaList, shown: 'any', doc: 'upstream hosts allowed (example.com, *.example.com)' },
  deniedHosts: { env: 'TESSERA_DENIED_HOSTS', schema: commaList, shown: 'none', doc: 'upstream hosts refused' },
  allowedNetworks: { env: 'TESSERA_ALLOWED_NETWORKS', schema: commaList, shown: 'public unicast only', doc: 'non-public CIDRs upstream connections may reach' },
  allowedDrivers: { env: 'TESSERA_ALLOWED_DRIVERS', schema: commaList, shown: 'GTiff', doc: 'GDAL drivers rasters may be opened with' },
  upstreamConnectTimeoutMs: { env: 'TESSERA_UPSTREAM_CONNECT_TIMEOUT_MS', schema: whole(0), shown: '5000', doc: 'upstream connect timeout' },
  upstreamTimeoutMs: { env: 'TESSERA_UPSTREAM_TIMEOUT_MS', schema: whole(0), shown: '15000', doc: 'upstream answer timeout' },
  upstreamGateway: { env: 'TESSERA_UPSTREAM_GATEWAY', schema: boolean, shown: 'true', doc: "GDAL reads through tessera's policy-checking gateway" },
  maxDocumentBytes: { env: 'TESSERA_MAX_DOCUMENT_BYTES', schema: whole(0), shown: '33554432', doc: 'largest STAC item or MosaicJSON' },
  maxUpstreamBytes: { env: 'TESSERA_MAX_UPSTREAM_BYTES', schema: whole(1), shown: '268435456', doc: 'bytes one request may fetch upstream' },
  requestTimeoutMs: { env: 'TESSERA_REQUEST_TIMEOUT_MS', schema: whole(0), shown: '30000', doc: 'deadline of a request' },
  documentCacheTtlMs: { env: 'TESSERA_DOCUMENT_CACHE_TTL_MS', schema: whole(0), shown: '300000', doc: 'how long parsed documents are kept' },
  documentCacheSize: { env: 'TESSERA_DOCUMENT_CACHE_SIZE', schema: whole(0), shown: '512', doc: 'parsed documents kept' },
  handlesPerSource: { env: 'TESSERA_HANDLES_PER_SOURCE', schema: whole(1), shown: 'max(4, cores)', doc: 'GDAL handles per raster' },
  maxHandles: { env: 'TESSERA_MAX_HANDLES', schema: whole(1), shown: '256', doc: 'GDAL handles in total' },
  maxOutputPixels: { env: 'TESSERA_MAX_OUTPUT_PIXELS', schema: whole(0), shown: '67108864', doc: 'largest output image (width × height × bands)' },
  maxSourcePixels: { env: 'TESSERA_MAX_SOURCE_PIXELS', schema: whole(0), shown: '268435456', doc: 'source pixels one request may read' },
  mosaicAssetsHeader: { env: 'TESSERA_MOSAIC_ASSETS_HEADER', schema: boolean, shown: 'true', doc: 'send X-Assets on mosaic tiles' },
  mosaicConcurrency: { env: 'TESSERA_MOSAIC_CONCURRENCY', schema: whole(1), shown: '8', doc: 'asset reads in flight per mosaic request' },
  mosaicLowZoomDeadlineMs: {
    env: 'TESSERA_MOSAIC_LOW_ZOOM_DEADLINE_MS',
    schema: whole(0),
    shown: '2000',
    doc: 'below a mosaic minzoom, a tile waits this long for its assets, then shows those read (X-Tessera-Partial, not cached); 0: no deadline',
  },
  mosaicStrictZoom: { env: 'TESSERA_MOSAIC_STRICT_ZOOM', schema: boolean, shown: 'false', doc: 'refuse mosaic tiles outside its zoom range' },
  demoDir: { env: 'TESSERA_DEMO_DIR', schema: text, shown: 'none', doc: 'demo data served under /demo/ (--demo)' },
  basemapUrl: { env: 'TESSERA_BASEMAP_URL', schema: basemap, shown: 'none', doc: 'XYZ template of a basemap under the maps' },
  basemapAttribution: { env: 'TESSERA_BASEMAP_ATTRIBUTION', schema: text, shown: 'none', doc: "the basemap's attribution (HTML)" },
  pngLevel: { env: 'TESSERA_PNG_LEVEL', schema: whole(0, 9), shown: String(DEFAULT_PNG_LEVEL), doc: 'zlib level of png output' },
  logLevel: {
    env: 'TESSERA_LOG_LEVEL',
    schema: z
      .string()
      .toLowerCase()
      .pipe(z.enum(LOG_LEVELS, `expected one of ${LOG_LEVELS.join(', ')}`)),
    shown: 'info',
    doc: 'log level',
  },
  shutdownDelayMs: { env: 'TESSERA_SHUTDOWN_DELAY_MS', schema: whole(0), shown: '0', doc: 'on SIGTERM, /readyz says 503 this long before closing' },
  shutdownGraceMs: { env: 'TESSERA_SHUTDOWN_GRACE_MS', schema: whole(0), shown: '10000', doc: 'then requests in flight may take this long' },
  maxInFlight: { env: 'TESSERA_MAX_QUEUE', schema: whole(1), shown: '1024', doc: 'requests in flight past which new ones get 503' },
  accessToken: { env: 'TESSERA_ACCESS_TOKEN', alias: 'TITILER_API_GLOBAL_ACCESS_TOKEN', schema: text, shown: 'none', doc: '?access_token= every route needs' },
  disableCog: { env: 'TESSERA_DISABLE_COG', alias: 'TITILER_API_DISABLE_COG', schema: boolean, shown: 'false', doc: 'leave /cog out' },
  disableStac: { env: 'TESSERA_DISABLE_STAC', alias: 'TITILER_API_DISABLE_STAC', schema: boolean, shown: 'false', doc: 'leave /stac out' },
  disableMosaic: { env: 'TESSERA_DISABLE_MOSAIC', alias: 'TITILER_API_DISABLE_MOSAIC', schema: boolean, shown: 'false', doc: 'leave /mosaicjson out' },
  rootPath: {
    env: 'TESSERA_ROOT_PATH',
    alias: 'TITILER_API_ROOT_PATH',
    schema: z
      .string()
      .transform((v) => v.replace(/\/+$/, ''))
      .pipe(z.string().regex(/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/, 'expected a path such as /tiles (or nothing)')),
    shown: 'none',
    doc: 'path prefix tessera is served under behind a proxy: URLs in TileJSON, WMTS and pages carry it',
  },
  tileCacheBytes: { env: 'TESSERA_TILE_CACHE_BYTES', schema: whole(0), shown: '67108864', doc: 'bytes of rendered tiles kept in this process (0: none)' },
  cacheUrl: {
    env: 'TESSERA_CACHE_URL',
    schema: z.string().regex(/^rediss?:\/\/[^\s]+$/, 'expected redis://host:port/db (or rediss://)'),
    shown: 'none',
    doc: 'Redis/Valkey URL of a tile cache shared by the replicas',
  },
  cacheTtlSeconds: { env: 'TESSERA_CACHE_TTL', schema: whole(1), shown: '300', doc: 'seconds a cached tile is kept' },
  trustProxy: { env: 'TESSERA_TRUST_PROXY', schema: boolean, shown: 'false', doc: 'take scheme and host from X-Forwarded-* (behind a proxy)' },
  stallWarnMs: { env: 'TESSERA_STALL_WARN_MS', schema: whole(1), shown: '200', doc: 'event-loop stalls longer than this are logged' },
} satisfies Record<string, SettingSpec>;

/** TESSERA_* names that are not server settings (the settings file's, the install script's, the tests'). */
const OTHER_NAMES = new Set(['TESSERA_CONFIG', 'TESSERA_INSTALL_BROWSER', 'TESSERA_FIXTURES']);

function knownNames(): Set<string> {
  const known = new Set<string>();
  for (const spec of Object.values(SETTINGS) as SettingSpec[]) {
    known.add(spec.env);
    if (spec.alias) known.add(spec.alias);
  }
  return known;
}

/**
 * Reads a settings file into `env` for every setting `env` leaves unset: the environment wins, so
 * one value can be changed for one replica or container without editing the file. The file has
 * the environment's names in the `.env` syntax that docker's --env-file, compose's env_file and
 * systemd's EnvironmentFile read (`NAME=value`, `#` comments, quotes; Node's own parser). A name
 * that is not a setting is an error here, unlike in the environment (which holds everything else
 * too): a misspelt line in a file written for tessera must not be ignored. Returns the names taken.
 */
export function applySettingsFile(file: string, env: NodeJS.ProcessEnv = process.env): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the settings file '${file}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const values = parseEnv(text);
  const known = knownNames();
  const unknown = Object.keys(values).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(
      `${file}: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not a setting' : 'are not settings'} tessera knows (see tessera serve --help)`,
    );
  }
  const taken: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    taken.push(name);
  }
  return taken;
}

/** The value of one setting from the environment, or undefined when unset; a bad value throws naming it. */
function read<T>(spec: SettingSpec, env: NodeJS.ProcessEnv): T | undefined {
  for (const name of [spec.env, spec.alias]) {
    if (!name) continue;
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const parsed = spec.schema.safeParse(raw.trim());
    if (!parsed.success) throw new Error(`${name}: ${parsed.error.issues[0]?.message ?? 'invalid value'}, got '${raw}'`);
    return parsed.data as T;
  }
  return undefined;
}

/** Names in the environment that look like tessera's (or TiTiler's) but are not settings it knows. */
export function unknownSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = new Set<string>([...OTHER_NAMES, ...knownNames()]);
  return Object.keys(env)
    .filter((name) => (name.startsWith('TESSERA_') || name.startsWith('TITILER_API_')) && !known.has(name))
    .sort();
}

/** The settings, one line each, for `tessera serve --help`. */
export function settingsHelp(): string {
  return (Object.values(SETTINGS) as SettingSpec[])
    .map((s) => `  ${s.env}${s.alias ? ` (or ${s.alias})` : ''}\n      ${s.doc} [default: ${s.shown}]`)
    .join('\n');
}

export function loadSettings(overrides: Partial<Settings> = {}, env: NodeJS.ProcessEnv = process.env): Settings {
  const get = <K extends keyof typeof SETTINGS>(key: K): z.output<(typeof SETTINGS)[K]['schema']> | undefined => read(SETTINGS[key], env);
  const families: Settings['disabledFamilies'] = [];
  if (get('disableCog')) families.push('cog');
  if (get('disableStac')) families.push('stac');
  if (get('disableMosaic')) families.push('mosaicjson');
  const settings: Settings = {
    host: get('host') ?? '127.0.0.1',
    port: get('port') ?? 8000,
    workers: get('workers') ?? 1,
    renderThreads: -1,
    largeRequests: get('largeRequests') ?? cores,
    tileRequests: get('tileRequests') ?? 3 * cores,
    maxImageBytes: get('maxImageBytes') ?? defaultImageBytes(),
    cacheControl: get('cacheControl') ?? 'public, max-age=3600',
    corsOrigins: get('corsOrigins') ?? ['*'],
    allowedLocalRoots: get('allowedLocalRoots') ?? [],
    allowedHosts: get('allowedHosts') ?? [],
    deniedHosts: get('deniedHosts') ?? [],
    allowedNetworks: get('allowedNetworks') ?? [],
    allowedDrivers: get('allowedDrivers') ?? ['GTiff'],
    upstreamConnectTimeoutMs: get('upstreamConnectTimeoutMs') ?? 5_000,
    upstreamTimeoutMs: get('upstreamTimeoutMs') ?? 15_000,
    upstreamGateway: get('upstreamGateway') ?? true,
    maxDocumentBytes: get('maxDocumentBytes') ?? 32 * 1024 * 1024,
    maxUpstreamBytes: get('maxUpstreamBytes') ?? 256 * 1024 * 1024,
    requestTimeoutMs: get('requestTimeoutMs') ?? 30_000,
    documentCacheTtlMs: get('documentCacheTtlMs') ?? 300_000,
    documentCacheSize: get('documentCacheSize') ?? 512,
    handlesPerSource: get('handlesPerSource') ?? Math.max(4, cores),
    maxHandles: get('maxHandles') ?? 256,
    maxOutputPixels: get('maxOutputPixels') ?? 64 * 1024 * 1024,
    maxSourcePixels: get('maxSourcePixels') ?? 256 * 1024 * 1024,
    mosaicAssetsHeader: get('mosaicAssetsHeader') ?? true,
    mosaicConcurrency: get('mosaicConcurrency') ?? 8,
    mosaicLowZoomDeadlineMs: get('mosaicLowZoomDeadlineMs') ?? 2000,
    mosaicStrictZoom: get('mosaicStrictZoom') ?? false,
    demoDir: get('demoDir') || undefined,
    basemapUrl: get('basemapUrl') ?? '',
    basemapAttribution: get('basemapAttribution') ?? '',
    pngLevel: get('pngLevel') ?? DEFAULT_PNG_LEVEL,
    logLevel: get('logLevel') ?? 'info',
    shutdownDelayMs: get('shutdownDelayMs') ?? 0,
    shutdownGraceMs: get('shutdownGraceMs') ?? 10_000,
    maxInFlight: get('maxInFlight') ?? 1024,
    accessToken: get('accessToken') || undefined,
    disabledFamilies: families,
    trustProxy: get('trustProxy') ?? false,
    rootPath: get('rootPath') ?? '',
    tileCacheBytes: get('tileCacheBytes') ?? 64 * 1024 * 1024,
    cacheUrl: get('cacheUrl') || undefined,
    cacheTtlSeconds: get('cacheTtlSeconds') ?? 300,
    stallWarnMs: get('stallWarnMs') ?? 200,
  };
  const merged = { ...settings, ...overrides };
  // One process with a render thread per core is the default (one set of GDAL caches for all
  // cores); several processes get no render threads unless asked, as they already fill the cores.
  if (merged.renderThreads < 0) merged.renderThreads = get('renderThreads') ?? (merged.workers > 1 ? 0 : cores);
  return merged;
}
