/**
 * `make bench`: tessera against TiTiler 0.18.10 on this machine, in one run, same URLs, same data,
 * same GDAL settings; the newest TiTiler release beside them where it is installed
 * (tools/parity/titiler-latest.sh). Not a test: it measures and reports (.bench/report.md and
 * report.json).
 *
 * On loopback it starts a range-capable file server in its own process (the "object storage",
 * with an optional delay per request), tessera (`bin/tessera serve`: one process, a render thread per
 * core) and TiTiler (uvicorn with one worker per core from the throw-away venv of
 * tools/parity/setup.sh; the newest release from .parity/titiler-latest, same settings). Phases:
 *
 *   cold        per server and mix: a fresh server, every URL of the mix once at concurrency 16
 *   round trips a fresh server, 20 ms per upstream answer, the first tiles of a map session one by one
 *   warm        all servers up; each mix at concurrency 1 and 16, servers alternating, repeated; at 16
 *               the CPU time of each server's processes is read before and after (CPU per tile)
 *   first view  the warm servers, 30 ms per upstream answer: the 16 tiles of a 4×4 viewport of an
 *               item never seen (a fresh copy of the RGB item, ./upstream.ts), 6 at a time (a
 *               browser's connections to one host), timed until the last tile; over several items
 *   mosaic      one-asset against four-asset mosaic tiles, warm, one at a time
 *   low zoom    a mosaic of 1,024 COGs (./large-mosaic.ts), 20 ms per upstream answer: per zoom from
 *               minzoom down to minzoom − 4 a fresh server, a viewport's 16 tiles, then again; with
 *               the plain document, then with the one naming its low-zoom overview
 *   core        the tile mixes made in-process by tessera's core (./core.ts), no HTTP
 *   floor       the same tiles by bare GDAL (./floor.ts): CPU per tile, what tessera's is set against
 *
 * The newest TiTiler runs in the warm, first-view and mosaic phases (not cold, round trips or low
 * zoom, to keep the run's length). Options: --quick (short runs, one repetition), --duration S,
 * --reps N, --mixes id,id, --out DIR, --no-titiler (tessera alone: for profiling sessions),
 * --no-titiler-latest, --first-views N (fresh items per server), --low-zoom-only (that phase alone),
 * --no-low-zoom, --first-view-only (that phase alone, on servers warmed by one pass of the RGB item's
 * mix; writes first-view.json).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../../test/helpers/paths.js';
import { FIXTURES } from '../../test/helpers/fileserver.js';
import type { FileServerStats } from '../../test/helpers/fileserver.js';
import { startServer, ROOT, TESSERA_COMMAND, UVICORN, type ServerCommand, type Service } from '../../test/parity/harness.js';
import { gdal } from '../../src/gdal/gdal.js';
import { ensureBenchData, ensureRgbItem, latToTileY, lonToTileX, type BenchData } from './data.js';
import { pathFor, type ServerName } from './dialects.js';
import { ensureLargeMosaic, type LargeMosaic } from './large-mosaic.js';
import { buildMixes, firstViewTiles, tilePath, type Mix } from './mixes.js';
import { median, runLoad, type LoadResult } from './load.js';
import { uvicornArgs } from './uvicorn.js';
import { machineBusySeconds, RssSampler, treeCpuSeconds } from './rss.js';
import type { UpstreamCommand, UpstreamMessage } from './upstream.js';
import { writeReport, type BenchReport, type ColdRow, type FirstViewRow, type FloorRow, type LowZoomRow, type RoundTripRow, type WarmRow } from './report.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CORES = os.availableParallelism();

/** TiTiler's recommended GDAL settings (its documentation's advanced/performance_tuning.md), given to both servers. */
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

/** The newest titiler.application from PyPI, in its own venv (tools/parity/titiler-latest.sh). */
const LATEST_VENV = path.join(ROOT, '.parity/titiler-latest');

const titilerArgs = (port: number): string[] => uvicornArgs('titiler.application.main:app', port);

const TITILER: ServerCommand = { name: 'TiTiler', command: UVICORN, args: titilerArgs };
const TITILER_LATEST: ServerCommand = { name: 'TiTiler (newest)', command: path.join(LATEST_VENV, 'bin/uvicorn'), args: titilerArgs };

interface Options {
  quick: boolean;
  durationMs: number;
  reps: number;
  mixes: string[] | undefined;
  out: string;
  titiler: boolean;
  titilerLatest: boolean;
  firstViews: number;
  lowZoom: 'yes' | 'no' | 'only';
  firstViewOnly: boolean;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = {
    quick: false,
    durationMs: 8000,
    reps: 3,
    mixes: undefined,
    out: path.join(REPO_ROOT, '.bench'),
    titiler: true,
    titilerLatest: true,
    firstViews: 7,
    lowZoom: 'yes',
    firstViewOnly: false,
  };
  let durationSet = false;
  let repsSet = false;
  let firstViewsSet = false;
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
    else if (a === '--no-titiler-latest') opts.titilerLatest = false;
    else if (a === '--first-views') [opts.firstViews, firstViewsSet] = [Number(value()), true];
    else if (a === '--low-zoom-only') opts.lowZoom = 'only';
    else if (a === '--no-low-zoom') opts.lowZoom = 'no';
    else if (a === '--first-view-only') [opts.firstViewOnly, opts.lowZoom] = [true, 'no'];
    else throw new Error(`unknown option ${a}`);
  }
  if (opts.quick) {
    if (!durationSet) opts.durationMs = 3000;
    if (!repsSet) opts.reps = 1;
    if (!firstViewsSet) opts.firstViews = 3;
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

  /** The URL of a fresh copy of the RGB item: never seen by any server (./upstream.ts). */
  async fresh(): Promise<string> {
    const m = await this.ask({ cmd: 'fresh' });
    if (!('fresh' in m)) throw new Error('upstream: no fresh item');
    return m.fresh;
  }

  stop(): void {
    this.child.disconnect();
  }
}

/** tessera as it runs by default: one process, one render thread per core (src/image/render-threads.ts). */
const TESSERA: ServerCommand = TESSERA_COMMAND;

const COMMANDS: Record<ServerName, ServerCommand> = { tessera: TESSERA, titiler: TITILER, 'titiler-latest': TITILER_LATEST };
/** No server writes a line per request (TiTiler runs with --no-access-log). */
// TiTiler keeps no tiles: tessera's tile cache is off here, so all make every tile they are asked.
const SERVER_ENV: Record<ServerName, Record<string, string>> = {
  tessera: { TESSERA_LOG_LEVEL: 'warn', TESSERA_TILE_CACHE_BYTES: '0' },
  titiler: {},
  'titiler-latest': {},
};

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
        const paths = mix.paths.map((p) => pathFor(name, p));
        const { load, upstream: up } = await measured(upstream, () => runLoad(s.service.url, paths, { concurrency: 16, passes: 1 }));
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
  for (const name of servers) {
    const paths = mix.paths.slice(0, 8).map((p) => pathFor(name, p));
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
  // The plain document, then the same with its low-zoom overview named: tessera alone there, as
  // TiTiler ignores the field and would compose the assets exactly as for the plain one (checked in
  // test/mosaic-overview.test.ts), at up to 60 s a tile.
  rows.push(...(await lowZoomOf(servers, upstream, large, delayMs, 'mosaic.json')));
  rows.push(...(await lowZoomOf(['tessera'], upstream, large, delayMs, large.overviewDocument)));
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

/** Says so when other processes keep the machine busy: every figure of the run would be lower. */
async function warnIfBusy(log: (line: string) => void): Promise<void> {
  const [busy0, ours0, t0] = [machineBusySeconds(), treeCpuSeconds(process.pid), performance.now()];
  await new Promise((r) => setTimeout(r, 3000));
  const cores = (machineBusySeconds() - busy0 - (treeCpuSeconds(process.pid) - ours0)) / ((performance.now() - t0) / 1000);
  if (cores > 0.1) log(`warning: other processes are using ${cores.toFixed(2)} cores of ${CORES}; the figures will be lower than this machine can do`);
}

function summary(load: LoadResult): Omit<LoadResult, 'statusByPath'> {
  const { statusByPath: _ignored, ...rest } = load;
  return rest;
}

/**
 * First views: on the warm servers, with `delayMs` per upstream answer, the 16 tiles of a 4×4
 * viewport of a fresh copy of the RGB item (extensionless URLs, as a map sends them), 6 at a time,
 * timed from the first request until the last tile arrived. Every server gets its own fresh items;
 * servers take turns item by item.
 */
async function firstViewPhase(
  running: Map<ServerName, { service: Service }>,
  upstream: Upstream,
  bounds: [number, number, number, number],
  items: number,
  delayMs: number,
): Promise<FirstViewRow[]> {
  const rows: FirstViewRow[] = [];
  const tiles = firstViewTiles(bounds);
  await upstream.delay(delayMs);
  try {
    for (let i = 0; i < items; i++) {
      for (const [name, s] of running) {
        const item = await upstream.fresh();
        const paths = tiles.map((t) => pathFor(name, tilePath({ kind: 'stac', url: item, ...t, assets: ['visual'] })));
        const { load, upstream: up } = await measured(upstream, () => runLoad(s.service.url, paths, { concurrency: 6, passes: 1, timeoutMs: 60_000 }));
        rows.push({
          server: name,
          item: i,
          zoom: tiles[0]!.z,
          delayMs,
          ms: load.seconds * 1000,
          tileP50: load.latencyMs.p50,
          tileMax: load.latencyMs.max,
          errors: load.errors,
          statuses: load.statuses,
          upstreamRequests: up.requests,
          upstreamRounds: up.rounds,
        });
        log(
          `first view #${i + 1} ${name}: ${(load.seconds * 1000).toFixed(0)} ms for ${paths.length} tiles, ${load.errors} errors, ${up.requests} upstream requests`,
        );
      }
    }
  } finally {
    await upstream.delay(0);
  }
  return rows;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const latest = opts.titiler && opts.titilerLatest ? await latestVersion() : undefined;
  if (opts.titiler && opts.titilerLatest && !latest) log('the newest TiTiler is not installed (bash tools/parity/titiler-latest.sh): measured without it');
  // The newest TiTiler is measured warm (and in first views), not in the cold and low-zoom phases.
  const coldServers: ServerName[] = opts.titiler ? ['tessera', 'titiler'] : ['tessera'];
  const servers: ServerName[] = latest ? [...coldServers, 'titiler-latest'] : coldServers;
  await fs.mkdir(opts.out, { recursive: true });
  const data = await ensureBenchData(path.join(opts.out, 'data'), FIXTURES, log);
  await ensureRgbItem(data, log);
  const large = opts.lowZoom === 'no' ? undefined : await ensureLargeMosaic(data.dir, log);
  const upstream = await Upstream.start(data.dir);
  if (opts.lowZoom === 'only') {
    try {
      const lowZoom = await lowZoomPhase(coldServers, upstream, large!, 20);
      await fs.writeFile(path.join(opts.out, 'low-zoom.json'), JSON.stringify(lowZoom, null, 1));
      log(`low zoom: ${path.join(opts.out, 'low-zoom.json')}`);
    } finally {
      upstream.stop();
    }
    return;
  }
  if (opts.firstViewOnly) {
    try {
      await firstViewOnly(servers, upstream, data, opts);
    } finally {
      upstream.stop();
    }
    return;
  }
  const started = new Date();
  await warnIfBusy(log);
  try {
    const set = buildMixes(data, upstream.url);
    const mixes = set.mixes.filter((m) => !opts.mixes || opts.mixes.includes(m.id));
    log(`${mixes.length} mixes: ${mixes.map((m) => `${m.id} (${m.paths.length})`).join(', ')}; ${opts.reps} × ${opts.durationMs / 1000} s per measurement`);

    const cold = await coldPhase(coldServers, mixes, upstream);
    const firstTiles = set.mixes.find((m) => m.id === 'stac-rgb')!;
    const roundTrips = await roundTripPhase(coldServers, firstTiles, upstream, 20);

    // Warm: all servers up for the whole phase; RSS peaks per run and over the phase.
    const running = new Map<ServerName, { service: Service; rss: RssSampler }>();
    for (const name of servers) running.set(name, await start(name));
    const warm: WarmRow[] = [];
    const statusMismatches: string[] = [];
    const phasePeak: Partial<Record<ServerName, number>> = {};
    let mosaicLatency: BenchReport['mosaicLatency'] = [];
    let firstView: FirstViewRow[] = [];
    try {
      for (const mix of [...mixes, { id: 'mosaic-1-vs-4', title: '', paths: [...set.mosaicOneAsset, ...set.mosaicFourAssets] }]) {
        // Statuses by the mix's own path (index), whatever each server's URL for it.
        const seen = new Map<ServerName, number[]>();
        for (const [name, s] of running) {
          const paths = mix.paths.map((p) => pathFor(name, p));
          const byPath = (await runLoad(s.service.url, paths, { concurrency: 4, passes: 1 })).statusByPath;
          seen.set(
            name,
            paths.map((p) => byPath.get(p) ?? 0),
          );
        }
        const ours = seen.get('tessera');
        for (const [name, statuses] of seen) {
          if (name === 'tessera' || !ours) continue;
          mix.paths.forEach((p, i) => {
            if (ours[i] !== statuses[i]) statusMismatches.push(`${mix.id}: ${p} → tessera ${ours[i]}, ${COMMANDS[name].name} ${statuses[i]}`);
          });
        }
      }
      for (const [, s] of running) s.rss.resetPeak();
      for (let rep = 0; rep < opts.reps; rep++) {
        for (const mix of mixes) {
          for (const concurrency of [1, 16]) {
            for (const [name, s] of running) {
              s.rss.resetPeak();
              const paths = mix.paths.map((p) => pathFor(name, p));
              const cpu0 = treeCpuSeconds(s.service.pid);
              const [busy0, ours0] = [machineBusySeconds(), treeCpuSeconds(process.pid)];
              const { load, upstream: up } = await measured(upstream, () => runLoad(s.service.url, paths, { concurrency, durationMs: opts.durationMs }));
              const cpuSeconds = treeCpuSeconds(s.service.pid) - cpu0;
              const foreignCpuSeconds = Math.max(0, machineBusySeconds() - busy0 - (treeCpuSeconds(process.pid) - ours0));
              const peak = s.rss.peak();
              phasePeak[name] = Math.max(phasePeak[name] ?? 0, peak);
              warm.push({ mix: mix.id, server: name, concurrency, rep, load: summary(load), upstream: up, peakRssBytes: peak, cpuSeconds, foreignCpuSeconds });
              log(
                `warm ${mix.id} c=${concurrency} ${name} #${rep + 1}: ${load.rps.toFixed(1)} req/s, p99 ${load.latencyMs.p99.toFixed(0)} ms, ${load.errors} errors, ${((cpuSeconds * 1000) / load.requests).toFixed(1)} CPU ms/request`,
              );
            }
          }
        }
      }
      firstView = await firstViewPhase(running, upstream, data.sceneBounds, opts.firstViews, 30);
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

    const lowZoom = large ? await lowZoomPhase(coldServers, upstream, large, 20) : [];

    const core: BenchReport['core'] = [];
    const floor: FloorRow[] = [];
    for (const mix of mixes.filter((m) => m.tiles)) {
      const rps = await runCore(mix, opts);
      core.push({ mix: mix.id, concurrency: 16, rps });
      log(`core ${mix.id}: ${rps.map((r) => r.toFixed(1)).join(', ')} tiles/s`);
      const f = await runFloor(mix, opts);
      floor.push({ mix: mix.id, ...f });
      log(`floor ${mix.id}: ${f.cpuMsPerTile.map((r) => r.toFixed(2)).join(', ')} CPU ms/tile (bare GDAL)`);
    }

    const report: BenchReport = {
      started: started.toISOString(),
      options: { quick: opts.quick, durationS: opts.durationMs / 1000, reps: opts.reps },
      machine: await machineFacts(latest),
      gdalEnv: GDAL_ENV,
      mixes: mixes.map((m) => ({ id: m.id, title: m.title, requests: m.paths.length, tile: m.tiles !== undefined })),
      cold,
      roundTrips,
      warm,
      warmPeakRssBytes: phasePeak,
      statusMismatches,
      mosaicLatency,
      firstView,
      core,
      floor,
      lowZoom,
    };
    const files = await writeReport(report, opts.out);
    log(`report: ${files.join(', ')}`);
  } finally {
    upstream.stop();
  }
}

/**
 * The first-view phase alone (--first-view-only): the servers started, warmed by one pass of the RGB
 * item's extensionless mix (so that what is timed is a new item, not a cold process), then the first
 * views; rows in first-view.json and the medians in the log.
 */
async function firstViewOnly(servers: ServerName[], upstream: Upstream, data: BenchData, opts: Options): Promise<void> {
  const warmUp = buildMixes(data, upstream.url).mixes.find((m) => m.id === 'rgb-auto')!;
  const running = new Map<ServerName, { service: Service; rss: RssSampler }>();
  try {
    for (const name of servers) {
      const s = await start(name);
      running.set(name, s);
      await runLoad(
        s.service.url,
        warmUp.paths.map((p) => pathFor(name, p)),
        { concurrency: 4, passes: 1 },
      );
    }
    const rows = await firstViewPhase(running, upstream, data.sceneBounds, opts.firstViews, 30);
    await fs.writeFile(path.join(opts.out, 'first-view.json'), JSON.stringify(rows, null, 1));
    for (const name of servers) {
      const mine = rows.filter((r) => r.server === name);
      log(
        `first view ${name}: median ${median(mine.map((r) => r.ms)).toFixed(0)} ms, ${median(mine.map((r) => r.upstreamRequests))} upstream requests, ${median(mine.map((r) => r.upstreamRounds))} rounds (medians of ${mine.length})`,
      );
    }
  } finally {
    for (const s of running.values()) await stop(s);
  }
}

/** A child tool's one line of JSON on stdout, with the bench's GDAL settings and the server's V8 and allocator settings (bin/tessera). */
async function runTool<T>(script: string, args: string[]): Promise<T> {
  const pool = process.env['UV_THREADPOOL_SIZE'] ?? String(Math.min(64, Math.max(16, CORES * 8)));
  const child = spawn(process.execPath, ['--initial-old-space-size=128', '--max-semi-space-size=16', path.join(HERE, script), ...args], {
    env: { ...process.env, ...GDAL_ENV, UV_THREADPOOL_SIZE: pool, MALLOC_ARENA_MAX: process.env['MALLOC_ARENA_MAX'] ?? '2' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`${script} ${args.join(' ')} exited with ${code}`);
  return JSON.parse(out) as T;
}

/** tessera's core without HTTP (./core.ts): tiles/s at concurrency 16, per repetition. */
async function runCore(mix: Mix, opts: Options): Promise<number[]> {
  const file = path.join(opts.out, `core-${mix.id}.json`);
  await fs.writeFile(file, JSON.stringify(mix.tiles));
  try {
    return (await runTool<{ rps: number[] }>('core.js', [file, '16', String(opts.durationMs), String(opts.reps)])).rps;
  } finally {
    await fs.rm(file, { force: true });
  }
}

/** The bare-GDAL floor (./floor.ts): CPU ms per tile, per repetition, and per stage. */
async function runFloor(mix: Mix, opts: Options): Promise<Omit<FloorRow, 'mix'>> {
  const file = path.join(opts.out, `floor-${mix.id}.json`);
  await fs.writeFile(file, JSON.stringify(mix.tiles));
  try {
    return await runTool<Omit<FloorRow, 'mix'>>('floor.js', [file, String(opts.durationMs), String(opts.reps)]);
  } finally {
    await fs.rm(file, { force: true });
  }
}

/** The installed newest TiTiler's version (its venv's stamp), or undefined when it is not installed. */
async function latestVersion(): Promise<string | undefined> {
  const stamp = await fs.readFile(path.join(LATEST_VENV, '.installed'), 'utf8').catch(() => undefined);
  return stamp?.trim() || undefined;
}

/** The GDAL version a TiTiler venv's rasterio wheel bundles. */
function rasterioGdal(python: string): Promise<string> {
  return new Promise<string>((resolve) => {
    const child = spawn(python, ['-c', 'import rasterio; print(rasterio.__gdal_version__)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('exit', () => resolve(out.trim() || 'unknown'));
    child.on('error', () => resolve('unknown'));
  });
}

async function machineFacts(latest: string | undefined): Promise<BenchReport['machine']> {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: CORES,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    tesseraGdal: gdal.version,
    titilerGdal: await rasterioGdal(path.join(path.dirname(UVICORN), 'python')),
    ...(latest ? { titilerLatest: { version: latest, gdal: await rasterioGdal(path.join(LATEST_VENV, 'bin/python')) } } : {}),
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
