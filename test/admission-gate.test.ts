/**
 * Tile admission (concurrency.ts, AdmissionGate): at most `limit` requests run, the others start in
 * the order they came; a request waiting on I/O (`aside`) gives its slot back and, back from it,
 * goes before requests that have not started; a client that leaves while queued is dropped; a
 * request that ends with a wait on I/O still out leaks no slot. Then the dataset pool's cold reads
 * wait aside, and over HTTP a warm tile is made while a cold one waits on a slow upstream, with one
 * slot between them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AdmissionGate, aside, sharedLoad } from '../src/concurrency.js';
import { DatasetPool } from '../src/source/pool.js';
import type { Dataset } from '../src/gdal/gdal.js';
import { startFileServer, fixtureMosaic, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { LOOPBACK, startTessera, type RunningTessera } from './helpers/tessera.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Lets every promise callback queued so far run. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('AdmissionGate', () => {
  it('runs at most `limit` at once and starts the others in the order they came', async () => {
    const gate = new AdmissionGate(2);
    const started: number[] = [];
    const finish = Array.from({ length: 5 }, deferred);
    let running = 0;
    let most = 0;
    const all = finish.map((d, i) =>
      gate.run(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await d.promise;
        running--;
      }),
    );
    await settle();
    assert.deepEqual(started, [0, 1]);
    assert.deepEqual(gate.stats, { running: 2, waiting: 3 });
    finish[1]!.resolve();
    await settle();
    assert.deepEqual(started, [0, 1, 2]);
    for (const d of finish) d.resolve();
    await Promise.all(all);
    assert.deepEqual(started, [0, 1, 2, 3, 4]);
    assert.equal(most, 2);
    assert.deepEqual(gate.stats, { running: 0, waiting: 0 });
  });

  it('gives the slot back while a request waits on I/O, and gives it back to it before new requests', async () => {
    const gate = new AdmissionGate(1);
    const order: string[] = [];
    const io = deferred();
    const bDone = deferred();
    const a = gate.run(async () => {
      order.push('a starts');
      await aside(async () => {
        order.push('a waits on I/O');
        await io.promise;
      });
      order.push('a goes on');
    });
    await settle();
    const b = gate.run(async () => {
      order.push('b starts');
      await bDone.promise;
      order.push('b ends');
    });
    await settle();
    const c = gate.run(async () => {
      order.push('c starts');
    });
    await settle();
    // a is aside, so b took the slot; c waits.
    assert.deepEqual(order, ['a starts', 'a waits on I/O', 'b starts']);
    io.resolve();
    await settle();
    assert.equal(order.includes('a goes on'), false, 'a waits for the slot b holds');
    bDone.resolve();
    await Promise.all([a, b, c]);
    assert.deepEqual(order.slice(3), ['b ends', 'a goes on', 'c starts'], 'back from I/O, a goes before c');
    assert.deepEqual(gate.stats, { running: 0, waiting: 0 });
  });

  it('drops a request whose client left while it waited, and the rest go on', async () => {
    const gate = new AdmissionGate(1);
    const hold = deferred();
    const first = gate.run(() => hold.promise);
    const gone = new AbortController();
    let ran = false;
    const left = gate.run(async () => {
      ran = true;
    }, gone.signal);
    const next = gate.run(async () => 'made');
    await settle();
    gone.abort(new Error('client went away'));
    await assert.rejects(left, /client went away/);
    assert.deepEqual(gate.stats, { running: 1, waiting: 1 });
    hold.resolve();
    assert.equal(await next, 'made');
    await first;
    assert.equal(ran, false);
    assert.deepEqual(gate.stats, { running: 0, waiting: 0 });
  });

  it('leaks no slot when a request ends while one of its waits on I/O is still out', async () => {
    const gate = new AdmissionGate(1);
    const slow = deferred();
    const blocker = deferred();
    // Two reads in parallel (a mosaic's assets); one fails at once, so the request ends (Promise.all
    // rejects) while the other still waits on I/O.
    const failing = gate.run(() =>
      Promise.all([
        aside(async () => {
          await slow.promise;
        }),
        aside(async () => {
          throw new Error('upstream 404');
        }),
      ]),
    );
    await assert.rejects(failing, /upstream 404/);
    const other = gate.run(() => blocker.promise);
    await settle();
    assert.deepEqual(gate.stats, { running: 1, waiting: 0 });
    // The straggler comes back while the slot is taken: it queues, and gives its turn on.
    slow.resolve();
    await settle();
    const last = gate.run(async () => 'made');
    blocker.resolve();
    await other;
    assert.equal(await last, 'made');
    assert.deepEqual(gate.stats, { running: 0, waiting: 0 });
  });

  it('lets requests waiting for a load another one runs give their slots back, so it can finish the load', async () => {
    // The load reads aside, then needs a slot again to finish; the requests joining it wait aside
    // too. Were they to keep their slots (all of them), the load could never finish.
    const gate = new AdmissionGate(2);
    const table = new Map<string, Promise<string>>();
    const io = deferred();
    let loads = 0;
    const start = async (): Promise<string> => {
      loads++;
      await aside(() => io.promise);
      return 'metadata';
    };
    const all = Promise.all(Array.from({ length: 5 }, () => gate.run(() => sharedLoad(table, 'source', start))));
    await settle();
    io.resolve();
    const timeout = new Promise<'deadlock'>((r) => setTimeout(() => r('deadlock'), 2000).unref());
    assert.deepEqual(await Promise.race([all, timeout]), Array(5).fill('metadata'));
    assert.equal(loads, 1);
    assert.deepEqual(gate.stats, { running: 0, waiting: 0 });
  });

  it('lets everything through without a limit, and `aside` outside a request just runs', async () => {
    const gate = new AdmissionGate(Number.POSITIVE_INFINITY);
    const hold = deferred();
    const many = Array.from({ length: 50 }, () => gate.run(() => hold.promise));
    await settle();
    hold.resolve();
    await Promise.all(many);
    assert.equal(await aside(async () => 7), 7);
    assert.throws(() => new AdmissionGate(0), /at least one slot/);
  });
});

describe('DatasetPool reads that wait on the network', () => {
  it('opens a source and reads blocks its handle has not read aside of the admission slot', async () => {
    const opening = deferred();
    const pool = new DatasetPool({
      handlesPerSource: 1,
      maxHandles: 8,
      open: async () => {
        await opening.promise;
        return { close: () => undefined } as unknown as Dataset;
      },
    });
    const gate = new AdmissionGate(1);
    const order: string[] = [];
    const cold = gate.run(async () => {
      await pool.use('s', () => order.push('cold read'), { region: 0, blocks: [1] });
    });
    await settle();
    // The cold request waits on the source's opening: another request gets the one slot.
    const otherRequest = gate.run(async () => {
      order.push('other request');
    });
    const waitedTooLong = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the other request waited for the cold one')), 2000).unref());
    try {
      await Promise.race([otherRequest, waitedTooLong]);
    } finally {
      opening.resolve();
    }
    await Promise.all([cold, otherRequest]);
    assert.deepEqual(order, ['other request', 'cold read']);
    // Warm now (the handle is open and has read block 1): a read keeps the slot while it waits for the handle.
    const warmFirst = deferred();
    const warm = gate.run(() => pool.use('s', () => warmFirst.promise, { region: 0, blocks: [1] }));
    await settle();
    let other = false;
    const second = gate.run(async () => {
      other = true;
    });
    await settle();
    assert.equal(other, false, 'a warm read held its slot');
    warmFirst.resolve();
    await Promise.all([warm, second]);
    assert.equal(other, true);
  });
});

describe('tile admission over HTTP', { timeout: 120_000 }, () => {
  let files: FileServer;
  let tessera: RunningTessera;

  before(async () => {
    files = await startFileServer(FIXTURES);
    tessera = await startTessera({ allowedNetworks: LOOPBACK, tileRequests: 1, tileCacheBytes: 0 }, { listen: true });
  });
  after(async () => {
    await tessera?.close();
    await files?.close();
  });

  it('makes a warm tile while a cold one waits on a slow upstream, with one slot between them', async () => {
    const warmUrl = `/cog/tiles/WebMercatorQuad/9/289/207.png?url=${encodeURIComponent(`${files.url}/B01.tif`)}&rescale=0,1000`;
    assert.equal((await tessera.get(warmUrl)).status, 200);
    // The cold source's header is read beforehand (its TileJSON): what waits on the upstream is the
    // tile's read of blocks, at full resolution in the middle of a 2.8 MB file.
    const cog = encodeURIComponent(`${files.url}/cog1.tif`);
    const doc = (await (await tessera.get(`/cog/WebMercatorQuad/tilejson.json?url=${cog}`)).json()) as { center: number[]; maxzoom: number };
    const [lon, lat] = doc.center as [number, number];
    const z = doc.maxzoom;
    const x = Math.floor(((lon + 180) / 360) * 2 ** z);
    const y = Math.floor(((1 - Math.log(Math.tan((lat * Math.PI) / 180) + 1 / Math.cos((lat * Math.PI) / 180)) / Math.PI) / 2) * 2 ** z);
    const coldUrl = `/cog/tiles/WebMercatorQuad/${z}/${x}/${y}.png?url=${cog}`;
    files.delayMs = 400;
    try {
      const t0 = performance.now();
      const cold = tessera.get(coldUrl).then(async (r) => ({ status: r.status, body: await r.arrayBuffer(), at: performance.now() - t0 }));
      await new Promise((r) => setTimeout(r, 100));
      const warm = await tessera.get(warmUrl);
      const warmAt = performance.now() - t0;
      assert.equal(warm.status, 200);
      const c = await cold;
      assert.equal(c.status, 200);
      assert.ok(c.at > 400, `the cold tile (${c.at.toFixed(0)} ms) did not wait on the upstream`);
      assert.ok(warmAt < c.at, `the warm tile (${warmAt.toFixed(0)} ms) came after the cold one (${c.at.toFixed(0)} ms)`);
    } finally {
      files.delayMs = 0;
    }
    const metrics = await (await tessera.get('/metrics')).text();
    assert.match(metrics, /^tessera_tile_requests_running 0$/m);
    assert.match(metrics, /^tessera_tile_requests_waiting 0$/m);
  });

  it('answers every one of many tiles asked at once, one at a time', async () => {
    const url = (x: number): string => `/cog/tiles/WebMercatorQuad/9/${x}/207.png?url=${encodeURIComponent(`${files.url}/B01.tif`)}&rescale=0,1000`;
    const answers = await Promise.all([288, 289, 290, 288, 289, 290, 288, 289].map((x) => tessera.get(url(x))));
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(8).fill(200),
    );
  });
  it('answers sixteen cold tiles of one mosaic asked at once on a fresh server with two slots', async () => {
    // They all wait for the same sources' headers, read by the first request that asked: before
    // sharedLoad let them wait aside, every one ended as 504 (the benchmark's cold mosaic phase).
    files.put('/mosaic.json', JSON.stringify(await fixtureMosaic(files.url)));
    const fresh = await startTessera({ allowedNetworks: LOOPBACK, tileRequests: 2, tileCacheBytes: 0, requestTimeoutMs: 10_000 }, { listen: true });
    try {
      const url = (x: number, y: number): string =>
        `/mosaicjson/tiles/WebMercatorQuad/9/${x}/${y}.png?url=${encodeURIComponent(`${files.url}/mosaic.json`)}&rescale=5000,15000`;
      const tiles = [149, 150, 151, 152].flatMap((x) => [180, 181, 182, 183].map((y) => url(x, y)));
      // 50 ms an upstream answer: the others join the first request's loads while they still read.
      files.delayMs = 50;
      const answers = await Promise.all(tiles.map((t) => fresh.get(t)));
      assert.deepEqual(
        answers.map((r) => r.status),
        Array(16).fill(200),
      );
    } finally {
      files.delayMs = 0;
      await fresh.close();
    }
  });
});
