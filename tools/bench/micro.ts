/**
 * tessera's in-process micro-benchmarks of the hot paths of a tile request, one tinybench task each:
 * reading and warping a Web Mercator tile from a local COG through the server's own reader (and a
 * whole STAC tile with an expression), band-math expressions, rescale and colormaps, every encoder
 * behind the route's render step, /statistics on a 1024² band, and the hillshade algorithm.
 *
 * Why: the load benchmark says how fast the server is; this says where the time of one request goes,
 * on numbers reproducible from run to run (fixed fixtures, seeded synthetic data, inputs built
 * before timing), so a change to one kernel shows up as a change in one row.
 *
 * Reads hit warm dataset handles and GDAL's block cache, as repeated tiles do on a running server:
 * they measure planning, warping and masking, not fetching or decompressing the file.
 *
 * Usage (after a build): node dist/tools/bench/micro.js [--quick] [--out DIR] [--filter REGEX]
 * Writes DIR/micro.md (also printed) and DIR/micro.json; DIR defaults to .bench/ at the repo root.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Bench } from 'tinybench';
import { BenchInputs, DEFAULT_VALUES, syntheticBand, syntheticImage, tileName, type TileSource } from './micro/inputs.js';
import { machineFacts, taskRow, toMarkdown, type Report, type RunSettings, type TaskRow } from './micro/report.js';
import { stacItemReader, type StacLayerOptions } from '../../src/readers/stac.js';
import { evaluateExpression, parseExpression, type ExpressionInput } from '../../src/image/expression.js';
import { applyRescale } from '../../src/image/rescale.js';
import { applyColormap, namedColormap } from '../../src/image/colormap.js';
import { renderImage } from '../../src/image/render.js';
import { imageStatistics, parseStatisticsOptions } from '../../src/image/statistics.js';
import { prepareAlgorithm } from '../../src/image/algorithms/index.js';
import type { ImageFormat } from '../../src/image/formats.js';
import type { ImageData } from '../../src/image/image-data.js';
import { REPO_ROOT } from '../../test/helpers/paths.js';

/** A task ready to time: the call, whether it returns a promise, and the output size of encoders. */
interface Prepared {
  run: () => unknown;
  async: boolean;
  bytes?: number;
}

interface MicroTask {
  name: string;
  /** Builds the inputs (untimed), checks one call works, and returns the call to time. */
  prepare: () => Promise<Prepared>;
}

const USAGE = 'usage: node dist/tools/bench/micro.js [--quick] [--out DIR] [--filter REGEX]';

const BUDGETS: Record<RunSettings['mode'], Pick<RunSettings, 'timeMs' | 'iterations' | 'warmupTimeMs' | 'warmupIterations'>> = {
  // ~30 tasks: ≲ 20 s in all with quick, ≲ 90 s by default (slow tasks run their minimum samples).
  quick: { timeMs: 300, iterations: 5, warmupTimeMs: 50, warmupIterations: 2 },
  default: { timeMs: 2000, iterations: 20, warmupTimeMs: 250, warmupIterations: 5 },
};

/** Shares one input between tasks, built on first use only (a filtered run builds what it needs). */
function once<T>(build: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= build());
}

function side(img: ImageData): string {
  return img.width === img.height ? `${img.width}²` : `${img.width}×${img.height}`;
}

function expectSize(what: string, img: ImageData, width: number, height: number): void {
  if (img.width !== width || img.height !== height) throw new Error(`${what}: got ${side(img)}, expected ${width}×${height}`);
}

function defineTasks(inputs: BenchInputs): MicroTask[] {
  const tms = inputs.tms;
  const cogZoom = 9;
  const tciZoom = 10;
  const stacZoom = 10;
  const demZoom = 16;
  const cog = once(() => inputs.tileSource('cog.tif', cogZoom));
  const tci = once(() => inputs.tileSource('TCI.tif', tciZoom));
  const dem = once(() => inputs.tileSource('dem.tif', demZoom));
  const cogTile = { 256: once(async () => inputs.readTile(await cog(), 256)), 512: once(async () => inputs.readTile(await cog(), 512)) };
  const tciTile = { 256: once(async () => inputs.readTile(await tci(), 256)), 512: once(async () => inputs.readTile(await tci(), 512)) };
  const tasks: MicroTask[] = [];

  // ---- 1. tile reads: what stacTile does per asset (exists check, plan, read + warp + mask)
  const readTask = (name: string, source: () => Promise<TileSource>): MicroTask => ({
    name,
    prepare: async () => {
      const src = await source();
      await inputs.readTile(src, 256);
      const { x, y, z } = src.tile;
      const run = async (): Promise<ImageData> => {
        if (!(await src.reader.tileExists(tms, x, y, z))) throw new Error(`${src.file}: tile ${tileName(src.tile)} is outside the data`);
        const plan = await src.reader.planTile(tms, x, y, z, 256, {});
        return src.reader.read(plan, DEFAULT_VALUES);
      };
      return { run, async: true };
    },
  });
  tasks.push(readTask(`read+warp cog.tif 1×uint16 256² z${cogZoom}`, cog));
  tasks.push(readTask(`read+warp TCI.tif 3×uint8 256² z${tciZoom}`, tci));

  // The whole route read of a STAC tile: item (cached document), layer plan, two assets in parallel, expression.
  tasks.push({
    name: `stacTile B01,B09 + expression 256² z${stacZoom}`,
    prepare: async () => {
      const url = await inputs.stacItem({ B01: 'B01.tif', B09: 'B09.tif' });
      const { tile } = await inputs.tileSource('B01.tif', stacZoom);
      const layer: StacLayerOptions = { expression: '(B01_b1 - B09_b1) / (B01_b1 + B09_b1)', assetAsBand: false, assetBidx: new Map() };
      const settings = inputs.services.settings;
      const limits = { maxOutputPixels: settings.maxOutputPixels, maxSourcePixels: settings.maxSourcePixels };
      const run = async (): Promise<ImageData> => {
        const stac = await inputs.services.stac(url);
        const reader = await stacItemReader(stac, layer);
        return (await reader.tile(tms, tile, { ...DEFAULT_VALUES, limits, tilesize: 256 })).image;
      };
      const img = await run();
      expectSize('stacTile', img, 256, 256);
      if (img.bands.length !== 1 || img.dtype !== 'float64') throw new Error(`stacTile: got ${img.bands.length} ${img.dtype} band(s), expected 1 float64`);
      return { run, async: true };
    },
  });

  // ---- 2. expressions over synthetic bands (reflectances in float32, digital numbers in uint16)
  const expressions = [
    { label: '(b1-b2)/(b1+b2)', text: '(b1 - b2) / (b1 + b2)' },
    { label: 'where+comparisons', text: 'where((b1 > b2) & (b3 < 0.6 * b1), (b1 - b2) / (b1 + b2 + 1), sqrt(b3) * 0.5 - 1)' },
  ];
  for (const expr of expressions) {
    for (const dtype of ['float32', 'uint16'] as const) {
      for (const size of [256, 512]) {
        tasks.push({
          name: `expression ${expr.label} 3×${dtype} ${size}²`,
          prepare: async () => {
            const parsed = parseExpression(expr.text);
            const scale = dtype === 'float32' ? 1 : 10000;
            const bandInputs = new Map<string, ExpressionInput>(
              ['b1', 'b2', 'b3'].map((name, i) => [name, { dtype, array: syntheticBand(dtype, size, i + 1, scale) }]),
            );
            const n = size * size;
            const run = () => evaluateExpression(parsed, bandInputs, n);
            run();
            return { run, async: false };
          },
        });
      }
    }
  }

  // ---- 3. rescale and colormap
  tasks.push({
    name: 'rescale+colormap viridis 1×uint16 256²',
    prepare: async () => {
      const img = await cogTile[256]();
      const band = img.bands[0]!;
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < band.length; i++) {
        const v = band[i]!;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      const range: [number, number] = [min, max];
      const viridis = namedColormap('viridis');
      const run = () => applyColormap(applyRescale(img, [range]), viridis);
      run();
      return { run, async: false };
    },
  });
  tasks.push({
    name: 'rescale 3×uint16 256²',
    prepare: async () => {
      const img = syntheticImage('uint16', 256, 3, 10000);
      const run = () => applyRescale(img, [[0, 10000]]);
      run();
      return { run, async: false };
    },
  });

  // ---- 4. encoders, through the routes' render step (mask as alpha where the format has one)
  const encoders: Array<{ format: ImageFormat; label: string; image: 'rgb' | 'uint16' }> = [
    { format: 'png', label: '3×uint8+alpha', image: 'rgb' },
    { format: 'png', label: '1×uint16+alpha (16-bit)', image: 'uint16' },
    { format: 'pngraw', label: '3×uint8+alpha (zlib level 1)', image: 'rgb' },
    { format: 'jpeg', label: '3×uint8 (sharp)', image: 'rgb' },
    { format: 'webp', label: '3×uint8+alpha', image: 'rgb' },
    { format: 'tif', label: '1×uint16+alpha', image: 'uint16' },
    { format: 'jp2', label: '3×uint8+alpha', image: 'rgb' },
    { format: 'npy', label: '1×uint16+mask', image: 'uint16' },
  ];
  for (const enc of encoders) {
    for (const size of [256, 512] as const) {
      tasks.push({
        name: `render ${enc.format} ${enc.label} ${size}²`,
        prepare: async () => {
          const tiles = enc.image === 'rgb' ? tciTile : cogTile;
          const img = await tiles[size]();
          const run = () => renderImage(img, { format: enc.format, returnMask: true });
          const first = await run();
          return { run, async: true, bytes: first.body.length };
        },
      });
    }
  }

  // ---- 5. /statistics defaults (percentiles 2 and 98, 10-bin histogram) over a 1024² float32 band
  tasks.push({
    name: 'statistics 1×float32 1024² (p2,p98, 10 bins)',
    prepare: async () => {
      const preview = await inputs.readPreview('cog.tif', 1024);
      expectSize('statistics input', preview, 1024, 1024);
      const img: ImageData = { ...preview, dtype: 'float32', bands: [Float32Array.from(preview.bands[0]!)], masks: [preview.masks[0]!], bandNames: ['b1'] };
      const opts = parseStatisticsOptions({});
      const run = () => imageStatistics(img, opts);
      run();
      return { run, async: false };
    },
  });

  // ---- 6. hillshade over a DEM tile read with the algorithm's default buffer (3 px a side)
  tasks.push({
    name: `hillshade 1×float32 262² → 256² z${demZoom}`,
    prepare: async () => {
      const img = await inputs.readTile(await dem(), 256, 3);
      expectSize('hillshade input', img, 262, 262);
      if (img.dtype !== 'float32') throw new Error(`hillshade input: dem.tif read as ${img.dtype}, expected float32`);
      const step = prepareAlgorithm({ id: 'hillshade', api: '0.18', params: {} });
      const run = () => step.apply(img);
      expectSize('hillshade output', run(), 256, 256);
      return { run, async: false };
    },
  });

  return tasks;
}

interface Cli {
  settings: RunSettings;
  outDir: string;
}

function parseCli(argv: string[]): Cli | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: { quick: { type: 'boolean', default: false }, out: { type: 'string' }, filter: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return 'help';
  const mode = values.quick ? 'quick' : 'default';
  const filter = values.filter ?? null;
  if (filter !== null) new RegExp(filter, 'i'); // a bad pattern is a usage error, before any work
  return {
    settings: { mode, ...BUDGETS[mode], filter },
    outDir: path.resolve(values.out ?? path.join(REPO_ROOT, '.bench')),
  };
}

async function run(cli: Cli): Promise<Report> {
  const { settings } = cli;
  const inputs = new BenchInputs();
  try {
    const pattern = settings.filter === null ? null : new RegExp(settings.filter, 'i');
    const selected = defineTasks(inputs).filter((t) => pattern === null || pattern.test(t.name));
    if (selected.length === 0) throw new Error(`no task matches /${settings.filter}/i`);

    const bench = new Bench({
      time: settings.timeMs,
      iterations: settings.iterations,
      warmupTime: settings.warmupTimeMs,
      warmupIterations: settings.warmupIterations,
      throws: true,
    });
    const bytes = new Map<string, number>();
    for (const task of selected) {
      const prepared = await task.prepare();
      if (prepared.bytes !== undefined) bytes.set(task.name, prepared.bytes);
      bench.add(task.name, prepared.run, { async: prepared.async });
    }
    bench.addEventListener('cycle', (event) => {
      const task = event.task;
      const done = bench.tasks.indexOf(task) + 1;
      process.stderr.write(`[${done}/${bench.tasks.length}] ${task.name}\n`);
    });
    await bench.run();
    const tasks: TaskRow[] = bench.tasks.map((task) => taskRow(task, bytes.get(task.name)));
    return { date: new Date().toISOString(), machine: machineFacts(), settings, tasks };
  } finally {
    await inputs.close();
  }
}

async function main(): Promise<number> {
  let cli: Cli | 'help';
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (cli === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const report = await run(cli);
  const markdown = toMarkdown(report);
  mkdirSync(cli.outDir, { recursive: true });
  writeFileSync(path.join(cli.outDir, 'micro.md'), markdown);
  writeFileSync(path.join(cli.outDir, 'micro.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(markdown);
  process.stderr.write(`wrote ${path.join(cli.outDir, 'micro.md')} and micro.json\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`micro-benchmarks failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
