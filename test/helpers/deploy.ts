/**
 * The deployment's other parts, run for tests and the deployment benchmark: Debian's nginx with the
 * repository's deploy/nginx.conf (its upstream ports and listen address rewritten for the replicas
 * at hand), and Debian's redis-server on a free loopback port, nothing persisted.
 */
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { spawn } from 'node:child_process';
import { REPO_ROOT } from './paths.js';
import { freePort } from '../parity/harness.js';

export const NGINX = '/usr/sbin/nginx';
export const REDIS_SERVER = '/usr/bin/redis-server';

export interface Running {
  /** nginx: `http://127.0.0.1:PORT`; Redis: `redis://127.0.0.1:PORT/0`. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** deploy/nginx.conf in front of two replicas (`http://127.0.0.1:PORT` each), answering once /tiles/healthz does. */
export async function startNginx(replicaUrls: [string, string]): Promise<Running> {
  const port = await freePort();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-nginx-'));
  await fs.mkdir(path.join(dir, 'logs'));
  const ports = replicaUrls.map((u) => new URL(u).port);
  const conf = (await fs.readFile(path.join(REPO_ROOT, 'deploy/nginx.conf'), 'utf8'))
    .replace('server 127.0.0.1:8001 ', `server 127.0.0.1:${ports[0]} `)
    .replace('server 127.0.0.1:8002 ', `server 127.0.0.1:${ports[1]} `)
    .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`)
    .replace('worker_processes auto;', 'worker_processes 1;');
  await fs.writeFile(path.join(dir, 'nginx.conf'), conf);
  const nginx = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (nginx.exitCode === null) {
      const gone = new Promise((r) => nginx.once('exit', r));
      nginx.kill('SIGQUIT');
      await gone;
    }
    await fs.rm(dir, { recursive: true, force: true });
  };
  const until = Date.now() + 15_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/tiles/healthz`)).status === 200) return { url, port, stop };
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      await stop();
      throw new Error('nginx did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** redis-server on `port` (a free one by default), answering PING before this resolves. */
export async function startRedis(port?: number): Promise<Running> {
  const p = port ?? (await freePort());
  const redis = spawn(REDIS_SERVER, ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (redis.exitCode !== null) return resolve();
      redis.once('exit', () => resolve());
      redis.kill('SIGKILL');
    });
  const { Socket } = await import('node:net');
  const until = Date.now() + 10_000;
  for (;;) {
    const pong = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.setTimeout(500, () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(false));
      socket.connect(p, '127.0.0.1', () => socket.write('PING\r\n'));
      socket.once('data', (d) => {
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
    });
    if (pong) return { url: `redis://127.0.0.1:${p}/0`, port: p, stop };
    if (Date.now() > until) {
      await stop();
      throw new Error('redis-server did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
