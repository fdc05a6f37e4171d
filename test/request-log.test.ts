/**
 * Operators' view of requests: one JSON log line per request (pino, as `tessera serve` writes it)
 * with the request id, the path and route pattern (never the query: it can carry tokens and signed
 * URLs), status, time, bytes out and upstream bytes; the id taken from X-Request-Id when it is a
 * sane token and always returned; a log level that is not one is refused at start with a clear message.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { LOOPBACK_NETWORKS, TESSERA_BIN, TESSERA_COMMAND, startServer, type Service } from './parity/harness.js';

interface LogLine {
  msg: string;
  reqId?: string;
  method?: string;
  path?: string;
  route?: string | null;
  status?: number;
  ms?: number;
  bytesOut?: number | null;
  upstreamBytes?: number;
  upstreamRequests?: number;
  cache?: string | null;
}

describe('request logs', { timeout: 60_000 }, () => {
  let files: FileServer;
  let tessera: Service;

  before(async () => {
    files = await startFileServer(FIXTURES);
    tessera = await startServer(TESSERA_COMMAND, { TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS, TESSERA_LOG_LEVEL: 'info' });
  });
  after(async () => {
    await tessera?.stop();
    await files?.close();
  });

  const lines = (): LogLine[] =>
    tessera
      .outputTail()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);

  it("writes one line per request, with the caller's request id, and returns the id", async () => {
    const url = encodeURIComponent(`${files.url}/B01.tif`);
    const res = await fetch(`${tessera.url}/cog/tiles/WebMercatorQuad/9/289/207.png?url=${url}&rescale=0,1000&access_token=hidden`, {
      headers: { 'X-Request-Id': 'trace-42.a' },
    });
    await res.arrayBuffer();
    assert.equal(res.headers.get('x-request-id'), 'trace-42.a');
    await new Promise((r) => setTimeout(r, 200));
    const mine = lines().filter((l) => l.reqId === 'trace-42.a');
    assert.equal(mine.length, 1, 'one line');
    const line = mine[0]!;
    assert.equal(line.msg, 'request');
    assert.equal(line.method, 'GET');
    assert.equal(line.path, '/cog/tiles/WebMercatorQuad/9/289/207.png');
    assert.equal(line.route, '/cog/tiles/:tileMatrixSetId/:z/:x/:last');
    assert.equal(line.status, 200);
    assert.ok(typeof line.ms === 'number' && line.ms > 0);
    assert.ok(line.bytesOut! > 100, 'bytes out');
    assert.ok(line.upstreamBytes! > 1000, 'upstream bytes of the tile');
    assert.ok(line.upstreamRequests! >= 1, `upstream requests of the tile: ${line.upstreamRequests}`);
    assert.equal(line.cache, 'miss', 'the tile cache outcome');
    assert.ok(!JSON.stringify(mine).includes('hidden'), 'the query is not logged');

    // The same tile again comes from the tile cache: no upstream request.
    const again = await fetch(`${tessera.url}/cog/tiles/WebMercatorQuad/9/289/207.png?url=${url}&rescale=0,1000`, {
      headers: { 'X-Request-Id': 'trace-42.b' },
    });
    await again.arrayBuffer();
    await new Promise((r) => setTimeout(r, 200));
    const hit = lines().find((l) => l.reqId === 'trace-42.b')!;
    assert.equal(hit.cache, 'hit');
    assert.equal(hit.upstreamRequests, 0);
    assert.equal(hit.upstreamBytes, 0);
  });

  it('makes its own id when none or a strange one is sent, and logs 404s too', async () => {
    for (const sent of [undefined, 'has spaces in it', 'x'.repeat(200)]) {
      const res = await fetch(`${tessera.url}/no/such/route`, { headers: sent ? { 'X-Request-Id': sent } : {} });
      await res.arrayBuffer();
      assert.equal(res.status, 404);
      const id = res.headers.get('x-request-id') ?? '';
      assert.match(id, /^[0-9a-f-]{36}$/, `a UUID for ${sent ?? 'no id'}`);
      await new Promise((r) => setTimeout(r, 100));
      const line = lines().find((l) => l.reqId === id);
      assert.equal(line?.status, 404);
      assert.equal(line?.route, null);
    }
  });

  it('refuses a log level that is not one, saying which are', () => {
    const run = spawnSync(TESSERA_BIN, ['serve', '--port', '0'], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, TESSERA_LOG_LEVEL: 'verbose' } });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /TESSERA_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got 'verbose'/);
  });
});
