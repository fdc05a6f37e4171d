/**
 * Opening mosaics by URL (cogeo-mosaic's `MosaicBackend(url)` dispatch, read-only): http(s) and,
 * when the URL policy allows local files, `file://` or plain paths (JSON, gzip-compressed JSON
 * recognised by its magic bytes) through the document fetcher; `sqlite:///{path}:{name}`. The cloud
 * backends (s3, gs, az, dynamodb, stac+…) and unknown schemes are refused with a 400.
 *
 * Opened mosaics (document validated, quadkey index built) are kept in a bounded TTL cache;
 * concurrent requests for one URL share one load, and failures are not kept.
 */
import { LRUCache } from 'lru-cache';
import { sharedLoad } from '../concurrency.js';
import type { DocumentFetcher } from '../upstream/documents.js';
import { badRequest } from '../errors.js';
import { parseMosaicDocument } from './document.js';
import { Mosaic } from './mosaic.js';
import { isSqliteUrl, parseSqliteUrl, readSqliteMosaic } from './sqlite.js';

export interface MosaicStoreOptions {
  fetcher: DocumentFetcher;
  cacheTtlMs: number;
  cacheSize: number;
  /** Largest SQLite database read (JSON documents are bounded by the fetcher). */
  maxBytes: number;
  /** A load failed because the request that started it went away, and the current one should start it again. */
  startAgain?: (err: unknown) => boolean;
}

/** cogeo-mosaic backends tessera does not have: named so the answer says so (s3://, gs:// and az:// documents are read as objects). */
const UNSUPPORTED_BACKENDS = new Set(['dynamodb']);

export class MosaicStore {
  private readonly cache: LRUCache<string, Promise<Mosaic>>;

  constructor(private readonly opts: MosaicStoreOptions) {
    this.cache = new LRUCache({ max: Math.max(1, opts.cacheSize), ttl: opts.cacheTtlMs || undefined });
  }

  open(url: string): Promise<Mosaic> {
    const key = url.trim();
    return sharedLoad(this.cache, key, () => this.load(key), { keep: true, ...(this.opts.startAgain ? { startAgain: this.opts.startAgain } : {}) });
  }

  private async load(url: string): Promise<Mosaic> {
    if (url === '' || url === ':memory:') throw badRequest('url must name a MosaicJSON document');
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
    if (scheme && (UNSUPPORTED_BACKENDS.has(scheme) || scheme.startsWith('stac+'))) {
      throw badRequest(
        `Mosaic backend '${scheme}' is not supported: use an http(s), s3://, gs:// or az:// URL, a local file or sqlite:///{path}:{mosaic_name}`,
      );
    }
    if (isSqliteUrl(url)) {
      const loc = parseSqliteUrl(url, this.opts.fetcher.policy);
      const { raw, version } = await readSqliteMosaic(loc, this.opts.maxBytes);
      return new Mosaic(parseMosaicDocument(raw, `mosaic '${loc.name}' in ${loc.path}`), { url, tilesInDocument: false, version });
    }
    const { value, version } = await this.opts.fetcher.document(url, 'MosaicJSON document');
    return new Mosaic(parseMosaicDocument(value, `MosaicJSON document at '${url}'`), { url, tilesInDocument: true, version });
  }
}
