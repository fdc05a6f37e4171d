/**
 * Quadkeys of a quadtree grid (morecantile 5): one digit per level below the grid's first matrix,
 * digit = x bit + 2 × y bit, most significant level first. Children of a tile, expanded level by
 * level as morecantile does, come in the lexicographic order of their quadkeys — the property the
 * mosaic index relies on to answer low-zoom lookups from a sorted key list.
 */

export function quadkey(x: number, y: number, z: number, minzoom = 0): string {
  let out = '';
  for (let level = z; level > minzoom; level--) {
    const mask = 2 ** (level - 1);
    // Bit tests on numbers that can exceed 2^31 at deep zooms: no `&` on doubles.
    const xb = Math.floor(x / mask) % 2;
    const yb = Math.floor(y / mask) % 2;
    out += String(xb + 2 * yb);
  }
  return out;
}

export function quadkeyToTile(qk: string, minzoom = 0): { x: number; y: number; z: number } {
  let x = 0;
  let y = 0;
  for (let i = 0; i < qk.length; i++) {
    const digit = qk.charCodeAt(i) - 48;
    x = x * 2 + (digit & 1);
    y = y * 2 + (digit >> 1);
  }
  return { x, y, z: qk.length + minzoom };
}

/** Index of the first element of sorted `keys` that is ≥ `prefix` (binary search). */
export function lowerBound(keys: readonly string[], prefix: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
