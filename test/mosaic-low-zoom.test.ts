/**
 * Mosaic tiles below the document's minzoom (readers/mosaic-compose.ts): each asset is read for the
 * part of the tile it covers, from its overviews (no full-resolution block is fetched from minzoom
 * down), and the picture is the one whole-tile reads give (checked against
 * each asset's own /cog tile, pixel selection `first` applied here); past
 * TESSERA_MOSAIC_LOW_ZOOM_DEADLINE_MS the tile is made of the assets that arrived, said in
 * X-Tessera-Partial, and kept by no cache (no-store, no ETag, not in the tile cache), while the
 * whole tile is made after the answer and kept in the tile cache (requests meanwhile get the part
 * again, starting nothing); at minzoom and above there is no deadline.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { FIXTURES, fixtureMosaic, startFileServer, type FileServer } from './helpers/fileserver.js';
import { readTiffStructure } from '../src/source/tiff-structure.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { parseNpy } from './helpers/npy.js';

describe('mosaic tiles below minzoom', () => {
  let fast: FileServer;
  let slow: FileServer;
  const servers: RunningTessera[] = [];
  let mixedUrl: string;
  let thirdUrl: string;
  let plainUrl: string;

  async function start(overrides: Parameters<typeof startTessera>[0] = {}, listen = false): Promise<RunningTessera> {
    const t = await startTessera(overrides, { listen });
    servers.push(t);
    return t;
  }
  const npy = async (t: RunningTessera, p: string) => {
    const res = await t.get(p);
    assert.equal(res.status, 200, p);
    return { npy: parseNpy(Buffer.from(await res.arrayBuffer())), headers: res.headers };
  };

  before(async () => {
    fast = await startFileServer(FIXTURES);
    slow = await startFileServer(FIXTURES);
    const doc = await fixtureMosaic(fast.url);
    fast.put('/mosaic.json', JSON.stringify(doc));
    // The same mosaic with cog2.tif on a server that answers after 1.5 s.
    const mixed = {
      ...doc,
      tiles: Object.fromEntries(Object.entries(doc.tiles).map(([k, v]) => [k, v.map((a) => a.replace(`${fast.url}/cog2.tif`, `${slow.url}/cog2.tif`))])),
    };
    fast.put('/mixed.json', JSON.stringify(mixed));
    mixedUrl = encodeURIComponent(`${fast.url}/mixed.json`);
    // And with a third asset after the slow one (cog1.tif again, under another URL): read one at a
    // time, it is opened only after the part has been answered.
    const order = [`${fast.url}/cog1.tif`, `${slow.url}/cog2.tif`, `${fast.url}/cog1.tif?third`];
    const third = { ...mixed, tiles: Object.fromEntries(Object.keys(mixed.tiles).map((k) => [k, order])) };
    fast.put('/third.json', JSON.stringify(third));
    thirdUrl = encodeURIComponent(`${fast.url}/third.json`);
    plainUrl = encodeURIComponent(`${fast.url}/mosaic.json`);
  });
  after(async () => {
    for (const t of servers) await t.close();
    await fast?.close();
    await slow?.close();
  });

  it('reads each asset for its part of the tile and gives the picture whole-tile reads give', async (ctx) => {
    const t = await start({ tileCacheBytes: 0 });
    for (const [z, x, y] of [
      [6, 18, 22],
      [5, 9, 11],
    ] as const) {
      const mosaic = await npy(t, `/mosaicjson/tiles/WebMercatorQuad/${z}/${x}/${y}.npy?url=${plainUrl}`);
      assert.equal(mosaic.headers.get('x-assets'), `${fast.url}/cog1.tif,${fast.url}/cog2.tif`);
      // rio-tiler's `first` over each asset's whole-tile read.
      const [one, two] = await Promise.all(
        ['cog1.tif', 'cog2.tif'].map((f) => npy(t, `/cog/tiles/WebMercatorQuad/${z}/${x}/${y}.npy?url=${encodeURIComponent(`${fast.url}/${f}`)}`)),
      );
      const n = 256 * 256;
      const bands = mosaic.npy.shape[0]! - 1;
      let differ = 0;
      let covered = 0;
      let edges = 0;
      for (let i = 0; i < n; i++) {
        const from = one!.npy.values[bands * n + i] !== 0 ? one! : two!.npy.values[bands * n + i] !== 0 ? two! : undefined;
        const mask = mosaic.npy.values[bands * n + i]!;
        if (from) covered++;
        if ((mask !== 0) !== (from !== undefined)) {
          differ++;
          edges++;
        } else if (from && [...Array(bands).keys()].some((b) => mosaic.npy.values[b * n + i] !== from.npy.values[b * n + i])) differ++;
      }
      ctx.diagnostic(`z${z}: ${covered} pixels covered, ${differ} differ (${edges} in the mask)`);
      assert.ok(covered > 100, `z${z}: the assets cover part of the tile (${covered} pixels)`);
      // The warper's approximate transformer, run over a window's rows, may pick a neighbouring source
      // pixel (measured: 0.6% at z6, 2.0% at z5, none in the mask).
      assert.equal(edges, 0, 'the same pixels are valid');
      assert.ok(differ <= covered * 0.03, `z${z}: ${differ} of ${covered} pixels differ from whole-tile reads`);
    }
  });

  it('reads overviews, never a full-resolution block, from minzoom down', async () => {
    // Where each COG's full-resolution blocks start (a COG stores its overviews before them).
    const fullResolution = new Map<string, number>();
    for (const name of ['cog1.tif', 'cog2.tif']) {
      const bytes = await readFile(path.join(FIXTURES, name));
      const layout = await readTiffStructure({ read: async (offset, length) => bytes.subarray(offset, offset + length) }, name, {
        maxBytes: 1 << 24,
        maxDirectories: 64,
      });
      fullResolution.set(`/${name}`, layout.directories.find((d) => (d.subfileType & 1) === 0)!.firstBlockOffset);
    }
    for (const [z, x, y] of [
      [7, 37, 45],
      [6, 18, 22],
      [5, 9, 11],
    ] as const) {
      const t = await start({ tileCacheBytes: 0 });
      fast.log.length = 0;
      const res = await t.get(`/mosaicjson/tiles/WebMercatorQuad/${z}/${x}/${y}.png?url=${plainUrl}`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      const ranges = fast.log.flatMap((line) => {
        const m = /^GET (\/cog[12]\.tif) bytes=(\d+)-(\d+)$/.exec(line);
        return m ? [{ file: m[1]!, start: Number(m[2]), end: Number(m[3]) }] : [];
      });
      assert.ok(ranges.length >= 2, `z${z}: both COGs read (${fast.log.join('; ')})`);
      for (const r of ranges)
        assert.ok(
          r.end < fullResolution.get(r.file)!,
          `z${z}: ${r.file} bytes ${r.start}-${r.end} reach its full-resolution blocks at ${fullResolution.get(r.file)}`,
        );
    }
  });

  it('answers with the assets that arrived once the deadline has passed, keeps that part in no cache, and the whole tile once made', async () => {
    slow.delayMs = 1500;
    const t = await start({ mosaicLowZoomDeadlineMs: 300 });
    const tile = `/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?url=${mixedUrl}`;
    const started = Date.now();
    const first = await t.get(tile);
    const took = Date.now() - started;
    assert.equal(first.status, 200);
    assert.ok(took < 1500, `answered before the slow asset (${took} ms)`);
    assert.equal(first.headers.get('x-tessera-partial'), '1/2');
    assert.equal(first.headers.get('x-assets'), `${fast.url}/cog1.tif`);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    assert.equal(first.headers.get('etag'), null, 'a partial tile is not the tile: no tag');
    const part = Buffer.from(await first.arrayBuffer());
    // While the whole tile is being made, the same request gets the part again, not new work.
    const again = await t.get(tile);
    assert.equal(again.headers.get('x-cache'), 'partial');
    assert.equal(again.headers.get('x-tessera-partial'), '1/2');
    assert.equal(again.headers.get('cache-control'), 'no-store');
    assert.equal(again.headers.get('etag'), null);
    assert.ok(Buffer.from(await again.arrayBuffer()).equals(part));
    const metrics = await (await t.get('/metrics')).text();
    assert.match(metrics, /^tessera_mosaic_partial_tiles_total [2-9]/m, 'operators see partial tiles counted');
    // The whole tile is made after the answer and kept: a later request gets it from the cache.
    let whole: Response | undefined;
    for (let i = 0; i < 50; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const res = await t.get(tile);
      if (res.headers.get('x-cache') === 'hit') {
        whole = res;
        break;
      }
      await res.arrayBuffer();
    }
    assert.ok(whole, 'the whole tile reached the tile cache');
    assert.equal(whole.headers.get('x-tessera-partial'), null);
    assert.equal(whole.headers.get('x-assets'), `${fast.url}/cog1.tif,${slow.url}/cog2.tif`);
    assert.ok(whole.headers.get('etag'), 'the whole tile has the tag of its inputs');
    assert.notEqual(whole.headers.get('cache-control'), 'no-store');
    await whole.arrayBuffer();

    // At minzoom the deadline does not apply: the tile waits for both assets, as rio-tiler does.
    const atMinzoom = await t.get(`/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${mixedUrl}`);
    assert.equal(atMinzoom.status, 200);
    assert.equal(atMinzoom.headers.get('x-tessera-partial'), null);
    assert.equal(atMinzoom.headers.get('x-assets'), `${fast.url}/cog1.tif,${slow.url}/cog2.tif`);
    await atMinzoom.arrayBuffer();
    slow.delayMs = 0;
  });

  it('finishes the whole tile with assets first opened after the answer', async () => {
    slow.delayMs = 800;
    // Over a socket: the request's upstream budget ends when its answer has gone out.
    const t = await start({ mosaicLowZoomDeadlineMs: 200, mosaicConcurrency: 1 }, true);
    const tile = `/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?url=${thirdUrl}`;
    const first = await t.get(tile);
    assert.equal(first.headers.get('x-tessera-partial'), '1/3', `assets ${first.headers.get('x-assets')}`);
    await first.arrayBuffer();
    let whole: Response | undefined;
    const meanwhile: Array<string | null> = [];
    for (let i = 0; i < 50 && !whole; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const res = await t.get(tile);
      if (res.headers.get('x-cache') === 'hit') whole = res;
      else {
        meanwhile.push(res.headers.get('x-cache'));
        await res.arrayBuffer();
      }
    }
    assert.ok(whole, 'the whole tile reached the tile cache');
    assert.equal(whole.headers.get('x-assets'), `${fast.url}/cog1.tif,${slow.url}/cog2.tif,${fast.url}/cog1.tif?third`);
    // Made by the first request's work: every request meanwhile got its part, none started again.
    assert.ok(meanwhile.length > 0 && meanwhile.every((c) => c === 'partial'), `meanwhile: ${meanwhile.join(', ')}`);
    await whole.arrayBuffer();
    slow.delayMs = 0;
  });

  it('waits for every asset without a deadline (0), and caches the whole tile', async () => {
    slow.delayMs = 500;
    const t = await start({ mosaicLowZoomDeadlineMs: 0 });
    const tile = `/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?url=${mixedUrl}`;
    const first = await t.get(tile);
    assert.equal(first.headers.get('x-tessera-partial'), null);
    assert.equal(first.headers.get('x-assets'), `${fast.url}/cog1.tif,${slow.url}/cog2.tif`);
    assert.ok(first.headers.get('etag'));
    await first.arrayBuffer();
    const again = await t.get(tile);
    assert.equal(again.headers.get('x-cache'), 'hit');
    await again.arrayBuffer();
    slow.delayMs = 0;
  });
});
