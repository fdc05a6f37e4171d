/** The long-lived parts of a running tessera, built from the settings; no HTTP here. */
import type { Settings } from './config.js';
import { configureGdal, firstReadBytes } from './source/gdal.js';
import { UpstreamGateway } from './upstream/gateway.js';
import { configureEncoders } from './image/encode/index.js';
import { UrlPolicy } from './upstream/url-policy.js';
import { DatasetPool } from './source/pool.js';
import { SourceContext } from './source/dataset.js';
import { DocumentFetcher } from './upstream/documents.js';
import { UpstreamClient } from './upstream/client.js';
import { rasterOpener, diagnoseOpen } from './source/open.js';
import { StacReader } from './stac/reader.js';
import { RENDER_IN_THIS_THREAD, type Renderer } from './image/post-process.js';
import { RenderThreads } from './image/render-threads.js';

export class Services {
  readonly policy: UrlPolicy;
  readonly pool: DatasetPool;
  readonly sources: SourceContext;
  readonly fetcher: DocumentFetcher;
  /** Every upstream HTTP request made on this thread (documents, diagnoses) goes through it. */
  readonly client: UpstreamClient;
  /** Post-processing and encoding: render threads, or this thread when there are none. */
  readonly renderer: Renderer;
  private readonly threads: RenderThreads | undefined;
  private readonly gateway: UpstreamGateway | undefined;

  constructor(readonly settings: Settings) {
    configureGdal({ connectTimeoutMs: settings.upstreamConnectTimeoutMs, timeoutMs: settings.upstreamTimeoutMs });
    configureEncoders({ pngLevel: settings.pngLevel });
    this.policy = new UrlPolicy(settings);
    this.pool = new DatasetPool({ handlesPerSource: settings.handlesPerSource, maxHandles: settings.maxHandles, open: rasterOpener(settings.allowedDrivers) });
    this.client = new UpstreamClient({ policy: this.policy, connectTimeoutMs: settings.upstreamConnectTimeoutMs });
    this.gateway = settings.upstreamGateway
      ? new UpstreamGateway({
          policy: { allowedLocalRoots: [], allowedHosts: settings.allowedHosts, deniedHosts: settings.deniedHosts, allowedNetworks: settings.allowedNetworks },
          connectTimeoutMs: settings.upstreamConnectTimeoutMs,
          timeoutMs: settings.upstreamTimeoutMs,
          probeBytes: firstReadBytes(),
        })
      : undefined;
    const gateway = this.gateway;
    this.sources = new SourceContext(this.pool, {
      ttlMs: settings.documentCacheTtlMs,
      size: settings.documentCacheSize,
      remotePath: gateway ? (url) => gateway.gdalPath(url) : undefined,
      upstreamFaults: gateway ? () => gateway.faults() : undefined,
      diagnose: (loc, label) => diagnoseOpen(loc, label, settings.allowedDrivers, this.client, settings.upstreamTimeoutMs),
    });
    this.fetcher = new DocumentFetcher({
      policy: this.policy,
      client: this.client,
      timeoutMs: settings.upstreamTimeoutMs,
      maxBytes: settings.maxDocumentBytes,
      cacheTtlMs: settings.documentCacheTtlMs,
      cacheSize: settings.documentCacheSize,
    });
    this.threads = settings.renderThreads > 0 ? new RenderThreads(settings.renderThreads, { pngLevel: settings.pngLevel }) : undefined;
    this.renderer = this.threads ?? RENDER_IN_THIS_THREAD;
  }

  stac(url: string): Promise<StacReader> {
    return StacReader.open(url, this.fetcher, this.sources);
  }

  async close(): Promise<void> {
    this.pool.closeAll();
    this.client.close();
    await Promise.all([this.threads?.close(), this.gateway?.close()]);
  }
}
