/**
 * The request mixes: the same request paths go to tessera and to TiTiler (./dialects.ts rewrites
 * them for a TiTiler release whose URLs differ). Tile mixes are also kept as structured requests so
 * that the floors (./core.ts: tessera's core without HTTP; ./floor.ts: bare GDAL) can make the very
 * same tiles. Tile URLs are sent as clients send them: `.png`, but also without an extension (the
 * server picks JPEG for opaque tiles, PNG for masked ones: what leafmap, TiTiler's viewer and most
 * XYZ presets ask for), `@2x` and `.webp`.
 */
import { RGB_ITEM, latToTileY, lonToTileX, tileBounds, type BenchData, type LonLatBounds } from './data.js';

/** A tile's extension; undefined: none, the server chooses. */
export type TileFormat = 'png' | 'jpg' | 'webp';

export interface TileRequest {
  kind: 'stac' | 'mosaic';
  /** The STAC item or mosaic document URL. */
  url: string;
  z: number;
  x: number;
  y: number;
  assets?: string[];
  expression?: string;
  rescale?: [number, number];
  colormapName?: string;
  /** The URL's extension; without one the server chooses (JPEG when opaque, PNG when masked). */
  format?: TileFormat;
  /** `@2x`: a 512-px tile (TiTiler's tilejson with tile_scale=2 names such URLs). */
  scale?: 1 | 2;
}

export interface Mix {
  id: string;
  title: string;
  /** Request paths (with query), in the order a client would send them. */
  paths: string[];
  /** For tile mixes, the same requests structured (for the in-process floor). */
  tiles?: TileRequest[];
}

export interface MixSet {
  mixes: Mix[];
  /** Mosaic tiles that need one asset and tiles that need four, for the latency comparison. */
  mosaicOneAsset: string[];
  mosaicFourAssets: string[];
}

const q = encodeURIComponent;

export function tilePath(t: TileRequest): string {
  const params = [`url=${q(t.url)}`];
  for (const a of t.assets ?? []) params.push(`assets=${q(a)}`);
  if (t.expression) params.push(`expression=${q(t.expression)}`);
  if (t.rescale) params.push(`rescale=${t.rescale.join(',')}`);
  if (t.colormapName) params.push(`colormap_name=${t.colormapName}`);
  const route = t.kind === 'stac' ? 'stac' : 'mosaicjson';
  const scale = t.scale === 2 ? '@2x' : '';
  const ext = t.format ? `.${t.format}` : '';
  return `/${route}/tiles/WebMercatorQuad/${t.z}/${t.x}/${t.y}${scale}${ext}?${params.join('&')}`;
}

/**
 * The 16 tiles of a 4×4-tile viewport (1024² px) at the centre of `bounds`, at the first zoom, from
 * the one where the bounds fit in it, at which all 16 tiles are inside them: what a map shows when it
 * opens on an item (fit to its bounds, then zoomed in until every tile of the view has data).
 */
export function firstViewTiles(bounds: LonLatBounds): Array<{ z: number; x: number; y: number }> {
  const [w, s, e, n] = bounds;
  let z = 18;
  while (z > 0 && (lonToTileX(e, z) - lonToTileX(w, z) >= 4 || latToTileY(s, z) - latToTileY(n, z) >= 4)) z--;
  const inside = (t: LonLatBounds): boolean => t[0] >= w && t[2] <= e && t[1] >= s && t[3] <= n;
  for (; z <= 22; z++) {
    const cx = lonToTileX((w + e) / 2, z);
    const cy = latToTileY((s + n) / 2, z);
    const out: Array<{ z: number; x: number; y: number }> = [];
    for (let y = cy - 2; y < cy + 2; y++) for (let x = cx - 2; x < cx + 2; x++) out.push({ z, x, y });
    if (out.every((t) => inside(tileBounds(t.x, t.y, t.z)))) return out;
  }
  throw new Error('firstViewTiles: no zoom puts a 4×4 viewport inside the bounds');
}

function intersects(a: LonLatBounds, b: LonLatBounds): boolean {
  return a[0] < b[2] && a[2] > b[0] && a[1] < b[3] && a[3] > b[1];
}

/**
 * A map session: at each zoom, the tiles of a 1536×1024 px viewport (6×4 tiles) around a point
 * that pans a little from zoom to zoom, keeping those that touch the data.
 */
function mapSession(bounds: LonLatBounds, zooms: readonly number[]): Array<{ z: number; x: number; y: number }> {
  const out: Array<{ z: number; x: number; y: number }> = [];
  const [w, s, e, n] = bounds;
  zooms.forEach((z, i) => {
    const lon = w + (e - w) * (0.5 + 0.06 * Math.sin(i * 1.7));
    const lat = s + (n - s) * (0.5 + 0.06 * Math.cos(i * 1.3));
    const cx = lonToTileX(lon, z);
    const cy = latToTileY(lat, z);
    for (let y = cy - 2; y < cy + 2; y++) {
      for (let x = cx - 3; x < cx + 3; x++) {
        if (intersects(tileBounds(x, y, z), bounds)) out.push({ z, x, y });
      }
    }
  });
  return out;
}

/** `count` points spread over the inner part of `bounds` (a fixed low-discrepancy sequence). */
function points(bounds: LonLatBounds, count: number): Array<[number, number]> {
  const [w, s, e, n] = bounds;
  const out: Array<[number, number]> = [];
  for (let i = 1; i <= count; i++) {
    const fx = (i * 0.6180339887) % 1;
    const fy = (i * 0.7548776662) % 1;
    out.push([w + (e - w) * (0.1 + 0.8 * fx), s + (n - s) * (0.1 + 0.8 * fy)]);
  }
  return out;
}

export function buildMixes(data: BenchData, upstream: string): MixSet {
  const item = `${upstream}/item.json`;
  const rgbItem = `${upstream}/${RGB_ITEM}`;
  const mosaic = `${upstream}/mosaic.json`;
  const fixtureItem = `${upstream}/fixtures/item.json`;
  const FIXTURE_BOUNDS: LonLatBounds = [23.293255090449595, 31.505183020453355, 24.296453548295318, 32.51147809805106];
  const mosaicBounds: LonLatBounds = [
    Math.min(...data.mosaicBounds.map((b) => b[0])),
    Math.min(...data.mosaicBounds.map((b) => b[1])),
    Math.max(...data.mosaicBounds.map((b) => b[2])),
    Math.max(...data.mosaicBounds.map((b) => b[3])),
  ];
  const ndvi = '(visual_b3-visual_b1)/(visual_b3+visual_b1)';

  const rgbTiles: TileRequest[] = mapSession(data.sceneBounds, [9, 10, 11, 12, 13, 14]).map((t) => ({
    kind: 'stac',
    url: item,
    ...t,
    assets: ['visual'],
    rescale: [0, 10000],
    format: 'png',
  }));
  // The 8-bit RGB item as clients map it: no rescale, no extension (or @2x, or .webp).
  const rgbSession = mapSession(data.sceneBounds, [9, 10, 11, 12, 13, 14]);
  const rgb8 = (extra: Pick<TileRequest, 'format' | 'scale'>): TileRequest[] =>
    rgbSession.map((t) => ({ kind: 'stac', url: rgbItem, ...t, assets: ['visual'], ...extra }));
  const exprTiles: TileRequest[] = mapSession(data.sceneBounds, [9, 10, 11, 12, 13, 14]).map((t) => ({
    kind: 'stac',
    url: item,
    ...t,
    expression: ndvi,
    rescale: [-0.5, 0.5],
    colormapName: 'viridis',
    format: 'png',
  }));
  const fixtureTiles: TileRequest[] = mapSession(FIXTURE_BOUNDS, [7, 8, 9, 10, 11]).map((t) => ({
    kind: 'stac',
    url: fixtureItem,
    ...t,
    assets: ['B01'],
    rescale: [0, 10000],
    format: 'png',
  }));
  const mosaicTiles: TileRequest[] = mapSession(mosaicBounds, [10, 11, 12, 13, 14]).map((t) => ({ kind: 'mosaic', url: mosaic, ...t, format: 'png' }));

  const stacQ = `url=${q(item)}`;
  const previewStats = [
    `/stac/preview.png?${stacQ}&assets=visual&rescale=0,10000`,
    `/stac/statistics?${stacQ}&assets=visual`,
    `/stac/preview.png?${stacQ}&assets=visual&rescale=0,10000&max_size=512`,
    `/stac/statistics?${stacQ}&expression=${q('visual_b3/visual_b1')}`,
    `/stac/preview.jpg?${stacQ}&expression=${q(ndvi)}&rescale=-0.5,0.5&colormap_name=viridis`,
    `/stac/statistics?${stacQ}&assets=visual&max_size=512&histogram_bins=20`,
    `/stac/preview.png?url=${q(fixtureItem)}&assets=B01&rescale=0,10000`,
    `/stac/statistics?url=${q(fixtureItem)}&assets=B01&assets=B09`,
  ];
  const pointPaths = points(data.sceneBounds, 64).map(([lon, lat]) => `/stac/point/${lon.toFixed(5)},${lat.toFixed(5)}?${stacQ}&assets=visual`);

  // Mosaic tiles over one asset (inside a COG, away from the overlaps) and over four (at a grid
  // corner, where each COG covers about a quarter of the tile, so every one must be read).
  const oneAsset: string[] = [];
  for (const b of data.mosaicBounds) {
    const lon = (b[0] + b[2]) / 2;
    const lat = (b[1] + b[3]) / 2;
    for (const z of [12, 13]) oneAsset.push(tilePath({ kind: 'mosaic', url: mosaic, z, x: lonToTileX(lon, z), y: latToTileY(lat, z), format: 'png' }));
  }
  const fourAssets: string[] = [];
  for (const [lon, lat] of data.mosaicCorners) {
    for (const z of [12, 13]) fourAssets.push(tilePath({ kind: 'mosaic', url: mosaic, z, x: lonToTileX(lon, z), y: latToTileY(lat, z), format: 'png' }));
  }

  const tileMix = (id: string, title: string, tiles: TileRequest[]): Mix => ({ id, title, paths: tiles.map(tilePath), tiles });
  return {
    mixes: [
      tileMix('stac-rgb', 'STAC map session: assets=visual (3×uint16) + rescale, z9–14', rgbTiles),
      tileMix('stac-expression', 'STAC map session: NDVI-like expression + rescale + viridis', exprTiles),
      tileMix('mosaic', 'MosaicJSON map session over 16 COGs, z10–14', mosaicTiles),
      tileMix('stac-fixture', 'STAC map session over the shared fixture item: B01 + rescale, z7–11', fixtureTiles),
      tileMix('rgb-auto', 'STAC map session over an 8-bit RGB item (assets=visual), no extension: JPEG or PNG as the server picks, z9–14', rgb8({})),
      tileMix('rgb-2x', 'STAC map session over the 8-bit RGB item, @2x (512-px tiles), no extension, z9–14', rgb8({ scale: 2 })),
      tileMix('rgb-webp', 'STAC map session over the 8-bit RGB item as .webp, z9–14', rgb8({ format: 'webp' })),
      { id: 'preview-stats', title: 'previews (png/jpg, 512/1024 px) and GET statistics', paths: previewStats },
      { id: 'points', title: 'point queries (3 bands)', paths: pointPaths },
    ],
    mosaicOneAsset: oneAsset,
    mosaicFourAssets: fourAssets,
  };
}
