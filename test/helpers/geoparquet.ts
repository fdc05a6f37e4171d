/**
 * stac-geoparquet for the tests of the catalogue without a database (TESSERA_CATALOG), written by
 * rustac 0.9.18 from PyPI (tools/catalog/setup.sh makes its venv once, tools/catalog/write.py
 * writes): the writer users have, not one of tessera's own.
 */
import path from 'node:path';
import { REPO_ROOT } from './paths.js';
import { run } from './run.js';

async function setup(): Promise<string> {
  const r = await run('bash', [path.join(REPO_ROOT, 'tools/catalog/setup.sh')]);
  if (r.status !== 0) throw new Error(`tools/catalog/setup.sh failed: ${r.stderr}`);
  return path.join(REPO_ROOT, '.parity/geoparquet/bin/python');
}

/** Writes the items of `ndjson` (one STAC item a line) to `out` as stac-geoparquet. */
export async function writeGeoparquet(ndjson: string, out: string): Promise<void> {
  const python = await setup();
  const r = await run(python, [path.join(REPO_ROOT, 'tools/catalog/write.py'), ndjson, out]);
  if (r.status !== 0) throw new Error(`write.py failed: ${r.stderr}`);
}
