/**
 * Real S3-compatible servers on loopback for the object-store tests: moto's server mode (PyPI, in
 * .parity/objstore, installed by tools/objstore/setup.sh), filled by tools/objstore/seed.py and
 * then made to check every request's AWS Signature V4 against the keys it issued. A recording
 * proxy may stand in front of one, to see what tessera sent (headers, how many requests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

export interface GcsEmulator {
  /** http://127.0.0.1:PORT, the XML API's address (TESSERA_GS_ENDPOINT). */
  endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts gcp-storage-emulator (PyPI, tools/objstore/gcs.sh) on a free loopback port, in memory, and
 * uploads `objects` (key → local file) into `bucket` through its XML API. It checks no credentials.
 */
export async function startGcsEmulator(bucket: string, objects: Record<string, string>): Promise<GcsEmulator> {
  const setup = await run('bash', [path.join(REPO_ROOT, 'tools/objstore/gcs.sh')]);
  if (setup.status !== 0) throw new Error(`tools/objstore/gcs.sh failed: ${setup.stderr.slice(-2000)}`);
  const port = await freePort();
  const child = spawn(setup.stdout.trim(), ['start', '--host', '127.0.0.1', '--port', String(port), '--in-memory', '--default-bucket', bucket, '-q'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  const close = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`gcp-storage-emulator exited with ${child.exitCode}: ${stderr}`);
      if (Date.now() > deadline) throw new Error('gcp-storage-emulator did not start within 30 s');
      const up = await fetch(`${endpoint}/`).then(
        async (res) => {
          await res.arrayBuffer();
          return res.ok;
        },
        () => false,
      );
      if (up) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const [key, file] of Object.entries(objects)) {
      const res = await fetch(`${endpoint}/${bucket}/${key}`, {
        method: 'PUT',
        body: readFileSync(file),
        headers: { 'content-type': 'application/octet-stream' },
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`uploading ${key} to the GCS emulator: ${res.status}`);
    }
    return { endpoint, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Google's token endpoint's address, which google-auth-library signs as the assertion's audience. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

export interface OAuthStandIn {
  /** The token endpoint (a service account key's token_uri). */
  tokenUri: string;
  /** host:port of the proxy in front of the store, which lets through only requests bearing a token issued here. */
  storeHost: string;
  /** Tokens issued, in order. */
  issued: string[];
  /** Requests that reached the proxy: path and Authorization header. */
  requests: Array<{ path: string; authorization: string | undefined }>;
  /** How long issued tokens last (expires_in, seconds). */
  lifetimeSeconds: number;
  close(): Promise<void>;
}

/**
 * A stand-in for Google's OAuth token endpoint and for the check Cloud Storage makes of a bearer
 * token: no Google endpoint is reachable here, and no GCS emulator checks tokens. The token endpoint
 * verifies the service account's JWT assertion as Google's does (RS256 signature by the key whose
 * public half it knows, issuer, read-only scope, audience, expiry) and issues a random token; the
 * proxy in front of the store refuses any request without a token it issued (401, as GCS answers).
 */
export async function startOAuthStandIn(account: { email: string; publicKey: KeyObject }, store: string): Promise<OAuthStandIn> {
  const issued: string[] = [];
  const requests: OAuthStandIn['requests'] = [];
  const state = { lifetimeSeconds: 3600 };
  const refuse = (res: http.ServerResponse, description: string): void => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'invalid_grant', error_description: description }));
  };
  const tokens = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => {
      body += d;
    });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      if (req.method !== 'POST' || form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse(res, 'Invalid grant_type.');
      const [head, claims, signature] = (form.get('assertion') ?? '').split('.');
      if (!head || !claims || !signature) return refuse(res, 'Invalid JWT.');
      const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: string };
      if (header.alg !== 'RS256' || !verify('RSA-SHA256', Buffer.from(`${head}.${claims}`), account.publicKey, Buffer.from(signature, 'base64url'))) {
        return refuse(res, 'Invalid JWT Signature.');
      }
      const c = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')) as { iss?: string; scope?: string; aud?: string; exp?: number };
      const now = Date.now() / 1000;
      if (c.iss !== account.email || c.aud !== GOOGLE_TOKEN_URL || !(c.exp && c.exp > now)) return refuse(res, 'Invalid JWT: claims.');
      if (!(c.scope ?? '').split(' ').includes('https://www.googleapis.com/auth/devstorage.read_only')) return refuse(res, 'Invalid JWT: scope.');
      const token = `ya29.${randomBytes(24).toString('base64url')}`;
      issued.push(token);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: state.lifetimeSeconds }));
    });
  });
  const [storeHost, storePort] = store.split(':') as [string, string];
  const gate = http.createServer((req, res) => {
    const authorization = req.headers['authorization'];
    requests.push({ path: req.url ?? '', authorization });
    if (!issued.some((t) => authorization === `Bearer ${t}`)) {
      res.writeHead(401, { 'content-type': 'application/xml' });
      res.end("<?xml version='1.0' encoding='UTF-8'?><Error><Code>AuthenticationRequired</Code><Message>Authentication required.</Message></Error>");
      return;
    }
    const upstream = http.request({ host: storeHost, port: Number(storePort), method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  const listen = async (server: http.Server): Promise<number> => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const tokenPort = await listen(tokens);
  const gatePort = await listen(gate);
  const close = (server: http.Server): Promise<void> =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    tokenUri: `http://127.0.0.1:${tokenPort}/token`,
    storeHost: `127.0.0.1:${gatePort}`,
    issued,
    requests,
    get lifetimeSeconds() {
      return state.lifetimeSeconds;
    },
    set lifetimeSeconds(s: number) {
      state.lifetimeSeconds = s;
    },
    close: async () => {
      await Promise.all([close(tokens), close(gate)]);
    },
  };
}
