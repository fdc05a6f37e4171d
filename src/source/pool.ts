/**
 * Open GDAL datasets, pooled per source path.
 *
 * gdal-async locks a dataset for the duration of each async call, so one handle serves one request
 * at a time. Keeping handles open means a warm request never re-reads a header, and GDAL's block
 * cache (decompressed blocks, kept per dataset handle) answers repeated reads without fetching or
 * inflating anything. Several handles per hot source let concurrent reads of one file wait on the
 * network in parallel.
 *
 * Handles hold slots 0…n-1 and a read names its slot by `affinity` (derived from the region it
 * reads): reads of one region always go to one handle and find its blocks cached, instead of every
 * handle caching (and inflating, and fetching) the same blocks. A read whose handle is busy waits
 * for it — the wait is short, a warm read holds a handle only to copy cached pixels, and on a cold
 * region the second read then finds the bytes the first fetched. Reads of other regions run on the
 * other handles; reads without affinity (metadata, points) take any idle handle.
 *
 * Waiting chains the fetches of a viewport never seen one after another on its region's handle
 * (gdal-async locks a dataset per call, and each read fetches the blocks the ones before did not).
 * So a read that names its blocks, of which its handle has not read all, says which
 * (`Affinity.cold`) before it runs or waits: the source layer has the upstream gateway fetch them
 * at once, in parallel with every other read waiting, and the read then finds them at loopback
 * speed. One handle still inflates and caches each block once.
 *
 * The pool is bounded in total: idle handles of the least recently used sources are closed first.
 */
import type { Dataset } from '../gdal/gdal.js';
import { rasterOpener } from './open.js';
import { TesseraError } from '../errors.js';
import { aside } from '../concurrency.js';

interface Handle {
  ds: Dataset;
  slot: number;
  /** The blocks (see Affinity) reads on this handle have read: what its block cache should hold. */
  blocks: Set<number>;
}

/**
 * Where a read goes: `region` (any non-negative integer) names the handle whose block cache should
 * serve it; `blocks` (numbers unique within the source) the blocks it reads, if known; `cold` is told
 * those of them that handle has not read, before the read runs or waits for it.
 */
export interface Affinity {
  region: number;
  blocks?: readonly number[] | undefined;
  /** The image (full resolution or overview) the blocks are of, by its size and block size. */
  image?: BlockedImage | undefined;
  cold?: ((blocks: number[]) => void) | undefined;
}

/** An image of a raster (full resolution or an overview) as blocks are counted in it. */
export interface BlockedImage {
  width: number;
  height: number;
  blockWidth: number;
  blockHeight: number;
}

/** A block's number within a source: overview level (-1: full resolution), then row and column. */
export function blockKey(level: number | undefined, col: number, row: number): number {
  return ((level ?? -1) + 1) * 2 ** 40 + row * 2 ** 20 + col;
}

/** The column and row of a block numbered by `blockKey`. */
export function blockCell(key: number): [number, number] {
  return [key % 2 ** 20, Math.floor(key / 2 ** 20) % 2 ** 20];
}

/** Blocks remembered per handle; past this the set starts again (GDAL's cache evicts too). */
const MAX_TRACKED_BLOCKS = 16_384;

interface Waiter {
  slot: number | undefined;
  resolve: (result: Handle | null | Error) => void;
}

interface Entry {
  path: string;
  /** Open handles by slot (undefined: slot free). */
  slots: Array<Handle | undefined>;
  /** Slots being opened. */
  opening: Set<number>;
  idle: Handle[];
  waiters: Waiter[];
  /** True once a handle opened: only then are more handles opened in parallel. */
  known: boolean;
}

export interface PoolOptions {
  handlesPerSource: number;
  maxHandles: number;
  /** Opens a handle; defaults to GDAL's GTiff driver alone (see open.ts). */
  open?: (path: string) => Promise<Dataset>;
  /** Told of every handle the pool closes (before it is closed). */
  onClose?: (ds: Dataset) => void;
  /** Runs each use (an open and a read) in the current request's turn (upstream/budget.ts `turn`). */
  turn?: <T>(call: () => Promise<T>) => Promise<T>;
}

/**
 * What reads found in their handle's block cache, as the pool knows it: a block a read names is a
 * hit when that handle has read it before (GDAL's cache should hold it decompressed), else a miss
 * (fetched or taken from the gateway, then inflated). A read is warm when all its blocks are hits,
 * cold when any is a miss, untracked when it names no blocks (metadata, points, warped reads).
 * An upper bound on GDAL's own hits: GDAL_CACHEMAX may have evicted a block the handle read.
 */
export interface BlockCacheStats {
  hits: number;
  misses: number;
  reads: { warm: number; cold: number; untracked: number };
}

export class DatasetPool {
  /** Insertion order = recency: a used entry is moved to the end. */
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  private readonly blockCache: BlockCacheStats = { hits: 0, misses: 0, reads: { warm: 0, cold: 0, untracked: 0 } };
  private readonly open: (path: string) => Promise<Dataset>;

  constructor(private readonly opts: PoolOptions) {
    this.open = opts.open ?? rasterOpener(['GTiff']);
  }

  /**
   * Runs `fn` with a handle of `path` held exclusively, then returns the handle to the pool.
   * `affinity` names the region read (a number, or with its blocks, see Affinity), so that reads of
   * one region share a handle and its block cache.
   */
  async use<T>(path: string, fn: (ds: Dataset) => Promise<T> | T, affinity?: number | Affinity): Promise<T> {
    const entry = this.entry(path);
    const aff = typeof affinity === 'number' ? { region: affinity } : affinity;
    const preferred = aff === undefined ? undefined : Math.abs(Math.trunc(aff.region)) % this.opts.handlesPerSource;
    const slotHandle = preferred === undefined ? undefined : entry.slots[preferred];
    // Blocks the region's handle has not read (all of them when it has no handle yet).
    const missing = aff?.blocks ? (slotHandle ? aff.blocks.filter((b) => !slotHandle.blocks.has(b)) : [...aff.blocks]) : [];
    // A read that waits on the network (a handle to open, blocks to fetch) gives the request's
    // admission slot back meanwhile (concurrency.ts), and runs in one of the request's turns
    // (upstream/budget.ts): those are the calls that hold a thread of the pool on the network. A
    // warm read (its handle open, its blocks read) is a copy from GDAL's cache and takes no turn:
    // metering it cost mosaic tiles 10-15 % (measured, in-process and in the benchmark).
    const opens = !entry.known || (preferred !== undefined && !slotHandle);
    const read = (): Promise<T> => this.readWith(entry, preferred, aff, missing, fn);
    if (!opens && missing.length === 0) return read();
    const waits = (): Promise<T> => aside(read);
    return this.opts.turn ? this.opts.turn(waits) : waits();
  }

  private async readWith<T>(
    entry: Entry,
    preferred: number | undefined,
    aff: Affinity | undefined,
    missing: number[],
    fn: (ds: Dataset) => Promise<T> | T,
  ): Promise<T> {
    const handle = await this.acquire(entry, preferred, aff, missing);
    this.countBlocks(handle, aff?.blocks);
    let healthy = true;
    try {
      const result = await fn(handle.ds);
      const blocks = aff?.blocks;
      if (blocks) {
        if (handle.blocks.size + blocks.length > MAX_TRACKED_BLOCKS) handle.blocks.clear();
        for (const b of blocks) handle.blocks.add(b);
      }
      return result;
    } catch (err) {
      // A failed GDAL call can leave a handle in a bad state (e.g. a truncated upstream): drop it.
      // Our own errors (tile outside bounds, bad band index) say nothing about the handle.
      healthy = err instanceof TesseraError;
      throw err;
    } finally {
      this.release(entry, handle, healthy);
    }
  }

  /** Counts a read's blocks against what the handle it got has read (BlockCacheStats). */
  private countBlocks(handle: Handle, blocks: readonly number[] | undefined): void {
    if (!blocks || blocks.length === 0) {
      this.blockCache.reads.untracked++;
      return;
    }
    let hits = 0;
    for (const b of blocks) if (handle.blocks.has(b)) hits++;
    this.blockCache.hits += hits;
    this.blockCache.misses += blocks.length - hits;
    if (hits === blocks.length) this.blockCache.reads.warm++;
    else this.blockCache.reads.cold++;
  }

  /** Block-cache outcomes since start (a copy). */
  get blockCacheStats(): BlockCacheStats {
    return { ...this.blockCache, reads: { ...this.blockCache.reads } };
  }

  /** Sources with handles, handles open (or opening), those in use, and calls waiting for one. */
  get stats(): { sources: number; handles: number; busy: number; waiting: number } {
    let idle = 0;
    let waiting = 0;
    for (const entry of this.entries.values()) {
      idle += entry.idle.length;
      waiting += entry.waiters.length;
    }
    return { sources: this.entries.size, handles: this.total, busy: Math.max(0, this.total - idle), waiting };
  }

  /** Closes every idle handle (busy ones close when released). */
  closeAll(): void {
    for (const entry of this.entries.values()) {
      for (const h of entry.idle.splice(0)) this.closeHandle(entry, h);
    }
  }

  private entry(path: string): Entry {
    let entry = this.entries.get(path);
    if (entry) {
      this.entries.delete(path);
    } else {
      entry = { path, slots: [], opening: new Set(), idle: [], waiters: [], known: false };
    }
    this.entries.set(path, entry);
    return entry;
  }

  /** Handles open or being opened for this source. */
  private size(entry: Entry): number {
    let open = 0;
    for (const h of entry.slots) if (h) open++;
    return open + entry.opening.size;
  }

  /** A slot with no handle (open or opening), the preferred one if free. */
  private freeSlot(entry: Entry, preferred: number | undefined): number | undefined {
    const free = (s: number): boolean => entry.slots[s] === undefined && !entry.opening.has(s);
    if (preferred !== undefined && free(preferred)) return preferred;
    for (let s = 0; s < this.opts.handlesPerSource; s++) if (free(s)) return s;
    return undefined;
  }

  private async acquire(entry: Entry, preferred: number | undefined, affinity: Affinity | undefined, missing: number[]): Promise<Handle> {
    // Blocks the region's handle has not read are fetched at once (see the top), before any wait.
    if (preferred !== undefined && affinity?.cold && missing.length > 0) affinity.cold(missing);
    for (;;) {
      const idleAt = preferred === undefined ? entry.idle.length - 1 : entry.idle.findIndex((h) => h.slot === preferred);
      if (idleAt >= 0) return entry.idle.splice(idleAt, 1)[0]!;
      // A cold source is opened once at a time: concurrent opens of one URL cost extra header reads,
      // and GDAL 3.6's curl cache can stall one open on another's failed download.
      const slot = entry.known || this.size(entry) === 0 ? this.freeSlot(entry, preferred) : undefined;
      if (slot !== undefined && (preferred === undefined || slot === preferred)) return this.openSlot(entry, slot);
      const result = await new Promise<Handle | null | Error>((resolve) => entry.waiters.push({ slot: preferred, resolve }));
      if (result instanceof Error) throw result;
      if (result) return result;
    }
  }

  private async openSlot(entry: Entry, slot: number): Promise<Handle> {
    this.makeRoom();
    entry.opening.add(slot);
    this.total++;
    let ds: Dataset;
    try {
      ds = await this.open(entry.path);
    } catch (err) {
      entry.opening.delete(slot);
      this.total--;
      // Everyone waiting asked for the same source: they share its failure.
      for (const waiter of entry.waiters.splice(0)) waiter.resolve(err instanceof Error ? err : new Error(String(err)));
      this.forgetIfEmpty(entry);
      throw err;
    }
    entry.opening.delete(slot);
    const handle: Handle = { ds, slot, blocks: new Set() };
    entry.slots[slot] = handle;
    entry.known = true;
    // Reads that queued while the source was cold may now open their own slots.
    this.wakeOpeners(entry);
    return handle;
  }

  private release(entry: Entry, handle: Handle, healthy: boolean): void {
    if (!healthy) {
      this.closeHandle(entry, handle);
      // A waiter for the freed slot (or any) may now open a handle there.
      let at = entry.waiters.findIndex((w) => w.slot === handle.slot);
      if (at < 0) at = entry.waiters.findIndex((w) => w.slot === undefined);
      if (at < 0 && entry.waiters.length > 0) at = 0;
      if (at >= 0) entry.waiters.splice(at, 1)[0]!.resolve(null);
      this.forgetIfEmpty(entry);
      return;
    }
    // A waiter for this handle's region first, else one that takes any handle.
    let at = entry.waiters.findIndex((w) => w.slot === handle.slot);
    if (at < 0) at = entry.waiters.findIndex((w) => w.slot === undefined);
    if (at >= 0) {
      entry.waiters.splice(at, 1)[0]!.resolve(handle);
      return;
    }
    entry.idle.push(handle);
    if (this.total > this.opts.maxHandles) this.makeRoom();
  }

  /** Wakes one waiter per free slot it prefers, to open that slot (the rest keep waiting for it). */
  private wakeOpeners(entry: Entry): void {
    const woken = new Set<number>();
    for (let i = 0; i < entry.waiters.length; i++) {
      const { slot } = entry.waiters[i]!;
      if (slot === undefined || woken.has(slot) || this.freeSlot(entry, slot) !== slot) continue;
      woken.add(slot);
      entry.waiters.splice(i--, 1)[0]!.resolve(null);
    }
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

  private closeHandle(entry: Entry, handle: Handle): void {
    const idle = entry.idle.indexOf(handle);
    if (idle >= 0) entry.idle.splice(idle, 1);
    if (entry.slots[handle.slot] === handle) entry.slots[handle.slot] = undefined;
    this.total--;
    this.opts.onClose?.(handle.ds);
    try {
      handle.ds.close();
    } catch {
      // already closed
    }
  }

  private forgetIfEmpty(entry: Entry): void {
    if (this.size(entry) === 0 && entry.waiters.length === 0 && this.entries.get(entry.path) === entry) {
      this.entries.delete(entry.path);
    }
  }
}
