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
import type { SourceContext } from './source/dataset.js';
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

/**
 * `count` tiles of a COG read (nearest and bilinear, alone and as a mosaic) and encoded to PNG at
 * once, as the tile routes do: over HTTP from `upstream` when given (and it serves), else from
 * GDAL's memory files; `release` then closes what the reads opened.
 */
export async function warmReads(sources: SourceContext, renderer: Renderer, count: number, release: () => void, upstream?: WarmUpstream): Promise<void> {
  const path = '/vsimem/tessera-warm-up.tif';
  const limits = { maxOutputPixels: 4 * SIZE * SIZE * 4, maxSourcePixels: 4096 * 4096 };
  await sampleCog(path);
  /** Whether the COG is still a memory file (it is handed over whole to be served). */
  let inMemory = true;
  let url: string | undefined;
  try {
    if (upstream) {
      const bytes = gdal.vsimem.release(path);
      inMemory = false;
      url = await upstream.serve(bytes);
      if (url === undefined) {
        gdal.vsimem.set(bytes, path);
        inMemory = true;
      }
    }
    const source = (): ReturnType<SourceContext['source']> =>
      url === undefined ? sources.source(path, 'the warm-up raster') : sources.sourceAt({ kind: 'http', url }, 'the warm-up raster');
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
    // Zoom 9 and 10 tiles over the raster, from its middle outwards.
    const tiles = Array.from({ length: count }, (_, i) => {
      const z = 9 + (i % 2);
      const n = 2 ** z;
      const lat = (45.5 * Math.PI) / 180;
      const [x, y] = [Math.floor((187.5 / 360) * n), Math.floor(((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * n)];
      return { z, x: x + ((i >> 1) % 2), y: y + (i >> 2) };
    });
    await Promise.all(
      tiles.map(async (tile, i) => {
        const resampling = i % 2 === 0 ? 'nearest' : 'bilinear';
        const reader = i % 4 < 2 ? cog : mosaic;
        const read = await reader.tile(tms, tile, { unscale: false, resampling, reproject: resampling, limits, tilesize: SIZE }).catch(() => undefined);
        if (read) await renderer.render(read.image, 'png', PLAIN);
      }),
    );
  } finally {
    release();
    if (url !== undefined) upstream?.end();
    if (inMemory) gdal.vsimem.release(path);
  }
}
