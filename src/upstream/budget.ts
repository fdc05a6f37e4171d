/**
 * Bytes a request may fetch from upstream (TESSERA_MAX_UPSTREAM_BYTES): documents and raster reads
 * together, so that no request (a hostile TIFF with huge tiles, a mosaic of many large files) can
 * make tessera download without bound.
 *
 * A request's budget lives in shared memory, in a *slot*, so that the gateway's thread can charge
 * it as bytes arrive. GDAL's reads reach the gateway under a *lane* (a path segment given to each
 * open dataset handle): a handle serves one call at a time, so for the length of a call its lane
 * names the slot of the request that holds it (`Budgets.metered`). The gateway charges the lane's
 * slot for every byte relayed and refuses (or cuts) reads once the slot is spent; the call then
 * fails and `exhausted` says why. Parallel reads of one request (mosaic assets, STAC assets) charge
 * one slot, so the bound holds for the request as a whole.
 *
 * The same record gives each request its turns at GDAL (`turn`): at most `turns` of its opens and
 * reads run at once, the rest wait in order. GDAL's calls run on libuv's thread pool, first come
 * first served: one request naming hundreds of files queued every thread and made every other
 * request wait behind it (an unrelated tile waited 13-32 s). And when a request ends (answered,
 * refused, or its client gone) the calls it queued and had not started are dropped (ClientGone),
 * not run, unless it still carries on with work after its answer (`finishAfter`).
 *
 * Which request is current comes from an AsyncLocalStorage entered when the request starts; work
 * outside a request (tools, tests of the core) is not metered. So is a request that finds every
 * slot taken (thousands in flight), and every read when the gateway is off (GDAL then fetches by
 * itself).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TesseraError } from '../errors.js';

const MAX_UPSTREAM_BYTES_SETTING = 'TESSERA_MAX_UPSTREAM_BYTES';

/** Lanes (open handles) and slots (requests in flight) the shared arrays hold. */
const LANES = 4096;
const SLOTS = 4096;
/** Lane 0 is never metered: handles opened past LANES share it. */
export const UNMETERED_LANE = 0;

/** The shared arrays, handed to the gateway's thread. */
export interface BudgetMemory {
  /** Per lane: the slot it charges, or -1 for none. */
  laneSlot: Int32Array;
  /** Per slot: bytes the request may still fetch (may go below zero by the last chunk). */
  remaining: BigInt64Array;
  /** Per slot: upstream requests the request has sent (for its log line). */
  requests: Int32Array;
}

export function budgetMemory(): BudgetMemory {
  const laneSlot = new Int32Array(new SharedArrayBuffer(LANES * 4));
  laneSlot.fill(-1);
  return { laneSlot, remaining: new BigInt64Array(new SharedArrayBuffer(SLOTS * 8)), requests: new Int32Array(new SharedArrayBuffer(SLOTS * 4)) };
}

/** The gateway's side: counts one upstream request sent for the request reading on `lane`. */
export function countRequest(memory: BudgetMemory, lane: number): void {
  const slot = lane > UNMETERED_LANE && lane < LANES ? Atomics.load(memory.laneSlot, lane) : -1;
  if (slot >= 0) Atomics.add(memory.requests, slot, 1);
}

/** The gateway's side: charges `bytes` to the request reading on `lane`; false once its budget is spent. */
export function charge(memory: BudgetMemory, lane: number, bytes: number): boolean {
  const slot = lane > UNMETERED_LANE && lane < LANES ? Atomics.load(memory.laneSlot, lane) : -1;
  if (slot < 0) return true;
  return Atomics.sub(memory.remaining, slot, BigInt(bytes)) - BigInt(bytes) >= 0n;
}

/** The gateway's side: counts one upstream request sent for the request in `slot` (-1: none). */
export function countSlotRequest(memory: BudgetMemory, slot: number): void {
  if (slot >= 0 && slot < SLOTS) Atomics.add(memory.requests, slot, 1);
}

/** The gateway's side: charges `bytes` to the request in `slot` (-1: none); false once its budget is spent. */
export function chargeSlot(memory: BudgetMemory, slot: number, bytes: number): boolean {
  if (slot < 0 || slot >= SLOTS) return true;
  return Atomics.sub(memory.remaining, slot, BigInt(bytes)) - BigInt(bytes) >= 0n;
}

/** The gateway's side: whether the request in `slot` (-1: none) may still fetch. */
export function slotMayFetch(memory: BudgetMemory, slot: number): boolean {
  return slot < 0 || slot >= SLOTS || Atomics.load(memory.remaining, slot) > 0n;
}

/** The gateway's side: whether the request reading on `lane` may still fetch. */
export function mayFetch(memory: BudgetMemory, lane: number): boolean {
  const slot = lane > UNMETERED_LANE && lane < LANES ? Atomics.load(memory.laneSlot, lane) : -1;
  return slot < 0 || Atomics.load(memory.remaining, slot) > 0n;
}

interface RequestBudget {
  slot: number;
  /** Loads other requests may wait for, started by this request and not finished. */
  loads: number;
  /** Work the request carries on with after its answer (`finishAfter`), not finished. */
  after: number;
  /** The request is over; its slot is closed once its loads are done. */
  ended: boolean;
  /** GDAL calls running in the request's turns (see `turn`), and those waiting for one. */
  running: number;
  waiting: Array<{ go: () => void; drop: (err: TesseraError) => void }>;
}

const requestEnded = (): TesseraError => new TesseraError('ClientGone', 'the request ended before this read started');

/**
 * Ends a request's budget; `spent()` tells the bytes it fetched from upstream and `requests()` the
 * upstream requests it sent (both frozen at release).
 */
export type BudgetRelease = (() => void) & { spent: () => number; requests: () => number };

/** The main thread's side: slots per request, lanes per handle. */
export class Budgets {
  readonly memory = budgetMemory();
  private readonly current = new AsyncLocalStorage<RequestBudget>();
  /** Set inside a turn: a call made from within one runs in it (no second turn, no deadlock). */
  private readonly inTurn = new AsyncLocalStorage<true>();
  private readonly freeSlots: number[] = [];
  private readonly freeLanes: number[] = [];

  /** `turns`: GDAL calls one request runs at once (0: no limit; TESSERA_REQUEST_CONCURRENCY). */
  constructor(
    readonly maxBytes: number,
    readonly turns = 0,
  ) {
    for (let s = SLOTS - 1; s >= 0; s--) this.freeSlots.push(s);
    for (let l = LANES - 1; l > UNMETERED_LANE; l--) this.freeLanes.push(l);
  }

  /**
   * Makes the rest of the current asynchronous flow (a request) charge a budget of its own, until
   * `release` is called. With no slot free, the flow is not metered.
   */
  enter(): BudgetRelease {
    const slot = this.freeSlots.pop();
    if (slot === undefined) return Object.assign(() => undefined, { spent: () => 0, requests: () => 0 });
    const start = BigInt(Math.min(this.maxBytes, Number.MAX_SAFE_INTEGER));
    Atomics.store(this.memory.remaining, slot, start);
    Atomics.store(this.memory.requests, slot, 0);
    const budget: RequestBudget = { slot, loads: 0, after: 0, ended: false, running: 0, waiting: [] };
    this.current.enterWith(budget);
    let released: number | undefined;
    let sent: number | undefined;
    const spent = (): number => released ?? Math.max(0, Number(start - Atomics.load(this.memory.remaining, slot)));
    const requests = (): number => sent ?? Atomics.load(this.memory.requests, slot);
    const release = (): void => {
      if (released !== undefined) return;
      released = spent();
      sent = requests();
      budget.ended = true;
      if (budget.after === 0) for (const w of budget.waiting.splice(0)) w.drop(requestEnded());
      if (budget.loads === 0 && budget.after === 0) this.close(budget);
    };
    return Object.assign(release, { spent, requests });
  }

  /**
   * Runs `call` (a GDAL open or read) in one of the current request's turns: at once while fewer
   * than `turns` of its calls run, else after those queued before it. A request that has ended
   * (and carries on with nothing after its answer) starts no call: ClientGone. Outside a request,
   * or inside a turn already, the call runs at once.
   */
  async turn<T>(call: () => Promise<T>): Promise<T> {
    const budget = this.current.getStore();
    if (!budget || this.turns <= 0 || this.inTurn.getStore()) return call();
    if (budget.ended && budget.after === 0) throw requestEnded();
    if (budget.running < this.turns) budget.running++;
    // Queued: the turn is handed over by the call that ends (running stays as it is).
    else await new Promise<void>((go, drop) => budget.waiting.push({ go, drop }));
    try {
      return await this.inTurn.run(true, call);
    } finally {
      const next = budget.waiting.shift();
      if (next) next.go();
      else budget.running--;
    }
  }

  /** Counts one upstream request sent on this thread (documents, byte ranges) for the current request. */
  countCurrent(): void {
    const budget = this.current.getStore();
    if (budget) Atomics.add(this.memory.requests, budget.slot, 1);
  }

  /**
   * The request is over (answered, or its client left): what it still has in flight may fetch
   * nothing more. The gateway refuses its handles' reads, chargeCurrent its documents, so a client
   * that goes away stops its upstream traffic at once. The slot is reused last.
   */
  private close(budget: RequestBudget): void {
    Atomics.store(this.memory.remaining, budget.slot, 0n);
    this.freeSlots.unshift(budget.slot);
  }

  /**
   * Runs a load that every request asking for the same thing waits for (a source's metadata, a
   * document). It is charged to the request that starts it, as any of its reads, but that request's
   * budget stays open until the load is done even if its client leaves: the others waiting for the
   * load must not fail because one client went away. A request whose client has already left starts
   * no load at all (ClientGone); one still waiting for it starts it again (`startAgain`).
   */
  async shared<T>(load: () => Promise<T>): Promise<T> {
    const budget = this.current.getStore();
    if (!budget) return load();
    if (budget.ended && budget.after === 0) throw new TesseraError('ClientGone', 'the client went away before this was read');
    budget.loads++;
    try {
      return await load();
    } finally {
      budget.loads--;
      if (budget.ended && budget.loads === 0 && budget.after === 0) this.close(budget);
    }
  }

  /**
   * Runs work the current request carries on with after its answer (a mosaic tile answered in part,
   * finished for the tile cache): its budget stays open, and its loads may start, until the work is
   * done. Started while the request is still on.
   */
  async finishAfter<T>(work: () => Promise<T>): Promise<T> {
    const budget = this.current.getStore();
    if (!budget) return work();
    budget.after++;
    try {
      return await work();
    } finally {
      budget.after--;
      if (budget.ended && budget.loads === 0 && budget.after === 0) this.close(budget);
    }
  }

  /** A shared load failed because the request that started it was over: the current one, still on, should start it itself. */
  startAgain(err: unknown): boolean {
    const budget = this.current.getStore();
    return err instanceof TesseraError && err.kind === 'ClientGone' && (budget?.ended !== true || budget.after > 0);
  }

  /** Bytes the current request may still fetch (Infinity outside a request). */
  remaining(): number {
    const budget = this.current.getStore();
    return budget ? Number(Atomics.load(this.memory.remaining, budget.slot)) : Infinity;
  }

  /** Charges the current request for bytes fetched on this thread (documents); false once spent. */
  chargeCurrent(bytes: number): boolean {
    const budget = this.current.getStore();
    if (!budget) return true;
    return Atomics.sub(this.memory.remaining, budget.slot, BigInt(bytes)) - BigInt(bytes) >= 0n;
  }

  /** The current request's slot, for work the gateway does on its behalf (-1: not metered). */
  currentSlot(): number {
    return this.current.getStore()?.slot ?? -1;
  }

  /** A lane for a new handle (UNMETERED_LANE when every lane is taken). */
  takeLane(): number {
    return this.freeLanes.pop() ?? UNMETERED_LANE;
  }

  /**
   * Frees a lane; it is reused last (after every other free lane). GDAL remembers per URL what it
   * learned of a file, failures included (a HEAD answered 500 makes later opens say "does not
   * exist"): a handle opened after a failure gets a lane, so a URL, that GDAL has not seen fail.
   */
  releaseLane(lane: number): void {
    if (lane === UNMETERED_LANE) return;
    Atomics.store(this.memory.laneSlot, lane, -1);
    this.freeLanes.unshift(lane);
  }

  /** Runs one call on a handle whose reads come in on `lane`, charging the current request. */
  async metered<T>(lane: number | undefined, fn: () => Promise<T> | T): Promise<T> {
    const budget = this.current.getStore();
    if (!budget || lane === undefined || lane === UNMETERED_LANE) return fn();
    Atomics.store(this.memory.laneSlot, lane, budget.slot);
    try {
      return await fn();
    } finally {
      Atomics.store(this.memory.laneSlot, lane, -1);
    }
  }

  /** True when the current request has spent its budget (a failed read then failed for that). */
  exhausted(): boolean {
    return this.remaining() <= 0;
  }

  overBudgetMessage(): string {
    return `The request fetched more than ${this.maxBytes} bytes from upstream (${MAX_UPSTREAM_BYTES_SETTING}); ask for a smaller area or fewer assets`;
  }
}
