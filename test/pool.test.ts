/** The dataset handle pool: region affinity, waiting for a busy handle, failures, bounds. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DatasetPool } from '../src/source/pool.js';
import type { Dataset } from '../src/gdal/gdal.js';
import path from 'node:path';
import { TesseraError } from '../src/errors.js';
import { SourceContext } from '../src/source/dataset.js';
import { RasterReads } from '../src/source/reader.js';
import { readRaster, type ReadOptions } from '../src/source/read.js';
import { FIXTURES } from './helpers/paths.js';

/** Stand-in handles: the pool only opens, passes around and closes them. */
function fakePool(handlesPerSource: number, maxHandles = 64) {
  let opened = 0;
  const closed: number[] = [];
  const pool = new DatasetPool({
    handlesPerSource,
    maxHandles,
    open: async () => {
      const id = ++opened;
      return { id, close: () => closed.push(id) } as unknown as Dataset;
    },
  });
  const idOf = (ds: Dataset): number => (ds as unknown as { id: number }).id;
  return { pool, idOf, closed, opened: () => opened };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('DatasetPool', () => {
  it('gives reads of one region the same handle, and other regions other handles', async () => {
    const { pool, idOf, opened } = fakePool(4);
    const a1 = await pool.use('s', async (ds) => idOf(ds), 1);
    const a2 = await pool.use('s', async (ds) => idOf(ds), 1);
    const b = await pool.use('s', async (ds) => idOf(ds), 2);
    const a3 = await pool.use('s', async (ds) => idOf(ds), 5); // 5 % 4 = slot 1 again
    assert.equal(a1, a2);
    assert.equal(a1, a3);
    assert.notEqual(a1, b);
    assert.equal(opened(), 2);
  });

  it('makes a read wait for its busy handle rather than take (and fill) another', async () => {
    const { pool, idOf, opened } = fakePool(4);
    await pool.use('s', async () => undefined, 0); // opens slot 0
    await pool.use('s', async () => undefined, 3); // opens slot 3, idle now
    const gate = deferred();
    const order: string[] = [];
    const first = pool.use(
      's',
      async (ds) => {
        order.push('first');
        await gate.promise;
        return idOf(ds);
      },
      0,
    );
    const second = pool.use(
      's',
      async (ds) => {
        order.push('second');
        return idOf(ds);
      },
      0,
    );
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(order, ['first'], 'the second read waits although slot 3 is idle');
    gate.resolve();
    assert.equal(await first, await second);
    assert.equal(opened(), 2);
  });

  it('lets reads without affinity take any idle handle', async () => {
    const { pool, idOf } = fakePool(2);
    const gate = deferred();
    const busy = pool.use(
      's',
      async (ds) => {
        await gate.promise;
        return idOf(ds);
      },
      0,
    );
    await new Promise((r) => setTimeout(r, 5));
    const other = await pool.use('s', async (ds) => idOf(ds));
    gate.resolve();
    assert.notEqual(await busy, other);
  });

  it('closes a handle after a GDAL failure, keeps it after a TesseraError', async () => {
    const { pool, idOf, closed } = fakePool(2);
    const id = await pool.use('s', async (ds) => idOf(ds), 0);
    await assert.rejects(pool.use('s', async () => Promise.reject(new TesseraError('BadRequest', 'x')), 0));
    assert.deepEqual(closed, []);
    assert.equal(await pool.use('s', async (ds) => idOf(ds), 0), id);
    await assert.rejects(pool.use('s', async () => Promise.reject(new Error('gdal failed')), 0));
    assert.deepEqual(closed, [id]);
    assert.notEqual(await pool.use('s', async (ds) => idOf(ds), 0), id);
  });

  it('shares an open failure with everyone waiting for the source', async () => {
    let calls = 0;
    const pool = new DatasetPool({
      handlesPerSource: 4,
      maxHandles: 8,
      open: async () => {
        calls++;
        await new Promise((r) => setTimeout(r, 5));
        throw new Error('404');
      },
    });
    const results = await Promise.allSettled([0, 1, 2].map((a) => pool.use('s', async () => 1, a)));
    assert.ok(results.every((r) => r.status === 'rejected'));
    assert.equal(calls, 1, 'a cold source is opened once at a time');
    assert.deepEqual(pool.stats, { sources: 0, handles: 0, busy: 0, waiting: 0 });
  });

  it('counts handles in use and calls waiting for one (for /metrics)', async () => {
    const { pool } = fakePool(1);
    const hold = deferred();
    const first = pool.use('a', () => hold.promise);
    await new Promise((r) => setTimeout(r, 5));
    const second = pool.use('a', async () => undefined);
    await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(pool.stats, { sources: 1, handles: 1, busy: 1, waiting: 1 });
    hold.resolve();
    await Promise.all([first, second]);
    assert.deepEqual(pool.stats, { sources: 1, handles: 1, busy: 0, waiting: 0 });
  });

  it('closes idle handles of the least recently used source to stay within maxHandles', async () => {
    const { pool, closed, idOf } = fakePool(2, 2);
    const a = await pool.use('a', async (ds) => idOf(ds), 0);
    await pool.use('b', async () => undefined, 0);
    await pool.use('c', async () => undefined, 0);
    assert.deepEqual(closed, [a]);
    assert.equal(pool.stats.handles, 2);
  });
});

describe('DatasetPool, cold source', () => {
  it('opens one handle first, then each waiting region its own', async () => {
    let calls = 0;
    const pool = new DatasetPool({
      handlesPerSource: 4,
      maxHandles: 8,
      open: async () => {
        const id = ++calls;
        await new Promise((r) => setTimeout(r, 5));
        return { id, close: () => undefined } as unknown as Dataset;
      },
    });
    const ids = await Promise.all([0, 1, 2, 1].map((a) => pool.use('s', async (ds) => (ds as unknown as { id: number }).id, a)));
    assert.equal(calls, 3);
    assert.equal(ids[1], ids[3], 'one region, one handle');
    assert.equal(new Set(ids).size, 3);
  });
});

describe('DatasetPool, blocks of a read', () => {
  it('tells a read which of its blocks its handle has not read, before it runs or waits', async () => {
    const { pool } = fakePool(4);
    const told: number[][] = [];
    const cold = (blocks: number[]): void => void told.push(blocks);
    await pool.use('s', async () => undefined, { region: 0, blocks: [1, 2], cold });
    await pool.use('s', async () => undefined, { region: 0, blocks: [1, 2], cold });
    await pool.use('s', async () => undefined, { region: 0, blocks: [2, 3], cold });
    assert.deepEqual(told, [[1, 2], [3]], 'the second read found both blocks read, the third one of two');
    // While a read holds the handle, the next one waits for it; it is told before it waits.
    const gate = deferred();
    const first = pool.use('s', () => gate.promise, { region: 0, blocks: [4], cold });
    const second = pool.use('s', async () => undefined, { region: 0, blocks: [4, 5], cold });
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(told.slice(2), [[4], [4, 5]]);
    gate.resolve();
    await Promise.all([first, second]);
    // Another region's handle has read none of them.
    await pool.use('s', async () => undefined, { region: 1, blocks: [1], cold });
    assert.deepEqual(told.slice(4), [[1]]);
  });

  it('counts block-cache hits and misses, and reads warm, cold or untracked, against the handle each read got', async () => {
    const { pool } = fakePool(4);
    await pool.use('s', async () => undefined, { region: 0, blocks: [1, 2] });
    await pool.use('s', async () => undefined, { region: 0, blocks: [1, 2] });
    await pool.use('s', async () => undefined, { region: 0, blocks: [2, 3] });
    await pool.use('s', async () => undefined, { region: 1, blocks: [1] });
    await pool.use('s', async () => undefined);
    assert.deepEqual(pool.blockCacheStats, { hits: 3, misses: 4, reads: { warm: 1, cold: 3, untracked: 1 } });
  });

  it('does not count the blocks of a read that failed', async () => {
    const { pool } = fakePool(2);
    const told: number[][] = [];
    const cold = (blocks: number[]): void => void told.push(blocks);
    await assert.rejects(pool.use('s', async () => Promise.reject(new TesseraError('BadRequest', 'no')), { region: 0, blocks: [7], cold }));
    await pool.use('s', async () => undefined, { region: 0, blocks: [7], cold });
    assert.deepEqual(told, [[7], [7]]);
  });
});

describe('DatasetPool, point queries', () => {
  it("read a pixel on its region's handle, the one a window over the region uses", async () => {
    // Points on any idle handle made every handle cache (and inflate) its own copy of the blocks.
    const pool = new DatasetPool({ handlesPerSource: 4, maxHandles: 8 });
    const asked: Array<number | undefined> = [];
    const use = pool.use.bind(pool);
    pool.use = (p, fn, affinity) => {
      asked.push(typeof affinity === 'number' ? affinity : affinity?.region);
      return use(p, fn, affinity);
    };
    try {
      const reader = new RasterReads(new SourceContext(pool, { ttlMs: 0, size: 4 }).source(path.join(FIXTURES, 'cog.tif'), 'cog.tif'));
      const meta = await reader.meta();
      const [x0, dx, , y0, , dy] = meta.geoTransform;
      const at = async (col: number, row: number): Promise<number | undefined> => {
        asked.length = 0;
        await reader.point(x0! + (col + 0.5) * dx!, y0! + (row + 0.5) * dy!, meta.crs, { unscale: false, resampling: 'nearest', reproject: 'nearest' });
        assert.equal(asked.length, 1);
        return asked[0];
      };
      const window = async (col: number, row: number, size: number): Promise<number | undefined> => {
        asked.length = 0;
        const target = { kind: 'window', window: { colOff: col, rowOff: row, width: size, height: size }, width: size, height: size } as const;
        await readRaster((fn, affinity) => reader.source.use(fn, affinity), meta, target, { resampling: 'nearest', reproject: 'nearest' } as ReadOptions);
        return asked[0];
      };
      const first = await at(10, 10);
      assert.notEqual(first, undefined, 'a point names its region');
      assert.equal(await at(200, 300), first, 'the same 4×4-block region');
      assert.equal(await window(0, 0, 400), first, "a window over the region takes the points' handle");
      const far = await at(2600, 2600);
      assert.notEqual(far, undefined);
      assert.equal(await window(2400, 2400, 200), far);
    } finally {
      await pool.closeAll();
    }
  });
});
