/**
 * Not a test: two tessera replicas behind deploy/nginx.conf with a shared Redis tile cache, on this
 * machine, measured as a client sees them: 144 distinct z12 PNG tiles of the fixture TCI.tif through
 * nginx, 8 at a time, once cold (each tile made once, by either replica, and stored) and twice warm
 * (every tile from Redis: the replicas' memory tier is off). `make bench-deploy`; prints tiles/s.
 */
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { spawn } from 'node:child_process';
import { startFileServer, FIXTURES } from '../../test/helpers/fileserver.js';
import { LOOPBACK_NETWORKS, TESSERA_COMMAND, freePort, startServer } from '../../test/parity/harness.js';
import { REPO_ROOT } from '../../test/helpers/paths.js';

const files = await startFileServer(FIXTURES);
const redisPort = await freePort();
const redis = spawn('/usr/bin/redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 500));
const env = {
  TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS,
  TESSERA_ROOT_PATH: '/tiles',
  TESSERA_TRUST_PROXY: 'true',
  TESSERA_CACHE_URL: `redis://127.0.0.1:${redisPort}/0`,
  TESSERA_LOG_LEVEL: 'warn',
  TESSERA_TILE_CACHE_BYTES: '0',
};
const replicas = await Promise.all([startServer(TESSERA_COMMAND, env), startServer(TESSERA_COMMAND, env)]);
const port = await freePort();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-deploy-'));
await fs.mkdir(path.join(dir, 'logs'));
const ports = replicas.map((r) => new URL(r.url).port);
const conf = (await fs.readFile(path.join(REPO_ROOT, 'deploy/nginx.conf'), 'utf8'))
  .replace('server 127.0.0.1:8001 ', `server 127.0.0.1:${ports[0]} `)
  .replace('server 127.0.0.1:8002 ', `server 127.0.0.1:${ports[1]} `)
  .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`)
  .replace('worker_processes auto;', 'worker_processes 1;');
await fs.writeFile(path.join(dir, 'nginx.conf'), conf);
const nginx = spawn('/usr/sbin/nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 800));

const cog = encodeURIComponent(`${files.url}/TCI.tif`);
const urls: string[] = [];
for (let x = 2311; x < 2323; x++) for (let y = 1657; y < 1669; y++) urls.push(`http://127.0.0.1:${port}/tiles/cog/tiles/WebMercatorQuad/12/${x}/${y}.png?url=${cog}`);

async function pass(label: string): Promise<void> {
  let next = 0;
  let ok = 0;
  let hits = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < urls.length) {
        const res = await fetch(urls[next++]!);
        await res.arrayBuffer();
        if (res.status === 200) ok++;
        if (res.headers.get('x-cache') === 'hit') hits++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${label}: ${urls.length} tiles (${ok} answered 200, ${hits} from the cache) in ${seconds.toFixed(2)} s: ${(urls.length / seconds).toFixed(0)} tiles/s`);
}

try {
  await pass('cold');
  await pass('warm');
  await pass('warm');
} finally {
  nginx.kill('SIGQUIT');
  redis.kill();
  await Promise.all(replicas.map((r) => r.stop()));
  await files.close();
  await fs.rm(dir, { recursive: true, force: true });
}
