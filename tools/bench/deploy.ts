/**
 * Not a test: two tessera replicas behind deploy/nginx.conf with a shared Redis tile cache, on this
 * machine, measured as a client sees them: 144 distinct z12 PNG tiles of the fixture TCI.tif through
 * nginx, 8 at a time, once cold (each tile made once, by either replica, and stored) and twice warm
 * (every tile from Redis: the replicas' memory tier is off). `make bench-deploy`; prints tiles/s.
 */
import { startFileServer, FIXTURES } from '../../test/helpers/fileserver.js';
import { LOOPBACK_NETWORKS, TESSERA_COMMAND, startServer } from '../../test/parity/harness.js';
import { startNginx, startRedis } from '../../test/helpers/deploy.js';

const files = await startFileServer(FIXTURES);
const redis = await startRedis();
const env = {
  TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS,
  TESSERA_ROOT_PATH: '/tiles',
  TESSERA_TRUST_PROXY: 'true',
  TESSERA_CACHE_URL: redis.url,
  TESSERA_LOG_LEVEL: 'warn',
  TESSERA_TILE_CACHE_BYTES: '0',
};
const replicas = await Promise.all([startServer(TESSERA_COMMAND, env), startServer(TESSERA_COMMAND, env)]);
// Both connected to Redis before the first tile (a replica not yet connected stores nothing).
while (!replicas.every((r) => r.outputTail().includes('tile cache: Redis is reachable'))) await new Promise((r) => setTimeout(r, 50));
const nginx = await startNginx([replicas[0]!.url, replicas[1]!.url]);

const cog = encodeURIComponent(`${files.url}/TCI.tif`);
const urls: string[] = [];
for (let x = 2311; x < 2323; x++) for (let y = 1657; y < 1669; y++) urls.push(`${nginx.url}/tiles/cog/tiles/WebMercatorQuad/12/${x}/${y}.png?url=${cog}`);

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
  console.log(
    `${label}: ${urls.length} tiles (${ok} answered 200, ${hits} from the cache) in ${seconds.toFixed(2)} s: ${(urls.length / seconds).toFixed(0)} tiles/s`,
  );
}

try {
  await pass('cold');
  await pass('warm');
  await pass('warm');
} finally {
  await nginx.stop();
  await redis.stop();
  await Promise.all(replicas.map((r) => r.stop()));
  await files.close();
}
