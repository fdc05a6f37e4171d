/**
 * The benchmark's URLs as each server takes them. The mixes are written in TiTiler 0.18.10's URLs
 * (tessera's), and the newest TiTiler release is measured beside it; where its URLs for the same
 * request differ, they are rewritten here, so that every server makes the same tiles:
 *
 *   - `@2x`: TiTiler 0.19 dropped the `@{scale}x` tile paths; a 512-px tile is `?tilesize=512` (its
 *     tilejson now names 512-px tiles that way).
 *   - STAC expressions: rio-tiler 7+ names a STAC item's bands b1…bN over the assets listed in
 *     `assets` (required), not `<asset>_b<index>`; `expression=(visual_b3-visual_b1)/…` becomes
 *     `assets=visual&expression=(b3-b1)/…`. Only expressions over one asset are rewritten (the mixes
 *     use no other); others are refused.
 */
export type ServerName = 'tessera' | 'titiler' | 'titiler-latest';

/** `path` (with its query) as `server` takes it. */
export function pathFor(server: ServerName, path: string): string {
  if (server !== 'titiler-latest') return path;
  const url = new URL(path, 'http://x');
  const scale = /@(\d+)x(?=\.|$)/.exec(url.pathname);
  if (scale) {
    url.pathname = url.pathname.replace(scale[0], '');
    url.searchParams.set('tilesize', String(256 * Number(scale[1])));
  }
  const expression = url.searchParams.get('expression');
  if (expression && /\w+_b\d+/.test(expression)) {
    const assets = new Set([...expression.matchAll(/(\w+)_b\d+/g)].map((m) => m[1]!));
    if (assets.size !== 1) throw new Error(`dialects: an expression over ${assets.size} assets is not rewritten: ${expression}`);
    const [asset] = assets;
    url.searchParams.set('expression', expression.replace(/\w+_b(\d+)/g, 'b$1'));
    if (!url.searchParams.getAll('assets').includes(asset!)) url.searchParams.append('assets', asset!);
  }
  // URLSearchParams encodes spaces as '+', which both servers read as spaces; the rest is kept.
  return `${url.pathname}${url.search}`;
}
