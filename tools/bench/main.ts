/**
 * `make bench`: tessera against TiTiler 0.18.10 on this machine, in one run, same URLs, same data,
 * same GDAL settings. Not a test: it measures and reports (.bench/report.md and report.json).
 *
 * On loopback it starts a range-capable file server in its own process (the "object storage",
 * with an optional delay per request), tessera (`bin/tessera serve`: one process, a render thread per core) and TiTiler (uvicorn with one
 * worker per core from the throw-away venv of tools/parity/setup.sh). Phases:
 *
 *   cold       per server and mix: a fresh server, every URL of the mix once at concurrency 16
 *   round trips a fresh server, 20 ms per upstream answer, the first tiles of a map session one by one
 *   warm       both servers up; each mix at concurrency 1 and 16, servers alternating, repeated
 *   mosaic     one-asset against four-asset mosaic tiles, warm, one at a time
 *   low zoom   a mosaic of 1,024 COGs (./large-mosaic.ts), 20 ms per upstream answer: per zoom from
 *              minzoom down to minzoom − 4 a fresh server, a viewport's 16 tiles, then again; with
 *              the plain document, then with the one naming its low-zoom overview
 *   floor      the tile mixes made in-process by tessera's core (./floor.ts), no HTTP
 *
 * Options: --quick (short runs, one repetition), --duration S, --reps N, --mixes id,id,
 * --out DIR, --no-titiler (tessera alone: for profiling sessions), --low-zoom-only (that phase alone),
 * --no-low-zoom.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../../test/helpers/paths.js';
import { FIXTURES } from '../../test/helpers/fileserver.js';
import type { FileServerStats } from '../../test/helpers/fileserver.js';
import { startServer, TESSERA_COMMAND, UVICORN, type ServerCommand, type Service } from '../../test/parity/harness.js';
import { gdal } from '../../src/gdal/gdal.js';
import { ensureBenchData, latToTileY, lonToTileX } from './data.js';
import { ensureLargeMosaic, type LargeMosaic } from './large-mosaic.js';
import { buildMixes, type Mix } from './mixes.js';
import { median, runLoad, type LoadResult } from './load.js';
import { RssSampler } from './rss.js';
import type { UpstreamCommand, UpstreamMessage } from './upstream.js';
import { writeReport, type BenchReport, type ColdRow, type LowZoomRow, type RoundTripRow, type ServerName, type WarmRow } from './report.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CORES = os.availableParallelism();

/** TiTiler's recommended GDAL settings (docs/advanced/performance_tuning.md), given to both servers. */
const GDAL_ENV: Record<string, string> = {
  GDAL_DISABLE_READDIR_ON_OPEN: 'EMPTY_DIR',
  GDAL_HTTP_MERGE_CONSECUTIVE_RANGES: 'YES',
  GDAL_INGESTED_BYTES_AT_OPEN: '32768',
  GDAL_CACHEMAX: '200',
  GDAL_BAND_BLOCK_CACHE: 'HASHSET',
  CPL_VSIL_CURL_CACHE_SIZE: '200000000',
  CPL_VSIL_CURL_ALLOWED_EXTENSIONS: '.tif,.TIF,.tiff',
  VSI_CACHE: 'TRUE',
  VSI_CACHE_SIZE: '5000000',
  GDAL_HTTP_MULTIPLEX: 'YES',
  GDAL_HTTP_VERSION: '2',
  PROJ_NETWORK: 'OFF',
};

const TITILER: ServerCommand = {
  name: 'TiTiler',
  command: UVICORN,
  args: (port) => [
    'titiler.application.main:app',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--workers',
    String(CORES),
    '--no-access-log',
    '--log-level',
    'warning',
  ],
};

interface Options {
  quick: boolean;
  durationMs: number;
  reps: number;
  mixes: string[] | undefined;
  out: string;
  titiler: boolean;
  lowZoom: 'yes' | 'no' | 'only';
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { quick: false, durationMs: 8000, reps: 3, mixes: undefined, out: path.join(REPO_ROOT, '.bench'), titiler: true, lowZoom: 'yes' };
  let durationSet = false;
  let repsSet = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') opts.quick = true;
    else if (a === '--duration') [opts.durationMs, durationSet] = [Number(value()) * 1000, true];
    else if (a === '--reps') [opts.reps, repsSet] = [Number(value()), true];
    else if (a === '--mixes') opts.mixes = value().split(',');
    else if (a === '--out') opts.out = path.resolve(value());
    else if (a === '--no-titiler') opts.titiler = false;
    else if (a === '--low-zoom-only') opts.lowZoom = 'only';
    else if (a === '--no-low-zoom') opts.lowZoom = 'no';
    else throw new Error(`unknown option ${a}`);
  }
  if (opts.quick) {
    if (!durationSet) opts.durationMs = 3000;
    if (!repsSet) opts.reps = 1;
  }
  return opts;
}

const log = (line: string): void => console.error(`[bench] ${line}`);

/** The file server process and its IPC commands. */
class Upstream {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(dataDir: string): Promise<Upstream> {
    const child = fork(path.join(HERE, 'upstream.js'), [dataDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (m: UpstreamMessage) => ('ready' in m ? resolve(m.ready) : reject(new Error('upstream: unexpected message'))));
      child.once('exit', (code) => reject(new Error(`upstream exited (${code})`)));
    });
    return new Upstream(child, url);
  }

  private ask(cmd: UpstreamCommand): Promise<UpstreamMessage> {
    return new Promise((resolve) => {
      this.child.once('message', (m: UpstreamMessage) => resolve(m));
      this.child.send(cmd);
    });
  }

  async stats(): Promise<FileServerStats> {
    const m = await this.ask({ cmd: 'stats' });
    if (!('stats' in m)) throw new Error('upstream: no stats');
    return m.stats;
  }

  async reset(): Promise<void> {
    await this.ask({ cmd: 'reset' });
  }

  async delay(ms: number): Promise<void> {
    await this.ask({ cmd: 'delay', ms });
  }

  stop(): void {
    this.child.disconnect();
  }
}

/** tessera as it runs by default: one process, one render thread per core (src/image/render-threads.ts). */
const TESSERA: ServerCommand = TESSERA_COMMAND;

const COMMANDS: Record<ServerName, ServerCommand> = { tessera: TESSERA, titiler: TITILER };
/** Neither server writes a line per request (TiTiler runs with --no-access-log). */
// TiTiler keeps no tiles: tessera's tile cache is off here, so both make every tile they are asked.
const SERVER_ENV: Record<ServerName, Record<string, string>> = { tessera: { TESSERA_LOG_LEVEL: 'warn', TESSERA_TILE_CACHE_BYTES: '0' }, titiler: {} };

async function start(name: ServerName, env: Record<string, string> = {}): Promise<{ service: Service; rss: RssSampler }> {
  const service = await startServer(COMMANDS[name], { ...GDAL_ENV, ...SERVER_ENV[name], ...env });
  return { service, rss: new RssSampler(service.pid).start() };
}

async function stop(s: { service: Service; rss: RssSampler }): Promise<void> {
  s.rss.stop();
  await s.service.stop();
}

/** Upstream cost of one measured run, per request. */
async function measured<T extends LoadResult>(upstream: Upstream, run: () => Promise<T>): Promise<{ load: T; upstream: FileServerStats }> {
  await upstream.reset();
  const load = await run();
  return { load, upstream: await upstream.stats() };
}

async function coldPhase(servers: ServerName[], mixes: Mix[], upstream: Upstream): Promise<ColdRow[]> {
  const rows: ColdRow[] = [];
  for (const mix of mixes) {
    for (const name of servers) {
      const s = await start(name);
      try {
        const { load, upstream: up } = await measured(upstream, () => runLoad(s.service.url, mix.paths, { concurrency: 16, passes: 1 }));
        rows.push({ mix: mix.id, server: name, load: summary(load), upstream: up, peakRssBytes: s.rss.peak() });
        log(
          `cold ${mix.id} ${name}: ${load.rps.toFixed(1)} req/s, p50 ${load.latencyMs.p50.toFixed(0)} ms, ${load.errors} errors, ${(up.requests / load.requests).toFixed(2)} upstream req/request`,
        );
      } finally {
        await stop(s);
      }
    }
  }
  return rows;
}

/** First tiles of a map session on a fresh server, one at a time, 20 ms per upstream answer. */
async function roundTripPhase(servers: ServerName[], mix: Mix, upstream: Upstream, delayMs: number): Promise<RoundTripRow[]> {
  const rows: RoundTripRow[] = [];
  const paths = mix.paths.slice(0, 8);
  for (const name of servers) {
    const s = await start(name);
    await upstream.delay(delayMs);
    try {
      const tiles: RoundTripRow['tiles'] = [];
      for (const p of paths) {
        const { load, upstream: up } = await measured(upstream, () => runLoad(s.service.url, [p], { concurrency: 1, passes: 1 }));
        tiles.push({ ms: load.latencyMs.p50, requests: up.requests, rounds: up.rounds, bytes: up.bytes, status: Number(Object.keys(load.statuses)[0]) });
      }
      rows.push({ server: name, delayMs, mix: mix.id, tiles });
      log(
        `round trips ${name}: first tile ${tiles[0]!.ms.toFixed(0)} ms / ${tiles[0]!.rounds} rounds; next tiles median ${median(tiles.slice(1).map((t) => t.rounds))} rounds`,
      );
    } finally {
      await upstream.delay(0);
      await stop(s);
    }
  }
  return rows;
}

/**
 * Low zoom over the 1,024-COG mosaic: per zoom, from the mosaic's minzoom down to minzoom − 4, a fresh
 * server and the 16 tiles of a 4×4 viewport at its centre, 6 at a time (a browser's connections to one
 * host), with 20 ms per upstream answer; 10 s later the same tiles again. A tile over 60 s counts as
 * a timeout (gateways give up sooner).
 */
/** The pause between the first requests of a zoom and the same ones again. */
const AGAIN_AFTER_MS = 10_000;

async function lowZoomPhase(servers: ServerName[], upstream: Upstream, large: LargeMosaic, delayMs: number): Promise<LowZoomRow[]> {
  const rows: LowZoomRow[] = [];
  // The plain document, and the same with its low-zoom overview named (TiTiler ignores the field: it
  // composes the assets there as it does for the plain one).
  for (const name of ['mosaic.json', large.overviewDocument]) rows.push(...(await lowZoomOf(servers, upstream, large, delayMs, name)));
  return rows;
}

async function lowZoomOf(servers: ServerName[], upstream: Upstream, large: LargeMosaic, delayMs: number, documentName: string): Promise<LowZoomRow[]> {
  const rows: LowZoomRow[] = [];
  const [w, s, e, n] = large.bounds;
  const document = encodeURIComponent(`${upstream.url}/large/${documentName}`);
  for (let below = 4; below >= 0; below--) {
    const zoom = large.minzoom - below;
    const cx = lonToTileX((w + e) / 2, zoom);
    const cy = latToTileY((s + n) / 2, zoom);
    const paths: string[] = [];
    for (let y = cy - 2; y < cy + 2; y++)
      for (let x = cx - 2; x < cx + 2; x++) paths.push(`/mosaicjson/tiles/WebMercatorQuad/${zoom}/${x}/${y}.png?url=${document}`);
    for (const name of servers) {
      // tessera with its default tile cache here: what a repeated tile costs is the question (TiTiler keeps none).
      const srv = await start(name, name === 'tessera' ? { TESSERA_TILE_CACHE_BYTES: String(64 * 1024 * 1024) } : {});
      await upstream.delay(delayMs);
      try {
        const { load: first, upstream: up } = await measured(upstream, () => runLoad(srv.service.url, paths, { concurrency: 6, passes: 1, timeoutMs: 60_000 }));
        // Time for tiles answered in part to be finished and kept (readers/mosaic-compose.ts).
        await new Promise((resolve) => setTimeout(resolve, AGAIN_AFTER_MS));
        const again = await runLoad(srv.service.url, paths, { concurrency: 6, passes: 1, timeoutMs: 60_000 });
        rows.push({
          server: name,
          document: documentName,
          zoom,
          below,
          delayMs,
          tiles: paths.length,
          first: { p50: first.latencyMs.p50, p95: first.latencyMs.p95, max: first.latencyMs.max, errors: first.errors },
          again: { p50: again.latencyMs.p50, p95: again.latencyMs.p95, errors: again.errors },
          upstreamRequestsPerTile: up.requests / paths.length,
          upstreamBytesPerTile: up.bytes / paths.length,
        });
        log(
          `low zoom ${documentName} z${zoom} ${name}: first p50 ${first.latencyMs.p50.toFixed(0)} p95 ${first.latencyMs.p95.toFixed(0)} ms, ${first.errors} errors; again p50 ${again.latencyMs.p50.toFixed(0)} ms`,
        );
      } finally {
        await upstream.delay(0);
        await stop(srv);
      }
    }
  }
  return rows;
}

function summary(load: LoadResult): Omit<LoadResult, 'statusByPath'> {
  const { statusByPath: _ignored, ...rest } = load;
  return rest;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const servers: ServerName[] = opts.titiler ? ['tessera', 'titiler'] : ['tessera'];
  await fs.mkdir(opts.out, { recursive: true });
  const data = await ensureBenchData(path.join(opts.out, 'data'), FIXTURES, log);
  const large = opts.lowZoom === 'no' ? undefined : await ensureLargeMosaic(data.dir, log);
  const upstream = await Upstream.start(data.dir);
  if (opts.lowZoom === 'only') {
    try {
      const lowZoom = await lowZoomPhase(servers, upstream, large!, 20);
      await fs.writeFile(path.join(opts.out, 'low-zoom.json'), JSON.stringify(lowZoom, null, 1));
      log(`low zoom: ${path.join(opts.out, 'low-zoom.json')}`);
    } finally {
      upstream.stop();
    }
    return;
  }
  const started = new Date();
  try {
    const set = buildMixes(data, upstream.url);
    const mixes = set.mixes.filter((m) => !opts.mixes || opts.mixes.includes(m.id));
    log(`${mixes.length} mixes: ${mixes.map((m) => `${m.id} (${m.paths.length})`).join(', ')}; ${opts.reps} × ${opts.durationMs / 1000} s per measurement`);

    const cold = await coldPhase(servers, mixes, upstream);
    const firstTiles = set.mixes.find((m) => m.id === 'stac-rgb')!;
    const roundTrips = await roundTripPhase(servers, firstTiles, upstream, 20);

    // Warm: both servers up for the whole phase; RSS peaks per run and over the phase.
    const running = new Map<ServerName, { service: Service; rss: RssSampler }>();
    for (const name of servers) running.set(name, await start(name));
    const warm: WarmRow[] = [];
    const statusMismatches: string[] = [];
    const phasePeak: Partial<Record<ServerName, number>> = {};
    let mosaicLatency: BenchReport['mosaicLatency'] = [];
    try {
      for (const mix of [...mixes, { id: 'mosaic-1-vs-4', title: '', paths: [...set.mosaicOneAsset, ...set.mosaicFourAssets] }]) {
        const seen = new Map<ServerName, Map<string, number>>();
        for (const [name, s] of running) seen.set(name, (await runLoad(s.service.url, mix.paths, { concurrency: 4, passes: 1 })).statusByPath);
        if (seen.size === 2) {
          const [a, b] = [...seen.values()] as [Map<string, number>, Map<string, number>];
          for (const [p, st] of a) if (b.get(p) !== st) statusMismatches.push(`${mix.id}: ${p} → tessera ${st}, TiTiler ${b.get(p)}`);
        }
      }
      for (const [, s] of running) s.rss.resetPeak();
      for (let rep = 0; rep < opts.reps; rep++) {
        for (const mix of mixes) {
          for (const concurrency of [1, 16]) {
            for (const [name, s] of running) {
              s.rss.resetPeak();
              const { load, upstream: up } = await measured(upstream, () => runLoad(s.service.url, mix.paths, { concurrency, durationMs: opts.durationMs }));
              const peak = s.rss.peak();
              phasePeak[name] = Math.max(phasePeak[name] ?? 0, peak);
              warm.push({ mix: mix.id, server: name, concurrency, rep, load: summary(load), upstream: up, peakRssBytes: peak });
              log(
                `warm ${mix.id} c=${concurrency} ${name} #${rep + 1}: ${load.rps.toFixed(1)} req/s, p99 ${load.latencyMs.p99.toFixed(0)} ms, ${load.errors} errors`,
              );
            }
          }
        }
      }
      mosaicLatency = [];
      for (const [name, s] of running) {
        const one = await runLoad(s.service.url, set.mosaicOneAsset, { concurrency: 1, passes: opts.quick ? 2 : 5 });
        const four = await runLoad(s.service.url, set.mosaicFourAssets, { concurrency: 1, passes: opts.quick ? 2 : 5 });
        mosaicLatency.push({
          server: name,
          oneAssetP50: one.latencyMs.p50,
          fourAssetsP50: four.latencyMs.p50,
          oneAssetErrors: one.errors,
          fourAssetsErrors: four.errors,
        });
        log(`mosaic ${name}: one asset p50 ${one.latencyMs.p50.toFixed(1)} ms, four assets p50 ${four.latencyMs.p50.toFixed(1)} ms`);
      }
    } finally {
      for (const s of running.values()) await stop(s);
    }

    const lowZoom = large ? await lowZoomPhase(servers, upstream, large, 20) : [];

    const floor: BenchReport['floor'] = [];
    for (const mix of mixes.filter((m) => m.tiles)) {
      const rps = await runFloor(mix, opts);
      floor.push({ mix: mix.id, concurrency: 16, rps });
      log(`floor ${mix.id}: ${rps.map((r) => r.toFixed(1)).join(', ')} tiles/s`);
    }

    const report: BenchReport = {
      started: started.toISOString(),
      options: { quick: opts.quick, durationS: opts.durationMs / 1000, reps: opts.reps },
      machine: await machineFacts(),
      gdalEnv: GDAL_ENV,
      mixes: mixes.map((m) => ({ id: m.id, title: m.title, requests: m.paths.length })),
      cold,
      roundTrips,
      warm,
      warmPeakRssBytes: phasePeak,
      statusMismatches,
      mosaicLatency,
      floor,
      lowZoom,
    };
    const files = await writeReport(report, opts.out);
    log(`report: ${files.join(', ')}`);
  } finally {
    upstream.stop();
  }
}

async function runFloor(mix: Mix, opts: Options): Promise<number[]> {
  const file = path.join(opts.out, `floor-${mix.id}.json`);
  await fs.writeFile(file, JSON.stringify(mix.tiles));
  const pool = process.env['UV_THREADPOOL_SIZE'] ?? String(Math.min(64, Math.max(16, CORES * 8)));
  // The server's V8 and allocator settings (bin/tessera), so the floor measures the same core.
  const child = spawn(process.execPath, ['--initial-old-space-size=128', path.join(HERE, 'floor.js'), file, '16', String(opts.durationMs), String(opts.reps)], {
    env: { ...process.env, ...GDAL_ENV, UV_THREADPOOL_SIZE: pool, MALLOC_ARENA_MAX: process.env['MALLOC_ARENA_MAX'] ?? '2' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  await fs.rm(file, { force: true });
  if (code !== 0) throw new Error(`floor ${mix.id} exited with ${code}`);
  return (JSON.parse(out) as { rps: number[] }).rps;
}

async function machineFacts(): Promise<BenchReport['machine']> {
  const titilerGdal = await new Promise<string>((resolve) => {
    const py = path.join(path.dirname(UVICORN), 'python');
    const child = spawn(py, ['-c', 'import rasterio; print(rasterio.__gdal_version__)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('exit', () => resolve(out.trim() || 'unknown'));
    child.on('error', () => resolve('unknown'));
  });
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: CORES,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    tesseraGdal: gdal.version,
    titilerGdal,
    titilerWorkers: CORES,
    tesseraWorkers: 1,
    tesseraRenderThreads: CORES,
    uvThreadpool: process.env['UV_THREADPOOL_SIZE'] ?? `bin/tessera default (${Math.min(64, Math.max(16, CORES * 8))})`,
  };
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
