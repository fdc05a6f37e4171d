/**
 * Where the tests find the repository and the shared fixtures, wherever the compiled tests live
 * (dist/ or a private build directory made by tools/dev/build-to.sh).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
  return dir;
}

/** The repository root (the nearest directory above this file with a package.json). */
export const REPO_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/** TiTiler's test fixtures, used in place beside the repository. */
export const FIXTURES = process.env['TESSERA_FIXTURES'] ?? path.resolve(REPO_ROOT, '../shared/fixtures/titiler');

/**
 * The command line compiled with these tests (<build>/src/cli.js beside <build>/test/), so that a
 * private build (tools/dev/build-to.sh) runs its own CLI, not dist's; run it with `process.execPath`.
 */
export const BUILT_CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/cli.js');
