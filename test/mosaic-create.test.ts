/**
 * `tessera mosaic create|footprint|info` against cogeo-mosaic, the tool whose documents it writes:
 * the CLI of this build runs as a child process on lists of the shared fixtures served on
 * 127.0.0.1; tools/expected/mosaic_create.py runs cogeo-mosaic 7.2's `MosaicJSON.from_urls` on the
 * same URLs in the parity venv (the version TiTiler 0.18.10 pins), and the `cogeo-mosaic` command of
 * the current 9.x runs from a throw-away venv (tools/parity/cogeo9.sh). The documents must be equal
 * to both as JSON, key order included (the `tiles` keys are in the order cogeo-mosaic burns them),
 * numbers compared as numbers; `footprint` and `info --json` are compared with 9.x's. The same script checks the two
 * pieces of geometry that decide the tiles, on many cases no fixture reaches: GDAL's all-touched
 * burn of a rectangle (against rasterio) and the whole index (against cogeo-mosaic's own
 * `from_urls` over given footprints: tile-aligned ones, the antimeridian, the poles). Finally the
 * document written is served by tessera's /mosaicjson/ routes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { run, type Run } from './helpers/run.js';
import { BUILT_CLI, FIXTURES, REPO_ROOT } from './helpers/paths.js';
import { startFileServer, type FileServer } from './helpers/fileserver.js';
import { startTessera } from './helpers/tessera.js';
import { burnRectangle } from '../src/mosaic/burn.js';
import { buildMosaicJson, type MosaicFootprint } from '../src/mosaic/build.js';
import { quadkeyToTile } from '../src/mosaic/quadkey.js';
import { pyDumps } from '../src/pyjson.js';
import { Progress } from '../src/progress.js';
import { getTms, WEB_MERCATOR_QUAD } from '../src/tms/registry.js';
import { srsFrom, transformPoint, WGS84 } from '../src/gdal/crs.js';

const PYTHON = path.join(REPO_ROOT, '.parity/venv/bin/python');
const COGEO9 = path.join(REPO_ROOT, '.parity/cogeo9/bin/cogeo-mosaic');
const SCRIPT = path.join(REPO_ROOT, 'tools/expected/mosaic_create.py');
const skip = existsSync(PYTHON) ? false : `cogeo-mosaic's parity venv is missing (${PYTHON}): make test sets it up (tools/parity/setup.sh)`;

/** A child process, asynchronously: the file server it reads answers from this process. */

/** Loopback is refused by default; the fixtures are served there. */
const LOOPBACK_ENV = { TESSERA_ALLOWED_NETWORKS: '127.0.0.0/8' };

function tessera(args: string[], opts: { input?: string; env?: Record<string, string>; command?: string } = {}): Promise<Run> {
  return run(process.execPath, ['--enable-source-maps', BUILT_CLI, 'mosaic', opts.command ?? 'create', ...args], {
    input: opts.input ?? '',
    env: opts.env ?? LOOPBACK_ENV,
  });
}

function cogeoMosaic(mode: string, args: string[], input = ''): Promise<Run> {
  return run(PYTHON, [SCRIPT, mode, ...args], { input });
}

/** JSON with objects as ordered entries: key order is part of what is compared. */
type Ordered = null | boolean | number | string | Ordered[] | { entries: Array<[string, Ordered]> };

function parseOrdered(text: string): Ordered {
  let i = 0;
  const token = /\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}[\],:])/y;
  const next = (): string => {
    token.lastIndex = i;
    const m = token.exec(text);
    if (!m) throw new Error(`not JSON at ${i}: ${text.slice(i, i + 40)}`);
    i = token.lastIndex;
    return m[1]!;
  };
  const value = (t = next()): Ordered => {
    if (t === '{' || t === '[') {
      const entries: Array<[string, Ordered]> = [];
      const items: Ordered[] = [];
      let u = next();
      while (u !== (t === '{' ? '}' : ']')) {
        if (u === ',') u = next();
        if (t === '{') {
          const key = JSON.parse(u) as string;
          assert.equal(next(), ':');
          entries.push([key, value()]);
        } else {
          items.push(value(u));
        }
        u = next();
      }
      return t === '{' ? { entries } : items;
    }
    return JSON.parse(t) as Ordered;
  };
  const out = value();
  assert.match(text.slice(i), /^\s*$/, 'nothing after the JSON value');
  return out;
}

/** The document as plain JSON, for reading fields. */
type Doc = { bounds: number[]; minzoom: number; maxzoom: number; quadkey_zoom: number; tiles: Record<string, string[]> };

describe('tessera mosaic create, against cogeo-mosaic 7.2 and 9.x', { skip }, () => {
  let files: FileServer;
  let tmp: string;
  const url = (name: string): string => `${files.url}/${name}`;

  before(async () => {
    const setup = await run('bash', [path.join(REPO_ROOT, 'tools/parity/cogeo9.sh')]);
    assert.equal(setup.status, 0, `tools/parity/cogeo9.sh failed: ${setup.stderr}`);
    files = await startFileServer(FIXTURES);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-mosaic-create-'));
  });
  after(async () => {
    await files?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * The three tools on the same COGs: tessera given the list as `how` says (and `extra` options only
   * it knows), cogeo-mosaic 7.2's from_urls and 9.x's `cogeo-mosaic create`; the documents must be equal.
   */
  async function same(names: string[], how: 'file' | 'dash' | 'stdin', options: string[] = [], extra: string[] = []): Promise<{ created: Run; expected: Run }> {
    const urls = names.map(url);
    const list = `# made by the test\n${urls.join('\n')}\n\n`;
    const file = path.join(tmp, `urls-${names.length}-${options.length}-${how}.txt`);
    writeFileSync(file, list);
    const created =
      how === 'file' ? await tessera([file, ...options, ...extra]) : await tessera([...(how === 'dash' ? ['-'] : []), ...options, ...extra], { input: list });
    const expected = await cogeoMosaic('urls', [...options, ...urls]);
    assert.equal(expected.status, 0, expected.stderr);
    assert.equal(created.status, 0, created.stderr);
    assert.deepEqual(parseOrdered(created.stdout), parseOrdered(expected.stdout), 'cogeo-mosaic 7.2');
    // 9.x reads the list file itself (its own comment handling is none: the list it gets has only URLs).
    const plain = path.join(tmp, `plain-${names.length}-${options.length}-${how}.txt`);
    writeFileSync(plain, `${urls.join('\n')}\n`);
    const nine = await run(COGEO9, ['create', plain, '--quiet', ...options]);
    assert.equal(nine.status, 0, nine.stderr);
    assert.deepEqual(parseOrdered(created.stdout), parseOrdered(nine.stdout), 'cogeo-mosaic 9.x');
    return { created, expected };
  }

  it('writes the document cogeo-mosaic writes for cog1.tif + cog2.tif (the list from a file)', async () => {
    const { created } = await same(['cog1.tif', 'cog2.tif'], 'file');
    assert.match(created.stderr, /2 COG\(s\), 9 quadkey\(s\) at zoom 7/);
  });

  it('reads the list from standard input, with - or with no argument (B01.tif + B09.tif, TCI.tif)', async () => {
    await same(['B01.tif', 'B09.tif'], 'dash');
    await same(['TCI.tif'], 'stdin');
  });

  it('keeps cogeo-mosaic key order where the quadkeys look like integers (TCI.tif at quadkey zoom 11), and writes --name', async () => {
    const { created } = await same(['TCI.tif'], 'file', ['--quadkey-zoom', '11', '--name', 'Libya TCI']);
    const doc = JSON.parse(created.stdout) as Doc & { name: string };
    assert.equal(doc.name, 'Libya TCI');
    assert.ok(Object.keys(doc.tiles).length > 20);
  });

  it("takes the largest zooms of the COGs with cogeo-mosaic's warnings, or the ones given", async () => {
    // cog.tif is in another UTM zone than cog1.tif and cog2.tif: cogeo-mosaic does not check CRSs.
    const { created, expected } = await same(['cog.tif', 'cog1.tif', 'cog2.tif'], 'file', [], ['--allow-mixed-crs']);
    assert.match(expected.stderr, /Multiple MinZoom/);
    assert.match(created.stderr, /warning: Multiple MinZoom, Assets different minzoom values \(5, 7\): minzoom 7 is used/);
    assert.equal((JSON.parse(created.stdout) as Doc).minzoom, 7);
    const given = await same(['cog.tif', 'cog1.tif', 'cog2.tif'], 'file', ['--minzoom', '6', '--maxzoom', '11', '--quadkey-zoom', '9'], ['--allow-mixed-crs']);
    assert.doesNotMatch(given.created.stderr, /Multiple/);
    const doc = JSON.parse(given.created.stdout) as Doc;
    assert.deepEqual([doc.minzoom, doc.maxzoom, doc.quadkey_zoom], [6, 11, 9]);
  });

  it('names each asset it cannot use with the reason and writes nothing (exit 1); --skip-errors leaves them out as cogeo-mosaic skips them', async () => {
    const names = ['cog1.tif', 'missing.tif', 'non_cog.tif', 'cog2.tif', 'cog.tif'];
    const strict = await tessera([], { input: names.map(url).join('\n') });
    assert.equal(strict.status, 1);
    assert.equal(strict.stdout, '');
    assert.match(strict.stderr, new RegExp(`error: ${url('missing.tif')} not found \\(upstream answered 404\\)`));
    assert.match(
      strict.stderr,
      new RegExp(`error: ${url('non_cog.tif')}: not a Cloud Optimized GeoTIFF: The file is greater than 512xH or 512xW, but is not tiled`),
    );
    assert.match(strict.stderr, new RegExp(`error: ${url('cog.tif')}: its CRS is EPSG:32621, while 2 other COG\\(s\\) are in EPSG:32618: .*--allow-mixed-crs`));
    assert.match(strict.stderr, /3 of the assets of standard input cannot be used \(see above\); nothing written: .* --skip-errors/);
    // Plain progress lines off a terminal.
    assert.match(strict.stderr, /tessera: footprints: 5\/5\n/);
    const { created } = await same(['cog1.tif', 'missing.tif', 'cog2.tif'], 'file', [], ['--skip-errors']);
    assert.match(created.stderr, new RegExp(`warning: left out: ${url('missing.tif')} not found`));
    assert.doesNotMatch(created.stdout, /missing/);
  });

  it("refuses COGs of different data types (exit 1), as cogeo-mosaic's MultipleDataTypeError", async () => {
    const urls = [url('cog1.tif'), url('TCI.tif')];
    const expected = await cogeoMosaic('urls', urls);
    assert.equal(expected.status, 3, expected.stderr);
    // TCI.tif is in another UTM zone too: taken here, so that the data types are what is refused.
    const created = await tessera(['--allow-mixed-crs'], { input: urls.join('\n') });
    assert.equal(created.status, 1);
    assert.equal(created.stdout, '');
    assert.match(created.stderr, /different data types \(uint16, uint8\)/);
  });

  it("reads the COGs under the server's policies: exit 1 when none is left, saying what to set", async () => {
    const refused = await tessera([], { input: url('cog1.tif'), env: { TESSERA_ALLOWED_NETWORKS: '' } });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /error: .*cog1\.tif.* is not allowed: .*TESSERA_ALLOWED_NETWORKS/);
    assert.match(refused.stderr, /1 of the assets of standard input cannot be used/);
    const skipped = await tessera(['--skip-errors'], { input: url('cog1.tif'), env: { TESSERA_ALLOWED_NETWORKS: '' } });
    assert.equal(skipped.status, 1);
    assert.match(skipped.stderr, /none of the 1 COG\(s\) of standard input could be used/);
    const local = await tessera([], { input: path.join(FIXTURES, 'cog1.tif') });
    assert.match(local.stderr, /local files are disabled/);
    assert.equal(local.status, 1);
    const empty = await tessera([], { input: '# nothing\n\n' });
    assert.equal(empty.status, 1);
    assert.match(empty.stderr, /no COG URL in standard input/);
    const missing = await tessera([path.join(tmp, 'no-such-list.txt')]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /cannot read the list of COG URLs/);
  });

  it('writes --output (gzip-compressed for .gz), a document tessera serves', async () => {
    const list = path.join(tmp, 'served.txt');
    writeFileSync(list, `${url('cog1.tif')}\n${url('cog2.tif')}\n`);
    const plain = path.join(tmp, 'mosaic.json');
    const gz = path.join(tmp, 'mosaic.json.gz');
    const [toStdout, toFile, toGz] = await Promise.all([tessera([list]), tessera([list, '-o', plain]), tessera([list, '--output', gz])]);
    for (const r of [toStdout, toFile, toGz]) assert.equal(r.status, 0, r.stderr);
    const text = readFileSync(plain, 'utf8');
    assert.equal(`${text}\n`, toStdout.stdout);
    assert.equal(gunzipSync(readFileSync(gz)).toString('utf8'), text);
    assert.equal(toFile.stdout, '');

    files.put('/made/mosaic.json', text, 'application/json');
    const server = await startTessera();
    try {
      const mosaic = encodeURIComponent(`${files.url}/made/mosaic.json`);
      const doc = JSON.parse(text) as Doc;
      const info = await server.get(`/mosaicjson/info?url=${mosaic}`);
      assert.equal(info.status, 200);
      assert.deepEqual(((await info.json()) as { bounds: number[] }).bounds, doc.bounds);
      const served = await server.get(`/mosaicjson/?url=${mosaic}`);
      assert.deepEqual(Object.keys(((await served.json()) as Doc).tiles).sort(), Object.keys(doc.tiles).sort());
      const [key, assets] = Object.entries(doc.tiles).find(([, list]) => list.length === 2)!;
      const { x, y, z } = quadkeyToTile(key);
      const listed = await server.get(`/mosaicjson/${z}/${x}/${y}/assets?url=${mosaic}`);
      assert.deepEqual(await listed.json(), assets);
      const tile = await server.get(`/mosaicjson/tiles/WebMercatorQuad/${z}/${x}/${y}.png?url=${mosaic}`);
      assert.equal(tile.status, 200);
      assert.equal(tile.headers.get('content-type'), 'image/png');
    } finally {
      await server.close();
    }
  });

  it("writes cogeo-mosaic 9.x's footprint FeatureCollection for the same COGs", async () => {
    const list = path.join(tmp, 'footprints.txt');
    writeFileSync(list, `${['cog1.tif', 'cog2.tif', 'B01.tif'].map(url).join('\n')}\n`);
    const ours = await tessera([list, '--allow-mixed-crs'], { command: 'footprint' });
    assert.equal(ours.status, 0, ours.stderr);
    const theirs = await run(COGEO9, ['footprint', list, '--quiet']);
    assert.equal(theirs.status, 0, theirs.stderr);
    assert.deepEqual(parseOrdered(ours.stdout), parseOrdered(theirs.stdout));
  });

  it("prints cogeo-mosaic 9.x's info (its --json fields, plus the number of distinct assets) for a file, a .json.gz and a URL", async () => {
    const list = path.join(tmp, 'info.txt');
    writeFileSync(list, `${url('cog1.tif')}\n${url('cog2.tif')}\n`);
    const plain = path.join(tmp, 'info.json');
    const gz = path.join(tmp, 'info.json.gz');
    for (const out of [plain, gz]) assert.equal((await tessera([list, '-o', out, '--name', 'Info test'])).status, 0);
    for (const file of [plain, gz]) {
      const ours = await tessera([file, '--json'], { command: 'info' });
      assert.equal(ours.status, 0, ours.stderr);
      const theirs = await run(COGEO9, ['info', file, '--json']);
      assert.equal(theirs.status, 0, theirs.stderr);
      const expected = JSON.parse(theirs.stdout) as { TILES: Record<string, number> };
      expected.TILES['Nb Assets'] = 2;
      assert.deepEqual(JSON.parse(ours.stdout), expected);
      const text = await tessera([file], { command: 'info' });
      assert.match(text.stdout, /Name: +Info test\n/);
      assert.match(text.stdout, /QuadKey Zoom: +7\n/);
      assert.match(text.stdout, /Nb Tiles: +9\n/);
    }
    files.put('/made/info.json', readFileSync(plain));
    const remote = await tessera([`${files.url}/made/info.json`, '--json'], { command: 'info' });
    assert.equal(remote.status, 0, remote.stderr);
    assert.deepEqual((JSON.parse(remote.stdout) as { TILES: unknown }).TILES, {
      'Nb Tiles': 9,
      'Min Files': 1,
      'Max Files': 2,
      'Mean Files': 1.67,
      'Nb Assets': 2,
    });
    const refused = await tessera([`${files.url}/made/info.json`], { command: 'info', env: { TESSERA_ALLOWED_NETWORKS: '' } });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /TESSERA_ALLOWED_NETWORKS/);
    const notMosaic = await tessera([path.join(FIXTURES, 'item.json')], { command: 'info' });
    assert.equal(notMosaic.status, 1);
    assert.match(notMosaic.stderr, /mosaicjson/);
  });

  it('has --help with examples on every mosaic command', async () => {
    for (const command of ['create', 'footprint', 'info']) {
      const help = await tessera(['--help'], { command });
      assert.equal(help.status, 0);
      assert.match(help.stdout, /Examples:\n {2}\$ tessera mosaic/);
    }
  });
});

/** A deterministic generator (the cases must be the same on every run). */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

describe('the geometry behind the tiles, against rasterio and cogeo-mosaic', { skip }, () => {
  it("burns a rectangle's cells as GDAL's all-touched rasterize does, near cell boundaries too", async () => {
    const rnd = random(17);
    const [width, height] = [12, 9];
    const offsets = [0, 0.5, 1e-3, 2e-4, 1.1e-4, 9e-5, 1e-6, 1e-12, -1e-12, -1e-6, -9e-5, -1.1e-4, -2e-4];
    const coordinate = (n: number): number => Math.floor(rnd() * (n + 5)) - 2 + (rnd() < 0.2 ? rnd() : offsets[Math.floor(rnd() * offsets.length)]!);
    const rects: Array<[number, number, number, number]> = [];
    while (rects.length < 3000) {
      const [x0, x1] = [coordinate(width), coordinate(width)].sort((a, b) => a - b) as [number, number];
      const [r0, r1] = [coordinate(height), coordinate(height)].sort((a, b) => a - b) as [number, number];
      if (x1 - x0 > 0.02 && r1 - r0 > 0.02) rects.push([x0, r0, x1, r1]);
    }
    const expected = await cogeoMosaic('rectangles', [], JSON.stringify({ width, height, rects }));
    assert.equal(expected.status, 0, expected.stderr);
    const lines = expected.stdout.trim().split('\n');
    rects.forEach(([x0, r0, x1, r1], i) => {
      // rasterio gets world y = height − row; GDAL computes the row back from it, as here.
      const row = (r: number): number => height - (height - r);
      const cells = burnRectangle(x0, x1, row(r0), row(r1), width, height).flatMap((run) => {
        const out: Array<[number, number]> = [];
        for (let r = run.r0; r <= run.r1; r++) for (let c = run.c0; c <= run.c1; c++) out.push([r, c]);
        return out;
      });
      const ours = [...new Set(cells.map(([r, c]) => r * width + c))].sort((a, b) => a - b);
      const theirs = (JSON.parse(lines[i]!) as Array<[number, number]>).map(([r, c]) => r * width + c);
      assert.deepEqual(ours, theirs, `rectangle x ${x0}..${x1}, rows ${r0}..${r1}`);
    });
  });

  it('lists the tiles and assets cogeo-mosaic lists for footprints anywhere, in its order', async () => {
    const rnd = random(7);
    const grid = getTms(WEB_MERCATOR_QUAD)!;
    const [merc, wgs] = [srsFrom(grid.srs), srsFrom(WGS84)];
    const tileCorner = (x: number, y: number, z: number): [number, number] => {
      const [left, , , top] = grid.xyBounds({ x, y, z });
      return transformPoint(merc, wgs, left, top);
    };
    const cases: Array<{ footprints: MosaicFootprint[]; quadkey_zoom: number }> = [];
    for (let k = 0; k < 120; k++) {
      const footprints: MosaicFootprint[] = [];
      const count = 1 + Math.floor(rnd() * 6);
      // cogeo-mosaic takes ~0.3 ms a tile: footprints of up to a few dozen tiles across at this zoom.
      const quadkeyZoom = Math.floor(rnd() * 10);
      for (let i = 0; i < count; i++) {
        let bounds: [number, number, number, number];
        if (rnd() < 0.3) {
          // On tile edges: longitudes exactly (PROJ agrees on them to the bit), latitudes nearly
          // (the last digits of an inverse Mercator differ between PROJ versions).
          const z = Math.max(0, quadkeyZoom - 3) + Math.floor(rnd() * 5);
          const n = 2 ** z;
          const [x0, y0] = [Math.floor(rnd() * n), Math.floor(rnd() * n)];
          const [x1, y1] = [Math.min(n, x0 + 1 + Math.floor(rnd() * 3)), Math.min(n, y0 + 1 + Math.floor(rnd() * 3))];
          const [w, north] = tileCorner(x0, y0, z);
          const [e, south] = tileCorner(x1, y1, z);
          const near = (): number => (rnd() < 0.5 ? 1 : -1) * (1e-9 + rnd() * 1e-9);
          bounds = [w, south + near(), e, north + near()];
        } else {
          // Anywhere, past the antimeridian and the poles too (cogeo-mosaic truncates them).
          const [cx, cy] = [rnd() * 380 - 190, rnd() * 180 - 90];
          const [w, h] = [rnd() * (rnd() < 0.5 ? 2 : 40), rnd() * (rnd() < 0.5 ? 2 : 30)];
          bounds = [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
          // West past east, as rasterio gives a COG across the antimeridian: a polygon the other way round.
          if (rnd() < 0.1) bounds = [bounds[2], bounds[1], bounds[0], bounds[3]];
        }
        footprints.push({ url: `https://example.com/${k}/${i}.tif`, bounds, minzoom: 3 + Math.floor(rnd() * 3), maxzoom: 8, datatype: 'uint8' });
      }
      cases.push({ footprints, quadkey_zoom: quadkeyZoom });
    }
    const expected = await cogeoMosaic('footprints', [], JSON.stringify(cases));
    assert.equal(expected.status, 0, expected.stderr);
    const lines = expected.stdout.trim().split('\n');
    cases.forEach((c, i) => {
      const ours = pyDumps(buildMosaicJson(c.footprints, { quadkeyZoom: c.quadkey_zoom }).document);
      assert.deepEqual(parseOrdered(ours), parseOrdered(lines[i]!), `case ${i}: ${JSON.stringify(c)}`);
    });
  });
});

describe('progress on standard error', () => {
  /** A stream that keeps what is written. */
  const sink = (): { stream: NodeJS.WriteStream; text: () => string } => {
    const chunks: string[] = [];
    return { stream: { write: (c: string) => chunks.push(c) > 0 } as unknown as NodeJS.WriteStream, text: () => chunks.join('') };
  };

  it('draws a bar redrawn in place on a terminal, messages above it', () => {
    const out = sink();
    const progress = new Progress('footprints', 4, out.stream, true);
    progress.update(1);
    progress.log('tessera: warning: something');
    progress.update(4);
    progress.end();
    const text = out.text();
    assert.match(text, /tessera: warning: something\n/);
    const warning = text.indexOf('tessera: warning: something');
    const last = text.lastIndexOf('footprints [==============================] 4/4 100%');
    assert.ok(last > warning, `the finished bar is drawn below the message: ${JSON.stringify(text)}`);
    assert.ok(text.endsWith('\n'), 'the bar keeps its line when done');
  });

  it('writes a plain line a tenth of the way elsewhere', () => {
    const out = sink();
    const progress = new Progress('footprints', 40, out.stream, false);
    for (let i = 1; i <= 40; i++) progress.update(i);
    progress.end();
    const lines = out.text().trim().split('\n');
    assert.equal(lines.length, 10);
    assert.equal(lines[0], 'tessera: footprints: 4/40');
    assert.equal(lines[9], 'tessera: footprints: 40/40');
  });
});

describe('buildMosaicJson limits', () => {
  it('refuses an index too large to serve, and no footprints; says what quadkey zoom 0 means', () => {
    const world: MosaicFootprint = { url: 'w.tif', bounds: [-180, -85, 180, 85], minzoom: 0, maxzoom: 12, datatype: 'uint8' };
    assert.throws(() => buildMosaicJson([world], { quadkeyZoom: 11 }), /more than 1000000 quadkeys at zoom 11: choose a lower quadkey zoom/);
    assert.throws(() => buildMosaicJson([]), /no COG/);
    const zero = buildMosaicJson([{ ...world, minzoom: 2 }], { quadkeyZoom: 0 });
    assert.equal(zero.quadkeyZoom, 2);
    assert.deepEqual(zero.warnings, ['quadkey zoom 0 means the minzoom in a MosaicJSON document: 2 is used']);
  });
});
