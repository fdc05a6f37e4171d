/**
 * Safe by default, tried as an attacker would over HTTP: STAC items and mosaics whose hrefs are GDAL
 * VRTs (over /etc/passwd, a local GeoTIFF, nested /vsicurl/ URLs) under .vrt and .tif names, local
 * paths and GDAL virtual paths in every form, loopback addresses as literals in odd notations and as
 * names, redirect chains ending on refused addresses, and a GeoTIFF whose data lies past its end.
 * Every one must be a 4xx `{"detail"}`, the server must keep serving, and the "trap" listeners on
 * refused addresses must see no connection at all.
 *
 * tessera here opens 127.0.0.1 only (the file servers listen there); the traps listen on
 * 127.0.0.2, which stays refused, and on 127.0.0.1 for the instance that opens nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FIXTURES, fixtureItem, startFileServer, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera, type TestRequest } from './helpers/tessera.js';
import { NetworkPolicy, type Resolver } from '../src/upstream/network-policy.js';
import { UrlPolicy } from '../src/upstream/url-policy.js';
import { UpstreamClient, UpstreamRefused } from '../src/upstream/client.js';

/** A TCP listener that only counts who connects to it: a refused address must never be reached. */
interface Trap {
  host: string;
  port: number;
  connections: number;
  close(): Promise<void>;
}

async function startTrap(host: string): Promise<Trap> {
  const trap: Trap = { host, port: 0, connections: 0, close: async () => undefined };
  const server = net.createServer((socket) => {
    trap.connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  trap.port = (server.address() as AddressInfo).port;
  trap.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return trap;
}

let files: FileServer;
let redirects: Server;
let redirectUrl: string;
let tessera: RunningTessera;
/** tessera with the default networks: nothing but public unicast addresses. */
let closed: RunningTessera;
let trap: Trap;
let trapLocal: Trap;
let b01: Buffer;

const q = encodeURIComponent;

async function answer(t: RunningTessera, p: string, init?: TestRequest): Promise<{ status: number; detail: string; text: string }> {
  const res = await t.request(`${p}`, init);
  const text = await res.text();
  let detail = '';
  try {
    detail = String((JSON.parse(text) as { detail?: unknown }).detail ?? '');
  } catch {
    // not JSON: the assertion below shows the text
  }
  return { status: res.status, detail, text };
}

/** Asserts a 4xx with a JSON detail matching `pattern`. */
async function refused(t: RunningTessera, p: string, pattern: RegExp, init?: TestRequest): Promise<string> {
  const r = await answer(t, p, init);
  assert.ok(r.status >= 400 && r.status < 500, `${p} → ${r.status} ${r.text.slice(0, 300)}`);
  assert.match(r.detail, pattern, `${p} → ${r.text.slice(0, 400)}`);
  assert.doesNotMatch(r.text, /root:x:0:0/);
  return r.detail;
}

const vrt = (band: string): string => `<VRTDataset rasterXSize="16" rasterYSize="4">
  <SRS>EPSG:4326</SRS><GeoTransform>0, 1, 0, 4, 0, -1</GeoTransform>
  ${band}
</VRTDataset>`;

/** An item with one asset `data` at `href`, over the fixture item's footprint. */
async function itemWith(href: string): Promise<string> {
  const item = JSON.parse(await fixtureItem(files.url)) as { assets: Record<string, unknown> };
  item.assets = { data: { href, type: 'image/tiff; application=geotiff' } };
  return JSON.stringify(item);
}

before(async () => {
  b01 = await fs.readFile(path.join(FIXTURES, 'B01.tif'));
  files = await startFileServer(FIXTURES);
  trap = await startTrap('127.0.0.2');
  trapLocal = await startTrap('127.0.0.1');
  const trapUrl = `http://127.0.0.2:${trap.port}`;

  const raw = vrt(`<VRTRasterBand dataType="Byte" band="1" subClass="VRTRawRasterBand">
    <SourceFilename relativetoVRT="0">/etc/passwd</SourceFilename><ImageOffset>0</ImageOffset><PixelOffset>1</PixelOffset><LineOffset>16</LineOffset>
  </VRTRasterBand>`);
  const simple = vrt(`<VRTRasterBand dataType="UInt16" band="1"><SimpleSource>
    <SourceFilename relativeToVRT="0">${path.join(FIXTURES, 'B01.tif')}</SourceFilename><SourceBand>1</SourceBand>
  </SimpleSource></VRTRasterBand>`);
  const complex = vrt(`<VRTRasterBand dataType="UInt16" band="1"><ComplexSource>
    <SourceFilename relativeToVRT="0">/vsicurl/${trapUrl}/secret.tif</SourceFilename><SourceBand>1</SourceBand>
  </ComplexSource></VRTRasterBand>`);
  const nested = vrt(`<VRTRasterBand dataType="UInt16" band="1"><SimpleSource>
    <SourceFilename relativeToVRT="0">/vsicurl/${files.url}/evil/complex.vrt</SourceFilename><SourceBand>1</SourceBand>
  </SimpleSource></VRTRasterBand>`);
  for (const [name, body] of Object.entries({ raw, simple, complex, nested })) {
    files.put(`/evil/${name}.vrt`, body, 'application/xml');
    files.put(`/evil/${name}.tif`, body, 'image/tiff');
    files.put(`/evil/${name}-vrt.json`, await itemWith(`${files.url}/evil/${name}.vrt`));
    files.put(`/evil/${name}-tif.json`, await itemWith(`${files.url}/evil/${name}.tif`));
  }
  // The data of a GeoTIFF lies past its end: its header (IFDs, offsets) is whole, its tiles are not there.
  files.put('/evil/short.tif', b01.subarray(0, 1500), 'image/tiff');
  files.put('/evil/short.json', await itemWith(`${files.url}/evil/short.tif`));
  // A mosaic whose entries are a VRT, a local file, a GDAL virtual path and a loopback address.
  const fixtureMosaic = JSON.parse(await fs.readFile(path.join(FIXTURES, 'mosaic.json'), 'utf8')) as { tiles: Record<string, string[]> };
  for (const [name, entry] of Object.entries({
    vrt: `${files.url}/evil/raw.tif`,
    file: path.join(FIXTURES, 'cog1.tif'),
    vsi: `/vsicurl/${files.url}/cog1.tif`,
    loopback: `${trapUrl}/cog1.tif`,
  })) {
    const tiles = Object.fromEntries(Object.keys(fixtureMosaic.tiles).map((k) => [k, [entry]]));
    files.put(`/evil/mosaic-${name}.json`, JSON.stringify({ ...fixtureMosaic, tiles }));
  }

  // Redirect chains: two hops on an allowed host, then to a refused address.
  redirects = createServer((req, res) => {
    const to: Record<string, string> = {
      '/hop1/item.json': '/hop2/item.json',
      '/hop2/item.json': `${trapUrl}/item.json`,
      '/hop1/B01.tif': '/hop2/B01.tif',
      '/hop2/B01.tif': `${trapUrl}/B01.tif`,
      '/odd/B01.tif': `http://2130706434:${trap.port}/B01.tif`,
      '/ok/B01.tif': `${files.url}/B01.tif`,
    };
    const target = to[req.url ?? ''];
    if (target) res.writeHead(302, { Location: target }).end();
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => redirects.listen(0, '127.0.0.1', resolve));
  redirectUrl = `http://127.0.0.1:${(redirects.address() as AddressInfo).port}`;
  files.put('/evil/redirected-asset.json', await itemWith(`${redirectUrl}/hop1/B01.tif`));
  files.put('/evil/odd-redirect.json', await itemWith(`${redirectUrl}/odd/B01.tif`));
  files.put('/evil/good-redirect.json', await itemWith(`${redirectUrl}/ok/B01.tif`));

  tessera = await startTessera({ allowedNetworks: ['127.0.0.1/32'] });
  closed = await startTessera({ allowedNetworks: [] });
});

after(async () => {
  await Promise.all([tessera.close(), closed.close(), files.close(), trap.close(), trapLocal.close()]);
  redirects.closeAllConnections();
  await new Promise<void>((resolve) => redirects.close(() => resolve()));
});

describe('rasters open only with the allowed drivers', () => {
  for (const name of ['raw', 'simple', 'complex', 'nested']) {
    for (const ext of ['vrt', 'tif']) {
      it(`refuses a VRT (${name}) named .${ext} on every image route`, async () => {
        const item = q(`${files.url}/evil/${name}-${ext}.json`);
        const detail = await refused(tessera, `/stac/preview.npy?url=${item}&assets=data`, /asset 'data'.*GDAL VRT.*TESSERA_ALLOWED_DRIVERS/);
        assert.match(detail, new RegExp(`evil/${name}\\.${ext}`));
        await refused(tessera, `/stac/point/23.8,32.0?url=${item}&assets=data`, /asset 'data'.*GDAL VRT/);
        await refused(tessera, `/stac/tiles/WebMercatorQuad/8/144/103.png?url=${item}&assets=data`, /GDAL VRT/);
        await refused(tessera, `/stac/info?url=${item}&assets=data`, /GDAL VRT/);
        await refused(tessera, `/stac/statistics?url=${item}&assets=data`, /GDAL VRT/);
      });
    }
  }

  it('never reached what the VRTs name (a refused address behind nested /vsicurl/)', () => {
    assert.equal(trap.connections, 0);
  });

  it('refuses a VRT as a mosaic entry', async () => {
    await refused(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${q(`${files.url}/evil/mosaic-vrt.json`)}`, /GDAL VRT/);
  });

  it('answers a GeoTIFF whose data lies past its end with a 4xx, and keeps serving', async () => {
    await refused(tessera, `/stac/preview.npy?url=${q(`${files.url}/evil/short.json`)}&assets=data&max_size=64`, /asset 'data'.*(damaged|past its end)/);
    const ok = await answer(tessera, '/healthz');
    assert.equal(ok.status, 200);
  });
});

describe('no local file or GDAL virtual path', () => {
  const forms = [
    'file:///etc/passwd',
    '/etc/passwd',
    'etc/passwd',
    '/vsicurl/http://example.com/a.tif',
    '/vsis3/bucket/a.tif',
    '/vsizip//tmp/a.zip/a.tif',
    '/vsicurl?url=http%3A%2F%2Fexample.com%2Fa.tif&header_file=/etc/passwd',
    'vsimem/a.tif',
    'GTIFF_DIR:1:/etc/passwd',
  ];
  for (const form of forms) {
    it(`refuses url=${form} and the same as a STAC href and a mosaic document`, async () => {
      await refused(tessera, `/stac/info?url=${q(form)}`, /not allowed/);
      await refused(tessera, `/mosaicjson/info?url=${q(form)}`, /not allowed|not supported/);
      files.put('/evil/href.json', await itemWith(form));
      await refused(tessera, `/stac/info?url=${q(`${files.url}/evil/href.json`)}&assets=data`, /not allowed/);
    });
  }

  it('refuses local files and GDAL paths as mosaic entries', async () => {
    await refused(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${q(`${files.url}/evil/mosaic-file.json`)}`, /local files are disabled/);
    await refused(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${q(`${files.url}/evil/mosaic-vsi.json`)}`, /virtual file systems/);
  });
});

describe('no loopback, private or link-local address unless opened', () => {
  const literals = (port: number): string[] => [
    `http://127.0.0.2:${port}/item.json`,
    `http://2130706434:${port}/item.json`,
    `http://0x7f.2:${port}/item.json`,
    `http://127.2:${port}/item.json`,
    `http://0177.0.0.2:${port}/item.json`,
    `http://[::ffff:127.0.0.2]:${port}/item.json`,
  ];

  it('refuses loopback literals in odd notations, for documents and rasters, naming the setting', async () => {
    for (const url of literals(trap.port)) {
      await refused(tessera, `/stac/info?url=${q(url)}`, /127\.0\.0\.2.*loopback.*TESSERA_ALLOWED_NETWORKS/);
      await refused(tessera, `/mosaicjson/info?url=${q(url)}`, /loopback.*TESSERA_ALLOWED_NETWORKS/);
      files.put('/evil/literal.json', await itemWith(url.replace('item.json', 'B01.tif')));
      await refused(
        tessera,
        `/stac/tiles/WebMercatorQuad/8/144/103.png?url=${q(`${files.url}/evil/literal.json`)}&assets=data`,
        /loopback.*TESSERA_ALLOWED_NETWORKS/,
      );
    }
    await refused(tessera, `/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${q(`${files.url}/evil/mosaic-loopback.json`)}`, /loopback/);
    assert.equal(trap.connections, 0);
  });

  it('refuses metadata, private, link-local, CGNAT and unspecified addresses by default', async () => {
    for (const [host, range] of [
      ['169.254.169.254', 'linkLocal'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['0.0.0.0', 'unspecified'],
      ['[fd00::1]', 'uniqueLocal'],
      ['[fe80::1]', 'linkLocal'],
      ['[::1]', 'loopback'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
    ] as const) {
      await refused(closed, `/stac/info?url=${q(`http://${host}/latest/meta-data/item.json`)}`, new RegExp(`${range}.*TESSERA_ALLOWED_NETWORKS`));
    }
  });

  it('refuses a name that resolves to loopback, on the address it resolves to, without connecting', async () => {
    const detail = await refused(
      closed,
      `/stac/info?url=${q(`http://localhost:${trapLocal.port}/item.json`)}`,
      /localhost.*loopback.*TESSERA_ALLOWED_NETWORKS/,
    );
    assert.match(detail, /127\.0\.0\.1|::1/);
    assert.equal(trapLocal.connections, 0);
  });

  it('follows redirects only to allowed addresses, for documents and raster reads', async () => {
    await refused(tessera, `/stac/info?url=${q(`${redirectUrl}/hop1/item.json`)}`, /redirect.*127\.0\.0\.2.*loopback/);
    await refused(
      tessera,
      `/stac/tiles/WebMercatorQuad/8/144/103.png?url=${q(`${files.url}/evil/redirected-asset.json`)}&assets=data`,
      /asset 'data'.*not allowed.*TESSERA_ALLOWED_NETWORKS/,
    );
    await refused(tessera, `/stac/info?url=${q(`${files.url}/evil/odd-redirect.json`)}&assets=data`, /not allowed/);
    assert.equal(trap.connections, 0);
    // An allowed redirect still works.
    const ok = await answer(tessera, `/stac/info?url=${q(`${files.url}/evil/good-redirect.json`)}&assets=data`);
    assert.equal(ok.status, 200, ok.text);
  });

  it('keeps serving after all of it', async () => {
    const item = q(`${files.url}/item.json`);
    files.put('/item.json', await fixtureItem(files.url));
    const tile = await tessera.request(`/stac/tiles/WebMercatorQuad/8/144/103.png?url=${item}&assets=B01&rescale=0,10000`);
    assert.equal(tile.status, 200);
    assert.equal(trap.connections, 0);
    assert.equal(trapLocal.connections, 0);
  });
});

describe('network policy', () => {
  it('opens only the ranges TESSERA_ALLOWED_NETWORKS names', () => {
    const p = new NetworkPolicy(['10.0.0.0/8', '::1/128', '::ffff:192.168.0.0/112']);
    assert.equal(p.refusal('10.2.3.4'), undefined);
    assert.equal(p.refusal('::1'), undefined);
    assert.equal(p.refusal('192.168.4.5'), undefined);
    assert.equal(p.refusal('::ffff:10.0.0.1'), undefined);
    assert.equal(p.refusal('127.0.0.1'), 'loopback');
    assert.equal(p.refusal('172.16.0.1'), 'private');
    assert.equal(p.refusal('8.8.8.8'), undefined);
    assert.equal(p.refusal('2001:4860:4860::8888'), undefined);
    assert.equal(p.refusal('::ffff:127.0.0.1'), 'loopback');
    assert.equal(p.refusal('64:ff9b::7f00:1'), 'rfc6052');
    assert.equal(p.refusal('2002:7f00:1::'), '6to4');
    assert.throws(() => new NetworkPolicy(['10.0.0.0/33']), /TESSERA_ALLOWED_NETWORKS/);
    assert.throws(() => new NetworkPolicy(['example.com']), /TESSERA_ALLOWED_NETWORKS/);
  });

  it('connects to the address it checked: a DNS answer that changes to loopback cannot slip through', async () => {
    // The first answer is the public address the attacker's name showed earlier; every connection
    // resolves again through the policy, and the connection is made to what that lookup returned.
    const answers = [[{ address: '127.0.0.2', family: 4 }]];
    let asked = 0;
    const resolver: Resolver = (_host, cb) => cb(null, answers[Math.min(asked++, answers.length - 1)]!);
    const policy = new UrlPolicy({ allowedLocalRoots: [], allowedHosts: [], deniedHosts: [] }, new NetworkPolicy([], resolver));
    const client = new UpstreamClient({ policy, connectTimeoutMs: 1000 });
    try {
      const url = policy.resolve(`http://rebind.example:${trap.port}/a.tif`);
      assert.equal(url.kind, 'http');
      await assert.rejects(client.get(`http://rebind.example:${trap.port}/a.tif`, { signal: AbortSignal.timeout(2000) }), (err: unknown) => {
        assert.ok(err instanceof UpstreamRefused, String(err));
        assert.match(err.message, /rebind\.example.*127\.0\.0\.2.*loopback/);
        return true;
      });
      assert.equal(asked, 1);
      assert.equal(trap.connections, 0);
    } finally {
      client.close();
    }
  });

  it('connects only to the allowed addresses of a name that has both', async () => {
    const resolver: Resolver = (_host, cb) =>
      cb(null, [
        { address: '127.0.0.2', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    const policy = new UrlPolicy({ allowedLocalRoots: [], allowedHosts: [], deniedHosts: [] }, new NetworkPolicy(['127.0.0.1/32'], resolver));
    const client = new UpstreamClient({ policy, connectTimeoutMs: 1000 });
    try {
      const port = new URL(files.url).port;
      const res = await client.get(`http://both.example:${port}/B01.tif`, { signal: AbortSignal.timeout(2000), range: 'bytes=0-9' });
      assert.equal(res.statusCode, 206);
      res.resume();
      assert.equal(trap.connections, 0);
    } finally {
      client.close();
    }
  });
});

describe('upstream bytes per request (TESSERA_MAX_UPSTREAM_BYTES)', () => {
  it('stops a request that fetches more than its budget with a 400 naming the setting, and keeps serving', async () => {
    files.put('/budget/item.json', (await itemWith(`${files.url}/cog.tif`)).replace('"data"', '"cog"'));
    const item = q(`${files.url}/budget/item.json`);
    const tight = await startTessera({ allowedNetworks: ['127.0.0.1/32'], maxUpstreamBytes: 100_000 });
    try {
      files.resetStats();
      // A preview of cog.tif reads ~0.5 MB of overview blocks.
      const r = await answer(tight, `/stac/preview.npy?url=${item}&assets=cog&max_size=512`);
      assert.equal(r.status, 400, r.text);
      assert.match(r.detail, /more than 100000 bytes from upstream.*TESSERA_MAX_UPSTREAM_BYTES/);
      // What was fetched stayed near the budget: the read stopped, it did not finish first.
      assert.ok(files.stats().bytes < 400_000, `fetched ${files.stats().bytes} bytes`);
      // A document larger than the budget is refused as well.
      files.put('/budget/big.json', JSON.stringify({ pad: 'x'.repeat(150_000) }));
      const doc = await answer(tight, `/stac/info?url=${q(`${files.url}/budget/big.json`)}`);
      assert.equal(doc.status, 400, doc.text);
      assert.match(doc.detail, /TESSERA_MAX_UPSTREAM_BYTES/);
      // Small requests within the budget still work, on the same server.
      const tile = await answer(tight, `/stac/info?url=${item}&assets=cog`);
      assert.equal(tile.status, 200, tile.text);
    } finally {
      await tight.close();
    }
    // The default budget takes the same preview.
    const r = await answer(tessera, `/stac/preview.npy?url=${item}&assets=cog&max_size=512`);
    assert.equal(r.status, 200, r.text);
  });
});

describe('request bodies and parameters are bounded before work', () => {
  const post = (p: string, body: string): Promise<{ status: number; detail: string; text: string }> =>
    answer(tessera, p, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

  it('refuses JSON bodies nested deeper than GeoJSON needs, with a 400 detail (no stack overflow)', async () => {
    files.put('/item.json', await fixtureItem(files.url));
    const item = q(`${files.url}/item.json`);
    const deep = `{"type":"Feature","properties":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)},"geometry":null}`;
    for (const route of [`/stac/statistics?url=${item}&assets=B01`, `/stac/feature.png?url=${item}&assets=B01`]) {
      const r = await post(route, deep);
      assert.equal(r.status, 400, r.text.slice(0, 200));
      assert.match(r.detail, /nested deeper than 64 levels/);
    }
    const arrays = await post(`/stac/statistics?url=${item}&assets=B01`, `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    assert.equal(arrays.status, 400);
  });

  it('refuses bodies over 8 MiB with a 413 detail, and more vertices than it rasterises', async () => {
    const item = q(`${files.url}/item.json`);
    const big = await post(
      `/stac/statistics?url=${item}&assets=B01`,
      JSON.stringify({ type: 'Feature', properties: { pad: 'x'.repeat(9 * 1024 * 1024) }, geometry: null }),
    );
    assert.equal(big.status, 413, big.text.slice(0, 200));
    assert.ok(big.detail.length > 0);
    const ring: number[][] = [];
    for (let i = 0; i < 210_000; i++) ring.push([23.8 + (i % 1000) / 1e4, 32 + Math.floor(i / 1000) / 1e4]);
    ring.push(ring[0]!);
    const many = await post(
      `/stac/statistics?url=${item}&assets=B01`,
      JSON.stringify({ type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [ring] } }),
    );
    assert.equal(many.status, 400, many.text.slice(0, 200));
    assert.match(many.detail, /more than 200000 vertices/);
  });

  it('refuses colormaps and expressions past their size limits', async () => {
    const item = q(`${files.url}/item.json`);
    const tile = `/stac/tiles/WebMercatorQuad/8/144/103.png?url=${item}&assets=B01`;
    // 4097 entries (the smallest of them, to fit a URL): one past the limit.
    const cmap = await answer(tessera, `${tile}&colormap=${q(JSON.stringify(Array.from({ length: 4097 }, () => 0)))}`);
    assert.equal(cmap.status, 400, cmap.text.slice(0, 200));
    assert.match(cmap.detail, /at most 4096/);
    const expression = await answer(
      tessera,
      `/stac/tiles/WebMercatorQuad/8/144/103.png?url=${item}&expression=${q(Array.from({ length: 600 }, () => 'B01_b1').join('+'))}`,
    );
    assert.equal(expression.status, 400, expression.text.slice(0, 200));
    assert.match(expression.detail, /too large|longer than/);
    // A legitimate long colormap (400 entries) fits in a URL; past 64 KiB the answer is a JSON 431.
    const long = Array.from({ length: 400 }, (_, i) => [
      [i * 10, i * 10 + 10],
      [i % 256, 100, 200, 255],
    ]);
    const ok = await answer(tessera, `${tile}&rescale=0,4000&colormap=${q(JSON.stringify(long))}`);
    assert.equal(ok.status, 200, ok.text.slice(0, 200));
  });

  it('answers a request line past 64 KiB with a JSON 431 from the HTTP server itself', async () => {
    // Node's parser refuses the request before Fastify sees it: only a real socket shows this.
    const listening = await startTessera({ allowedNetworks: ['127.0.0.1/32'] }, { listen: true });
    try {
      const item = q(`${files.url}/item.json`);
      const huge = await answer(listening, `/stac/tiles/WebMercatorQuad/8/144/103.png?url=${item}&assets=B01&x=${'y'.repeat(70_000)}`);
      assert.equal(huge.status, 431);
      assert.match(huge.detail, /larger than 65536 bytes/);
      assert.equal((await answer(listening, '/healthz')).status, 200);
    } finally {
      await listening.close();
    }
  });
});

describe('tile indices are checked against the grid before any work', () => {
  it('answers x = 2^64 and zooms past a grid with a 400 at once, and keeps serving', async () => {
    files.put('/item.json', await fixtureItem(files.url));
    const item = q(`${files.url}/item.json`);
    const started = Date.now();
    for (const path of [
      '/stac/tiles/WebMercatorQuad/12/18446744073709551616/1542.png',
      '/stac/tiles/WebMercatorQuad/12/1000000000000/1542.png',
      '/stac/tiles/WebMercatorQuad/12/-1/1542.png',
      '/stac/tiles/WebMercatorQuad/31/0/0.png',
      '/stac/tiles/CDB1GlobalGrid/25/0/0.png',
      '/stac/tiles/GNOSISGlobalGrid/30/0/0.png',
      '/mosaicjson/tiles/WebMercatorQuad/12/18446744073709551616/1542.png',
    ]) {
      await refused(tessera, `${path}?url=${item}&assets=B01`, /is not a tile of/);
    }
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    assert.equal((await answer(tessera, '/healthz')).status, 200);
  });
});

describe('upstream failures are not remembered', () => {
  it('serves a file again once its server recovers, and never marks an error cacheable', async () => {
    let failures = 1;
    const flaky = createServer((req, res) => {
      if (failures > 0) {
        failures--;
        res.writeHead(500, { 'Content-Length': 0 }).end();
        return;
      }
      const m = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
      const start = m ? Number(m[1]) : 0;
      const end = m ? Math.min(Number(m[2]), b01.length - 1) : b01.length - 1;
      res.writeHead(m ? 206 : 200, { 'Content-Length': end - start + 1, 'Content-Range': `bytes ${start}-${end}/${b01.length}` });
      res.end(b01.subarray(start, end + 1));
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    try {
      files.put('/flaky.json', await itemWith(`http://127.0.0.1:${(flaky.address() as AddressInfo).port}/B01.tif`));
      const path = `/stac/info?url=${q(`${files.url}/flaky.json`)}&assets=data`;
      const first = await tessera.get(path);
      assert.equal(first.status, 502, await first.text());
      assert.equal(first.headers.get('cache-control'), 'no-store');
      const second = await tessera.get(path);
      assert.equal(second.status, 200, await second.text());
      assert.equal(second.headers.get('cache-control'), 'public, max-age=3600');
    } finally {
      flaky.closeAllConnections();
      await new Promise<void>((resolve) => flaky.close(() => resolve()));
    }
  });
});
