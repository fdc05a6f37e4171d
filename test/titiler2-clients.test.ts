/**
 * Real clients of both TiTiler generations against one tessera deployed with TESSERA_TITILER_API=2
 * (issue 37, item 4), over HTTP on 127.0.0.1:
 * - a MapLibre GL page written to TiTiler 2.x's URLs (`/cog/tiles/WebMercatorQuad/{z}/{x}/{y}?tilesize=256`,
 *   `/stac/tiles/…?assets=rgb|bidx=1,2,3`, a TileJSON source), in Debian's Chromium (playwright-core):
 *   every tile answers 200 with an image, and the canvas shows the data where it is and only there;
 * - leafmap's TiTiler helpers (cog_tile, cog_bounds, stac_tile … and the ipyleaflet map's
 *   add_cog_layer/add_stac_layer), leafmap's newest release and 0.30 (a 0.18-era client), each from
 *   PyPI in a throw-away venv (tools/clients/leafmap.sh), pointed at the same server: the URLs they build
 *   answer 200 with images, and their JSON answers are the data's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import gdal from 'gdal-async';
import sharp from 'sharp';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { startFileServer, type FileServer } from './helpers/fileserver.js';
import { serveFolderInChild, type ServedFolder } from './helpers/fileserver-process.js';
import { REPO_ROOT } from './helpers/paths.js';
import { makeDemoData } from '../src/demo/make.js';
import { srsFrom, transformPoint, WGS84 } from '../src/gdal/crs.js';

const run = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';
const VIEWPORT = { width: 900, height: 700 };
/** The page's background where no tile is drawn: a colour the demo data never has. */
const MAGENTA = [255, 0, 255] as const;
/** leafmap's newest release on PyPI, and the 0.18-era one tessera's README names. */
const LEAFMAP_VERSIONS = ['0.63.1', '0.30.1'] as const;

type BBox = [number, number, number, number];
interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}
interface Raster {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

const q = encodeURIComponent;

/**
 * A page as a MapLibre user writes it: one raster source from the query (`source`, a MapLibre source
 * object) over a magenta background, framed on `bounds`. It says on <html> when MapLibre is idle (every
 * tile in view loaded) and what error MapLibre reported, if any.
 */
const MAPLIBRE_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>MapLibre over TiTiler 2.x URLs</title>
<link rel="stylesheet" href="/maplibre-gl.css">
<style>html, body { margin: 0; height: 100%; } #map { position: absolute; inset: 0; }</style>
</head><body><div id="map"></div>
<script type="module">
import { Map } from '/maplibre-gl.mjs';
const params = new URLSearchParams(location.search);
const map = new Map({
  container: 'map',
  style: {
    version: 8,
    sources: { data: JSON.parse(params.get('source')) },
    layers: [
      { id: 'background', type: 'background', paint: { 'background-color': '#ff00ff' } },
      { id: 'data', type: 'raster', source: 'data', paint: { 'raster-fade-duration': 0 } },
    ],
  },
  bounds: JSON.parse(params.get('bounds')),
  fitBoundsOptions: { padding: 150 },
  attributionControl: false,
  fadeDuration: 0,
});
globalThis.map = map;
map.on('error', (e) => { document.documentElement.dataset.error = String(e.error?.message ?? e); });
map.once('idle', () => { document.documentElement.dataset.idle = 'yes'; });
</script></body></html>`;

/** The browser globals read inside the page (this file compiles without DOM types). */
interface PageGlobals {
  map: { project(lngLat: [number, number]): { x: number; y: number } };
  document: { documentElement: { dataset: Record<string, string | undefined> } };
}

async function decode(image: Buffer): Promise<Raster> {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

function pixel(img: Raster, x: number, y: number): [number, number, number] {
  const i = (y * img.width + x) * img.channels;
  return [img.data[i]!, img.data[i + 1]!, img.data[i + 2]!];
}

function isMagenta([r, g, b]: [number, number, number]): boolean {
  return Math.abs(r - MAGENTA[0]) <= 8 && Math.abs(g - MAGENTA[1]) <= 8 && Math.abs(b - MAGENTA[2]) <= 8;
}

function pixelsIn(img: Raster, box: Box): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let y = Math.max(0, Math.round(box.top)); y < Math.min(img.height, Math.round(box.bottom)); y++) {
    for (let x = Math.max(0, Math.round(box.left)); x < Math.min(img.width, Math.round(box.right)); x++) out.push([x, y]);
  }
  assert.ok(out.length > 1000, `too few pixels in ${JSON.stringify(box)}`);
  return out;
}

function shareOf(img: Raster, box: Box, test: (rgb: [number, number, number]) => boolean): number {
  const cells = pixelsIn(img, box);
  return cells.filter(([x, y]) => test(pixel(img, x, y))).length / cells.length;
}

function shrink(box: Box, fraction: number): Box {
  const dx = (box.right - box.left) * fraction;
  const dy = (box.bottom - box.top) * fraction;
  return { left: box.left + dx, top: box.top + dy, right: box.right - dx, bottom: box.bottom - dy };
}

/** The WebMercatorQuad tile holding a point (the usual XYZ arithmetic, not tessera's). */
function tileOf(lon: number, lat: number, z: number): { z: number; x: number; y: number } {
  const n = 2 ** z;
  const rad = (lat * Math.PI) / 180;
  return {
    z,
    x: Math.floor(((lon + 180) / 360) * n),
    y: Math.floor(((1 - Math.log(Math.tan(rad) + 1 / Math.cos(rad)) / Math.PI) / 2) * n),
  };
}

describe('TiTiler 2.x clients against tessera with TESSERA_TITILER_API=2', { timeout: 600_000 }, () => {
  let demoDir: string;
  let files: ServedFolder;
  let server: RunningTessera;
  let cog: string;
  /** The demo item with absolute asset hrefs: leafmap opens an item's first GeoTIFF itself, by its href. */
  let item: string;
  let itemBbox: BBox;
  let centre: [number, number];

  before(async () => {
    demoDir = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-clients-'));
    files = await serveFolderInChild(demoDir);
    await makeDemoData(demoDir, { baseUrl: `${files.url}/` });
    const doc = JSON.parse(await fs.readFile(path.join(demoDir, 'item.json'), 'utf8')) as { bbox: BBox; assets: Record<string, { href: string }> };
    for (const asset of Object.values(doc.assets)) asset.href = new URL(asset.href, `${files.url}/item.json`).href;
    await fs.writeFile(path.join(demoDir, 'item-absolute.json'), JSON.stringify(doc));
    itemBbox = doc.bbox;
    centre = [(itemBbox[0] + itemBbox[2]) / 2, (itemBbox[1] + itemBbox[3]) / 2];
    cog = `${files.url}/rgb.tif`;
    item = `${files.url}/item-absolute.json`;
    server = await startTessera({ titilerApi: '2' }, { listen: true });
  });

  after(async () => {
    await server?.close();
    await files?.stop();
    if (demoDir) await fs.rm(demoDir, { recursive: true, force: true });
  });

  describe('a MapLibre GL page written to 2.x URLs, in headless Chromium', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
    let pages: FileServer;
    let browser: Browser;
    /** Every request that tried to leave 127.0.0.1 (aborted). */
    const escaped: string[] = [];

    before(async () => {
      // The page's own origin (another port than tessera's: the tiles are cross-origin, as for any app).
      pages = await startFileServer(demoDir);
      const dist = path.dirname(fileURLToPath(import.meta.resolve('maplibre-gl')));
      for (const name of await fs.readdir(dist)) {
        if (/^maplibre-gl(-shared|-worker)?\.mjs$/.test(name)) pages.put(`/${name}`, await fs.readFile(path.join(dist, name)), 'text/javascript');
      }
      pages.put('/maplibre-gl.css', await fs.readFile(path.join(dist, 'maplibre-gl.css')), 'text/css');
      pages.put('/map.html', MAPLIBRE_PAGE, 'text/html; charset=utf-8');
      // WebGL without a GPU: SwiftShader, which Chromium only falls back to when told it may.
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-dev-shm-usage', '--enable-unsafe-swiftshader', '--use-angle=swiftshader'],
      });
    });

    after(async () => {
      await browser?.close();
      await pages?.close();
    });

    interface Shown {
      page: Page;
      screenshot: Raster;
      /** Where the item's bbox is on screen. */
      box: Box;
      /** The tile responses from tessera: URL, status, media type. */
      tiles: Array<{ url: URL; status: number; type: string }>;
      requests: string[];
    }

    /** Opens the page on `source`, waits until MapLibre is idle, and checks nothing failed. */
    async function show(source: object): Promise<Shown> {
      const context = await browser.newContext({ viewport: VIEWPORT });
      await context.route('**/*', async (route) => {
        const url = route.request().url();
        if (new URL(url).hostname === '127.0.0.1') await route.continue();
        else {
          escaped.push(url);
          await route.abort();
        }
      });
      const page = await context.newPage();
      const errors: string[] = [];
      const requests: string[] = [];
      const tiles: Shown['tiles'] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console: ${message.text()}`);
      });
      page.on('pageerror', (err) => errors.push(`exception: ${err.message}`));
      page.on('request', (request) => requests.push(request.url()));
      page.on('response', (response) => {
        const url = new URL(response.url());
        if (url.origin === server.url && /\/tiles\/WebMercatorQuad\/\d+\/\d+\/\d+$/.test(url.pathname)) {
          tiles.push({ url, status: response.status(), type: response.headers()['content-type'] ?? '' });
        }
      });
      const response = await page.goto(`${pages.url}/map.html?source=${q(JSON.stringify(source))}&bounds=${q(JSON.stringify(itemBbox))}`);
      assert.equal(response?.status(), 200);
      await page.waitForFunction(
        () => {
          const d = (globalThis as unknown as PageGlobals).document.documentElement.dataset;
          return d['idle'] === 'yes' || d['error'] !== undefined;
        },
        undefined,
        { timeout: 60_000 },
      );
      const state = await page.evaluate(() => ({ ...(globalThis as unknown as PageGlobals).document.documentElement.dataset }));
      assert.equal(state['error'], undefined, 'MapLibre reported no error');
      assert.deepEqual(errors, [], 'no console errors or exceptions');
      assert.deepEqual(escaped, [], 'no request left 127.0.0.1');
      assert.ok(tiles.length >= 4, `tiles were asked of tessera (${tiles.length})`);
      for (const tile of tiles) {
        assert.equal(tile.status, 200, `${tile.url.href} answered ${tile.status}`);
        assert.match(tile.type, /^image\/(png|jpeg)$/, tile.url.href);
      }
      const box = await page.evaluate(([west, south, east, north]) => {
        const map = (globalThis as unknown as PageGlobals).map;
        const corners = [map.project([west, south]), map.project([east, north])];
        return {
          left: Math.min(corners[0]!.x, corners[1]!.x),
          right: Math.max(corners[0]!.x, corners[1]!.x),
          top: Math.min(corners[0]!.y, corners[1]!.y),
          bottom: Math.max(corners[0]!.y, corners[1]!.y),
        };
      }, itemBbox);
      const screenshot = await decode(await page.screenshot());
      return { page, screenshot, box, tiles, requests };
    }

    /** The canvas shows data inside the item (not the background) and the background well outside it. */
    function assertDrawnWhereTheDataIs(shown: Shown, label: string): void {
      const { screenshot, box } = shown;
      assert.ok(box.right - box.left > 300 && box.bottom - box.top > 300, `${label}: the item is shown large (${JSON.stringify(box)})`);
      const drawn = shareOf(screenshot, shrink(box, 0.12), (rgb) => !isMagenta(rgb));
      assert.ok(drawn > 0.95, `${label}: ${(drawn * 100).toFixed(1)}% of the item's pixels are drawn`);
      const margin = 40;
      const outside = [
        { left: 0, top: 0, right: VIEWPORT.width, bottom: box.top - margin },
        { left: 0, top: box.bottom + margin, right: VIEWPORT.width, bottom: VIEWPORT.height },
      ];
      for (const part of outside) {
        const blank = shareOf(screenshot, part, isMagenta);
        assert.ok(blank > 0.99, `${label}: ${((1 - blank) * 100).toFixed(1)}% drawn outside the item`);
      }
    }

    /** Share of the pixels in `box` where `a`'s colour is `b`'s with its channels mapped by `order`. */
    function sameColours(a: Raster, b: Raster, box: Box, order: [number, number, number]): number {
      const cells = pixelsIn(a, box);
      return (
        cells.filter(([x, y]) => {
          const pa = pixel(a, x, y);
          const pb = pixel(b, x, y);
          return order.every((from, to) => Math.abs(pa[to]! - pb[from]!) <= 2);
        }).length / cells.length
      );
    }

    const tileSource = (tiles: string): object => ({ type: 'raster', tiles: [tiles], tileSize: 256, bounds: itemBbox });

    it('a COG by /cog/tiles/WebMercatorQuad/{z}/{x}/{y}?tilesize=256, and the same bands of a STAC asset by assets=rgb|bidx=…', async () => {
      const cogShown = await show(tileSource(`${server.url}/cog/tiles/WebMercatorQuad/{z}/{x}/{y}?tilesize=256&url=${q(cog)}`));
      assert.ok(
        cogShown.tiles.every((t) => t.url.searchParams.get('tilesize') === '256'),
        'the tile URLs as written',
      );
      assertDrawnWhereTheDataIs(cogShown, '/cog');
      // Tiles of 256 px: decode one of tessera's answers.
      const oneTile = await fetch(cogShown.tiles[0]!.url);
      const decoded = await decode(Buffer.from(await oneTile.arrayBuffer()));
      assert.deepEqual([decoded.width, decoded.height], [256, 256]);

      const stacShown = await show(tileSource(`${server.url}/stac/tiles/WebMercatorQuad/{z}/{x}/{y}?tilesize=256&assets=rgb|bidx=1,2,3&url=${q(item)}`));
      assert.ok(stacShown.tiles.every((t) => t.url.searchParams.get('assets') === 'rgb|bidx=1,2,3'));
      assertDrawnWhereTheDataIs(stacShown, '/stac bidx=1,2,3');
      const inner = shrink(stacShown.box, 0.12);
      const same = sameColours(cogShown.screenshot, stacShown.screenshot, inner, [0, 1, 2]);
      assert.ok(same > 0.99, `the STAC asset's bands 1,2,3 look as the COG does (${(same * 100).toFixed(2)}%)`);

      const swapped = await show(tileSource(`${server.url}/stac/tiles/WebMercatorQuad/{z}/{x}/{y}?tilesize=256&assets=rgb|bidx=3,2,1&url=${q(item)}`));
      assertDrawnWhereTheDataIs(swapped, '/stac bidx=3,2,1');
      const redBlue = shareOf(stacShown.screenshot, inner, ([r, , b]) => Math.abs(r - b) > 10);
      assert.ok(redBlue > 0.3, `the data's red and blue differ enough to tell a swap (${(redBlue * 100).toFixed(1)}%)`);
      const swap = sameColours(stacShown.screenshot, swapped.screenshot, inner, [2, 1, 0]);
      assert.ok(swap > 0.99, `bidx=3,2,1 draws red and blue swapped (${(swap * 100).toFixed(2)}%)`);
      for (const shown of [cogShown, stacShown, swapped]) await shown.page.context().close();
    });

    it('a TileJSON source (/stac/WebMercatorQuad/tilejson.json?tilesize=256): MapLibre follows its 2.x tile URLs', async () => {
      const tilejson = `${server.url}/stac/WebMercatorQuad/tilejson.json?tilesize=256&assets=dem&colormap_name=terrain&rescale=400,4000&url=${q(item)}`;
      const shown = await show({ type: 'raster', url: tilejson, tileSize: 256 });
      assert.ok(shown.requests.includes(tilejson), 'the TileJSON was read');
      assert.ok(
        shown.tiles.every((t) => t.url.pathname.startsWith('/stac/tiles/WebMercatorQuad/') && t.url.searchParams.get('tilesize') === '256'),
        "the tiles at 2.x's URL, without a scale",
      );
      assertDrawnWhereTheDataIs(shown, 'TileJSON');
      const coloured = shareOf(shown.screenshot, shrink(shown.box, 0.12), ([r, g, b]) => Math.max(r, g, b) - Math.min(r, g, b) > 20);
      assert.ok(coloured > 0.9, `the terrain colormap colours the elevation (${(coloured * 100).toFixed(1)}%)`);
      await shown.page.context().close();
    });
  });

  for (const version of LEAFMAP_VERSIONS) {
    describe(`leafmap ${version} (PyPI) calling tessera's endpoints`, () => {
      type Answer = { ok: unknown } | { error: string };
      let answers: Record<string, Answer>;
      let requested: string[];

      before(async () => {
        const { stdout: python } = await run('bash', [path.join(REPO_ROOT, 'tools/clients/leafmap.sh'), version], { cwd: REPO_ROOT, timeout: 600_000 });
        const script = path.join(REPO_ROOT, 'tools/clients/leafmap_calls.py');
        const { stdout } = await run(python.trim(), [script, server.url, cog, item, String(centre[0]), String(centre[1])], {
          timeout: 180_000,
          maxBuffer: 16 * 1024 * 1024,
          // leafmap asks the public TiTiler when tessera fails; that must fail at once here, never hang.
          env: { ...process.env, HTTPS_PROXY: 'http://127.0.0.1:9', HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1' },
        });
        const out = JSON.parse(stdout) as { version: string; answers: Record<string, Answer>; requested: string[] };
        assert.equal(out.version, version);
        answers = out.answers;
        requested = out.requested;
      });

      function ok<T>(name: string): T {
        const answer = answers[name];
        assert.ok(answer && 'ok' in answer, `${name}: ${answer && 'error' in answer ? answer.error : 'not called'}`);
        return answer.ok as T;
      }

      it('asks only tessera and the data server', () => {
        assert.ok(requested.length > 10);
        for (const url of requested) assert.ok(url.startsWith(`${server.url}/`) || url.startsWith(`${files.url}/`), url);
      });

      it("answers its metadata helpers with the data's bounds, bands and statistics", async () => {
        for (const name of ['cog_bounds', 'stac_bounds']) {
          const bounds = ok<number[]>(name);
          assert.equal(bounds.length, 4, name);
          for (const [i, v] of bounds.entries()) {
            assert.ok(Math.abs(v - itemBbox[i]!) < 1e-4, `${name}: ${JSON.stringify(bounds)} is the item's ${JSON.stringify(itemBbox)}`);
          }
        }
        for (const name of ['cog_center', 'stac_center']) {
          const c = ok<number[]>(name);
          assert.ok(Math.abs(c[0]! - centre[0]) < 1e-4 && Math.abs(c[1]! - centre[1]) < 1e-4, `${name}: ${JSON.stringify(c)}`);
        }
        assert.deepEqual(ok('cog_bands'), ['b1', 'b2', 'b3']);
        assert.deepEqual(ok('stac_bands'), ['dem', 'rgb']);
        const info = ok<{ count: number; dtype: string }>('cog_info');
        assert.deepEqual([info.count, info.dtype], [3, 'uint8']);
        assert.equal(ok<{ rgb: { count: number } }>('stac_info').rgb.count, 3);
        for (const name of ['cog_stats', 'stac_stats']) {
          const stats = ok<Record<string, { min: number; max: number; percentile_2: number; percentile_98: number }>>(name);
          // 2.x names the bands of a plain read b1 … bn, /cog and /stac alike (the collision of band names).
          assert.deepEqual(Object.keys(stats), ['b1', 'b2', 'b3'], name);
          for (const s of Object.values(stats))
            assert.ok(s.min <= s.percentile_2 && s.percentile_2 < s.percentile_98 && s.percentile_98 <= s.max, `${name}: ${JSON.stringify(s)}`);
        }
        // The pixel leafmap reads is the file's, read here by GDAL directly.
        const ds = await gdal.openAsync(path.join(demoDir, 'rgb.tif'));
        try {
          const [x, y] = transformPoint(srsFrom(WGS84), ds.srs!, centre[0], centre[1]);
          const gt = ds.geoTransform!;
          const col = Math.floor((x - gt[0]!) / gt[1]!);
          const row = Math.floor((y - gt[3]!) / gt[5]!);
          const expected = await Promise.all([1, 2, 3].map(async (b) => (await ds.bands.getAsync(b)).pixels.get(col, row)));
          assert.deepEqual(ok('cog_pixel_value'), { b1: expected[0], b2: expected[1], b3: expected[2] });
        } finally {
          ds.close();
        }
      });

      it("builds tile URLs at 2.x's paths that answer 200 with images of the data", async () => {
        const layers = ok<Record<string, string>>('map_layers');
        const templates: Record<string, string> = {
          cog_tile: ok('cog_tile'),
          cog_tile_bands: ok('cog_tile_bands'),
          cog_tile_colormap: ok('cog_tile_colormap'),
          stac_tile: ok('stac_tile'),
          stac_tile_dem: ok('stac_tile_dem'),
          stac_tile_expression: ok('stac_tile_expression'),
          'Map.add_cog_layer': layers['cog']!,
          'Map.add_stac_layer': layers['stac']!,
        };
        const { z, x, y } = tileOf(centre[0], centre[1], 11);
        for (const [name, template] of Object.entries(templates)) {
          const family = name.includes('cog') ? 'cog' : 'stac';
          assert.ok(template.startsWith(`${server.url}/${family}/tiles/WebMercatorQuad/{z}/{x}/{y}?`), `${name}: ${template}`);
          // Without tilesize TiTiler 2.x's TileJSON asks for 512 px tiles.
          assert.equal(new URL(template.replace('{z}/{x}/{y}', '0/0/0')).searchParams.get('tilesize'), '512', name);
          const res = await fetch(template.replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y)));
          assert.equal(res.status, 200, `${name}: ${res.status} ${res.status === 200 ? '' : await res.text()}`);
          assert.match(res.headers.get('content-type') ?? '', /^image\/(png|jpeg)$/, name);
          const img = await decode(Buffer.from(await res.arrayBuffer()));
          assert.deepEqual([img.width, img.height], [512, 512], name);
          const values = new Set<string>();
          for (let i = 0; i < img.width * img.height; i += 97) values.add(pixel(img, i % img.width, Math.floor(i / img.width)).join());
          assert.ok(values.size > 20, `${name}: the tile shows the data (${values.size} colours sampled)`);
        }
      });
    });
  }
});
