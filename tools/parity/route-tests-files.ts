/**
 * The file server of tools/parity/route-tests.sh: TiTiler's test fixtures on loopback with Range
 * support, the STAC item's https://myurl.com/ hrefs pointed at it. Prints its URL, then serves
 * until killed.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startFileServer } from '../../test/helpers/fileserver.js';

const root = process.argv[2];
if (!root) throw new Error('usage: route-tests-files.js <fixtures dir>');
const server = await startFileServer(root, { keepLog: false });
server.put('/item.json', (await readFile(path.join(root, 'item.json'), 'utf8')).replaceAll('https://myurl.com/', `${server.url}/`));
console.log(server.url);
