/**
 * The benchmark's report: every measurement in report.json, and report.md with medians over the
 * repetitions, the tessera/TiTiler ratios and the issue's targets checked against them: first the
 * table of issue 24's targets per mix (throughput, p99, CPU per tile against the bare-GDAL floor,
 * first view, peak RSS), then the earlier checks and every phase in detail.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { FileServerStats } from '../../test/helpers/fileserver.js';
import type { ServerName } from './dialects.js';
import { median, type LoadResult } from './load.js';

type LoadSummary = Omit<LoadResult, 'statusByPath'>;

export interface ColdRow {
  mix: string;
  server: ServerName;
  load: LoadSummary;
  upstream: FileServerStats;
  peakRssBytes: number;
}

export interface WarmRow extends ColdRow {
  concurrency: number;
  rep: number;
  /** CPU seconds the server's processes used during the run (user + system, all threads). */
  cpuSeconds?: number;
  /** CPU seconds other processes on the machine used during the run (not the benchmark's own tree). */
  foreignCpuSeconds?: number;
}

/** One first view: a fresh item's 4×4 viewport on one warm server. */
export interface FirstViewRow {
  server: ServerName;
  /** Which fresh item (0…): servers take turns, each with an item of its own. */
  item: number;
  zoom: number;
  delayMs: number;
  /** From the first request until the last tile arrived. */
  ms: number;
  tileP50: number;
  tileMax: number;
  errors: number;
  statuses: Record<string, number>;
  upstreamRequests: number;
  upstreamRounds: number;
}

/** The bare-GDAL floor of one tile mix (./floor.ts). */
export interface FloorRow {
  mix: string;
  /** CPU ms per tile, one figure per repetition. */
  cpuMsPerTile: number[];
  /** CPU ms per tile by stage, over all repetitions. */
  stages: Record<'read' | 'warp' | 'post' | 'encode', number>;
  tiles: number;
  /** Tiles per pass with no data (no encode: a server's 404 or 204). */
  empty: number;
}

export interface RoundTripRow {
  server: ServerName;
  delayMs: number;
  mix: string;
  tiles: Array<{ ms: number; requests: number; rounds: number; bytes: number; status: number }>;
}

/** One zoom of the low-zoom phase (large-mosaic.ts) on one server. */
export interface LowZoomRow {
  server: ServerName;
  /** The document read: `mosaic.json`, or `mosaic-overview.json` naming the low-zoom overview (TiTiler ignores it). */
  document: string;
  zoom: number;
  /** Zooms below the mosaic's minzoom. */
  below: number;
  delayMs: number;
  tiles: number;
  first: { p50: number; p95: number; max: number; errors: number };
  again: { p50: number; p95: number; errors: number };
  /** Upstream cost of the first requests, per tile. */
  upstreamRequestsPerTile: number;
  upstreamBytesPerTile: number;
}

export interface BenchReport {
  started: string;
  options: { quick: boolean; durationS: number; reps: number };
  machine: {
    cpu: string;
    cores: number;
    memoryGiB: number;
    node: string;
    tesseraGdal: string;
    titilerGdal: string;
    /** The newest titiler.application, when it was measured. */
    titilerLatest?: { version: string; gdal: string };
    titilerWorkers: number;
    tesseraWorkers?: number;
    tesseraRenderThreads?: number;
    uvThreadpool: string;
  };
  gdalEnv: Record<string, string>;
  mixes: Array<{ id: string; title: string; requests: number; tile: boolean }>;
  cold: ColdRow[];
  roundTrips: RoundTripRow[];
  warm: WarmRow[];
  warmPeakRssBytes: Partial<Record<ServerName, number>>;
  statusMismatches: string[];
  mosaicLatency: Array<{ server: ServerName; oneAssetP50: number; fourAssetsP50: number; oneAssetErrors: number; fourAssetsErrors: number }>;
  firstView: FirstViewRow[];
  /** tessera's core without HTTP (./core.ts): tiles/s per repetition. */
  core: Array<{ mix: string; concurrency: number; rps: number[] }>;
  floor: FloorRow[];
  lowZoom?: LowZoomRow[];
}

const SERVER_LABEL: Record<ServerName, string> = { tessera: 'tessera', titiler: 'TiTiler 0.18.10', 'titiler-latest': 'TiTiler (newest)' };

const mib = (b: number | undefined): string => (b === undefined ? '–' : `${(b / 2 ** 20).toFixed(0)} MiB`);
const f1 = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? '–' : n >= 100 ? n.toFixed(0) : n.toFixed(1));
const ratio = (a: number | undefined, b: number | undefined): string => (a === undefined || b === undefined || !(b > 0) ? '–' : `${(a / b).toFixed(2)}×`);
const kib = (b: number): string => (b >= 10 * 1024 ? `${(b / 1024).toFixed(0)} KiB` : `${(b / 1024).toFixed(1)} KiB`);

/** Medians over the repetitions of one (mix, server, concurrency). */
interface WarmMedian {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  errors: number;
  requests: number;
  upstreamPerRequest: number;
  bytesPerRequest: number;
  /** Median over repetitions of the body bytes per answer. */
  bytesPerAnswer: number;
  /** Median over repetitions of the server's CPU ms per request answered (concurrency 16 only). */
  cpuMsPerRequest: number | undefined;
}

/** Other processes' CPU (in cores) above which a warm run counts as disturbed. */
const DISTURBED_CORES = 0.1;

function disturbed(w: WarmRow): boolean {
  return w.foreignCpuSeconds !== undefined && w.foreignCpuSeconds / Math.max(1e-9, w.load.seconds) >= DISTURBED_CORES;
}

/**
 * Medians over the repetitions of one mix, server and concurrency, leaving out the runs that other
 * processes disturbed (DISTURBED_CORES) when any run was not: such a run measures what was left of
 * the machine, for whichever server was measured at that moment.
 */
function warmMedian(rows: WarmRow[], mix: string, server: ServerName, concurrency: number): WarmMedian | undefined {
  const all = rows.filter((w) => w.mix === mix && w.server === server && w.concurrency === concurrency);
  if (all.length === 0) return undefined;
  const quiet = all.filter((w) => !disturbed(w));
  const r = quiet.length > 0 ? quiet : all;
  return {
    rps: median(r.map((w) => w.load.rps)),
    p50: median(r.map((w) => w.load.latencyMs.p50)),
    p90: median(r.map((w) => w.load.latencyMs.p90)),
    p99: median(r.map((w) => w.load.latencyMs.p99)),
    errors: r.reduce((s, w) => s + w.load.errors, 0),
    requests: r.reduce((s, w) => s + w.load.requests, 0),
    upstreamPerRequest:
      r.reduce((s, w) => s + w.upstream.requests, 0) /
      Math.max(
        1,
        r.reduce((s, w) => s + w.load.requests, 0),
      ),
    bytesPerRequest:
      r.reduce((s, w) => s + w.upstream.bytes, 0) /
      Math.max(
        1,
        r.reduce((s, w) => s + w.load.requests, 0),
      ),
    bytesPerAnswer: median(r.map((w) => w.load.bytes / Math.max(1, w.load.requests))),
    cpuMsPerRequest: r.every((w) => w.cpuSeconds !== undefined) ? median(r.map((w) => ((w.cpuSeconds ?? 0) * 1000) / Math.max(1, w.load.requests))) : undefined,
  };
}

/** Median time of a server's first views, ms. */
function firstViewMedian(r: BenchReport, server: ServerName): number | undefined {
  const rows = (r.firstView ?? []).filter((f) => f.server === server);
  return rows.length === 0 ? undefined : median(rows.map((f) => f.ms));
}

/** "1.23× met" or "1.23× **missed**": a ratio and its verdict against a target (`atMost`: lower is better). */
function verdict(a: number | undefined, b: number | undefined, target: number, atMost: boolean): string {
  if (a === undefined || b === undefined || !(b > 0)) return '–';
  const x = a / b;
  const met = atMost ? x <= target : x >= target;
  return `${x.toFixed(2)}× ${met ? 'met' : '**missed**'}`;
}

/** Issue 24's targets as one table: a row per mix, then the ratios that are not per mix. */
function targetsTable(r: BenchReport): string[] {
  const lines: string[] = [];
  const rows: string[][] = [];
  const floors = new Map(r.floor.map((f) => [f.mix, median(f.cpuMsPerTile)]));
  const hasLatest = r.warm.some((w) => w.server === 'titiler-latest');
  for (const m of r.mixes) {
    const t = warmMedian(r.warm, m.id, 'tessera', 16);
    if (!t) continue;
    const p = warmMedian(r.warm, m.id, 'titiler', 16);
    const l = warmMedian(r.warm, m.id, 'titiler-latest', 16);
    const floor = floors.get(m.id);
    rows.push([
      m.id,
      `${f1(t.rps)} / ${f1(p?.rps)}${hasLatest ? ` / ${f1(l?.rps)}` : ''}`,
      m.tile ? verdict(t.rps, p?.rps, 15, false) : ratio(t.rps, p?.rps),
      ...(hasLatest ? [ratio(t.rps, l?.rps)] : []),
      m.tile ? verdict(t.p99, p?.p99, 0.1, true) : ratio(t.p99, p?.p99),
      m.tile && floor !== undefined ? `${f1(t.cpuMsPerRequest)} / ${f1(floor)} = ${verdict(t.cpuMsPerRequest, floor, 1.5, true)}` : '–',
      m.tile && floor !== undefined ? `${f1(p?.cpuMsPerRequest)} (${ratio(p?.cpuMsPerRequest, floor)})` : '–',
      ...(hasLatest ? [m.tile && floor !== undefined ? `${f1(l?.cpuMsPerRequest)} (${ratio(l?.cpuMsPerRequest, floor)})` : '–'] : []),
    ]);
  }
  lines.push(
    table(
      [
        'mix (warm, c=16)',
        `req/s tessera / TiTiler 0.18.10${hasLatest ? ' / newest' : ''}`,
        'tessera ÷ 0.18.10 (≥ 15×)',
        ...(hasLatest ? ['tessera ÷ newest'] : []),
        'p99 ratio to 0.18.10 (≤ 0.1)',
        'CPU ms/tile: tessera / bare-GDAL floor (≤ 1.5×)',
        'TiTiler 0.18.10 CPU ms/tile (÷ floor)',
        ...(hasLatest ? ['newest CPU ms/tile (÷ floor)'] : []),
      ],
      rows,
    ),
  );
  lines.push('');
  const others: string[][] = [];
  const [fvT, fvP, fvL] = [firstViewMedian(r, 'tessera'), firstViewMedian(r, 'titiler'), firstViewMedian(r, 'titiler-latest')];
  if (fvT !== undefined) {
    const fv = r.firstView[0]!;
    others.push([
      `first view (fresh item, 16 tiles at z${fv.zoom}, ${fv.delayMs} ms upstream latency, 6 in flight; median of ${r.firstView.filter((f) => f.server === 'tessera').length})`,
      `${f1(fvT)} / ${f1(fvP)}${fvL !== undefined ? ` / ${f1(fvL)}` : ''} ms`,
      `≤ 0.33: ${verdict(fvT, fvP, 1 / 3, true)}`,
      fvL !== undefined ? ratio(fvT, fvL) : '–',
    ]);
  }
  const [tr, pr, lr] = [r.warmPeakRssBytes.tessera, r.warmPeakRssBytes.titiler, r.warmPeakRssBytes['titiler-latest']];
  if (tr !== undefined && pr !== undefined)
    others.push([
      'peak RSS over the warm phase, all processes, same GDAL cache settings',
      `${mib(tr)} / ${mib(pr)}${lr !== undefined ? ` / ${mib(lr)}` : ''}`,
      `≤ 0.5: ${verdict(tr, pr, 0.5, true)}`,
      lr !== undefined ? ratio(tr, lr) : '–',
    ]);
  if (others.length > 0) {
    lines.push(
      table(
        ['', `tessera / TiTiler 0.18.10${fvL !== undefined || lr !== undefined ? ' / newest' : ''}`, 'ratio to 0.18.10 (target)', 'ratio to newest'],
        others,
      ),
    );
    lines.push('');
  }
  lines.push(
    "Throughput and p99 targets are checked on the tile mixes (the others are shown for reference). CPU per tile is the server's processes' user + system time during the warm concurrency-16 runs over the requests answered (median of the repetitions); the floor is a bare GDAL read + warp + post-processing + encode of the same tiles, one at a time (`tools/bench/floor.ts`, see the section below).",
  );
  lines.push('');
  return lines;
}

interface Target {
  what: string;
  measured: string;
  met: boolean | undefined;
}

/** The earlier issues' checks that issue 24's targets do not replace (throughput, p99 and RSS have stricter ones above). */
function targets(r: BenchReport): Target[] {
  const out: Target[] = [];
  const tileMixes = r.mixes.filter((m) => m.tile);
  for (const f of r.core) {
    const t = warmMedian(r.warm, f.mix, 'tessera', 16);
    const floor = median(f.rps);
    if (t)
      out.push({
        what: `${f.mix}: server within 20% of its core without HTTP`,
        measured: `${f1(t.rps)} vs ${f1(floor)} tiles/s = ${ratio(t.rps, floor)}`,
        met: t.rps >= 0.8 * floor,
      });
  }
  for (const m of tileMixes) {
    const t = warmMedian(r.warm, m.id, 'tessera', 16);
    if (t)
      out.push({
        what: `${m.id}: a warm tile makes ≤ 1 upstream request`,
        measured: `${t.upstreamPerRequest.toFixed(3)} per tile`,
        met: t.upstreamPerRequest <= 1,
      });
  }
  for (const rt of r.roundTrips.filter((x) => x.server === 'tessera')) {
    const worst = Math.max(...rt.tiles.map((t) => t.rounds));
    out.push({
      what: `cold tile ≤ 3 sequential round trips at ${rt.delayMs} ms (fresh server, first ${rt.tiles.length} tiles)`,
      measured: `first tile ${rt.tiles[0]?.rounds} rounds (${f1(rt.tiles[0]?.ms)} ms), worst ${worst}`,
      met: worst <= 3,
    });
  }
  const ml = r.mosaicLatency.find((m) => m.server === 'tessera');
  if (ml)
    out.push({
      what: '4-asset mosaic tile ≤ 2× a single-asset tile (warm, one at a time)',
      measured: `${f1(ml.fourAssetsP50)} vs ${f1(ml.oneAssetP50)} ms = ${ratio(ml.fourAssetsP50, ml.oneAssetP50)}`,
      met: ml.fourAssetsP50 <= 2 * ml.oneAssetP50,
    });
  return out;
}

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

export function markdown(r: BenchReport): string {
  const m = r.machine;
  const lines: string[] = [];
  const latest = m.titilerLatest;
  lines.push(`# tessera vs TiTiler 0.18.10${latest ? ` and TiTiler ${latest.version} (newest)` : ''}: benchmark`);
  lines.push('');
  lines.push(
    `${r.started} · ${m.cores} × ${m.cpu}, ${m.memoryGiB} GiB · Node ${m.node}, tessera: ${m.tesseraWorkers ?? 1} process(es) with ${m.tesseraRenderThreads ?? 0} render thread(s) each, GDAL ${m.tesseraGdal} (libuv pool ${m.uvThreadpool} each) · ` +
      `TiTiler: uvicorn, ${m.titilerWorkers} workers, GDAL ${m.titilerGdal}${latest ? `; TiTiler ${latest.version}: the same, GDAL ${latest.gdal}` : ''} · ${r.options.reps} repetition(s) × ${r.options.durationS} s per warm measurement${r.options.quick ? ' (quick run)' : ''}.`,
  );
  lines.push('');
  lines.push(
    "Reproduce with `make bench` (or `make bench-quick`). Same URLs to every server (rewritten where the newest TiTiler's differ: `tools/bench/dialects.ts`), same data over a loopback range server, same GDAL settings (TiTiler's recommended ones). Figures are medians over the repetitions; ratios are tessera / TiTiler.",
  );
  lines.push('');
  lines.push('## Targets (issue 24)');
  lines.push('');
  lines.push(...targetsTable(r));
  lines.push('## Other checks');
  lines.push('');
  lines.push(
    table(
      ['target', 'measured', 'met'],
      targets(r).map((t) => [t.what, t.measured, t.met === undefined ? '–' : t.met ? 'yes' : '**no**']),
    ),
  );
  lines.push('');
  lines.push('## Warm (data and handles cached)');
  lines.push('');
  const servers = (['tessera', 'titiler', 'titiler-latest'] as const).filter((sv) => r.warm.some((w) => w.server === sv));
  const warmRows: string[][] = [];
  for (const mix of r.mixes) {
    for (const c of [1, 16]) {
      const t = warmMedian(r.warm, mix.id, 'tessera', c);
      if (!t) continue;
      const all = servers.map((sv) => warmMedian(r.warm, mix.id, sv, c));
      const p = all[1];
      warmRows.push([
        mix.id,
        String(c),
        all.map((x) => f1(x?.rps)).join(' / '),
        all
          .slice(1)
          .map((x) => ratio(t.rps, x?.rps))
          .join(' / ') || '–',
        ...all.map((x) => (x ? `${f1(x.p50)} / ${f1(x.p90)} / ${f1(x.p99)}` : '–')),
        ratio(t.p99, p?.p99),
        all.map((x) => x?.errors ?? '–').join(' / '),
        all.map((x) => (x ? x.upstreamPerRequest.toFixed(2) : '–')).join(' / '),
        all.map((x) => (x ? kib(x.bytesPerAnswer) : '–')).join(' / '),
        c === 16 ? all.map((x) => f1(x?.cpuMsPerRequest)).join(' / ') : '',
      ]);
    }
  }
  const names = servers.map((sv) => SERVER_LABEL[sv]).join(' / ');
  lines.push(
    table(
      [
        'mix',
        'conc.',
        `req/s ${names}`,
        'tessera ÷ each TiTiler',
        ...servers.map((sv) => `${SERVER_LABEL[sv]} p50/p90/p99 ms`),
        'p99 ratio to 0.18.10',
        'errors',
        'upstream req per request',
        'body per answer',
        'CPU ms per request',
      ],
      warmRows,
    ),
  );
  lines.push('');
  lines.push(
    "Body per answer averages what each server answered in its run: a timed run goes round the mix's list from the start, so a slower server answered more of the first (lowest-zoom, often masked) tiles; compare sizes where both went round the list, or per tile.",
  );
  lines.push('');
  const foreign = r.warm.filter((w) => w.foreignCpuSeconds !== undefined).map((w) => (w.foreignCpuSeconds ?? 0) / w.load.seconds);
  if (foreign.length > 0) {
    const busiest = Math.max(...foreign);
    lines.push(
      `Other processes on the machine during the warm runs (CPU they took, in cores): median ${foreign.length ? median(foreign).toFixed(2) : '–'}, most ${busiest.toFixed(2)}; ${r.warm.filter(disturbed).length} of ${r.warm.length} runs took ${DISTURBED_CORES} core or more and are left out of the medians wherever another repetition of the same mix, server and concurrency was quieter.`,
    );
    lines.push('');
  }
  lines.push(
    `Peak RSS over the warm phase (server and all its processes): ${servers.map((sv) => `${SERVER_LABEL[sv]} ${mib(r.warmPeakRssBytes[sv])}`).join(', ')} (tessera ÷ 0.18.10: ${ratio(r.warmPeakRssBytes.tessera, r.warmPeakRssBytes.titiler)}).`,
  );
  lines.push('');
  if (r.firstView && r.firstView.length > 0) {
    const fv = r.firstView[0]!;
    lines.push(
      `## First view (warm server, an item never seen, the ${fv.delayMs} ms-per-answer upstream, 16 tiles of a 4×4 viewport at z${fv.zoom}, 6 in flight)`,
    );
    lines.push('');
    lines.push(
      'Each item is a fresh copy of the RGB item and its COG under a new URL with new ETags (`tools/bench/upstream.ts`), so neither the server nor GDAL has seen it; the time runs from the first request until the last tile arrived.',
    );
    lines.push('');
    lines.push(
      table(
        ['server', 'median ms', 'each item ms', 'tile p50 / max ms (median)', 'errors', 'upstream requests (median)', 'sequential upstream rounds (median)'],
        servers
          .filter((sv) => r.firstView.some((f) => f.server === sv))
          .map((sv) => {
            const rows = r.firstView.filter((f) => f.server === sv);
            return [
              SERVER_LABEL[sv],
              f1(median(rows.map((f) => f.ms))),
              rows.map((f) => f1(f.ms)).join(', '),
              `${f1(median(rows.map((f) => f.tileP50)))} / ${f1(median(rows.map((f) => f.tileMax)))}`,
              String(rows.reduce((n, f) => n + f.errors, 0)),
              f1(median(rows.map((f) => f.upstreamRequests))),
              f1(median(rows.map((f) => f.upstreamRounds))),
            ];
          }),
      ),
    );
    lines.push('');
  }
  if (r.floor.length > 0) {
    lines.push('## CPU per tile under load against the bare-GDAL floor');
    lines.push('');
    lines.push(
      "The floor (`tools/bench/floor.ts`) makes each tile of the mix with GDAL alone, one at a time: the window under the tile read from the overview a tile server picks (blocks cached after a warm-up pass), GDAL's warper (nearest, approximate transformer) into a MEM dataset in EPSG:3857 with an alpha band, the mix's post-processing in plain loops, and sharp (libvips) with TiTiler's encoder settings (PNG: libpng, zlib 6, adaptive filters — TiTiler's size, not the cheapest PNG). Its CPU is `process.cpuUsage()` over every thread; the servers' is their processes' user + system time during the warm concurrency-16 runs over the requests answered.",
    );
    lines.push('');
    lines.push(
      table(
        [
          'mix',
          'floor CPU ms/tile',
          'read / warp / post / encode',
          'empty tiles per pass',
          ...servers.map((sv) => `${SERVER_LABEL[sv]} CPU ms/tile (÷ floor)`),
        ],
        r.floor.map((f) => {
          const floor = median(f.cpuMsPerTile);
          return [
            f.mix,
            f1(floor),
            `${f1(f.stages.read)} / ${f1(f.stages.warp)} / ${f1(f.stages.post)} / ${f1(f.stages.encode)}`,
            `${f1(f.empty)} of ${f.tiles}`,
            ...servers.map((sv) => {
              const w = warmMedian(r.warm, f.mix, sv, 16);
              return `${f1(w?.cpuMsPerRequest)} (${ratio(w?.cpuMsPerRequest, floor)})`;
            }),
          ];
        }),
      ),
    );
    lines.push('');
  }
  if (r.core.length > 0) {
    lines.push('## Server against its core without HTTP (c=16, warm)');
    lines.push('');
    lines.push(
      `The core (\`tools/bench/core.ts\`) is called directly in one process, with the server's renderer (${r.machine.tesseraRenderThreads ?? 0} render thread(s)) but no HTTP; the server runs ${r.machine.tesseraWorkers ?? 1} process(es).`,
    );
    lines.push('');
    lines.push(
      table(
        ['mix', 'tessera over HTTP req/s', 'core in-process tiles/s', 'server / core'],
        r.core.map((f) => {
          const t = warmMedian(r.warm, f.mix, 'tessera', 16);
          return [f.mix, f1(t?.rps), f1(median(f.rps)), ratio(t?.rps, median(f.rps))];
        }),
      ),
    );
    lines.push('');
  }
  lines.push('## Cold (fresh server, every URL of the mix once, concurrency 16)');
  lines.push('');
  const coldRows: string[][] = [];
  for (const mix of r.mixes) {
    for (const server of ['tessera', 'titiler'] as const) {
      const c = r.cold.find((x) => x.mix === mix.id && x.server === server);
      if (!c) continue;
      coldRows.push([
        mix.id,
        SERVER_LABEL[server],
        f1(c.load.rps),
        `${f1(c.load.latencyMs.p50)} / ${f1(c.load.latencyMs.p90)} / ${f1(c.load.latencyMs.p99)}`,
        String(c.load.errors),
        (c.upstream.requests / c.load.requests).toFixed(2),
        kib(c.upstream.bytes / c.load.requests),
        mib(c.peakRssBytes),
      ]);
    }
  }
  lines.push(table(['mix', 'server', 'req/s', 'p50/p90/p99 ms', 'errors', 'upstream req per request', 'upstream bytes per request', 'peak RSS'], coldRows));
  lines.push('');
  if (r.roundTrips.length > 0) {
    lines.push(`## Cold tiles with ${r.roundTrips[0]!.delayMs} ms per upstream answer (fresh server, first tiles of the map session, one at a time)`);
    lines.push('');
    const rtRows: string[][] = [];
    for (const rt of r.roundTrips) {
      rt.tiles.forEach((t, i) => {
        rtRows.push([SERVER_LABEL[rt.server], String(i + 1), f1(t.ms), String(t.rounds), String(t.requests), kib(t.bytes), String(t.status)]);
      });
    }
    lines.push(table(['server', 'tile', 'ms', 'sequential round trips', 'upstream requests', 'upstream bytes', 'status'], rtRows));
    lines.push('');
  }
  if (r.mosaicLatency.length > 0) {
    lines.push('## Mosaic: one-asset against four-asset tiles (warm, one request at a time, p50)');
    lines.push('');
    lines.push(
      table(
        ['server', 'one asset ms', 'four assets ms', 'four / one', 'errors'],
        r.mosaicLatency.map((x) => [
          SERVER_LABEL[x.server],
          f1(x.oneAssetP50),
          f1(x.fourAssetsP50),
          ratio(x.fourAssetsP50, x.oneAssetP50),
          String(x.oneAssetErrors + x.fourAssetsErrors),
        ]),
      ),
    );
    lines.push('');
  }
  if (r.lowZoom && r.lowZoom.length > 0) {
    const z = r.lowZoom[0]!;
    lines.push(
      `## Mosaic of 1,024 COGs at low zoom (${z.delayMs} ms per upstream answer; per zoom a fresh server, the ${z.tiles} tiles of a viewport 6 at a time, then again)`,
    );
    lines.push('');
    lines.push(
      table(
        [
          'zoom',
          'document',
          'server',
          'first p50 / p95 / max ms',
          'timeouts and errors',
          'upstream requests per tile',
          'upstream bytes per tile',
          'again p50 / p95 ms',
        ],
        r.lowZoom.map((x) => [
          `${x.zoom} (minzoom − ${x.below})`,
          x.document,
          SERVER_LABEL[x.server],
          `${f1(x.first.p50)} / ${f1(x.first.p95)} / ${f1(x.first.max)}`,
          String(x.first.errors + x.again.errors),
          x.upstreamRequestsPerTile.toFixed(1),
          kib(x.upstreamBytesPerTile),
          `${f1(x.again.p50)} / ${f1(x.again.p95)}`,
        ]),
      ),
    );
    lines.push('');
  }
  lines.push('## Mixes');
  lines.push('');
  lines.push(
    table(
      ['id', 'what', 'distinct requests'],
      r.mixes.map((x) => [x.id, x.title, String(x.requests)]),
    ),
  );
  lines.push('');
  lines.push(
    r.statusMismatches.length === 0
      ? 'Every server answered every request of every mix with the same status as tessera.'
      : `Status differences between tessera and a TiTiler (${r.statusMismatches.length}):\n\n${r.statusMismatches.map((s) => `- ${s}`).join('\n')}`,
  );
  lines.push('');
  return lines.join('\n');
}

export async function writeReport(r: BenchReport, outDir: string): Promise<string[]> {
  const md = path.join(outDir, 'report.md');
  const json = path.join(outDir, 'report.json');
  await fs.writeFile(json, JSON.stringify(r, null, 1));
  await fs.writeFile(md, markdown(r));
  return [md, json];
}
