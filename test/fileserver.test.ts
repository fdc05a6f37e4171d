/**
 * The test file server's alias (test/helpers/fileserver.ts): a folder's files served again under
 * another prefix, same bytes and ranges, but an ETag of their own, so that a client and its caches
 * take the copy for a file never seen (the benchmark's first views rely on it).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FIXTURES, startFileServer, type FileServer } from './helpers/fileserver.js';

let files: FileServer;

before(async () => {
  files = await startFileServer(FIXTURES);
  files.alias('/fresh/1/', '/');
  files.put('/fresh/1/doc.json', '{"a":1}');
});

after(async () => {
  await files.close();
});

describe('file server alias', () => {
  it('serves the same bytes and ranges under the prefix, with an ETag of its own', async () => {
    const original = await fetch(`${files.url}/B01.tif`, { headers: { range: 'bytes=0-99' } });
    const copy = await fetch(`${files.url}/fresh/1/B01.tif`, { headers: { range: 'bytes=0-99' } });
    assert.equal(original.status, 206);
    assert.equal(copy.status, 206);
    assert.equal(copy.headers.get('content-range'), original.headers.get('content-range'));
    const expected = (await fs.readFile(path.join(FIXTURES, 'B01.tif'))).subarray(0, 100);
    assert.deepEqual(Buffer.from(await copy.arrayBuffer()), expected);
    assert.deepEqual(Buffer.from(await original.arrayBuffer()), expected);
    assert.ok(copy.headers.get('etag'));
    assert.notEqual(copy.headers.get('etag'), original.headers.get('etag'));
  });

  it('lets documents put under the prefix win, and answers 404 for files that do not exist', async () => {
    assert.equal(await (await fetch(`${files.url}/fresh/1/doc.json`)).text(), '{"a":1}');
    assert.equal((await fetch(`${files.url}/fresh/1/missing.tif`)).status, 404);
    assert.equal((await fetch(`${files.url}/fresh/2/B01.tif`)).status, 404);
  });

  it('refuses prefixes that do not start and end with a slash', () => {
    assert.throws(() => files.alias('fresh/', '/'));
    assert.throws(() => files.alias('/fresh', '/'));
  });
});
