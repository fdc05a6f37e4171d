/**
 * Lifecycle and overload, as an orchestrator and a load balancer see them: /readyz answers 200
 * while serving and 503 from the moment SIGTERM arrives; requests in flight then finish and the
 * process exits 0; past TESSERA_MAX_IN_FLIGHT requests in flight a new one gets 503 with Retry-After
 * at once, while health checks still answer; a client that goes away stops the upstream reads of
 * its request, but not the loads other requests wait for.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFileServer, fixtureItem, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera } from './helpers/tessera.js';
import { LOOPBACK_NETWORKS, TESSERA_COMMAND, startServer } from './parity/harness.js';

describe('lifecycle and overload', { timeout: 60_000 }, () => {
  let files: FileServer;
  let cog: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    cog = encodeURIComponent(`${files.url}/B01.tif`);
  });
  after(async () => {
    await files?.close();
  });

  it('drains on SIGTERM: /readyz 503 at once, the request in flight finishes, exit 0', async () => {
    const tessera = await startServer(TESSERA_COMMAND, { TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS, TESSERA_SHUTDOWN_DELAY_MS: '600' });
    try {
      const ready = await fetch(`${tessera.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { ready: true });

      files.delayMs = 800;
      const slow = fetch(`${tessera.url}/cog/tiles/WebMercatorQuad/9/289/207.png?url=${cog}&rescale=0,1000`);
      await new Promise((r) => setTimeout(r, 200));
      process.kill(tessera.pid, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 100));
      const draining = await fetch(`${tessera.url}/readyz`);
      assert.equal(draining.status, 503, 'not ready while draining');
      const answer = await slow;
      assert.equal(answer.status, 200, 'the request in flight finished');
      await answer.arrayBuffer();
      const exit = await new Promise<number | null>((resolve) => {
        const check = setInterval(() => {
          try {
            process.kill(tessera.pid, 0);
          } catch {
            clearInterval(check);
            resolve(0);
          }
        }, 50);
        setTimeout(() => {
          clearInterval(check);
          resolve(null);
        }, 10_000);
      });
      assert.equal(exit, 0, 'the process ended');
      assert.match(tessera.outputTail(), /SIGTERM: shutting down/);
      assert.doesNotMatch(tessera.outputTail(), /still in flight/);
    } finally {
      files.delayMs = 0;
      await tessera.stop();
    }
  });

  it('stops the upstream reads of a request whose client went away', async () => {
    // Its own process: in this one GDAL's reads would share libuv's four threads with the file server.
    const tessera = await startServer(TESSERA_COMMAND, {
      TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS,
      TESSERA_TILE_CACHE_BYTES: '0',
      TESSERA_MOSAIC_CONCURRENCY: '4',
    });
    try {
      // One mosaic cell of sixteen assets (the same COG under sixteen URLs), read by `mean`: all of them.
      const quadkey = '0302301';
      const mosaic = (copy: string): string => {
        const assets = Array.from({ length: 16 }, (_, i) => `${files.url}/cog1.tif?copy=${copy}${i}`);
        return JSON.stringify({ mosaicjson: '0.0.2', quadkey_zoom: 7, minzoom: 7, maxzoom: 9, bounds: [-76, 44.9, -71.3, 47.1], tiles: { [quadkey]: assets } });
      };
      files.put('/full.json', mosaic('f'));
      files.put('/aborted.json', mosaic('a'));
      const x = parseInt(
        quadkey
          .split('')
          .map((d) => Number(d) & 1)
          .join(''),
        2,
      );
      const y = parseInt(
        quadkey
          .split('')
          .map((d) => Number(d) >> 1)
          .join(''),
        2,
      );
      const path = (doc: string): string =>
        `/mosaicjson/tiles/WebMercatorQuad/7/${x}/${y}.png?url=${encodeURIComponent(`${files.url}/${doc}`)}&pixel_selection=mean`;
      files.delayMs = 150;

      let before = files.stats().requests;
      const full = await fetch(`${tessera.url}${path('full.json')}`);
      assert.equal(full.status, 200);
      await full.arrayBuffer();
      const fullReads = files.stats().requests - before;

      before = files.stats().requests;
      const controller = new AbortController();
      const aborted = fetch(`${tessera.url}${path('aborted.json')}`, { signal: controller.signal }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 400));
      controller.abort();
      await aborted;
      await new Promise((r) => setTimeout(r, 3000));
      const abortedReads = files.stats().requests - before;
      assert.ok(fullReads >= 16, `the whole tile read every asset (${fullReads} requests)`);
      assert.ok(abortedReads < fullReads / 2, `${abortedReads} upstream requests after the client left early, ${fullReads} for the whole tile`);
    } finally {
      files.delayMs = 0;
      await tessera.stop();
    }
  });

  it('finishes a load other requests wait for when the client that started it goes away', async () => {
    const tessera = await startServer(TESSERA_COMMAND, { TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS, TESSERA_TILE_CACHE_BYTES: '0' });
    try {
      // An item never seen: the first request fetches the document, slowly; the second waits for that fetch.
      files.put('/shared-load/item.json', await fixtureItem(files.url));
      const path = `/stac/tiles/WebMercatorQuad/9/289/207.png?url=${encodeURIComponent(`${files.url}/shared-load/item.json`)}&assets=B01&rescale=0,10000`;
      // Every upstream answer takes 500 ms: the client leaves while the document is on its way.
      files.delayMs = 500;
      const controller = new AbortController();
      const first = fetch(`${tessera.url}${path}`, { signal: controller.signal }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      const second = fetch(`${tessera.url}${path}`);
      await new Promise((r) => setTimeout(r, 150));
      controller.abort();
      await first;
      const res = await second;
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('content-type'), 'image/png');
    } finally {
      files.delayMs = 0;
      await tessera.stop();
    }
  });

  it('answers 503 with Retry-After past TESSERA_MAX_IN_FLIGHT requests in flight, health checks and metrics still answer', async () => {
    const tessera = await startTessera({ maxInFlight: 2 }, { listen: true });
    try {
      files.delayMs = 700;
      const slow = [0, 1].map((i) => fetch(`${tessera.url}/cog/tiles/WebMercatorQuad/9/${289 + i}/207.png?url=${cog}&rescale=0,1000`));
      await new Promise((r) => setTimeout(r, 150));
      const refused = await tessera.get(`/cog/info?url=${cog}`);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.match(((await refused.json()) as { detail: string }).detail, /TESSERA_MAX_IN_FLIGHT/);
      assert.equal((await tessera.get('/healthz')).status, 200);
      assert.equal((await tessera.get('/readyz')).status, 200);
      // Monitoring matters most under overload: the scrape is answered, and shows the refusals.
      const metrics = await tessera.get('/metrics');
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /tessera_http_requests_total\{[^}]*status="503"/);
      for (const r of await Promise.all(slow)) {
        assert.ok(r.status === 200 || r.status === 404, `status ${r.status}`);
        await r.arrayBuffer();
      }
      files.delayMs = 0;
      assert.equal((await tessera.get(`/cog/info?url=${cog}`)).status, 200, 'served again once the load is gone');
    } finally {
      files.delayMs = 0;
      await tessera.close();
    }
  });
});
