/**
 * The large mosaic of the low-zoom benchmark (issue 23), generated once into `.bench/data/large/`:
 *
 *   large/NNNN.tif       1,024 RGB uint8 COGs on a 32×32 grid in UTM 33N, 512×512 at 20 m
 *                        (10.24 km, 10 km apart: neighbours overlap by 240 m), 256-px blocks,
 *                        DEFLATE, one internal overview (256²), nodata 0
 *   large/mosaic.json    MosaicJSON 0.0.3 over them, quadkeys at the COGs' minzoom, assets named
 *                        by absolute URL (`{BASE}` is filled in by the file server)
 *   large/overview.tif   its low-zoom overview (`tessera mosaic overview`'s builder at zoom 10, the
 *                        document's minzoom, pixel selection `first`), made once (its stamp)
 *   large/mosaic-overview.json  the same document naming it in `tessera:overview`
 *
 * 320 km across: the COGs' zooms are 10–12, so the document's minzoom (and quadkey zoom) is 10; a
 * tile there needs up to 16 COGs, one two zooms lower a hundred and more, and at minzoom − 4 one
 * or a few tiles hold every one of the 1,024. The COGs are small so that 1,024 of them take ~250 MB and a
 * minute to make; what the benchmark measures is how many of them a tile must touch.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { gdal } from '../../src/gdal/gdal.js';
import { buildMosaicJson, type MosaicFootprint } from '../../src/mosaic/build.js';
import { lonLatBounds } from './data.js';
import { pyDumps } from '../../src/pyjson.js';
import { loadSettings } from '../../src/config.js';
import { Services } from '../../src/services.js';
import { Mosaic } from '../../src/mosaic/mosaic.js';
import { parseMosaicDocument } from '../../src/mosaic/document.js';
import { buildMosaicOverview } from '../../src/readers/mosaic-overview-build.js';
import { OVERVIEW_FIELD, overviewFieldJson } from '../../src/mosaic/overview.js';

const VERSION = '1';
const STAMP = '.version';
/** The overview's stamp: the COGs' version it was made from, and its own. */
const OVERVIEW_VERSION = `${VERSION}.2`;
const OVERVIEW_STAMP = '.overview-version';
const OVERVIEW_FILE = 'overview.tif';
const OVERVIEW_DOCUMENT = 'mosaic-overview.json';

export const LARGE_MOSAIC = { epsg: 32633, originX: 300_000, originY: 5_100_000, pixel: 20, size: 512, step: 10_000, grid: 32 } as const;

export interface LargeMosaic {
  /** Folder of the COGs and the document. */
  dir: string;
  /** The document naming the low-zoom overview (in `dir`). */
  overviewDocument: string;
  /** The document's zoom range and bounds. */
  minzoom: number;
  maxzoom: number;
  bounds: [number, number, number, number];
}

/**
 * Makes (or reuses) the large mosaic under `dir/large`: the COGs once (their stamp), the document
 * each time from their footprints (under a second).
 */
export async function ensureLargeMosaic(dir: string, log: (line: string) => void): Promise<LargeMosaic> {
  const out = path.join(dir, 'large');
  await fs.mkdir(out, { recursive: true });
  const count = LARGE_MOSAIC.grid * LARGE_MOSAIC.grid;
  const stamp = await fs.readFile(path.join(out, STAMP), 'utf8').catch(() => '');
  if (stamp !== VERSION) {
    const t0 = Date.now();
    log(`bench data: generating the ${count} COGs of the large mosaic (once; kept in ${out})`);
    for (let i = 0; i < count; i++) {
      await writeCog(out, i);
      if ((i + 1) % 128 === 0) log(`bench data: ${i + 1}/${count} COGs (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
    await fs.writeFile(path.join(out, STAMP), VERSION);
  }
  const footprints = Array.from({ length: count }, (_, i) => footprintOf(i));
  const built = buildMosaicJson(footprints, { name: 'large' });
  const text = pyDumps(built.document);
  await fs.writeFile(path.join(out, 'mosaic.json'), text);
  log(`bench data: large mosaic of ${count} COGs, ${built.quadkeys} quadkeys at zoom ${built.quadkeyZoom}`);
  // Read back as plain JSON: the built document holds Python-float wrappers for pyDumps.
  const doc = JSON.parse(text) as Record<string, unknown>;
  await ensureOverview(out, doc, log);
  return describe(out, doc);
}

/**
 * The overview of the large mosaic, made once by the builder `tessera mosaic overview` uses, from the
 * COGs on disk (the document's `{BASE}` URLs read as local paths), and the document naming it by
 * the file server's URL.
 */
async function ensureOverview(out: string, doc: Record<string, unknown>, log: (line: string) => void): Promise<void> {
  const file = path.join(out, OVERVIEW_FILE);
  const stamp = await fs.readFile(path.join(out, OVERVIEW_STAMP), 'utf8').catch(() => '');
  const minzoom = doc['minzoom'] as number;
  if (stamp !== OVERVIEW_VERSION) {
    const t0 = Date.now();
    log(`bench data: composing the large mosaic's low-zoom overview at zoom ${minzoom}, its minzoom (once; ${file})`);
    const local = JSON.parse(JSON.stringify(doc).replaceAll('{BASE}/large', out)) as unknown;
    const services = new Services(loadSettings({ logLevel: 'silent', renderThreads: 0, allowedLocalRoots: [out], tileCacheBytes: 0 }));
    try {
      const mosaic = new Mosaic(parseMosaicDocument(local), { url: out, tilesInDocument: true, version: '' });
      const built = await buildMosaicOverview(
        mosaic,
        { ...services.mosaicContext, lowZoomDeadlineMs: 0, finishLater: false },
        {
          output: file,
          // At the minzoom itself: tiles from minzoom down to minzoom − 4 (issue 23's range) come from it.
          zoom: minzoom,
          pixelSelection: 'first',
          resampling: 'nearest',
          threads: 4,
        },
      );
      log(
        `bench data: overview ${built.width}×${built.height} px, ${built.written} tiles with data, ${built.bytes} bytes (${((Date.now() - t0) / 1000).toFixed(0)} s)`,
      );
    } finally {
      await services.close();
    }
    await fs.writeFile(path.join(out, OVERVIEW_STAMP), OVERVIEW_VERSION);
  }
  const field = overviewFieldJson({ href: `{BASE}/large/${OVERVIEW_FILE}`, maxzoom: minzoom, pixelSelection: 'first' });
  await fs.writeFile(path.join(out, OVERVIEW_DOCUMENT), JSON.stringify({ ...doc, [OVERVIEW_FIELD]: field }));
}

function describe(dir: string, doc: Record<string, unknown>): LargeMosaic {
  return {
    dir,
    overviewDocument: OVERVIEW_DOCUMENT,
    minzoom: doc['minzoom'] as number,
    maxzoom: doc['maxzoom'] as number,
    bounds: doc['bounds'] as [number, number, number, number],
  };
}

export function largeAssetName(index: number): string {
  return `${String(index).padStart(4, '0')}.tif`;
}

async function writeCog(dir: string, index: number): Promise<void> {
  const { size, pixel, originX, originY, step, grid, epsg } = LARGE_MOSAIC;
  const col = index % grid;
  const row = Math.floor(index / grid);
  const gt = [originX + col * step, pixel, 0, originY - row * step, 0, -pixel];
  const mem = await gdal.openAsync('large', 'w', 'MEM', size, size, 3, gdal.GDT_Byte);
  const file = path.join(dir, largeAssetName(index));
  try {
    mem.geoTransform = gt;
    mem.srs = gdal.SpatialReference.fromEPSG(epsg);
    const plane = new Uint8Array(size * size);
    for (let b = 1; b <= 3; b++) {
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          // A smooth field across the whole grid (neighbours continue each other) and a little noise.
          const gx = col * size + x;
          const gy = row * size + y;
          const v = 120 + 50 * Math.sin(gx / (900 + 150 * b)) + 40 * Math.cos(gy / (1300 - 120 * b)) + (((gx * 7919) ^ (gy * 104729) ^ (b * 31)) & 15);
          plane[y * size + x] = Math.min(255, Math.max(1, Math.round(v)));
        }
      }
      const band = mem.bands.get(b);
      band.noDataValue = 0;
      await band.pixels.writeAsync(0, 0, size, size, plane);
    }
    const cog = await gdal.translateAsync(file, mem, ['-of', 'COG', '-co', 'COMPRESS=DEFLATE', '-co', 'BLOCKSIZE=256', '-co', 'OVERVIEW_RESAMPLING=AVERAGE']);
    cog.close();
  } finally {
    mem.close();
  }
}

/**
 * The COG's footprint as `tessera mosaic create` reads it: its densified outline in lon/lat, and the
 * zooms /cog/info reports for a 20 m grid of 512 px with one overview (10 and 12, checked).
 */
function footprintOf(index: number): MosaicFootprint {
  const { size, pixel, originX, originY, step, grid, epsg } = LARGE_MOSAIC;
  const gt = [originX + (index % grid) * step, pixel, 0, originY - Math.floor(index / grid) * step, 0, -pixel];
  return { url: `{BASE}/large/${largeAssetName(index)}`, bounds: lonLatBounds(gt, size, epsg), minzoom: 10, maxzoom: 12, datatype: 'uint8' };
}
