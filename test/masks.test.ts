/** Masks from alpha, nodata and mask bands: equal to the plain per-value rule, and large ones yield to the event loop. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { maskFromAlpha, maskFromValues, normaliseMaskBand } from '../src/source/masks.js';

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const plain = (values: ArrayLike<number>, valid: (v: number) => boolean): Uint8Array => Uint8Array.from(values, (v) => (valid(v) ? 255 : 0));

describe('masks', () => {
  it('Byte nodata masks equal the per-value rule, for every nodata byte, odd lengths and unaligned views', async () => {
    const rnd = random(1);
    for (const length of [0, 1, 3, 4, 5, 1023, 4097]) {
      const values = Uint8Array.from({ length }, () => (rnd() < 0.3 ? 0 : Math.floor(rnd() * 256)));
      for (const nodata of [0, 1, 17, 128, 255]) {
        assert.deepEqual(
          await maskFromValues(values, nodata),
          plain(values, (v) => v !== nodata),
          `length ${length}, nodata ${nodata}`,
        );
      }
      // Values outside the Byte range match nothing.
      assert.deepEqual(
        await maskFromValues(values, -1),
        plain(values, () => true),
      );
      assert.deepEqual(
        await maskFromValues(values, 0.5),
        plain(values, () => true),
      );
    }
    const buffer = new Uint8Array(1027).map((_, i) => i % 7);
    const view = buffer.subarray(3);
    assert.deepEqual(
      await maskFromValues(view, 0),
      plain(view, (v) => v !== 0),
    );
  });

  it('other types, NaN nodata, alpha bands and GDAL mask bands', async () => {
    const rnd = random(2);
    const u16 = Uint16Array.from({ length: 999 }, () => (rnd() < 0.2 ? 65535 : Math.floor(rnd() * 65536)));
    assert.deepEqual(
      await maskFromValues(u16, 65535),
      plain(u16, (v) => v !== 65535),
    );
    const f32 = Float32Array.from({ length: 999 }, () => (rnd() < 0.2 ? NaN : rnd()));
    assert.deepEqual(
      await maskFromValues(f32, NaN),
      plain(f32, (v) => !Number.isNaN(v)),
    );
    const i16 = Int16Array.from({ length: 999 }, () => (rnd() < 0.2 ? -9999 : Math.floor(rnd() * 100)));
    assert.deepEqual(
      await maskFromValues(i16, -9999),
      plain(i16, (v) => v !== -9999),
    );

    const alpha8 = Uint8Array.from({ length: 1001 }, () => (rnd() < 0.4 ? 0 : 1 + Math.floor(rnd() * 255)));
    const expected8 = plain(alpha8, (v) => v !== 0);
    assert.deepEqual(await maskFromAlpha(alpha8), expected8);
    const alpha16 = Uint16Array.from({ length: 1001 }, () => (rnd() < 0.4 ? 0 : 256 * Math.floor(rnd() * 256)));
    assert.deepEqual(
      await maskFromAlpha(alpha16),
      plain(alpha16, (v) => v !== 0),
    );
    const band = Uint8Array.from({ length: 1001 }, () => (rnd() < 0.5 ? 0 : Math.floor(rnd() * 256)));
    const expectedBand = plain(band, (v) => v !== 0);
    assert.deepEqual(await normaliseMaskBand(band), expectedBand);
  });

  it('a whole-image mask yields to the event loop between slices; a tile-sized one does not', async () => {
    const order: string[] = [];
    const big = new Uint16Array(20_000_000);
    setImmediate(() => order.push('event loop'));
    await maskFromValues(big, 0).then(() => order.push('mask'));
    assert.deepEqual(order, ['event loop', 'mask']);

    const small: string[] = [];
    setImmediate(() => small.push('event loop'));
    await maskFromValues(new Uint16Array(512 * 512), 0).then(() => small.push('mask'));
    assert.deepEqual(small, ['mask']);
    await new Promise((r) => setImmediate(r));

    const bytes = new Uint8Array(40_000_000).fill(3);
    const order8: string[] = [];
    setImmediate(() => order8.push('event loop'));
    const mask = await maskFromValues(bytes, 3).then((m) => {
      order8.push('mask');
      return m;
    });
    assert.deepEqual(order8, ['event loop', 'mask']);
    assert.equal(mask.indexOf(255), -1);
  });
});
