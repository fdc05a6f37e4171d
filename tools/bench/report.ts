/**
 * The benchmark's report: every measurement in report.json, and report.md with medians over the
 * repetitions, the tessera/TiTiler ratios and the issue's targets checked against them.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { FileServerStats } from '../../test/helpers/fileserver.js';
import { median, type LoadResult } from './load.js';

export type ServerName = 'tessera' | 'titiler';
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
    titilerWorkers: number;
    tesseraWorkers?: number;
    tesseraRenderThreads?: number;
    uvThreadpool: string;
  };
  gdalEnv: Record<string, string>;
  mixes: Array<{ id: string; title: string; requests: number }>;
  cold: ColdRow[];
  roundTrips: RoundTripRow[];
  warm: WarmRow[];
  warmPeakRssBytes: Partial<Record<ServerName, number>>;
  statusMismatches: string[];
  mosaicLatency: Array<{ server: ServerName; oneAssetP50: number; fourAssetsP50: number; oneAssetErrors: number; fourAssetsErrors: number }>;
  floor: Array<{ mix: string; concurrency: number; rps: number[] }>;
  lowZoom?: LowZoomRow[];
}

const TILE_MIXES = new Set(['stac-rgb', 'stac-expression', 'mosaic', 'stac-fixture']);

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
}

function warmMedian(rows: WarmRow[], mix: string, server: ServerName, concurrency: number): WarmMedian | undefined {
  const r = rows.filter((w) => w.mix === mix && w.server === server && w.concurrency === concurrency);
  if (r.length === 0) return undefined;
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
  };
}

interface Target {
  what: string;
  measured: string;
  met: boolean | undefined;
}

function targets(r: BenchReport): Target[] {
  const out: Target[] = [];
  const tileMixes = r.mixes.filter((m) => TILE_MIXES.has(m.id));
  for (const m of tileMixes) {
    const t = warmMedian(r.warm, m.id, 'tessera', 16);
    const p = warmMedian(r.warm, m.id, 'titiler', 16);
    if (!t || !p) continue;
    out.push({
      what: `${m.id}: throughput ≥ 5× TiTiler (c=16, warm)`,
      measured: `${f1(t.rps)} vs ${f1(p.rps)} req/s = ${ratio(t.rps, p.rps)}`,
      met: t.rps >= 5 * p.rps,
    });
    out.push({
      what: `${m.id}: p99 ≤ 1/3 of TiTiler's (c=16, warm)`,
      measured: `${f1(t.p99)} vs ${f1(p.p99)} ms = ${ratio(t.p99, p.p99)}`,
      met: t.p99 * 3 <= p.p99,
    });
  }
  const [tr, pr] = [r.warmPeakRssBytes.tessera, r.warmPeakRssBytes.titiler];
  if (tr !== undefined && pr !== undefined)
    out.push({ what: 'peak RSS ≤ 1/3 of TiTiler (all workers), warm phase', measured: `${mib(tr)} vs ${mib(pr)} = ${ratio(tr, pr)}`, met: tr * 3 <= pr });
  for (const f of r.floor) {
    const t = warmMedian(r.warm, f.mix, 'tessera', 16);
    const floor = median(f.rps);
    if (t)
      out.push({
        what: `${f.mix}: server within 20% of the in-process floor`,
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
  lines.push('# tessera vs TiTiler 0.18.10: benchmark');
  lines.push('');
  lines.push(
    `${r.started} · ${m.cores} × ${m.cpu}, ${m.memoryGiB} GiB · Node ${m.node}, tessera: ${m.tesseraWorkers ?? 1} process(es) with ${m.tesseraRenderThreads ?? 0} render thread(s) each, GDAL ${m.tesseraGdal} (libuv pool ${m.uvThreadpool} each) · ` +
      `TiTiler: uvicorn, ${m.titilerWorkers} workers, GDAL ${m.titilerGdal} · ${r.options.reps} repetition(s) × ${r.options.durationS} s per warm measurement${r.options.quick ? ' (quick run)' : ''}.`,
  );
  lines.push('');
  lines.push(
    "Reproduce with `make bench` (or `make bench-quick`). Same URLs to both servers, same data over a loopback range server, same GDAL settings (TiTiler's recommended ones). Figures are medians over the repetitions; ratios are tessera / TiTiler.",
  );
  lines.push('');
  lines.push('## Targets');
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
  const warmRows: string[][] = [];
  for (const mix of r.mixes) {
    for (const c of [1, 16]) {
      const t = warmMedian(r.warm, mix.id, 'tessera', c);
      const p = warmMedian(r.warm, mix.id, 'titiler', c);
      if (!t) continue;
      warmRows.push([
        mix.id,
        String(c),
        `${f1(t.rps)} / ${f1(p?.rps)}`,
        ratio(t.rps, p?.rps),
        `${f1(t.p50)} / ${f1(t.p90)} / ${f1(t.p99)}`,
        p ? `${f1(p.p50)} / ${f1(p.p90)} / ${f1(p.p99)}` : '–',
        ratio(t.p99, p?.p99),
        `${t.errors} / ${p?.errors ?? '–'}`,
        `${t.upstreamPerRequest.toFixed(2)} / ${p ? p.upstreamPerRequest.toFixed(2) : '–'}`,
      ]);
    }
  }
  lines.push(
    table(
      [
        'mix',
        'conc.',
        'req/s tessera / TiTiler',
        'ratio',
        'tessera p50/p90/p99 ms',
        'TiTiler p50/p90/p99 ms',
        'p99 ratio',
        'errors',
        'upstream req per request',
      ],
      warmRows,
    ),
  );
  lines.push('');
  lines.push(
    `Peak RSS over the warm phase (server and all its processes): tessera ${mib(r.warmPeakRssBytes.tessera)}, TiTiler ${mib(r.warmPeakRssBytes.titiler)} (${ratio(r.warmPeakRssBytes.tessera, r.warmPeakRssBytes.titiler)}).`,
  );
  lines.push('');
  if (r.floor.length > 0) {
    lines.push('## Server against the in-process floor (c=16, warm)');
    lines.push('');
    lines.push(
      `The floor is the core called directly in one process, with the server's renderer (${r.machine.tesseraRenderThreads ?? 0} render thread(s)) but no HTTP; the server runs ${r.machine.tesseraWorkers ?? 1} process(es).`,
    );
    lines.push('');
    lines.push(
      table(
        ['mix', 'tessera over HTTP req/s', 'core in-process tiles/s', 'server / floor'],
        r.floor.map((f) => {
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
        server === 'tessera' ? 'tessera' : 'TiTiler',
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
        rtRows.push([
          rt.server === 'tessera' ? 'tessera' : 'TiTiler',
          String(i + 1),
          f1(t.ms),
          String(t.rounds),
          String(t.requests),
          kib(t.bytes),
          String(t.status),
        ]);
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
          x.server === 'tessera' ? 'tessera' : 'TiTiler',
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
          x.server === 'tessera' ? 'tessera' : 'TiTiler',
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
      ? 'Both servers answered every request of every mix with the same status.'
      : `Status differences between the servers (${r.statusMismatches.length}):\n\n${r.statusMismatches.map((s) => `- ${s}`).join('\n')}`,
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
