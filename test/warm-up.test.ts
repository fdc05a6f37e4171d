/**
 * A fresh process's warm-up (src/warm-up.ts, Services.warm): the tile routes asked in process over
 * the warm-up's COG, served on loopback by the gateway's thread. Checked without a catalogue here
 * (test/pgstac-routes.test.ts checks the search's tiles and the catalogue's connections): answered
 * under the default network policy and behind an access token, none of it counted or kept after.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTessera } from './helpers/tessera.js';
import { GATEWAY_REFUSED_STATUS } from '../src/upstream/gateway.js';

/** Runs the warm-up with the app's routes, in process as server.ts does: the paths asked and their statuses. */
async function warmUp(t: Awaited<ReturnType<typeof startTessera>>): Promise<{ paths: string[]; statuses: number[] | undefined }> {
  const paths: string[] = [];
  const statuses = await t.services.warm(10_000, (url, headers) => {
    paths.push(url);
    return t.app.inject({ method: 'GET', url, headers }).then((res) => res.statusCode);
  });
  return { paths, statuses };
}

describe('warm-up', () => {
  it('asks the /cog tile route in process over its own COG, which the policies refuse once it is over', async () => {
    const t = await startTessera({ allowedNetworks: [], tileCacheBytes: 16 << 20 });
    try {
      const { paths, statuses } = await warmUp(t);
      assert.equal(paths.length, 4);
      assert.deepEqual(statuses, [200, 200, 200, 200]);
      const url = new URL(paths[0]!, 'http://x').searchParams.get('url')!;
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\.tif$/);
      const metrics = await (await t.get('/metrics')).text();
      assert.doesNotMatch(metrics, /^tessera_http_requests_total\{/m, 'the warm-up is not counted as requests');
      // Neither the URL nor a tile of it is served any more, from the cache neither.
      assert.equal((await t.get(`/cog/info?url=${encodeURIComponent(url)}`)).status, 400);
      assert.equal((await t.get(paths[0]!)).status, 400);
      // A client's request carrying the header without the process's token is an ordinary request.
      const marked = await t.get(`/cog/info?url=${encodeURIComponent(url)}`, { 'x-tessera-warm-up': 'guess' });
      assert.equal(marked.status, 400);
      assert.match(await (await t.get('/metrics')).text(), /^tessera_http_requests_total\{family="cog",route="\/cog\/info"[^}]*status="400"\} 2$/m);
    } finally {
      await t.close();
    }
  });

  it('withdraws what it let past the policies when its time is up, though its requests still run', async () => {
    const t = await startTessera({ allowedNetworks: [] });
    try {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      const asked: string[] = [];
      // The routes' first request does not finish before the bound passes.
      const statuses = await t.services.warm(1500, async (url, headers) => {
        asked.push(url);
        await held;
        return (await t.app.inject({ method: 'GET', url, headers })).statusCode;
      });
      assert.equal(statuses, undefined, 'the bound passed first');
      assert.ok(asked.length > 0, 'the routes were being asked');
      const url = new URL(asked[0]!, 'http://x').searchParams.get('url')!;
      assert.throws(() => t.services.policy.resolve(url), /not allowed/);
      const viaGateway = t.services.gateway!.gdalPath(url).replace(/^\/vsicurl\//, '');
      let status = 0;
      for (let i = 0; i < 50 && status !== GATEWAY_REFUSED_STATUS; i++) {
        status = (await fetch(viaGateway, { method: 'HEAD' })).status;
        if (status !== GATEWAY_REFUSED_STATUS) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(status, GATEWAY_REFUSED_STATUS, "the gateway's thread refuses it too");
      release();
    } finally {
      await t.close();
    }
  });

  it('signs its requests with the access token the routes want', async () => {
    const t = await startTessera({ allowedNetworks: [], accessToken: 'tok-123' });
    try {
      const { paths, statuses } = await warmUp(t);
      assert.deepEqual(statuses, [200, 200, 200, 200]);
      assert.ok(paths.every((p) => p.endsWith('&access_token=tok-123')));
    } finally {
      await t.close();
    }
  });

  it('reads from memory and asks no route without the gateway', async () => {
    const t = await startTessera({ upstreamGateway: false });
    try {
      const { paths, statuses } = await warmUp(t);
      assert.deepEqual(paths, []);
      assert.deepEqual(statuses, []);
    } finally {
      await t.close();
    }
  });
});
