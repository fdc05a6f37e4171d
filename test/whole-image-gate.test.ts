/**
 * The gate of whole-image requests: at most `slots` at once and at most `capacity` bytes held
 * together, first come first served, everything given back however a request ends; and over HTTP,
 * previews and statistics really wait in it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { WholeImageGate, estimateImageBytes } from '../src/image/whole-image-gate.js';
import { TesseraError } from '../src/errors.js';
import { startFileServer, fixtureItem, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` as one request would: in an asynchronous flow of its own that holds on the gate. */
function asRequest<T>(gate: WholeImageGate, fn: () => Promise<T>, deadline?: number): { done: Promise<T>; end: () => void } {
  let end: () => void = () => undefined;
  const done = new Promise<T>((resolve, reject) => {
    setImmediate(() => {
      end = gate.enter(deadline);
      fn().then(resolve, reject);
    });
  });
  return { done, end: () => end() };
}

describe('whole-image gate', () => {
  it('runs at most `slots` at once, in arrival order, and frees every slot', async () => {
    const gate = new WholeImageGate(2, 1000);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const jobs = Array.from({ length: 7 }, (_, i) => {
      const r = asRequest(gate, async () => {
        await gate.reserve(10);
        order.push(i);
        most = Math.max(most, ++running);
        await tick();
        running--;
      });
      return r.done.then(() => {
        r.end();
        r.end(); // a second end must not free another slot
      });
    });
    await Promise.all(jobs);
    assert.equal(most, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(gate.active, 0);
    assert.equal(gate.heldBytes, 0);
    assert.equal(gate.queued, 0);
  });

  it('refuses at once (Busy, Retry-After) a request whose turn would come after its deadline', async () => {
    const gate = new WholeImageGate(1, 1000);
    const holdFor = (ms: number, deadline?: number) => {
      const r = asRequest(
        gate,
        async () => {
          await gate.reserve(10);
          await tick(ms);
        },
        deadline,
      );
      return r.done.finally(r.end);
    };
    // Nothing measured yet: a request queues, whatever its deadline.
    const measuring = holdFor(200);
    await tick(20);
    const unmeasured = holdFor(1, Date.now() + 50);
    await tick(20);
    assert.equal(gate.queued, 1, 'queued: no hold measured yet');
    await measuring;
    // The first hold ended after its deadline: refused then, not run.
    await assert.rejects(unmeasured, (err: unknown) => err instanceof TesseraError && err.kind === 'Busy');
    // Holds take ~200 ms now: with one running, a request due in 150 ms cannot make it ...
    const running = holdFor(200);
    await tick(20);
    const refusedAt = Date.now();
    const refused = holdFor(1, Date.now() + 150);
    await assert.rejects(refused, (err: unknown) => {
      assert.ok(err instanceof TesseraError);
      assert.equal(err.kind, 'Busy');
      assert.ok(err.retryAfterSeconds !== undefined && err.retryAfterSeconds >= 1);
      assert.match(err.message, /retry in \d+ s/);
      return true;
    });
    assert.ok(Date.now() - refusedAt < 100, 'told at once, not at its deadline');
    // ... while one due in 2 s waits its turn and runs.
    await Promise.all([running, holdFor(1, Date.now() + 2000)]);
    assert.equal(gate.active, 0);
    assert.equal(gate.queued, 0);
  });

  it('refuses a waiting request once a holder ends and the average says it can no longer finish', async () => {
    const gate = new WholeImageGate(1, 1000);
    const order: string[] = [];
    const request = (name: string, ms: number, deadline?: number) =>
      asRequest(
        gate,
        async () => {
          await gate.reserve(10);
          order.push(name);
          await tick(ms);
        },
        deadline,
      );
    // One short hold to start the average.
    const first = request('first', 5);
    await first.done;
    first.end();
    // A long holder; the next one's deadline looked fine against the 5 ms average when it queued.
    const long = request('long', 400);
    await tick(20);
    const waiting = request('waiting', 1, Date.now() + 300);
    await tick(20);
    assert.equal(gate.queued, 1, 'queued: 5 ms holds would let it finish');
    await long.done;
    long.end();
    // The average is now ~120 ms and ~300 ms have passed: it is refused as the long one ends, not run.
    await assert.rejects(waiting.done, (err: unknown) => err instanceof TesseraError && err.kind === 'Busy');
    waiting.end();
    assert.deepEqual(order, ['first', 'long']);
    assert.equal(gate.active, 0);
    assert.equal(gate.queued, 0);
  });

  it('holds at most `capacity` bytes together; a request above it runs alone', async () => {
    const gate = new WholeImageGate(8, 100);
    let held = 0;
    let mostHeld = 0;
    let running = 0;
    const alone: boolean[] = [];
    const sizes = [60, 30, 50, 250, 20, 70, 40];
    await Promise.all(
      sizes.map((bytes) => {
        const r = asRequest(gate, async () => {
          await gate.reserve(bytes);
          held += Math.min(bytes, 100);
          running++;
          mostHeld = Math.max(mostHeld, held);
          if (bytes > 100) alone.push(running === 1);
          await tick(3);
          held -= Math.min(bytes, 100);
          running--;
        });
        return r.done.then(r.end);
      }),
    );
    assert.ok(mostHeld <= 100, `held ${mostHeld} > 100`);
    assert.deepEqual(alone, [true]);
    assert.equal(gate.peakBytes, 100);
    assert.equal(gate.heldBytes, 0);
  });

  it('never makes a holder wait for more: parallel and later reservations of one request are granted', async () => {
    const gate = new WholeImageGate(1, 100);
    const first = asRequest(gate, async () => {
      await gate.reserve(60);
      // Once a second request waits behind this one, growing past the capacity must not wait for it.
      for (let i = 0; i < 1000 && gate.queued < 1; i++) await tick(1);
      await Promise.all([gate.reserve(80), gate.reserve(150), gate.reserve(10)]);
    });
    const second = asRequest(gate, () => gate.reserve(50));
    await first.done;
    assert.equal(gate.queued, 1);
    first.end();
    await second.done;
    second.end();
    assert.equal(gate.active, 0);
    assert.equal(gate.heldBytes, 0);
  });

  it('a request that ends while waiting leaves the queue, and its wait fails', async () => {
    const gate = new WholeImageGate(1, 100);
    const holder = asRequest(gate, () => gate.reserve(100));
    await holder.done;
    const quitter = asRequest(gate, () => gate.reserve(10));
    const third = asRequest(gate, () => gate.reserve(10));
    await tick();
    assert.equal(gate.queued, 2);
    quitter.end();
    await assert.rejects(quitter.done, /ended while waiting/);
    assert.equal(gate.queued, 1);
    holder.end();
    await third.done;
    third.end();
    assert.equal(gate.active, 0);
  });

  it('never waits forever on an estimate that is not a number', async () => {
    const gate = new WholeImageGate(2, 100);
    const r = asRequest(gate, async () => {
      await gate.reserve(NaN);
      await gate.reserve(Infinity);
    });
    await r.done;
    assert.equal(gate.active, 1);
    assert.equal(gate.heldBytes, 100);
    r.end();
    assert.equal(gate.active, 0);
  });

  it('does nothing outside a request', async () => {
    const gate = new WholeImageGate(1, 10);
    await gate.reserve(1e12);
    await gate.reserve(1e12);
    assert.equal(gate.active, 0);
  });

  it('estimates statistics above images and more bands above fewer', () => {
    const px = 1000;
    assert.ok(estimateImageBytes(px, 1, 2, true) > estimateImageBytes(px, 1, 2));
    assert.ok(estimateImageBytes(px, 3, 1) > estimateImageBytes(px, 1, 1));
    assert.equal(estimateImageBytes(px, 1, 2), 10 * px);
  });
});

describe('whole-image gate over HTTP', () => {
  let files: FileServer;
  let itemUrl: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    files.put('/gate/item.json', await fixtureItem(files.url));
    itemUrl = `${files.url}/gate/item.json`;
  });
  after(() => files.close());

  const heavy = (i: number): string[] => [
    `/stac/preview.png?url=${encodeURIComponent(itemUrl)}&assets=B01&max_size=1024&rescale=0,10000&i=${i}`,
    `/stac/statistics?url=${encodeURIComponent(itemUrl)}&assets=B01&assets=B09&max_size=1024&i=${i}`,
    `/stac/bbox/23.5,31.6,24.1,32.3/800x800.png?url=${encodeURIComponent(itemUrl)}&assets=B09&rescale=0,10000&i=${i}`,
  ];

  async function burst(tessera: RunningTessera): Promise<number[]> {
    const paths = Array.from({ length: 4 }, (_, i) => heavy(i)).flat();
    // Bodies are read to the end: an unread one holds its connection open, and close() waits for it.
    return Promise.all(
      paths.map(async (p) => {
        const r = await tessera.get(p);
        await r.arrayBuffer();
        return r.status;
      }),
    );
  }

  it('runs them one at a time when each needs more than the capacity, and all answer', async () => {
    const tessera = await startTessera({ largeRequests: 8, maxImageBytes: 1024 });
    try {
      const statuses = await burst(tessera);
      assert.deepEqual(new Set(statuses), new Set([200]));
      const gate = tessera.services.wholeImages;
      assert.equal(gate.peakRunning, 1);
      assert.equal(gate.active, 0);
      assert.equal(gate.heldBytes, 0);
      // Tiles do not wait in it.
      const tile = await tessera.get(`/stac/tiles/WebMercatorQuad/8/144/104.png?url=${encodeURIComponent(itemUrl)}&assets=B01&rescale=0,10000`);
      await tile.arrayBuffer();
      assert.equal(tile.status, 200);
      assert.equal(gate.peakRunning, 1);
    } finally {
      await tessera.close();
    }
  });

  it('runs several together when they fit', async () => {
    const tessera = await startTessera({ largeRequests: 8, maxImageBytes: 2 ** 30 });
    try {
      const statuses = await burst(tessera);
      assert.deepEqual(new Set(statuses), new Set([200]));
      const gate = tessera.services.wholeImages;
      assert.ok(gate.peakRunning > 1, `peak ${gate.peakRunning}`);
      assert.ok(gate.peakBytes > 0 && gate.peakBytes <= 2 ** 30);
      assert.equal(gate.active, 0);
    } finally {
      await tessera.close();
    }
  });

  it('answers 503 with Retry-After, not a 504 at the deadline, to requests whose turn would come too late', async () => {
    const tessera = await startTessera({ largeRequests: 1, maxImageBytes: 1024, requestTimeoutMs: 1500 });
    // Eight files, each read cold through slow (300 ms) upstream answers: each preview holds the gate
    // for ~350 ms, and eight in turn cannot all end within 1.5 s (without the estimate: five 504s).
    const cog = await readFile(path.join(FIXTURES, 'cog.tif'));
    for (let i = 0; i < 8; i++) files.put(`/gate/busy-${i}.tif`, cog, 'image/tiff');
    files.delayMs = 300;
    try {
      const answers = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const started = Date.now();
          const r = await tessera.get(`/cog/preview.png?url=${encodeURIComponent(`${files.url}/gate/busy-${i}.tif`)}&max_size=512&rescale=0,255`);
          const body = await r.text();
          return { status: r.status, retryAfter: r.headers.get('retry-after'), body, ms: Date.now() - started };
        }),
      );
      const statuses = answers.map((a) => a.status);
      assert.ok(!statuses.includes(504), `no request waits out its deadline: ${statuses.join(' ')}`);
      assert.ok(statuses.includes(200), `some are served: ${statuses.join(' ')}`);
      const busy = answers.filter((a) => a.status === 503);
      assert.ok(busy.length > 0, `the ones that could not be served in time are told so: ${statuses.join(' ')}`);
      for (const a of busy) {
        assert.match(a.retryAfter ?? '', /^\d+$/);
        assert.match(JSON.parse(a.body).detail, /Server busy/);
        assert.ok(a.ms < 1500, `told before the deadline (${a.ms} ms)`);
      }
      assert.equal(tessera.services.wholeImages.active, 0);
      assert.equal(tessera.services.wholeImages.queued, 0);
    } finally {
      files.delayMs = 0;
      await tessera.close();
    }
  });

  it('a client that leaves while waiting frees its place at once', async () => {
    const tessera = await startTessera({ largeRequests: 1, maxImageBytes: 1024 }, { listen: true });
    const gate = tessera.services.wholeImages;
    // Slow upstream reads keep the first request holding the gate while the others wait.
    files.delayMs = 150;
    try {
      const answers = Array.from({ length: 6 }, (_, i) => {
        const req = http.get(`${tessera.url}${heavy(i)[0]}`);
        const status = new Promise<number | 'gone'>((resolve) => {
          req.on('response', (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', () => resolve('gone'));
        });
        return { req, status };
      });
      for (let i = 0; i < 1000 && gate.queued < 5; i++) await tick(2);
      assert.equal(gate.queued, 5, 'five requests wait behind the first');
      for (const a of answers.slice(1)) a.req.destroy();
      for (let i = 0; i < 100 && gate.queued > 0; i++) await tick(2);
      assert.equal(gate.queued, 0, 'the waiting places are freed when their clients leave');
      assert.equal(gate.active, 1, 'while the first request still runs');
      assert.equal(await answers[0]!.status, 200);
      assert.equal(gate.active, 0);
      files.delayMs = 0;
      const again = await tessera.get(heavy(9)[1]!);
      await again.arrayBuffer();
      assert.equal(again.status, 200);
    } finally {
      files.delayMs = 0;
      await tessera.close();
    }
  });
});
