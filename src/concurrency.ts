/**
 * Concurrency helpers every layer uses: bounded concurrency (mosaic assets, statistics features),
 * loads shared by whoever asks for the same thing while it runs (metadata, documents), and the
 * admission of CPU-bound requests (tiles).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** `fn` over every item with at most `limit` calls in flight; results in input order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}

/** Where shared loads are kept: a Map (while in flight) or an LRU cache (kept once done). */
export interface PromiseTable<T> {
  get(key: string): Promise<T> | undefined;
  set(key: string, value: Promise<T>): unknown;
  delete(key: string): unknown;
}

/** Shared loads that have settled: joining one is no wait. */
const settledLoads = new WeakSet<Promise<unknown>>();

/**
 * The load of `key` in progress (or kept, with `keep`), else a new one from `start`; failures are
 * never kept. A caller whose load failed with an error `startAgain` accepts (the request that
 * started it went away, upstream/budget.ts) starts it again itself.
 *
 * A caller that joins a load still in flight waits on I/O: it gives its admission slot back
 * meanwhile (`aside`). The request running the load gives its own back while the load reads, and
 * needs one again to finish it; were the waiters to keep theirs, a gate full of requests waiting for
 * one load would never give it one. Sixteen cold tiles of one mosaic at once, on a fresh server with
 * six slots, all ended as 504 after 30 s that way.
 */
export function sharedLoad<T>(
  table: PromiseTable<T>,
  key: string,
  start: () => Promise<T>,
  opts: { keep?: boolean; startAgain?: (err: unknown) => boolean } = {},
): Promise<T> {
  let pending = table.get(key);
  const joined = pending !== undefined && !settledLoads.has(pending);
  if (!pending) {
    const started = start();
    pending = started;
    table.set(key, started);
    const forget = (): void => {
      if (table.get(key) === started) table.delete(key);
    };
    const settled = (): void => void settledLoads.add(started);
    started.then(settled, settled);
    started.then(opts.keep ? undefined : forget, forget);
  }
  const load = pending;
  const waited = joined ? aside(() => load) : load;
  const startAgain = opts.startAgain;
  if (!startAgain) return waited;
  return waited.catch((err: unknown) => {
    if (startAgain(err)) return sharedLoad(table, key, start, opts);
    throw err;
  });
}

/** A request's place in an AdmissionGate. */
interface Ticket {
  gate: AdmissionGate;
  /** It holds one of the gate's slots now. */
  holds: boolean;
  /** Waits on I/O (`aside`) in progress; the slot is given back while there is one. */
  aside: number;
  /** The request is over: a wait on I/O that ends later takes no slot again. */
  ended: boolean;
  /** Its wait for a slot again, while one is queued (parallel waits on I/O share it). */
  retaking: Promise<void> | undefined;
}

const tickets = new AsyncLocalStorage<Ticket>();

/**
 * First come, first served admission of CPU-bound requests (tiles): at most `limit` run at once,
 * the others wait in the order they came. The machine makes tiles no faster when sixteen share its
 * cores than when a few do, but sharing stretches every tile's time by the number in flight, while
 * queueing adds one wait for all: measured on the benchmark's seven tile mixes at concurrency 16 (2
 * cores, 6 slots, A/B alternating, 3 × 8 s, medians): p99 26–41% lower (stac-rgb 253 → 187 ms,
 * 512-px tiles 657 → 388, mosaic 389 → 250; the cheap fixture tiles 108 → 108), the same rate
 * and CPU per tile.
 *
 * Waiting on the network is not CPU: a request that waits on I/O (`aside`: a read of blocks no
 * handle has read, a file being opened) gives its slot back meanwhile and, once the bytes are there,
 * takes a slot again ahead of requests that have not started (it has work in hand). So cold tiles
 * over a slow upstream still wait on it in parallel, as many as clients ask for.
 */
export class AdmissionGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Requests back from I/O: they take a freed slot before `waiting`. */
  private readonly returning: Array<() => void> = [];

  /** `limit` requests at once; Infinity admits everything without counting. */
  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`an admission gate needs at least one slot, got ${limit}`);
  }

  /** Requests holding a slot, and requests waiting for one (for /metrics). */
  get stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length + this.returning.length };
  }

  /**
   * Runs `fn` once a slot is free, holding it until `fn` settles (except while `fn` waits on I/O,
   * see `aside`). When `signal` aborts while the request still waits, the wait ends with its reason
   * and `fn` never runs: a client that left (a map panned away) does not hold up the ones after it.
   */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.limit === Number.POSITIVE_INFINITY) return fn();
    const ticket: Ticket = { gate: this, holds: false, aside: 0, ended: false, retaking: undefined };
    return tickets.run(ticket, async () => {
      try {
        await this.take(ticket, false, signal);
        return await fn();
      } finally {
        ticket.ended = true;
        if (ticket.holds) this.give(ticket);
      }
    });
  }

  private take(ticket: Ticket, returning: boolean, signal?: AbortSignal): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      ticket.holds = true;
      return Promise.resolve();
    }
    signal?.throwIfAborted();
    const queue = returning ? this.returning : this.waiting;
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const at = queue.indexOf(grant);
        if (at >= 0) queue.splice(at, 1);
        reject(signal!.reason);
      };
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
        // A request that ended while its wait on I/O queued for a slot takes none: pass it on.
        if (ticket.ended) {
          this.next();
          return;
        }
        this.running++;
        ticket.holds = true;
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(grant);
    });
  }

  private give(ticket: Ticket): void {
    ticket.holds = false;
    this.running--;
    this.next();
  }

  /** The freed slot to the first request back from I/O, else to the first waiting. */
  private next(): void {
    const grant = this.returning.shift() ?? this.waiting.shift();
    if (grant) grant();
  }

  /** See the free function `aside`. */
  async aside<T>(ticket: Ticket, fn: () => Promise<T>): Promise<T> {
    if (ticket.aside++ === 0 && ticket.holds) this.give(ticket);
    try {
      return await fn();
    } finally {
      // The last of the request's waits on I/O (a mosaic reads its assets in parallel) takes a slot again.
      if (--ticket.aside === 0 && !ticket.holds && !ticket.ended) {
        ticket.retaking ??= this.take(ticket, true).finally(() => (ticket.retaking = undefined));
        await ticket.retaking;
      }
    }
  }
}

/**
 * Runs `fn`, which waits on I/O, with the current request's admission slot (AdmissionGate) given
 * back meanwhile; outside an admitted request it just runs `fn`. For the layers below the API: they
 * say where they wait, not who admits whom.
 */
export function aside<T>(fn: () => Promise<T>): Promise<T> {
  const ticket = tickets.getStore();
  return ticket ? ticket.gate.aside(ticket, fn) : fn();
}
