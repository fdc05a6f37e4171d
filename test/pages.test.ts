/**
 * tessera's pages in a real browser (Debian's Chromium, driven by playwright-core): the landing page,
 * map pages in Web Mercator and in a custom grid, the mosaic map and the STAC and COG viewers, over the demo
 * data served by a local file server. Every page must load without console errors and without one
 * request leaving 127.0.0.1 (all others are aborted and recorded), tiles must be requested and drawn
 * where the data is (judged on a screenshot), and the viewer's controls must change the tile URL
 * and the picture. Waits are on page state (<html data-tile-state>), never on timers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { existsSync, promises as fs } from 'node:fs';
import sharp from 'sharp';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { serveFolderInChild, type ServedFolder } from './helpers/fileserver-process.js';
import { makeDemoData } from '../src/demo/make.js';
import { getTms } from '../src/tms/registry.js';
import { srsFrom, transformPoint, WGS84 } from '../src/gdal/crs.js';

const CHROMIUM = '/usr/bin/chromium';
const VIEWPORT = { width: 1000, height: 700 };
/** The map background of pages.css (#e8ecef): what a map shows where there are no tiles. */
const BACKGROUND = [0xe8, 0xec, 0xef] as const;
const WAIT_MS = 20_000;

type BBox = [number, number, number, number];
interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The few browser globals the checks read inside the page (this file compiles without DOM types). */
interface PageGlobals {
  tesseraMap: {
    latLngToContainerPoint(latlng: [number, number]): { x: number; y: number };
    getContainer(): { getBoundingClientRect(): { left: number; top: number } };
  };
  document: { documentElement: { dataset: Record<string, string | undefined> } };
}

interface Raster {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
}

const q = encodeURIComponent;

async function decode(png: Buffer): Promise<Raster> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

function isBackground(r: number, g: number, b: number): boolean {
  return Math.abs(r - BACKGROUND[0]) <= 10 && Math.abs(g - BACKGROUND[1]) <= 10 && Math.abs(b - BACKGROUND[2]) <= 10;
}

/** Share of the pixels in `box` (clipped to the image, minus `holes`) that satisfy `test`. */
function share(img: Raster, box: Box, test: (r: number, g: number, b: number) => boolean, holes: Box[] = []): number {
  let hits = 0;
  let total = 0;
  const x0 = Math.max(0, Math.round(box.left));
  const x1 = Math.min(img.width, Math.round(box.right));
  const y0 = Math.max(0, Math.round(box.top));
  const y1 = Math.min(img.height, Math.round(box.bottom));
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      if (holes.some((h) => x >= h.left && x < h.right && y >= h.top && y < h.bottom)) continue;
      const i = (y * img.width + x) * img.channels;
      total++;
      if (test(img.data[i]!, img.data[i + 1]!, img.data[i + 2]!)) hits++;
    }
  }
  assert.ok(total > 100, `too few pixels sampled in ${JSON.stringify(box)}`);
  return hits / total;
}

function shrink(box: Box, fraction: number): Box {
  const dx = (box.right - box.left) * fraction;
  const dy = (box.bottom - box.top) * fraction;
  return { left: box.left + dx, top: box.top + dy, right: box.right - dx, bottom: box.bottom - dy };
}

/** The pixels between `box` grown by `from` and by `to` (fractions of its size): outside the data. */
function ringAround(box: Box, from: number, to: number): Box[] {
  const outer = shrink(box, -to);
  const gap = shrink(box, -from);
  return [
    { left: outer.left, top: outer.top, right: outer.right, bottom: gap.top },
    { left: outer.left, top: gap.bottom, right: outer.right, bottom: outer.bottom },
    { left: outer.left, top: gap.top, right: gap.left, bottom: gap.bottom },
    { left: gap.right, top: gap.top, right: outer.right, bottom: gap.bottom },
  ];
}

/** The viewport's corners, where Leaflet puts its controls (zoom, scale, attribution). */
const CONTROL_CORNERS: Box[] = [
  { left: 0, top: 0, right: 120, bottom: 100 },
  { left: VIEWPORT.width - 220, top: VIEWPORT.height - 40, right: VIEWPORT.width, bottom: VIEWPORT.height },
  { left: 0, top: VIEWPORT.height - 40, right: 480, bottom: VIEWPORT.height },
];

/** Where a lon/lat bbox is on screen: the envelope of its densified outline, in page pixels. */
async function screenBox(page: Page, bbox: BBox): Promise<Box> {
  return page.evaluate(([west, south, east, north]) => {
    const g = globalThis as unknown as PageGlobals;
    const map = g.tesseraMap;
    const origin = map.getContainer().getBoundingClientRect();
    const xs: number[] = [];
    const ys: number[] = [];
    for (let i = 0; i <= 16; i++) {
      const t = i / 16;
      for (const [lat, lon] of [
        [south, west + (east - west) * t],
        [north, west + (east - west) * t],
        [south + (north - south) * t, west],
        [south + (north - south) * t, east],
      ] as Array<[number, number]>) {
        const p = map.latLngToContainerPoint([lat, lon]);
        xs.push(p.x + origin.left);
        ys.push(p.y + origin.top);
      }
    }
    return { left: Math.min(...xs), top: Math.min(...ys), right: Math.max(...xs), bottom: Math.max(...ys) };
  }, bbox);
}

async function tileState(page: Page): Promise<Record<string, string | undefined>> {
  return page.evaluate(() => ({ ...(globalThis as unknown as PageGlobals).document.documentElement.dataset }));
}

/** Waits until the data layer has finished loading tiles whose URL contains every `parts`. */
async function tilesLoaded(page: Page, parts: string[] = []): Promise<Record<string, string | undefined>> {
  await page.waitForFunction(
    (want) => {
      const d = (globalThis as unknown as PageGlobals).document.documentElement.dataset;
      return d['tileState'] === 'loaded' && want.every((p) => (d['tileUrl'] ?? '').includes(p));
    },
    parts,
    { timeout: WAIT_MS },
  );
  return tileState(page);
}

describe('pages in headless Chromium', { timeout: 120_000, skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, () => {
  let demoDir: string;
  let files: ServedFolder;
  let server: RunningTessera;
  let browser: Browser;
  let context: BrowserContext;
  let item: string;
  let itemBbox: BBox;
  let demStats: { minimum: number; maximum: number };
  let mosaicBounds: BBox;
  /** Every request that tried to leave 127.0.0.1 (aborted). */
  const escaped: string[] = [];

  before(async () => {
    demoDir = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-pages-'));
    files = await serveFolderInChild(demoDir);
    await makeDemoData(demoDir, { baseUrl: `${files.url}/` });
    const doc = JSON.parse(await fs.readFile(path.join(demoDir, 'item.json'), 'utf8')) as {
      bbox: BBox;
      assets: { dem: { 'raster:bands': Array<{ statistics: { minimum: number; maximum: number } }> } };
    };
    itemBbox = doc.bbox;
    demStats = doc.assets.dem['raster:bands'][0]!.statistics;
    mosaicBounds = (JSON.parse(await fs.readFile(path.join(demoDir, 'mosaic.json'), 'utf8')) as { bounds: BBox }).bounds;
    item = `${files.url}/item.json`;
    // tessera serves the demo folder too (as `make run` does), so the landing page links it.
    // …and its stac-geoparquet catalogue (as `make run` does): the landing page links the collection's map.
    server = await startTessera({ basemapUrl: '', demoDir, catalog: path.join(demoDir, 'catalog'), catalogSearches: 'none' }, { listen: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    context = await browser.newContext({ viewport: VIEWPORT });
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (new URL(url).hostname === '127.0.0.1') await route.continue();
      else {
        escaped.push(url);
        await route.abort();
      }
    });
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
    await files?.stop();
    if (demoDir) await fs.rm(demoDir, { recursive: true, force: true });
  });

  /** Opens a page, recording console errors, uncaught exceptions and every request URL. */
  async function open(pathAndQuery: string, base = server.url): Promise<{ page: Page; errors: string[]; requests: string[] }> {
    const page = await context.newPage();
    const errors: string[] = [];
    const requests: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (err) => errors.push(`exception: ${err.message}`));
    page.on('request', (request) => requests.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`HTTP ${response.status()} ${response.url()}`);
    });
    const response = await page.goto(`${base}${pathAndQuery}`);
    assert.equal(response?.status(), 200, `${pathAndQuery} answered ${response?.status()}`);
    assert.equal(response?.headers()['content-type'], 'text/html; charset=utf-8');
    return { page, errors, requests };
  }

  function assertClean(errors: string[]): void {
    assert.deepEqual(errors, [], 'no console errors, exceptions or failed requests');
    assert.deepEqual(escaped, [], 'no request left 127.0.0.1');
  }

  /** The screenshot shows data inside `bbox` and background well outside it. */
  async function assertDrawnInside(page: Page, bbox: BBox, label: string): Promise<Raster> {
    const box = await screenBox(page, bbox);
    assert.ok(box.right - box.left > 150 && box.bottom - box.top > 150, `${label}: the data is shown large (${JSON.stringify(box)})`);
    const img = await decode(await page.screenshot());
    const drawn = share(img, shrink(box, 0.15), (r, g, b) => !isBackground(r, g, b));
    assert.ok(drawn > 0.9, `${label}: ${(drawn * 100).toFixed(1)}% of the pixels inside the data bounds are drawn`);
    const outside = ringAround(box, 0.08, 0.3).map((part) => share(img, part, (r, g, b) => !isBackground(r, g, b), CONTROL_CORNERS));
    for (const part of outside) assert.ok(part < 0.02, `${label}: ${(part * 100).toFixed(1)}% drawn outside the data bounds`);
    return img;
  }

  it('the landing page links the docs, the demo, the viewers and the grids, and every link answers', async () => {
    const { page, errors } = await open('/');
    const links = await page.$$eval('a', (anchors) => anchors.map((a) => (a as unknown as { href: string }).href));
    const paths = links.map((href) => new URL(href)).map((u) => `${u.pathname}${u.search}`);
    assert.ok(paths.includes('/api.html'));
    assert.ok(paths.includes('/tileMatrixSets'));
    assert.ok(paths.includes(`/stac/viewer?url=${q(`${server.url}/demo/item.json`)}`), 'the demo item in the viewer');
    assert.ok(
      paths.some((p) => p.startsWith('/mosaicjson/WebMercatorQuad/map?url=')),
      'the demo mosaic map',
    );
    assert.ok(
      paths.some((p) => p.startsWith('/stac/EuropeanETRS89_LAEAQuad/map?')),
      'the demo in a custom grid',
    );
    assert.ok(!paths.some((p) => p.startsWith('/stac/NZTM2000Quad/map')), 'no demo map in a grid that does not cover it');
    assert.ok(paths.includes('/collections/demo/WebMercatorQuad/map.html?assets=rgb'), 'the demo collection on a map');
    for (const id of ['WebMercatorQuad', 'NZTM2000', 'CDB1GlobalGrid']) assert.ok(paths.includes(`/tileMatrixSets/${id}`), id);
    for (const href of new Set(links)) {
      assert.ok(href.startsWith(server.url), `${href} stays on tessera`);
      const res = await fetch(href);
      assert.equal(res.status, 200, `${href} answered ${res.status}`);
    }
    await page.close();
    assertClean(errors);
  });

  it('the demo collection (stac-geoparquet) map draws its tiles', async () => {
    const { page, errors, requests } = await open('/collections/demo/WebMercatorQuad/map.html?assets=rgb');
    const state = await tilesLoaded(page);
    assert.ok(Number(state['tilesLoaded']) > 0, 'tiles were loaded');
    assert.equal(state['tileErrors'], '0');
    assert.ok(requests.some((u) => new URL(u).pathname.startsWith('/collections/demo/tiles/WebMercatorQuad/')));
    await page.close();
    assertClean(errors);
  });

  it('the STAC map in WebMercatorQuad draws the item where it is', async () => {
    const { page, errors, requests } = await open(`/stac/WebMercatorQuad/map?url=${q(item)}&assets=rgb`);
    const state = await tilesLoaded(page);
    assert.ok(Number(state['tilesLoaded']) > 0, 'tiles were loaded');
    assert.equal(state['tileErrors'], '0');
    const tiles = requests.filter((u) => new URL(u).pathname.startsWith('/stac/tiles/WebMercatorQuad/'));
    assert.ok(tiles.length > 0, 'tile requests');
    assert.ok(tiles.every((u) => new URL(u).searchParams.get('assets') === 'rgb' && new URL(u).searchParams.get('url') === item));
    assert.ok(
      requests.some((u) => u.includes('/stac/WebMercatorQuad/tilejson.json?url=')),
      'the TileJSON with the same query',
    );
    assert.ok(!requests.some((u) => u.includes('/static/vendor/proj4')), 'Web Mercator needs no proj4');
    await assertDrawnInside(page, itemBbox, 'WebMercatorQuad');
    await page.close();
    assertClean(errors);
  });

  it("the map page at TiTiler 2.x's URL (/{tms}/map.html) draws the item through 2.x tile URLs (tilesize=256)", async () => {
    const { page, errors, requests } = await open(`/stac/WebMercatorQuad/map.html?url=${q(item)}&assets=rgb`);
    const state = await tilesLoaded(page);
    assert.ok(Number(state['tilesLoaded']) > 0, 'tiles were loaded');
    assert.equal(state['tileErrors'], '0');
    const tiles = requests.filter((u) => new URL(u).pathname.startsWith('/stac/tiles/WebMercatorQuad/'));
    assert.ok(tiles.length > 0, 'tile requests');
    assert.ok(
      tiles.every((u) => new URL(u).searchParams.get('tilesize') === '256' && !new URL(u).pathname.includes('@')),
      'tiles asked at 256 px, without a scale',
    );
    await assertDrawnInside(page, itemBbox, 'WebMercatorQuad map.html');
    await page.close();
    assertClean(errors);
  });

  it('the STAC map in EuropeanETRS89_LAEAQuad draws the grid’s own tiles over the item (custom CRS)', async () => {
    const tmsId = 'EuropeanETRS89_LAEAQuad';
    const query = `url=${q(item)}&assets=dem&rescale=${Math.floor(demStats.minimum)},${Math.ceil(demStats.maximum)}&colormap_name=terrain`;
    const { page, errors, requests } = await open(`/stac/${tmsId}/map?${query}`);
    await tilesLoaded(page, [`/stac/tiles/${tmsId}/`]);
    assert.ok(requests.some((u) => u.includes('/static/vendor/proj4/proj4.js')) && requests.some((u) => u.includes('/static/vendor/proj4leaflet/')));
    const tiles = requests
      .map((u) => new URL(u))
      .filter((u) => u.pathname.startsWith(`/stac/tiles/${tmsId}/`))
      .map(
        (u) =>
          u.pathname
            .split('/')
            .slice(4, 7)
            .map((s) => Number.parseInt(s, 10)) as [number, number, number],
      );
    assert.ok(tiles.length > 0, 'tile requests in the custom grid');
    // The tile holding the item's centre, by the grid's own math (GDAL puts the centre in EPSG:3035),
    // must be among those the page asked for: the Leaflet CRS and the TMS agree on tile indexes.
    const z = tiles[0]![0];
    const [cx, cy] = transformPoint(srsFrom(WGS84), srsFrom('EPSG:3035'), (itemBbox[0] + itemBbox[2]) / 2, (itemBbox[1] + itemBbox[3]) / 2);
    const centre = getTms(tmsId)!.tileAt(cx, cy, z);
    assert.ok(
      tiles.some(([tz, tx, ty]) => tz === centre.z && tx === centre.x && ty === centre.y),
      `tile ${centre.z}/${centre.x}/${centre.y} among ${JSON.stringify(tiles)}`,
    );
    await assertDrawnInside(page, itemBbox, tmsId);
    await page.close();
    assertClean(errors);
  });

  it('the mosaic map draws the MosaicJSON', async () => {
    const mosaic = `${files.url}/mosaic.json`;
    const { page, errors, requests } = await open(`/mosaicjson/WebMercatorQuad/map?url=${q(mosaic)}`);
    const state = await tilesLoaded(page, ['/mosaicjson/tiles/WebMercatorQuad/']);
    assert.equal(state['tileErrors'], '0');
    assert.ok(requests.some((u) => u.includes('/mosaicjson/WebMercatorQuad/tilejson.json?url=')));
    await assertDrawnInside(page, mosaicBounds, 'mosaic');
    await page.close();
    assertClean(errors);
  });

  it('the STAC viewer shows the item, its histogram, and follows its controls', async () => {
    const { page, errors, requests } = await open(`/stac/viewer?url=${q(item)}`);
    // The first asset (dem, float32) as one band, rescaled from its statistics.
    let state = await tilesLoaded(page, ['assets=dem']);
    const first = new URL(state['tileUrl']!.replace('{z}/{x}/{y}', '0/0/0'));
    assert.equal(first.searchParams.get('asset_bidx'), 'dem|1');
    const [lo, hi] = (first.searchParams.get('rescale') ?? '').split(',').map(Number);
    assert.ok(lo! >= demStats.minimum - 1 && hi! <= demStats.maximum + 1 && hi! - lo! > 1000, `rescale ${lo},${hi} within the DEM's range`);
    assert.equal(first.searchParams.get('colormap_name'), null);
    assert.ok(
      requests.some((u) => u.includes('/stac/statistics?') && u.includes('assets=dem')),
      'statistics of the chosen asset',
    );
    assert.equal(await page.locator('#assets-body tr').count(), 2, 'both assets listed');
    assert.equal(await page.locator('#histogram rect').count(), 40, 'a 40-bin histogram');

    const isGrey = (r: number, g: number, b: number): boolean => !isBackground(r, g, b) && Math.abs(r - g) <= 2 && Math.abs(g - b) <= 2;
    const isColour = (r: number, g: number, b: number): boolean => Math.max(r, g, b) - Math.min(r, g, b) > 20;
    const inner = shrink(await screenBox(page, itemBbox), 0.15);
    const grey = await decode(await page.screenshot());
    assert.ok(share(grey, inner, isGrey) > 0.9, 'one float band without a colormap is grey');

    // A colormap changes the tile URL (and the requests) and the picture.
    const before = requests.length;
    await page.selectOption('#colormap', 'viridis');
    state = await tilesLoaded(page, ['colormap_name=viridis']);
    assert.equal(state['tileErrors'], '0');
    assert.ok(requests.slice(before).some((u) => u.includes('/stac/tiles/WebMercatorQuad/') && u.includes('colormap_name=viridis')));
    const coloured = await decode(await page.screenshot());
    assert.ok(share(coloured, inner, isColour) > 0.9, 'viridis colours the elevation');

    // RGB: the 3-band byte asset, no rescale, no colormap (disabled for 3 bands).
    await page.check('input[name="mode"][value="rgb"]');
    state = await tilesLoaded(page, ['assets=rgb']);
    const rgb = new URL(state['tileUrl']!.replace('{z}/{x}/{y}', '0/0/0'));
    assert.equal(rgb.searchParams.get('asset_bidx'), 'rgb|1,2,3');
    assert.equal(rgb.searchParams.get('rescale'), null, 'bytes are not rescaled');
    assert.equal(rgb.searchParams.get('colormap_name'), null);
    assert.equal(await page.locator('#colormap').isDisabled(), true);
    assert.equal(await page.locator('#histogram polyline').count(), 3, 'one histogram line per band');

    // An expression and an algorithm reach the tile URL too.
    await page.check('input[name="mode"][value="expression"]');
    await page.fill('#expression', 'dem_b1 / 10');
    await page.locator('#expression').dispatchEvent('change');
    state = await tilesLoaded(page, ['expression=dem_b1+%2F+10']);
    await page.selectOption('#algorithm', 'hillshade');
    state = await tilesLoaded(page, ['algorithm=hillshade', 'buffer=3']);
    assert.equal(state['tileErrors'], '0');
    await page.close();
    assertClean(errors);
  });

  it('the COG viewer shows one raster by its bands, with bidx and b1 expressions', async () => {
    const dem = `${files.url}/dem.tif`;
    const { page, errors, requests } = await open(`/cog/viewer?url=${q(dem)}`);
    let state = await tilesLoaded(page, ['/cog/tiles/WebMercatorQuad/', 'bidx=1']);
    const first = new URL(state['tileUrl']!.replace('{z}/{x}/{y}', '0/0/0'));
    assert.equal(first.searchParams.get('assets'), null, 'a COG has no assets');
    const [lo, hi] = (first.searchParams.get('rescale') ?? '').split(',').map(Number);
    assert.ok(lo! >= demStats.minimum - 1 && hi! <= demStats.maximum + 1 && hi! - lo! > 1000, `rescale ${lo},${hi} within the DEM's range`);
    assert.ok(
      requests.some((u) => u.includes('/cog/info?url=')),
      'the raster described by /cog/info',
    );
    assert.ok(
      requests.some((u) => u.includes('/cog/statistics?') && u.includes('bidx=1')),
      'statistics of the chosen band',
    );
    assert.equal(await page.locator('#assets-body tr').count(), 1, 'one raster listed');
    assert.equal(await page.locator('#band-asset').isVisible(), false, 'no asset to choose');
    const inner = shrink(await screenBox(page, itemBbox), 0.15);
    const grey = await decode(await page.screenshot());
    assert.ok(share(grey, inner, (r, g, b) => !isBackground(r, g, b) && Math.abs(r - g) <= 2 && Math.abs(g - b) <= 2) > 0.9, 'the DEM drawn in grey');

    await page.check('input[name="mode"][value="expression"]');
    assert.equal(await page.locator('#expression').inputValue(), 'b1');
    await page.fill('#expression', 'b1 / 10');
    await page.locator('#expression').dispatchEvent('change');
    state = await tilesLoaded(page, ['expression=b1+%2F+10']);
    assert.equal(state['tileErrors'], '0');
    await page.close();
    assertClean(errors);

    // A three-band COG in RGB: three bidx, bytes not rescaled.
    const rgbPage = await open(`/cog/viewer?url=${q(`${files.url}/rgb.tif`)}`);
    await rgbPage.page.check('input[name="mode"][value="rgb"]');
    state = await tilesLoaded(rgbPage.page, ['bidx=1&bidx=2&bidx=3']);
    const rgb = new URL(state['tileUrl']!.replace('{z}/{x}/{y}', '0/0/0'));
    assert.deepEqual(rgb.searchParams.getAll('bidx'), ['1', '2', '3']);
    assert.equal(rgb.searchParams.get('rescale'), null, 'bytes are not rescaled');
    assert.equal(state['tileErrors'], '0');
    await rgbPage.page.close();
    assertClean(rgbPage.errors);
  });

  it("behind TiTiler's global access token, the viewer and the map page pass the token on", async () => {
    const guarded = await startTessera({ basemapUrl: '', demoDir, accessToken: 'tok-123' }, { listen: true });
    try {
      const viewer = await open(`/stac/viewer?url=${q(item)}&access_token=tok-123`, guarded.url);
      const state = await tilesLoaded(viewer.page, ['access_token=tok-123']);
      assert.equal(state['tileErrors'], '0');
      const own = viewer.requests.filter((u) => u.startsWith(guarded.url) && !u.includes('/static/'));
      assert.ok(own.length > 5 && own.every((u) => u.includes('access_token=tok-123')), 'every request of the page carries the token');
      await viewer.page.close();
      assertClean(viewer.errors);
      const map = await open(`/stac/WebMercatorQuad/map?url=${q(item)}&assets=rgb&access_token=tok-123`, guarded.url);
      await tilesLoaded(map.page, ['access_token=tok-123']);
      await map.page.close();
      assertClean(map.errors);
    } finally {
      await guarded.close();
    }
  });

  it('the STAC viewer without an item asks for one', async () => {
    const { page, errors } = await open('/stac/viewer');
    await page.waitForFunction(
      () =>
        (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } | null } }).document.getElementById('status')
          ?.textContent !== '',
      null,
      { timeout: WAIT_MS },
    );
    assert.match((await page.locator('#status').textContent()) ?? '', /URL of a STAC item/);
    assert.equal((await page.locator('#colormap option').count()) > 200, true, 'colormaps listed');
    assert.ok((await page.locator('#algorithm option').allInnerTexts()).includes('Hillshade'));
    await page.close();
    assertClean(errors);
  });
});

describe('page routes over HTTP', { timeout: 60_000 }, () => {
  let server: RunningTessera;
  let withBasemap: RunningTessera;

  before(async () => {
    server = await startTessera({ basemapUrl: '' }, { listen: true });
    withBasemap = await startTessera({ basemapUrl: 'https://{s}.tiles.example.org/{z}/{x}/{y}.png', basemapAttribution: '© Example' }, { listen: true });
  });

  after(async () => {
    await server?.close();
    await withBasemap?.close();
  });

  function config(html: string): Record<string, unknown> {
    const m = /<script type="application\/json" id="tessera-config">(.*?)<\/script>/s.exec(html);
    assert.ok(m, 'the page embeds its configuration');
    return JSON.parse(m[1]!) as Record<string, unknown>;
  }

  it('a map page forwards its whole query to the TileJSON, TiTiler-encoded', async () => {
    const res = await server.get('/stac/UTM31WGS84Quad/map?url=http%3A%2F%2Fexample.org%2Fitem.json&assets=B01&rescale=0,1000&tile_scale=2');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /img-src 'self' data: blob:(;|$)/, 'no other image host without a basemap');
    const cfg = config(await res.text()) as {
      tilejsonUrl: string;
      grid: { id: string; resolutions: number[]; minzoom: number; origin: number[]; proj4: string };
      basemap: unknown;
    };
    assert.equal(
      cfg.tilejsonUrl,
      `${server.url}/stac/UTM31WGS84Quad/tilejson.json?url=http%3A%2F%2Fexample.org%2Fitem.json&assets=B01&rescale=0%2C1000&tile_scale=2`,
    );
    assert.equal(cfg.basemap, null);
    // UTM31WGS84Quad starts at zoom 1: index 1 is its first matrix (78140.357… m), index 0 twice that.
    assert.equal(cfg.grid.minzoom, 1);
    assert.equal(cfg.grid.resolutions[1], 78140.3572602559);
    assert.equal(cfg.grid.resolutions[0], 2 * 78140.3572602559);
    assert.deepEqual(cfg.grid.origin, [-9501965.72931276, 20003931.4586255]);
    assert.match(cfg.grid.proj4, /\+proj=utm \+zone=31 \+datum=WGS84/);
  });

  it('the deprecated /stac/map and /mosaicjson/map are WebMercatorQuad maps', async () => {
    for (const [route, tilejson] of [
      ['/stac/map?url=u&assets=a', '/stac/WebMercatorQuad/tilejson.json?url=u&assets=a'],
      ['/mosaicjson/map?url=u', '/mosaicjson/WebMercatorQuad/tilejson.json?url=u'],
    ] as const) {
      const res = await server.get(route);
      assert.equal(res.status, 200, route);
      assert.equal((config(await res.text()) as { tilejsonUrl: string }).tilejsonUrl, `${server.url}${tilejson}`);
    }
  });

  it('map pages check their query as the TileJSON does', async () => {
    const noLayer = await server.get('/stac/WebMercatorQuad/map?url=u');
    assert.equal(noLayer.status, 400);
    assert.deepEqual(await noLayer.json(), { detail: 'assets must be defined either via expression or assets options.' });
    assert.equal((await server.get('/stac/NoSuchGrid/map?url=u&assets=a')).status, 422);
    assert.equal((await server.get('/mosaicjson/WebMercatorQuad/map')).status, 422, 'url is required');
    assert.equal((await server.get('/mosaicjson/WebMercatorQuad/map?url=u&pixel_selection=nope')).status, 422);
    assert.equal((await server.get('/stac/WebMercatorQuad/map?url=u&assets=a&rescale=abc')).status, 400);
  });

  it('text from the query cannot break out of the page', async () => {
    const evil = '</script><script>alert(1)</script><!--';
    const res = await server.get(`/stac/WebMercatorQuad/map?url=${q(evil)}&assets=${q('"><img src=x>')}`);
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.ok(!html.includes('<script>alert(1)'), 'no injected script element');
    assert.ok(!html.includes('<img src=x>'), 'no injected markup');
    const cfg = config(html) as { tilejsonUrl: string };
    assert.equal(new URL(cfg.tilejsonUrl).searchParams.get('url'), evil, 'the value survives intact as data');
  });

  it('a configured basemap is named in the page and allowed by its Content-Security-Policy', async () => {
    const res = await withBasemap.get('/stac/WebMercatorQuad/map?url=u&assets=a');
    assert.match(res.headers.get('content-security-policy') ?? '', /img-src 'self' data: blob: https:\/\/\*\.tiles\.example\.org;/);
    assert.deepEqual(config(await res.text())['basemap'], { url: 'https://{s}.tiles.example.org/{z}/{x}/{y}.png', attribution: '© Example' });
  });

  it('serves the page libraries from node_modules, and nothing else from there', async () => {
    for (const [file, type] of [
      ['/static/vendor/leaflet/leaflet.js', 'javascript'],
      ['/static/vendor/leaflet/leaflet.css', 'text/css'],
      ['/static/vendor/leaflet/images/layers.png', 'image/png'],
      ['/static/vendor/proj4/proj4.js', 'javascript'],
      ['/static/vendor/proj4leaflet/proj4leaflet.js', 'javascript'],
      ['/static/tessera/viewer.js', 'javascript'],
      ['/favicon.ico', 'image/svg+xml'],
    ] as const) {
      const res = await server.get(file);
      assert.equal(res.status, 200, file);
      assert.ok((res.headers.get('content-type') ?? '').includes(type), `${file}: ${res.headers.get('content-type')}`);
    }
    for (const file of ['/static/vendor/proj4/index.d.ts', '/static/vendor/leaflet/../package.json', '/static/tessera/%2e%2e/%2e%2e/package.json']) {
      assert.equal((await server.get(file)).status, 404, file);
    }
  });

  it('the landing page says how to get demo data when there is none', async () => {
    const res = await server.get('/');
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /make run/);
    assert.ok(!html.includes('/demo/item.json'));
    assert.ok(html.includes('href="api.html"') && html.includes('<base href="/">'), 'links relative to the root');
  });
});
