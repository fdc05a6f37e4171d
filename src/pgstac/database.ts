/**
 * The pgSTAC catalogue: a PostgreSQL database with pgSTAC's schema (stac-utils/pgstac 0.9–0.10),
 * reached through one `pg` pool opened on first use (titiler-pgstac 3.2.0's `connect_to_db`, a
 * psycopg pool with `search_path=pgstac,public`). Every query is pgSTAC's own SQL — `search_query`
 * to register a search, `geojsonsearch` for the items of an area, the `searches` table for a
 * search's record, as titiler-pgstac reads it — with bound parameters only.
 *
 * Every statement is bounded: by TESSERA_PGSTAC_STATEMENT_TIMEOUT_MS, and an item search by its own
 * `time_limit` + 1 s (pgSTAC stops scanning after `time_limit` and answers what it has; past the
 * second more the database is slow, not busy scanning). Waiting for a connection is bounded as
 * well. The bound is the connection's own setting, changed only when the next statement needs
 * another (SessionTimeouts), so that a tile's item search is one round trip and one implicit
 * transaction: wrapped in BEGIN and COMMIT with a local setting it took four, and pgSTAC's write to
 * the search's row stayed uncommitted until the event loop got round to sending COMMIT.
 *
 * Connections commit without waiting for the WAL flush (`synchronous_commit` off): what item
 * searches write is pgSTAC's use count of a search, statistics whose last few a crash may lose.
 * Registering a search is the one write a client relies on, and asks for a durable commit. A database that is down, refuses connections, is restarting or does not answer in time is
 * a `Busy` error (503 with Retry-After); pgSTAC refusing what it was asked (an unknown search id, a
 * CQL2 operator it does not know, a datetime it cannot read) the client's mistake; nothing of either
 * stops the rest of the server.
 */
import pg from 'pg';
import { TesseraError, badRequest } from '../errors.js';
import { pyLoads } from '../pyjson.js';
import type { SearchBody } from './search-body.js';
import type { Catalogue } from './catalogue.js';
import { pyDumps } from '../pyjson.js';

/** How the catalogue is reached (settings: TESSERA_PGSTAC_*). */
export interface CatalogueOptions {
  /** libpq connection string or URI; what it leaves out comes from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE. */
  dsn: string;
  poolSize: number;
  /** Connections opened and readied at start (warm()), and kept open when idle. */
  warmConnections: number;
  /** Bound of every statement and of the wait for a connection. */
  statementTimeoutMs: number;
}

/** A registered search, as pgSTAC's `searches` table holds it. */
export interface SearchRecord {
  hash: string;
  /** The item search (pyLoads' values: floats as PyFloat). */
  search: unknown;
  where: string | null;
  orderby: string | null;
  /** When it was last used, as pydantic writes a timestamp (`2024-01-02T03:04:05.123456Z`). */
  lastused: string;
  usecount: number;
  /** Its metadata (pyLoads' values). */
  metadata: Record<string, unknown>;
}

/** pgSTAC's item-search limits (titiler-pgstac's PgSTACParams, defaults from its PgstacSettings). */
export interface SearchLimits {
  scanLimit: number;
  itemsLimit: number;
  timeLimitSeconds: number;
  exitWhenFull: boolean;
  skipCovered: boolean;
}

/** What the catalogue's pool and queries have done, for /metrics. */
export interface CatalogueStats {
  queries: number;
  failures: number;
  seconds: number;
  /** Connections open, idle, and requests waiting for one (0 before the pool is opened). */
  total: number;
  idle: number;
  waiting: number;
}

/**
 * Where an item search looks: a GeoJSON geometry in longitude/latitude (pgSTAC's `geojsonsearch`), or
 * a Web Mercator tile's bounds (x/y) that PostGIS turns into its longitude/latitude polygon.
 */
export type SearchArea = { geojson: string } | { webMercator: readonly [number, number, number, number] };

/**
 * A Web Mercator tile's polygon in longitude/latitude, made by PostGIS's PROJ: the very doubles
 * pyproj gives morecantile (and titiler-pgstac gives pgSTAC), corner by corner, in
 * geojson_pydantic's `Polygon.from_bounds` order. pgSTAC's exitwhenfull and skipcovered compare
 * areas exactly, so a tile's polygon off by one unit in the last place can find other items.
 */
const WEB_MERCATOR_TILE = `(SELECT ST_SetSRID(ST_MakePolygon(ST_MakeLine(ARRAY[
    ST_MakePoint(ST_X(nw), ST_Y(se)), ST_MakePoint(ST_X(se), ST_Y(se)), ST_MakePoint(ST_X(se), ST_Y(nw)),
    ST_MakePoint(ST_X(nw), ST_Y(nw)), ST_MakePoint(ST_X(nw), ST_Y(se))])), 4326)
  FROM (SELECT ST_Transform(ST_SetSRID(ST_MakePoint($1::float8, $4::float8), 3857), 4326) AS nw,
               ST_Transform(ST_SetSRID(ST_MakePoint($3::float8, $2::float8), 3857), 4326) AS se) AS corners)`;

/** The fields an item search returns of each item (titiler-pgstac's `get_assets` default). */
const ITEM_FIELDS = JSON.stringify({ include: ['assets', 'id', 'bbox', 'collection'] });

/**
 * The search a new connection runs once (warm()): pgSTAC's whole item-search path as a tile's lookup
 * takes it (registering a search of two of the catalogue's collections newest first, PostGIS's PROJ
 * making the tile's polygon from Web Mercator, planning the partitions' queries, reading and
 * hydrating items with the tiles' fields, their union for the coverage test), each of which a
 * backend readies on first use. Over the world's tile, stopped after two items; an empty catalogue
 * finds none and still readies the rest.
 */
const WARM_SEARCH = `SELECT geometrysearch(
  ${WEB_MERCATOR_TILE},
  (SELECT hash FROM search_query(jsonb_build_object(
    'collections', (SELECT coalesce(jsonb_agg(id), '[]'::jsonb) FROM (SELECT id FROM collections ORDER BY id LIMIT 2) c),
    'sortby', '[{"field": "datetime", "direction": "desc"}]'::jsonb))),
  $5::jsonb, 4, 2, '1 second'::interval, true, true)::text`;

/** Web Mercator's whole extent: the one tile of zoom 0. */
const WORLD_MERCATOR = 20037508.342789244;

/**
 * Each connection's statement_timeout as last set (the pool's startup value until then), so that it
 * is sent only when a statement needs another bound than the one before.
 */
class SessionTimeouts {
  private readonly current = new WeakMap<pg.ClientBase, number>();

  constructor(private readonly startup: number) {}

  async ensure(client: pg.ClientBase, ms: number): Promise<void> {
    if ((this.current.get(client) ?? this.startup) === ms) return;
    // Forgotten first: a failure leaves the setting unknown, and the connection is dropped anyway.
    this.current.delete(client);
    await client.query("SELECT set_config('statement_timeout', $1, false)", [String(ms)]);
    this.current.set(client, ms);
  }
}

/** When to try again after the catalogue could not answer (Retry-After). */
const RETRY_AFTER_SECONDS = 1;

const NOT_FOUND = /^Search with Query Hash (.*) Not Found$/;

/** Node's own errors for a database that cannot be reached, and pg's for a connection lost or not given in time. */
const UNREACHABLE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE)$/;
const CONNECTION_LOST =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i;

/** A pg error as tessera answers it: 503 when the database cannot answer, 404/400 when pgSTAC refuses. */
function catalogueError(err: unknown, what: string): TesseraError {
  if (err instanceof TesseraError) return err;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  const busy = (why: string): TesseraError =>
    new TesseraError('Busy', `The catalogue could not answer ${what}: ${why}; retry shortly`, { cause: err, retryAfterSeconds: RETRY_AFTER_SECONDS });
  if (code === '57014') return busy('it did not answer in time');
  // Connection errors, shutdown and startup, too many connections, out of resources.
  if (/^(08|57P|53)/.test(code) || UNREACHABLE.test(code) || CONNECTION_LOST.test(message)) return busy('the database is not reachable');
  const firstLine = message.split('\n')[0]!.trim();
  const missing = NOT_FOUND.exec(firstLine);
  if (missing) return new TesseraError('NotFound', `SearchId \`${missing[1]}\` not found`, { cause: err });
  // pgSTAC's own refusals (RAISE EXCEPTION) and values PostgreSQL cannot read (22xxx: a bad datetime …).
  if (code === 'P0001' || code.startsWith('22')) return badRequest(`pgSTAC refused ${what}: ${firstLine}`);
  if (code === '42883' || code === '42P01' || code === '3F000') {
    return new TesseraError('UpstreamError', `The catalogue has no pgSTAC schema (${firstLine})`, { cause: err });
  }
  return new TesseraError('Internal', `The catalogue failed ${what}: ${firstLine}`, { cause: err });
}

/**
 * Whether `err` is a statement the database refused for what it asked, on a connection left as it
 * was: pgSTAC's own RAISE (P0001), a value it could not read (22), a constraint (23), a name or
 * syntax (42).
 */
function refusedStatement(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'P0001' || /^(22|23|42)/.test(code));
}

/** A timestamptz as PostgreSQL writes it ("2024-01-02 03:04:05.1234+00") as pydantic writes a datetime. */
function pydanticTimestamp(text: string): string {
  const m = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?([+-]\d\d)(?::(\d\d))?(?::\d\d)?$/.exec(text.trim());
  if (!m) return text;
  const [, date, time, fraction, hours, minutes] = m;
  const zone = hours === '+00' && (minutes ?? '00') === '00' ? 'Z' : `${hours}:${minutes ?? '00'}`;
  return `${date}T${time}${fraction ? `.${fraction.padEnd(6, '0')}` : ''}${zone}`;
}

/** The rows of `searches` as read here: the documents as text (pyLoads keeps their number types). */
interface SearchRow {
  hash: string;
  search: string;
  _where: string | null;
  orderby: string | null;
  lastused: string;
  usecount: string;
  metadata: string;
}

const SEARCH_COLUMNS = 'hash, search::text AS search, _where, orderby, lastused::text AS lastused, usecount::text AS usecount, metadata::text AS metadata';

function recordOf(row: SearchRow): SearchRecord {
  return {
    hash: row.hash,
    search: pyLoads(row.search),
    where: row._where,
    orderby: row.orderby,
    lastused: pydanticTimestamp(row.lastused),
    usecount: Number(row.usecount),
    metadata: pyLoads(row.metadata) as Record<string, unknown>,
  };
}

export class PgstacCatalogue implements Catalogue {
  private pool: pg.Pool | undefined;
  private readonly counts = { queries: 0, failures: 0, seconds: 0 };
  private readonly timeouts: SessionTimeouts;

  constructor(private readonly options: CatalogueOptions) {
    this.timeouts = new SessionTimeouts(options.statementTimeoutMs);
  }

  /** The pool, opened on first use: a server without a reachable database still starts and serves the rest. */
  private connections(): pg.Pool {
    if (!this.pool) {
      const { dsn, poolSize, warmConnections, statementTimeoutMs } = this.options;
      this.pool = new pg.Pool({
        connectionString: dsn,
        max: poolSize,
        // The warmed connections stay open when idle (warm()).
        min: Math.min(warmConnections, poolSize),
        connectionTimeoutMillis: statementTimeoutMs,
        idleTimeoutMillis: 60_000,
        statement_timeout: statementTimeoutMs,
        application_name: 'tessera',
        options: '-c search_path=pgstac,public -c synchronous_commit=off',
      });
      // An idle connection the server drops must not crash the process: the next query reconnects.
      this.pool.on('error', () => undefined);
    }
    return this.pool;
  }

  /**
   * Runs `work` on one connection whose statements are bounded by `timeoutMs` (default
   * TESSERA_PGSTAC_STATEMENT_TIMEOUT_MS), counting it; errors become catalogueError's.
   */
  private async run<T>(what: string, work: (client: pg.PoolClient) => Promise<T>, timeoutMs = this.options.statementTimeoutMs): Promise<T> {
    const started = performance.now();
    this.counts.queries++;
    let client: pg.PoolClient | undefined;
    try {
      client = await this.connections().connect();
      await this.timeouts.ensure(client, timeoutMs);
      const result = await work(client);
      client.release();
      return result;
    } catch (err) {
      this.counts.failures++;
      // A connection whose statement failed in a way that may leave it unusable is not reused; one
      // whose answer was no (an unknown search: tessera's own error after the query) or whose
      // statement was refused for what it asked (a value pgSTAC cannot read) is, warm as it is.
      const usable = err instanceof TesseraError || refusedStatement(err);
      client?.release(usable ? undefined : err instanceof Error ? err : true);
      throw catalogueError(err, what);
    } finally {
      this.counts.seconds += (performance.now() - started) / 1000;
    }
  }

  /**
   * Registers a search (pgSTAC's `search_query(search, _metadata => metadata)`, as titiler-pgstac's
   * `register_search_in_db`): its record, named by pgSTAC's hash of the two documents.
   */
  register(body: SearchBody): Promise<SearchRecord> {
    return this.run('the search', async (client) => {
      const readonly = await client.query<{ readonly: boolean }>('SELECT pgstac.readonly() AS readonly').catch(() => ({ rows: [{ readonly: false }] }));
      if (readonly.rows[0]?.readonly) {
        throw new TesseraError('Internal', 'PgSTAC instance is set to `read-only`, cannot register search query.');
      }
      // Durable, unlike the connection's other commits: the client goes on to name the search by its id.
      await client.query('BEGIN');
      try {
        await client.query('SET LOCAL synchronous_commit TO on');
        const { rows } = await client.query<SearchRow>(`SELECT ${SEARCH_COLUMNS} FROM search_query($1::jsonb, _metadata => $2::jsonb)`, [
          pyDumps(body.search),
          pyDumps(body.metadata),
        ]);
        await client.query('COMMIT');
        return recordOf(rows[0]!);
      } catch (err) {
        // A connection that cannot even roll back fails with that, and is not reused.
        await client.query('ROLLBACK');
        throw err;
      }
    });
  }

  /** A collection's document (pgSTAC's `get_collection`); undefined when there is none by that id. */
  collection(id: string): Promise<Record<string, unknown> | undefined> {
    return this.run(`collection '${id}'`, async (client) => {
      const { rows } = await client.query<{ collection: string | null }>('SELECT pgstac.get_collection($1)::text AS collection', [id]);
      const text = rows[0]?.collection;
      return text ? (pyLoads(text) as Record<string, unknown>) : undefined;
    });
  }

  /**
   * One item of a collection as pgSTAC's `search` returns it, hydrated (titiler-pgstac's
   * `get_stac_item`: the search `{ids: [id], collections: [collection]}`), read by pyLoads (floats as
   * PyFloat); undefined when there is none.
   */
  item(collection: string, id: string): Promise<Record<string, unknown> | undefined> {
    return this.run(`item '${id}' of collection '${collection}'`, async (client) => {
      const search = JSON.stringify({ collections: [collection], ids: [id], 'filter-lang': 'cql2-json' });
      const { rows } = await client.query<{ items: string | null }>('SELECT search($1::jsonb)::text AS items', [search]);
      // pyLoads: the item's numbers keep their kind (a bbox of ints is written as ints, as pystac keeps it).
      const doc = pyLoads(rows[0]?.items ?? '{}') as { features?: unknown };
      const features = Array.isArray(doc.features) ? doc.features : [];
      return features.length === 1 ? (features[0] as Record<string, unknown>) : undefined;
    });
  }

  /**
   * Registered searches of type `mosaic` (titiler-pgstac's `list_searches`): those whose metadata has
   * each of `filters` (`metadata->>key = value`), ordered by `order` (`lastused`, `usecount` or a
   * metadata property), a page of them and how many there are.
   */
  listSearches(
    filters: ReadonlyArray<readonly [string, string]>,
    order: ReadonlyArray<{ property: string; descending: boolean }>,
    limit: number,
    offset: number,
  ): Promise<{ matched: number; records: SearchRecord[] }> {
    return this.run('the list of searches', async (client) => {
      const values: unknown[] = [];
      const bind = (v: unknown): string => {
        values.push(v);
        return `$${values.length}`;
      };
      const where = ["metadata->>'type' = 'mosaic'", ...filters.map(([key, value]) => `metadata->>${bind(key)} = ${bind(value)}`)].join(' AND ');
      const count = await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM searches WHERE ${where}`, [...values]);
      const orderBy = order
        .map(
          ({ property, descending }) =>
            `${property === 'lastused' || property === 'usecount' ? property : `metadata->>${bind(property)}`} ${descending ? 'DESC' : 'ASC'}`,
        )
        .join(', ');
      const { rows } = await client.query<SearchRow>(
        `SELECT ${SEARCH_COLUMNS} FROM searches WHERE ${where}${orderBy ? ` ORDER BY ${orderBy}` : ''} LIMIT ${bind(limit)} OFFSET ${bind(offset)}`,
        values,
      );
      return { matched: Number(count.rows[0]!.n), records: rows.map(recordOf) };
    });
  }

  /** A registered search's record (404 when pgSTAC has none by that hash). */
  search(hash: string): Promise<SearchRecord> {
    return this.run(`search '${hash}'`, async (client) => {
      const { rows } = await client.query<SearchRow>(`SELECT ${SEARCH_COLUMNS} FROM searches WHERE hash = $1`, [hash]);
      if (rows.length === 0) throw new TesseraError('NotFound', `SearchId \`${hash}\` not found`);
      return recordOf(rows[0]!);
    });
  }

  /**
   * The items of search `hash` over an area, in the search's order (pgSTAC's `geojsonsearch` or
   * `geometrysearch`, with titiler-pgstac's fields): pgSTAC's FeatureCollection as text, which keeps
   * its number types for the asset lists. The statement is bounded by `time_limit` + 1 s.
   */
  items(hash: string, area: SearchArea, limits: SearchLimits): Promise<string> {
    return this.run(
      `the items of search '${hash}'`,
      async (client) => {
        const rest = [hash, ITEM_FIELDS, limits.scanLimit, limits.itemsLimit, `${limits.timeLimitSeconds} seconds`, limits.exitWhenFull, limits.skipCovered];
        const { rows } =
          'geojson' in area
            ? await client.query<{ items: string }>('SELECT geojsonsearch($1::jsonb, $2, $3::jsonb, $4, $5, $6::interval, $7, $8)::text AS items', [
                area.geojson,
                ...rest,
              ])
            : await client.query<{ items: string }>(
                `SELECT geometrysearch(${WEB_MERCATOR_TILE}, $5, $6::jsonb, $7, $8, $9::interval, $10, $11)::text AS items`,
                [...area.webMercator, ...rest],
              );
        return rows[0]!.items;
      },
      limits.timeLimitSeconds * 1000 + 1000,
    );
  }

  /**
   * Opens the pool's first connections and readies each for item searches: a new PostgreSQL backend
   * compiles pgSTAC's PL/pgSQL search functions and loads its catalogue caches on its first search
   * (about 30 ms alone, several times that when a viewport's first tiles all pay it at once on a
   * fresh process), and plans the statements that read and hydrate items on the first search that
   * finds one. One search (WARM_SEARCH), rolled back, pays both here; the pool keeps these
   * connections open (`min`).
   */
  async warm(): Promise<void> {
    const count = Math.min(this.options.warmConnections, this.options.poolSize);
    const pool = this.connections();
    await Promise.all(
      Array.from({ length: count }, async () => {
        const client = await pool.connect();
        let failed: Error | undefined;
        try {
          // Inside a transaction rolled back: the search registered for it (pgSTAC's `search_query`,
          // also readied) leaves no row.
          await client.query('BEGIN');
          await client.query(WARM_SEARCH, [-WORLD_MERCATOR, -WORLD_MERCATOR, WORLD_MERCATOR, WORLD_MERCATOR, ITEM_FIELDS]);
        } catch (err) {
          failed = err instanceof Error ? err : new Error(String(err));
        } finally {
          await client.query('ROLLBACK').catch(() => undefined);
          client.release(failed);
        }
      }),
    );
  }

  stats(): CatalogueStats {
    const pool = this.pool;
    return { ...this.counts, total: pool?.totalCount ?? 0, idle: pool?.idleCount ?? 0, waiting: pool?.waitingCount ?? 0 };
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }
}
