/**
 * Conditional GETs (src/api/etag.ts): a strong ETag on successful answers, the same whatever the
 * encoding; If-None-Match naming it (alone, in a list, weak or `*`) gives 304 with no body; errors
 * carry no tag and are never turned into a 304.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
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

  it('gives JSON one tag for every encoding, and revalidates the compressed answer', async () => {
    const url = `/cog/info?url=${cog}`;
    const plain = await get(url);
    const gzip = await get(url, { 'Accept-Encoding': 'gzip' });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.equal(gzip.headers['etag'], plain.headers['etag']);
    const revalidated = await get(url, { 'Accept-Encoding': 'gzip', 'If-None-Match': plain.headers['etag'] as string });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.body.length, 0);
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
