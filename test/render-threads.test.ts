/**
 * Render threads give the same bytes as rendering in this thread, for every encoder (GDAL's on the
 * main thread, the others in a thread), pass client errors through as they are, and survive a
 * thread that dies.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RenderThreads } from '../src/image/render-threads.js';
import { postProcessAndRender, type RenderSpec } from '../src/image/post-process.js';
import { TesseraError } from '../src/errors.js';
import { namedColormap } from '../src/image/colormap.js';
import { applyExpression, parseExpression } from '../src/image/expression.js';
import type { ImageData } from '../src/image/image-data.js';
import type { ImageFormat } from '../src/image/formats.js';
import { DEFAULT_PNG_LEVEL } from '../src/image/encode/index.js';

const W = 64;
const H = 48;

/** A deterministic image; `shareMask` gives every band the same mask object, as readers do. */
function image(bandCount: number, opts: { dtype?: 'uint8' | 'uint16'; masked?: boolean; shareMask?: boolean; views?: boolean } = {}): ImageData {
  const n = W * H;
  const dtype = opts.dtype ?? 'uint16';
  // With `views`, all bands live in one larger buffer (as a band-interleaved read may leave them).
  const backing = opts.views ? new Uint16Array(n * (bandCount + 1)) : undefined;
  const bands = Array.from({ length: bandCount }, (_, b) => {
    const a = backing ? backing.subarray((b + 1) * n, (b + 2) * n) : dtype === 'uint8' ? new Uint8Array(n) : new Uint16Array(n);
    for (let i = 0; i < n; i++) a[i] = dtype === 'uint8' ? (i * (b + 3)) & 255 : (i * 37 * (b + 1)) % 4000;
    return a;
  });
  const mask = () => {
    const m = new Uint8Array(n).fill(255);
    if (opts.masked) for (let i = 0; i < n; i += 7) m[i] = 0;
    return m;
  };
  const shared = mask();
  return {
    width: W,
    height: H,
    dtype: backing ? 'uint16' : dtype,
    bands,
    masks: bands.map(() => (opts.shareMask ? shared : mask())),
    bandNames: bands.map((_, b) => `b${b + 1}`),
    bounds: [10, 40, 11, 41],
    crs: 'EPSG:4326',
  };
}

const spec = (over: Partial<RenderSpec> = {}): RenderSpec => ({
  algorithm: undefined,
  rescale: undefined,
  colorFormula: undefined,
  colormap: undefined,
  returnMask: true,
  ...over,
});

describe('render threads', () => {
  let threads: RenderThreads;
  before(() => {
    threads = new RenderThreads(2, { pngLevel: DEFAULT_PNG_LEVEL });
  });
  after(async () => {
    await threads.close();
  });

  const cases: Array<{ name: string; make: () => ImageData; format: ImageFormat | undefined; spec: RenderSpec }> = [
    {
      name: 'png with rescale and a shared mask',
      make: () => image(3, { masked: true, shareMask: true }),
      format: 'png',
      spec: spec({ rescale: [[0, 4000]] }),
    },
    { name: 'automatic format (JPEG: no masked pixel)', make: () => image(3), format: undefined, spec: spec({ rescale: [[0, 4000]] }) },
    { name: 'automatic format (PNG: masked pixels)', make: () => image(3, { masked: true }), format: undefined, spec: spec({ rescale: [[0, 4000]] }) },
    { name: 'webp', make: () => image(3, { masked: true }), format: 'webp', spec: spec({ rescale: [[0, 4000]] }) },
    { name: 'npy of uint16 bands', make: () => image(2, { masked: true }), format: 'npy', spec: spec() },
    { name: 'pngraw of uint16 bands', make: () => image(1), format: 'pngraw', spec: spec() },
    { name: 'colormap on uint8', make: () => image(1, { dtype: 'uint8', masked: true }), format: 'png', spec: spec({ colormap: namedColormap('viridis') }) },
    {
      name: 'gamma formula',
      make: () => image(3, { dtype: 'uint8' }),
      format: 'png',
      spec: spec({ colorFormula: [{ op: 'gamma', bands: [1, 2, 3], g: 1.7 }] }),
    },
    { name: 'hillshade algorithm', make: () => image(1), format: 'png', spec: spec({ algorithm: { id: 'hillshade', api: '0.18', params: { azimuth: 300 } } }) },
    { name: 'bands that are views into one buffer', make: () => image(3, { views: true, masked: true }), format: 'png', spec: spec({ rescale: [[0, 4000]] }) },
    { name: 'GeoTIFF (GDAL, main thread)', make: () => image(2, { masked: true }), format: 'tif', spec: spec() },
    { name: '4-band JPEG (CMYK: GDAL, handed back to the main thread)', make: () => image(4, { dtype: 'uint8' }), format: 'jpeg', spec: spec() },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const here = await postProcessAndRender(c.make(), c.format, c.spec);
      const there = await threads.render(c.make(), c.format, c.spec);
      assert.equal(there.format, here.format);
      assert.equal(there.mediaType, here.mediaType);
      assert.ok(Buffer.isBuffer(there.body));
      assert.deepEqual(there.body, here.body);
    });
  }

  it('evaluates an expression left by the reader, as the reader would have', async () => {
    const text = '(b3-b1)/(b3+b1);b2*2';
    const render = spec({ rescale: [[-1, 1]], colormap: undefined });
    const byReader = await postProcessAndRender(applyExpression(image(3, { masked: true, shareMask: true }), parseExpression(text)), 'npy', render);
    const there = await threads.render(image(3, { masked: true, shareMask: true }), 'npy', { ...render, expression: text });
    assert.deepEqual(there.body, byReader.body);
    // A second image with the same expression reuses the thread's parsed copy; the output is the same.
    const again = await threads.render(image(3, { masked: true, shareMask: true }), 'npy', { ...render, expression: text });
    assert.deepEqual(again.body, byReader.body);
    const colored = spec({ rescale: [[-0.5, 0.5]], colormap: namedColormap('viridis') });
    const one = '(b3-b1)/(b3+b1)';
    const png = await threads.render(image(3, { masked: true }), 'png', { ...colored, expression: one });
    assert.deepEqual(png.body, (await postProcessAndRender(applyExpression(image(3, { masked: true }), parseExpression(one)), 'png', colored)).body);
  });

  it('passes a client error through with its kind', async () => {
    // WebP holds 3 or 4 bands; two data bands with the mask are 3, without the mask 2: refused.
    await assert.rejects(
      threads.render(image(2), 'webp', spec({ returnMask: false })),
      (err: unknown) => err instanceof TesseraError && err.kind === 'BadRequest' && /WebP/i.test(err.message),
    );
  });

  it('keeps serving many concurrent renders', async () => {
    const outs = await Promise.all(Array.from({ length: 40 }, (_, i) => threads.render(image(1 + (i % 3), { masked: i % 2 === 0 }), 'png', spec())));
    assert.equal(outs.length, 40);
    for (const o of outs) assert.equal(o.body.subarray(1, 4).toString('latin1'), 'PNG');
  });

  it('fails the jobs of a thread that dies, then replaces it', async () => {
    const inner = threads as unknown as { threads: Array<{ worker: { terminate(): Promise<number> } }> };
    const pending = Promise.all(
      Array.from({ length: 6 }, () =>
        threads.render(image(3, { masked: true }), 'png', spec({ rescale: [[0, 4000]] })).then(
          () => 'ok',
          (e: unknown) => (e instanceof TesseraError && e.kind === 'Internal' ? 'failed' : 'other'),
        ),
      ),
    );
    await inner.threads[0]!.worker.terminate();
    const results = await pending;
    assert.ok(
      results.every((r) => r === 'ok' || r === 'failed'),
      results.join(','),
    );
    assert.equal(threads.size, 2);
    const again = await threads.render(image(3, { masked: true }), 'png', spec({ rescale: [[0, 4000]] }));
    assert.equal(again.format, 'png');
  });
});
