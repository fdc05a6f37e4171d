/**
 * Real S3-compatible servers on loopback for the object-store tests: moto's server mode (PyPI, in
 * .parity/objstore, installed by tools/objstore/setup.sh), filled by tools/objstore/seed.py and
 * then made to check every request's AWS Signature V4 against the keys it issued. A recording
 * proxy may stand in front of one, to see what tessera sent (headers, how many requests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from './paths.js';
import { run } from './run.js';

export interface Keys {
  access_key_id: string;
  secret_access_key: string;
  session_token?: string;
}

export interface Moto {
  /** http://127.0.0.1:PORT */
  endpoint: string;
  /** host:port, as AWS_S3_ENDPOINT takes it. */
  host: string;
  /** A user who may read every bucket, one who may read none, a role session who may read every bucket. */
  keys: { reader: Keys; nobody: Keys; session: Keys };
  close(): Promise<void>;
}

export interface BucketPlan {
  /** key → local file */
  objects: Record<string, string>;
  /** Anyone may read its objects, unsigned (a bucket policy). */
  public?: boolean;
}

const VENV = path.join(REPO_ROOT, '.parity/objstore');

/** Installs moto into its venv unless it is there (idempotent, a few seconds when it is). */
export async function installMoto(): Promise<void> {
  const setup = await run('bash', [path.join(REPO_ROOT, 'tools/objstore/setup.sh')]);
  if (setup.status !== 0) throw new Error(`tools/objstore/setup.sh failed: ${setup.stderr.slice(-2000)}`);
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitUntilUp(endpoint: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${endpoint}/moto-api/data.json`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('moto_server did not start within 30 s');
}

/** Starts moto on a free loopback port, fills its buckets, and (with `auth`) turns signature checks on. */
export async function startMoto(buckets: Record<string, BucketPlan>, auth = true): Promise<Moto> {
  const port = await freePort();
  const child = spawn(path.join(VENV, 'bin/moto_server'), ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const close = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitUntilUp(endpoint, child);
    const seeded = await run(path.join(VENV, 'bin/python'), [path.join(REPO_ROOT, 'tools/objstore/seed.py')], {
      input: JSON.stringify({ endpoint, buckets, auth }),
    });
    if (seeded.status !== 0) throw new Error(`seed.py failed: ${seeded.stderr.slice(-2000)}\n${stderr}`);
    return { endpoint, host: `127.0.0.1:${port}`, keys: JSON.parse(seeded.stdout) as Moto['keys'], close };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface Recorder {
  /** host:port of the proxy. */
  host: string;
  /** Requests forwarded since the last reset: method, path and headers as tessera sent them. */
  requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
  /** Body bytes of the answers relayed since the last reset (the file server's `bytes`, for the same reads). */
  bytes(): number;
  reset(): void;
  close(): Promise<void>;
}

/** A proxy on loopback that forwards every request to `target` (host:port) as it came, Host included (signatures cover it), and records it. */
export async function startRecorder(target: string): Promise<Recorder> {
  const [targetHost, targetPort] = target.split(':') as [string, string];
  const requests: Recorder['requests'] = [];
  let bytes = 0;
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    const upstream = http.request({ host: targetHost, port: Number(targetPort), method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    requests,
    bytes: () => bytes,
    reset: () => {
      requests.splice(0);
      bytes = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Azurite's well-known development account (documented by Microsoft; it guards nothing). */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface Azurite {
  /** http://127.0.0.1:PORT/devstoreaccount1, the Blob endpoint. */
  blobEndpoint: string;
  close(): Promise<void>;
}

/** Starts Azure's storage emulator (Azurite, tools/objstore/azurite.sh) on a free loopback port, its data in `location`. */
export async function startAzurite(location: string): Promise<Azurite> {
  const setup = await run('bash', [path.join(REPO_ROOT, 'tools/objstore/azurite.sh')]);
  if (setup.status !== 0) throw new Error(`tools/objstore/azurite.sh failed: ${setup.stderr.slice(-2000)}`);
  const bin = setup.stdout.trim();
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [path.join(bin, 'azurite-blob'), '--blobHost', '127.0.0.1', '--blobPort', String(port), '--location', location, '--silent', '--skipApiVersionCheck'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  const close = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Its graceful stop waits for idle keep-alive connections (a minute and more); its data is thrown away.
    child.kill('SIGKILL');
    await exited;
  };
  const blobEndpoint = `http://127.0.0.1:${port}/${AZURITE_ACCOUNT}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`azurite exited with ${child.exitCode}: ${stderr}`);
    try {
      // Any answer (an authentication error included) means it listens.
      await (await fetch(`${blobEndpoint}?comp=list`)).arrayBuffer();
      return { blobEndpoint, close };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await close();
  throw new Error('azurite did not start within 30 s');
}
