/**
 * `make soak`: tessera under mixed load for a long time (30 minutes by default), its resident memory
 * sampled throughout. Not a test: it measures and reports (.bench/soak/report.md and report.json).
 *
 * The load is the benchmark's own (tools/bench/mixes.ts: STAC and mosaic map sessions, points,
 * previews with statistics) plus failing upstreams (a missing document, an unreachable server),
 * shuffled together and sent at concurrency 16 (the machine's saturation with 2 cores) in 10-second
 * windows. After each window the RSS of tessera and all its threads is sampled. Every path's first
 * status is its expected one; any later different status, any 5xx that is not an upstream's, or a
 * request with no answer counts as an unexpected error. Growth is the median RSS of the last
 * minute against the median of the first minute after warm-up (the first fifth of the run).
 *
 * Options: --minutes M (default 30), --concurrency C (16), --out DIR (.bench/soak).
 */
import { fork } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../../test/helpers/paths.js';
import { FIXTURES } from '../../test/helpers/fileserver.js';
import { startServer, TESSERA_COMMAND } from '../../test/parity/harness.js';
import { ensureBenchData } from './data.js';
import { buildMixes } from './mixes.js';
import { median, runLoad } from './load.js';
import { treeRss } from './rss.js';
import type { UpstreamMessage } from './upstream.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WINDOW_MS = 10_000;
const MiB = 1024 * 1024;

function arg(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

const log = (line: string): void => console.log(`[soak] ${line}`);

async function main(): Promise<void> {
  const minutes = Number(arg('minutes', '30'));
  const concurrency = Number(arg('concurrency', '16'));
  const out = path.resolve(arg('out', path.join(REPO_ROOT, '.bench', 'soak')));
  await fs.mkdir(out, { recursive: true });
  const data = await ensureBenchData(path.join(REPO_ROOT, '.bench', 'data'), FIXTURES, log);
  const upstreamProcess = fork(path.join(HERE, 'upstream.js'), [data.dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const upstream = await new Promise<string>((resolve, reject) => {
    upstreamProcess.once('message', (m: UpstreamMessage) => ('ready' in m ? resolve(m.ready) : reject(new Error('upstream: unexpected message'))));
    upstreamProcess.once('exit', (code) => reject(new Error(`upstream exited (${code})`)));
  });
  // The tile cache off: the soak is about memory under rendering, not about cache hits.
  const server = await startServer(TESSERA_COMMAND, { TESSERA_LOG_LEVEL: 'warn', TESSERA_TILE_CACHE_BYTES: '0' });
  try {
    const set = buildMixes(data, upstream);
    const paths = set.mixes.flatMap((m) => m.paths);
    const failing = [
      `/stac/info?url=${encodeURIComponent(`${upstream}/missing/item.json`)}`,
      `/stac/tiles/WebMercatorQuad/12/2200/1400.png?url=${encodeURIComponent('http://127.0.0.1:1/item.json')}&assets=b1`,
      `/mosaicjson/info?url=${encodeURIComponent(`${upstream}/missing/mosaic.json`)}`,
    ];
    // Each failing kind makes ~2% of the load (~6% together).
    for (let i = 0; i < Math.max(1, Math.round(paths.length / 50)); i++) paths.push(...failing);
    // A fixed shuffle, so that every window sends the same mixture.
    let seed = 42;
    for (let i = paths.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const j = seed % (i + 1);
      [paths[i], paths[j]] = [paths[j]!, paths[i]!];
    }
    log(`${paths.length} paths (${failing.length} failing kinds), concurrency ${concurrency}, ${minutes} min`);

    const expected = new Map<string, number>();
    const samples: Array<{ t: number; rssMiB: number; rps: number; unexpected: number }> = [];
    let requests = 0;
    let unexpected = 0;
    const unexpectedExamples: string[] = [];
    const started = Date.now();
    while (Date.now() - started < minutes * 60_000) {
      const r = await runLoad(server.url, paths, { concurrency, durationMs: WINDOW_MS, timeoutMs: 60_000, perPath: true });
      let bad = 0;
      for (const [p, statuses] of r.statusesByPath ?? new Map<string, number[]>()) {
        for (const status of statuses) {
          if (!expected.has(p)) expected.set(p, status);
          const upstreamFault = (status === 502 || status === 504) && failing.includes(p);
          if (status === 0 || (status >= 500 && !upstreamFault) || status !== expected.get(p)) {
            bad++;
            if (unexpectedExamples.length < 10) unexpectedExamples.push(`${status} (expected ${expected.get(p)}) ${p.slice(0, 160)}`);
          }
        }
      }
      requests += r.requests;
      unexpected += bad;
      const rssMiB = treeRss(server.pid) / MiB;
      samples.push({ t: (Date.now() - started) / 1000, rssMiB, rps: r.rps, unexpected: bad });
      log(
        `${((Date.now() - started) / 60_000).toFixed(1)} min: ${r.rps.toFixed(0)} req/s, p99 ${r.latencyMs.p99.toFixed(0)} ms, RSS ${rssMiB.toFixed(0)} MiB, unexpected ${bad}`,
      );
    }

    const total = samples[samples.length - 1]?.t ?? 0;
    const warmUp = total / 5;
    const afterWarmUp = samples.filter((s) => s.t > warmUp && s.t <= warmUp + 60).map((s) => s.rssMiB);
    const lastMinute = samples.filter((s) => s.t > total - 60).map((s) => s.rssMiB);
    const base = median(afterWarmUp);
    const end = median(lastMinute);
    const report = {
      minutes,
      concurrency,
      requests,
      unexpected,
      unexpectedExamples,
      rps: median(samples.map((s) => s.rps)),
      rssMiB: { first: samples[0]?.rssMiB, afterWarmUp: base, end, peak: Math.max(...samples.map((s) => s.rssMiB)) },
      growthAfterWarmUp: end / base - 1,
      samples,
    };
    await fs.writeFile(path.join(out, 'report.json'), JSON.stringify(report, null, 2));
    const md = [
      `# tessera soak: ${minutes} min at concurrency ${concurrency}`,
      '',
      `- requests: ${requests} (median ${report.rps.toFixed(0)} req/s), unexpected errors: ${unexpected}`,
      `- RSS: first window ${report.rssMiB.first?.toFixed(0)} MiB, after warm-up (${(warmUp / 60).toFixed(1)} min) ${base.toFixed(0)} MiB, last minute ${end.toFixed(0)} MiB, peak ${report.rssMiB.peak.toFixed(0)} MiB`,
      `- growth after warm-up: ${(report.growthAfterWarmUp * 100).toFixed(1)}% (target: under 10%)`,
      ...(unexpectedExamples.length ? ['', 'Unexpected answers (first ten):', ...unexpectedExamples.map((e) => `- ${e}`)] : []),
      '',
    ].join('\n');
    await fs.writeFile(path.join(out, 'report.md'), md);
    console.log(md);
  } finally {
    await server.stop();
    upstreamProcess.kill();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
