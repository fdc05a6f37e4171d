/**
 * Where the pages' scripts, stylesheets and images live on disk, so tessera serves every byte a page
 * loads itself (air-gapped deployments have no CDN). The map libraries come from node_modules (npm
 * dependencies, never copied into the repository); tessera's own page scripts are plain browser
 * JavaScript kept beside this module in `static/` and read from the source tree, since tsc only
 * compiles the server.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this module whose package.json is tessera's. */
function findPackageRoot(from: string): string {
  let dir = from;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (name === 'tessera') return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`tessera's package.json not found above ${from}`);
    dir = parent;
  }
}

const PACKAGE_ROOT = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

export interface StaticMount {
  /** URL prefix, ending with '/'. */
  prefix: string;
  /** Folder served under the prefix. */
  root: string;
}

/** URL prefixes the page templates use; one place so templates and routes cannot disagree. */
export const STATIC_PREFIX = {
  tessera: '/static/tessera/',
  leaflet: '/static/vendor/leaflet/',
  proj4: '/static/vendor/proj4/',
  proj4leaflet: '/static/vendor/proj4leaflet/',
} as const;

/** Every folder the pages load files from, checked to exist so a broken install fails at start-up. */
export function staticMounts(): StaticMount[] {
  const mounts: StaticMount[] = [
    { prefix: STATIC_PREFIX.tessera, root: path.join(PACKAGE_ROOT, 'src', 'api', 'pages', 'static') },
    { prefix: STATIC_PREFIX.leaflet, root: path.join(PACKAGE_ROOT, 'node_modules', 'leaflet', 'dist') },
    { prefix: STATIC_PREFIX.proj4, root: path.join(PACKAGE_ROOT, 'node_modules', 'proj4', 'dist') },
    { prefix: STATIC_PREFIX.proj4leaflet, root: path.join(PACKAGE_ROOT, 'node_modules', 'proj4leaflet', 'src') },
  ];
  for (const mount of mounts) {
    if (!existsSync(mount.root)) throw new Error(`page assets missing: ${mount.root} (run make install)`);
  }
  return mounts;
}

/** File types a page may load; anything else in those folders (sources, typings) is not served. */
export const SERVED_EXTENSIONS = new Set(['.js', '.css', '.png', '.svg']);
