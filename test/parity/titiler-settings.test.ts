/**
 * A TiTiler 0.18 deployment's settings work unchanged on tessera: with TITILER_API_GLOBAL_ACCESS_TOKEN
 * both servers refuse every route without `?access_token=` (401, the same detail) and serve it
 * with; the documents and the files pages load stay open; TileJSON tile URLs carry the token; the
 * pages pass it on. TITILER_API_DISABLE_MOSAIC, _CORS_ORIGINS and _CACHECONTROL are honoured.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fixtureItem, startFileServer, FIXTURES, type FileServer } from '../helpers/fileserver.js';
import { LOOPBACK_NETWORKS, TESSERA_COMMAND, TITILER_COMMAND, startServer, type Service } from './harness.js';

const TOKEN = 's3cret-t0ken';
const SETTINGS = {
  TITILER_API_GLOBAL_ACCESS_TOKEN: TOKEN,
  TITILER_API_DISABLE_MOSAIC: 'TRUE',
  TITILER_API_CORS_ORIGINS: 'https://maps.example.org',
  TITILER_API_CACHECONTROL: 'public, max-age=60',
};

describe('TiTiler 0.18 settings on tessera, side by side with TiTiler', { timeout: 120_000 }, () => {
  let files: FileServer;
  let titiler: Service;
  let tessera: Service;
  let item: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    files.put('/item.json', await fixtureItem(files.url));
    item = encodeURIComponent(`${files.url}/item.json`);
    const healthPath = `/healthz?access_token=${TOKEN}`;
    [titiler, tessera] = await Promise.all([
      startServer({ ...TITILER_COMMAND, healthPath }, SETTINGS),
      startServer({ ...TESSERA_COMMAND, healthPath }, { ...SETTINGS, TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS }),
    ]);
  });
  after(async () => {
    await Promise.all([titiler?.stop(), tessera?.stop()]);
    await files?.close();
  });

  const both = async (path: string, init: RequestInit = {}): Promise<Array<{ status: number; body: string; headers: Headers }>> =>
    Promise.all(
      [titiler, tessera].map(async (s) => {
        const res = await fetch(`${s.url}${path}`, init);
        return { status: res.status, body: await res.text(), headers: res.headers };
      }),
    );

  it("refuses a missing or wrong token with TiTiler's 401, and serves a right one", async () => {
    for (const [path, status, detail] of [
      ['/healthz', 401, 'Missing `access_token`'],
      [`/stac/info?url=${item}`, 401, 'Missing `access_token`'],
      [`/stac/info?url=${item}&access_token=wrong`, 401, 'Invalid `access_token`'],
      ['/tileMatrixSets?access_token=', 401, 'Missing `access_token`'],
    ] as const) {
      const [a, b] = await both(path);
      assert.equal(a!.status, status, `TiTiler ${path}`);
      assert.equal(b!.status, status, `tessera ${path}`);
      assert.deepEqual(JSON.parse(b!.body), JSON.parse(a!.body), path);
      assert.equal((JSON.parse(b!.body) as { detail: string }).detail, detail);
    }
    const [a, b] = await both(`/stac/info?url=${item}&access_token=${TOKEN}`);
    assert.equal(a!.status, 200);
    assert.equal(b!.status, 200);
    assert.deepEqual(JSON.parse(b!.body), JSON.parse(a!.body));
  });

  it('leaves the API documents open, and puts the token in TileJSON tile URLs', async () => {
    for (const path of ['/api', '/api.html']) {
      const res = await fetch(`${tessera.url}${path}`);
      assert.equal(res.status, 200, path);
    }
    const [a, b] = await both(`/stac/WebMercatorQuad/tilejson.json?url=${item}&assets=B01&access_token=${TOKEN}`);
    const tiles = (body: string): string =>
      new URL((JSON.parse(body) as { tiles: string[] }).tiles[0]!.replace(/\{(\w)\}/g, '0')).searchParams.get('access_token') ?? '';
    assert.equal(tiles(a!.body), TOKEN);
    assert.equal(tiles(b!.body), TOKEN);
    const page = await (await fetch(`${tessera.url}/?access_token=${TOKEN}`)).text();
    assert.match(page, new RegExp(`href="tileMatrixSets\\?access_token=${TOKEN}"`), 'the landing page passes the token on');
  });

  it('leaves the mosaic routes out, and answers with the configured CORS origin and Cache-Control', async () => {
    const [a, b] = await both(`/mosaicjson/info?url=x&access_token=${TOKEN}`);
    assert.equal(a!.status, 404);
    assert.equal(b!.status, 404);
    const headers = { Origin: 'https://maps.example.org' };
    const [ta, tb] = await both(`/tileMatrixSets?access_token=${TOKEN}`, { headers });
    for (const r of [ta!, tb!]) {
      assert.equal(r.headers.get('access-control-allow-origin'), 'https://maps.example.org');
      assert.equal(r.headers.get('cache-control'), 'public, max-age=60');
    }
    const [oa, ob] = await both('/tileMatrixSets', { headers: { Origin: 'https://elsewhere.example.org' } });
    assert.equal(oa!.headers.get('access-control-allow-origin'), null);
    assert.equal(ob!.headers.get('access-control-allow-origin'), null);
  });
});
