/**
 * What a fresh process would otherwise make its first requests pay for, paid before it listens
 * (server.ts): tiles of a small COG read and encoded as a request's are (the reader's planning and
 * its JavaScript warp, run cold by V8's interpreter until they are hot), each render thread's
 * encoders run once (libvips, zlib, the PNG and JPEG paths), and GDAL warps once on each thread of
 * the pool it reads on (PROJ's database and context, the warper, per thread). With the upstream
 * gateway, the COG is read over HTTP through it (the gateway's thread serves it on loopback,
 * gateway.ts `warmUpstream`): /vsicurl/ and the gateway's own code are as cold as the reader's, and
 * a fresh process's first view spent ~30 ms more of the gateway thread's CPU than the next one.
 * Best effort: a failure here is the first request's to meet, not the start's.
 */
import { gdal } from './gdal/gdal.js';
import type { RasterSource, SourceContext } from './source/dataset.js';
import { cogReader } from './readers/cog.js';
import { MosaicReader } from './readers/mosaic.js';
import type { Reader } from './readers/reader.js';
import type { AssetIndex } from './mosaic/asset-index.js';
import { getTms } from './tms/registry.js';
import type { ImageData } from './image/image-data.js';
import type { ImageFormat } from './image/formats.js';
import type { Renderer, RenderSpec } from './image/post-process.js';

/** Where the warm-up's COG can be read over HTTP (the upstream gateway's warm-up file). */
export interface WarmUpstream {
  /** Serves `bytes`; the URL to read them at, or undefined when they cannot be served. */
  serve(bytes: Uint8Array): Promise<string | undefined>;
  end(): void;
}

const SIZE = 256;

/** A small RGB image with a mask, in lon/lat: what a tile's reader hands the renderer. */
function sampleImage(): ImageData {
  const n = SIZE * SIZE;
  const bands = [0, 1, 2].map((b) => Uint8Array.from({ length: n }, (_, i) => (i * (b + 3)) & 255));
  const mask = Uint8Array.from({ length: n }, (_, i) => (i % SIZE < 8 ? 0 : 255));
  return {
    width: SIZE,
    height: SIZE,
    dtype: 'uint8',
    bands,
    masks: [mask, mask, mask],
    bandNames: ['b1', 'b2', 'b3'],
    bounds: [7, 45, 8, 46],
    crs: 'EPSG:4326',
  };
}

const PLAIN: RenderSpec = { algorithm: undefined, rescale: undefined, colorFormula: undefined, colormap: undefined, returnMask: true };

/** Each of `threads` render threads encodes once in each of `formats` (jobs go to the least busy thread, so `threads` at once reach them all). */
export async function warmRenderer(renderer: Renderer, threads: number, formats: readonly ImageFormat[] = ['png', 'jpeg']): Promise<void> {
  for (const format of formats) {
    await Promise.all(Array.from({ length: threads }, () => renderer.render(sampleImage(), format, PLAIN)));
  }
}

/** A warp from lon/lat to Web Mercator on each of `threads` threads of libuv's pool at once. */
export async function warmGdal(threads: number): Promise<void> {
  await Promise.all(
    Array.from({ length: threads }, async (_, i) => {
      const src = await gdal.openAsync('', 'w', 'MEM', 64, 64, 3, gdal.GDT_Byte);
      try {
        src.geoTransform = [7, 0.01, 0, 46, 0, -0.01];
        src.srs = gdal.SpatialReference.fromEPSG(4326);
        const out = await gdal.warpAsync(
          `/vsimem/tessera-warm-${i}.mem`,
          null,
          [src],
          ['-t_srs', 'EPSG:3857', '-of', 'MEM', '-ts', String(SIZE), String(SIZE)],
        );
        out.close();
      } finally {
        src.close();
      }
    }),
  );
}

/** A 3-band COG over [7, 45, 8, 46] in lon/lat with overviews, in GDAL's memory files. */
async function sampleCog(path: string): Promise<void> {
  const width = 1024;
  const mem = await gdal.openAsync('', 'w', 'MEM', width, width, 3, gdal.GDT_Byte);
  try {
    mem.geoTransform = [7, 1 / width, 0, 46, 0, -1 / width];
    mem.srs = gdal.SpatialReference.fromEPSG(4326);
    const plane = Uint8Array.from({ length: width * width }, (_, i) => (i ^ (i >> 10)) & 255);
    for (let b = 1; b <= 3; b++) {
      const band = mem.bands.get(b);
      band.noDataValue = 0;
      await band.pixels.writeAsync(0, 0, width, width, plane);
    }
    const cog = gdal.drivers.get('COG');
    const out = await cog.createCopyAsync(path, mem, { BLOCKSIZE: '256', OVERVIEWS: 'IGNORE_EXISTING' });
    out.close();
  } finally {
    mem.close();
  }
}

/** Asks one of the server's own routes in process (Fastify's inject), marked as the warm-up's (WARM_UP_HEADER): its status. */
export type LocalGet = (path: string) => Promise<number>;

/**
 * The header that marks the warm-up's requests to the server's own routes, its value a secret of the
 * process: they are neither counted, logged as requests nor cached.
 */
export const WARM_UP_HEADER = 'x-tessera-warm-up';

/** A search that exists only for the warm-up (pgstac/warm-up-search.ts). */
export interface WarmSearches {
  /** Makes a search of `items`: its id, and what ends it (and forgets what was kept of it). */
  begin(items: Array<Record<string, unknown>>): { hash: string; end: () => void };
}

export interface WarmReadsOptions {
  /** Tiles read through the readers. */
  count: number;
  /** Closes what the reads opened. */
  release: () => void;
  /** Where the COG is served over HTTP (the upstream gateway); absent, it is read from GDAL's memory files. */
  upstream?: WarmUpstream | undefined;
  /** Lets the served COG's URL past the URL policy until the function returned is called (UrlPolicy.admitWhileWarming). */
  admit?: ((url: string) => () => void) | undefined;
  /** The tile routes to ask in process once the COG is served: /cog's, and a search's when the server has searches. */
  routes?: { get: LocalGet; searches?: WarmSearches | undefined } | undefined;
  /**
   * Aborted when the warm-up's time is up and the server is about to listen: what the warm-up let
   * past the policies (the COG's URL, its search) is withdrawn at once, whatever is still running.
   */
  ended?: AbortSignal | undefined;
}

/** Zoom 9 and 10 tiles over the warm-up's COG, from its middle outwards. */
function warmTiles(count: number, zooms: readonly number[] = [9, 10]): Array<{ z: number; x: number; y: number }> {
  return Array.from({ length: count }, (_, i) => {
    const z = zooms[i % zooms.length]!;
    const n = 2 ** z;
    const lat = (45.5 * Math.PI) / 180;
    const [x, y] = [Math.floor((187.5 / 360) * n), Math.floor(((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * n)];
    return { z, x: x + ((i >> 1) % 2), y: y + (i >> 2) };
  });
}

/**
 * An item over (part of) the warm-up's COG as a search's lookup answers it (the fields tessera asks
 * pgSTAC for: id, collection, bbox, assets), its one asset the COG.
 */
function warmItem(id: string, url: string, bbox: [number, number, number, number]): Record<string, unknown> {
  return {
    id,
    collection: 'tessera-warm-up',
    bbox,
    assets: { visual: { href: url, type: 'image/tiff; application=geotiff; profile=cloud-optimized', roles: ['data'] } },
  };
}

/**
 * The tile routes asked in process as a client asks them (routing, parameters, the reads, the
 * encoding, the answer's hooks): tiles of the COG at `url` through /cog and, with `searches`, through
 * a search of two items over it (the first covering half of it: both are read and composed). The
 * statuses, in the order asked.
 */
async function warmRoutes(get: LocalGet, url: string, searches: WarmSearches | undefined, ended: AbortSignal | undefined): Promise<number[]> {
  const tiles = warmTiles(4, [10]);
  const paths = tiles.map(({ z, x, y }) => `/cog/tiles/WebMercatorQuad/${z}/${x}/${y}.png?url=${encodeURIComponent(url)}`);
  const search = searches?.begin([warmItem('half', url, [7, 45, 7.5, 46]), warmItem('whole', url, [7, 45, 8, 46])]);
  const end = (): void => search?.end();
  ended?.addEventListener('abort', end, { once: true });
  try {
    if (search) paths.push(...tiles.map(({ z, x, y }) => `/searches/${search.hash}/tiles/WebMercatorQuad/${z}/${x}/${y}.png?assets=visual`));
    return await Promise.all(paths.map((p) => get(p).catch(() => 0)));
  } finally {
    ended?.removeEventListener('abort', end);
    end();
  }
}

/**
 * `count` tiles of a COG read (nearest and bilinear, alone and as a mosaic) and encoded to PNG at
 * once, as the tile routes do: over HTTP from `upstream` when given (and it serves), else from
 * GDAL's memory files. Then, when served over HTTP, the tile routes asked in process (warmRoutes):
 * their statuses (none without).
 */
export async function warmReads(sources: SourceContext, renderer: Renderer, opts: WarmReadsOptions): Promise<number[]> {
  const path = '/vsimem/tessera-warm-up.tif';
  const limits = { maxOutputPixels: 4 * SIZE * SIZE * 4, maxSourcePixels: 4096 * 4096 };
  await sampleCog(path);
  /** Whether the COG is still a memory file (it is handed over whole to be served). */
  let inMemory = true;
  let url: string | undefined;
  let withdraw: (() => void) | undefined;
  /** Withdraws what was let past the policies and stops serving the COG (at the end, or when `ended` aborts first). */
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    withdraw?.();
    if (url !== undefined) opts.upstream?.end();
  };
  opts.ended?.addEventListener('abort', close, { once: true });
  /** The GDAL paths read (the memory file's, or the gateway's for the URL): what is kept of them is dropped at the end. */
  const opened = new Set<string>();
  try {
    if (opts.upstream) {
      const bytes = gdal.vsimem.release(path);
      inMemory = false;
      url = await opts.upstream.serve(bytes);
      // Served after the warm-up's time was up: nothing of it is to be read.
      if (url !== undefined && closed) opts.upstream.end();
      if (url === undefined) {
        gdal.vsimem.set(bytes, path);
        inMemory = true;
      }
    }
    const source = (): RasterSource => {
      const raster = url === undefined ? sources.source(path, 'the warm-up raster') : sources.sourceAt({ kind: 'http', url }, 'the warm-up raster');
      opened.add(raster.path);
      return raster;
    };
    const open = (): Promise<Reader> => cogReader(source(), url ?? path, {});
    const cog = await open();
    // The same raster as a mosaic of two assets (the compositor, its pixel selection): what a
    // MosaicJSON document's or a search's tiles go through.
    const index: AssetIndex = {
      bounds: [7, 45, 8, 46],
      center: [7.5, 45.5, 9],
      version: undefined,
      zooms: () => ({ minzoom: 0, maxzoom: 12 }),
      assetName: (asset) => asset,
      assetsForTile: () => ['a', 'b'],
      assetsForPoint: () => ['a', 'b'],
      assetsForBbox: () => ['a', 'b'],
    };
    const mosaic = new MosaicReader(
      { index, open },
      { concurrency: 2, lowZoomDeadlineMs: 0, limits },
      { pixelSelection: 'first', strictZoom: false, assetsHeader: true },
    );
    const tms = getTms('WebMercatorQuad')!;
    await Promise.all(
      warmTiles(opts.count).map(async (tile, i) => {
        const resampling = i % 2 === 0 ? 'nearest' : 'bilinear';
        const reader = i % 4 < 2 ? cog : mosaic;
        const read = await reader.tile(tms, tile, { unscale: false, resampling, reproject: resampling, limits, tilesize: SIZE }).catch(() => undefined);
        if (read) await renderer.render(read.image, 'png', PLAIN);
      }),
    );
    if (url === undefined || !opts.routes || !opts.admit || closed) return [];
    withdraw = opts.admit(url);
    return await warmRoutes(opts.routes.get, url, opts.routes.searches, opts.ended);
  } finally {
    opts.ended?.removeEventListener('abort', close);
    close();
    opts.release();
    for (const p of opened) sources.forget(p);
    if (inMemory) gdal.vsimem.release(path);
  }
}
