/**
 * What the landing page lists: the demo (read from the served demo folder, so links and the grids
 * that can show it follow the data), the API's documents, and every TileMatrixSet.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { getTms, tmsIds, WEB_MERCATOR_QUAD } from '../../tms/registry.js';
import type { BBox, TileMatrixSet } from '../../tms/grid.js';
import { srsFrom, transformBounds, WGS84 } from '../../gdal/crs.js';
import { urlencode } from '../urls.js';
import type { GridRow, LandingPageOptions, Link } from './html.js';

interface DemoFacts {
  bbox: BBox;
  /** Elevation range of the demo DEM (its STAC raster statistics), for a coloured map link. */
  elevation: [number, number] | undefined;
  hasMosaic: boolean;
  /** Whether the demo's collection is served (TESSERA_CATALOG is the demo's catalog folder). */
  hasCollection: boolean;
}

function isBBox(value: unknown): value is BBox {
  return Array.isArray(value) && value.length === 4 && value.every((v) => typeof v === 'number' && Number.isFinite(v));
}

/** Reads the served demo item (a few kB, local) so links and grid coverage follow the data. */
async function readDemo(demoDir: string, catalog: string | undefined): Promise<DemoFacts | undefined> {
  let item: { bbox?: unknown; assets?: Record<string, { 'raster:bands'?: Array<{ statistics?: { minimum?: number; maximum?: number } }> }> };
  try {
    item = JSON.parse(await fs.readFile(path.join(demoDir, 'item.json'), 'utf8')) as typeof item;
  } catch {
    return undefined;
  }
  if (typeof item !== 'object' || item === null || !isBBox(item.bbox)) return undefined;
  const stats = item.assets?.['dem']?.['raster:bands']?.[0]?.statistics;
  const elevation: [number, number] | undefined =
    typeof stats?.minimum === 'number' && typeof stats.maximum === 'number' ? [stats.minimum, stats.maximum] : undefined;
  const hasMosaic = await fs.stat(path.join(demoDir, 'mosaic.json')).then(
    (s) => s.isFile(),
    () => false,
  );
  const hasCollection = catalog !== undefined && path.resolve(catalog) === path.resolve(demoDir, 'catalog');
  return { bbox: item.bbox, elevation, hasMosaic, hasCollection };
}

/** True when a lon/lat bbox, carried into the grid's CRS, lies inside the grid's extent. */
function gridCovers(tms: TileMatrixSet, bbox: BBox): boolean {
  const [minx, miny, maxx, maxy] = transformBounds(srsFrom(WGS84), srsFrom(tms.srs), bbox);
  const [left, bottom, right, top] = tms.def.xyBbox;
  return [minx, miny, maxx, maxy].every(Number.isFinite) && minx >= left && maxx <= right && miny >= bottom && maxy <= top;
}

/** A link relative to the page's <base> (the server's root path): no leading slash. */
function withQuery(pathname: string, pairs: Array<[string, string]>): string {
  return `${pathname.replace(/^\//, '')}?${urlencode(pairs)}`;
}

function demoLinks(base: string, demo: DemoFacts): Link[] {
  const item = `${base}/demo/item.json`;
  const mapOf = (pairs: Array<[string, string]>): string => withQuery(`/stac/${WEB_MERCATOR_QUAD}/map`, [['url', item], ...pairs]);
  const links: Link[] = [
    {
      href: withQuery('/stac/viewer', [['url', item]]),
      text: 'The demo item in the STAC viewer',
      note: 'assets, bands, rescale, colormaps, algorithms, histogram',
    },
    { href: mapOf([['assets', 'rgb']]), text: 'The shaded-relief RGB on a map' },
    {
      href: withQuery('/cog/viewer', [['url', `${base}/demo/dem.tif`]]),
      text: 'The elevation model, a bare COG, in the COG viewer',
      note: 'bands, expressions over b1…bn',
    },
  ];
  if (demo.elevation) {
    const [lo, hi] = demo.elevation;
    links.push({
      href: mapOf([
        ['assets', 'dem'],
        ['rescale', `${Math.floor(lo)},${Math.ceil(hi)}`],
        ['colormap_name', 'terrain'],
      ]),
      text: 'The elevation model with a colormap',
      note: 'float32 rescaled to bytes',
    });
  }
  links.push({
    href: mapOf([
      ['assets', 'dem'],
      ['algorithm', 'hillshade'],
      ['buffer', '3'],
    ]),
    text: 'The elevation model as a hillshade',
    note: 'an algorithm',
  });
  if (demo.hasMosaic) {
    links.push({ href: withQuery(`/mosaicjson/${WEB_MERCATOR_QUAD}/map`, [['url', `${base}/demo/mosaic.json`]]), text: 'The demo MosaicJSON on a map' });
  }
  if (demo.hasCollection) {
    links.push({
      href: withQuery(`/collections/demo/${WEB_MERCATOR_QUAD}/map.html`, [['assets', 'rgb']]),
      text: 'The demo as a STAC collection (stac-geoparquet, no database) on a map',
      note: '/collections/demo/…, as titiler-pgstac',
    });
  }
  links.push({ href: withQuery('/stac/info', [['url', item]]), text: 'The demo item’s info (JSON)' });
  return links;
}

const API_LINKS: Link[] = [
  { href: 'api.html', text: 'API documentation', note: 'Swagger UI' },
  { href: 'api', text: 'OpenAPI document', note: 'JSON' },
  { href: 'tileMatrixSets', text: 'TileMatrixSets' },
  { href: 'colorMaps', text: 'Colormaps' },
  { href: 'algorithms', text: 'Algorithms' },
  { href: 'healthz', text: 'Health check' },
];

function gridRows(base: string, demo: DemoFacts | undefined): GridRow[] {
  return tmsIds.map((id) => {
    const tms = getTms(id)!;
    const row: GridRow = { id, title: tms.title, crs: tms.srs, document: `tileMatrixSets/${id}` };
    // Variable-width grids coalesce tiles, which Leaflet's grid layer cannot draw.
    if (demo && !tms.isVariable && gridCovers(tms, demo.bbox)) {
      row.demoMap = withQuery(`/stac/${id}/map`, [
        ['url', `${base}/demo/item.json`],
        ['assets', 'rgb'],
      ]);
    }
    return row;
  });
}

/** The landing page's content for a client that reached tessera at `base`. */
/** `base`: this server's URL as the client reached it, root path included (the demo data's home). */
export async function landingOptions(base: string, demoDir: string | undefined, root: string, catalog?: string): Promise<LandingPageOptions> {
  const demo = demoDir ? await readDemo(demoDir, catalog) : undefined;
  return { root, demo: demo ? demoLinks(base, demo) : null, api: API_LINKS, grids: gridRows(base, demo) };
}

/** The landing page's links of this server with `access_token` added. */
export function withAccessToken(options: LandingPageOptions, token: string): LandingPageOptions {
  // Links of this server are relative; absolute ones (other servers) are left alone.
  const add = (href: string): string =>
    /^[a-z][a-z0-9+.-]*:/i.test(href) ? href : `${href}${href.includes('?') ? '&' : '?'}${urlencode([['access_token', token]])}`;
  const link = (l: Link): Link => ({ ...l, href: add(l.href) });
  return {
    ...options,
    demo: options.demo?.map(link) ?? null,
    api: options.api.map(link),
    grids: options.grids.map((g) => ({ ...g, document: add(g.document), ...(g.demoMap ? { demoMap: add(g.demoMap) } : {}) })),
  };
}
