/**
 * Resident memory and CPU time of a server and every process under it (uvicorn's supervisor and its
 * workers together), read from /proc while the benchmark runs: memory sampled for its peak, CPU time
 * read before and after a run, so that a server's CPU per tile under load is what it used divided by
 * what it answered.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Pids of `root` and all its descendants. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: fields start after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Sum of VmRSS over the tree, in bytes. */
export function treeRss(root: number): number {
  let kb = 0;
  for (const pid of processTree(root)) {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
    } catch {
      // Gone.
    }
  }
  return kb * 1024;
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on every Linux the bench runs on). */
const USER_HZ = 100;

/**
 * User plus system CPU seconds of `root` and its living descendants, all their threads included
 * (utime and stime of /proc/<pid>/stat). A process that ended between two readings takes its time
 * with it: the benchmark reads servers whose workers live as long as they do.
 */
export function treeCpuSeconds(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name: state is [0], utime [11], stime [12].
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // Gone.
    }
  }
  return ticks / USER_HZ;
}

/**
 * CPU seconds the whole machine spent busy (every core; /proc/stat's first line less idle and
 * iowait). Less the benchmark's own process tree over the same run, it is what other processes
 * took: a build or test suite running beside the benchmark takes a core from whichever server is
 * measured, and the report says how much there was.
 */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - f[3]! - f[4]!) / USER_HZ;
}

export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private peakBytes = 0;

  constructor(
    private readonly root: number,
    private readonly intervalMs = 200,
  ) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  /** Peak since start (or the last reset), sampling once more now. */
  peak(): number {
    this.sample();
    return this.peakBytes;
  }

  resetPeak(): void {
    this.peakBytes = 0;
    this.sample();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private sample(): void {
    this.peakBytes = Math.max(this.peakBytes, treeRss(this.root));
  }
}
