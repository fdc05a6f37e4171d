/**
 * The upstream gateway (src/upstream/gateway.ts): GDAL's reads of remote rasters go through it. Checked
 * here against real servers on 127.0.0.1: bytes and headers relayed as upstream sent them, the HEAD
 * answered by one ranged GET whose bytes serve GDAL's first read, redirects held to the URL policy,
 * upstream faults as status codes GDAL reports, and a tile's cold cost over HTTP in round trips.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FIXTURES, fixtureItem, startFileServer, type FileServer } from './helpers/fileserver.js';
import { LOOPBACK, startTessera } from './helpers/tessera.js';
import { GATEWAY_REFUSED_STATUS, UpstreamGateway, redactGateway } from '../src/upstream/gateway.js';
import { budgetMemory } from '../src/upstream/budget.js';
import { curlChunkBytes, gdal } from '../src/gdal/gdal.js';

let files: FileServer;
let odd: Server;
let oddUrl: string;
let gateway: UpstreamGateway;
let b01: Buffer;

const OPTIONS = { connectTimeoutMs: 2000, timeoutMs: 2000, probeBytes: 65536, chunkBytes: curlChunkBytes(), budgets: budgetMemory() };

/** The gateway URL GDAL would be given for `url`, without the /vsicurl/ prefix. */
function via(g: UpstreamGateway, url: string): string {
  return g.gdalPath(url).replace(/^\/vsicurl\//, '');
}

before(async () => {
  files = await startFileServer(FIXTURES);
  b01 = await fs.readFile(path.join(FIXTURES, 'B01.tif'));
  // Misbehaving upstreams: a redirect (to an allowed and to a denied host name), a body cut short,
  // and an answer slower than the gateway waits.
  odd = createServer((req, res) => {
    if (req.url === '/redirect/B01.tif') {
      res.writeHead(302, { Location: `${files.url}/B01.tif` }).end();
    } else if (req.url === '/redirect-denied/B01.tif') {
      res.writeHead(302, { Location: `http://localhost:${(files.url.split(':')[2] ?? '').replace(/\D/g, '')}/B01.tif` }).end();
    } else if (req.url === '/cut.tif') {
      res.writeHead(206, { 'Content-Length': 1000, 'Content-Range': 'bytes 0-999/5000' });
      res.write(Buffer.alloc(400, 7));
      setTimeout(() => res.destroy(), 20);
    } else if (req.url === '/slow.tif') {
      setTimeout(() => res.writeHead(200, { 'Content-Length': 1 }).end('x'), 3000).unref();
    } else {
      res.writeHead(404, { 'Content-Length': 0 }).end();
    }
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
  gateway = new UpstreamGateway({ policy: { allowedLocalRoots: [], allowedHosts: [], deniedHosts: ['localhost'], allowedNetworks: LOOPBACK }, ...OPTIONS });
});

after(async () => {
  await gateway.close();
  odd.closeAllConnections();
  await new Promise<void>((resolve) => odd.close(() => resolve()));
  await files.close();
});

describe('upstream gateway', () => {
  it('names files under a secret token, keeping the path and query last', () => {
    const p = gateway.gdalPath('https://example.com:8443/a/b%20c.tif?sig=1&x=2');
    assert.match(p, /^\/vsicurl\/http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/0\/https\/example\.com:8443\/a\/b%20c\.tif\?sig=1&x=2$/);
    assert.equal(redactGateway(`HTTP error on ${p}`), 'HTTP error on /vsicurl/https://example.com:8443/a/b%20c.tif?sig=1&x=2');
  });

  it('answers HEAD with one ranged GET and serves the first read from its bytes', async () => {
    const url = via(gateway, `${files.url}/B01.tif`);
    files.log.length = 0;
    const head = await fetch(url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers.get('content-length')), b01.length);
    assert.deepEqual(files.log, ['GET /B01.tif bytes=0-65535']);
    const first = await fetch(url, { headers: { Range: 'bytes=0-1023' } });
    assert.equal(first.status, 206);
    assert.equal(first.headers.get('content-range'), `bytes 0-1023/${b01.length}`);
    assert.deepEqual(Buffer.from(await first.arrayBuffer()), b01.subarray(0, 1024));
    assert.equal(files.log.length, 1, 'the first read came from the probe');
    // Beyond the probed bytes, ranges are relayed as upstream answers them.
    const cog = await fs.readFile(path.join(FIXTURES, 'cog.tif'));
    const cogUrl = via(gateway, `${files.url}/cog.tif`);
    assert.equal((await fetch(cogUrl, { method: 'HEAD' })).status, 200);
    const later = await fetch(cogUrl, { headers: { Range: `bytes=70000-70999` } });
    assert.equal(later.status, 206);
    assert.equal(later.headers.get('content-range'), `bytes 70000-70999/${cog.length}`);
    assert.deepEqual(Buffer.from(await later.arrayBuffer()), cog.subarray(70000, 71000));
    assert.deepEqual(files.log.slice(1), ['GET /cog.tif bytes=0-65535', 'GET /cog.tif bytes=70000-70999']);
  });

  it('lets GDAL open a file synchronously on the main thread (the gateway has its own thread)', () => {
    const ds = gdal.open(gateway.gdalPath(`${files.url}/B01.tif`));
    try {
      assert.deepEqual(ds.rasterSize, { x: 183, y: 183 });
    } finally {
      ds.close();
    }
  });

  it('refuses requests without the token, other methods, and refused hosts', async () => {
    const url = via(gateway, `${files.url}/B01.tif`);
    assert.equal((await fetch(url.replace(/\/[0-9a-f]{32}\//, `/${'0'.repeat(32)}/`))).status, 403);
    assert.equal((await fetch(url, { method: 'POST' })).status, 405);
    const denied = via(gateway, `${files.url}/B01.tif`).replace(/\/http\/127\.0\.0\.1:/, '/http/localhost:');
    assert.equal((await fetch(denied)).status, GATEWAY_REFUSED_STATUS);
  });

  it("serves the warm-up's file past a policy refusing loopback, that file alone, until the warm-up ends", async () => {
    // The default policy: no loopback, no private network.
    const strict = new UpstreamGateway({ policy: { allowedLocalRoots: [], allowedHosts: [], deniedHosts: [] }, ...OPTIONS });
    try {
      const refusedFile = via(strict, `${files.url}/B01.tif`);
      assert.equal((await fetch(refusedFile, { method: 'HEAD' })).status, GATEWAY_REFUSED_STATUS);
      const url = await strict.warmUpstream(b01);
      assert.ok(url, 'the thread serves the bytes');
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\.tif$/);
      // GDAL reads it through the gateway as any upstream file: the probe, then ranges.
      const ds = gdal.open(strict.gdalPath(url));
      try {
        assert.deepEqual(ds.rasterSize, { x: 183, y: 183 });
        const direct = gdal.open(path.join(FIXTURES, 'B01.tif'));
        try {
          assert.deepEqual(ds.bands.get(1).pixels.read(0, 0, 183, 183), direct.bands.get(1).pixels.read(0, 0, 183, 183));
        } finally {
          direct.close();
        }
      } finally {
        ds.close();
      }
      // Nothing else on loopback passes meanwhile: another path of the warm-up's server, the file server.
      assert.equal((await fetch(via(strict, url.replace(/[0-9a-f]{32}\.tif$/, 'other.tif')), { method: 'HEAD' })).status, GATEWAY_REFUSED_STATUS);
      assert.equal((await fetch(refusedFile, { method: 'HEAD' })).status, GATEWAY_REFUSED_STATUS);
      strict.endWarmUp();
      // The thread hears of the end in turn: the same URL is refused from then on.
      let status = 0;
      for (let i = 0; i < 50 && status !== GATEWAY_REFUSED_STATUS; i++) {
        status = (await fetch(via(strict, url), { method: 'HEAD' })).status;
        if (status !== GATEWAY_REFUSED_STATUS) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(status, GATEWAY_REFUSED_STATUS);
      await assert.rejects(fetch(url), "the warm-up's server is closed");
    } finally {
      await strict.close();
    }
  });

  it('follows redirects itself, and only to places the policy allows', async () => {
    const ok = await fetch(via(gateway, `${oddUrl}/redirect/B01.tif`), { headers: { Range: 'bytes=100-199' } });
    assert.equal(ok.status, 206);
    assert.deepEqual(Buffer.from(await ok.arrayBuffer()), b01.subarray(100, 200));
    const refused = await fetch(via(gateway, `${oddUrl}/redirect-denied/B01.tif`), { headers: { Range: 'bytes=0-99' } });
    assert.equal(refused.status, GATEWAY_REFUSED_STATUS);
  });

  it('passes upstream faults on as status codes: missing 404, unreachable 502, too slow 504, cut bodies cut', async () => {
    assert.equal((await fetch(via(gateway, `${files.url}/nothing.tif`), { method: 'HEAD' })).status, 404);
    assert.equal((await fetch(via(gateway, 'http://127.0.0.1:1/a.tif'), { method: 'HEAD' })).status, 502);
    const slow = await fetch(via(gateway, `${oddUrl}/slow.tif`), { method: 'HEAD' });
    assert.equal(slow.status, 504);
    // A block-sized range is read whole before it is sent (see the next test): a cut body is a 502.
    const cutRange = await fetch(via(gateway, `${oddUrl}/cut.tif`), { headers: { Range: 'bytes=0-999' } });
    assert.equal(cutRange.status, 502);
    // Anything else is streamed as it arrives: the cut reaches GDAL as a cut.
    const cut = await fetch(via(gateway, `${oddUrl}/cut.tif`));
    assert.equal(cut.status, 206);
    await assert.rejects(cut.arrayBuffer(), 'a body cut short upstream is not passed on as complete');
  });

  it('answers reads of bytes already being fetched from that one upstream request', async () => {
    const cog = await fs.readFile(path.join(FIXTURES, 'cog.tif'));
    const url = via(gateway, `${files.url}/cog.tif`);
    files.log.length = 0;
    files.delayMs = 100;
    try {
      // Two handles asking for the same block at once, and a third for part of it.
      const asked = ['bytes=300000-399999', 'bytes=300000-399999', 'bytes=320000-329999'];
      const answers = await Promise.all(asked.map((range) => fetch(url, { headers: { Range: range } })));
      for (const [i, res] of answers.entries()) {
        const [first, last] = asked[i]!.slice(6).split('-').map(Number) as [number, number];
        assert.equal(res.status, 206);
        assert.equal(res.headers.get('content-range'), `bytes ${first}-${last}/${cog.length}`);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), cog.subarray(first, last + 1));
      }
      assert.deepEqual(files.log, ['GET /cog.tif bytes=300000-399999']);
    } finally {
      files.delayMs = 0;
    }
  });

  it('fetches blocks ahead from the block tables its probe read, and GDAL then reads them from it', async () => {
    const local = gdal.open(path.join(FIXTURES, 'TCI.tif'));
    const band = local.bands.get(1);
    const { x: width, y: height } = local.rasterSize;
    const { x: blockWidth, y: blockHeight } = band.blockSize;
    const expected = [1, 2, 3].map((b) => local.bands.get(b).pixels.read(0, 0, width, height));
    local.close();
    // A copy under a new URL: nothing of it is held or cached yet.
    files.alias('/ahead/', '/');
    const remote = gateway.gdalPath(`${files.url}/ahead/TCI.tif`);
    files.log.length = 0;
    assert.equal((await fetch(via(gateway, `${files.url}/ahead/TCI.tif`), { method: 'HEAD' })).status, 200);
    const blocks: Array<[number, number]> = [];
    for (let row = 0; row * blockHeight < height; row++) for (let col = 0; col * blockWidth < width; col++) blocks.push([col, row]);
    gateway.prefetch(remote, { width, height, blockWidth, blockHeight }, blocks, -1);
    // The blocks of a row lie one after another: whole rows come in a few ranges, in parallel.
    let seen = -1;
    while (files.log.length !== seen) {
      seen = files.log.length;
      await new Promise((r) => setTimeout(r, 150));
    }
    const ahead = files.log.slice(1);
    assert.ok(ahead.length >= 1 && ahead.length < blocks.length, files.log.join('\n'));
    // Every range starts on /vsicurl/'s chunks, as its own reads of a lone block do.
    for (const line of ahead) assert.equal(Number(line.split('=')[1]!.split('-')[0]) % curlChunkBytes(), 0, line);
    const ds = gdal.open(remote);
    try {
      const read = [1, 2, 3].map((b) => ds.bands.get(b).pixels.read(0, 0, width, height));
      assert.deepEqual(read, expected);
    } finally {
      ds.close();
    }
    assert.deepEqual(files.log.slice(1), ahead, 'GDAL read every block from the bytes fetched ahead');
  });

  it('fetches upstream what runs past the bytes fetched ahead, whole, and GDAL reads right', async () => {
    const chunk = curlChunkBytes();
    const local = gdal.open(path.join(FIXTURES, 'cog.tif'));
    const { x: width, y: height } = local.rasterSize;
    const { x: blockWidth, y: blockHeight } = local.bands.get(1).blockSize;
    const windows = [
      [0, 0],
      [blockWidth, 0],
      [0, blockHeight * 3],
    ].map(([x, y]) => ({ x: x!, y: y!, pixels: local.bands.get(1).pixels.read(x!, y!, 16, 16) }));
    local.close();
    const cog = await fs.readFile(path.join(FIXTURES, 'cog.tif'));
    files.alias('/past/', '/');
    const url = via(gateway, `${files.url}/past/cog.tif`);
    files.log.length = 0;
    assert.equal((await fetch(url, { method: 'HEAD' })).status, 200);
    gateway.prefetch(gateway.gdalPath(`${files.url}/past/cog.tif`), { width, height, blockWidth, blockHeight }, [[0, 0]], -1);
    while (files.log.length < 2) await new Promise((r) => setTimeout(r, 20));
    const [first, last] = files.log[1]!.split('=')[1]!.split('-').map(Number) as [number, number];
    await new Promise((r) => setTimeout(r, 100));
    // /vsicurl/ reading ahead past what is held: the whole range, from upstream (a short answer would
    // read as the end of the file to GDAL 3.6).
    const ahead = await fetch(url, { headers: { Range: `bytes=${first}-${last + 4 * chunk}` } });
    assert.equal(ahead.status, 206);
    assert.deepEqual(Buffer.from(await ahead.arrayBuffer()), cog.subarray(first, last + 4 * chunk + 1));
    assert.equal(files.log.length, 3, files.log.join('\n'));
    // Blocks fetched ahead and blocks GDAL fetches itself, side by side: every pixel as in the file.
    const ds = gdal.open(gateway.gdalPath(`${files.url}/past/cog.tif`));
    try {
      for (const w of windows) assert.deepEqual(ds.bands.get(1).pixels.read(w.x, w.y, 16, 16), w.pixels, `window at ${w.x},${w.y}`);
    } finally {
      ds.close();
    }
  });
});

describe('cold tile through tessera', () => {
  it('costs three sequential round trips: item, file head, pixels (no HEAD)', async () => {
    const delayed = await startFileServer(FIXTURES);
    const tessera = await startTessera();
    try {
      // An item whose asset is larger than the probe (cog.tif, 800 KB, over Greenland).
      const item = JSON.parse(await fixtureItem(delayed.url));
      item.bbox = [-61.29, 72.23, -52.3, 74.62];
      item.assets = { cog: { href: `${delayed.url}/cog.tif`, type: 'image/tiff; application=geotiff; profile=cloud-optimized' } };
      delayed.put('/item.json', JSON.stringify(item));
      delayed.delayMs = 20;
      const res = await tessera.get(
        `/stac/tiles/WebMercatorQuad/10/350/198.png?url=${encodeURIComponent(`${delayed.url}/item.json`)}&assets=cog&rescale=0,1000`,
      );
      assert.equal(res.status, 200, await res.clone().text());
      const log = delayed.log.join('\n');
      assert.equal(delayed.stats().rounds, 3, log);
      assert.ok(!delayed.log.some((l) => l.startsWith('HEAD')), log);
      assert.equal(delayed.log.filter((l) => l.startsWith('GET /cog.tif bytes=0-')).length, 1, log);
      assert.ok(delayed.log.length >= 3, log);
    } finally {
      await tessera.close();
      await delayed.close();
    }
  });

  it('fetches no byte twice for a cold tile of a plain COG: the head, then the blocks', async () => {
    // Full-resolution tiles at each file's middle (TCI: 1.5 MB RGB, cog1: 2.9 MB, several block runs).
    for (const [name, tile] of [
      ['cog.tif', '9/175/98'],
      ['TCI.tif', '10/579/415'],
      ['cog1.tif', '9/150/182'],
    ] as const) {
      const tessera = await startTessera();
      try {
        files.log.length = 0;
        const res = await tessera.get(`/cog/tiles/WebMercatorQuad/${tile}.png?url=${encodeURIComponent(`${files.url}/${name}`)}`);
        assert.equal(res.status, 200, await res.clone().text());
        await res.arrayBuffer();
        const ranges = files.log
          .filter((l) => l.startsWith(`GET /${name} bytes=`))
          .map((l) => l.split('=')[1]!.split('-').map(Number) as [number, number])
          .sort((a, b) => a[0] - b[0]);
        const log = files.log.join('\n');
        assert.equal(files.log.length, ranges.length, `only ranged GETs of the file:\n${log}`);
        assert.deepEqual(ranges[0], [0, 65535], `the head first:\n${log}`);
        for (let i = 1; i < ranges.length; i++) assert.ok(ranges[i]![0] > ranges[i - 1]![1], `${name}: no byte fetched twice:\n${log}`);
      } finally {
        await tessera.close();
      }
    }
  });

  it('keeps the gateway out of error messages', async () => {
    const tessera = await startTessera();
    try {
      files.put('/short/B01.tif', b01.subarray(0, 100), 'image/tiff');
      files.put('/short/item.json', (await fixtureItem(files.url)).replaceAll(`${files.url}/B0`, `${files.url}/short/B0`));
      const res = await tessera.get(`/stac/info?url=${encodeURIComponent(`${files.url}/short/item.json`)}&assets=B01`);
      const text = await res.text();
      // A file of 100 bytes is a damaged TIFF (the client's choice of URL), not an upstream fault.
      assert.equal(res.status, 400, text);
      assert.doesNotMatch(text, /[0-9a-f]{32}/);
    } finally {
      await tessera.close();
    }
  });
});
