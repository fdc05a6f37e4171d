/**
 * Every request gets its fair share of GDAL (upstream/budget.ts `turn`, TESSERA_REQUEST_CONCURRENCY;
 * TESSERA_MAX_ASSETS): at most `turns` of one request's opens and reads run at once, the rest wait in
 * order; what a request queued and had not started when it ended is dropped, not run; a read naming
 * more assets than allowed is refused before any is opened. Over HTTP: while one request opens
 * hundreds of slow files, and after its client leaves, tiles of an unrelated item stay as fast as
 * when the server is idle (within 2× of their idle p95).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Budgets } from '../src/upstream/budget.js';
import { TesseraError } from '../src/errors.js';
import { startFileServer, fixtureItem, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A call of `ms` that records how many run at once. */
function tracked(state: { running: number; most: number; order: number[] }, id: number, ms: number): () => Promise<number> {
  return async () => {
    state.order.push(id);
    state.most = Math.max(state.most, ++state.running);
    await tick(ms);
    state.running--;
    return id;
  };
}

describe('request turns', () => {
  it('runs at most `turns` of a request’s calls at once, in order; other requests are not held by it', async () => {
    const budgets = new Budgets(1000, 2);
    const mine = { running: 0, most: 0, order: [] as number[] };
    const theirs = { running: 0, most: 0, order: [] as number[] };
    const heavy = new Promise<number[]>((resolve) =>
      setImmediate(() => {
        budgets.enter();
        resolve(Promise.all(Array.from({ length: 8 }, (_, i) => budgets.turn(tracked(mine, i, 20)))));
      }),
    );
    await tick(1);
    const started = Date.now();
    const light = await new Promise<number>((resolve) =>
      setImmediate(() => {
        budgets.enter();
        resolve(budgets.turn(tracked(theirs, 100, 1)));
      }),
    );
    assert.equal(light, 100);
    assert.ok(Date.now() - started < 15, 'another request runs at once beside the heavy one');
    assert.deepEqual(await heavy, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(mine.most, 2, 'two at a time');
    assert.deepEqual(mine.order, [0, 1, 2, 3, 4, 5, 6, 7], 'first come first served');
  });

  it('drops the calls a request queued once it ends, unless it carries on after its answer', async () => {
    const budgets = new Budgets(1000, 1);
    const state = { running: 0, most: 0, order: [] as number[] };
    const results = await new Promise<Array<PromiseSettledResult<number>>>((resolve) =>
      setImmediate(() => {
        const end = budgets.enter();
        const calls = Array.from({ length: 4 }, (_, i) => budgets.turn(tracked(state, i, 30)));
        setTimeout(() => end(), 10);
        // A call the request makes after its end (its flow still running) starts nothing either.
        const late = tick(50).then(() => budgets.turn(tracked(state, 9, 1)));
        resolve(Promise.allSettled([...calls, late]));
      }),
    );
    assert.equal(results[0]!.status, 'fulfilled', 'the call already running finishes');
    for (const r of results.slice(1)) {
      assert.equal(r.status, 'rejected');
      assert.ok(r.reason instanceof TesseraError && r.reason.kind === 'ClientGone');
    }
    assert.deepEqual(state.order, [0], 'the queued and late calls never ran');

    // Work carried on after the answer (a mosaic tile finished for the cache) keeps its turns.
    const kept = await new Promise<number[]>((resolve) =>
      setImmediate(() => {
        const done = budgets.enter();
        const work = budgets.finishAfter(() => Promise.all([0, 1, 2].map((i) => budgets.turn(tracked(state, 10 + i, 10)))));
        done();
        resolve(work);
      }),
    );
    assert.deepEqual(kept, [10, 11, 12]);
  });

  it('lets a call made inside a turn run in it (no deadlock), and calls outside a request run at once', async () => {
    const budgets = new Budgets(1000, 1);
    const nested = await new Promise<string>((resolve) =>
      setImmediate(() => {
        budgets.enter();
        resolve(budgets.turn(() => budgets.turn(async () => 'inner')));
      }),
    );
    assert.equal(nested, 'inner');
    assert.equal(await budgets.turn(async () => 'free'), 'free');
  });
});

describe('fair shares over HTTP', () => {
  let slow: FileServer;
  let fast: FileServer;
  let tessera: RunningTessera;
  let heavyUrl: string;
  let b01: Buffer;
  const HEAVY_ASSETS = 300;

  before(async () => {
    // The heavy item's files answer after 150 ms each; the unrelated item's at once.
    slow = await startFileServer(FIXTURES, { keepLog: false });
    fast = await startFileServer(FIXTURES);
    b01 = await readFile(path.join(FIXTURES, 'B01.tif'));
    const item = JSON.parse(await fixtureItem(slow.url)) as { assets: Record<string, unknown> };
    item.assets = {};
    for (let i = 0; i < HEAVY_ASSETS; i++) {
      slow.put(`/heavy/a${i}.tif`, b01, 'image/tiff');
      item.assets[`a${i}`] = { href: `${slow.url}/heavy/a${i}.tif`, type: 'image/tiff; application=geotiff' };
    }
    slow.put('/heavy/item.json', JSON.stringify(item));
    slow.delayMs = 150;
    heavyUrl = `${slow.url}/heavy/item.json`;
    // This test process runs GDAL on libuv's default 4 threads (bin/tessera gives it 16 on 2 cores,
    // beside the default of 8 turns): 2 turns here leave the same share to the other requests.
    tessera = await startTessera({ maxAssets: 2000, requestConcurrency: Number(process.env['TURNS'] ?? 2) }, { listen: true });
  });
  after(async () => {
    slow.delayMs = 0;
    await tessera?.close();
    await slow?.close();
    await fast?.close();
  });

  /**
   * Latencies of `n` tiles of unrelated files, one after another, each file new to the server: each
   * tile opens its file (GDAL's open runs on the thread pool, where the heavy request's opens queue).
   */
  let next = 0;
  async function tileLatencies(n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const k = next++;
      fast.put(`/cold/${k}/B01.tif`, b01, 'image/tiff');
      const started = performance.now();
      const res = await fetch(
        `${tessera.url}/cog/tiles/WebMercatorQuad/9/289/207.png?url=${encodeURIComponent(`${fast.url}/cold/${k}/B01.tif`)}&rescale=0,1000`,
      );
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      out.push(performance.now() - started);
    }
    return out;
  }
  const p95 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1]!;

  it('refuses a read of more assets than TESSERA_MAX_ASSETS before opening any', async () => {
    const strict = await startTessera({ maxAssets: 100 });
    try {
      const before = slow.stats().requests;
      const res = await strict.get(`/stac/info?url=${encodeURIComponent(heavyUrl)}`);
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { detail: string }).detail, /300 assets to read, more than one request may open \(100, TESSERA_MAX_ASSETS\)/);
      assert.equal(slow.stats().requests - before, 1, 'only the item was fetched');
    } finally {
      await strict.close();
    }
  });

  it('keeps an unrelated tile within 2× of its idle p95 while one request opens hundreds of slow files, and after its client leaves', async () => {
    await tileLatencies(3); // warm the item document and the connection
    const idle = p95(await tileLatencies(30));

    // The heavy request: every asset's info, 300 files at 150 ms each; its client leaves meanwhile.
    const heavy = http.get(`${tessera.url}/stac/info?url=${encodeURIComponent(heavyUrl)}`);
    heavy.on('error', () => undefined);
    await tick(300);
    const during = p95(await tileLatencies(30));
    heavy.destroy();
    await tick(100);
    const afterwards = p95(await tileLatencies(30));
    const gdal = tessera.services.pool.stats;
    console.log(`# unrelated cold tiles, p95: idle ${idle.toFixed(0)} ms, during ${during.toFixed(0)} ms, after ${afterwards.toFixed(0)} ms`);
    // 2× the idle p95 (15 ms at least: timer jitter on a busy 2-core machine). Without turns
    // (TURNS=0 in the environment) it failed on a loaded machine (48 and 52 ms against 19 ms idle)
    // but passes on a quiet one (22-31 ms against 18-24 ms): this check guards against the turns
    // making things worse; the turns' own behaviour is proven by the unit tests above.
    const limit = Math.max(2 * idle, idle + 15);
    assert.ok(during <= limit, `p95 while the heavy request runs: ${during.toFixed(0)} ms against ${idle.toFixed(0)} ms idle`);
    assert.ok(afterwards <= limit, `p95 after it ended: ${afterwards.toFixed(0)} ms against ${idle.toFixed(0)} ms idle`);
    assert.equal(gdal.waiting, 0, 'nothing of it left waiting for a handle');
  });
});
