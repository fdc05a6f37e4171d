/**
 * The micro-benchmark report: the machine it ran on (numbers mean little without it), one row per
 * task from tinybench's latency statistics, as a markdown table for people and JSON for tools that
 * compare runs.
 */
import os from 'node:os';
import type { Task } from 'tinybench';
import { gdal } from '../../../src/gdal/gdal.js';

export interface MachineFacts {
  node: string;
  gdal: string;
  cpuModel: string;
  cpuCount: number;
  uvThreadpoolSize: string;
  platform: string;
}

export interface RunSettings {
  mode: 'quick' | 'default';
  /** tinybench's per-task budget and minimum sample count (and the same for warmup). */
  timeMs: number;
  iterations: number;
  warmupTimeMs: number;
  warmupIterations: number;
  filter: string | null;
}

export interface TaskRow {
  name: string;
  samples: number;
  meanMs: number;
  medianMs: number;
  p99Ms: number;
  /** 1000 / mean latency: calls per second of one caller, back to back. */
  opsPerSec: number;
  /** Size of the encoded output, for encoders. */
  bytes?: number;
}

export interface Report {
  date: string;
  machine: MachineFacts;
  settings: RunSettings;
  tasks: TaskRow[];
}

export function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  const pool = process.env['UV_THREADPOOL_SIZE'];
  return {
    node: process.version,
    gdal: gdal.version,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: os.availableParallelism(),
    uvThreadpoolSize: pool && pool.trim() !== '' ? pool : 'unset (libuv default 4)',
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  };
}

/** The row of a finished task; throws when tinybench did not complete it (an error is a failed run). */
export function taskRow(task: Task, bytes: number | undefined): TaskRow {
  const result = task.result;
  if (result.state === 'errored') throw new Error(`task '${task.name}' failed: ${result.error.message}`, { cause: result.error });
  if (result.state !== 'completed') throw new Error(`task '${task.name}' did not complete (${result.state})`);
  const { latency } = result;
  const row: TaskRow = {
    name: task.name,
    samples: latency.samplesCount,
    meanMs: latency.mean,
    medianMs: latency.p50,
    p99Ms: latency.p99,
    opsPerSec: latency.mean > 0 ? 1000 / latency.mean : Infinity,
  };
  if (bytes !== undefined) row.bytes = bytes;
  return row;
}

/** Three significant digits, without exponent notation for the magnitudes a benchmark shows. */
function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toPrecision(3);
}

export function toMarkdown(report: Report): string {
  const m = report.machine;
  const s = report.settings;
  const lines = [
    `# tessera micro-benchmarks (${s.mode})`,
    '',
    `- date: ${report.date}`,
    `- node ${m.node}, GDAL ${m.gdal}, ${m.platform}`,
    `- CPU: ${m.cpuModel} × ${m.cpuCount}; UV_THREADPOOL_SIZE: ${m.uvThreadpoolSize}`,
    `- tinybench: ≥ ${s.timeMs} ms and ≥ ${s.iterations} samples per task, after ≥ ${s.warmupTimeMs} ms / ${s.warmupIterations} warmup calls` +
      (s.filter ? `; filter /${s.filter}/i` : ''),
    '- one caller, calls back to back; ops/s = 1000 / mean',
    '',
    '| task | samples | mean ms | median ms | p99 ms | ops/s | bytes |',
    '|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const t of report.tasks) {
    const bytes = t.bytes === undefined ? '' : t.bytes.toLocaleString('en-US');
    lines.push(`| ${t.name} | ${t.samples} | ${fmt(t.meanMs)} | ${fmt(t.medianMs)} | ${fmt(t.p99Ms)} | ${fmt(t.opsPerSec)} | ${bytes} |`);
  }
  return `${lines.join('\n')}\n`;
}
