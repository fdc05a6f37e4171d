/**
 * The registered searches of a catalogue without a database (pgSTAC's `searches` table): records
 * by hash, kept in one JSON file so they outlive a restart. Written whole to a temporary file and
 * renamed over the old one (a crash leaves the old or the new, never half of either), at most
 * every `flushMs` (a registration burst is one write); read once at start. Bounded: past
 * `maxSearches` the least recently used are dropped, as a cache of searches may.
 *
 * Documents are kept as pgSTAC would give them back (pyDumps text, re-read by pyLoads), so `info`
 * and the hash see the same number types.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SearchRecord } from '../pgstac/database.js';
import { pyDumps, pyLoads } from '../pyjson.js';

interface StoredRecord {
  hash: string;
  search: string;
  orderby: string | null;
  lastused: string;
  usecount: number;
  metadata: string;
}

export class SearchStore {
  private readonly records = new Map<string, SearchRecord>();
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: string | undefined,
    private readonly maxSearches: number,
    private readonly flushMs = 200,
  ) {}

  /** Reads the file, if there is one (a damaged file is set aside, not fatal). */
  async open(): Promise<void> {
    if (!this.file) return;
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch {
      return;
    }
    try {
      const doc = JSON.parse(text) as { searches?: StoredRecord[] };
      for (const r of doc.searches ?? []) {
        this.records.set(r.hash, {
          hash: r.hash,
          search: pyLoads(r.search),
          where: null,
          orderby: r.orderby,
          lastused: r.lastused,
          usecount: r.usecount,
          metadata: pyLoads(r.metadata) as Record<string, unknown>,
        });
      }
    } catch (err) {
      await fs.rename(this.file, `${this.file}.damaged`).catch(() => undefined);
      console.warn(JSON.stringify({ level: 40, time: Date.now(), msg: `catalogue searches: ${this.file} is damaged (${String(err)}); set aside as .damaged` }));
    }
  }

  get(hash: string): SearchRecord | undefined {
    return this.records.get(hash);
  }

  all(): SearchRecord[] {
    return [...this.records.values()];
  }

  /** Stores a record (moving it to the most recent), dropping the oldest past the bound, and schedules a write. */
  put(record: SearchRecord): void {
    this.records.delete(record.hash);
    this.records.set(record.hash, record);
    while (this.records.size > this.maxSearches) this.records.delete(this.records.keys().next().value!);
    this.schedule();
  }

  private schedule(): void {
    if (!this.file || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.writing.then(() => this.write()).catch(() => undefined);
    }, this.flushMs);
    this.timer.unref();
  }

  private async write(): Promise<void> {
    const file = this.file!;
    const searches: StoredRecord[] = this.all().map((r) => ({
      hash: r.hash,
      search: pyDumps(r.search),
      orderby: r.orderby,
      lastused: r.lastused,
      usecount: r.usecount,
      metadata: pyDumps(r.metadata),
    }));
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, JSON.stringify({ version: 1, searches }));
    await fs.rename(tmp, file);
  }

  /** Writes what is pending now. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.writing = this.writing.then(() => this.write());
    }
    await this.writing;
  }
}

/**
 * Where a catalogue's searches are kept: the setting's file, nothing for `none`, else one file per
 * catalogue in the user's state folder (`$XDG_STATE_HOME/tessera`, `~/.local/state/tessera`).
 */
export function catalogSearchesFile(location: string, setting: string | undefined): string | undefined {
  if (setting === 'none') return undefined;
  if (setting !== undefined) return setting;
  const state = process.env['XDG_STATE_HOME'] || path.join(os.homedir(), '.local', 'state');
  const name = createHash('md5')
    .update(/^https?:/i.test(location) ? location : path.resolve(location))
    .digest('hex')
    .slice(0, 12);
  return path.join(state, 'tessera', `searches-${name}.json`);
}
