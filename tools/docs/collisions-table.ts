/**
 * `make docs`: writes the collision table of docs/titiler2.md again from its declaration
 * (src/api/generations.ts), between the page's markers; the words around it are the page's own.
 * test/titiler2-routes.test.ts fails when the committed page is not what this would write.
 * Usage: node dist/tools/docs/collisions-table.js [page], from the repository root.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withCollisionTable } from '../../src/api/generations.js';

const page = process.argv[2] ?? 'docs/titiler2.md';
const before = readFileSync(page, 'utf8');
const after = withCollisionTable(before);
if (after === before) console.log(`docs: ${page} is up to date`);
else {
  writeFileSync(page, after);
  console.log(`docs: wrote the collision table of ${page}`);
}
