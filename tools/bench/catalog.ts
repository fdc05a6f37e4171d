/**
 * The catalogue without a database at scale (issue 41): generated stac-geoparquet catalogues of
 * 10,000 and 1,000,000 items (tools/catalog/write.py, rustac; made once into .bench/data/), each
 * read as TESSERA_CATALOG reads it, measuring the read's time, the heap it holds (after a full
 * GC), a search's first compilation, and the item lookup of random Web Mercator tiles (zoom 6 to
 * 12) at p50/p99, and of points. Not a test: run with `make bench-catalog` (a few minutes, most of
 * it writing the million-item file the first time).
 *
 *   node --expose-gc dist/tools/bench/catalog.js [COUNT...]
 */
import { existsSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { GeoparquetCatalogue } from '../../src/catalog/catalogue.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DATA = path.join(ROOT, '.bench/data');

function catalogueFile(count: number): string {
  const file = path.join(DATA, `catalog-${count}.parquet`);
  if (existsSync(file)) return file;
  mkdirSync(DATA, { recursive: true });
  const setup = spawnSync('bash', [path.join(ROOT, 'tools/catalog/setup.sh')], { stdio: 'inherit' });
  if (setup.status !== 0) throw new Error('tools/catalog/setup.sh failed');
  const started = Date.now();
  const r = spawnSync(path.join(ROOT, '.parity/geoparquet/bin/python'), [path.join(ROOT, 'tools/catalog/write.py'), '--generate', String(count), file], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('write.py failed');
  console.log(`catalog: wrote ${count} items in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return file;
}

function heapMiB(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 2 ** 20;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** A Web Mercator tile's corners in metres. */
function mercatorTile(z: number, x: number, y: number): [number, number, number, number] {
  const size = (2 * Math.PI * 6378137) / 2 ** z;
  const o = Math.PI * 6378137;
  return [-o + x * size, o - (y + 1) * size, -o + (x + 1) * size, o - y * size];
}

function tileOf(lon: number, lat: number, z: number): [number, number] {
  const n = 2 ** z;
  const r = (lat * Math.PI) / 180;
  return [Math.floor(((lon + 180) / 360) * n), Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n)];
}

async function measure(count: number): Promise<void> {
  const file = catalogueFile(count);
  const before = heapMiB();
  const catalogue = new GeoparquetCatalogue({
    location: file,
    limits: { maxItems: 10_000_000, maxBytes: 64 * 2 ** 30 },
    storeFile: undefined,
    maxSearches: 100,
    refreshMs: 0,
  });
  const started = performance.now();
  await catalogue.start();
  const loaded = await catalogue.loaded();
  const loadSeconds = (performance.now() - started) / 1000;
  const held = heapMiB() - before;
  const limits = { scanLimit: 10_000, itemsLimit: 100, timeLimitSeconds: 5, exitWhenFull: true, skipCovered: true };
  const record = await catalogue.register({
    search: { collections: ['s2'], filter: { op: '<', args: [{ property: 'eo:cloud_cover' }, 60] }, 'filter-lang': 'cql2-json' },
    metadata: { type: 'mosaic' },
  });
  const compileStarted = performance.now();
  await catalogue.items(record.hash, { webMercator: mercatorTile(0, 0, 0) }, { ...limits, itemsLimit: 1 });
  const compileMs = performance.now() - compileStarted;
  let seed = 7;
  const next = (): number => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  const tileTimes: number[] = [];
  let found = 0;
  for (let k = 0; k < 20_000; k++) {
    const z = 6 + (k % 7);
    const [x, y] = tileOf(-9 + next() * 38, 36 + next() * 33, z);
    const t0 = performance.now();
    const text = await catalogue.items(record.hash, { webMercator: mercatorTile(z, x, y) }, limits);
    tileTimes.push(performance.now() - t0);
    if (k < 1000) found += (JSON.parse(text) as { features: unknown[] }).features.length;
  }
  const pointTimes: number[] = [];
  for (let k = 0; k < 5_000; k++) {
    const geojson = `{"type":"Point","coordinates":[${(-9 + next() * 38).toFixed(5)},${(36 + next() * 33).toFixed(5)}]}`;
    const t0 = performance.now();
    await catalogue.items(record.hash, { geojson }, { ...limits, exitWhenFull: false, skipCovered: false });
    pointTimes.push(performance.now() - t0);
  }
  tileTimes.sort((a, b) => a - b);
  pointTimes.sort((a, b) => a - b);
  console.log(
    `catalog ${count} items: read in ${loadSeconds.toFixed(2)} s, heap held ${held.toFixed(0)} MiB; first search compiled in ${compileMs.toFixed(0)} ms; ` +
      `tile lookup p50 ${percentile(tileTimes, 50).toFixed(3)} ms, p99 ${percentile(tileTimes, 99).toFixed(3)} ms (${(found / 1000).toFixed(1)} items a tile); ` +
      `point lookup p50 ${percentile(pointTimes, 50).toFixed(3)} ms, p99 ${percentile(pointTimes, 99).toFixed(3)} ms; ${loaded.table.count} items`,
  );
  await catalogue.close();
}

const counts = process.argv.slice(2).map(Number);
for (const count of counts.length > 0 ? counts : [10_000, 1_000_000]) await measure(count);
