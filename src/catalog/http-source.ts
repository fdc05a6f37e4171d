/**
 * A stac-geoparquet file at an http(s) URL, read by byte ranges through tessera's one upstream
 * client (its URL and network policies, redirects checked hop by hop): its size from the first
 * range's Content-Range, its validators (ETag, Last-Modified) to know when it changed, and each
 * range read up to the bytes asked, never more. A server that does not answer ranges is refused:
 * the footer tells what to read, the rest is never fetched whole.
 */
import type { IncomingMessage } from 'node:http';
import type { UpstreamClient } from '../upstream/client.js';
import type { UrlPolicy } from '../upstream/url-policy.js';
import { catalogError, type ByteSource } from './geoparquet.js';

async function bodyOf(res: IncomingMessage, limit: number, url: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      res.destroy();
      throw catalogError(url, `a range answered more than the ${limit} bytes asked`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Opens `url` for ranged reads: the ByteSource and the validators of what it is now. */
export async function httpSource(
  client: UpstreamClient,
  policy: UrlPolicy,
  url: string,
  timeoutMs: number,
): Promise<{ source: ByteSource; validators: string }> {
  const loc = policy.resolve(url, 'TESSERA_CATALOG');
  if (loc.kind !== 'http') throw catalogError(url, 'not an http(s) URL');
  const range = async (start: number, end: number): Promise<{ res: IncomingMessage; body: Buffer }> => {
    const res = await client.get(loc.url, { range: `bytes=${start}-${end}`, signal: AbortSignal.timeout(timeoutMs) });
    if (res.statusCode !== 206) {
      res.destroy();
      throw catalogError(url, `the server answered ${res.statusCode} to a range request (a catalogue URL must answer ranges)`);
    }
    return { res, body: await bodyOf(res, end - start + 1, url) };
  };
  const first = await range(0, 7);
  const total = Number(/\/(\d+)\s*$/.exec(String(first.res.headers['content-range'] ?? ''))?.[1]);
  if (!Number.isSafeInteger(total)) throw catalogError(url, 'the server gave no size in Content-Range');
  const validators = `${url}:${total}:${first.res.headers.etag ?? ''}:${first.res.headers['last-modified'] ?? ''}`;
  const source: ByteSource = {
    name: url,
    byteLength: total,
    async slice(start, end = total) {
      const last = Math.min(end, total) - 1;
      if (last < start) return new ArrayBuffer(0);
      const { body } = await range(start, last);
      return body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
    },
  };
  return { source, validators };
}
