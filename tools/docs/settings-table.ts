/**
 * `make docs`: writes the settings tables of docs/configuration.md again from their declaration
 * (src/config/settings.ts, rendered by src/config/docs.ts), between the page's markers; the words
 * around them are the page's own. test/settings.test.ts fails when the committed page is not what
 * this would write. Usage: node dist/tools/docs/settings-table.js [page], from the repository root.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTables } from '../../src/config/docs.js';

const page = process.argv[2] ?? 'docs/configuration.md';
const before = readFileSync(page, 'utf8');
const after = withSettingsTables(before);
if (after === before) console.log(`docs: ${page} is up to date`);
else {
  writeFileSync(page, after);
  console.log(`docs: wrote the settings tables of ${page}`);
}
