/**
 * The file server of tools/parity/route-tests.sh: TiTiler's test fixtures on loopback with Range
 * support, the https://myurl.com/ hrefs of its JSON documents (STAC items) pointed at it. Prints its
 * URL, then serves until killed.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { startFileServer } from '../../test/helpers/fileserver.js';

const root = process.argv[2];
if (!root) throw new Error('usage: route-tests-files.js <fixtures dir>');
const server = await startFileServer(root, { keepLog: false });
for (const name of (await readdir(root)).filter((n) => n.endsWith('.json'))) {
  server.put(`/${name}`, (await readFile(path.join(root, name), 'utf8')).replaceAll('https://myurl.com/', `${server.url}/`));
}
console.log(server.url);
