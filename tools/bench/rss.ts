/**
 * Resident memory of a server and every process under it (uvicorn's supervisor and its workers
 * together), sampled from /proc while the benchmark runs; the peak is what the report shows.
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
