/** The gate that holds whole-image requests: at most `limit` at once, FIFO, every slot given back. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Gate } from '../src/api/large-requests.js';

describe('large request gate', () => {
  it('runs at most `limit` at once, in arrival order, and frees every slot', async () => {
    const gate = new Gate(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const job = async (i: number): Promise<void> => {
      const release = await gate.enter();
      order.push(i);
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      release();
      release(); // a second release must not free another slot
    };
    await Promise.all(Array.from({ length: 7 }, (_, i) => job(i)));
    assert.equal(most, 2);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(gate.queued, 0);
    // All slots are free again: two enter at once without waiting.
    const a = await gate.enter();
    const b = await gate.enter();
    let third = false;
    const c = gate.enter().then((r) => ((third = true), r));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(third, false);
    a();
    (await c)();
    b();
  });
});
