/**
 * Conditional GETs (src/api/etag.ts): a strong ETag on successful answers, the same whatever the
 * encoding; If-None-Match naming it (alone, in a list, weak or `*`) gives 304 with no body; errors
 * carry no tag and are never turned into a 304. Images are tagged by their inputs: another server
 * with cold caches gives the same tag, and answers a revalidation without reading a pixel; a
 * changed input (raster, STAC item, mosaic document) changes the tag.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFileServer, FIXTURES, fixtureItem, fixtureMosaic, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { matches } from '../src/api/etag.js';

describe('ETag and If-None-Match', () => {
  let files: FileServer;
  let tessera: RunningTessera;
  let cog: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    tessera = await startTessera();
    cog = encodeURIComponent(`${files.url}/B01.tif`);
  });

  /** The answer as sent, still compressed (fetch would decompress and hide Content-Encoding). */
  async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
    const res = await tessera.app.inject({ method: 'GET', url: path, headers });
    return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
  }
  after(async () => {
    await tessera?.close();
    await files?.close();
  });

  it('tags a tile and answers 304 when the tag is sent back', async () => {
    const url = `/cog/tiles/WebMercatorQuad/9/289/207.png?url=${cog}&rescale=0,1000`;
    const first = await get(url);
    assert.equal(first.status, 200);
    const etag = first.headers['etag'] as string;
    assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/, 'a strong tag');
    const again = await get(url);
    assert.equal(again.headers['etag'], etag, 'the same tile, the same tag');
    for (const sent of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const cached = await get(url, { 'If-None-Match': sent });
      assert.equal(cached.status, 304, sent);
      assert.equal(cached.body.length, 0);
      assert.equal(cached.headers['etag'], etag);
    }
    const changed = await get(url, { 'If-None-Match': '"something-else"' });
    assert.equal(changed.status, 200);
    assert.ok(changed.body.equals(first.body));
    const other = await get(url.replace('rescale=0,1000', 'rescale=0,2000'));
    assert.notEqual(other.headers['etag'], etag, 'another picture, another tag');
  });

  it('tags each encoding of an answer apart, and revalidates either form', async () => {
    const url = `/cog/info?url=${cog}`;
    const plain = await get(url);
    const plainTag = plain.headers['etag'] as string;
    assert.equal(plain.headers['content-encoding'], undefined);
    for (const coding of ['gzip', 'br', 'deflate']) {
      const encoded = await get(url, { 'Accept-Encoding': coding });
      assert.equal(encoded.headers['content-encoding'], coding);
      // RFC 9110: another representation, another tag; a cache never serves these bytes for the identity answer.
      assert.equal(encoded.headers['etag'], `${plainTag.slice(0, -1)}-${coding}"`);
      const revalidated = await get(url, { 'Accept-Encoding': coding, 'If-None-Match': encoded.headers['etag'] as string });
      assert.equal(revalidated.status, 304);
      assert.equal(revalidated.body.length, 0);
      assert.equal(revalidated.headers['etag'], encoded.headers['etag'], 'the 304 names the tag the client holds');
      assert.equal(revalidated.headers['content-encoding'], undefined, 'and no coding a cache would copy onto its copy');
    }
    const identityHeld = await get(url, { 'Accept-Encoding': 'gzip', 'If-None-Match': plainTag });
    assert.equal(identityHeld.status, 304, 'the identity tag revalidates too');
    assert.equal(identityHeld.headers['etag'], plainTag);
    const gzipHeld = await get(url, { 'If-None-Match': `${plainTag.slice(0, -1)}-gzip"` });
    assert.equal(gzipHeld.status, 304);
    assert.notEqual(await get(url, { 'If-None-Match': `${plainTag.slice(0, -1)}-zstd"` }).then((r) => r.status), 304, 'an unknown coding is another tag');
  });

  it('leaves errors untagged, whatever If-None-Match says', async () => {
    const missing = await get(`/cog/info?url=${encodeURIComponent(`${files.url}/missing.tif`)}`, { 'If-None-Match': '*' });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['etag'], undefined);
    const bad = await get(`/cog/info`, { 'If-None-Match': '*' });
    assert.equal(bad.status, 422);
  });

  it('compares tags as RFC 9110 says for If-None-Match (weakly)', () => {
    assert.equal(matches('"a"', '"a"'), true);
    assert.equal(matches('W/"a"', '"a"'), true);
    assert.equal(matches('"b" , "a"', '"a"'), true);
    assert.equal(matches('"b"', '"a"'), false);
    assert.equal(matches(undefined, '"a"'), false);
    assert.equal(matches('*', '"a"'), true);
  });
});

describe('tags derived from the inputs', () => {
  let files: FileServer;
  let bare: FileServer;
  let copies: FileServer;
  let dir: string;
  const servers: RunningTessera[] = [];
  const q = (server: FileServer, file: string): string => encodeURIComponent(`${server.url}/${file}`);
  const cogTile = (server: FileServer, file = 'cog1.tif'): string => `/cog/tiles/WebMercatorQuad/9/152/183.png?url=${q(server, file)}&rescale=5000,15000`;

  /** A server with caches of its own (and its own gateway): what another replica, or a restart, is. */
  async function fresh(): Promise<RunningTessera> {
    const t = await startTessera({ tileCacheBytes: 0 });
    servers.push(t);
    return t;
  }
  async function get(
    t: RunningTessera,
    url: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; etag: string | undefined; body: Buffer }> {
    const res = await t.app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, etag: res.headers['etag'] as string | undefined, body: res.rawPayload };
  }
  const sha1Tag = (body: Buffer): string => `"${createHash('sha1').update(body).digest('base64url')}"`;

  before(async () => {
    files = await startFileServer(FIXTURES);
    files.put('/item.json', await fixtureItem(files.url));
    files.put('/mosaic.json', JSON.stringify(await fixtureMosaic(files.url)));
    bare = await startFileServer(FIXTURES, { validators: false });
    dir = await mkdtemp(path.join(os.tmpdir(), 'tessera-etag-'));
    await copyFile(path.join(FIXTURES, 'cog1.tif'), path.join(dir, 'cog1.tif'));
    copies = await startFileServer(dir);
  });
  after(async () => {
    for (const t of servers) await t.close();
    await files?.close();
    await bare?.close();
    await copies?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('gives a tile the same tag on a server with cold caches, which answers 304 without reading a pixel', async (t) => {
    const first = await get(await fresh(), cogTile(files));
    assert.equal(first.status, 200);
    assert.ok(first.etag);
    assert.notEqual(first.etag, sha1Tag(first.body), 'tagged by its inputs, not by its bytes');

    // A cold server rendering the tile: what it costs upstream.
    files.resetStats();
    const rendered = await get(await fresh(), cogTile(files));
    const renderCost = files.stats();
    assert.equal(rendered.status, 200);
    assert.equal(rendered.etag, first.etag, 'another server, the same tag');

    // A cold server revalidating it: the open only.
    const server = await fresh();
    files.resetStats();
    files.log.length = 0;
    const revalidated = await get(server, cogTile(files), { 'If-None-Match': first.etag });
    const revalidateCost = files.stats();
    assert.deepEqual(
      files.log.map((l) => l.replace(/^GET \/\S+ /, '')),
      ['bytes=0-65535'],
      `the file's head and nothing else: ${files.log.join(', ')}`,
    );
    t.diagnostic(`upstream: render ${JSON.stringify(renderCost)}, revalidation ${JSON.stringify(revalidateCost)}`);
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.body.length, 0);
    assert.equal(revalidated.etag, first.etag);
    assert.ok(
      revalidateCost.requests < renderCost.requests && revalidateCost.bytes < renderCost.bytes / 2,
      `a revalidation reads no pixel: ${JSON.stringify(revalidateCost)} against a render's ${JSON.stringify(renderCost)}`,
    );
  });

  it('tags every image route by its inputs, and answers their revalidations', async () => {
    const t = await fresh();
    const routes = [
      `/cog/preview.png?url=${q(files, 'cog1.tif')}&rescale=5000,15000&max_size=128`,
      `/cog/bbox/-75,45,-74,46/64x64.png?url=${q(files, 'cog1.tif')}&rescale=5000,15000`,
      `/cog/statistics?url=${q(files, 'cog1.tif')}&max_size=64`,
      `/cog/point/-74.5,45.5?url=${q(files, 'cog1.tif')}`,
      `/stac/tiles/WebMercatorQuad/9/289/207.png?url=${q(files, 'item.json')}&assets=B01&rescale=0,10000`,
      `/mosaicjson/tiles/WebMercatorQuad/9/152/183.png?url=${q(files, 'mosaic.json')}&rescale=5000,15000`,
    ];
    for (const route of routes) {
      const first = await get(t, route);
      assert.equal(first.status, 200, route);
      assert.ok(first.etag && first.etag !== sha1Tag(first.body), `${route}: tagged by its inputs`);
      const again = await get(t, route, { 'If-None-Match': first.etag });
      assert.equal(again.status, 304, route);
    }
  });

  it('changes the tag when an input changes: the raster, the STAC item, the mosaic document', async () => {
    const tile = cogTile(copies);
    const before = await get(await fresh(), tile);
    const file = path.join(dir, 'cog1.tif');
    const later = new Date(Date.now() + 60_000);
    await utimes(file, later, later);
    const after = await get(await fresh(), tile, { 'If-None-Match': before.etag! });
    assert.equal(after.status, 200, 'a new version of the raster: the old tag is stale');
    assert.notEqual(after.etag, before.etag);
    assert.ok(after.body.equals(before.body), 'the same pixels (only its date changed), yet another version');

    const stacTile = `/stac/tiles/WebMercatorQuad/9/289/207.png?url=${q(files, 'item.json')}&assets=B01&rescale=0,10000`;
    const stacBefore = await get(await fresh(), stacTile);
    const item = JSON.parse(await fixtureItem(files.url)) as { properties: Record<string, unknown> };
    item.properties['updated'] = new Date().toISOString();
    files.put('/item.json', JSON.stringify(item));
    const stacAfter = await get(await fresh(), stacTile, { 'If-None-Match': stacBefore.etag! });
    assert.equal(stacAfter.status, 200);
    assert.notEqual(stacAfter.etag, stacBefore.etag);

    const mosaicTile = `/mosaicjson/tiles/WebMercatorQuad/9/152/183.png?url=${q(files, 'mosaic.json')}&rescale=5000,15000`;
    const mosaicBefore = await get(await fresh(), mosaicTile);
    files.put('/mosaic.json', JSON.stringify({ ...(await fixtureMosaic(files.url)), name: 'renamed' }));
    const mosaicAfter = await get(await fresh(), mosaicTile, { 'If-None-Match': mosaicBefore.etag! });
    assert.equal(mosaicAfter.status, 200);
    assert.notEqual(mosaicAfter.etag, mosaicBefore.etag);
  });

  it('tags by content where upstream sends no validator, and still answers 304', async () => {
    const t = await fresh();
    const first = await get(t, cogTile(bare));
    assert.equal(first.status, 200);
    assert.equal(first.etag, sha1Tag(first.body), 'no validator upstream: the tag is of the answer');
    const again = await get(t, cogTile(bare), { 'If-None-Match': first.etag! });
    assert.equal(again.status, 304);
  });

  it('replays the tag from the tile cache, and tags no 204 or 404', async () => {
    const t = await startTessera();
    servers.push(t);
    const first = await get(t, cogTile(files));
    const cached = await t.app.inject({ method: 'GET', url: cogTile(files), headers: { 'If-None-Match': first.etag! } });
    assert.equal(cached.headers['x-cache'], 'hit');
    assert.equal(cached.statusCode, 304);
    assert.equal(cached.headers['etag'], first.etag);

    const empty = await get(t, `/mosaicjson/tiles/WebMercatorQuad/9/128/128.png?url=${q(files, 'mosaic.json')}`);
    assert.equal(empty.status, 204);
    assert.equal(empty.etag, undefined);
    const outside = await get(t, `/cog/tiles/WebMercatorQuad/9/128/128.png?url=${q(files, 'cog1.tif')}`, { 'If-None-Match': '*' });
    assert.equal(outside.status, 404);
    assert.equal(outside.etag, undefined);
  });
});
