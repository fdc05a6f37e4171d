/**
 * The benchmark's own data, generated once into `.bench/data/` (kept while its version stamp
 * matches): rasters big enough that overview choice, block reads and caching matter, unlike the
 * small shared fixtures.
 *
 *   scene.tif        10000×10000 uint16, 3 bands, UTM 33N at 10 m, 512-px blocks, DEFLATE +
 *                    predictor, internal overviews, nodata 0 in one corner (a Sentinel-2-like scene)
 *   item.json        a STAC item with that scene as its `visual` asset
 *   mosaic/NN.tif    sixteen 2048×2048 RGB uint8 COGs on a 4×4 grid (25 m, 51.2 km each, 50 km
 *                    apart, so neighbours overlap by 1.2 km and grid corners need four assets)
 *   mosaic.json      MosaicJSON 0.0.3 over them, quadkeys at zoom 12
 *   fixtures/        a link to the shared fixtures (served as they are; their item is rewritten
 *                    by the file server to point at it)
 *   rgb.tif          the scene scaled to 8 bits (0–10000 → 0–255, the stac-rgb mix's rescale),
 *                    3-band uint8, DEFLATE, 512-px blocks, overviews, nodata 0: what a true-colour
 *                    product (Sentinel-2's TCI, aerial imagery) is, and what clients ask for without
 *                    rescale or extension
 *   rgb-item.json    a STAC item with it as its `visual` asset
 *
 * The RGB item came later than the rest: it is made by its own step (ensureRgbItem), from the scene,
 * when missing, so that adding it did not regenerate the data made before.
 *
 * Pixel values are smooth fields, texture and hashed noise: compressible like imagery (the scene
 * DEFLATEs to about half its size), not like zeros.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { gdal, type Dataset } from '../../src/gdal/gdal.js';
import { bboxPolygon } from '../../test/helpers/geojson.js';

const VERSION = '2';
const STAMP = '.version';

export const SCENE = { epsg: 32633, originX: 300_000, originY: 5_200_000, pixel: 10, size: 10_000, bands: 3, nodata: 0 } as const;
export const MOSAIC = { epsg: 32633, originX: 450_000, originY: 4_950_000, pixel: 25, size: 2048, step: 50_000, grid: 4 } as const;
export const MOSAIC_QUADKEY_ZOOM = 12;

export type LonLatBounds = [number, number, number, number];

export interface BenchData {
  dir: string;
  /** Lon/lat bounds of the scene. */
  sceneBounds: LonLatBounds;
  /** Lon/lat bounds of each mosaic COG, in file order. */
  mosaicBounds: LonLatBounds[];
  /** Lon/lat of the nine interior points where four mosaic COGs meet. */
  mosaicCorners: Array<[number, number]>;
}

/** Makes (or reuses) the data in `dir`; `log` hears about slow steps. */
export async function ensureBenchData(dir: string, fixtures: string, log: (line: string) => void): Promise<BenchData> {
  await fs.mkdir(path.join(dir, 'mosaic'), { recursive: true });
  const metaPath = path.join(dir, 'meta.json');
  const stamp = await fs.readFile(path.join(dir, STAMP), 'utf8').catch(() => '');
  if (stamp === VERSION) {
    const meta = JSON.parse(await fs.readFile(metaPath, 'utf8')) as Omit<BenchData, 'dir'>;
    return { dir, ...meta };
  }
  const t0 = Date.now();
  log('bench data: generating the 10000² scene (once; kept in .bench/data)');
  const sceneBounds = await writeScene(path.join(dir, 'scene.tif'));
  log(`bench data: scene done in ${((Date.now() - t0) / 1000).toFixed(0)} s; generating sixteen mosaic COGs`);
  const mosaicBounds: LonLatBounds[] = [];
  for (let i = 0; i < MOSAIC.grid * MOSAIC.grid; i++) mosaicBounds.push(await writeMosaicCog(path.join(dir, 'mosaic', `${String(i).padStart(2, '0')}.tif`), i));
  const mosaicCorners = interiorCorners();
  await fs.writeFile(path.join(dir, 'item.json'), JSON.stringify(stacItem(sceneBounds), null, 1));
  await fs.writeFile(path.join(dir, 'mosaic.json'), JSON.stringify(mosaicDocument(mosaicBounds)));
  await fs.rm(path.join(dir, 'fixtures'), { force: true });
  await fs.symlink(path.resolve(fixtures), path.join(dir, 'fixtures'));
  const meta: Omit<BenchData, 'dir'> = { sceneBounds, mosaicBounds, mosaicCorners };
  await fs.writeFile(metaPath, JSON.stringify(meta));
  await fs.writeFile(path.join(dir, STAMP), VERSION);
  log(`bench data: ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return { dir, ...meta };
}

/** The RGB item's files, beside the scene they are made from. */
export const RGB_COG = 'rgb.tif';
export const RGB_ITEM = 'rgb-item.json';

/**
 * Makes rgb.tif and rgb-item.json from scene.tif when either is missing. Both are written under a
 * temporary name and renamed, so an interrupted run leaves nothing that looks finished.
 */
export async function ensureRgbItem(data: BenchData, log: (line: string) => void): Promise<void> {
  const cog = path.join(data.dir, RGB_COG);
  const item = path.join(data.dir, RGB_ITEM);
  const have = async (f: string): Promise<boolean> => (await fs.stat(f).catch(() => undefined))?.isFile() ?? false;
  if ((await have(cog)) && (await have(item))) return;
  const t0 = Date.now();
  log('bench data: making the 8-bit RGB COG from the scene (once)');
  const scene = await gdal.openAsync(path.join(data.dir, 'scene.tif'));
  try {
    const tmp = `${cog}.tmp-${process.pid}`;
    // Source nodata (0) stays 0: every valid scene value is ≥ 1800, so it scales to ≥ 45.
    const out = await gdal.translateAsync(tmp, scene, [
      '-of',
      'COG',
      '-ot',
      'Byte',
      '-scale',
      '0',
      '10000',
      '0',
      '255',
      '-co',
      'COMPRESS=DEFLATE',
      '-co',
      'PREDICTOR=2',
      '-co',
      'BLOCKSIZE=512',
      '-co',
      'OVERVIEW_RESAMPLING=AVERAGE',
      '-co',
      'NUM_THREADS=ALL_CPUS',
    ]);
    out.close();
    await fs.rename(tmp, cog);
  } finally {
    scene.close();
  }
  const doc = stacItem(data.sceneBounds, 'bench-rgb', RGB_COG);
  await fs.writeFile(`${item}.tmp`, JSON.stringify(doc, null, 1));
  await fs.rename(`${item}.tmp`, item);
  log(`bench data: RGB COG done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** A 32-bit integer hash of (x, y, salt): deterministic per-pixel noise without a PRNG state. */
function hash(x: number, y: number, salt: number): number {
  let h = Math.imul(x, 0x27d4eb2d) ^ Math.imul(y, 0x165667b1) ^ Math.imul(salt, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

async function writeScene(file: string): Promise<LonLatBounds> {
  const { size, bands, pixel, originX, originY, nodata } = SCENE;
  const mem = await gdal.openAsync('scene', 'w', 'MEM', size, size, bands, gdal.GDT_UInt16);
  const gt = [originX, pixel, 0, originY, 0, -pixel];
  try {
    mem.geoTransform = gt;
    mem.srs = gdal.SpatialReference.fromEPSG(SCENE.epsg);
    const rows = 500;
    const buf = new Uint16Array(size * rows);
    for (let b = 1; b <= bands; b++) {
      const band = mem.bands.get(b);
      band.noDataValue = nodata;
      for (let r0 = 0; r0 < size; r0 += rows) {
        for (let r = 0; r < rows; r++) {
          const y = r0 + r;
          const sy = Math.sin(y / (700 + 90 * b));
          for (let x = 0; x < size; x++) {
            const k = r * size + x;
            // The north-west corner triangle is outside the swath: nodata in every band.
            if (x + y < 1500) {
              buf[k] = nodata;
              continue;
            }
            // Landscape-scale relief, field-scale texture, and 6 bits of sensor noise.
            const field = 3000 + 1500 * b + 1800 * Math.sin(x / (900 - 70 * b)) * sy + 600 * Math.cos((x + 2 * y) / 2300);
            const texture = 250 * Math.sin(x / (7.3 + b)) * Math.cos(y / 5.1);
            buf[k] = Math.max(1, Math.round(field + texture + (hash(x, y, b) & 63) - 32));
          }
        }
        await band.pixels.writeAsync(0, r0, size, rows, buf);
      }
    }
    await writeCog(mem, file, ['-co', 'BLOCKSIZE=512', '-co', 'PREDICTOR=2']);
    return lonLatBounds(gt, size, SCENE.epsg);
  } finally {
    mem.close();
  }
}

async function writeMosaicCog(file: string, index: number): Promise<LonLatBounds> {
  const { size, pixel, originX, originY, step, grid } = MOSAIC;
  const col = index % grid;
  const row = Math.floor(index / grid);
  const gt = [originX + col * step, pixel, 0, originY - row * step, 0, -pixel];
  const mem = await gdal.openAsync('mosaic', 'w', 'MEM', size, size, 3, gdal.GDT_Byte);
  try {
    mem.geoTransform = gt;
    mem.srs = gdal.SpatialReference.fromEPSG(MOSAIC.epsg);
    const plane = new Uint8Array(size * size);
    for (let b = 1; b <= 3; b++) {
      for (let y = 0; y < size; y++) {
        for (let x = 0; x < size; x++) {
          const v =
            110 +
            40 * Math.sin((x + 37 * index) / (160 + 20 * b)) +
            30 * Math.cos((y - 11 * index) / (210 - 15 * b)) +
            12 * index -
            60 +
            (hash(x, y, 10 * index + b) & 31);
          plane[y * size + x] = Math.min(255, Math.max(1, Math.round(v)));
        }
      }
      const band = mem.bands.get(b);
      band.noDataValue = 0;
      await band.pixels.writeAsync(0, 0, size, size, plane);
    }
    await writeCog(mem, file, ['-co', 'BLOCKSIZE=512', '-co', 'PREDICTOR=2']);
    return lonLatBounds(gt, size, MOSAIC.epsg);
  } finally {
    mem.close();
  }
}

async function writeCog(src: Dataset, file: string, extra: string[]): Promise<void> {
  const out = await gdal.translateAsync(file, src, [
    '-of',
    'COG',
    '-co',
    'COMPRESS=DEFLATE',
    '-co',
    'NUM_THREADS=ALL_CPUS',
    '-co',
    'OVERVIEW_RESAMPLING=AVERAGE',
    ...extra,
  ]);
  out.close();
}

/** Lon/lat bounds of a north-up grid, from its densified outline. */
export function lonLatBounds(gt: number[], size: number, epsg: number): LonLatBounds {
  const ct = new gdal.CoordinateTransformation(gdal.SpatialReference.fromEPSG(epsg), gdal.SpatialReference.fromEPSG(4326));
  let [w, s, e, n] = [Infinity, Infinity, -Infinity, -Infinity];
  for (let t = 0; t <= 32; t++) {
    const f = (t / 32) * size;
    for (const [px, py] of [
      [f, 0],
      [f, size],
      [0, f],
      [size, f],
    ] as const) {
      const p = ct.transformPoint(gt[0]! + px * gt[1]!, gt[3]! + py * gt[5]!);
      [w, s, e, n] = [Math.min(w, p.x), Math.min(s, p.y), Math.max(e, p.x), Math.max(n, p.y)];
    }
  }
  return [w, s, e, n];
}

function interiorCorners(): Array<[number, number]> {
  const { originX, originY, step, grid } = MOSAIC;
  const ct = new gdal.CoordinateTransformation(gdal.SpatialReference.fromEPSG(MOSAIC.epsg), gdal.SpatialReference.fromEPSG(4326));
  const out: Array<[number, number]> = [];
  for (let r = 1; r < grid; r++) {
    for (let c = 1; c < grid; c++) {
      // The middle of the 1.2 km overlap square, where all four neighbours have data.
      const overlap = MOSAIC.size * MOSAIC.pixel - step;
      const p = ct.transformPoint(originX + c * step + overlap / 2, originY - r * step - overlap / 2);
      out.push([p.x, p.y]);
    }
  }
  return out;
}

function stacItem(bounds: LonLatBounds, id = 'bench-scene', file = 'scene.tif'): Record<string, unknown> {
  return {
    type: 'Feature',
    stac_version: '1.0.0',
    stac_extensions: ['https://stac-extensions.github.io/projection/v1.1.0/schema.json'],
    id,
    bbox: bounds,
    geometry: bboxPolygon(bounds),
    properties: { datetime: '2024-06-21T10:00:00Z', 'proj:epsg': SCENE.epsg },
    links: [],
    assets: {
      visual: {
        // Absolute, as in a real catalogue; the file server fills in its address.
        href: `{BASE}/${file}`,
        type: 'image/tiff; application=geotiff; profile=cloud-optimized',
        roles: ['data'],
        'proj:shape': [SCENE.size, SCENE.size],
      },
    },
  };
}

/** Quadkey of a WebMercatorQuad tile. */
function quadkey(x: number, y: number, z: number): string {
  let s = '';
  for (let i = z; i > 0; i--) s += String(((x >> (i - 1)) & 1) + 2 * ((y >> (i - 1)) & 1));
  return s;
}

export function lonToTileX(lon: number, z: number): number {
  return Math.floor(((lon + 180) / 360) * 2 ** z);
}

export function latToTileY(lat: number, z: number): number {
  const r = (lat * Math.PI) / 180;
  return Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * 2 ** z);
}

export function tileBounds(x: number, y: number, z: number): LonLatBounds {
  const n = 2 ** z;
  const lat = (t: number): number => (Math.atan(Math.sinh(Math.PI * (1 - (2 * t) / n))) * 180) / Math.PI;
  return [(x / n) * 360 - 180, lat(y + 1), ((x + 1) / n) * 360 - 180, lat(y)];
}

function intersects(a: LonLatBounds, b: LonLatBounds): boolean {
  return a[0] < b[2] && a[2] > b[0] && a[1] < b[3] && a[3] > b[1];
}

function mosaicDocument(assets: LonLatBounds[]): Record<string, unknown> {
  const z = MOSAIC_QUADKEY_ZOOM;
  const w = Math.min(...assets.map((a) => a[0]));
  const s = Math.min(...assets.map((a) => a[1]));
  const e = Math.max(...assets.map((a) => a[2]));
  const n = Math.max(...assets.map((a) => a[3]));
  const tiles: Record<string, string[]> = {};
  for (let x = lonToTileX(w, z); x <= lonToTileX(e, z); x++) {
    for (let y = latToTileY(n, z); y <= latToTileY(s, z); y++) {
      const tb = tileBounds(x, y, z);
      const names = assets.flatMap((a, i) => (intersects(a, tb) ? [`mosaic/${String(i).padStart(2, '0')}.tif`] : []));
      if (names.length > 0) tiles[quadkey(x, y, z)] = names;
    }
  }
  return {
    mosaicjson: '0.0.3',
    name: 'bench',
    version: '1.0.0',
    minzoom: 10,
    maxzoom: 14,
    quadkey_zoom: z,
    bounds: [w, s, e, n],
    center: [(w + e) / 2, (s + n) / 2, 12],
    tiles,
    asset_type: 'COG',
    // Filled in by the file server with its own address (absolute URLs, as a real mosaic has).
    asset_prefix: '{BASE}/',
    data_type: 'uint8',
  };
}
