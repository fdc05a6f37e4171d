/**
 * The tile cache (cache/tile-store.ts, api/tile-cache.ts) with a real redis-server (Debian's) and
 * two tessera processes: a tile made by one is served by the other with no upstream read; killing
 * Redis loses no request (tiles are made without it, errors counted); when Redis is back, sharing
 * resumes. And in one process: the key ignores parameter order and the access token, the memory
 * tier is bounded in bytes, errors are never cached.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera } from './helpers/tessera.js';
import { LOOPBACK_NETWORKS, TESSERA_COMMAND, startServer, type Service } from './parity/harness.js';
import { REDIS_SERVER, startRedis, type Running } from './helpers/deploy.js';
import { tileKey } from '../src/api/tile-cache.js';
import { TileStore } from '../src/cache/tile-store.js';

describe('tile cache shared through Redis by two replicas', {
  timeout: 120_000,
  skip: existsSync(REDIS_SERVER) ? false : `${REDIS_SERVER} is not installed (make install installs it)`,
}, () => {
  let files: FileServer;
  let redis: Running;
  let a: Service;
  let b: Service;
  let cog: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    redis = await startRedis();
    // No memory tier: whatever the second replica does not render came from Redis.
    const env = { TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS, TESSERA_CACHE_URL: redis.url, TESSERA_TILE_CACHE_BYTES: '0' };
    [a, b] = await Promise.all([startServer(TESSERA_COMMAND, env), startServer(TESSERA_COMMAND, env)]);
    // Both connected to Redis (a replica that is not yet shares nothing, and says so in its log).
    const until = Date.now() + 10_000;
    while (![a, b].every((s) => s.outputTail().includes('tile cache: Redis is reachable'))) {
      if (Date.now() > until) throw new Error('the replicas did not reach Redis');
      await new Promise((r) => setTimeout(r, 50));
    }
    cog = encodeURIComponent(`${files.url}/B01.tif`);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
    await files?.close();
  });

  const tile = async (server: Service, x: number): Promise<{ cache: string | null; body: Buffer; status: number }> => {
    const res = await fetch(`${server.url}/cog/tiles/WebMercatorQuad/9/${x}/207.png?url=${cog}&rescale=0,1000`);
    return { status: res.status, cache: res.headers.get('x-cache'), body: Buffer.from(await res.arrayBuffer()) };
  };

  it('serves a tile made by one replica from the other, with no upstream read', async () => {
    const made = await tile(a, 289);
    assert.equal(made.status, 200);
    assert.equal(made.cache, 'miss');
    await new Promise((r) => setTimeout(r, 200));
    const before = files.stats().requests;
    const shared = await tile(b, 289);
    assert.equal(shared.cache, 'hit');
    assert.ok(shared.body.equals(made.body), 'the same bytes');
    assert.equal(files.stats().requests, before, 'no upstream read');
  });

  it('loses no request while Redis is down, and shares again once it is back', async () => {
    await redis.stop();
    for (const server of [a, b]) {
      const r = await tile(server, 290);
      assert.equal(r.status, 200, 'made without Redis');
      assert.equal(r.cache, 'miss');
    }
    const metrics = await (await fetch(`${a.url}/metrics`)).text();
    const errors = Number(/tessera_cache_errors_total\{cache="tiles_redis"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    assert.ok(errors >= 1, 'the failed lookups are counted');

    redis = await startRedis(redis.port);
    // The replicas retry once a second; each says when it is back.
    const until = Date.now() + 10_000;
    while (![a, b].every((s) => s.outputTail().split('tile cache: Redis is reachable').length > 2)) {
      if (Date.now() > until) throw new Error('the replicas did not reconnect');
      await new Promise((r) => setTimeout(r, 50));
    }
    // The tile made during the outage was not stored: made again now, it is shared.
    const made = await tile(a, 290);
    assert.equal(made.status, 200);
    assert.equal(made.cache, 'miss');
    await new Promise((r) => setTimeout(r, 200));
    const shared = await tile(b, 290);
    assert.equal(
      shared.cache,
      'hit',
      `shared again; replica logs: ${[a, b]
        .map((s) =>
          s
            .outputTail()
            .split('\n')
            .filter((l) => l.includes('tile cache'))
            .join(' | '),
        )
        .join(' || ')}`,
    );
  });
});

describe('tile cache in one process', () => {
  it('keys a tile by its path and sorted query, without the access token', () => {
    const k = tileKey('/cog/tiles/WebMercatorQuad/1/2/3.png?url=u&rescale=0,1&bidx=1&bidx=2');
    assert.equal(tileKey('/cog/tiles/WebMercatorQuad/1/2/3.png?bidx=1&rescale=0,1&access_token=t&url=u&bidx=2'), k);
    assert.notEqual(tileKey('/cog/tiles/WebMercatorQuad/1/2/3.png?url=u&rescale=0,1&bidx=2&bidx=1'), k, 'band order matters');
    assert.notEqual(tileKey('/cog/tiles/WebMercatorQuad/1/2/4.png?url=u&rescale=0,1&bidx=1&bidx=2'), k);
  });

  it('keeps the memory tier within its bytes', async () => {
    const store = new TileStore({ memoryBytes: 10_000, ttlSeconds: 60, redisUrl: undefined });
    for (let i = 0; i < 10; i++) store.set(`k${i}`, { headers: {}, body: Buffer.alloc(3000) });
    let kept = 0;
    for (let i = 0; i < 10; i++) if (await store.get(`k${i}`)) kept++;
    assert.ok(kept >= 2 && kept <= 3, `${kept} tiles of 3000 bytes in 10000`);
    assert.ok(await store.get('k9'), 'the newest stays');
  });

  it('answers the second request for a tile from memory, and never caches an error', async () => {
    const files = await startFileServer(FIXTURES);
    const tessera = await startTessera({ tileCacheBytes: 1024 * 1024 });
    try {
      const cog = encodeURIComponent(`${files.url}/B01.tif`);
      const url = `/cog/tiles/WebMercatorQuad/9/289/207.png?url=${cog}&rescale=0,1000`;
      assert.equal((await tessera.get(url)).headers.get('x-cache'), 'miss');
      const before = files.stats().requests;
      const again = await tessera.get(url);
      assert.equal(again.headers.get('x-cache'), 'hit');
      assert.equal(again.headers.get('content-type'), 'image/png');
      assert.equal(files.stats().requests, before);
      const outside = `/cog/tiles/WebMercatorQuad/9/1/1.png?url=${cog}`;
      assert.equal((await tessera.get(outside)).status, 404);
      const second = await tessera.get(outside);
      assert.equal(second.status, 404);
      assert.equal(second.headers.get('x-cache'), 'miss', 'a 404 is not kept');
    } finally {
      await tessera.close();
      await files.close();
    }
  });
});
