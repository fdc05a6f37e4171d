/**
 * Every setting of tessera, declared once: its environment name (with TiTiler 0.18's name and
 * tessera's former names, also read), the command-line flag that overrides it, its kind of value
 * with bounds (src/config/kinds.ts), its default (a value, or one worked out from the machine) and
 * what it does. Everything else is derived from this list: reading the environment, a settings file
 * and flags, and the `Settings` type (src/config.ts), `tessera serve --help`'s list and the tables
 * in docs/configuration.md (src/config/docs.ts, written by `make docs`). The model is TiTiler's
 * pydantic-settings classes and martin's config structs: one typed declaration per setting.
 *
 * To add a setting: add its entry to the group it belongs to, read `settings.<key>` where it is
 * used, and run `make docs`.
 */
import { DEFAULT_PNG_LEVEL } from '../image/encode/png.js';
import { defaultImageBytes } from '../image/whole-image-gate.js';
import { boolean, folder, list, oneOf, optional, pathPrefix, redisUrl, text, tileTemplate, whole, type Kind } from './kinds.js';

/** What defaults worked out at start may depend on: the machine, and how many processes share it. */
export interface DefaultContext {
  /** `os.availableParallelism()`. */
  cores: number;
  /** The TESSERA_WORKERS setting, resolved before any other default is worked out. */
  workers: number;
}

/** A default worked out at start, with the words the docs show for it (`3 × cores`). */
export class Computed<T> {
  constructor(
    readonly text: string,
    readonly compute: (context: DefaultContext) => T,
  ) {}
}

export interface Setting<T> {
  /** Its environment variable (and settings-file) name. */
  readonly env: string;
  /** TiTiler 0.18's name for the same setting, read when tessera's is unset. */
  readonly alias?: string;
  /** Names tessera read it under before, still read (after `env`, before `alias`). */
  readonly formerly?: readonly string[];
  /** The `tessera serve` flag that overrides it, as commander takes it (`--port <port>`). */
  readonly flag?: `--${string} <${string}>`;
  readonly kind: Kind<T>;
  readonly default: T | Computed<T>;
  /** What it does, in one line (--help shows this). */
  readonly description: string;
  /** More, for docs/configuration.md. */
  readonly details?: string;
}

/** Declares one setting (the function only ties the default's type to the kind's). */
function setting<T>(spec: Setting<T>): Setting<T> {
  return spec;
}

const SERVER = {
  host: setting({
    env: 'TESSERA_HOST',
    flag: '--host <host>',
    kind: text,
    default: '127.0.0.1',
    description: 'address to listen on (0.0.0.0: every interface)',
  }),
  port: setting({ env: 'TESSERA_PORT', flag: '--port <port>', kind: whole(0, 65535), default: 8000, description: 'port to listen on (0: any free port)' }),
  workers: setting({
    env: 'TESSERA_WORKERS',
    flag: '--workers <n>',
    kind: whole(1, 64),
    default: 1,
    description: 'server processes sharing the port (src/cluster.ts)',
    details:
      "Caches, dataset handles and GDAL settings such as `GDAL_CACHEMAX` are per process, as with TiTiler's uvicorn workers, so each added worker costs its own caches' memory.",
  }),
  renderThreads: setting({
    env: 'TESSERA_RENDER_THREADS',
    flag: '--render-threads <n>',
    kind: whole(0, 64),
    default: new Computed('cores (0 with several workers)', ({ cores, workers }) => (workers > 1 ? 0 : cores)),
    description: 'worker threads per process that post-process and encode images (src/image/render-threads.ts); 0: the event loop does it',
    details: 'One process with a render thread per core uses every core with one set of GDAL caches and handles.',
  }),
  demoDir: setting({
    env: 'TESSERA_DEMO_DIR',
    flag: '--demo <dir>',
    kind: optional(folder),
    default: undefined,
    description: 'folder of the demo data written by `tessera demo`, served under /demo/',
  }),
  rootPath: setting({
    env: 'TESSERA_ROOT_PATH',
    alias: 'TITILER_API_ROOT_PATH',
    kind: pathPrefix,
    default: '',
    description: 'the path prefix a proxy serves tessera under (/tiles): URLs in TileJSON, WMTS and the pages carry it',
    details:
      'Pages link relative to it (`<base>`); a request that still carries the prefix routes too. deploy/nginx.conf is a tested example with two replicas.',
  }),
  trustProxy: setting({
    env: 'TESSERA_TRUST_PROXY',
    kind: boolean,
    default: false,
    description: 'take the scheme and host of generated URLs (TileJSON, WMTS) from X-Forwarded-*; set it only behind a proxy you trust',
  }),
};

const HTTP = {
  cacheControl: setting({
    env: 'TESSERA_CACHE_CONTROL',
    alias: 'TITILER_API_CACHECONTROL',
    kind: text,
    default: 'public, max-age=3600',
    description: 'Cache-Control of successful GET/HEAD answers (not /healthz); errors get no-store',
  }),
  corsOrigins: setting({ env: 'TESSERA_CORS_ORIGINS', alias: 'TITILER_API_CORS_ORIGINS', kind: list, default: ['*'], description: 'origins allowed by CORS' }),
  accessToken: setting({
    env: 'TESSERA_ACCESS_TOKEN',
    alias: 'TITILER_API_GLOBAL_ACCESS_TOKEN',
    kind: optional(text),
    default: undefined,
    description: 'when set, every route but /api, /api.html and /static/ needs ?access_token= equal to it',
    details: 'Without it or with another value: 401 `Missing`/`Invalid`, as TiTiler answers. TileJSON and WMTS tile URLs and the pages pass it on.',
  }),
};

const FAMILIES = {
  disableCog: setting({
    env: 'TESSERA_DISABLE_COG',
    alias: 'TITILER_API_DISABLE_COG',
    kind: boolean,
    default: false,
    description: 'leave the /cog routes out',
  }),
  disableStac: setting({
    env: 'TESSERA_DISABLE_STAC',
    alias: 'TITILER_API_DISABLE_STAC',
    kind: boolean,
    default: false,
    description: 'leave the /stac routes out',
  }),
  disableMosaic: setting({
    env: 'TESSERA_DISABLE_MOSAIC',
    alias: 'TITILER_API_DISABLE_MOSAIC',
    kind: boolean,
    default: false,
    description: 'leave the /mosaicjson routes out',
  }),
  titilerApi: setting<'0.18' | '2'>({
    env: 'TESSERA_TITILER_API',
    kind: oneOf(['0.18', '2']),
    default: '0.18',
    description: 'which TiTiler generation answers where the two collide (`/…/map`, `/colorMaps`, statistics keys …)',
    details:
      'Requests only one generation sends (`tilesize=`, `assets=a|bidx=1`, `/conformance`, the OGC tileset lists, `/map.html` …) are answered whatever this says; where the same URL means different things in TiTiler 0.18.10 and 2.4.0, this chooses, everywhere including `/api`.',
  }),
};

const UPSTREAM = {
  allowedLocalRoots: setting({
    env: 'TESSERA_ALLOWED_LOCAL_ROOTS',
    kind: list,
    default: [],
    description: 'local folders `url` may point into (paths, file://); none: no local file at all',
  }),
  allowedHosts: setting({
    env: 'TESSERA_ALLOWED_HOSTS',
    kind: list,
    default: [],
    description: 'upstream hosts allowed (example.com, *.example.com); none: any host',
  }),
  deniedHosts: setting({ env: 'TESSERA_DENIED_HOSTS', kind: list, default: [], description: 'upstream hosts refused (example.com, *.example.com)' }),
  allowedNetworks: setting({
    env: 'TESSERA_ALLOWED_NETWORKS',
    kind: list,
    default: [],
    description: 'non-public networks (CIDRs) upstream connections may reach (src/upstream/network-policy.ts); none: public unicast addresses only',
    details: '`10.20.0.0/16` for an internal object store; `make run` sets loopback for its demo.',
  }),
  allowedBuckets: setting({
    env: 'TESSERA_ALLOWED_BUCKETS',
    kind: list,
    default: [],
    description:
      'buckets, or bucket/prefixes, that s3://, gs:// and az:// URLs may name (s3://my-bucket, s3://sentinel-cogs/sentinel-s2-l2a-cogs/, az://container); none: no object URL at all',
    details:
      "The server's credentials are lent only to these: a URL naming any other bucket is refused with a 400 that names this setting, before anything is signed or sent ([docs/object-stores.md](object-stores.md)).",
  }),
  s3Region: setting({
    env: 'TESSERA_S3_REGION',
    alias: 'AWS_REGION',
    kind: text,
    default: 'us-east-1',
    description: 'the S3 region requests are signed for, and whose endpoint s3:// URLs reach without TESSERA_S3_ENDPOINT',
  }),
  s3Endpoint: setting({
    env: 'TESSERA_S3_ENDPOINT',
    alias: 'AWS_S3_ENDPOINT',
    kind: text,
    default: '',
    description: 'host[:port] (or URL) of an S3-compatible store (MinIO, Ceph, R2) that s3:// URLs are read from; none: AWS',
    details: 'Its address passes the network policy like any other: a store on a private network needs `TESSERA_ALLOWED_NETWORKS` too.',
  }),
  s3Https: setting({
    env: 'TESSERA_S3_HTTPS',
    alias: 'AWS_HTTPS',
    kind: boolean,
    default: true,
    description: 'reach TESSERA_S3_ENDPOINT over https (off: http), as GDAL reads AWS_HTTPS',
  }),
  s3VirtualHosting: setting({
    env: 'TESSERA_S3_VIRTUAL_HOSTING',
    alias: 'AWS_VIRTUAL_HOSTING',
    kind: boolean,
    default: true,
    description: 'address buckets as host names (bucket.endpoint); off: path-style (endpoint/bucket), which most S3-compatible stores want',
  }),
  s3RequestPayer: setting({
    env: 'TESSERA_S3_REQUEST_PAYER',
    alias: 'AWS_REQUEST_PAYER',
    kind: text,
    default: '',
    description: '`requester`: reads of requester-pays buckets are billed to these credentials (the x-amz-request-payer header)',
  }),
  s3NoSignRequest: setting({
    env: 'TESSERA_S3_NO_SIGN_REQUEST',
    alias: 'AWS_NO_SIGN_REQUEST',
    kind: boolean,
    default: false,
    description: 'read s3:// URLs unsigned (public buckets), without looking for credentials',
  }),
  gsEndpoint: setting({
    env: 'TESSERA_GS_ENDPOINT',
    alias: 'CPL_GS_ENDPOINT',
    kind: text,
    default: 'https://storage.googleapis.com',
    description:
      "the address of Google Cloud Storage's XML API that gs:// URLs are read from (HMAC keys GS_ACCESS_KEY_ID, GS_SECRET_ACCESS_KEY, or a service account's OAuth tokens, GOOGLE_APPLICATION_CREDENTIALS)",
  }),
  gsNoSignRequest: setting({
    env: 'TESSERA_GS_NO_SIGN_REQUEST',
    alias: 'GS_NO_SIGN_REQUEST',
    kind: boolean,
    default: false,
    description: 'read gs:// URLs unsigned (public buckets), without credentials',
  }),
  azureAccount: setting({
    env: 'TESSERA_AZURE_STORAGE_ACCOUNT',
    alias: 'AZURE_STORAGE_ACCOUNT',
    kind: text,
    default: '',
    description:
      "the Azure storage account az://container/blob URLs are read from (credentials: AZURE_STORAGE_SAS_TOKEN, AZURE_STORAGE_ACCESS_KEY or AZURE_STORAGE_CONNECTION_STRING); none: the connection string's",
    details:
      '`https://ACCOUNT.blob.core.windows.net/container/blob` URLs of this account (and URLs at `TESSERA_AZURE_BLOB_ENDPOINT`) are read as `az://container/blob`, with these credentials, when `TESSERA_ALLOWED_BUCKETS` names the container; any other is an ordinary https URL.',
  }),
  azureBlobEndpoint: setting({
    env: 'TESSERA_AZURE_BLOB_ENDPOINT',
    kind: text,
    default: '',
    description:
      "the Blob service's URL (an emulator, a sovereign cloud); none: the connection string's BlobEndpoint, else https://ACCOUNT.blob.core.windows.net",
  }),
  azureNoSignRequest: setting({
    env: 'TESSERA_AZURE_NO_SIGN_REQUEST',
    alias: 'AZURE_NO_SIGN_REQUEST',
    kind: boolean,
    default: false,
    description: 'read az:// URLs without a SAS (public containers)',
  }),
  allowedDrivers: setting({
    env: 'TESSERA_ALLOWED_DRIVERS',
    kind: list,
    default: ['GTiff'],
    description: 'GDAL drivers a raster may be opened with (a COG is a GeoTIFF); nothing else is ever opened',
    details: 'Adding `VRT` gives back arbitrary file reads.',
  }),
  upstreamGateway: setting({
    env: 'TESSERA_UPSTREAM_GATEWAY',
    kind: boolean,
    default: true,
    description: "GDAL reads remote rasters through tessera's loopback gateway (src/upstream/gateway.ts); off: GDAL reaches upstream itself",
    details:
      "Through the gateway a file opens in one upstream round trip instead of two, every connection and redirect passes the network and host policies, and bytes count against the request's budget. Turn it off only where GDAL must use an HTTP proxy (`http_proxy`); off weakens those guarantees.",
  }),
  upstreamConnectTimeoutMs: setting({
    env: 'TESSERA_UPSTREAM_CONNECT_TIMEOUT_MS',
    kind: whole(0, undefined, 'milliseconds'),
    default: 5_000,
    description: 'connect timeout of every upstream fetch (documents and raster ranges)',
  }),
  upstreamTimeoutMs: setting({
    env: 'TESSERA_UPSTREAM_TIMEOUT_MS',
    kind: whole(0, undefined, 'milliseconds'),
    default: 15_000,
    description: 'total timeout of every upstream fetch (documents and raster ranges)',
  }),
  maxUpstreamBytes: setting({
    env: 'TESSERA_MAX_UPSTREAM_BYTES',
    kind: whole(1, undefined, 'bytes'),
    default: 256 * 1024 * 1024,
    description: 'bytes one request may fetch from upstream, documents and raster reads together (src/upstream/budget.ts)',
  }),
  maxDocumentBytes: setting({
    env: 'TESSERA_MAX_DOCUMENT_BYTES',
    kind: whole(0, undefined, 'bytes'),
    default: 32 * 1024 * 1024,
    description: 'largest JSON document (STAC item, MosaicJSON) fetched',
  }),
};

const LIMITS = {
  requestTimeoutMs: setting({
    env: 'TESSERA_REQUEST_TIMEOUT_MS',
    kind: whole(0, undefined, 'milliseconds'),
    default: 30_000,
    description: 'deadline of a whole request (504 after it)',
  }),
  maxOutputPixels: setting({
    env: 'TESSERA_MAX_OUTPUT_PIXELS',
    kind: whole(0),
    default: 64 * 1024 * 1024,
    description: 'largest output image a request may ask for, in values (width × height × bands); above it 400 before reading',
  }),
  maxSourcePixels: setting({
    env: 'TESSERA_MAX_SOURCE_PIXELS',
    kind: whole(0),
    default: 256 * 1024 * 1024,
    description: 'source pixels one request may read (after the overview choice); above it 400 before reading',
  }),
  maxAssets: setting({
    env: 'TESSERA_MAX_ASSETS',
    kind: whole(1),
    default: 1024,
    description: "assets one read may open: a STAC item's assets, a mosaic's assets for one tile, point or bbox; above it 400 before any is opened",
  }),
  requestConcurrency: setting({
    env: 'TESSERA_REQUEST_CONCURRENCY',
    kind: whole(0),
    default: 8,
    description: 'GDAL calls (opens and reads) one request runs at once, the rest waiting their turn in order (src/upstream/budget.ts); 0: no limit',
    details:
      "So that one request naming hundreds of files cannot fill GDAL's thread pool (UV_THREADPOOL_SIZE, set by bin/tessera) and make every other request wait behind it. Calls a request queued and had not started when it ended are dropped, never run.",
  }),
  tileRequests: setting({
    env: 'TESSERA_TILE_REQUESTS',
    kind: whole(0),
    default: new Computed('3 × cores', ({ cores }) => 3 * cores),
    description: 'tiles made at once per process, the others waiting their turn in order (src/concurrency.ts); 0: no limit',
    details:
      'A client that leaves while its tile waits is dropped from the queue; a tile that waits on the upstream (a file to open, blocks not read yet) gives its turn back meanwhile, so cold tiles still wait on a slow store in parallel.',
  }),
  largeRequests: setting({
    env: 'TESSERA_LARGE_REQUESTS',
    kind: whole(1),
    default: new Computed('cores', ({ cores }) => cores),
    description: 'whole-image requests (previews, bbox/feature parts, statistics) running at once per process; more wait their turn',
  }),
  maxImageBytes: setting({
    env: 'TESSERA_MAX_IMAGE_BYTES',
    kind: whole(1, undefined, 'bytes'),
    default: new Computed('⅛ of memory, at most 1 GiB', () => defaultImageBytes()),
    description: 'bytes whole-image requests may hold together per process, estimated from their planned reads; more wait (src/image/whole-image-gate.ts)',
    details: 'A request larger than this runs alone.',
  }),
  handlesPerSource: setting({
    env: 'TESSERA_HANDLES_PER_SOURCE',
    kind: whole(1),
    default: new Computed('max(4, cores)', ({ cores }) => Math.max(4, cores)),
    description: 'open GDAL dataset handles per raster (a handle serves one read at a time)',
  }),
  maxHandles: setting({ env: 'TESSERA_MAX_HANDLES', kind: whole(1), default: 256, description: 'open GDAL dataset handles in total' }),
};

const LIFECYCLE = {
  shutdownDelayMs: setting({
    env: 'TESSERA_SHUTDOWN_DELAY_MS',
    kind: whole(0, undefined, 'milliseconds'),
    default: 0,
    description: 'on SIGTERM, /readyz answers 503 at once and the server stops accepting this long after (time for a load balancer to notice)',
    details: '5000 suits Kubernetes.',
  }),
  shutdownGraceMs: setting({
    env: 'TESSERA_SHUTDOWN_GRACE_MS',
    kind: whole(0, undefined, 'milliseconds'),
    default: 10_000,
    description: 'then how long requests in flight may take to finish before the process exits anyway',
    details: 'Exit status 0 when they all finished, 1 when cut short.',
  }),
  maxInFlight: setting({
    env: 'TESSERA_MAX_IN_FLIGHT',
    formerly: ['TESSERA_MAX_QUEUE'],
    kind: whole(1),
    default: 1024,
    description: 'requests in flight per process past which a new one gets 503 with Retry-After: 1 at once (/healthz, /readyz and /metrics always answer)',
  }),
  logLevel: setting({
    env: 'TESSERA_LOG_LEVEL',
    kind: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    description: 'log level; at info, one JSON line per request',
    details:
      'A request\'s line (`"msg":"request"`) has `reqId` (the caller\'s `X-Request-Id` when it is a token of up to 128 characters, else a UUID; always returned in `X-Request-Id`), `method`, `path` (never the query: it can carry tokens and signed URLs), `route`, `status`, `ms`, `bytesOut`, `upstreamRequests` and `upstreamBytes` (what the request fetched), `cache` (the tile cache\'s `hit`/`miss`, or null); a stack only for 5xx.',
  }),
  stallWarnMs: setting({
    env: 'TESSERA_STALL_WARN_MS',
    kind: whole(1, undefined, 'milliseconds'),
    default: 200,
    description: 'an event-loop stall longer than this is logged (warn) with the requests in flight (src/api/watchdog.ts)',
  }),
};

const CACHES = {
  documentCacheTtlMs: setting({
    env: 'TESSERA_DOCUMENT_CACHE_TTL_MS',
    kind: whole(0, undefined, 'milliseconds'),
    default: 300_000,
    description: 'how long parsed documents (STAC items, MosaicJSON) and raster metadata are kept',
  }),
  documentCacheSize: setting({
    env: 'TESSERA_DOCUMENT_CACHE_SIZE',
    kind: whole(0),
    default: 512,
    description: 'parsed documents and raster metadata kept',
  }),
  tileCacheBytes: setting({
    env: 'TESSERA_TILE_CACHE_BYTES',
    kind: whole(0, undefined, 'bytes'),
    default: 64 * 1024 * 1024,
    description: 'bytes of rendered tiles kept in this process (least recently used out first); 0: none',
    details: 'A hit answers with `X-Cache: hit` before any other work; the key is the path and the sorted query without `access_token`.',
  }),
  cacheUrl: setting({
    env: 'TESSERA_CACHE_URL',
    kind: optional(redisUrl),
    default: undefined,
    description: 'Redis (or Valkey) URL of a second tile cache shared by every replica (redis://host:port/db)',
    details:
      'Each call is bounded (150 ms); with Redis down or slow, tiles are made without it (counted in `tessera_cache_errors_total`, one warning when it goes and one when it is back).',
  }),
  cacheTtlSeconds: setting({
    env: 'TESSERA_CACHE_TTL',
    kind: whole(1, undefined, 'seconds'),
    default: 300,
    description: 'how long a rendered tile stays in either tile cache',
  }),
};

const MOSAICS = {
  mosaicAssetsHeader: setting({
    env: 'TESSERA_MOSAIC_ASSETS_HEADER',
    kind: boolean,
    default: true,
    description: 'send X-Assets (the assets a mosaic tile used) with mosaic tiles',
  }),
  mosaicConcurrency: setting({ env: 'TESSERA_MOSAIC_CONCURRENCY', kind: whole(1), default: 8, description: 'asset reads in flight per mosaic request' }),
  mosaicLowZoomDeadlineMs: setting({
    env: 'TESSERA_MOSAIC_LOW_ZOOM_DEADLINE_MS',
    kind: whole(0, undefined, 'milliseconds'),
    default: 2000,
    description: "below a mosaic's minzoom, how long a tile waits for its assets before it is made of those read; 0: no deadline",
    details: 'Such a tile is marked `X-Tessera-Partial` and not cached.',
  }),
  mosaicStrictZoom: setting({
    env: 'TESSERA_MOSAIC_STRICT_ZOOM',
    kind: boolean,
    default: false,
    description: "refuse mosaic tiles outside the document's zoom range (TiTiler's MOSAIC_STRICT_ZOOM)",
  }),
};

const CATALOGUE = {
  pgstacDsn: setting({
    env: 'TESSERA_PGSTAC_DSN',
    alias: 'DATABASE_URL',
    kind: optional(text),
    default: undefined,
    description: 'the pgSTAC database (a libpq URI or key=value string): set, /searches serves tiles of STAC searches over it (docs/catalogue.md)',
    details:
      "What it leaves out comes from libpq's PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE, titiler-pgstac 3's names (`postgresql://` alone takes all of them from there). Unset: no /searches routes.",
  }),
  pgstacPoolSize: setting({
    env: 'TESSERA_PGSTAC_POOL_SIZE',
    alias: 'DB_MAX_CONN_SIZE',
    kind: whole(1, 1000),
    default: 10,
    description: 'connections to the pgSTAC database per process, opened on first use; more queries wait for one',
  }),
  pgstacPoolWarm: setting({
    env: 'TESSERA_PGSTAC_POOL_WARM',
    kind: whole(0, 1000),
    default: 6,
    description: 'connections to the pgSTAC database opened at start, before the server listens, and kept open: each has run a search once',
    details:
      "A new PostgreSQL connection pays for pgSTAC's search functions on its first search (compiling them, loading its caches): tens of milliseconds, paid by the first tiles a fresh process serves unless paid here (6: a browser's connections to one host). At most TESSERA_PGSTAC_POOL_SIZE; 0: none. Start waits for them at most 2 s, and never fails for them.",
  }),
  pgstacStatementTimeoutMs: setting({
    env: 'TESSERA_PGSTAC_STATEMENT_TIMEOUT_MS',
    kind: whole(100, undefined, 'milliseconds'),
    default: 5_000,
    description:
      'bound of every catalogue statement but item searches (which get their `time_limit` + 1 s) and of the wait for a connection; past it 503 with Retry-After',
  }),
  pgstacCacheTtlSeconds: setting({
    env: 'TESSERA_PGSTAC_CACHE_TTL',
    alias: 'TITILER_PGSTAC_CACHE_TTL',
    kind: whole(0, undefined, 'seconds'),
    default: 300,
    description: "how long a search's record and the items found for a tile, point or bbox are kept; 0: asked every time",
  }),
  pgstacCacheBytes: setting({
    env: 'TESSERA_PGSTAC_CACHE_BYTES',
    kind: whole(0, undefined, 'bytes'),
    default: 32 * 1024 * 1024,
    description: "bytes of pgSTAC's answers (items found per tile, point or bbox) kept in this process",
  }),
  pgstacScanLimit: setting({
    env: 'TESSERA_PGSTAC_SCAN_LIMIT',
    alias: 'TITILER_PGSTAC_SEARCH_SCAN_LIMIT',
    kind: whole(1),
    default: 10_000,
    description: 'default `scan_limit`: items pgSTAC looks at for one tile, point or bbox',
  }),
  pgstacItemsLimit: setting({
    env: 'TESSERA_PGSTAC_ITEMS_LIMIT',
    alias: 'TITILER_PGSTAC_SEARCH_ITEMS_LIMIT',
    kind: whole(1),
    default: 100,
    description: 'default `items_limit`: items one tile, point or bbox reads at most',
  }),
  pgstacTimeLimitSeconds: setting({
    env: 'TESSERA_PGSTAC_TIME_LIMIT',
    alias: 'TITILER_PGSTAC_SEARCH_TIME_LIMIT',
    kind: whole(1, 3600, 'seconds'),
    default: 5,
    description: 'default `time_limit`: how long pgSTAC scans for one tile, point or bbox before answering with what it found',
  }),
  pgstacExitWhenFull: setting({
    env: 'TESSERA_PGSTAC_EXITWHENFULL',
    alias: 'TITILER_PGSTAC_SEARCH_EXITWHENFULL',
    kind: boolean,
    default: true,
    description: 'default `exitwhenfull`: stop once the items found cover the area',
  }),
  pgstacSkipCovered: setting({
    env: 'TESSERA_PGSTAC_SKIPCOVERED',
    alias: 'TITILER_PGSTAC_SEARCH_SKIPCOVERED',
    kind: boolean,
    default: true,
    description: 'default `skipcovered`: leave out items the items before them already cover',
  }),
  searchMinzoom: setting({
    env: 'TESSERA_SEARCH_MINZOOM',
    kind: optional(whole(0, 30)),
    default: undefined,
    description: 'tiles of /searches and /collections below this zoom are empty (204) without asking the catalogue',
    details: "A search's or collection's own `tessera:policy` may raise it, never lower it (docs/catalogue.md).",
  }),
  searchMaxItemsPerTile: setting({
    env: 'TESSERA_SEARCH_MAX_ITEMS_PER_TILE',
    kind: optional(whole(1)),
    default: undefined,
    description: 'a tile of /searches and /collections reads at most the first N items the search finds for it, whatever its `items_limit`',
    details: "A search's or collection's own `tessera:policy` may lower it, never raise it (docs/catalogue.md).",
  }),
};

/** The catalogue without a database: stac-geoparquet in memory (docs/catalogue.md). */
const GEOPARQUET = {
  catalog: setting({
    env: 'TESSERA_CATALOG',
    kind: optional(text),
    default: undefined,
    description:
      'a stac-geoparquet file or folder (a local path, or an http(s) URL of one file): set, /searches and /collections serve tiles of STAC searches over it, no database needed (docs/catalogue.md)',
    details:
      "A folder is every `*.parquet` in it, with the collections' JSON documents beside them. The operator's choice, so a local path is read whatever `TESSERA_ALLOW_LOCAL_FILES` says; a URL passes the network policy. TESSERA_PGSTAC_DSN, when set too, wins.",
  }),
  catalogSearches: setting({
    env: 'TESSERA_CATALOG_SEARCHES',
    kind: optional(text),
    default: undefined,
    description:
      "the JSON file that keeps the catalogue's registered searches across restarts; unset: `$XDG_STATE_HOME/tessera/searches-<catalogue>.json` (`~/.local/state/…`); `none`: kept in memory only",
  }),
  catalogMaxSearches: setting({
    env: 'TESSERA_CATALOG_MAX_SEARCHES',
    kind: whole(1, 10_000_000),
    default: 100_000,
    description: 'registered searches kept; past it the least recently used are dropped',
  }),
  catalogMaxItems: setting({
    env: 'TESSERA_CATALOG_MAX_ITEMS',
    kind: whole(1),
    default: 5_000_000,
    description: 'items the catalogue may hold; a file whose footer claims more is refused before a row is read',
  }),
  catalogMaxBytes: setting({
    env: 'TESSERA_CATALOG_MAX_BYTES',
    kind: whole(1, undefined, 'bytes'),
    default: 8 * 1024 * 1024 * 1024,
    description: 'bytes of Parquet the catalogue may read, every file together; more is refused before it is read',
  }),
  catalogRefreshSeconds: setting({
    env: 'TESSERA_CATALOG_REFRESH',
    kind: whole(0, undefined, 'seconds'),
    default: 60,
    description: "how often the catalogue's files are looked at (size and modification time, or ETag); changed, they are read again and swapped in; 0: never",
  }),
};

const OUTPUT = {
  pngLevel: setting({
    env: 'TESSERA_PNG_LEVEL',
    kind: whole(0, 9),
    default: DEFAULT_PNG_LEVEL,
    description: 'zlib level of colormapped or algorithm `png` output (src/image/encode/png.ts); `pngraw` always uses 1',
    details: 'TiTiler uses 6: the same pixels, about 5% smaller, 1.5–2.5× the CPU. Imagery is run-length coded (0 still stores).',
  }),
  basemapUrl: setting({
    env: 'TESSERA_BASEMAP_URL',
    kind: tileTemplate,
    default: '',
    description: 'XYZ tile template of a Web Mercator basemap under the map pages; none: the pages reach nothing but tessera (air-gapped use)',
  }),
  basemapAttribution: setting({
    env: 'TESSERA_BASEMAP_ATTRIBUTION',
    kind: text,
    default: '',
    description: "the basemap's attribution (HTML allowed, as basemap licences usually require)",
  }),
};

/** The settings by topic, in the order --help and the docs list them. */
export const GROUPS = [
  { title: 'Server', settings: SERVER },
  { title: 'HTTP answers', settings: HTTP },
  { title: 'Route families', settings: FAMILIES },
  { title: 'Upstream: what may be read, and how much', settings: UPSTREAM },
  { title: 'Limits and concurrency', settings: LIMITS },
  { title: 'Lifecycle and logs', settings: LIFECYCLE },
  { title: 'Caches', settings: CACHES },
  { title: 'Mosaics', settings: MOSAICS },
  { title: 'Catalogue (pgSTAC)', settings: CATALOGUE },
  { title: 'Catalogue (stac-geoparquet)', settings: GEOPARQUET },
  { title: 'Images and pages', settings: OUTPUT },
] as const;

/** Every setting by its key in `Settings` (src/config.ts). */
export const SETTINGS = {
  ...SERVER,
  ...HTTP,
  ...FAMILIES,
  ...UPSTREAM,
  ...LIMITS,
  ...LIFECYCLE,
  ...CACHES,
  ...MOSAICS,
  ...CATALOGUE,
  ...GEOPARQUET,
  ...OUTPUT,
};

/** TESSERA_* names that are not settings but are known (the settings file's, the install script's, the tests'). */
export const OTHER_NAMES: readonly string[] = ['TESSERA_CONFIG', 'TESSERA_INSTALL_BROWSER', 'TESSERA_FIXTURES'];
