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
import { TesseraError } from '../errors.js';
import type { SearchRecord } from '../pgstac/database.js';
import { pyDumps, pyLoads } from '../pyjson.js';
import { jsonbText, searchHash } from './jsonb.js';

/** pydantic's datetime text of now (microseconds, Z). */
function now(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** PostgreSQL's `->>` of a JSON value: a string's text, anything else its jsonb text; null for null. */
function textOf(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : jsonbText(v);
}

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

  /** A registered search's record (404 when there is none by that hash). */
  record(hash: string): SearchRecord {
    const record = this.records.get(hash);
    if (!record) throw new TesseraError('NotFound', `SearchId \`${hash}\` not found`);
    return record;
  }

  /** Registers a search under pgSTAC's hash (or counts one more use of it): its record. */
  register(search: Record<string, unknown>, metadata: Record<string, unknown>, orderby: string): SearchRecord {
    const hash = searchHash(search, metadata);
    const kept = this.records.get(hash);
    const record: SearchRecord = kept
      ? { ...kept, lastused: now(), usecount: kept.usecount + 1 }
      : { hash, search, where: null, orderby, lastused: now(), usecount: 1, metadata };
    this.put(record);
    return record;
  }

  /** Registered searches of type `mosaic` whose metadata has each of `filters`, ordered, a page of them and how many match (pgSTAC's search list). */
  list(
    filters: ReadonlyArray<readonly [string, string]>,
    order: ReadonlyArray<{ property: string; descending: boolean }>,
    limit: number,
    offset: number,
  ): { matched: number; records: SearchRecord[] } {
    const records = this.all().filter((r) => textOf(r.metadata['type']) === 'mosaic' && filters.every(([k, v]) => textOf(r.metadata[k]) === v));
    const key = (r: SearchRecord, property: string): string | number | null =>
      property === 'lastused' ? r.lastused : property === 'usecount' ? r.usecount : textOf(r.metadata[property]);
    records.sort((a, b) => {
      for (const { property, descending } of order) {
        const x = key(a, property);
        const y = key(b, property);
        if (x === y) continue;
        if (x === null) return descending ? -1 : 1;
        if (y === null) return descending ? 1 : -1;
        const c = x < y ? -1 : 1;
        return descending ? -c : c;
      }
      return 0;
    });
    return { matched: records.length, records: records.slice(offset, offset + limit) };
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
    .update(/^(stac-api\+)?https?:/i.test(location) ? location : path.resolve(location))
    .digest('hex')
    .slice(0, 12);
  return path.join(state, 'tessera', `searches-${name}.json`);
}
