/**
 * `tessera demo`: the generated files are real COGs with the promised grid, types and nodata, the
 * DEM looks like terrain and its statistics metadata is true, the STAC item and the MosaicJSON
 * describe the rasters correctly, and a second run reuses the folder.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { makeDemoData } from '../src/demo/make.js';
import { loadLocal } from '../src/catalog/geoparquet.js';
import { gdal, type Dataset } from '../src/gdal/gdal.js';
import { getTms } from '../src/tms/registry.js';

type BBox = [number, number, number, number];

const BASE_URL = 'http://tiles.example.test:9000/some/demo/';
const ORIGIN: [number, number] = [420_000, 5_160_000];
const PIXEL = 30;
const RASTER_EXT = 'https://stac-extensions.github.io/raster/v1.1.0/schema.json';
const COG_TYPE = 'image/tiff; application=geotiff; profile=cloud-optimized';

let dir: string;
let written: string[];
let firstRunMs: number;

function file(name: string): string {
  return path.join(dir, name);
}

async function withDataset<T>(name: string, fn: (ds: Dataset) => T | Promise<T>): Promise<T> {
  const ds = await gdal.openAsync(file(name));
  try {
    return await fn(ds);
  } finally {
    ds.close();
  }
}

async function readJson(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await fs.readFile(file(name), 'utf8')) as Record<string, unknown>;
}

async function sha256(name: string): Promise<string> {
  return createHash('sha256')
    .update(await fs.readFile(file(name)))
    .digest('hex');
}

/** Independent of the generator: the raster's corners and edge midpoints in lon/lat. */
function footprintPoints(ds: Dataset): Array<[number, number]> {
  const [x0, dxCol, dxRow, y0, dyCol, dyRow] = ds.geoTransform as [number, number, number, number, number, number];
  const { x: w, y: h } = ds.rasterSize;
  const ct = new gdal.CoordinateTransformation(ds.srs!, gdal.SpatialReference.fromEPSG(4326));
  const points: Array<[number, number]> = [];
  for (const px of [0, w / 2, w]) {
    for (const py of [0, h / 2, h]) {
      const p = ct.transformPoint(x0 + px * dxCol + py * dxRow, y0 + px * dyCol + py * dyRow);
      points.push([p.x, p.y]);
    }
  }
  return points;
}

function boundsOf(points: ReadonlyArray<readonly [number, number]>): BBox {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

function contains(outer: readonly number[], [x, y]: readonly [number, number]): boolean {
  return x >= outer[0]! && x <= outer[2]! && y >= outer[1]! && y <= outer[3]!;
}

function quadkeyToTile(key: string): { x: number; y: number; z: number } {
  let x = 0;
  let y = 0;
  for (const digit of key) {
    const d = Number(digit);
    x = x * 2 + (d & 1);
    y = y * 2 + (d >> 1);
  }
  return { x, y, z: key.length };
}

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-demo-'));
  const t0 = performance.now();
  written = await makeDemoData(dir, { baseUrl: BASE_URL });
  firstRunMs = performance.now() - t0;
});

after(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('tessera demo: files', () => {
  it('returns the paths it wrote, all inside the output folder', async () => {
    const names = written.map((p) => path.relative(dir, p)).sort();
    assert.deepEqual(names, [
      'catalog/demo.json',
      'catalog/items.parquet',
      'dem.tif',
      'item.json',
      'mosaic-0.tif',
      'mosaic-1.tif',
      'mosaic-2.tif',
      'mosaic-3.tif',
      'mosaic.json',
      'rgb.tif',
    ]);
    for (const p of written) assert.ok((await fs.stat(p)).size > 0, p);
  });

  it('writes the crops as a stac-geoparquet collection tessera reads back', async () => {
    const { table, collections } = await loadLocal(path.join(dir, 'catalog'), { maxItems: 100, maxBytes: 1 << 20 });
    assert.deepEqual(table.ids, ['crop-0', 'crop-1', 'crop-2', 'crop-3']);
    assert.deepEqual([...collections.keys()], ['demo']);
    const first = JSON.parse(table.output(0)) as { assets: { rgb: { href: string; roles: string[] } }; collection: string };
    assert.equal(first.assets.rgb.href, `${BASE_URL}mosaic-0.tif`);
    assert.deepEqual(first.assets.rgb.roles, ['data']);
    assert.equal(first.collection, 'demo');
  });

  it('generates everything well within the time budget', () => {
    assert.ok(firstRunMs < 10_000, `took ${firstRunMs.toFixed(0)} ms`);
  });
});

describe('tessera demo: COGs', () => {
  const cogs: Array<{ name: string; size: number; bands: number; type: string; nodata: number; offset: [number, number] }> = [
    { name: 'dem.tif', size: 1024, bands: 1, type: 'Float32', nodata: -9999, offset: [0, 0] },
    { name: 'rgb.tif', size: 1024, bands: 3, type: 'Byte', nodata: 0, offset: [0, 0] },
    { name: 'mosaic-0.tif', size: 600, bands: 3, type: 'Byte', nodata: 0, offset: [0, 0] },
    { name: 'mosaic-1.tif', size: 600, bands: 3, type: 'Byte', nodata: 0, offset: [424, 0] },
    { name: 'mosaic-2.tif', size: 600, bands: 3, type: 'Byte', nodata: 0, offset: [0, 424] },
    { name: 'mosaic-3.tif', size: 600, bands: 3, type: 'Byte', nodata: 0, offset: [424, 424] },
  ];
  for (const spec of cogs) {
    it(`${spec.name} is a ${spec.size}² ${spec.type} COG in EPSG:32632 with nodata ${spec.nodata}`, async () => {
      await withDataset(spec.name, (ds) => {
        const structure = ds.getMetadata('IMAGE_STRUCTURE') as Record<string, string>;
        assert.equal(structure.LAYOUT, 'COG');
        assert.equal(structure.COMPRESSION, 'DEFLATE');
        assert.equal(ds.driver.description, 'GTiff');
        assert.deepEqual(ds.rasterSize, { x: spec.size, y: spec.size });
        assert.equal(ds.bands.count(), spec.bands);
        assert.equal(ds.srs?.getAuthorityName(null), 'EPSG');
        assert.equal(ds.srs?.getAuthorityCode(null), '32632');
        assert.deepEqual(ds.geoTransform, [ORIGIN[0] + spec.offset[0] * PIXEL, PIXEL, 0, ORIGIN[1] - spec.offset[1] * PIXEL, 0, -PIXEL]);
        for (const band of ds.bands) {
          assert.equal(band.dataType, spec.type);
          assert.equal(band.noDataValue, spec.nodata);
          assert.deepEqual(band.blockSize, { x: 256, y: 256 });
          assert.ok(band.overviews.count() >= 1, 'has internal overviews');
          const smallest = band.overviews.get(band.overviews.count() - 1);
          assert.ok(smallest.size.x <= 256, `coarsest overview ${smallest.size.x} px fits a tile`);
        }
        if (spec.bands === 3) {
          assert.deepEqual(
            ds.bands.map((b) => b.colorInterpretation),
            ['Red', 'Green', 'Blue'],
          );
        }
      });
    });
  }
});

describe('tessera demo: pixels', () => {
  it('the DEM is terrain: 400–4000 m, a real relief, nodata only in the south-east corner', async () => {
    await withDataset('dem.tif', (ds) => {
      const band = ds.bands.get(1);
      const values = band.pixels.read(0, 0, 1024, 1024, new Float32Array(1024 * 1024));
      let min = Infinity;
      let max = -Infinity;
      let nodata = 0;
      for (let i = 0; i < values.length; i++) {
        const v = values[i]!;
        if (v === -9999) {
          nodata++;
          const row = Math.floor(i / 1024);
          const col = i % 1024;
          assert.ok(row > 512 && col > 512, `nodata at (${col}, ${row}) outside the SE corner`);
          continue;
        }
        assert.ok(Number.isFinite(v), `pixel ${i} is ${v}`);
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      assert.ok(min >= 400 && min < 700, `min ${min}`);
      assert.ok(max > 3000 && max <= 4000, `max ${max}`);
      assert.ok(nodata > 10_000 && nodata < 100_000, `${nodata} nodata pixels`);
      assert.equal(values[1024 * 1024 - 1], -9999, 'SE corner pixel is nodata');

      const meta = band.getMetadata() as Record<string, string>;
      assert.equal(Number(meta.STATISTICS_MINIMUM), min);
      assert.equal(Number(meta.STATISTICS_MAXIMUM), max);
      const validPercent = (100 * (values.length - nodata)) / values.length;
      assert.ok(Math.abs(Number(meta.STATISTICS_VALID_PERCENT) - validPercent) < 1e-9);
    });
  });

  it('the DEM is smooth at 30 m (no speckle): neighbours rarely differ by more than 60 m', async () => {
    await withDataset('dem.tif', (ds) => {
      const values = ds.bands.get(1).pixels.read(0, 0, 1024, 512, new Float32Array(1024 * 512));
      let steep = 0;
      for (let i = 1; i < values.length; i++) {
        if (i % 1024 !== 0 && Math.abs(values[i]! - values[i - 1]!) > 60) steep++;
      }
      assert.ok(steep < values.length * 0.01, `${steep} steps over 60 m`);
    });
  });

  it('the RGB scene is 0 exactly where the DEM is nodata, and never 0 elsewhere', async () => {
    const dem = await withDataset('dem.tif', (ds) => ds.bands.get(1).pixels.read(0, 0, 1024, 1024, new Float32Array(1024 * 1024)));
    const planes = await withDataset('rgb.tif', (ds) => [1, 2, 3].map((b) => ds.bands.get(b).pixels.read(0, 0, 1024, 1024, new Uint8Array(1024 * 1024))));
    const colours = new Set<number>();
    for (let i = 0; i < dem.length; i++) {
      const empty = dem[i] === -9999;
      for (const plane of planes) assert.equal(plane[i] === 0, empty, `pixel ${i}`);
      if (i % 97 === 0) colours.add((planes[0]![i]! << 16) | (planes[1]![i]! << 8) | planes[2]![i]!);
    }
    assert.ok(colours.size > 1000, `only ${colours.size} distinct colours: not a shaded relief`);
  });

  it('each mosaic source is exactly its window of the RGB scene', async () => {
    const offsets: Array<[number, number]> = [
      [0, 0],
      [424, 0],
      [0, 424],
      [424, 424],
    ];
    for (const [i, [x, y]] of offsets.entries()) {
      for (const b of [1, 3]) {
        const whole = await withDataset('rgb.tif', (ds) => ds.bands.get(b).pixels.read(x, y, 600, 600, new Uint8Array(600 * 600)));
        const crop = await withDataset(`mosaic-${i}.tif`, (ds) => ds.bands.get(b).pixels.read(0, 0, 600, 600, new Uint8Array(600 * 600)));
        assert.ok(Buffer.from(crop).equals(Buffer.from(whole)), `mosaic-${i}.tif band ${b}`);
      }
    }
  });
});

describe('tessera demo: STAC item', () => {
  it('is a STAC 1.0.0 Item with the two COGs as relative-href assets', async () => {
    const item = await readJson('item.json');
    assert.equal(item.type, 'Feature');
    assert.equal(item.stac_version, '1.0.0');
    assert.equal(item.id, 'tessera-demo');
    assert.deepEqual(item.links, []);
    assert.ok((item.stac_extensions as string[]).includes(RASTER_EXT));
    const properties = item.properties as Record<string, unknown>;
    assert.ok(!Number.isNaN(Date.parse(properties.datetime as string)));

    const assets = item.assets as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(assets).sort(), ['dem', 'rgb']);
    for (const [key, asset] of Object.entries(assets)) {
      assert.equal(asset.href, `./${key}.tif`);
      assert.equal(asset.type, COG_TYPE);
      assert.deepEqual(asset.roles, ['data']);
      assert.equal(typeof asset.title, 'string');
      // The href resolves, against the item's own location, to the file next to it.
      const resolved = fileURLToPath(new URL(asset.href as string, pathToFileURL(file('item.json'))));
      assert.equal(resolved, file(`${key}.tif`));
    }
  });

  it('declares the DEM band as float32, nodata -9999, with the true statistics', async () => {
    const item = await readJson('item.json');
    const dem = (item.assets as Record<string, Record<string, unknown>>).dem!;
    const [band] = dem['raster:bands'] as Array<Record<string, unknown>>;
    const meta = await withDataset('dem.tif', (ds) => ds.bands.get(1).getMetadata() as Record<string, string>);
    assert.equal(band?.data_type, 'float32');
    assert.equal(band?.nodata, -9999);
    assert.deepEqual(band?.statistics, {
      minimum: Number(meta.STATISTICS_MINIMUM),
      maximum: Number(meta.STATISTICS_MAXIMUM),
    });
  });

  it('has a bbox and a closed polygon geometry that contain the raster footprint', async () => {
    const item = await readJson('item.json');
    const bbox = item.bbox as number[];
    assert.equal(bbox.length, 4);
    const footprint = await withDataset('dem.tif', footprintPoints);
    for (const point of footprint) assert.ok(contains(bbox, point), `${point} outside ${bbox}`);
    // Tight: within ~100 m of the footprint's own bounds, not a loose world box.
    const tight = boundsOf(footprint);
    for (let k = 0; k < 4; k++) assert.ok(Math.abs(bbox[k]! - tight[k]!) < 1e-3, `bbox[${k}]`);
    assert.ok(bbox[0]! > 7.9 && bbox[2]! < 8.4 && bbox[1]! > 46.3 && bbox[3]! < 46.6);

    const geometry = item.geometry as { type: string; coordinates: Array<Array<[number, number]>> };
    assert.equal(geometry.type, 'Polygon');
    const ring = geometry.coordinates[0]!;
    assert.ok(ring.length >= 5);
    assert.deepEqual(ring[0], ring[ring.length - 1]);
    for (const point of ring) assert.ok(contains(bbox, point));
    // Counter-clockwise exterior ring (RFC 7946): positive shoelace area.
    let area = 0;
    for (let k = 0; k + 1 < ring.length; k++) area += ring[k]![0] * ring[k + 1]![1] - ring[k + 1]![0] * ring[k]![1];
    assert.ok(area > 0);
  });
});

describe('tessera demo: MosaicJSON', () => {
  it('is MosaicJSON 0.0.3 with zooms suited to 30 m data', async () => {
    const mosaic = await readJson('mosaic.json');
    assert.equal(mosaic.mosaicjson, '0.0.3');
    // 30 m at 46.5°N is ~44 m in Web Mercator units: zoom 12's pixel (38 m) is the closest.
    assert.equal(mosaic.maxzoom, 12);
    const minzoom = mosaic.minzoom as number;
    assert.ok(minzoom >= 9 && minzoom < 12, `minzoom ${minzoom}`);
    assert.equal(mosaic.quadkey_zoom, minzoom);
    const bounds = mosaic.bounds as number[];
    const center = mosaic.center as number[];
    assert.equal(center.length, 3);
    assert.equal(center[2], minzoom);
    assert.ok(contains(bounds, [center[0]!, center[1]!]));
    for (let i = 0; i < 4; i++) {
      const footprint = await withDataset(`mosaic-${i}.tif`, footprintPoints);
      for (const point of footprint) assert.ok(contains(bounds, point), `mosaic-${i} outside bounds`);
    }
  });

  it('indexes every quadkey with exactly the sources that intersect it, as absolute URLs', async () => {
    const mosaic = await readJson('mosaic.json');
    const zoom = mosaic.quadkey_zoom as number;
    const tiles = mosaic.tiles as Record<string, string[]>;
    const keys = Object.keys(tiles);
    assert.ok(keys.length > 1, 'several quadkeys');

    const tms = getTms('WebMercatorQuad')!;
    const toWgs84 = new gdal.CoordinateTransformation(gdal.SpatialReference.fromEPSG(3857), gdal.SpatialReference.fromEPSG(4326));
    const sources = await Promise.all(
      [0, 1, 2, 3].map(async (i) => ({
        url: `${BASE_URL}mosaic-${i}.tif`,
        bounds: boundsOf(await withDataset(`mosaic-${i}.tif`, footprintPoints)),
      })),
    );
    const used = new Set<string>();
    for (const key of keys) {
      assert.match(key, new RegExp(`^[0-3]{${zoom}}$`));
      const [l, b, r, t] = tms.xyBounds(quadkeyToTile(key));
      const sw = toWgs84.transformPoint(l, b);
      const ne = toWgs84.transformPoint(r, t);
      const expected = sources.filter((s) => s.bounds[0] < ne.x && sw.x < s.bounds[2] && s.bounds[1] < ne.y && sw.y < s.bounds[3]).map((s) => s.url);
      assert.deepEqual(tiles[key], expected, `quadkey ${key}`);
      for (const url of tiles[key]!) {
        assert.ok(url.startsWith(BASE_URL), url);
        used.add(url);
      }
    }
    assert.equal(used.size, 4, 'every source is indexed somewhere');
  });
});

describe('tessera demo: reruns', () => {
  it('a second run with the same options reuses the folder without rewriting it', async () => {
    const before = await Promise.all(written.map(async (p) => (await fs.stat(p)).mtimeMs));
    const t0 = performance.now();
    const again = await makeDemoData(dir, { baseUrl: BASE_URL });
    const elapsed = performance.now() - t0;
    assert.deepEqual(again, written);
    assert.ok(elapsed < 200 && elapsed < firstRunMs / 5, `rerun took ${elapsed.toFixed(0)} ms`);
    const afterwards = await Promise.all(written.map(async (p) => (await fs.stat(p)).mtimeMs));
    assert.deepEqual(afterwards, before);
  });

  it('a different base URL regenerates, byte-identical except for the mosaic URLs', async () => {
    const hashes = await Promise.all(['dem.tif', 'rgb.tif', 'mosaic-3.tif', 'item.json'].map(sha256));
    const other = 'http://127.0.0.1:8123/demo/';
    await makeDemoData(dir, { baseUrl: other });
    const mosaic = await readJson('mosaic.json');
    for (const urls of Object.values(mosaic.tiles as Record<string, string[]>)) {
      for (const url of urls) assert.ok(url.startsWith(other), url);
    }
    assert.deepEqual(await Promise.all(['dem.tif', 'rgb.tif', 'mosaic-3.tif', 'item.json'].map(sha256)), hashes);
  });

  it('a missing output file triggers regeneration', async () => {
    await fs.rm(file('rgb.tif'));
    await makeDemoData(dir);
    await withDataset('rgb.tif', (ds) => assert.equal(ds.bands.count(), 3));
    const mosaic = await readJson('mosaic.json');
    const first = Object.values(mosaic.tiles as Record<string, string[]>)[0]![0]!;
    assert.ok(first.startsWith('http://127.0.0.1:8000/demo/'), `default base URL, got ${first}`);
  });
});
