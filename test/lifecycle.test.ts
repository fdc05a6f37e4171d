/**
 * Lifecycle and overload, as an orchestrator and a load balancer see them: /readyz answers 200
 * while serving and 503 from the moment SIGTERM arrives; requests in flight then finish and the
 * process exits 0; past TESSERA_MAX_QUEUE requests in flight a new one gets 503 with Retry-After
 * at once, while health checks still answer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
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

  it('answers 503 with Retry-After past TESSERA_MAX_QUEUE requests in flight, health checks still pass', async () => {
    const tessera = await startTessera({ maxInFlight: 2 }, { listen: true });
    try {
      files.delayMs = 700;
      const slow = [0, 1].map((i) => fetch(`${tessera.url}/cog/tiles/WebMercatorQuad/9/${289 + i}/207.png?url=${cog}&rescale=0,1000`));
      await new Promise((r) => setTimeout(r, 150));
      const refused = await tessera.get(`/cog/info?url=${cog}`);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.match(((await refused.json()) as { detail: string }).detail, /TESSERA_MAX_QUEUE/);
      assert.equal((await tessera.get('/healthz')).status, 200);
      assert.equal((await tessera.get('/readyz')).status, 200);
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
