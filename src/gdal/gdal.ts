/**
 * The GDAL binding and its process-wide configuration. Every module reaches GDAL through here so the
 * settings below are in force before the first dataset is opened.
 *
 * Defaults follow the COG-over-HTTP consensus (TiTiler's performance notes): no directory listing on
 * open, merged consecutive ranges, a 32 KiB first read, per-handle and global curl caches. Any of them
 * can be overridden by setting the same name in the environment, which GDAL reads itself, except the
 * few that safety depends on (ENFORCED).
 */
import { isMainThread } from 'node:worker_threads';
import gdal from 'gdal-async';

const DEFAULTS: Record<string, string> = {
  GDAL_HTTP_MERGE_CONSECUTIVE_RANGES: 'YES',
  GDAL_INGESTED_BYTES_AT_OPEN: '32768',
  VSI_CACHE: 'TRUE',
  VSI_CACHE_SIZE: String(5 * 1024 * 1024),
  CPL_VSIL_CURL_CACHE_SIZE: String(200 * 1024 * 1024),
  CPL_VSIL_CURL_CHUNK_SIZE: String(64 * 1024),
  GDAL_CACHEMAX: '200',
  GDAL_BAND_BLOCK_CACHE: 'HASHSET',
  GDAL_HTTP_MULTIPLEX: 'YES',
  // HTTP/2 only over TLS: on plain http curl would try an h2c upgrade some servers never answer.
  GDAL_HTTP_VERSION: '2TLS',
  GDAL_HTTP_MAX_RETRY: '0',
  PROJ_NETWORK: 'OFF',
  // Coordinates are always x/y (lon/lat) inside tessera, whatever the CRS's axis order.
  OSR_DEFAULT_AXIS_MAPPING_STRATEGY: 'TRADITIONAL_GIS_ORDER',
};

/**
 * Settings that keep a remote file from making GDAL read other files, applied whatever the
 * environment says: no directory listing and no sibling files (.aux.xml, .ovr, .msk, world files,
 * RPC/IMD metadata are only looked for among a directory's listed files, and the list is empty),
 * no PAM side files read or written.
 */
const ENFORCED: Record<string, string> = {
  GDAL_DISABLE_READDIR_ON_OPEN: 'EMPTY_DIR',
  GDAL_PAM_ENABLED: 'NO',
};

let configured = false;

/** Applies the defaults (once) and the upstream timeouts, in seconds as GDAL wants them. */
export function configureGdal(opts: { connectTimeoutMs: number; timeoutMs: number }): void {
  const values: Record<string, string> = {
    ...DEFAULTS,
    GDAL_HTTP_CONNECTTIMEOUT: String(Math.max(1, Math.ceil(opts.connectTimeoutMs / 1000))),
    GDAL_HTTP_TIMEOUT: String(Math.max(1, Math.ceil(opts.timeoutMs / 1000))),
  };
  for (const [key, value] of Object.entries(values)) {
    if (process.env[key] === undefined) gdal.config.set(key, value);
  }
  for (const [key, value] of Object.entries(ENFORCED)) gdal.config.set(key, value);
  // GDAL logs errors to stderr by default; tessera turns them into TesseraErrors instead.
  gdal.quiet();
  configured = true;
}

if (!configured) configureGdal({ connectTimeoutMs: 5_000, timeoutMs: 15_000 });

/**
 * Bytes /vsicurl/ asks for on its first read of a file: GDAL_INGESTED_BYTES_AT_OPEN (at least the
 * 1 KiB header GDALOpenInfo reads) rounded up to whole download chunks, as cpl_vsil_curl.cpp does.
 */
export function firstReadBytes(): number {
  const ingested = Math.max(1024, Number(gdal.config.get('GDAL_INGESTED_BYTES_AT_OPEN') ?? 1024) || 1024);
  const chunk = curlChunkBytes();
  return Math.ceil(ingested / chunk) * chunk;
}

/** The size of /vsicurl/'s download chunks (CPL_VSIL_CURL_CHUNK_SIZE): a lone block is read in whole chunks. */
export function curlChunkBytes(): number {
  return Math.max(1024, Number(gdal.config.get('CPL_VSIL_CURL_CHUNK_SIZE') ?? 16384) || 16384);
}

export { gdal };
export type Dataset = gdal.Dataset;
export type RasterBand = gdal.RasterBand;
export type SpatialReference = gdal.SpatialReference;

/**
 * A process that loaded GDAL ends through process.exit, even when it ends by itself. At a natural
 * exit Node tears the V8 isolate down, and gdal-async's geometry finalisers, run during that
 * teardown, call back into the half-destroyed isolate: a test file that warps segfaulted at exit in
 * about one run in twenty (backtrace: LineString::~LineString → AdjustAmountOfExternalAllocatedMemory
 * from IsolateData::~IsolateData). process.exit ends the process without that teardown, with the same
 * exit code. Registered once, and only on the main thread (in a worker process.exit ends the thread).
 */
if (isMainThread && !process.listeners('exit').some((l) => l.name === 'exitBeforeIsolateTeardown')) {
  process.on('exit', function exitBeforeIsolateTeardown(code) {
    process.exit(code);
  });
}
