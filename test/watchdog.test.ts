/** The event-loop watchdog: a stall past the threshold is counted and reported with the requests in flight. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LoopWatchdog, type StallReport } from '../src/api/watchdog.js';
import { startTessera } from './helpers/tessera.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function holdLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // holding the event loop, as a long synchronous pass over a large image would
  }
}

describe('event-loop watchdog', () => {
  it('reports a stall past the threshold with the requests in flight, and not shorter delays', async () => {
    const reports: StallReport[] = [];
    const watchdog = new LoopWatchdog(60, (r) => reports.push(r)).start();
    try {
      await sleep(50);
      holdLoop(20);
      await sleep(50);
      assert.equal(reports.length, 0, 'a 20 ms hold is under the threshold');
      const end = watchdog.begin('req-1', 'GET', `/stac/preview.png?url=${'x'.repeat(1000)}`);
      holdLoop(200);
      await sleep(50);
      end();
      assert.equal(reports.length, 1);
      assert.ok(reports[0]!.stalledMs >= 150, `${reports[0]!.stalledMs} ms`);
      assert.equal(reports[0]!.inFlight.length, 1);
      assert.match(reports[0]!.inFlight[0]!, /^GET \/stac\/preview\.png\?url=x+…$/);
      assert.ok(reports[0]!.inFlight[0]!.length < 400, 'long URLs are cut');
      holdLoop(120);
      await sleep(50);
      assert.equal(reports.length, 2);
      assert.deepEqual(reports[1]!.inFlight, [], 'an answered request is no longer named');
      assert.equal(watchdog.stalls, 2);
      assert.ok(watchdog.worstMs >= 150);
      assert.equal(watchdog.recent.length, 2);
    } finally {
      watchdog.stop();
    }
  });

  it('runs in the server from the start, with the threshold of TESSERA_STALL_WARN_MS', async () => {
    const tessera = await startTessera({ stallWarnMs: 100 });
    try {
      const before = tessera.app.watchdog.stalls;
      holdLoop(250);
      await sleep(50);
      assert.equal(tessera.app.watchdog.stalls - before, 1);
      assert.equal(tessera.app.watchdog.thresholdMs, 100);
      assert.equal((await tessera.get('/healthz')).status, 200);
    } finally {
      await tessera.close();
    }
  });
});
