/**
 * The floors of the house (docs/architecture.md): every module imports only from its
 * own floor or below, routes do not import routes, and the API's core does not import routes. A
 * change that makes an import go up fails here with the file and the import named.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers/paths.js';

const SRC = path.join(REPO_ROOT, 'src');

/** Floors, bottom first: a module may import from its floor and the ones below. */
const FLOORS: Array<[number, RegExp]> = [
  [0, /^(tms\/|errors\.ts$|pyjson\.ts$|concurrency\.ts$|progress\.ts$|version\.ts$|worker-heap\.ts$)/],
  [1, /^gdal\//],
  [2, /^image\//],
  [3, /^(upstream|cache)\//],
  [4, /^source\//],
  [5, /^(stac|mosaic|ogc|pgstac|catalog)\//],
  [6, /^readers\//],
  [7, /^(config\.ts$|config\/|services\.ts$|warm-up\.ts$|demo\/)/],
  [8, /^api\/(?!routes\/|app\.ts$)/],
  [9, /^api\/routes\//],
  // The application assembles the route plugins; the process entry points start it.
  [10, /^(api\/app|server|cli|cli-mosaic|cluster|banner)\.ts$/],
];

function floorOf(rel: string): number {
  const hit = FLOORS.find(([, re]) => re.test(rel));
  if (!hit) throw new Error(`src/${rel} is on no floor: add it to FLOORS in test/layers.test.ts`);
  return hit[0];
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

/** Relative imports of a module (static, dynamic and type-only: each is a dependency of the design). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/g)) found.push(m[1]!);
  for (const m of text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)) found.push(m[1]!);
  return found;
}

describe('layers', () => {
  it('no module imports from a floor above its own, and routes do not import routes', () => {
    const problems: string[] = [];
    for (const file of sources(SRC)) {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      const own = floorOf(rel);
      for (const spec of importsOf(file)) {
        const target = path
          .relative(SRC, path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')))
          .split(path.sep)
          .join('/');
        if (target.startsWith('..')) continue;
        const theirs = floorOf(target);
        if (theirs > own) problems.push(`src/${rel} (floor ${own}) imports src/${target} (floor ${theirs})`);
        else if (own === 9 && theirs === 9) problems.push(`src/${rel} imports another route file, src/${target}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('finds an upward import (the check itself)', () => {
    assert.ok(floorOf('image/render.ts') < floorOf('source/read.ts'));
    assert.ok(floorOf('api/factory.ts') < floorOf('api/routes/cog.ts'));
    assert.throws(() => floorOf('nowhere/x.ts'), /on no floor/);
  });
});
