/**
 * The event-loop watchdog. Everything tessera serves waits on one event loop: a request that holds
 * it (a long synchronous loop over user-sized data) delays every other answer and /healthz with it.
 * The watchdog ticks every INTERVAL_MS; a tick that comes late by more than the threshold
 * (TESSERA_STALL_WARN_MS) is a stall, logged once with the requests that were in flight (one of
 * them held the loop), so that such a request is found from the logs, not from users. Stalls are
 * counted and the worst is kept (for the tests, and for /metrics).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

const INTERVAL_MS = 20;
/** Requests named in one stall report. */
const MAX_NAMED = 8;
const MAX_RECENT = 16;
/** Characters of a request's URL in a report (URLs carry long queries). */
const MAX_URL = 300;

export interface StallReport {
  stalledMs: number;
  /** "METHOD url" of the requests in flight, oldest first. */
  inFlight: string[];
}

export class LoopWatchdog {
  private readonly requests = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private readonly delays: ReturnType<typeof monitorEventLoopDelay>;
  /** Stalls seen, the longest delay of a tick (ms, stall or not), and the last few stall reports. */
  stalls = 0;
  worstMs = 0;
  readonly recent: StallReport[] = [];

  constructor(
    readonly thresholdMs: number,
    private readonly report: (stall: StallReport) => void,
  ) {
    this.delays = monitorEventLoopDelay({ resolution: INTERVAL_MS });
  }

  start(): this {
    if (this.timer) return this;
    this.delays.enable();
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(), INTERVAL_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.delays.disable();
  }

  /** A request started; `end` when it is answered or abandoned. */
  begin(id: string, method: string, url: string): () => void {
    this.requests.set(id, `${method} ${url.length > MAX_URL ? `${url.slice(0, MAX_URL)}…` : url}`);
    return () => this.requests.delete(id);
  }

  /** Event-loop delay percentiles since start, in milliseconds. */
  delayMs(percentile: number): number {
    return this.delays.percentile(percentile) / 1e6;
  }

  private tick(): void {
    const now = performance.now();
    const late = now - this.last - INTERVAL_MS;
    this.last = now;
    this.worstMs = Math.max(this.worstMs, late);
    if (late <= this.thresholdMs) return;
    this.stalls++;
    const stall = { stalledMs: Math.round(late), inFlight: [...this.requests.values()].slice(0, MAX_NAMED) };
    this.recent.push(stall);
    if (this.recent.length > MAX_RECENT) this.recent.shift();
    this.report(stall);
  }
}
