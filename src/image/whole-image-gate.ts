/**
 * Whole-image requests (previews, bbox and feature parts, statistics) hold tens to hundreds of MiB
 * each where a tile holds one or two, and running more of them than there are cores does not end
 * them sooner. This gate bounds both what they hold together and how many run:
 *   - bytes (TESSERA_MAX_IMAGE_BYTES): one 8000×8000 part holds ~600 MiB where a 1024-px preview
 *     holds 20, so a count alone bounds nothing (sixteen large parts at once took 1.7 GiB);
 *   - slots (TESSERA_LARGE_REQUESTS, the cores): sixteen 1024-px previews at once only raised
 *     memory and the tail latency of everything else.
 *
 * A request that may read a whole image is made a *holder* when it starts (`enter`). Once its reads
 * are planned, before any pixel is read, it asks for a slot and the bytes they will hold at their
 * peak (`reserve`, with `estimateImageBytes`), both at once: first come first served, a request
 * waits until a slot is free and its bytes fit beside those held; a request larger than the whole
 * capacity waits until nothing else is held, then runs alone. Later reservations of the same holder
 * (the features of one statistics request) are granted at once: a holder never waits while holding
 * anything, so holders cannot wait on each other. Everything is released when the request ends,
 * however it ends; a request that ends while waiting is taken out of the queue. Work outside a
 * holder (tiles) passes through untouched.
 *
 * A request whose turn would come too late is told at once: each holder carries its deadline, the
 * gate keeps the average time a holder holds its slot, and a request that would have to wait longer
 * than its deadline leaves room for is refused with Busy (503 and Retry-After), when it asks and
 * again whenever a holder ends and the average moves, instead of waiting out its deadline in the
 * queue for a 504 (sixteen 8192² previews at once on 2 cores: four of them waited 30 s for one).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import os from 'node:os';
import { TesseraError } from '../errors.js';

const MAX_IMAGE_BYTES_SETTING = 'TESSERA_MAX_IMAGE_BYTES';

/*
 * What a whole-image request holds at its peak, per output value (one band of one pixel): GDAL's
 * destination buffer and the ImageData it becomes (2 samples), the rescaled or float work array of
 * the answer (4 B); statistics add a float copy of the values and a sorted one (8 B + 2 samples);
 * per pixel, whatever the bands, the mask and the encoder's alpha (2 B). Measured peaks (RSS above
 * the idle server, one request alone, 20–64 M values) against this model:
 *   UInt16, 1 band:  part warped to PNG 9.9 (model 10), preview with an expression 10.3 (10),
 *                    preview 6.2 (10), statistics 19.2 (22) B per value;
 *   Byte, 3 bands:   preview PNG 3.9 (6.7), JPEG 4.6 (6.7), statistics 8.9 (16.7) B per value.
 * It errs above the measure, never far below it.
 */
const WORK_BYTES_PER_VALUE = 4;
const STATISTICS_BYTES_PER_VALUE = 8;
const BYTES_PER_PIXEL = 2;

/** Peak bytes held while reading `pixels` pixels of `bands` bands of `sampleBytes`-byte samples and making the answer. */
export function estimateImageBytes(pixels: number, bands: number, sampleBytes: number, statistics = false): number {
  const perValue = 2 * sampleBytes + WORK_BYTES_PER_VALUE + (statistics ? STATISTICS_BYTES_PER_VALUE + 2 * sampleBytes : 0);
  return pixels * (bands * perValue + BYTES_PER_PIXEL);
}

/** Bytes of one sample of a GDAL data type ('Byte', 'UInt16', 'Float32', 'CInt16' …). */
export function sampleBytes(dataType: string | undefined): number {
  const bits = /(\d+)$/.exec(dataType ?? '');
  const size = bits ? Number(bits[1]) / 8 : 1;
  return dataType?.startsWith('C') ? 2 * size : size;
}

/** The default byte capacity: an eighth of the memory this process may use, at most 1 GiB. */
export function defaultImageBytes(): number {
  const constrained = typeof process.constrainedMemory === 'function' ? process.constrainedMemory() : 0;
  const memory = constrained && constrained > 0 && constrained < os.totalmem() ? constrained : os.totalmem();
  return Math.min(2 ** 30, Math.floor(memory / 8));
}

interface Holding {
  /** Bytes reserved (0: no slot taken yet). */
  held: number;
  released: boolean;
  /** When the request must have answered (ms since the epoch; Infinity: never refused early). */
  deadline: number;
  /** When it took its slot (ms since the epoch). */
  since: number;
}

/** Weight of the latest hold in the average hold time. */
const HOLD_WEIGHT = 0.3;

interface Waiter {
  holding: Holding;
  bytes: number;
  grant: () => void;
  cancel: (err: Error) => void;
}

export class WholeImageGate {
  private used = 0;
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private readonly current = new AsyncLocalStorage<Holding>();
  /** Most bytes and most requests ever held at once (for tests and metrics). */
  peakBytes = 0;
  peakRunning = 0;

  /** Requests holding a slot, bytes they hold, requests waiting (for /metrics). */
  get stats(): { running: number; bytes: number; waiting: number } {
    return { running: this.running, bytes: this.used, waiting: this.waiting.length };
  }

  constructor(
    readonly slots: number,
    readonly capacity: number,
  ) {
    if (!(slots >= 1)) throw new Error(`the whole-image gate needs at least one slot, got ${slots}`);
    if (!(capacity > 0)) throw new Error(`${MAX_IMAGE_BYTES_SETTING} must be positive, got ${capacity}`);
  }

  /** Average time a holder held its slot, in ms (exponentially weighted; undefined before the first). */
  private holdMs: number | undefined;

  /**
   * Makes the rest of the current asynchronous flow (a request) a holder, until the returned
   * function is called. `deadline` (ms since the epoch): when the request must have answered.
   */
  enter(deadline = Number.POSITIVE_INFINITY): () => void {
    const holding: Holding = { held: 0, released: false, deadline, since: 0 };
    this.current.enterWith(holding);
    return () => this.release(holding);
  }

  /**
   * Raises the current holder's reservation to at least `bytes` (at least one byte: a slot). The
   * first reservation waits for a slot and room; later ones are granted at once. Outside a holder
   * it does nothing. If the request ends while waiting, the wait ends with an error.
   */
  async reserve(bytes: number): Promise<void> {
    const holding = this.current.getStore();
    if (!holding || holding.released) return;
    // An estimate that is not a number (sizes of NaN from hostile geometry) counts as the whole
    // capacity: it never waits forever for room it cannot fit in.
    const want = Number.isFinite(bytes) ? Math.max(1, bytes) : Number.isNaN(bytes) ? this.capacity : Number.MAX_SAFE_INTEGER;
    if (want <= holding.held) return;
    if (holding.held > 0 || (this.waiting.length === 0 && this.fits(want))) {
      this.take(holding, want);
      return;
    }
    const late = this.tooLate(holding, this.waiting.length);
    if (late) throw late;
    await new Promise<void>((grant, cancel) => this.waiting.push({ holding, bytes: want, grant, cancel }));
  }

  /**
   * Busy when a holder waiting behind `ahead` others could not finish before its deadline: with a
   * slot free for it, it starts now; else its turn comes after about (queued for a busy slot /
   * slots + 1/2) average holds (the running ones are half done on average). Then it holds for one.
   * Undefined while it may still make it, or nothing is measured yet.
   */
  private tooLate(holding: Holding, ahead: number): TesseraError | undefined {
    const hold = this.holdMs;
    if (hold === undefined || !Number.isFinite(holding.deadline)) return undefined;
    const behindBusy = ahead - (this.slots - this.running);
    const wait = behindBusy < 0 ? 0 : (behindBusy / this.slots + 0.5) * hold;
    if (Date.now() + wait + hold <= holding.deadline) return undefined;
    const retryAfterSeconds = Math.max(1, Math.ceil((wait + hold) / 1000));
    return new TesseraError(
      'Busy',
      `Server busy: ${this.running} whole-image requests running and ${ahead} waiting would not let this one finish in time; retry in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
    );
  }

  /** Bytes held now, requests running and requests waiting. */
  get heldBytes(): number {
    return this.used;
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** A new holder of `bytes` may start now. Beyond the capacity it may start only alone. */
  private fits(bytes: number): boolean {
    return this.running < this.slots && this.used + Math.min(bytes, this.capacity) <= this.capacity;
  }

  /** Books `bytes` for `holding`; the gate counts at most its capacity for one holder. */
  private take(holding: Holding, bytes: number): void {
    if (bytes <= holding.held || holding.released) return;
    if (holding.held === 0) {
      this.running++;
      holding.since = Date.now();
    }
    this.used += Math.min(bytes, this.capacity) - Math.min(holding.held, this.capacity);
    holding.held = bytes;
    this.peakBytes = Math.max(this.peakBytes, this.used);
    this.peakRunning = Math.max(this.peakRunning, this.running);
  }

  private release(holding: Holding): void {
    if (holding.released) return;
    holding.released = true;
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const w = this.waiting[i]!;
      if (w.holding !== holding) continue;
      this.waiting.splice(i, 1);
      w.cancel(new Error('the request ended while waiting to read a whole image'));
    }
    if (holding.held > 0) {
      this.used -= Math.min(holding.held, this.capacity);
      this.running--;
      holding.held = 0;
      const held = Date.now() - holding.since;
      this.holdMs = this.holdMs === undefined ? held : this.holdMs + HOLD_WEIGHT * (held - this.holdMs);
    }
    // The late are told before the others are let in: a slot goes to one that can still use it.
    this.refuseLate();
    this.admit();
  }

  /** Waiters that can no longer finish in time, with what is known now, are told so (Busy). */
  private refuseLate(): void {
    let ahead = 0;
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i]!;
      const late = w.holding.held === 0 ? this.tooLate(w.holding, ahead) : undefined;
      if (late) {
        this.waiting.splice(i, 1);
        w.cancel(late);
      } else {
        ahead++;
        i++;
      }
    }
  }

  /** Grants waiters in order while the first of them may start (or already holds: a holder never waits). */
  private admit(): void {
    for (;;) {
      const next = this.waiting[0];
      if (!next || (next.holding.held === 0 && !this.fits(next.bytes))) return;
      this.waiting.shift();
      this.take(next.holding, next.bytes);
      next.grant();
      // Other reservations the same request queued meanwhile (its parts planned in parallel) go too.
      for (let i = this.waiting.length - 1; i >= 0; i--) {
        const w = this.waiting[i]!;
        if (w.holding !== next.holding) continue;
        this.waiting.splice(i, 1);
        this.take(w.holding, w.bytes);
        w.grant();
      }
    }
  }
}
