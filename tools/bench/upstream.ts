/**
 * The benchmark's "object storage": the test suite's range-capable file server, run in a process of
 * its own so that serving bytes does not share an event loop with the load generator. The parent
 * (tools/bench/main.ts) talks to it over the IPC channel: read or reset the request/byte/round
 * counters, set the per-request delay, ask for a fresh copy of the RGB item. Documents naming other
 * files (the STAC items, the mosaic) are served with this server's own address filled in.
 *
 * A fresh copy (the first-view phase) is the RGB item and its COG under a new prefix, /fresh/K/,
 * served from the same files with ETags of their own: to a server, its GDAL caches and anything
 * keyed by URL or validator, an item never seen before, at no cost in disk or set-up time.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { startFileServer, type FileServerStats } from '../../test/helpers/fileserver.js';
import { RGB_ITEM } from './data.js';

export type UpstreamCommand = { cmd: 'stats' } | { cmd: 'reset' } | { cmd: 'delay'; ms: number } | { cmd: 'fresh' };
export type UpstreamMessage = { ready: string } | { stats: FileServerStats } | { ok: true } | { fresh: string };

async function main(): Promise<void> {
  const [root] = process.argv.slice(2);
  if (!root || !process.send) throw new Error('usage: fork upstream.js <data dir> (with an IPC channel)');
  const server = await startFileServer(root, { keepLog: false });
  const withBase = async (file: string, from: string): Promise<string> => (await fs.readFile(path.join(root, file), 'utf8')).replaceAll(from, server.url);
  server.put('/item.json', await withBase('item.json', '{BASE}'));
  server.put('/mosaic.json', await withBase('mosaic.json', '{BASE}'));
  server.put(`/${RGB_ITEM}`, await withBase(RGB_ITEM, '{BASE}'));
  const rgbItem = await fs.readFile(path.join(root, RGB_ITEM), 'utf8');
  let fresh = 0;
  // The low-zoom phase's 1,024-COG mosaic (large-mosaic.ts), when it has been made.
  const large = await withBase('large/mosaic.json', '{BASE}').catch(() => undefined);
  if (large !== undefined) server.put('/large/mosaic.json', large);
  // The same naming its low-zoom overview (large/overview.tif, served as a file).
  const overview = await withBase('large/mosaic-overview.json', '{BASE}').catch(() => undefined);
  if (overview !== undefined) server.put('/large/mosaic-overview.json', overview);
  // The shared fixture item names https://myurl.com/B01.tif and so on: point it at fixtures/.
  server.put(
    '/fixtures/item.json',
    (await fs.readFile(path.join(root, 'fixtures/item.json'), 'utf8')).replaceAll('https://myurl.com/', `${server.url}/fixtures/`),
  );
  const send = (m: UpstreamMessage): void => void process.send?.(m);
  process.on('message', (m: UpstreamCommand) => {
    if (m.cmd === 'stats') send({ stats: server.stats() });
    else if (m.cmd === 'reset') {
      server.resetStats();
      send({ ok: true });
    } else if (m.cmd === 'delay') {
      server.delayMs = m.ms;
      send({ ok: true });
    } else if (m.cmd === 'fresh') {
      const prefix = `/fresh/${++fresh}/`;
      server.alias(prefix, '/');
      server.put(`${prefix}${RGB_ITEM}`, rgbItem.replaceAll('{BASE}', `${server.url}${prefix.slice(0, -1)}`));
      send({ fresh: `${server.url}${prefix}${RGB_ITEM}` });
    }
  });
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
  send({ ready: server.url });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
