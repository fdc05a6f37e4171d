/**
 * Open GDAL datasets, pooled per source path.
 *
 * gdal-async locks a dataset for the duration of each async call, so one handle serves one request
 * at a time. Keeping handles open means a warm request never re-reads a header (and keeps the
 * handle's VSI block cache); several handles per hot source let concurrent tiles of one file run in
 * parallel on the libuv pool. The pool is bounded in total: idle handles of the least recently used
 * sources are closed first.
 */
import { gdal, type Dataset } from './gdal.js';
import { TesseraError } from '../errors.js';

interface Entry {
  path: string;
  idle: Dataset[];
  /** Handles open or being opened for this source. */
  size: number;
  waiters: Array<(result: Dataset | null | Error) => void>;
  /** True once a handle opened: only then are more handles opened in parallel. */
  known: boolean;
}

export interface PoolOptions {
  handlesPerSource: number;
  maxHandles: number;
  /** Opens a handle; defaults to gdal.openAsync. */
  open?: (path: string) => Promise<Dataset>;
}

export class DatasetPool {
  /** Insertion order = recency: a used entry is moved to the end. */
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  private readonly open: (path: string) => Promise<Dataset>;

  constructor(private readonly opts: PoolOptions) {
    this.open = opts.open ?? ((p) => gdal.openAsync(p));
  }

  /** Runs `fn` with a handle of `path` held exclusively, then returns the handle to the pool. */
  async use<T>(path: string, fn: (ds: Dataset) => Promise<T> | T): Promise<T> {
    const entry = this.entry(path);
    const ds = await this.acquire(entry);
    let healthy = true;
    try {
      return await fn(ds);
    } catch (err) {
      // A failed GDAL call can leave a handle in a bad state (e.g. a truncated upstream): drop it.
      // Our own errors (tile outside bounds, bad band index) say nothing about the handle.
      healthy = err instanceof TesseraError;
      throw err;
    } finally {
      this.release(entry, ds, healthy);
    }
  }

  get stats(): { sources: number; handles: number } {
    return { sources: this.entries.size, handles: this.total };
  }

  /** Closes every idle handle (busy ones close when released). */
  closeAll(): void {
    for (const entry of this.entries.values()) {
      for (const ds of entry.idle.splice(0)) this.closeHandle(entry, ds);
    }
  }

  private entry(path: string): Entry {
    let entry = this.entries.get(path);
    if (entry) {
      this.entries.delete(path);
    } else {
      entry = { path, idle: [], size: 0, waiters: [], known: false };
    }
    this.entries.set(path, entry);
    return entry;
  }

  private async acquire(entry: Entry): Promise<Dataset> {
    for (;;) {
      const idle = entry.idle.pop();
      if (idle) return idle;
      // A cold source is opened once at a time: concurrent opens of one URL cost extra header reads,
      // and GDAL 3.6's curl cache can stall one open on another's failed download.
      const mayOpen = entry.size < this.opts.handlesPerSource && (entry.known || entry.size === 0);
      if (mayOpen) {
        this.makeRoom();
        entry.size++;
        this.total++;
        try {
          const ds = await this.open(entry.path);
          entry.known = true;
          return ds;
        } catch (err) {
          entry.size--;
          this.total--;
          // Everyone waiting asked for the same source: they share its failure.
          for (const waiter of entry.waiters.splice(0)) waiter(err instanceof Error ? err : new Error(String(err)));
          this.forgetIfEmpty(entry);
          throw err;
        }
      }
      const result = await new Promise<Dataset | null | Error>((resolve) => entry.waiters.push(resolve));
      if (result instanceof Error) throw result;
      if (result) return result;
    }
  }

  private release(entry: Entry, ds: Dataset, healthy: boolean): void {
    if (!healthy) {
      this.closeHandle(entry, ds);
      entry.waiters.shift()?.(null);
      this.forgetIfEmpty(entry);
      return;
    }
    const waiter = entry.waiters.shift();
    if (waiter) {
      waiter(ds);
      return;
    }
    entry.idle.push(ds);
    if (this.total > this.opts.maxHandles) this.makeRoom();
  }

  /** Closes idle handles of the least recently used sources until a new handle fits. */
  private makeRoom(): void {
    if (this.total < this.opts.maxHandles) return;
    for (const entry of this.entries.values()) {
      while (entry.idle.length > 0 && this.total >= this.opts.maxHandles) {
        this.closeHandle(entry, entry.idle.shift()!);
      }
      this.forgetIfEmpty(entry);
      if (this.total < this.opts.maxHandles) return;
    }
  }

  private closeHandle(entry: Entry, ds: Dataset): void {
    entry.size--;
    this.total--;
    try {
      ds.close();
    } catch {
      // already closed
    }
  }

  private forgetIfEmpty(entry: Entry): void {
    if (entry.size === 0 && entry.waiters.length === 0 && this.entries.get(entry.path) === entry) {
      this.entries.delete(entry.path);
    }
  }
}
