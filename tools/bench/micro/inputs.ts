/**
 * Inputs of the micro-benchmarks, built once before any timing: the server's long-lived services
 * (dataset pool, metadata caches) over the shared TiTiler fixtures, the Web Mercator tile at the
 * centre of a fixture at a given zoom (checked to lie wholly inside the data and to need a warp, so
 * the benchmark measures what a real tile request costs), a STAC item pointing at local fixtures,
 * and deterministic synthetic bands (gradient + noise) for the pure array kernels.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadSettings } from '../../../src/config.js';
import { Services } from '../../../src/services.js';
import { RasterReads, type ValueOptions } from '../../../src/source/reader.js';
import { srsFrom, transformPoint } from '../../../src/gdal/crs.js';
import { getTms, WEB_MERCATOR_QUAD } from '../../../src/tms/registry.js';
import type { Tile, TileMatrixSet } from '../../../src/tms/grid.js';
import type { ImageData } from '../../../src/image/image-data.js';
import { FIXTURES } from '../../../test/helpers/paths.js';
import { mulberry32 } from '../../../src/demo/terrain.js';
import { bboxPolygon } from '../../../test/helpers/geojson.js';

/** What the tile routes read with when the query says nothing (TiTiler's defaults). */
export const DEFAULT_VALUES: ValueOptions = { unscale: false, resampling: 'nearest', reproject: 'nearest' };

export function webMercator(): TileMatrixSet {
  const tms = getTms(WEB_MERCATOR_QUAD);
  if (!tms) throw new Error(`the ${WEB_MERCATOR_QUAD} grid is missing from the registry`);
  return tms;
}

/** One fixture file behind the server's reader, and the tile the benchmarks read from it. */
export interface TileSource {
  file: string;
  reader: RasterReads;
  tile: Tile;
}

export class BenchInputs {
  readonly services: Services;
  readonly tms = webMercator();
  /** Holds the generated STAC item; removed by close(). */
  private readonly scratch: string;
  private items = 0;

  constructor() {
    this.scratch = mkdtempSync(path.join(os.tmpdir(), 'tessera-micro-'));
    this.services = new Services(loadSettings({ logLevel: 'silent', allowedNetworks: ['127.0.0.0/8'], allowedLocalRoots: [this.scratch, FIXTURES] }));
  }

  /** The reader of a fixture (as the routes make one per asset) and its centre tile at `zoom`. */
  async tileSource(file: string, zoom: number): Promise<TileSource> {
    const full = path.join(FIXTURES, file);
    const reader = new RasterReads(this.services.sources.source(full, file));
    const meta = await reader.meta();
    const [l, b, r, t] = meta.bounds;
    const [mx, my] = transformPoint(srsFrom(meta.crs), srsFrom(this.tms.srs), (l + r) / 2, (b + t) / 2);
    const tile = this.tms.tileAt(mx, my, zoom);
    if (!(await reader.tileExists(this.tms, tile.x, tile.y, tile.z))) throw new Error(`${file}: centre tile ${tileName(tile)} is outside the data`);
    return { file, reader, tile };
  }

  /**
   * Reads the source's tile at `tilesize` (plus `buffer` pixels a side) and checks that it was
   * warped and is valid everywhere, i.e. that the benchmark reads real data, not nodata padding.
   */
  async readTile(src: TileSource, tilesize: number, buffer = 0): Promise<ImageData> {
    const { x, y, z } = src.tile;
    const plan = await src.reader.planTile(this.tms, x, y, z, tilesize, buffer > 0 ? { buffer } : {});
    if (plan.target.kind !== 'warp') throw new Error(`${src.file}: tile ${tileName(src.tile)} does not need a warp`);
    const img = await src.reader.read(plan, DEFAULT_VALUES);
    for (const mask of img.masks) {
      if (mask.includes(0)) throw new Error(`${src.file}: tile ${tileName(src.tile)} is not wholly inside the data`);
    }
    return img;
  }

  /** The whole fixture resampled to `size`², as /statistics reads its preview. */
  async readPreview(file: string, size: number): Promise<ImageData> {
    const reader = new RasterReads(this.services.sources.source(path.join(FIXTURES, file), file));
    const plan = await reader.planPreview({ width: size, height: size });
    return reader.read(plan, DEFAULT_VALUES);
  }

  /**
   * A file:// URL of a STAC item whose assets are local fixtures, with the union of their
   * geographic bounds as bbox (what rio-tiler checks tiles against first).
   */
  async stacItem(assets: Readonly<Record<string, string>>): Promise<string> {
    const bounds = await Promise.all(Object.values(assets).map((file) => this.services.sources.source(path.join(FIXTURES, file), file).geographicBounds()));
    const bbox = [
      Math.min(...bounds.map((bb) => bb[0])),
      Math.min(...bounds.map((bb) => bb[1])),
      Math.max(...bounds.map((bb) => bb[2])),
      Math.max(...bounds.map((bb) => bb[3])),
    ];
    const item = {
      type: 'Feature',
      stac_version: '1.0.0',
      id: 'tessera-micro-bench',
      properties: { datetime: '2020-03-18T09:11:33Z' },
      geometry: bboxPolygon(bbox),
      bbox,
      links: [],
      assets: Object.fromEntries(
        Object.entries(assets).map(([name, file]) => [
          name,
          { href: pathToFileURL(path.join(FIXTURES, file)).href, type: 'image/tiff; application=geotiff; profile=cloud-optimized' },
        ]),
      ),
    };
    const file = path.join(this.scratch, `item-${++this.items}.json`);
    writeFileSync(file, JSON.stringify(item));
    return pathToFileURL(file).href;
  }

  async close(): Promise<void> {
    await this.services.close();
    rmSync(this.scratch, { recursive: true, force: true });
  }
}

export function tileName(t: Tile): string {
  return `${t.z}/${t.x}/${t.y}`;
}

/**
 * A `size`² band that looks like imagery: a diagonal gradient, a slow ripple and ±5% noise over
 * `[0, scale]`; `seed` makes bands differ. Values are written into the dtype's array (uint16
 * truncates), so float32 bands hold reflectances and uint16 bands digital numbers.
 */
export function syntheticBand(dtype: 'float32' | 'uint16', size: number, seed: number, scale: number): Float32Array | Uint16Array {
  const out = dtype === 'float32' ? new Float32Array(size * size) : new Uint16Array(size * size);
  const random = mulberry32(seed); // seeded: every run benchmarks the same numbers
  const phase = seed * 0.7;
  for (let y = 0, i = 0; y < size; y++) {
    for (let x = 0; x < size; x++, i++) {
      const gradient = (x + y) / (2 * size);
      const ripple = 0.15 * Math.sin((x * 6.3) / size + phase) * Math.cos((y * 4.1) / size - phase);
      const noise = 0.05 * (random() - 0.5);
      out[i] = scale * Math.min(1, Math.max(0, 0.1 + 0.7 * gradient + ripple + noise));
    }
  }
  return out;
}

/** An ImageData of synthetic bands with every pixel valid (one shared mask). */
export function syntheticImage(dtype: 'float32' | 'uint16', size: number, bands: number, scale: number): ImageData {
  const mask = new Uint8Array(size * size).fill(255);
  return {
    width: size,
    height: size,
    dtype,
    bands: Array.from({ length: bands }, (_, b) => syntheticBand(dtype, size, b + 1, scale)),
    masks: Array.from({ length: bands }, () => mask),
    bandNames: Array.from({ length: bands }, (_, b) => `b${b + 1}`),
    bounds: [0, 0, size, size],
    crs: 'EPSG:3857',
  };
}
