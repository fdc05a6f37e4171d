/**
 * cogeo-mosaic's SQLite backend, read-only: `sqlite:///{path.db}:{mosaic}` names a database file
 * (relative to the working directory; `sqlite:////abs/path.db:name` for an absolute one) holding a
 * `mosaicjson_metadata` table (one row per mosaic, JSON columns as text) and one table per mosaic of
 * (quadkey TEXT, assets JSON) rows. The file must be inside an allowed local folder.
 *
 * SQLite runs as WebAssembly (sql.js: no native build). The database is read once into memory,
 * the mosaic's rows are loaded into the same quadkey index JSON documents use (the table has no
 * index on quadkey, so per-request queries would scan it), and the database is closed.
 */
import { readFile, stat } from 'node:fs/promises';
import initSqlJs from 'sql.js';
import type { SqlJsStatic, SqlValue, Statement } from 'sql.js';
import { TesseraError, badRequest } from '../errors.js';
import type { UrlPolicy } from '../upstream/url-policy.js';
import { contentVersion } from '../upstream/documents.js';

const METADATA_TABLE = 'mosaicjson_metadata';
const URL_RE = /^sqlite:\/\/\/(.+):([A-Za-z0-9_.-]+)$/;
/** Columns that hold JSON text (declared `JSON` in cogeo-mosaic's schema). */
const JSON_COLUMNS = new Set(['bounds', 'center', 'tilematrixset', 'colormap', 'layers']);

let engine: Promise<SqlJsStatic> | undefined;

function sqlite(): Promise<SqlJsStatic> {
  engine ??= initSqlJs();
  return engine;
}

export interface SqliteLocation {
  path: string;
  name: string;
}

export function isSqliteUrl(url: string): boolean {
  return /^sqlite:/i.test(url);
}

/** Parses and checks `sqlite:///{path}:{name}`; the path must be a local file the policy allows. */
export function parseSqliteUrl(url: string, policy: UrlPolicy): SqliteLocation {
  const m = URL_RE.exec(url);
  if (!m) throw badRequest(`Invalid SQLite mosaic url '${url}': expected sqlite:///{path}:{mosaic_name}`);
  const name = m[2]!;
  if (name === METADATA_TABLE) throw badRequest(`'${METADATA_TABLE}' is a reserved table name`);
  const loc = policy.resolve(m[1]!, 'SQLite database path');
  if (loc.kind !== 'file') throw badRequest(`Invalid SQLite mosaic url '${url}': the database must be a local file`);
  return { path: loc.path, name };
}

/**
 * The mosaic `name` of the database as a raw MosaicJSON object (metadata columns plus `tiles`
 * from the mosaic's table), for the document parser to validate.
 */
/** The mosaic's document as cogeo-mosaic's SQLite backend reads it, and the version of the database's bytes. */
export async function readSqliteMosaic(loc: SqliteLocation, maxBytes: number): Promise<{ raw: Record<string, unknown>; version: string }> {
  let bytes: Buffer;
  try {
    const s = await stat(loc.path);
    if (!s.isFile()) throw new Error('not a file');
    if (s.size > maxBytes) throw badRequest(`SQLite database '${loc.path}' is larger than ${maxBytes} bytes`);
    bytes = await readFile(loc.path);
  } catch (err) {
    if (err instanceof TesseraError) throw err;
    throw new TesseraError('UpstreamNotFound', `SQLite database not found at path ${loc.path}`, { cause: err });
  }
  const SQL = await sqlite();
  let db: InstanceType<SqlJsStatic['Database']>;
  try {
    db = new SQL.Database(bytes);
  } catch (err) {
    throw badRequest(`'${loc.path}' is not a SQLite database: ${(err as Error).message}`);
  }
  try {
    const meta = queryRows(db, `SELECT * FROM ${METADATA_TABLE} WHERE name = ?`, [loc.name], loc);
    const row = meta[0];
    if (!row) throw new TesseraError('UpstreamNotFound', `Mosaic '${loc.name}' not found in ${loc.path}`);
    const doc: Record<string, unknown> = {};
    for (const [column, value] of Object.entries(row)) {
      doc[column] = JSON_COLUMNS.has(column) && typeof value === 'string' ? parseJsonColumn(value, column, loc) : value;
    }
    // The name only contains [A-Za-z0-9_.-] (checked above), so quoting it is safe.
    const rows = queryRows(db, `SELECT quadkey, assets FROM "${loc.name}"`, [], loc);
    const tiles: Record<string, unknown> = {};
    for (const r of rows) {
      const key = r['quadkey'];
      if (typeof key !== 'string') throw badRequest(`Mosaic '${loc.name}' in ${loc.path} has a quadkey that is not text`);
      // Several rows for one quadkey: cogeo-mosaic's fetchone() keeps the first.
      if (!(key in tiles)) tiles[key] = typeof r['assets'] === 'string' ? parseJsonColumn(r['assets'], 'assets', loc) : r['assets'];
    }
    doc['tiles'] = tiles;
    return { raw: doc, version: contentVersion(bytes) };
  } finally {
    db.close();
  }
}

function queryRows(db: InstanceType<SqlJsStatic['Database']>, sql: string, params: SqlValue[], loc: SqliteLocation): Array<Record<string, SqlValue>> {
  let stmt: Statement;
  try {
    stmt = db.prepare(sql, params);
  } catch (err) {
    // A missing table is a missing mosaic.
    throw new TesseraError('UpstreamNotFound', `Mosaic '${loc.name}' not found in ${loc.path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const out: Array<Record<string, SqlValue>> = [];
    while (stmt.step()) out.push(stmt.getAsObject());
    return out;
  } finally {
    stmt.free();
  }
}

function parseJsonColumn(text: string, column: string, loc: SqliteLocation): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest(`Mosaic '${loc.name}' in ${loc.path}: column '${column}' is not valid JSON`);
  }
}
