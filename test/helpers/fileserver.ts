/**
 * A static file server with HTTP Range support on 127.0.0.1, the stand-in for object storage in
 * tests: GDAL's /vsicurl/ reads the fixtures through it exactly as it would read a remote COG.
 * It counts requests (to check how many round trips a tile costs), can delay every answer, can
 * serve generated documents, and can truncate a file to simulate a broken upstream. Like nginx and
 * object stores it sends an ETag and Last-Modified with every file, unless told not to. An alias
 * serves a folder's files again under another prefix with ETags of their own: to a client and its
 * caches a never-seen upload, without copying the bytes (the benchmark's first views).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

/** What the server has answered since the last reset: the upstream cost of what was asked of tessera. */
export interface FileServerStats {
  requests: number;
  /** Body bytes sent. */
  bytes: number;
  /**
   * Sequential round trips: requests that arrived while no other was in flight. Requests a client
   * makes in parallel count once, so with a delay per answer this is the chain of waits a client saw.
   */
  rounds: number;
}

export interface FileServerOptions {
  /** Keep the per-request `log` (tests read it; a long benchmark would only grow it). Default true. */
  keepLog?: boolean;
  /** Send ETag and Last-Modified (nginx's: size and modification time). Default true. */
  validators?: boolean;
  /**
   * The address to listen on; default 127.0.0.1. The container test listens on every address, so that
   * containers reach it through their network's gateway (the URL still names 127.0.0.1).
   */
  host?: string;
}

export interface FileServer {
  url: string;
  /** Requests seen, as "METHOD /path [range]". */
  log: string[];
  stats(): FileServerStats;
  resetStats(): void;
  /** Serve a document at `urlPath` (takes precedence over files). */
  put(urlPath: string, body: string | Buffer, contentType?: string): void;
  /**
   * Serve the files under `target` also under `prefix` (both start and end with '/'), each with an
   * ETag that differs from the original's. Documents `put` at a path under `prefix` still win.
   */
  alias(prefix: string, target: string): void;
  /** Milliseconds to wait before every answer. */
  delayMs: number;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.tif': 'image/tiff',
  '.json': 'application/json',
  '.gz': 'application/gzip',
};

export async function startFileServer(root: string, options: FileServerOptions = {}): Promise<FileServer> {
  const keepLog = options.keepLog ?? true;
  const validators = options.validators ?? true;
  const docs = new Map<string, { body: Buffer; type: string; modified: Date }>();
  const aliases = new Map<string, string>();
  const log: string[] = [];
  const state = { delayMs: 0 };
  const counters: FileServerStats = { requests: 0, bytes: 0, rounds: 0 };
  let inFlight = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const range = req.headers.range;
    if (keepLog) log.push(`${req.method} ${url.pathname}${range ? ` ${range}` : ''}`);
    counters.requests++;
    if (inFlight === 0) counters.rounds++;
    inFlight++;
    res.once('close', () => inFlight--);
    if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));

    let body: Buffer | undefined;
    let type = 'application/octet-stream';
    let filePath: string | undefined;
    let size: number;
    let modified: Date;
    let aliasOf: string | undefined;
    const doc = docs.get(url.pathname);
    if (doc) {
      body = doc.body;
      type = doc.type;
      size = body.length;
      modified = doc.modified;
    } else {
      let pathname = url.pathname;
      for (const [prefix, target] of aliases) {
        if (!pathname.startsWith(prefix)) continue;
        pathname = target + pathname.slice(prefix.length);
        aliasOf = prefix;
        break;
      }
      filePath = path.join(root, decodeURIComponent(pathname));
      if (!filePath.startsWith(path.resolve(root))) {
        res.writeHead(403).end();
        return;
      }
      try {
        const stat = await fs.stat(filePath);
        if (!stat.isFile()) throw new Error('not a file');
        size = stat.size;
        modified = stat.mtime;
        type = TYPES[path.extname(filePath)] ?? type;
      } catch {
        const text = 'not found';
        res.writeHead(404, { 'Content-Type': 'text/plain', 'Content-Length': text.length });
        res.end(req.method === 'HEAD' ? undefined : text);
        return;
      }
    }

    const headers: Record<string, string | number> = { 'Accept-Ranges': 'bytes', 'Content-Type': type };
    if (validators) {
      const tag = `${Math.floor(modified.getTime() / 1000).toString(16)}-${size.toString(16)}`;
      headers['ETag'] = aliasOf === undefined ? `"${tag}"` : `"${tag}-${Buffer.from(aliasOf).toString('hex')}"`;
      headers['Last-Modified'] = modified.toUTCString();
    }
    let start = 0;
    let end = size - 1;
    let status = 200;
    const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range) : null;
    if (m) {
      if (m[1] === '' && m[2] !== '') {
        start = Math.max(0, size - Number(m[2]));
      } else {
        start = Number(m[1]);
        if (m[2] !== '') end = Math.min(end, Number(m[2]));
      }
      if (start >= size || start > end) {
        res.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
        return;
      }
      status = 206;
      headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
    }
    headers['Content-Length'] = end - start + 1;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    counters.bytes += end - start + 1;
    if (body) {
      res.end(body.subarray(start, end + 1));
    } else {
      createReadStream(filePath!, { start, end }).pipe(res);
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    stats: () => ({ ...counters }),
    resetStats() {
      counters.requests = 0;
      counters.bytes = 0;
      counters.rounds = 0;
    },
    put(urlPath, content, contentType = 'application/json') {
      docs.set(urlPath, { body: Buffer.isBuffer(content) ? content : Buffer.from(content), type: contentType, modified: new Date() });
    },
    alias(prefix, target) {
      if (!prefix.startsWith('/') || !prefix.endsWith('/') || !target.startsWith('/') || !target.endsWith('/')) {
        throw new Error(`alias: ${prefix} and ${target} must start and end with '/'`);
      }
      aliases.set(prefix, target);
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(v: number) {
      state.delayMs = v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The shared fixtures folder, beside the repository. */
import { FIXTURES } from './paths.js';
export { FIXTURES };

/** The fixture STAC item with its `https://myurl.com/` hrefs pointed at a local server. */
export async function fixtureItem(serverUrl: string): Promise<string> {
  const text = await fs.readFile(path.join(FIXTURES, 'item.json'), 'utf8');
  return text.replaceAll('https://myurl.com/', `${serverUrl}/`);
}

/** The shared fixture mosaic (MosaicJSON 0.0.2) with its bare asset names made absolute on a local server. */
export async function fixtureMosaic(serverUrl: string): Promise<{ tiles: Record<string, string[]> } & Record<string, unknown>> {
  const doc = JSON.parse(await fs.readFile(path.join(FIXTURES, 'mosaic.json'), 'utf8')) as { tiles: Record<string, string[]> } & Record<string, unknown>;
  doc.tiles = Object.fromEntries(Object.entries(doc.tiles).map(([k, v]) => [k, v.map((a) => `${serverUrl}/${a}`)]));
  return doc;
}
