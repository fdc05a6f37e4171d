/**
 * `make bench-pgstac`: tessera's /searches against titiler-pgstac 3.2.0 on the same pgSTAC database,
 * in one run (issue 38, item 4). Not a test: it measures and reports (.bench/pgstac/report.md and
 * report.json); the benchmark's own phase, apart from `make bench` so that it takes minutes.
 *
 * The pgSTAC tests' catalogue (test/helpers/pgstac.ts: 1,080 items of two collections over 4–14°E,
 * 42–49°N, COGs with overviews on a range-capable file server on loopback) is loaded by pypgstac
 * into a throw-away PostgreSQL 15 (tools/stac-api/serve.sh, the database alone). Both servers read
 * it: tessera (`bin/tessera serve`, one process, a render thread per core, its tile cache off so
 * that every tile is composed; its item lookups kept as titiler-pgstac keeps its own) and
 * titiler-pgstac (uvicorn, a worker per core), both with TiTiler's recommended GDAL settings
 * (test/parity/harness.ts). The same search, `collections=[alpha, beta]` newest first, is registered
 * through each (the same pgSTAC hash), and its tiles are asked `?assets=visual` as .png.
 *
 *   warm        both servers up, every tile of the mix asked once, then the mix at concurrency 1 and
 *               16 for --duration seconds each, servers alternating: tiles per second
 *   first view  for zoom 6 and zoom 10, --reps times: a fresh pair of servers and a search never
 *               registered before (nothing of it kept anywhere), the 16 tiles of a 4×4 viewport
 *               over the catalogue, 6 at a time (a browser's connections to one host), timed until
 *               the last tile; which server goes first alternates. Then, on the same servers, a
 *               second never-seen search's viewport elsewhere: the first view of a process that is
 *               no longer new (at zoom 10 its items' files are others; at zoom 6 the viewport spans
 *               the catalogue, so they were opened by the first)
 *
 * Ratios are tessera's over titiler-pgstac's (throughput) and tessera's time over titiler-pgstac's
 * (first view). Options: --quick (4 s per run, 1 repetition), --duration S, --reps N, --out DIR.
 */
import { promises as fs } from 'node:fs';
import { uvicornArgs } from './uvicorn.js';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../../test/helpers/paths.js';
import { startFileServer } from '../../test/helpers/fileserver.js';
import { ensureCatalogueData, startCatalogue } from '../../test/helpers/pgstac.js';
import { startServer, ROOT, TESSERA_COMMAND, type ServerCommand, type Service } from '../../test/parity/harness.js';
import { latToTileY, lonToTileX } from './data.js';
import { median, runLoad, type LoadResult } from './load.js';

const CORES = os.availableParallelism();

/** The catalogue's extent (test/helpers/pgstac.ts: alpha's cells and beta's, half a cell north-east). */
const EXTENT = { w: 4, s: 42, e: 13.75, n: 49 };

const TITILER_PGSTAC = (dsn: string): ServerCommand => ({
  name: 'titiler-pgstac',
  command: path.join(ROOT, '.parity/titiler-pgstac-3.2.0/bin/python'),
  args: (port) => ['-m', 'uvicorn', ...uvicornArgs('titiler.pgstac.main:app', port)],
  env: { DATABASE_URL: dsn },
});

const tesseraCommand = (dsn: string): ServerCommand => ({
  ...TESSERA_COMMAND,
  env: { ...TESSERA_COMMAND.env, TESSERA_PGSTAC_DSN: dsn, TESSERA_TILE_CACHE_BYTES: '0', TESSERA_LOG_LEVEL: 'warn' },
});

type Name = 'tessera' | 'titiler-pgstac';

interface Options {
  durationMs: number;
  reps: number;
  out: string;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { durationMs: 8000, reps: 3, out: path.join(REPO_ROOT, '.bench/pgstac') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') [opts.durationMs, opts.reps] = [4000, 1];
    else if (a === '--duration') opts.durationMs = Number(value()) * 1000;
    else if (a === '--reps') opts.reps = Number(value());
    else if (a === '--out') opts.out = path.resolve(value());
    else throw new Error(`unknown option ${a}`);
  }
  return opts;
}

/** Registers the search through `server` (its id is pgSTAC's hash: the same through either). */
async function register(server: Service, name: string): Promise<string> {
  const body = { collections: ['alpha', 'beta'], sortby: [{ field: 'datetime', direction: 'desc' }], metadata: { name } };
  const res = await fetch(`${server.url}/searches/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${server.name}: register ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

const tile = (id: string, z: number, x: number, y: number): string => `/searches/${id}/tiles/WebMercatorQuad/${z}/${x}/${y}.png?assets=visual`;

/** Every tile of zoom `z` over the catalogue's extent. */
function tilesOver(z: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let y = latToTileY(EXTENT.n, z); y <= latToTileY(EXTENT.s, z); y++) {
    for (let x = lonToTileX(EXTENT.w, z); x <= lonToTileX(EXTENT.e, z); x++) out.push([x, y]);
  }
  return out;
}

/** The 4×4 viewport of zoom `z` around (lon, lat). */
function viewport(z: number, lon: number, lat: number): Array<[number, number]> {
  const [cx, cy] = [lonToTileX(lon, z), latToTileY(lat, z)];
  const out: Array<[number, number]> = [];
  for (let y = cy - 2; y < cy + 2; y++) for (let x = cx - 2; x < cx + 2; x++) out.push([x, y]);
  return out;
}

interface WarmRow {
  concurrency: number;
  results: Record<Name, LoadResult>;
}

interface ViewRow {
  z: number;
  rep: number;
  /** The first view of the fresh servers. */
  seconds: Record<Name, number>;
  /** Then a second never-seen search's viewport elsewhere, on the servers the first warmed. */
  warmProcessSeconds: Record<Name, number>;
  statuses: Record<Name, Record<string, number>>;
}

async function startPair(dsn: string): Promise<Record<Name, Service>> {
  const [tessera, titiler] = await Promise.all([startServer(tesseraCommand(dsn)), startServer(TITILER_PGSTAC(dsn))]);
  return { tessera, 'titiler-pgstac': titiler };
}

async function stopPair(pair: Record<Name, Service>): Promise<void> {
  await Promise.all(Object.values(pair).map((s) => s.stop()));
}

function checkStatuses(what: string, r: LoadResult): void {
  if (r.errors > 0) console.log(`  ! ${what}: ${r.errors} answers not 200/204 (${JSON.stringify(r.statuses)})`);
}

async function warmPhase(dsn: string, opts: Options): Promise<{ rows: WarmRow[]; tiles: number; zooms: number[] }> {
  const pair = await startPair(dsn);
  try {
    const id = await register(pair.tessera, 'bench warm');
    if ((await register(pair['titiler-pgstac'], 'bench warm')) !== id) throw new Error('the two servers registered different ids');
    const zooms = [8, 9, 10];
    const paths = zooms.flatMap((z) => tilesOver(z).map(([x, y]) => tile(id, z, x, y)));
    // Deterministic shuffle: neighbouring requests are not neighbouring tiles.
    paths.sort((a, b) => hashOf(a) - hashOf(b));
    for (const name of ['tessera', 'titiler-pgstac'] as const) {
      const r = await runLoad(pair[name].url, paths, { concurrency: 4, passes: 1, timeoutMs: 120_000 });
      console.log(`warm-up ${name}: ${paths.length} tiles in ${r.seconds.toFixed(1)} s ${JSON.stringify(r.statuses)}`);
    }
    const rows: WarmRow[] = [];
    for (const concurrency of [1, 16]) {
      const results = {} as Record<Name, LoadResult>;
      const order: Name[] = concurrency === 1 ? ['tessera', 'titiler-pgstac'] : ['titiler-pgstac', 'tessera'];
      for (const name of order) {
        results[name] = await runLoad(pair[name].url, paths, { concurrency, durationMs: opts.durationMs, timeoutMs: 120_000 });
        checkStatuses(`${name} c=${concurrency}`, results[name]);
        console.log(`warm c=${concurrency} ${name}: ${results[name].rps.toFixed(1)} tiles/s, p50 ${results[name].latencyMs.p50.toFixed(1)} ms`);
      }
      rows.push({ concurrency, results });
    }
    return { rows, tiles: paths.length, zooms };
  } finally {
    await stopPair(pair);
  }
}

function hashOf(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

async function firstViewPhase(dsn: string, opts: Options): Promise<ViewRow[]> {
  const rows: ViewRow[] = [];
  // Centres of the viewports: the catalogue's middle, then shifted so that each repetition reads other items.
  const centres: Array<[number, number]> = [
    [8.9, 45.5],
    [7.0, 44.5],
    [11.0, 46.5],
    [6.0, 47.0],
    [12.0, 43.5],
  ];
  for (const z of [6, 10]) {
    for (let rep = 0; rep < opts.reps; rep++) {
      const pair = await startPair(dsn);
      try {
        const order: Name[] = (rep + z) % 2 === 0 ? ['tessera', 'titiler-pgstac'] : ['titiler-pgstac', 'tessera'];
        const view = async (
          centre: [number, number],
          what: string,
        ): Promise<{ seconds: Record<Name, number>; statuses: Record<Name, Record<string, number>> }> => {
          // A search no server has seen: pgSTAC's hash covers the metadata's name.
          const id = await register(pair.tessera, `bench view z${z} ${rep} ${what} ${Date.now()}`);
          const paths = viewport(z, centre[0], centre[1]).map(([x, y]) => tile(id, z, x, y));
          const seconds = {} as Record<Name, number>;
          const statuses = {} as Record<Name, Record<string, number>>;
          for (const name of order) {
            const r = await runLoad(pair[name].url, paths, { concurrency: 6, passes: 1, timeoutMs: 120_000 });
            checkStatuses(`${name} z${z} ${what}`, r);
            seconds[name] = r.seconds;
            statuses[name] = r.statuses;
          }
          console.log(
            `${what} z${z} #${rep}: tessera ${seconds.tessera.toFixed(2)} s, titiler-pgstac ${seconds['titiler-pgstac'].toFixed(2)} s ${JSON.stringify(statuses)}`,
          );
          return { seconds, statuses };
        };
        const first = await view(centres[rep % centres.length]!, 'first view');
        const second = await view(centres[(rep + 2) % centres.length]!, 'warm process');
        rows.push({ z, rep, seconds: first.seconds, warmProcessSeconds: second.seconds, statuses: first.statuses });
      } finally {
        await stopPair(pair);
      }
    }
  }
  return rows;
}

function report(warm: { rows: WarmRow[]; tiles: number; zooms: number[] }, views: ViewRow[], opts: Options): string {
  const lines = [
    `# tessera /searches against titiler-pgstac 3.2.0 (${new Date().toISOString()})`,
    '',
    `${CORES} cores; the same pgSTAC database (1,080 items); tessera one process (tile cache off), titiler-pgstac ${CORES} uvicorn workers.`,
    '',
    `## Warm: ${warm.tiles} tiles of zooms ${warm.zooms.join(', ')}, ${opts.durationMs / 1000} s per run`,
    '',
    '| concurrency | tessera tiles/s | titiler-pgstac tiles/s | ratio | tessera p50 / p99 ms | titiler-pgstac p50 / p99 ms |',
    '|---|---|---|---|---|---|',
  ];
  for (const row of warm.rows) {
    const [t, p] = [row.results.tessera, row.results['titiler-pgstac']];
    lines.push(
      `| ${row.concurrency} | ${t.rps.toFixed(1)} | ${p.rps.toFixed(1)} | **${(t.rps / p.rps).toFixed(1)}×** | ${t.latencyMs.p50.toFixed(1)} / ${t.latencyMs.p99.toFixed(1)} | ${p.latencyMs.p50.toFixed(1)} / ${p.latencyMs.p99.toFixed(1)} |`,
    );
  }
  lines.push('', `## First view: a never-seen 4×4 viewport, fresh servers, 6 at a time (${opts.reps} per zoom)`, '');
  lines.push(
    '| zoom | servers | tessera s (median) | titiler-pgstac s (median) | tessera / titiler-pgstac | each (tessera / titiler-pgstac) |',
    '|---|---|---|---|---|---|',
  );
  for (const z of [6, 10]) {
    const at = views.filter((v) => v.z === z);
    for (const [what, of] of [
      ['fresh', (v: ViewRow) => v.seconds],
      ['warmed by a first view', (v: ViewRow) => v.warmProcessSeconds],
    ] as const) {
      const [t, p] = [median(at.map((v) => of(v).tessera)), median(at.map((v) => of(v)['titiler-pgstac']))];
      const each = at.map((v) => `${of(v).tessera.toFixed(2)} / ${of(v)['titiler-pgstac'].toFixed(2)}`).join(', ');
      lines.push(`| ${z} | ${what} | ${t.toFixed(2)} | ${p.toFixed(2)} | **${(t / p).toFixed(2)}** | ${each} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  await fs.mkdir(opts.out, { recursive: true });
  const data = await ensureCatalogueData((line) => console.log(line));
  const files = await startFileServer(data, { keepLog: false });
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-bench-pgstac-'));
  const catalogue = await startCatalogue(files.url, tmp, 'none');
  try {
    console.log(`catalogue: ${catalogue.items.length} items at ${catalogue.dsn}`);
    const warm = await warmPhase(catalogue.dsn, opts);
    const views = await firstViewPhase(catalogue.dsn, opts);
    const text = report(warm, views, opts);
    await fs.writeFile(path.join(opts.out, 'report.md'), text);
    const json = {
      warm: warm.rows.map((r) => ({
        concurrency: r.concurrency,
        ...Object.fromEntries(Object.entries(r.results).map(([n, l]) => [n, { rps: l.rps, latencyMs: l.latencyMs, statuses: l.statuses }])),
      })),
      firstView: views,
    };
    await fs.writeFile(path.join(opts.out, 'report.json'), JSON.stringify(json, null, 2));
    console.log(`\n${text}`);
  } finally {
    await catalogue.stop();
    await files.close();
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
