/**
 * Fetches JSON documents (STAC items, MosaicJSON) from the locations the URL policy allows, through
 * the upstream client (client.ts: redirects and addresses under the policies): bounded in bytes and
 * time, gzip understood (a `.json.gz` as sent; no transfer encoding is asked for), parsed
 * documents cached briefly (concurrent requests for one URL share one fetch).
 *
 * Each document carries a version: a hash of its bytes as fetched. Answers made from it are tagged
 * by it (api/etag.ts); its bytes, unlike an upstream's ETag or Last-Modified, always exist and
 * change exactly when the document does.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import { sharedLoad } from '../concurrency.js';
import { TesseraError, badRequest } from '../errors.js';
import type { IncomingMessage } from 'node:http';
import type { Location, UrlPolicy } from './url-policy.js';
import { UpstreamRefused, UpstreamTimeout, type UpstreamClient } from './client.js';
import type { Budgets } from './budget.js';
import { isObjectUrl, storeError, storeErrorCode } from './object-stores.js';

export interface DocumentFetcherOptions {
  policy: UrlPolicy;
  client: UpstreamClient;
  /** Charged for every byte fetched (the current request's upstream budget). */
  budgets?: Budgets;
  timeoutMs: number;
  maxBytes: number;
  cacheTtlMs: number;
  cacheSize: number;
}

/** A parsed document and the version of the bytes it was parsed from. */
export interface FetchedDocument {
  value: unknown;
  version: string;
}

/** The version of a document's bytes (what api/etag.ts derives tags from). */
export function contentVersion(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('base64url');
}

export class DocumentFetcher {
  private readonly cache: LRUCache<string, Promise<FetchedDocument>>;
  /** Parsed documents served from the cache, and fetched (for /metrics). */
  readonly cacheStats = { hits: 0, misses: 0 };
  constructor(private readonly opts: DocumentFetcherOptions) {
    this.cache = new LRUCache({ max: Math.max(1, opts.cacheSize), ttl: opts.cacheTtlMs || undefined });
  }

  get policy(): UrlPolicy {
    return this.opts.policy;
  }

  /** The parsed JSON at `input` (a client-supplied URL) and its version, from cache when fresh. */
  async document(input: string, what: string): Promise<FetchedDocument> {
    const loc = this.opts.policy.resolve(input);
    const key = loc.kind === 'http' ? loc.url : `file:${loc.path}`;
    if (this.cache.has(key)) this.cacheStats.hits++;
    else this.cacheStats.misses++;
    // Every request asking for this document shares one fetch, which does not end with the one that
    // started it; failures are not kept: the next request tries again.
    const budgets = this.opts.budgets;
    if (!budgets) return sharedLoad(this.cache, key, () => this.load(loc, input, what), { keep: true });
    return sharedLoad(this.cache, key, () => budgets.shared(() => this.load(loc, input, what)), { keep: true, startAgain: (err) => budgets.startAgain(err) });
  }

  /**
   * The JSON answer to a GET of `input`, or to a POST of `body` as JSON (a STAC API search), never
   * cached (pages change); http(s) only, under the same policies and limits as `json`.
   */
  async send(input: string, what: string, body?: unknown): Promise<unknown> {
    const loc = this.opts.policy.resolve(input, what);
    if (loc.kind !== 'http') throw badRequest(`${what} '${input}' is not an http(s) URL`);
    return this.parse(await this.fetchHttp(loc.url, what, body === undefined ? undefined : JSON.stringify(body)), input, what);
  }

  /** The bytes at `input` as sent (a `.json.gz` still compressed), never cached; http(s) only. */
  async bytes(input: string, what: string): Promise<Buffer> {
    const loc = this.opts.policy.resolve(input, what);
    if (loc.kind !== 'http') throw badRequest(`${what} '${input}' is not an http(s) URL`);
    return this.fetchHttp(loc.url, what);
  }

  private async load(loc: Location, input: string, what: string): Promise<FetchedDocument> {
    const bytes = loc.kind === 'http' ? await this.fetchHttp(loc.url, what) : await this.readLocal(loc.path, input, what);
    return { value: this.parse(bytes, input, what), version: contentVersion(bytes) };
  }

  private parse(bytes: Buffer, input: string, what: string): unknown {
    let text: string;
    try {
      const raw = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes, { maxOutputLength: this.opts.maxBytes }) : bytes;
      text = raw.toString('utf8');
    } catch {
      throw badRequest(`${what} at '${input}' is not valid gzip or is larger than ${this.opts.maxBytes} bytes`);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw badRequest(`${what} at '${input}' is not valid JSON`);
    }
  }

  private async readLocal(path: string, input: string, what: string): Promise<Buffer> {
    try {
      const s = await stat(path);
      if (!s.isFile()) throw new Error('not a file');
      if (s.size > this.opts.maxBytes) throw badRequest(`${what} at '${input}' is larger than ${this.opts.maxBytes} bytes`);
      return await readFile(path);
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      throw new TesseraError('UpstreamNotFound', `${what} '${input}' not found`, { cause: err });
    }
  }

  private async fetchHttp(url: string, what: string, json?: string): Promise<Buffer> {
    const signal = AbortSignal.timeout(this.opts.timeoutMs);
    try {
      const res = await this.opts.client.get(url, { signal, accept: 'application/json, application/geo+json;q=0.9, */*;q=0.1', json });
      const status = res.statusCode ?? 502;
      if (status < 200 || status >= 300) {
        if (isObjectUrl(url)) throw storeError(status, await storeErrorCode(res), `${what} '${url}'`) ?? upstreamStatus(status, what, url);
        if (json === undefined) {
          res.resume();
          throw upstreamStatus(status, what, url);
        }
        // An API says what was wrong with a query: its words go with the status.
        const said = (await readLimited(res, 64 * 1024, what, url, this.opts.budgets).catch(() => Buffer.alloc(0))).toString('utf8').trim();
        const error = upstreamStatus(status, what, url);
        throw new TesseraError(error.kind, said ? `${error.message}: ${said.slice(0, 500)}` : error.message);
      }
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (declared > this.opts.maxBytes) {
        res.destroy();
        throw badRequest(`${what} at '${url}' is larger than ${this.opts.maxBytes} bytes (TESSERA_MAX_DOCUMENT_BYTES)`);
      }
      return await readLimited(res, this.opts.maxBytes, what, url, this.opts.budgets);
    } catch (err) {
      if (err instanceof TesseraError) throw err;
      if (err instanceof UpstreamRefused) throw badRequest(`${what} at '${url}' is not allowed: ${err.message}`);
      if (err instanceof UpstreamTimeout || signal.aborted) {
        throw new TesseraError('Timeout', `${what} at '${url}' did not arrive within ${this.opts.timeoutMs} ms`, { cause: err });
      }
      throw new TesseraError('UpstreamError', `${what} at '${url}' could not be fetched: ${causeText(err)}`, { cause: err });
    }
  }
}

function upstreamStatus(status: number, what: string, url: string): TesseraError {
  if (status === 404 || status === 410) return new TesseraError('UpstreamNotFound', `${what} '${url}' not found (upstream answered ${status})`);
  if (status === 401 || status === 403) return new TesseraError('UpstreamForbidden', `${what} '${url}': access refused (upstream answered ${status})`);
  return new TesseraError('UpstreamError', `${what} '${url}': upstream answered ${status}`);
}

async function readLimited(res: IncomingMessage, maxBytes: number, what: string, url: string, budgets: Budgets | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (budgets && !budgets.chargeCurrent(chunk.length)) {
      res.destroy();
      throw badRequest(budgets.overBudgetMessage());
    }
    if (size > maxBytes) {
      res.destroy();
      throw badRequest(`${what} at '${url}' is larger than ${maxBytes} bytes (TESSERA_MAX_DOCUMENT_BYTES)`);
    }
    chunks.push(chunk);
  }
  if (!res.complete) throw new TesseraError('UpstreamError', `${what} at '${url}' arrived incomplete`);
  return Buffer.concat(chunks, size);
}

function causeText(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}
