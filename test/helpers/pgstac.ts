/**
 * A generated pgSTAC catalogue for the tests of /searches (test/pgstac-*.test.ts,
 * test/parity/pgstac.test.ts): COGs made with GDAL once into `.parity/pgstac-data/` (kept while
 * their version stamp matches), STAC items over them written for the URL the test's file server
 * gives, and a throw-away PostgreSQL cluster on loopback with pgSTAC's schema migrated and the items
 * loaded by pypgstac (tools/stac-api/serve.sh), with titiler-pgstac 3.2.0 in front of it when asked.
 *
 * The catalogue (1,080 items, two collections):
 *   alpha  648 items: 54 cells of 1.25° on a 1° grid over lon 4–13, lat 42–48 (neighbours overlap by
 *          a quarter), each seen on 12 dates of 2023. `visual`: an RGB uint8 COG in EPSG:4326, one
 *          of three variants per cell by month (variant 2 has a nodata corner); `data`: a uint16 COG
 *          per cell. `eo:cloud_cover` varies by item.
 *   beta   432 items: 54 cells shifted half a cell north-east, in EPSG:3857 (512×704 square
 *          pixels), 8 dates of 2023 each, `visual` one of two variants per cell.
 * Every COG is 512 pixels wide with 256-pixel blocks and one overview level.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { gdal, type Dataset } from '../../src/gdal/gdal.js';
import { bboxPolygon } from './geojson.js';
import { REPO_ROOT } from './paths.js';
import { run } from './run.js';

const VERSION = '2';
const STAMP = '.version';
/** Where the generated COGs are kept between runs. */
const CATALOGUE_DATA = path.join(REPO_ROOT, '.parity/pgstac-data');

const SIZE = 512;
const COG_TYPE = 'image/tiff; application=geotiff; profile=cloud-optimized';
const ALPHA_MONTHS = 12;
const BETA_DATES = 8;
const COLS = 9;
const ROWS = 6;
const CELL = 1.25;

type BBox = [number, number, number, number];

export interface CatalogueItem {
  id: string;
  collection: 'alpha' | 'beta';
  datetime: string;
  bbox: BBox;
  cloud: number;
  /** Asset name → file name under the data folder. */
  assets: Record<string, string>;
}

/** The cell of alpha at (col, row): [west, south, east, north]. */
function alphaCell(col: number, row: number): BBox {
  const w = 4 + col;
  const s = 42 + row;
  return [w, s, w + CELL, s + CELL];
}

/**
 * The cell of beta at (col, row): alpha's shifted half a cell north-east, its north edge where SIZE
 * square Web Mercator pixels across its width end (a 3857 COG's pixels are square).
 */
function betaCell(col: number, row: number): BBox {
  const [w, s, e] = alphaCell(col, row).map((v) => v + 0.5) as [number, number, number];
  const [x0, y0] = lonLatToMercator(w, s);
  const [x1] = lonLatToMercator(e, s);
  const top = y0 + (x1 - x0) * BETA_ROWS_PER_COLUMN;
  const n = (Math.atan(Math.sinh(top / 6378137)) * 180) / Math.PI;
  return [w, s, e, n];
}

/** Rows of a beta COG per column: its cells are ~1.25° tall at 42–50°N, where a degree of latitude is ~1.4× a degree of longitude in Web Mercator. */
const BETA_ROWS_PER_COLUMN = 1.375;

/** A 32-bit integer hash of (x, y, salt). */
function hash(x: number, y: number, salt: number): number {
  let h = Math.imul(x, 0x27d4eb2d) ^ Math.imul(y, 0x165667b1) ^ Math.imul(salt, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function lonLatToMercator(lon: number, lat: number): [number, number] {
  const r = 6378137;
  return [(r * lon * Math.PI) / 180, r * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360))];
}

async function writeCog(src: Dataset, file: string): Promise<void> {
  const tmp = `${file}.tmp.tif`;
  const out = await gdal.translateAsync(tmp, src, [
    '-of',
    'COG',
    '-co',
    'COMPRESS=DEFLATE',
    '-co',
    'PREDICTOR=2',
    '-co',
    'BLOCKSIZE=256',
    '-co',
    'OVERVIEW_RESAMPLING=AVERAGE',
  ]);
  out.close();
  await fs.rename(tmp, file);
}

/** An RGB uint8 COG over `bbox` (lon/lat) in `epsg` (4326 or 3857, square pixels); `salt` makes its pixels its own. */
async function writeVisual(file: string, bbox: BBox, epsg: 4326 | 3857, salt: number, nodataCorner: boolean): Promise<void> {
  const rows = epsg === 4326 ? SIZE : Math.round(SIZE * BETA_ROWS_PER_COLUMN);
  const mem = await gdal.openAsync('visual', 'w', 'MEM', SIZE, rows, 3, gdal.GDT_Byte);
  try {
    const [w, s, e, n] = epsg === 4326 ? bbox : [...lonLatToMercator(bbox[0], bbox[1]), ...lonLatToMercator(bbox[2], bbox[3])];
    mem.geoTransform = [w, (e - w) / SIZE, 0, n, 0, -(n - s) / rows];
    mem.srs = gdal.SpatialReference.fromEPSG(epsg);
    const plane = new Uint8Array(SIZE * rows);
    for (let b = 1; b <= 3; b++) {
      for (let y = 0; y < rows; y++) {
        for (let x = 0; x < SIZE; x++) {
          if (nodataCorner && x + y < SIZE / 2) {
            plane[y * SIZE + x] = 0;
            continue;
          }
          const v =
            120 +
            50 * Math.sin((x + 13 * salt) / (40 + 9 * b)) +
            40 * Math.cos((y - 7 * salt) / (55 - 6 * b)) +
            (salt % 17) * 3 -
            24 +
            (hash(x, y, salt * 3 + b) & 7);
          plane[y * SIZE + x] = Math.min(255, Math.max(1, Math.round(v)));
        }
      }
      const band = mem.bands.get(b);
      band.noDataValue = 0;
      await band.pixels.writeAsync(0, 0, SIZE, rows, plane);
    }
    await writeCog(mem, file);
  } finally {
    mem.close();
  }
}

/** A one-band uint16 COG (an elevation-like field) over `bbox` in EPSG:4326. */
async function writeData(file: string, bbox: BBox, salt: number): Promise<void> {
  const mem = await gdal.openAsync('data', 'w', 'MEM', SIZE, SIZE, 1, gdal.GDT_UInt16);
  try {
    const [w, s, e, n] = bbox;
    mem.geoTransform = [w, (e - w) / SIZE, 0, n, 0, -(n - s) / SIZE];
    mem.srs = gdal.SpatialReference.fromEPSG(4326);
    const plane = new Uint16Array(SIZE * SIZE);
    for (let y = 0; y < SIZE; y++) {
      for (let x = 0; x < SIZE; x++) {
        plane[y * SIZE + x] = Math.round(1500 + 900 * Math.sin((x + 31 * salt) / 70) * Math.cos((y + 17 * salt) / 90) + (hash(x, y, salt) & 15));
      }
    }
    await mem.bands.get(1).pixels.writeAsync(0, 0, SIZE, SIZE, plane);
    await writeCog(mem, file);
  } finally {
    mem.close();
  }
}

function isoDay(year: number, month: number, day: number): string {
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T10:00:00Z`;
}

/** Every item of the catalogue, newest first within each cell (the order does not matter to pgSTAC). */
function catalogueItems(): CatalogueItem[] {
  const items: CatalogueItem[] = [];
  for (let row = 0; row < ROWS; row++) {
    for (let col = 0; col < COLS; col++) {
      const cell = row * COLS + col;
      for (let m = 1; m <= ALPHA_MONTHS; m++) {
        items.push({
          id: `alpha-${cell}-${m}`,
          collection: 'alpha',
          datetime: isoDay(2023, m, 1 + (cell % 27)),
          bbox: alphaCell(col, row),
          cloud: hash(cell, m, 1) % 101,
          assets: { visual: `alpha-${cell}-v${m % 3}.tif`, data: `alpha-${cell}-data.tif` },
        });
      }
      for (let d = 0; d < BETA_DATES; d++) {
        items.push({
          id: `beta-${cell}-${d}`,
          collection: 'beta',
          datetime: isoDay(2023, 1 + d + (d > 3 ? 2 : 0), 15),
          bbox: betaCell(col, row),
          cloud: hash(cell, d, 2) % 101,
          assets: { visual: `beta-${cell}-v${d % 2}.tif` },
        });
      }
    }
  }
  return items;
}

/** Makes (or reuses) the COGs of the catalogue in CATALOGUE_DATA. */
export async function ensureCatalogueData(log: (line: string) => void = () => undefined): Promise<string> {
  const dir = CATALOGUE_DATA;
  await fs.mkdir(dir, { recursive: true });
  const stamp = await fs.readFile(path.join(dir, STAMP), 'utf8').catch(() => '');
  if (stamp === VERSION) return dir;
  const t0 = Date.now();
  log('pgstac data: generating the catalogue COGs (once; kept in .parity/pgstac-data)');
  for (let row = 0; row < ROWS; row++) {
    for (let col = 0; col < COLS; col++) {
      const cell = row * COLS + col;
      for (let v = 0; v < 3; v++) await writeVisual(path.join(dir, `alpha-${cell}-v${v}.tif`), alphaCell(col, row), 4326, cell * 7 + v, v === 2);
      await writeData(path.join(dir, `alpha-${cell}-data.tif`), alphaCell(col, row), cell);
      for (let v = 0; v < 2; v++) await writeVisual(path.join(dir, `beta-${cell}-v${v}.tif`), betaCell(col, row), 3857, 1000 + cell * 5 + v, false);
    }
  }
  await fs.writeFile(path.join(dir, STAMP), VERSION);
  log(`pgstac data: done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return dir;
}

/** The one item whose document carries STAC `renders` (the render extension), and its renders: one a tile takes as 0.18 wrote it, one with 2.x's options, one naming a colormap no server has. */
export const RENDERED_ITEM = 'alpha-20-3';
const ITEM_RENDERS = {
  natural: { title: 'Natural colour', assets: ['visual'], asset_bidx: ['visual|3,2,1'], minmax_zoom: [6, 12] },
  elevation: { title: 'Elevation', assets: ['data'], rescale: [[0, 3000]], colormap_name: 'viridis' },
  broken: { title: 'A colormap nobody has', assets: ['visual'], colormap_name: 'no-such-map' },
};

/** The STAC item of `item`, its assets' hrefs under `baseUrl`. */
function stacItem(item: CatalogueItem, baseUrl: string): Record<string, unknown> {
  return {
    type: 'Feature',
    stac_version: '1.0.0',
    stac_extensions: [],
    id: item.id,
    collection: item.collection,
    bbox: item.bbox,
    geometry: bboxPolygon(item.bbox),
    properties: {
      datetime: item.datetime,
      'eo:cloud_cover': item.cloud,
      platform: item.collection === 'alpha' ? 'sat-a' : 'sat-b',
      ...(item.id === RENDERED_ITEM ? { renders: ITEM_RENDERS } : {}),
    },
    assets: Object.fromEntries(Object.entries(item.assets).map(([name, file]) => [name, { href: `${baseUrl}/${file}`, type: COG_TYPE, roles: ['data'] }])),
    links: [],
  };
}

function collectionDocument(id: 'alpha' | 'beta'): Record<string, unknown> {
  const bbox = id === 'alpha' ? [4, 42, 13 + CELL - 1, 48 + CELL - 1] : [4.5, 42.5, 13.5 + CELL - 1, 48.5 + CELL - 1];
  return {
    type: 'Collection',
    stac_version: '1.0.0',
    id,
    description: `generated test collection ${id}`,
    license: 'proprietary',
    extent: { spatial: { bbox: [bbox] }, temporal: { interval: [['2023-01-01T00:00:00Z', '2023-12-31T23:59:59Z']] } },
    item_assets: id === 'alpha' ? { visual: { type: COG_TYPE }, data: { type: COG_TYPE } } : { visual: { type: COG_TYPE } },
    links: [],
  };
}

export interface Catalogue {
  /** libpq connection URI of the database (user postgres, trust authentication, loopback). */
  dsn: string;
  /** Where the application in front answers (titiler-pgstac), when one was asked for. */
  apiUrl: string | undefined;
  items: CatalogueItem[];
  /** Runs SQL in the database through psql (for the tests' own checks and faults). */
  psql(sql: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Writes the catalogue into `dir`: its items as newline-delimited JSON (`items.ndjson`, their COGs
 * under `baseUrl`) and each collection's document (`alpha.json`, `beta.json`).
 */
export async function writeCatalogueFiles(baseUrl: string, dir: string): Promise<{ items: CatalogueItem[]; collections: string[] }> {
  const items = catalogueItems();
  await fs.writeFile(path.join(dir, 'items.ndjson'), `${items.map((i) => JSON.stringify(stacItem(i, baseUrl))).join('\n')}\n`);
  const collections: string[] = [];
  for (const id of ['alpha', 'beta'] as const) {
    const file = path.join(dir, `${id}.json`);
    await fs.writeFile(file, JSON.stringify(collectionDocument(id)));
    collections.push(file);
  }
  return { items, collections };
}

/** The environment without proxies (loopback must not leave) and without either server's settings. */
function withoutProxies(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !/^((https?|ftp|all|no)_proxy|TITILER_.*|TESSERA_.*)$/i.test(k)));
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the catalogue: setup.sh (the venvs, idempotent), the items written for COGs served at
 * `baseUrl`, then serve.sh with `app` in front ('none': the database alone; `env` added to the
 * application's environment). Resolves once the database (and the application) answer.
 */
export async function startCatalogue(
  baseUrl: string,
  tmp: string,
  app: 'titiler-pgstac' | 'none' = 'none',
  env: Record<string, string> = {},
): Promise<Catalogue> {
  const setup = await run('bash', [path.join(REPO_ROOT, 'tools/stac-api/setup.sh')]);
  if (setup.status !== 0) throw new Error(`tools/stac-api/setup.sh failed: ${setup.stderr}`);
  const { items, collections } = await writeCatalogueFiles(baseUrl, tmp);
  const [pgPort, apiPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(
    'bash',
    [path.join(REPO_ROOT, 'tools/stac-api/serve.sh'), tmp, String(pgPort), String(apiPort), path.join(tmp, 'items.ndjson'), ...collections],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...withoutProxies(process.env), ...env, STAC_APP: app, NO_PROXY: '*', no_proxy: '*' } },
  );
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const apiUrl = app === 'none' ? undefined : `http://127.0.0.1:${apiPort}`;
  const dsn = `postgresql://postgres@127.0.0.1:${pgPort}/postgres`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve.sh stopped (${child.exitCode}): ${output}`);
    const ready = apiUrl
      ? await fetch(`${apiUrl}/healthz`).then(
          async (r) => r.ok && ((await r.json()) as { database_online?: boolean }).database_online === true,
          () => false,
        )
      : existsSync(path.join(tmp, 'ready'));
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`the catalogue did not start within 180 s: ${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    dsn,
    apiUrl,
    items,
    psql: async (sql) => {
      const r = await run('/usr/lib/postgresql/15/bin/psql', ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', dsn, '-c', sql]);
      if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
      return r.stdout.trim();
    },
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
