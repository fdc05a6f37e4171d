/**
 * The load generator: sends a list of request paths to one server from `concurrency` workers over
 * keep-alive connections (as a browser or a tile client does), for a number of passes over the
 * list or for a time, and measures each answer from request to last body byte.
 */
import http from 'node:http';

export interface LoadOptions {
  concurrency: number;
  /** Stop after this long (ms), cycling over the list; or, without it, after `passes` passes. */
  durationMs?: number;
  passes?: number;
  /** Per-request deadline (ms); a request over it counts as an error. */
  timeoutMs?: number;
  /** Keep every status per path (`statusesByPath`), for long runs that check each answer. */
  perPath?: boolean;
}

export interface LoadResult {
  requests: number;
  /** Answers that were not 200/204, and requests with no answer. */
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p95: number; p99: number; mean: number; max: number };
  /** Response body bytes received. */
  bytes: number;
  /** Status per path of the first answer seen (to compare servers). */
  statusByPath: Map<string, number>;
  /** Every status per path, with `perPath`. */
  statusesByPath?: Map<string, number[]>;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function once(agent: http.Agent, base: URL, path: string, timeoutMs: number): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve) => {
    const req = http.get({ host: base.hostname, port: base.port, path, agent, headers: { 'accept-encoding': 'identity' } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', () => resolve({ status: 0, bytes }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, bytes: 0 }));
  });
}

export async function runLoad(baseUrl: string, paths: readonly string[], opts: LoadOptions): Promise<LoadResult> {
  if (paths.length === 0) throw new Error('runLoad: no paths');
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const total = opts.durationMs === undefined ? (opts.passes ?? 1) * paths.length : Infinity;
  const deadline = opts.durationMs === undefined ? Infinity : performance.now() + opts.durationMs;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const statusByPath = new Map<string, number>();
  const statusesByPath = opts.perPath ? new Map<string, number[]>() : undefined;
  let next = 0;
  let errors = 0;
  let bytes = 0;

  const worker = async (): Promise<void> => {
    while (next < total && performance.now() < deadline) {
      const path = paths[next++ % paths.length]!;
      const t0 = performance.now();
      const r = await once(agent, base, path, timeoutMs);
      latencies.push(performance.now() - t0);
      statuses[String(r.status)] = (statuses[String(r.status)] ?? 0) + 1;
      if (!statusByPath.has(path)) statusByPath.set(path, r.status);
      if (statusesByPath) {
        const list = statusesByPath.get(path);
        if (list) list.push(r.status);
        else statusesByPath.set(path, [r.status]);
      }
      if (r.status !== 200 && r.status !== 204) errors++;
      bytes += r.bytes;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((s, v) => s + v, 0) / Math.max(1, latencies.length);
  return {
    requests: latencies.length,
    errors,
    statuses,
    seconds,
    rps: latencies.length / seconds,
    latencyMs: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      mean,
      max: latencies[latencies.length - 1] ?? NaN,
    },
    bytes,
    statusByPath,
    ...(statusesByPath ? { statusesByPath } : {}),
  };
}
