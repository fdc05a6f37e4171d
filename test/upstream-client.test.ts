/** The upstream client: a kept-alive socket the server dropped is retried once on a fresh one, and only once. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { UrlPolicy } from '../src/upstream/url-policy.js';
import { NetworkPolicy } from '../src/upstream/network-policy.js';
import { UpstreamClient } from '../src/upstream/client.js';

const OK = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}';

/**
 * A raw HTTP server that answers the first request on each connection and resets the connection on
 * the second, as a server does that closed an idle keep-alive socket just as the client reused it.
 * With `always`, every request is reset.
 */
async function droppingServer(always = false): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    let requests = 0;
    socket.on('data', (chunk) => {
      if (!chunk.toString().includes('\r\n\r\n')) return;
      requests++;
      if (always || requests > 1) socket.resetAndDestroy();
      else socket.write(OK);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/doc.json`,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function client(): UpstreamClient {
  const policy = new UrlPolicy({ allowedLocalRoots: [], allowedHosts: [], deniedHosts: [] }, new NetworkPolicy(['127.0.0.0/8']));
  return new UpstreamClient({ policy, connectTimeoutMs: 1000 });
}

async function body(res: import('node:http').IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('upstream client', () => {
  it('sends a request again on a fresh socket when the kept-alive one was dropped', async () => {
    const server = await droppingServer();
    const c = client();
    try {
      const first = await c.get(server.url, { signal: AbortSignal.timeout(2000) });
      assert.equal(await body(first), '{}');
      const second = await c.get(server.url, { signal: AbortSignal.timeout(2000) });
      assert.equal(second.statusCode, 200);
      assert.equal(await body(second), '{}');
      assert.equal(server.connections(), 2, 'the retry went out on a new connection');
    } finally {
      c.close();
      await server.close();
    }
  });

  it('does not retry a fresh connection, nor more than once', async () => {
    const server = await droppingServer(true);
    const c = client();
    try {
      await assert.rejects(c.get(server.url, { signal: AbortSignal.timeout(2000) }), /ECONNRESET|socket hang up/);
      assert.equal(server.connections(), 1);
    } finally {
      c.close();
      await server.close();
    }
  });
});
