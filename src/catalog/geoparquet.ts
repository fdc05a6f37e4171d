/**
 * Loads a stac-geoparquet catalogue (one file, or a folder of them with the collections' JSON
 * documents beside) into an ItemTable, read with hyparquet (zstd, gzip, brotli, lz4 through
 * hyparquet-compressors) one row group at a time. stac-geoparquet's layout, as rustac and
 * stac-geoparquet write it: `id`, `collection`, `geometry` (WKB), `bbox` (a struct of
 * xmin/ymin/xmax/ymax, or a list), `assets` (a struct), `datetime` / `start_datetime` /
 * `end_datetime` (timestamps), every other property a top-level column.
 *
 * Everything is bounded before it is read: the file's bytes (TESSERA_CATALOG_MAX_BYTES), the
 * footer's (a footer claiming gigabytes is refused before it is fetched), the items
 * (TESSERA_CATALOG_MAX_ITEMS, from the footer's counts, before any row is decoded), each row
 * group's decoded size, and every WKB geometry by its own bytes. A damaged file, a wrong schema or
 * an item pgSTAC would refuse (no datetime) is a clear error naming the file.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { parquetMetadata, parquetRead, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { TesseraError } from '../errors.js';
import { WkbError, isBox, shapeFromWkb } from './geometry.js';
import { ItemTable, type ItemRow } from './items.js';
import { jsonbOfParquet } from './jsonb.js';

/** Bytes read at random offsets from a file or a URL. */
export interface ByteSource {
  name: string;
  byteLength: number;
  slice(start: number, end?: number): Promise<ArrayBuffer>;
}

export interface LoadLimits {
  /** Bytes of Parquet read at most, every file together. */
  maxBytes: number;
  /** Items held at most, every file together. */
  maxItems: number;
}

/** What a catalogue loads: its items, its collections' documents, and what identifies this version of it. */
export interface LoadedCatalog {
  table: ItemTable;
  collections: Map<string, Record<string, unknown>>;
  /** Each file's size and modification time (or HTTP validators): when they change, the catalogue is read again. */
  validators: string;
}

/** A footer larger than this is not a catalogue's (a million items' footer is a few hundred KiB). */
const MAX_FOOTER_BYTES = 64 * 1024 * 1024;
/** A row group decoding to more than this at once is refused (the file can be written in smaller groups). */
const MAX_ROW_GROUP_BYTES = 2 * 1024 * 1024 * 1024;
/** A collection document beside the files is read only up to this size. */
const MAX_COLLECTION_BYTES = 4 * 1024 * 1024;

/** Columns that are the item's own, not properties. */
const ITEM_COLUMNS = new Set(['type', 'stac_version', 'stac_extensions', 'id', 'geometry', 'bbox', 'links', 'assets', 'collection']);
/** Properties that are columns of their own (pgSTAC's `datetime` and `end_datetime`): not kept twice. */
const TIME_COLUMNS = new Set(['datetime', 'start_datetime', 'end_datetime']);

export function catalogError(name: string, why: string, cause?: unknown): TesseraError {
  return new TesseraError('UpstreamError', `The catalogue ${name} cannot be read: ${why}`, cause === undefined ? undefined : { cause });
}

/** A local file as a ByteSource (one descriptor, closed by `close`). */
async function fileSource(file: string): Promise<ByteSource & { close(): Promise<void>; mtimeMs: number }> {
  const handle = await fs.open(file, 'r');
  const stat = await handle.stat();
  return {
    name: file,
    byteLength: stat.size,
    mtimeMs: stat.mtimeMs,
    async slice(start, end = stat.size) {
      const length = Math.max(0, Math.min(end, stat.size) - start);
      const buffer = Buffer.alloc(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(buffer, done, length - done, start + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + done);
    },
    close: () => handle.close(),
  };
}

/** The footer's metadata, its size checked against the file's before it is fetched. */
async function footer(source: ByteSource): Promise<FileMetaData> {
  if (source.byteLength < 12) throw catalogError(source.name, `${source.byteLength} bytes is not a Parquet file`);
  const tail = new DataView(await source.slice(source.byteLength - 8));
  if (tail.getUint32(4, true) !== 0x31524150) throw catalogError(source.name, 'not a Parquet file (no PAR1 at its end)');
  const length = tail.getUint32(0, true);
  if (length > source.byteLength - 12) throw catalogError(source.name, `its footer claims ${length} bytes, more than the file's ${source.byteLength}`);
  if (length > MAX_FOOTER_BYTES)
    throw catalogError(source.name, `its footer claims ${length} bytes, more than ${MAX_FOOTER_BYTES} (a catalogue's footer is far smaller)`);
  const bytes = await source.slice(source.byteLength - 8 - length);
  try {
    return parquetMetadata(bytes, { geoparquet: false });
  } catch (err) {
    throw catalogError(source.name, `its footer is damaged (${err instanceof Error ? err.message : String(err)})`, err);
  }
}

/** Checks the counts and sizes the footer claims, before any row group is read. */
function checkFooter(source: ByteSource, meta: FileMetaData, itemsLeft: number): number {
  const rows = Number(meta.num_rows);
  if (!Number.isSafeInteger(rows) || rows < 0) throw catalogError(source.name, `its footer claims ${meta.num_rows} rows`);
  if (rows > itemsLeft) throw catalogError(source.name, `it has ${rows} items, more than the ${itemsLeft} left of TESSERA_CATALOG_MAX_ITEMS`);
  let sum = 0;
  for (const group of meta.row_groups) {
    sum += Number(group.num_rows);
    if (Number(group.total_byte_size) > MAX_ROW_GROUP_BYTES) {
      throw catalogError(
        source.name,
        `a row group claims ${group.total_byte_size} bytes decoded, more than ${MAX_ROW_GROUP_BYTES}: write it in smaller row groups`,
      );
    }
    for (const column of group.columns) {
      const m = column.meta_data;
      if (!m) continue;
      // A chunk starts at its dictionary page when it has one (total_compressed_size counts from there).
      const dictionary = m.dictionary_page_offset === undefined ? undefined : Number(m.dictionary_page_offset);
      const start = dictionary !== undefined && dictionary > 0 ? Math.min(dictionary, Number(m.data_page_offset)) : Number(m.data_page_offset);
      const end = start + Number(m.total_compressed_size);
      if (end > source.byteLength + 1 || Number(m.total_compressed_size) < 0)
        throw catalogError(source.name, `column ${m.path_in_schema.join('.')} lies past the end of the file`);
      if (Number(m.total_uncompressed_size) > MAX_ROW_GROUP_BYTES)
        throw catalogError(source.name, `column ${m.path_in_schema.join('.')} claims ${m.total_uncompressed_size} bytes decoded`);
    }
  }
  if (sum !== rows) throw catalogError(source.name, `its row groups hold ${sum} rows, its footer claims ${rows}`);
  return rows;
}

/** The names of the top-level columns. */
function topColumns(meta: FileMetaData): string[] {
  const out: string[] = [];
  const schema = meta.schema;
  let i = 1;
  const skip = (at: number): number => {
    let next = at + 1;
    for (let c = 0; c < (schema[at]!.num_children ?? 0); c++) next = skip(next);
    return next;
  };
  while (i < schema.length) {
    out.push(schema[i]!.name);
    i = skip(i);
  }
  return out;
}

/** A value of the file as JSON has it: nulls dropped from objects (stac-geoparquet's reading), dates as RFC 3339, bigints as numbers. */
function plain(v: unknown): unknown {
  if (v === null || v === undefined) return undefined;
  if (v instanceof Date) return v.toISOString().replace('.000Z', 'Z');
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return undefined;
  if (Array.isArray(v)) return v.map((x) => plain(x) ?? null);
  if (typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const p = plain(x);
      if (p !== undefined) out[k] = p;
    }
    return out;
  }
  if (typeof v === 'number' && !Number.isFinite(v)) return undefined;
  return v;
}

function timeOf(v: unknown): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'string') {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  if (typeof v === 'bigint' || typeof v === 'number') return Number(v);
  return undefined;
}

function bboxOf(v: unknown, envelope: readonly number[]): readonly number[] {
  if (Array.isArray(v) && v.every((x) => typeof x === 'number')) return v as number[];
  if (typeof v === 'object' && v !== null) {
    const b = v as Record<string, unknown>;
    const keys = 'zmin' in b && b['zmin'] !== null ? ['xmin', 'ymin', 'zmin', 'xmax', 'ymax', 'zmax'] : ['xmin', 'ymin', 'xmax', 'ymax'];
    const values = keys.map((k) => Number(b[k]));
    if (values.every(Number.isFinite)) return values;
  }
  return envelope;
}

/** Reads one file's items into `table`. */
async function loadFile(source: ByteSource, table: ItemTable, collections: Map<string, Record<string, unknown>>, limits: LoadLimits): Promise<void> {
  const meta = await footer(source);
  const rows = checkFooter(source, meta, limits.maxItems - table.count);
  const columns = topColumns(meta);
  const missing = ['id', 'geometry', 'collection'].filter((c) => !columns.includes(c));
  if (missing.length > 0) throw catalogError(source.name, `it is not stac-geoparquet: no ${missing.map((c) => `\`${c}\``).join(', ')} column`);
  if (!columns.includes('datetime') && !(columns.includes('start_datetime') && columns.includes('end_datetime'))) {
    throw catalogError(source.name, 'it is not stac-geoparquet: no `datetime` column (nor `start_datetime` and `end_datetime`)');
  }
  for (const kv of meta.key_value_metadata ?? []) {
    if (kv.key !== 'stac-geoparquet' || !kv.value || kv.value.length > MAX_COLLECTION_BYTES) continue;
    try {
      const doc = JSON.parse(kv.value) as { collection?: unknown; collections?: unknown };
      const found = [doc.collection, ...(typeof doc.collections === 'object' && doc.collections !== null ? Object.values(doc.collections) : [])];
      for (const c of found)
        if (typeof c === 'object' && c !== null && typeof (c as { id?: unknown }).id === 'string')
          collections.set((c as { id: string }).id, c as Record<string, unknown>);
    } catch {
      // Metadata tessera does not need: the items still load.
    }
  }
  const wanted = columns.filter((c) => c !== 'links' && c !== 'type' && c !== 'stac_version' && c !== 'stac_extensions');
  let start = 0;
  for (const group of meta.row_groups) {
    const n = Number(group.num_rows);
    const data = new Map<string, unknown[]>();
    try {
      await parquetRead({
        file: source,
        metadata: meta,
        columns: wanted,
        rowStart: start,
        rowEnd: start + n,
        compressors,
        utf8: false,
        geoparquet: false,
        onChunk: (chunk) => {
          // A chunk may hold rows outside the group asked for: keep the group's, each at its place.
          let values = data.get(chunk.columnName);
          if (!values) {
            values = new Array<unknown>(n);
            data.set(chunk.columnName, values);
          }
          const from = Math.max(start, chunk.rowStart);
          const to = Math.min(start + n, chunk.rowEnd, chunk.rowStart + chunk.columnData.length);
          for (let r = from; r < to; r++) values[r - start] = chunk.columnData[r - chunk.rowStart];
        },
      });
    } catch (err) {
      throw catalogError(source.name, `row group at row ${start} is damaged (${err instanceof Error ? err.message : String(err)})`, err);
    }
    const col = (name: string): unknown[] | undefined => data.get(name);
    const ids = col('id');
    const geometries = col('geometry');
    const colls = col('collection');
    if (!ids || !geometries || !colls) {
      throw catalogError(source.name, `row group at row ${start} has no id, geometry or collection column`);
    }
    const props = wanted.filter((c) => !ITEM_COLUMNS.has(c) && !TIME_COLUMNS.has(c));
    for (let r = 0; r < n; r++) {
      const id = ids[r];
      const collection = colls[r];
      if (typeof id !== 'string' || typeof collection !== 'string') throw catalogError(source.name, `item ${start + r} has no id or collection`);
      const wkb = geometries[r];
      if (!(wkb instanceof Uint8Array)) throw catalogError(source.name, `item '${id}' has no WKB geometry`);
      let envelope: readonly [number, number, number, number];
      let box: boolean;
      try {
        const shape = shapeFromWkb(wkb);
        envelope = shape.bbox;
        box = isBox(shape);
      } catch (err) {
        if (err instanceof WkbError) throw catalogError(source.name, `item '${id}' has a damaged geometry (${err.message})`);
        throw err;
      }
      if (!envelope.every(Number.isFinite)) throw catalogError(source.name, `item '${id}' has an empty geometry`);
      const properties: Record<string, unknown> = {};
      for (const p of props) {
        const v = plain(col(p)?.[r]);
        if (v !== undefined) properties[p] = v;
      }
      const start_ = timeOf(col('start_datetime')?.[r]);
      const end_ = timeOf(col('end_datetime')?.[r]);
      const dt = timeOf(col('datetime')?.[r]);
      const [datetime, endDatetime] = start_ !== undefined && end_ !== undefined ? [start_, end_] : [dt, dt];
      if (datetime === undefined || endDatetime === undefined) {
        throw catalogError(source.name, `item '${id}' has neither a datetime nor both start_datetime and end_datetime (pgSTAC refuses such an item)`);
      }
      const assets = jsonbOfParquet(col('assets')?.[r]) ?? '{}';
      const row: ItemRow = {
        id,
        collection,
        datetime,
        endDatetime,
        wkb,
        box,
        envelope,
        bbox: bboxOf(col('bbox')?.[r], envelope),
        assetsJson: assets,
        properties,
      };
      table.add(row);
    }
    start += n;
  }
  if (start !== rows) throw catalogError(source.name, `read ${start} rows of ${rows}`);
}

/** The collection documents (`*.json` whose `type` is Collection) in a folder. */
async function folderCollections(dir: string, names: string[], collections: Map<string, Record<string, unknown>>): Promise<void> {
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = path.join(dir, name);
    const stat = await fs.stat(file);
    if (!stat.isFile() || stat.size > MAX_COLLECTION_BYTES) continue;
    try {
      const doc = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
      if (doc['type'] === 'Collection' && typeof doc['id'] === 'string') collections.set(doc['id'], doc);
    } catch {
      // Not a collection document: ignored, as any other file beside the catalogue.
    }
  }
}

const PARQUET = /\.(geo)?parquet$/i;

/** Reads a local stac-geoparquet file, or every `*.parquet` of a folder (in name order) and its collection documents. */
export async function loadLocal(location: string, limits: LoadLimits): Promise<LoadedCatalog> {
  const stat = await fs.stat(location).catch((err: unknown) => {
    throw catalogError(location, `it is not there (${err instanceof Error ? err.message : String(err)})`, err);
  });
  const table = new ItemTable();
  const collections = new Map<string, Record<string, unknown>>();
  let files = [location];
  if (stat.isDirectory()) {
    const names = (await fs.readdir(location)).sort();
    files = names.filter((n) => PARQUET.test(n)).map((n) => path.join(location, n));
    if (files.length === 0) throw catalogError(location, 'the folder has no *.parquet file');
    await folderCollections(location, names, collections);
  }
  const validators: string[] = [];
  let bytes = 0;
  for (const file of files) {
    const source = await fileSource(file);
    try {
      bytes += source.byteLength;
      if (bytes > limits.maxBytes) throw catalogError(file, `the catalogue's files hold more than TESSERA_CATALOG_MAX_BYTES (${limits.maxBytes} bytes)`);
      validators.push(`${file}:${source.byteLength}:${source.mtimeMs}`);
      await loadFile(source, table, collections, limits);
    } finally {
      await source.close();
    }
  }
  table.finish();
  return { table, collections, validators: validators.join('|') };
}

/** Reads a stac-geoparquet file from a ByteSource (a URL read by ranges). */
export async function loadSource(source: ByteSource, validators: string, limits: LoadLimits): Promise<LoadedCatalog> {
  if (source.byteLength > limits.maxBytes)
    throw catalogError(source.name, `it has ${source.byteLength} bytes, more than TESSERA_CATALOG_MAX_BYTES (${limits.maxBytes})`);
  const table = new ItemTable();
  const collections = new Map<string, Record<string, unknown>>();
  await loadFile(source, table, collections, limits);
  table.finish();
  return { table, collections, validators };
}

/** What identifies a local catalogue's version now (sizes and modification times), to know when to read it again. */
export async function localValidators(location: string): Promise<string> {
  const stat = await fs.stat(location);
  const files = stat.isDirectory()
    ? (await fs.readdir(location))
        .sort()
        .filter((n) => PARQUET.test(n))
        .map((n) => path.join(location, n))
    : [location];
  const out: string[] = [];
  for (const f of files) {
    const s = await fs.stat(f);
    out.push(`${f}:${s.size}:${s.mtimeMs}`);
  }
  return out.join('|');
}
