/**
 * `/demo/*` served from memory: whole files, byte ranges (what GDAL's /vsicurl/ asks for), bad
 * ranges and unknown names; and the demo item read back through the same process, which must not
 * need a libuv pool thread to answer GDAL (the reason the files are held in memory).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import { makeDemoData } from '../src/demo/make.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

describe('/demo/* from memory', { timeout: 60_000 }, () => {
  let dir: string;
  let server: RunningTessera;

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-demo-route-'));
    await makeDemoData(dir);
    server = await startTessera({ demoDir: dir }, { listen: true });
  });

  after(async () => {
    await server?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('serves whole files with their type', async () => {
    const res = await server.get('/demo/item.json', { 'accept-encoding': 'identity' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    const item = (await res.json()) as { assets: Record<string, unknown> };
    assert.ok(item.assets['dem']);
  });

  it('never compresses, even when asked', async () => {
    const res = await server.get('/demo/dem.tif', { range: 'bytes=0-99', 'accept-encoding': 'gzip, br' });
    assert.equal(res.status, 206);
    assert.equal(res.headers.get('content-encoding'), null);
  });

  it('answers byte ranges exactly', async () => {
    const onDisk = await fs.readFile(path.join(dir, 'dem.tif'));
    for (const [range, start, end] of [
      ['bytes=0-99', 0, 99],
      ['bytes=1000-', 1000, onDisk.length - 1],
      ['bytes=-16', onDisk.length - 16, onDisk.length - 1],
    ] as const) {
      const res = await server.get('/demo/dem.tif', { range, 'accept-encoding': 'identity' });
      assert.equal(res.status, 206, range);
      assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${onDisk.length}`);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), onDisk.subarray(start, end + 1));
    }
    const bad = await server.get('/demo/dem.tif', { range: `bytes=${onDisk.length + 10}-` });
    assert.equal(bad.status, 416);
    assert.equal((await server.get('/demo/nothing.tif')).status, 404);
    assert.equal((await server.get('/demo/..%2Fetc%2Fpasswd')).status, 404);
  });

  it('the demo item is read back through the same process (relative hrefs)', async () => {
    const item = encodeURIComponent(`${server.url}/demo/item.json`);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => server.get(`/stac/preview.npy?url=${item}&assets=dem&assets=rgb&max_size=${64 + i}`)),
    );
    for (const r of results) assert.equal(r.status, 200, await r.clone().text());
  });
});
