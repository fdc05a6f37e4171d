/**
 * Loads several requests wait for (a source's metadata, a document) and a client that goes away
 * (upstream/budget.ts `shared`, concurrency.ts `sharedLoad`): the load goes on for the others,
 * charged to the request that started it; a request whose client has left starts nothing, and a
 * request still waiting starts the load again itself.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Budgets } from '../src/upstream/budget.js';
import { sharedLoad } from '../src/concurrency.js';
import { TesseraError } from '../src/errors.js';

/** Runs `fn` as a request: its own asynchronous flow with a budget entered at its start. */
function asRequest<T>(budgets: Budgets, fn: (release: () => void) => Promise<T>): Promise<T> {
  return new AsyncLocalStorage().run(null, async () => {
    const release = budgets.enter();
    return fn(release);
  });
}

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('shared loads and clients that go away', () => {
  it('a load goes on, charged to the request that started it, when its client leaves', async () => {
    const budgets = new Budgets(1000);
    const table = new Map<string, Promise<string>>();
    const load = (): Promise<string> =>
      sharedLoad(
        table,
        'doc',
        () =>
          budgets.shared(async () => {
            await tick(50);
            assert.equal(budgets.chargeCurrent(100), true, 'the load may still fetch');
            return 'document';
          }),
        { startAgain: (err) => budgets.startAgain(err) },
      );
    let spentByA = (): number => -1;
    const a = asRequest(budgets, async (release) => {
      const started = load();
      spentByA = (release as unknown as { spent: () => number }).spent;
      await tick(10);
      release();
      return started;
    });
    const b = asRequest(budgets, async () => {
      await tick(20);
      return load();
    });
    assert.deepEqual(await Promise.all([a, b]), ['document', 'document']);
    assert.equal(spentByA(), 0, 'what A spent was frozen when it ended');
  });

  it('a request whose client left starts nothing; one still waiting starts the load again', async () => {
    const budgets = new Budgets(1000);
    const table = new Map<string, Promise<string>>();
    let starts = 0;
    const load = (): Promise<string> =>
      sharedLoad(
        table,
        'meta',
        () =>
          budgets.shared(async () => {
            starts++;
            await tick(20);
            return 'metadata';
          }),
        { startAgain: (err) => budgets.startAgain(err) },
      );
    const gone = asRequest(budgets, async (release) => {
      release();
      return load();
    });
    // B joins the load A (already gone) would have started.
    const waiting = asRequest(budgets, async () => load());
    await assert.rejects(gone, (err: unknown) => err instanceof TesseraError && err.kind === 'ClientGone');
    assert.equal(await waiting, 'metadata');
    assert.equal(starts, 1, 'started once, by the request still waiting');
  });

  it('outside a request, loads run unmetered', async () => {
    const budgets = new Budgets(10);
    assert.equal(await budgets.shared(async () => budgets.chargeCurrent(1_000_000)), true);
  });
});
