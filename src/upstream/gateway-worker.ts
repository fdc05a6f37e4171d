/**
 * The upstream gateway's thread: a loopback HTTP server that GDAL's /vsicurl/ reads remote rasters
 * through (see gateway.ts for why). It runs in its own thread so that a GDAL call that blocks the
 * main thread on network I/O (metadata read synchronously from an open dataset) can never wait on
 * an event loop that it is itself blocking.
 *
 * Requests are `GET|HEAD /<token>/<lane>/<scheme>/<authority><path>?<query>`; anything else is refused.
 * Bytes relayed are charged to the budget of the request reading on the lane (budget.ts).
 */
import { randomBytes } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { UrlPolicy, type UrlPolicyOptions } from './url-policy.js';
import { TesseraError } from '../errors.js';
import { UpstreamClient, UpstreamRefused, UpstreamTimeout } from './client.js';
import { GATEWAY_BUDGET_STATUS, GATEWAY_REFUSED_STATUS, type PrefetchImage } from './gateway.js';
import { charge, chargeSlot, countRequest, countSlotRequest, mayFetch, slotMayFetch, type BudgetMemory } from './budget.js';
import { blockRanges, tiffImages, type TiffImage } from './tiff-index.js';
import { MissingCredentials, ObjectStores, awsCredentialChain, azureSas, gcsCredentials, type ObjectStoreOptions } from './object-stores.js';

export interface GatewayWorkerData {
  token: string;
  policy: UrlPolicyOptions;
  connectTimeoutMs: number;
  timeoutMs: number;
  /** Bytes fetched from the start of a file when GDAL asks for its size (see `probe`). */
  probeBytes: number;
  /** /vsicurl/'s download chunk: blocks fetched ahead are widened to whole chunks (see `prefetch`). */
  chunkBytes?: number | undefined;
  budgets: BudgetMemory;
  /** Port to listen on (0: the system picks one); a replacement thread takes over its predecessor's port. */
  port: number;
  /** Int32Array over a SharedArrayBuffer: [0] is set to the port, or -1 on failure, then notified. */
  ready: Int32Array;
  /** Int32Array over a SharedArrayBuffer: [0] counts upstream faults (see UpstreamGateway.faults). */
  faults: Int32Array;
  stores?: ObjectStoreOptions | undefined;
}

/** Probed file heads are kept this long: long enough for GDAL's first read, which follows at once. */
const HEAD_TTL_MS = 30_000;
const MAX_HEADS = 64;
/** Response headers relayed from upstream to GDAL. */
const RELAYED = ['content-length', 'content-range', 'content-type', 'accept-ranges', 'etag', 'last-modified'];

const data = workerData as GatewayWorkerData;
const policy = new UrlPolicy(data.policy);
/** This thread holds the process's object-store credentials: the main thread asks for them (gateway.ts `credentials`). */
const credentials = {
  s3: awsCredentialChain(),
  gs: gcsCredentials(),
  az: azureSas(data.stores?.az ?? { account: '', endpoint: '', noSignRequest: false }),
};
const client = new UpstreamClient({
  policy,
  connectTimeoutMs: data.connectTimeoutMs,
  stores: data.stores ? new ObjectStores(data.stores, credentials) : undefined,
});

/**
 * The warm-up's upstream (gateway.ts `warmUpstream`): a file served by this thread on loopback and
 * read through the gateway as any upstream file is (targetOf, the probe, fetching ahead, the client),
 * so that the code of this thread is not run cold by a fresh process's first views. Its URL, named
 * at random, is the one address let past the policies (UrlPolicy.admitWhileWarming, and a client of
 * its own that may connect to loopback), and only until the warm-up ends, which is before the server
 * listens: no request a client sends can name it.
 */
let warm: { url: string; client: UpstreamClient; server: http.Server; withdraw: () => void } | undefined;

/** Serves `bytes` (ranges too) on loopback for the warm-up; resolves with the URL they are read at. */
async function startWarmUp(bytes: Buffer): Promise<string> {
  endWarmUp();
  const name = randomBytes(16).toString('hex');
  const server = http.createServer((req, res) => {
    if (req.url !== `/${name}.tif`) {
      res.writeHead(404, { 'Content-Length': 0 }).end();
      return;
    }
    const range = simpleRange(req.headers.range);
    if (!range || range[0] >= bytes.length) {
      res.writeHead(200, { 'Content-Length': bytes.length }).end(req.method === 'HEAD' ? undefined : bytes);
      return;
    }
    const end = Math.min(range[1], bytes.length - 1);
    res.writeHead(206, { 'Content-Range': `bytes ${range[0]}-${end}/${bytes.length}`, 'Content-Length': end - range[0] + 1, ETag: `"${name}"` });
    res.end(bytes.subarray(range[0], end + 1));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${name}.tif`;
  const loopback = new UrlPolicy({ allowedLocalRoots: [], allowedHosts: [], deniedHosts: [], allowedNetworks: ['127.0.0.1/32'] });
  const client = new UpstreamClient({ policy: loopback, connectTimeoutMs: data.connectTimeoutMs });
  warm = { url, server, client, withdraw: policy.admitWhileWarming(url) };
  return url;
}

function endWarmUp(): void {
  if (!warm) return;
  warm.withdraw();
  warm.server.close();
  warm.server.closeAllConnections();
  warm = undefined;
}

/** The client that reaches `url`: the warm-up's for its own file, else the one under the policies. */
function clientFor(url: string): UpstreamClient {
  return warm !== undefined && url === warm.url ? warm.client : client;
}

class GatewayFault extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Counts a fault of upstream's (not a refusal of tessera's): the main thread tells damaged files from failing servers by it. */
function upstreamFault(): void {
  Atomics.add(data.faults, 0, 1);
}

/** One upstream GET under the policies; resolves with the final response, its body not consumed. */
async function upstream(url: string, range: string | undefined, signal: AbortSignal, lane: number): Promise<IncomingMessage> {
  const res = await clientFor(url).get(url, { range, signal, onSend: () => countRequest(data.budgets, lane) });
  if ((res.statusCode ?? 0) >= 500) upstreamFault();
  if (res.statusCode === GATEWAY_REFUSED_STATUS) {
    res.resume();
    throw new GatewayFault(502, `upstream answered ${GATEWAY_REFUSED_STATUS}`);
  }
  return res;
}

/** 470 for what tessera refuses, 504 when upstream was too slow, 502 for anything else. */
function faultStatus(err: unknown): number {
  if (err instanceof GatewayFault) return err.status;
  if (err instanceof UpstreamRefused) return GATEWAY_REFUSED_STATUS;
  if (err instanceof UpstreamTimeout) return 504;
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) return 504;
  return 502;
}

/** What a probe learned about a file: its size and validators, and its first bytes when ranged. */
interface Head {
  status: number;
  headers: Record<string, string>;
  size: number | undefined;
  bytes: Buffer | undefined;
}

interface HeadEntry {
  pending: Promise<Head>;
  expires: number;
}

/** Probes by URL, oldest first (a Map keeps insertion order); only those holding bytes stay. */
const heads = new Map<string, HeadEntry>();

/** Files' versions remembered (about 200 bytes each): more than any server keeps metadata for. */
const MAX_VERSIONS = 50_000;
/** The validators of each file's last probe, by URL, oldest first (gateway.ts `version`). */
const versions = new Map<string, string>();

function rememberVersion(url: string, headers: IncomingHttpHeaders, size: number | undefined): void {
  const etag = headers.etag;
  const modified = headers['last-modified'];
  versions.delete(url);
  // Size alone does not tell two versions of a file apart.
  if (etag === undefined && modified === undefined) return;
  versions.set(url, JSON.stringify([etag ?? null, modified ?? null, size ?? null]));
  if (versions.size > MAX_VERSIONS) versions.delete(versions.keys().next().value as string);
}

/**
 * GDAL asks for a file's size (HEAD) before its first ranged read, one round trip each. The probe
 * answers the HEAD with a ranged GET of the file's first bytes instead, taking the size from
 * Content-Range, and keeps those bytes for the read that follows: a cold open costs one round trip.
 * Concurrent probes of one file share one request.
 */
function probe(url: string, lane: number): Promise<Head> {
  const known = heldHead(url);
  if (known) return known;
  const pending = probeOnce(url, lane);
  heads.delete(url);
  // The file may have changed: its block tables are read again from this probe.
  tables.delete(url);
  heads.set(url, { pending, expires: Date.now() + HEAD_TTL_MS });
  const forget = (): void => {
    if (heads.get(url)?.pending === pending) heads.delete(url);
  };
  // Failures and heads without bytes are not kept: the next open asks upstream again.
  pending.then((head) => (head.bytes ? undefined : forget()), forget);
  while (heads.size > MAX_HEADS) heads.delete(heads.keys().next().value as string);
  return pending;
}

function heldHead(url: string): Promise<Head> | undefined {
  const entry = heads.get(url);
  return entry && entry.expires > Date.now() ? entry.pending : undefined;
}

async function probeOnce(url: string, lane: number): Promise<Head> {
  const signal = AbortSignal.timeout(data.timeoutMs);
  const res = await upstream(url, `bytes=0-${data.probeBytes - 1}`, signal, lane);
  const status = res.statusCode ?? 502;
  const headers = relayedHeaders(res.headers);
  delete headers['content-range'];
  let size: number | undefined;
  let bytes: Buffer | undefined;
  if (status === 206) {
    const total = /\/(\d+)\s*$/.exec(res.headers['content-range'] ?? '');
    size = total ? Number(total[1]) : undefined;
    bytes = await readAll(res, data.probeBytes, signal);
    charge(data.budgets, lane, bytes.length);
    if (size === undefined) bytes = undefined;
  } else {
    if (status === 200 && res.headers['content-length'] !== undefined) size = Number(res.headers['content-length']);
    // A server that ignores Range sends the whole file: the size is all a HEAD needs.
    res.destroy();
  }
  delete headers['content-length'];
  if (status === 200 || status === 206) rememberVersion(url, res.headers, size);
  return { status: status === 206 ? 200 : status, headers, size, bytes };
}

/** The whole body (at most `limit` bytes); `charge` may refuse a chunk (the reading request's budget is spent), which ends the read. */
function readAll(res: IncomingMessage, limit: number, signal: AbortSignal, charge?: (bytes: number) => boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onAbort = (): void => {
      res.destroy(new GatewayFault(504, 'upstream timeout'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) res.destroy(new GatewayFault(502, 'upstream sent more than was asked for'));
      else if (charge && !charge(chunk.length)) res.destroy(new GatewayFault(GATEWAY_BUDGET_STATUS, 'the reading request spent its upstream budget'));
      else chunks.push(chunk);
    });
    res.once('end', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(Buffer.concat(chunks, length));
    });
    res.once('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
  });
}

function relayedHeaders(from: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of RELAYED) {
    const value = from[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

interface Target {
  url: string;
  lane: number;
}

/** The upstream URL and lane a gateway path names; else 403 (no token, not a gateway path) or 470 (refused by the policy). */
function targetOf(reqUrl: string): Target | number {
  const prefix = `/${data.token}/`;
  if (!reqUrl.startsWith(prefix)) return 403;
  const rest = reqUrl.slice(prefix.length);
  const m = /^(\d{1,9})\/(https?|s3|gs|az)\/([^/?#]+)(\/[^#]*)$/.exec(rest);
  if (!m) return 403;
  try {
    const loc = policy.resolve(`${m[2]}://${m[3]}${m[4]}`);
    return loc.kind === 'http' ? { url: loc.url, lane: Number(m[1]) } : GATEWAY_REFUSED_STATUS;
  } catch {
    return GATEWAY_REFUSED_STATUS;
  }
}

/** A single `bytes=a-b` range, or undefined for anything else (open-ended, suffix, several). */
function simpleRange(header: string | undefined): [number, number] | undefined {
  const m = header ? /^bytes=(\d+)-(\d+)$/.exec(header.trim()) : null;
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = Number(m[2]);
  return start <= end ? [start, end] : undefined;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const target = targetOf(req.url ?? '');
  if (typeof target === 'number') {
    res.writeHead(target, { 'Content-Length': 0 }).end();
    return;
  }
  const { url, lane } = target;
  if (req.method === 'HEAD') {
    if (!heldHead(url) && !mayFetch(data.budgets, lane)) {
      res.writeHead(GATEWAY_BUDGET_STATUS, { 'Content-Length': 0 }).end();
      return;
    }
    const head = await probe(url, lane);
    const headers: Record<string, string | number> = { ...head.headers };
    if (head.size !== undefined) headers['content-length'] = head.size;
    res.writeHead(head.status, headers).end();
    return;
  }
  if (req.method !== 'GET') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Length': 0 }).end();
    return;
  }
  const range = req.headers.range;
  const wanted = simpleRange(range);
  const known = wanted ? heldHead(url) : undefined;
  if (wanted && known) {
    const head = await known.catch(() => undefined);
    if (head?.bytes && head.size !== undefined && wanted[1] < head.bytes.length) {
      const body = head.bytes.subarray(wanted[0], wanted[1] + 1);
      res.writeHead(206, { ...head.headers, 'content-range': `bytes ${wanted[0]}-${wanted[1]}/${head.size}`, 'content-length': body.length });
      res.end(body);
      return;
    }
  }
  if (wanted) {
    const cover = heldCover(url, wanted);
    if (cover && (await serveHeld(cover, wanted, res))) return;
  }
  if (!mayFetch(data.budgets, lane)) {
    res.writeHead(GATEWAY_BUDGET_STATUS, { 'Content-Length': 0 }).end();
    return;
  }
  if (wanted && wanted[1] - wanted[0] < MAX_SHARED_RANGE) {
    await relayShared(url, lane, wanted, res);
    return;
  }
  await relay(url, lane, range, res);
}

/**
 * Ranges fetched for GDAL are kept a short while, by upstream URL, and a read that falls inside one
 * (in flight or done) is answered from its bytes. Each dataset handle reads on a lane of its own, so
 * /vsicurl/'s cache is per handle: without this, two handles reading the same blocks at once (the
 * tiles of a viewport never seen, spread over the handles to fetch in parallel) would each fetch them
 * upstream. Bounded by bytes and by age; only whole 206 answers are kept.
 */
interface SharedRange {
  start: number;
  end: number;
  /** The answer's bytes, or undefined when it was not a whole 206 (the reader then fetches its own). */
  body: Promise<SharedBody | undefined>;
  /** Infinity while in flight. */
  expires: number;
  bytes: number;
}

interface SharedBody {
  bytes: Buffer;
  size: number;
  headers: Record<string, string>;
}

/** A range larger than this is streamed, not held (GDAL's block reads are far smaller). */
const MAX_SHARED_RANGE = 4 * 1024 * 1024;
/** Long enough for the reads of one viewport, which follow within a second or two. */
const SHARED_TTL_MS = 10_000;
/** Bytes held in all (GDAL keeps its own copy; these only bridge reads that overlap in time). */
const MAX_SHARED_BYTES = 32 * 1024 * 1024;

/** Held ranges by URL; `sharedOrder` lists them oldest first across URLs, for eviction. */
const shared = new Map<string, SharedRange[]>();
const sharedOrder: Array<{ url: string; range: SharedRange }> = [];
let sharedBytes = 0;

function dropShared(url: string, range: SharedRange): void {
  const list = shared.get(url);
  const at = list ? list.indexOf(range) : -1;
  if (at < 0) return;
  list!.splice(at, 1);
  if (list!.length === 0) shared.delete(url);
  sharedBytes -= range.bytes;
}

/** Drops expired ranges, then the oldest until the held bytes fit. */
function trimShared(now: number): void {
  while (sharedOrder.length > 0) {
    const { url, range } = sharedOrder[0]!;
    const inList = shared.get(url)?.includes(range) ?? false;
    if (inList && range.expires > now && sharedBytes <= MAX_SHARED_BYTES) break;
    sharedOrder.shift();
    dropShared(url, range);
  }
}

/**
 * Held ranges (in flight or done) of `url` that together cover `wanted`, in order; undefined when
 * some byte of it is not held.
 */
function heldCover(url: string, wanted: [number, number]): SharedRange[] | undefined {
  const now = Date.now();
  trimShared(now);
  const live = (shared.get(url) ?? []).filter((r) => r.expires > now && r.end >= wanted[0] && r.start <= wanted[1]);
  const cover: SharedRange[] = [];
  for (let at = wanted[0]; at <= wanted[1]; ) {
    let next: SharedRange | undefined;
    for (const r of live) if (r.start <= at && r.end >= at && (!next || r.end > next.end)) next = r;
    if (!next) return undefined;
    cover.push(next);
    at = next.end + 1;
  }
  return cover;
}

/** The parts of `wanted` that no held range of `url` covers. */
function unheld(url: string, wanted: [number, number]): Array<[number, number]> {
  const now = Date.now();
  const live = (shared.get(url) ?? []).filter((r) => r.expires > now && r.end >= wanted[0] && r.start <= wanted[1]).sort((a, b) => a.start - b.start);
  const gaps: Array<[number, number]> = [];
  let at = wanted[0];
  for (const r of live) {
    if (r.start > at) gaps.push([at, Math.min(wanted[1], r.start - 1)]);
    at = Math.max(at, r.end + 1);
    if (at > wanted[1]) break;
  }
  if (at <= wanted[1]) gaps.push([at, wanted[1]]);
  return gaps;
}

/** Answers `wanted` from held ranges that cover it; false when one of their answers was not kept (the caller fetches). */
async function serveHeld(cover: SharedRange[], wanted: [number, number], res: ServerResponse): Promise<boolean> {
  const bodies = await Promise.all(cover.map((r) => r.body.catch(() => undefined)));
  const parts: Buffer[] = [];
  let at = wanted[0];
  for (let i = 0; i < cover.length; i++) {
    const body = bodies[i];
    if (!body) return false;
    const r = cover[i]!;
    parts.push(body.bytes.subarray(at - r.start, Math.min(wanted[1], r.end) - r.start + 1));
    at = r.end + 1;
  }
  const first = bodies[0]!;
  const part = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  res.writeHead(206, { ...first.headers, 'content-range': `bytes ${wanted[0]}-${wanted[1]}/${first.size}`, 'content-length': part.length });
  res.end(part);
  return true;
}

/** Registers `wanted` of `url` as held (in flight); `done` settles it with its bytes or drops it. */
function holdRange(url: string, wanted: [number, number]): { range: SharedRange; done: (body: SharedBody | undefined) => void } {
  let settle!: (body: SharedBody | undefined) => void;
  const range: SharedRange = {
    start: wanted[0],
    end: wanted[1],
    body: new Promise((resolve) => (settle = resolve)),
    expires: Number.POSITIVE_INFINITY,
    bytes: 0,
  };
  const list = shared.get(url) ?? [];
  list.push(range);
  shared.set(url, list);
  sharedOrder.push({ url, range });
  const done = (body: SharedBody | undefined): void => {
    settle(body);
    // Counted only while held: eviction may have let it go while it was in flight.
    if (body && shared.get(url)?.includes(range)) {
      range.bytes = body.bytes.length;
      sharedBytes += body.bytes.length;
      range.expires = Date.now() + SHARED_TTL_MS;
    } else dropShared(url, range);
    trimShared(Date.now());
  };
  return { range, done };
}

/** Whether `up` is the whole 206 answer to `wanted`; its total size if so. */
function wholeAnswer(up: IncomingMessage, wanted: [number, number]): number | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+)\s*$/.exec(up.headers['content-range'] ?? '');
  return up.statusCode === 206 && m && Number(m[1]) === wanted[0] && Number(m[2]) === wanted[1] ? Number(m[3]) : undefined;
}

function sharedBody(up: IncomingMessage, bytes: Buffer, size: number): SharedBody {
  const headers = relayedHeaders(up.headers);
  delete headers['content-range'];
  delete headers['content-length'];
  return { bytes, size, headers };
}

/**
 * One upstream range read, held for other readers of the same bytes (see SharedRange). A whole 206
 * answer is read in full, then sent; anything else (an error status, a server that ignores Range)
 * is streamed to this reader as `relay` does, and the others fetch their own.
 */
async function relayShared(url: string, lane: number, wanted: [number, number], res: ServerResponse): Promise<void> {
  const { done } = holdRange(url, wanted);
  let body: SharedBody | undefined;
  try {
    const signal = AbortSignal.timeout(data.timeoutMs);
    const up = await upstream(url, `bytes=${wanted[0]}-${wanted[1]}`, signal, lane);
    const size = wholeAnswer(up, wanted);
    if (size === undefined) {
      streamTo(up, res, lane, signal);
      return;
    }
    let spent = false;
    const chargeLane = (n: number): boolean => {
      spent ||= !charge(data.budgets, lane, n);
      return !spent;
    };
    const length = wanted[1] - wanted[0] + 1;
    const bytes = await readAll(up, length, signal, chargeLane).catch((err: unknown) => {
      // Past the reading request's budget GDAL's read fails, and the request says why.
      if (spent) return undefined;
      throw err;
    });
    if (!bytes) {
      res.writeHead(GATEWAY_BUDGET_STATUS, { 'Content-Length': 0 }).end();
      return;
    }
    if (!up.complete || bytes.length !== length) {
      upstreamFault();
      res.destroy();
      return;
    }
    body = sharedBody(up, bytes, size);
    res.writeHead(206, { ...body.headers, 'content-range': `bytes ${wanted[0]}-${wanted[1]}/${size}`, 'content-length': bytes.length });
    res.end(bytes);
  } finally {
    done(body);
  }
}

/** Block tables read from probes, by the probe's bytes (they go when the probe goes). */
/**
 * Block tables by URL, oldest first, read from a probe's bytes when first needed and kept after the
 * probe goes (a map panned to a new region a minute later still finds them); a new probe of the URL
 * (GDAL opening it again) replaces them. A few KiB each.
 */
const tables = new Map<string, { images: TiffImage[]; size: number }>();
const MAX_TABLES = 256;

async function tablesOf(url: string): Promise<{ images: TiffImage[]; size: number } | undefined> {
  const known = tables.get(url);
  if (known) return known;
  const head = await heldHead(url)?.catch(() => undefined);
  if (!head?.bytes || head.size === undefined) return undefined;
  const read = { images: tiffImages(head.bytes), size: head.size };
  tables.set(url, read);
  if (tables.size > MAX_TABLES) tables.delete(tables.keys().next().value as string);
  return read;
}

/**
 * Fetches blocks of a file ahead of the GDAL reads that will ask for them (gateway.ts `prefetch`),
 * as held ranges, in parallel: where the probe that opened the file held its block tables.
 */
async function prefetch(path: string, image: PrefetchImage, blocks: Array<[number, number]>, slot: number): Promise<void> {
  const target = targetOf(path);
  if (typeof target === 'number') return;
  const known = await tablesOf(target.url);
  if (!known) return;
  for (const range of blockRanges(known.images, image, blocks, data.chunkBytes ?? 16_384, known.size)) {
    for (const gap of unheld(target.url, range)) {
      if (gap[1] - gap[0] >= MAX_SHARED_RANGE || !slotMayFetch(data.budgets, slot)) continue;
      void prefetchRange(target.url, gap, slot);
    }
  }
}

async function prefetchRange(url: string, wanted: [number, number], slot: number): Promise<void> {
  const { done } = holdRange(url, wanted);
  let body: SharedBody | undefined;
  try {
    const signal = AbortSignal.timeout(data.timeoutMs);
    const up = await clientFor(url).get(url, { range: `bytes=${wanted[0]}-${wanted[1]}`, signal, onSend: () => countSlotRequest(data.budgets, slot) });
    const size = wholeAnswer(up, wanted);
    if (size === undefined) {
      up.destroy();
      return;
    }
    const bytes = await readAll(up, wanted[1] - wanted[0] + 1, signal, (n) => chargeSlot(data.budgets, slot, n));
    if (up.complete && bytes.length === wanted[1] - wanted[0] + 1) body = sharedBody(up, bytes, size);
  } catch {
    // A fetch ahead that fails costs nothing but itself: GDAL's read asks again, and reports what it meets.
  } finally {
    done(body);
  }
}

/** Streams one upstream answer to GDAL; a body cut short upstream is cut short here too. */
async function relay(url: string, lane: number, range: string | undefined, res: ServerResponse): Promise<void> {
  const signal = AbortSignal.timeout(data.timeoutMs);
  streamTo(await upstream(url, range, signal, lane), res, lane, signal);
}

/** Streams an upstream answer, its body not yet read, to GDAL, charging the lane as it goes. */
function streamTo(up: IncomingMessage, res: ServerResponse, lane: number, signal: AbortSignal): void {
  res.writeHead(up.statusCode ?? 502, relayedHeaders(up.headers));
  const onAbort = (): void => {
    up.destroy();
    res.destroy();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  up.on('error', () => {
    upstreamFault();
    res.destroy();
  });
  res.once('close', () => {
    signal.removeEventListener('abort', onAbort);
    if (!up.complete) up.destroy();
  });
  up.once('end', () => {
    // Content-Length promised more than arrived: the socket must close so curl reports the gap.
    if (!up.complete) {
      upstreamFault();
      res.destroy();
    }
  });
  up.pipe(res);
  // Past the reading request's budget the body is cut (after the chunk that spent it, which the
  // pipe has already written): GDAL's read fails, and the request says why.
  up.on('data', (chunk: Buffer) => {
    if (!charge(data.budgets, lane, chunk.length)) {
      up.unpipe(res);
      up.destroy();
      res.destroy();
    }
  });
  // A write racing a destroy must not become an unhandled 'error' that ends the thread.
  res.on('error', () => undefined);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    // Credentials refused or missing before anything was sent (a service account its token endpoint refused, none
    // set) are no fault of the store's: the main thread's diagnosis asks for them again and answers what they are.
    const noCredentials = err instanceof MissingCredentials || (err instanceof TesseraError && err.kind === 'UpstreamForbidden');
    if (!(err instanceof UpstreamRefused) && !noCredentials) upstreamFault();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(faultStatus(err), { 'Content-Length': 0 }).end();
  });
});
server.keepAliveTimeout = 60_000;
server.on('clientError', (_err, socket) => socket.destroy());
server.once('error', () => {
  Atomics.store(data.ready, 0, -1);
  Atomics.notify(data.ready, 0);
});
server.listen(data.port, '127.0.0.1', () => {
  Atomics.store(data.ready, 0, (server.address() as AddressInfo).port);
  Atomics.notify(data.ready, 0);
});
parentPort?.on('message', (msg: unknown) => {
  if (msg === 'close') {
    server.close();
    return;
  }
  if (typeof msg !== 'object' || msg === null) return;
  const { type, id, path } = msg as { type?: unknown; id?: unknown; path?: unknown };
  // /metrics asks for the upstream counts of GDAL's reads; the source layer for a file's version (gateway.ts).
  if (type === 'host-stats') parentPort?.postMessage({ type: 'answer', id, answer: client.hostStats() });
  else if (type === 'credentials') {
    const asked = (msg as { scheme?: unknown }).scheme;
    const scheme = asked === 'gs' || asked === 'az' ? asked : 's3';
    credentials[scheme]().then(
      ({ accessKeyId, secretAccessKey, sessionToken, expiration, sas, bearer }) =>
        parentPort?.postMessage({ type: 'answer', id, answer: { credentials: { accessKeyId, secretAccessKey, sessionToken, expiration, sas, bearer } } }),
      // The kind crosses too: credentials the provider was refused are a 403 on either thread.
      (err: unknown) =>
        parentPort?.postMessage({
          type: 'answer',
          id,
          answer: { error: err instanceof Error ? err.message : String(err), kind: err instanceof TesseraError ? err.kind : undefined },
        }),
    );
  } else if (type === 'prefetch' && typeof path === 'string') {
    const { image, blocks, slot } = msg as { image: PrefetchImage; blocks: Array<[number, number]>; slot: number };
    // Fetching ahead is an optimisation: whatever fails in it (a hostile file's tables included) is
    // dropped here, never an unhandled rejection in the gateway's thread; GDAL's own read reports it.
    prefetch(path, image, blocks, slot).catch(() => undefined);
  } else if (type === 'warm-start') {
    const { bytes } = msg as { bytes?: unknown };
    if (!(bytes instanceof Uint8Array)) return;
    startWarmUp(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).then(
      (url) => parentPort?.postMessage({ type: 'answer', id, answer: url }),
      () => parentPort?.postMessage({ type: 'answer', id, answer: undefined }),
    );
  } else if (type === 'warm-end') {
    endWarmUp();
  } else if (type === 'version' && typeof path === 'string') {
    const target = targetOf(path);
    parentPort?.postMessage({ type: 'answer', id, answer: typeof target === 'number' ? undefined : versions.get(target.url) });
  }
});
