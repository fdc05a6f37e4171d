/**
 * Replicas behind a proxy, end to end: Debian's nginx runs deploy/nginx.conf (its ports rewritten)
 * in front of two tessera processes under the path prefix /tiles/ (TESSERA_ROOT_PATH,
 * TESSERA_TRUST_PROXY). The URLs tessera writes into TileJSON, WMTS capabilities and pages are the
 * public ones, and they answer through nginx; both replicas serve; a replica reached directly with
 * the prefix still routes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { LOOPBACK_NETWORKS, TESSERA_COMMAND, startServer, type Service } from './parity/harness.js';
import { NGINX, startNginx, type Running } from './helpers/deploy.js';

describe('two replicas behind nginx under /tiles/', {
  timeout: 120_000,
  skip: existsSync(NGINX) ? false : `${NGINX} is not installed (make install installs it)`,
}, () => {
  let files: FileServer;
  let replicas: Service[] = [];
  let nginx: Running | undefined;
  let front: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    const env = { TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS, TESSERA_ROOT_PATH: '/tiles', TESSERA_TRUST_PROXY: 'true' };
    replicas = await Promise.all([startServer(TESSERA_COMMAND, env), startServer(TESSERA_COMMAND, env)]);
    nginx = await startNginx([replicas[0]!.url, replicas[1]!.url]);
    front = nginx.url;
  });
  after(async () => {
    await nginx?.stop();
    await Promise.all(replicas.map((r) => r.stop()));
    await files?.close();
  });

  it('writes the public URLs into TileJSON and WMTS, and they answer through nginx', async () => {
    const cog = encodeURIComponent(`${files.url}/B01.tif`);
    const tilejson = (await (await fetch(`${front}/tiles/cog/WebMercatorQuad/tilejson.json?url=${cog}&rescale=0,1000`)).json()) as { tiles: string[] };
    assert.ok(tilejson.tiles[0]!.startsWith(`${front}/tiles/cog/tiles/WebMercatorQuad/{z}/{x}/{y}`), tilejson.tiles[0]);
    const tile = await fetch(tilejson.tiles[0]!.replace('{z}', '9').replace('{x}', '289').replace('{y}', '207'));
    assert.equal(tile.status, 200);
    assert.equal(tile.headers.get('content-type'), 'image/png');
    assert.match(tile.headers.get('x-request-id') ?? '', /^[0-9a-f]{32}$/, "nginx's request id, kept by tessera");
    const wmts = await (await fetch(`${front}/tiles/cog/WebMercatorQuad/WMTSCapabilities.xml?url=${cog}`)).text();
    assert.ok(wmts.includes(`${front}/tiles/cog/tiles/WebMercatorQuad/{TileMatrix}/{TileCol}/{TileRow}`), 'WMTS tile template is public');
  });

  it('serves pages whose links stay under the prefix', async () => {
    const html = await (await fetch(`${front}/tiles/`)).text();
    assert.ok(html.includes('<base href="/tiles/">'));
    const hrefs = [...html.matchAll(/(?:href|src)="([^"#]+)"/g)].map((m) => new URL(m[1]!.replace(/&amp;/g, '&'), `${front}/tiles/`).href);
    assert.ok(hrefs.length > 20);
    for (const href of new Set(hrefs)) {
      assert.ok(href.startsWith(`${front}/tiles/`), `${href} under the prefix`);
      const res = await fetch(href);
      assert.equal(res.status, 200, href);
      await res.arrayBuffer();
    }
  });

  it('spreads requests over both replicas, and a replica reached with the prefix still routes', async () => {
    for (let i = 0; i < 10; i++) await (await fetch(`${front}/tiles/tileMatrixSets`)).arrayBuffer();
    await new Promise((r) => setTimeout(r, 200));
    for (const replica of replicas) assert.match(replica.outputTail(), /"path":"\/tileMatrixSets"/, `${replica.url} served some`);
    assert.equal((await fetch(`${replicas[0]!.url}/tiles/healthz`)).status, 200);
    assert.equal((await fetch(`${replicas[0]!.url}/healthz`)).status, 200);
  });
});
