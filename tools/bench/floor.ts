/**
 * The bare-GDAL floor: what a tile costs in CPU when nothing but the unavoidable is done, to measure a
 * server's CPU per tile against. For every tile of a mix, as the mix asks for it:
 *
 *   read     the source through /vsicurl/ from the same upstream (handles opened once and kept, as
 *            any tile server keeps them; GDAL's block cache warm after a first pass), the window
 *            under the tile from the overview a tile server would pick (the coarsest whose
 *            resolution is at least the tile's), copied into a MEM dataset
 *   warp     GDAL's own warper (GDALReprojectImage), nearest neighbour, approximate transformer
 *            (0.125 px, gdalwarp's default), into a MEM dataset of the tile's size (256 px, 512 at
 *            @2x) and geotransform in EPSG:3857, with an alpha band for the mask
 *   post     plain loops: `rescale` to 8 bits; the NDVI-like expression ((a − b) / (a + b)) then
 *            `rescale` and the viridis table (taken from tessera's data: a table is data, not
 *            work); for a mosaic, first-valid-pixel selection across its assets
 *   encode   sharp (libvips) with TiTiler's settings: JPEG quality 85, 4:2:0, optimised Huffman
 *            tables (no mask in JPEG); WebP quality 75 lossy with the mask as alpha; PNG through
 *            libpng at zlib level 6 with adaptive row filters, the mask as alpha — what GDAL's PNG
 *            driver does for TiTiler, so the floor's PNG is TiTiler's size, not the cheapest
 *            possible (a server whose PNG costs less can go below the floor on PNG mixes). Without
 *            an extension JPEG when every pixel is valid, PNG otherwise, as both servers choose.
 *
 * One tile at a time, so that `process.cpuUsage()` (every thread of the process: GDAL's, libuv's and
 * libvips' included) splits per stage. After a warm-up pass over the mix, passes over it until the
 * duration is spent, per repetition.
 *
 *   node floor.js <tiles.json> <duration ms> <repetitions>
 *
 * Prints one JSON line: { cpuMsPerTile: number[], stages: {read, warp, post, encode} (CPU ms per
 * tile, over all repetitions), tiles: number (per repetition), empty: number (tiles with no data) }.
 */
import { promises as fs } from 'node:fs';
import sharp from 'sharp';
import { gdal, type Dataset, type SpatialReference } from '../../src/gdal/gdal.js';
import { namedColormap } from '../../src/image/colormap.js';
import type { TileRequest } from './mixes.js';

sharp.cache(false);

/** Half the width of the WebMercatorQuad square, in metres. */
const HALF = 20037508.342789244;
const WEB_MERCATOR = gdal.SpatialReference.fromEPSG(3857);

type Stage = 'read' | 'warp' | 'post' | 'encode';
const STAGES: readonly Stage[] = ['read', 'warp', 'post', 'encode'];

/** A source kept open: its dataset, CRS, transform from web mercator, and its resolutions. */
interface Source {
  ds: Dataset;
  srs: SpatialReference;
  fromMercator: gdal.CoordinateTransformation;
  gt: number[];
  width: number;
  height: number;
  bands: number;
  dataType: string;
  nodata: number | null;
  /** Overview sizes (width), finest first; level 0 is the full resolution. */
  levels: number[];
}

/** A tile's pixels after the warp: bands of one source's type, and 0/255 validity. */
/** A band's pixels (a typed array of the source's type). */
type Pixels = { [index: number]: number; readonly length: number };

interface Warped {
  bands: Pixels[];
  valid: Uint8Array;
}

/** GDAL hands back any typed array; the bench's rasters are 8- and 16-bit integers, never 64-bit. */
function asPixels(a: ArrayLike<number | bigint>): Pixels {
  if (a instanceof BigInt64Array || a instanceof BigUint64Array) throw new Error('floor: 64-bit integer rasters are not handled');
  return a as Pixels;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

class Floor {
  private readonly docs = new Map<string, Promise<unknown>>();
  private readonly sources = new Map<string, Promise<Source>>();
  readonly stageMs: Record<Stage, number> = { read: 0, warp: 0, post: 0, encode: 0 };
  empty = 0;

  private doc(url: string): Promise<unknown> {
    let p = this.docs.get(url);
    if (!p) {
      p = fetch(url).then((r) => {
        if (!r.ok) throw new Error(`${url}: ${r.status}`);
        return r.json();
      });
      this.docs.set(url, p);
    }
    return p;
  }

  private source(href: string): Promise<Source> {
    let p = this.sources.get(href);
    if (!p) {
      p = (async () => {
        const ds = await gdal.openAsync(`/vsicurl/${href}`);
        const srs = ds.srs;
        if (!srs) throw new Error(`${href}: no CRS`);
        const band = ds.bands.get(1);
        const levels = [ds.rasterSize.x];
        for (let i = 0; i < band.overviews.count(); i++) levels.push(band.overviews.get(i).size.x);
        return {
          ds,
          srs,
          fromMercator: new gdal.CoordinateTransformation(WEB_MERCATOR, srs),
          gt: ds.geoTransform ?? [0, 1, 0, 0, 0, -1],
          width: ds.rasterSize.x,
          height: ds.rasterSize.y,
          bands: ds.bands.count(),
          dataType: band.dataType ?? gdal.GDT_Byte,
          nodata: band.noDataValue,
          levels,
        };
      })();
      this.sources.set(href, p);
    }
    return p;
  }

  /** The rasters a tile reads, in the order it reads them. */
  private async hrefs(t: TileRequest): Promise<string[]> {
    if (t.kind === 'stac') {
      const item = (await this.doc(t.url)) as { assets: Record<string, { href: string }> };
      const names = t.assets ?? [...new Set([...(t.expression ?? '').matchAll(/(\w+)_b\d+/g)].map((m) => m[1]!))];
      return names.map((n) => {
        const a = item.assets[n];
        if (!a) throw new Error(`${t.url}: no asset ${n}`);
        return a.href;
      });
    }
    const mosaic = (await this.doc(t.url)) as { quadkey_zoom: number; tiles: Record<string, string[]>; asset_prefix?: string };
    const qz = mosaic.quadkey_zoom;
    const keys: string[] = [];
    if (t.z >= qz) keys.push(quadkey(t.x >> (t.z - qz), t.y >> (t.z - qz), qz));
    else {
      const n = 1 << (qz - t.z);
      for (let dy = 0; dy < n; dy++) for (let dx = 0; dx < n; dx++) keys.push(quadkey(t.x * n + dx, t.y * n + dy, qz));
    }
    const out: string[] = [];
    for (const k of keys) for (const a of mosaic.tiles[k] ?? []) if (!out.includes(a)) out.push(a);
    return out.map((a) => (mosaic.asset_prefix ?? '') + a);
  }

  /** Reads and warps one source to the tile, or undefined when it does not reach the tile. */
  private async warp(src: Source, t: TileRequest, size: number): Promise<Warped | undefined> {
    let c = cpuMs();
    const span = (2 * HALF) / 2 ** t.z;
    const [minX, maxY] = [-HALF + t.x * span, HALF - t.y * span];
    // The tile's outline, densified, in the source's CRS.
    let [sx0, sy0, sx1, sy1] = [Infinity, Infinity, -Infinity, -Infinity];
    for (let i = 0; i <= 16; i++) {
      const f = (i / 16) * span;
      for (const [mx, my] of [
        [minX + f, maxY],
        [minX + f, maxY - span],
        [minX, maxY - f],
        [minX + span, maxY - f],
      ] as const) {
        const p = src.fromMercator.transformPoint(mx, my);
        [sx0, sy0, sx1, sy1] = [Math.min(sx0, p.x), Math.min(sy0, p.y), Math.max(sx1, p.x), Math.max(sy1, p.y)];
      }
    }
    // The coarsest level whose pixels are no larger than the tile's (in the source's units).
    const want = Math.min((sx1 - sx0) / size, (sy1 - sy0) / size);
    let level = 0;
    for (let i = 1; i < src.levels.length; i++) if ((src.gt[1]! * src.width) / src.levels[i]! <= want * 1.0001) level = i;
    const scale = src.width / src.levels[level]!;
    const [lw, lh] = [src.levels[level]!, Math.round(src.height / scale)];
    const [px, py] = [src.gt[1]! * scale, -src.gt[5]! * scale];
    const x0 = Math.max(0, Math.floor((sx0 - src.gt[0]!) / px) - 1);
    const x1 = Math.min(lw, Math.ceil((sx1 - src.gt[0]!) / px) + 1);
    const y0 = Math.max(0, Math.floor((src.gt[3]! - sy1) / py) - 1);
    const y1 = Math.min(lh, Math.ceil((src.gt[3]! - sy0) / py) + 1);
    if (x1 <= x0 || y1 <= y0) {
      this.stageMs.read += cpuMs() - c;
      return undefined;
    }
    const [w, h] = [x1 - x0, y1 - y0];
    const window = await gdal.openAsync('window', 'w', 'MEM', w, h, src.bands, src.dataType);
    const out = await gdal.openAsync('tile', 'w', 'MEM', size, size, src.bands + 1, src.dataType);
    try {
      window.geoTransform = [src.gt[0]! + x0 * px, px, 0, src.gt[3]! - y0 * py, 0, -py];
      window.srs = src.srs;
      for (let b = 1; b <= src.bands; b++) {
        const band = src.ds.bands.get(b);
        const from = level === 0 ? band : band.overviews.get(level - 1);
        const pixels = await from.pixels.readAsync(x0, y0, w, h);
        const to = window.bands.get(b);
        if (src.nodata !== null) to.noDataValue = src.nodata;
        await to.pixels.writeAsync(0, 0, w, h, pixels);
      }
      const now = cpuMs();
      this.stageMs.read += now - c;
      c = now;
      out.geoTransform = [minX, span / size, 0, maxY, 0, -span / size];
      out.srs = WEB_MERCATOR;
      await gdal.reprojectImageAsync({
        src: window,
        dst: out,
        s_srs: src.srs,
        t_srs: WEB_MERCATOR,
        resampling: gdal.GRA_NearestNeighbor,
        maxError: 0.125,
        dstAlphaBand: src.bands + 1,
        ...(src.nodata !== null ? { srcNodata: src.nodata } : {}),
      });
      const bands: Pixels[] = [];
      for (let b = 1; b <= src.bands; b++) bands.push(asPixels(await out.bands.get(b).pixels.readAsync(0, 0, size, size)));
      const alpha = await out.bands.get(src.bands + 1).pixels.readAsync(0, 0, size, size);
      const valid = new Uint8Array(size * size);
      for (let i = 0; i < valid.length; i++) valid[i] = alpha[i]! > 0 ? 255 : 0;
      this.stageMs.warp += cpuMs() - c;
      return { bands, valid };
    } finally {
      window.close();
      out.close();
    }
  }

  /** Makes one tile; returns its encoded size (0: no data, as a server's 404/204). */
  async tile(t: TileRequest): Promise<number> {
    const size = 256 * (t.scale ?? 1);
    const hrefs = await this.hrefs(t);
    let merged: Warped | undefined;
    for (const href of hrefs) {
      const w = await this.warp(await this.source(href), t, size);
      if (!w) continue;
      if (!merged) merged = w;
      else {
        // Mosaic, first valid pixel wins: fill only what is still empty.
        const c = cpuMs();
        let missing = 0;
        for (let i = 0; i < merged.valid.length; i++) {
          if (merged.valid[i]) continue;
          if (w.valid[i]) {
            for (let b = 0; b < merged.bands.length; b++) merged.bands[b]![i] = w.bands[b]![i]!;
            merged.valid[i] = 255;
          } else missing++;
        }
        this.stageMs.post += cpuMs() - c;
        if (missing === 0) break;
        continue;
      }
      // A mosaic stops at the first asset that fills the tile.
      if (merged.valid.every((v) => v === 255)) break;
    }
    if (!merged?.valid.some((v) => v === 255)) {
      this.empty++;
      return 0;
    }
    let c = cpuMs();
    const rgb = postProcess(merged, t, size);
    let now = cpuMs();
    this.stageMs.post += now - c;
    c = now;
    const opaque = merged.valid.every((v) => v === 255);
    const format = t.format ?? (opaque ? 'jpg' : 'png');
    const raw = { width: size, height: size, channels: rgb.channels };
    let body: Buffer;
    if (format === 'jpg')
      body = await sharp(rgb.pixels, { raw }).removeAlpha().jpeg({ quality: 85, chromaSubsampling: '4:2:0', optimiseCoding: true }).toBuffer();
    else if (format === 'webp') body = await sharp(rgb.pixels, { raw }).webp({ quality: 75, lossless: false }).toBuffer();
    else body = await sharp(rgb.pixels, { raw }).png({ compressionLevel: 6, adaptiveFiltering: true }).toBuffer();
    now = cpuMs();
    this.stageMs.encode += now - c;
    return body.length;
  }

  close(): void {
    for (const p of this.sources.values()) void p.then((s) => s.ds.close()).catch(() => undefined);
  }
}

let viridis: ReturnType<typeof namedColormap> | undefined;

/** The mix's post-processing, in plain loops, to interleaved 8-bit RGBA (the mask as alpha). */
function postProcess(img: Warped, t: TileRequest, size: number): { pixels: Uint8Array; channels: 4 } {
  const n = size * size;
  const out = new Uint8Array(n * 4);
  const ndvi = t.expression ? /^\((\w+_b\d+)-(\w+_b\d+)\)\/\(\1\+\2\)$/.exec(t.expression) : null;
  if (t.expression && !ndvi) throw new Error(`floor: only the (a-b)/(a+b) expression is implemented, not ${t.expression}`);
  if (ndvi) {
    // Band names are <asset>_b<index>; the mix reads one asset, so the index is the band.
    const a = img.bands[Number(ndvi[1]!.split('_b')[1]) - 1]!;
    const b = img.bands[Number(ndvi[2]!.split('_b')[1]) - 1]!;
    const [lo, hi] = t.rescale ?? [0, 1];
    const k = 255 / (hi - lo);
    viridis ??= namedColormap('viridis');
    if (viridis.kind !== 'lut') throw new Error('viridis is not a table');
    const table = viridis.table;
    for (let i = 0; i < n; i++) {
      const va = a[i]!;
      const vb = b[i]!;
      const v = (va - vb) / (va + vb);
      const idx = Math.min(255, Math.max(0, Math.round((v - lo) * k))) || 0;
      out[i * 4] = table[idx * 4]!;
      out[i * 4 + 1] = table[idx * 4 + 1]!;
      out[i * 4 + 2] = table[idx * 4 + 2]!;
      out[i * 4 + 3] = img.valid[i]!;
    }
    return { pixels: out, channels: 4 };
  }
  const bands = img.bands.length >= 3 ? img.bands.slice(0, 3) : [img.bands[0]!, img.bands[0]!, img.bands[0]!];
  if (t.rescale) {
    const [lo, hi] = t.rescale;
    const k = 255 / (hi - lo);
    for (let c = 0; c < 3; c++) {
      const src = bands[c]!;
      for (let i = 0; i < n; i++) out[i * 4 + c] = Math.min(255, Math.max(0, Math.round((src[i]! - lo) * k)));
    }
  } else {
    for (let c = 0; c < 3; c++) {
      const src = bands[c]!;
      for (let i = 0; i < n; i++) out[i * 4 + c] = src[i]!;
    }
  }
  for (let i = 0; i < n; i++) out[i * 4 + 3] = img.valid[i]!;
  return { pixels: out, channels: 4 };
}

function quadkey(x: number, y: number, z: number): string {
  let s = '';
  for (let i = z; i > 0; i--) s += String(((x >> (i - 1)) & 1) + 2 * ((y >> (i - 1)) & 1));
  return s;
}

async function main(): Promise<void> {
  const [file, durationArg, repsArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: floor.js <tiles.json> <duration ms> <repetitions>');
  const tiles = JSON.parse(await fs.readFile(file, 'utf8')) as TileRequest[];
  const durationMs = Number(durationArg ?? 3000);
  const reps = Number(repsArg ?? 1);
  const floor = new Floor();
  // Warm-up: documents fetched, files opened, blocks in GDAL's cache (a warm server's state).
  for (const t of tiles) await floor.tile(t);
  for (const s of STAGES) floor.stageMs[s] = 0;
  floor.empty = 0;
  const cpuMsPerTile: number[] = [];
  let total = 0;
  for (let r = 0; r < reps; r++) {
    const c0 = cpuMs();
    const deadline = performance.now() + durationMs;
    let count = 0;
    do {
      for (const t of tiles) await floor.tile(t);
      count += tiles.length;
    } while (performance.now() < deadline);
    cpuMsPerTile.push((cpuMs() - c0) / count);
    total += count;
  }
  floor.close();
  const stages = Object.fromEntries(STAGES.map((s) => [s, floor.stageMs[s] / total]));
  process.stdout.write(`${JSON.stringify({ cpuMsPerTile, stages, tiles: tiles.length, empty: floor.empty / (total / tiles.length) })}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
