/** The long-lived parts of a running tessera, built from the settings; no HTTP here. */
import { randomBytes } from 'node:crypto';
import { AdmissionGate } from './concurrency.js';
import type { Settings } from './config.js';
import { configureGdal, firstReadBytes, curlChunkBytes } from './gdal/gdal.js';
import { UpstreamGateway } from './upstream/gateway.js';
import { configureEncoders } from './image/encode/index.js';
import { UrlPolicy } from './upstream/url-policy.js';
import { DatasetPool } from './source/pool.js';
import { SourceContext, type Meter, type RasterSource } from './source/dataset.js';
import { DocumentFetcher } from './upstream/documents.js';
import { byteRangesOf, type ByteRanges } from './source/byte-ranges.js';
import { TileStore } from './cache/tile-store.js';
import { UpstreamClient } from './upstream/client.js';
import { rasterOpener, diagnoseOpen } from './source/open.js';
import { Budgets, UNMETERED_LANE } from './upstream/budget.js';
import type { Dataset } from './gdal/gdal.js';
import { badRequest } from './errors.js';
import { StacItemSources } from './stac/reader.js';
import { RENDER_IN_THIS_THREAD, type Renderer } from './image/post-process.js';
import { RenderThreads } from './image/render-threads.js';
import { type LocalGet, WARM_UP_HEADER, type WarmSearches, warmGdal, warmReads, warmRenderer } from './warm-up.js';
import { WholeImageGate } from './image/whole-image-gate.js';
import { sizeWorkerHeaps } from './worker-heap.js';
import { MosaicStore } from './mosaic/store.js';
import type { MosaicContext } from './readers/mosaic.js';
import { PgstacCatalogue } from './pgstac/database.js';
import { Searches, type SearchesOptions } from './pgstac/searches.js';
import { WarmUpCatalogue } from './pgstac/warm-up-search.js';
import { GeoparquetCatalogue } from './catalog/catalogue.js';
import { httpSource } from './catalog/http-source.js';
import { catalogSearchesFile } from './catalog/store.js';
import { StacApiCatalogue, stacApiRoot } from './catalog/stac-api.js';
import type { TimedCatalogue } from './catalog/timing.js';
import type { Catalogue } from './pgstac/catalogue.js';
import { ObjectStores, awsCredentialChain, azureSas, cachedCredentials, gcsCredentials, type ObjectStoreOptions } from './upstream/object-stores.js';

/** The object stores' settings, as the upstream clients of both threads take them. */
function objectStoreOptions(settings: Settings): ObjectStoreOptions {
  return {
    allowedBuckets: settings.allowedBuckets,
    s3: {
      region: settings.s3Region,
      endpoint: settings.s3Endpoint,
      https: settings.s3Https,
      virtualHosting: settings.s3VirtualHosting,
      requestPayer: settings.s3RequestPayer,
      noSignRequest: settings.s3NoSignRequest,
    },
    gs: { endpoint: settings.gsEndpoint, noSignRequest: settings.gsNoSignRequest },
    az: { account: settings.azureAccount, endpoint: settings.azureBlobEndpoint, noSignRequest: settings.azureNoSignRequest },
  };
}

export class Services {
  readonly policy: UrlPolicy;
  readonly pool: DatasetPool;
  readonly sources: SourceContext;
  readonly fetcher: DocumentFetcher;
  /** Every upstream HTTP request made on this thread (documents, diagnoses) goes through it. */
  readonly client: UpstreamClient;
  /** Upstream bytes per request (TESSERA_MAX_UPSTREAM_BYTES). */
  readonly budgets: Budgets;
  /** How many whole-image requests run and what they hold together (TESSERA_LARGE_REQUESTS, TESSERA_MAX_IMAGE_BYTES). */
  readonly wholeImages: WholeImageGate;
  /** How many tile requests are made at once, the rest waiting in order (TESSERA_TILE_REQUESTS). */
  readonly tileAdmission: AdmissionGate;
  /** MosaicJSON documents (parsed, cached), and what mosaic reads need of the server. */
  readonly mosaics: MosaicStore;
  readonly mosaicContext: MosaicContext;
  /** The pgSTAC catalogue's searches (TESSERA_PGSTAC_DSN), its connections opened on first use; none without a DSN. */
  readonly searches: Searches | undefined;
  /** The catalogue in memory behind `searches` (TESSERA_CATALOG: stac-geoparquet, or a STAC API's searches), when it is the one. */
  readonly inMemory: (Catalogue & TimedCatalogue) | undefined;
  /** Marks the warm-up's requests to the server's own routes (warm-up.ts WARM_UP_HEADER). */
  readonly warmUpToken = randomBytes(16).toString('hex');
  /** The catalogue behind `searches`, with the warm-up's own search while it runs. */
  private readonly warmUpCatalogue: WarmUpCatalogue | undefined;
  /** Post-processing and encoding: render threads, or this thread when there are none. */
  readonly renderer: Renderer;
  private readonly threads: RenderThreads | undefined;
  readonly gateway: UpstreamGateway | undefined;

  constructor(readonly settings: Settings) {
    // Before the gateway and the render threads start: their isolates get a smaller old generation than the main thread (worker-heap.ts).
    sizeWorkerHeaps();
    configureGdal({ connectTimeoutMs: settings.upstreamConnectTimeoutMs, timeoutMs: settings.upstreamTimeoutMs });
    configureEncoders({ pngLevel: settings.pngLevel });
    this.policy = new UrlPolicy(settings);
    this.budgets = new Budgets(settings.maxUpstreamBytes, settings.requestConcurrency);
    this.wholeImages = new WholeImageGate(settings.largeRequests, settings.maxImageBytes);
    this.tileAdmission = new AdmissionGate(settings.tileRequests > 0 ? settings.tileRequests : Number.POSITIVE_INFINITY);
    const stores = objectStoreOptions(settings);
    this.gateway = settings.upstreamGateway
      ? new UpstreamGateway({
          policy: {
            allowedLocalRoots: [],
            allowedHosts: settings.allowedHosts,
            deniedHosts: settings.deniedHosts,
            allowedNetworks: settings.allowedNetworks,
            allowedBuckets: settings.allowedBuckets,
            azureAccount: settings.azureAccount,
            azureBlobEndpoint: settings.azureBlobEndpoint,
          },
          connectTimeoutMs: settings.upstreamConnectTimeoutMs,
          timeoutMs: settings.upstreamTimeoutMs,
          probeBytes: firstReadBytes(),
          chunkBytes: curlChunkBytes(),
          budgets: this.budgets.memory,
          stores,
        })
      : undefined;
    const gateway = this.gateway;
    // The gateway's thread holds the credentials (one fetch per expiry for the process); this thread keeps what it was given.
    const credentials = gateway
      ? {
          s3: cachedCredentials(() => gateway.credentials('s3')),
          gs: cachedCredentials(() => gateway.credentials('gs')),
          az: cachedCredentials(() => gateway.credentials('az')),
        }
      : { s3: awsCredentialChain(), gs: gcsCredentials(), az: azureSas(stores.az) };
    this.client = new UpstreamClient({
      policy: this.policy,
      connectTimeoutMs: settings.upstreamConnectTimeoutMs,
      onRequest: () => this.budgets.countCurrent(),
      stores: new ObjectStores(stores, credentials),
    });
    // Each handle reads on a lane of its own, so that the gateway can charge its reads to the
    // request holding it; the open itself is charged to the request that caused it.
    const lanes = new WeakMap<Dataset, number>();
    const budgets = this.budgets;
    const openAllowed = rasterOpener(settings.allowedDrivers);
    const open = async (path: string): Promise<Dataset> => {
      const lane = gateway ? budgets.takeLane() : UNMETERED_LANE;
      try {
        const ds = await budgets.metered(lane, () => openAllowed(gateway ? gateway.onLane(path, lane) : path));
        lanes.set(ds, lane);
        return ds;
      } catch (err) {
        budgets.releaseLane(lane);
        throw err;
      }
    };
    const onClose = (ds: Dataset): void => {
      const lane = lanes.get(ds);
      if (lane !== undefined) budgets.releaseLane(lane);
    };
    this.pool = new DatasetPool({
      handlesPerSource: settings.handlesPerSource,
      maxHandles: settings.maxHandles,
      open,
      onClose,
      turn: (call) => budgets.turn(call),
    });
    const meter: Meter = {
      run: (ds, call) => budgets.metered(lanes.get(ds), call),
      shared: (load) => budgets.shared(load),
      startAgain: (err) => budgets.startAgain(err),
      finishAfter: (work) => budgets.finishAfter(work),
      exhausted: () => (budgets.exhausted() ? badRequest(budgets.overBudgetMessage()) : undefined),
    };
    this.sources = new SourceContext(this.pool, {
      ttlMs: settings.documentCacheTtlMs,
      size: settings.documentCacheSize,
      remotePath: gateway ? (url) => gateway.gdalPath(url) : undefined,
      upstreamFaults: gateway ? () => gateway.faults() : undefined,
      remoteVersion: gateway ? (path) => gateway.version(path) : undefined,
      prefetch: gateway ? (path, image, blocks) => gateway.prefetch(path, image, blocks, budgets.currentSlot()) : undefined,
      meter: gateway ? meter : undefined,
      diagnose: (loc, label) => diagnoseOpen(loc, label, settings.allowedDrivers, this.client, settings.upstreamTimeoutMs),
      maxAssets: settings.maxAssets,
    });
    this.fetcher = new DocumentFetcher({
      policy: this.policy,
      client: this.client,
      budgets: this.budgets,
      timeoutMs: settings.upstreamTimeoutMs,
      maxBytes: settings.maxDocumentBytes,
      cacheTtlMs: settings.documentCacheTtlMs,
      cacheSize: settings.documentCacheSize,
    });
    this.mosaics = new MosaicStore({
      fetcher: this.fetcher,
      cacheTtlMs: settings.documentCacheTtlMs,
      cacheSize: settings.documentCacheSize,
      maxBytes: settings.maxDocumentBytes,
      startAgain: (err) => this.budgets.startAgain(err),
    });
    this.mosaicContext = {
      sources: this.sources,
      policy: this.policy,
      openStac: (url) => this.stac(url),
      concurrency: settings.mosaicConcurrency,
      lowZoomDeadlineMs: settings.mosaicLowZoomDeadlineMs,
      // A tile answered in part is finished for the tile cache; with no cache there is nowhere to keep it.
      finishLater: settings.tileCacheBytes > 0 || settings.cacheUrl !== undefined,
      limits: { maxOutputPixels: settings.maxOutputPixels, maxSourcePixels: settings.maxSourcePixels },
    };
    const searchOptions: SearchesOptions = {
      cacheTtlMs: settings.pgstacCacheTtlSeconds * 1000,
      cacheBytes: settings.pgstacCacheBytes,
      defaults: {
        scanLimit: settings.pgstacScanLimit,
        itemsLimit: settings.pgstacItemsLimit,
        timeLimitSeconds: settings.pgstacTimeLimitSeconds,
        exitWhenFull: settings.pgstacExitWhenFull,
        skipCovered: settings.pgstacSkipCovered,
      },
      policy: {
        ...(settings.searchMinzoom !== undefined ? { minzoom: settings.searchMinzoom } : {}),
        ...(settings.searchMaxItemsPerTile !== undefined ? { maxItemsPerTile: settings.searchMaxItemsPerTile } : {}),
      },
    };
    let catalogue: Catalogue | undefined;
    if (settings.pgstacDsn !== undefined) {
      catalogue = new PgstacCatalogue({
        dsn: settings.pgstacDsn,
        poolSize: settings.pgstacPoolSize,
        warmConnections: settings.pgstacPoolWarm,
        statementTimeoutMs: settings.pgstacStatementTimeoutMs,
      });
    } else if (settings.catalog !== undefined && stacApiRoot(settings.catalog) !== undefined) {
      // A STAC API (TESSERA_CATALOG=stac-api+https://…): each search read from it once, into memory.
      this.inMemory = new StacApiCatalogue({
        root: stacApiRoot(settings.catalog)!,
        client: this.client,
        policy: this.policy,
        limits: {
          maxItems: settings.catalogApiMaxItems,
          pageSize: settings.catalogApiPageSize,
          pageBytes: settings.maxDocumentBytes,
          maxBytes: settings.catalogApiMaxBytes,
          timeoutMs: settings.catalogApiTimeoutSeconds * 1000,
          requestTimeoutMs: settings.upstreamTimeoutMs,
          heldItems: settings.catalogApiHeldItems,
        },
        storeFile: catalogSearchesFile(settings.catalog, settings.catalogSearches),
        maxSearches: settings.catalogMaxSearches,
      });
      catalogue = this.inMemory;
    } else if (settings.catalog !== undefined) {
      // The operator's stac-geoparquet (TESSERA_CATALOG), read in the background from now on.
      const geoparquet = new GeoparquetCatalogue({
        location: settings.catalog,
        limits: { maxItems: settings.catalogMaxItems, maxBytes: settings.catalogMaxBytes },
        storeFile: catalogSearchesFile(settings.catalog, settings.catalogSearches),
        maxSearches: settings.catalogMaxSearches,
        refreshMs: settings.catalogRefreshSeconds * 1000,
        openUrl: (url) => httpSource(this.client, this.policy, url, settings.upstreamTimeoutMs),
      });
      void geoparquet.start();
      this.inMemory = geoparquet;
      catalogue = geoparquet;
    }
    // Wrapped so that the warm-up can ask the searches' tile route before the server listens (warm-up-search.ts).
    this.warmUpCatalogue = catalogue && new WarmUpCatalogue(catalogue);
    this.searches = this.warmUpCatalogue && new Searches(this.warmUpCatalogue, searchOptions);
    this.tiles = new TileStore({
      memoryBytes: settings.tileCacheBytes,
      ttlSeconds: settings.cacheTtlSeconds,
      redisUrl: settings.cacheUrl,
      log: (level, message) =>
        (level === 'warn' ? console.warn : console.log)(JSON.stringify({ level: level === 'warn' ? 40 : 30, time: Date.now(), msg: message })),
    });
    this.threads = settings.renderThreads > 0 ? new RenderThreads(settings.renderThreads, { pngLevel: settings.pngLevel }) : undefined;
    this.renderer = this.threads ?? RENDER_IN_THIS_THREAD;
  }

  /** Rendered tiles, in this process and in Redis when configured (cache/tile-store.ts). */
  readonly tiles: TileStore;

  /** The raster at a client-given URL, as the URL policy allows it. */
  cog(url: string): RasterSource {
    return this.sources.sourceAt(this.policy.resolve(url), url);
  }

  /** Raw bytes of a raster source (its TIFF layout), under the same policies and budget as GDAL's reads. */
  bytesOf(source: RasterSource): ByteRanges {
    return byteRangesOf(source.location, source.label, {
      client: this.client,
      timeoutMs: this.settings.upstreamTimeoutMs,
      charge: (bytes) => this.budgets.chargeCurrent(bytes),
      overBudget: () => this.budgets.overBudgetMessage(),
    });
  }

  stac(url: string): Promise<StacItemSources> {
    return StacItemSources.open(url, this.fetcher, this.sources);
  }

  /**
   * Readies what the first requests would otherwise pay for (warm-up.ts, Catalogue.warm), for at
   * most `withinMs`; never fails. `inject` asks the server's own routes in process (before it
   * listens): they are asked with WARM_UP_HEADER set to `warmUpToken`. The statuses of the routes
   * asked, or undefined when the bound passed first; then the work goes on in the background, but
   * what it let past the policies (its COG's URL, its search) is withdrawn before this returns.
   */
  async warm(withinMs: number, inject?: (path: string, headers: Record<string, string>) => Promise<number>): Promise<number[] | undefined> {
    // With TESSERA_ACCESS_TOKEN the routes want it as any client's request does.
    const token = this.settings.accessToken;
    const signed = (path: string): string => (token ? `${path}${path.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}` : path);
    const get: LocalGet | undefined = inject && ((path) => inject(signed(path), { [WARM_UP_HEADER]: this.warmUpToken }));
    const threadPool = Number(process.env['UV_THREADPOOL_SIZE']) || 4;
    const gateway = this.gateway;
    const ended = new AbortController();
    const work = Promise.all([
      (async () => {
        await Promise.all([warmRenderer(this.renderer, this.threads?.size ?? 1), warmGdal(threadPool)]);
        return warmReads(this.sources, this.renderer, {
          count: 12,
          release: () => this.pool.closeAll(),
          upstream: gateway && { serve: (bytes) => gateway.warmUpstream(bytes), end: () => gateway.endWarmUp() },
          admit: (url) => this.policy.admitWhileWarming(url),
          routes: get && { get, searches: this.warmSearches() },
          ended: ended.signal,
        });
      })(),
      this.searches?.catalogue.warm?.(),
    ]).then(
      ([statuses]) => statuses,
      () => [],
    );
    let timer: NodeJS.Timeout | undefined;
    const statuses = await Promise.race([work, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), withinMs)))]);
    clearTimeout(timer);
    // Past the bound the work goes on in the background, but nothing it let past the policies does.
    ended.abort();
    return statuses;
  }

  /** The warm-up's own search (warm-up-search.ts), forgotten by the searches' caches when it ends; none without searches. */
  private warmSearches(): WarmSearches | undefined {
    const catalogue = this.warmUpCatalogue;
    const searches = this.searches;
    if (!catalogue || !searches) return undefined;
    return {
      begin: (items) => {
        const search = catalogue.begin(items);
        const end = (): void => {
          search.end();
          searches.forget(search.hash);
        };
        return { hash: search.hash, end };
      },
    };
  }

  async close(): Promise<void> {
    this.pool.closeAll();
    this.client.close();
    await this.tiles.close();
    await this.searches?.catalogue.close();
    await Promise.all([this.threads?.close(), this.gateway?.close()]);
  }
}
