/**
 * Parity with titiler-pgstac 3.2.0 (pinned, its own venv: tools/stac-api/setup.sh) over the same
 * pgSTAC database: the generated catalogue of test/helpers/pgstac.ts (1,080 items, two collections,
 * COGs with overviews on the test's file server), titiler-pgstac in front of it (serve.sh
 * STAC_APP=titiler-pgstac) and tessera (`bin/tessera serve` with TESSERA_PGSTAC_DSN) beside it.
 *
 * For each search: the same id from `POST /searches/register`; the same `info` (the search and its
 * metadata, field for field, ints and floats alike; `lastused`/`usecount` change with every use);
 * the same TileJSON; the same items, in the same order, for tiles from zoom 4 to 12, points and
 * bboxes; the same values at points; and the same pixels for tiles from zoom 6 to 10 (decoded: at
 * least 99.5% of values within ±1, masks equal). The numbers go to .parity/report-pgstac.md.
 * Where tessera answers otherwise on purpose (a 400 where titiler-pgstac answers 422 or 500) the
 * case says so.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, promises as fs, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFileServer, type FileServer } from '../helpers/fileserver.js';
import { RENDERED_ITEM, ensureCatalogueData, startCatalogue, type Catalogue, type CatalogueItem } from '../helpers/pgstac.js';
import { ROOT, TESSERA_COMMAND, startServer, type Service } from './harness.js';
import { compareJson, formatDifferences, parseJson } from './compare.js';
import { PASS, decodePng } from './pixels.js';

/**
 * Grids tessera's registry and titiler-pgstac 3.2.0's morecantile name differently (its NZTM2000Quad,
 * tessera's NZTM2000, as TiTiler 0.18.10 and 2.4.0 name it): their layers and matrix sets are left out.
 */
const GRIDS_NAMED_APART = ['NZTM2000', 'NZTM2000Quad'];

/** A WMTS document without the service's own names (title, provider), the whitespace between elements, nor GRIDS_NAMED_APART. */
function wmtsNormalised(xml: string): string {
  let out = xml.replace(/<ows:ServiceIdentification>[\s\S]*?<\/ows:ServiceProvider>/, '').replace(/>\s+</g, '><');
  for (const grid of GRIDS_NAMED_APART) {
    out = out
      .replace(new RegExp(`<Layer><ows:Title>[^<]*_${grid}_[^<]*</ows:Title>[\\s\\S]*?</Layer>`, 'g'), '')
      .replace(new RegExp(`<TileMatrixSet><ows:Identifier>${grid}</ows:Identifier>[\\s\\S]*?</TileMatrixSet>`, 'g'), '');
  }
  // The deliberate differences of TiTiler 2.x's WMTS (test/parity/titiler2-deliberate.ts): derived scale denominators, CRS84's name.
  for (const grid of DERIVED_SCALES) {
    out = out.replace(new RegExp(`<TileMatrixSet><ows:Identifier>${grid}</ows:Identifier>[\\s\\S]*?</TileMatrixSet>`, 'g'), (set) =>
      set.replace(/<ScaleDenominator>[^<]*<\/ScaleDenominator>/g, '<ScaleDenominator>(derived)</ScaleDenominator>'),
    );
  }
  // Other scale denominators to 9 significant digits: morecantile 7's arithmetic differs from tessera's grids' in the last ones.
  out = out.replace(/<ScaleDenominator>([^<(]+)<\/ScaleDenominator>/g, (_m, v: string) => `<ScaleDenominator>${Number(v).toPrecision(9)}</ScaleDenominator>`);
  return out
    .replace('<ows:SupportedCRS>EPSG:None</ows:SupportedCRS>', '<ows:SupportedCRS>http://www.opengis.net/def/crs/OGC/1.3/CRS84</ows:SupportedCRS>')
    .trim();
}

/** Grids whose WMTS scale denominators tessera derives from the cell size (titiler2-deliberate.ts, docs/differences.md). */
const DERIVED_SCALES = ['CanadianNAD83_LCC', 'CDB1GlobalGrid', 'GNOSISGlobalGrid', 'UPSAntarcticWGS84Quad', 'UPSArcticWGS84Quad'];

/** Where two texts first differ, with some of each around it (empty when equal). */
function firstDifference(ours: string, theirs: string): string {
  if (ours === theirs) return '';
  let i = 0;
  while (i < ours.length && i < theirs.length && ours[i] === theirs[i]) i++;
  return `at ${i}: tessera …${ours.slice(Math.max(0, i - 80), i + 160)}… titiler-pgstac …${theirs.slice(Math.max(0, i - 80), i + 160)}…`;
}

/** The GDAL settings the parity harness gives both servers (harness.ts), for titiler-pgstac too. */
const GDAL_ENV: Record<string, string> = {
  GDAL_DISABLE_READDIR_ON_OPEN: 'EMPTY_DIR',
  GDAL_HTTP_MERGE_CONSECUTIVE_RANGES: 'YES',
  GDAL_INGESTED_BYTES_AT_OPEN: '32768',
  VSI_CACHE: 'TRUE',
};

/** A tile query whose pixels are compared: the same for both, or tessera's 0.18 form beside titiler-pgstac's 2.x one. */
type Render = string | { tessera: string; titiler: string };

interface SearchCase {
  name: string;
  body: Record<string, unknown>;
  renders: Render[];
}

const SEARCHES: SearchCase[] = [
  {
    name: 'alpha, cloud < 50, newest first',
    body: {
      collections: ['alpha'],
      filter: { op: '<', args: [{ property: 'eo:cloud_cover' }, 50] },
      sortby: [{ field: 'datetime', direction: 'desc' }],
      metadata: { name: 'alpha clear' },
    },
    renders: ['assets=visual', 'assets=data&rescale=0,3000&colormap_name=viridis', 'assets=visual&pixel_selection=highest'],
  },
  {
    name: 'both collections in a bbox, pgSTAC’s default order',
    body: { collections: ['alpha', 'beta'], bbox: [5, 43, 11, 47] },
    renders: ['assets=visual', 'assets=visual&pixel_selection=lowest'],
  },
  {
    name: 'beta, a date range and the Query extension, oldest first',
    body: {
      collections: ['beta'],
      datetime: '2023-02-01T00:00:00Z/2023-09-30T00:00:00Z',
      query: { 'eo:cloud_cover': { lt: 60 } },
      sortby: [{ field: 'datetime', direction: 'asc' }],
    },
    // titiler-pgstac 3 reads per-asset bands as `assets=visual|bidx=…` (TiTiler 2.x) and ignores
    // 0.18's `asset_bidx`; tessera takes 0.18's (2.x's syntax is issue 37's): the same bands asked both ways.
    renders: [{ tessera: 'assets=visual&asset_bidx=visual|3,2,1', titiler: 'assets=visual|bidx=3,2,1' }],
  },
  {
    name: 'a polygon over both, with metadata (bounds, zooms, renders, extras)',
    body: {
      intersects: {
        type: 'Polygon',
        coordinates: [
          [
            [6, 44],
            [10.5, 43.5],
            [11, 47.25],
            [7, 46.5],
            [6, 44],
          ],
        ],
      },
      metadata: {
        name: 'polygon',
        bounds: [6, 43.5, 11, 47.25],
        minzoom: 5,
        maxzoom: 12,
        defaults: { rgb: { assets: ['visual'], asset_bidx: ['visual|1,2,3'], rescale: [[0, 255]] } },
        owner: 'tests',
        weight: 0.5,
      },
    },
    renders: [],
  },
  {
    name: 'a list of ids across collections',
    body: { ids: ['alpha-20-3', 'alpha-21-7', 'beta-10-2', 'beta-11-5', 'alpha-29-1'], collections: ['alpha', 'beta'] },
    renders: ['assets=visual'],
  },
];

/** Points over the catalogue (lon, lat): cell middles, overlaps, edges, outside. */
const POINTS: Array<[number, number]> = [
  [6.6, 44.7],
  [7.1, 45.1],
  [9.9, 46.05],
  [5.2, 43.9],
  [11.6, 47.3],
  [12.9, 48.9],
  [4.1, 42.1],
  [20, 30],
];

/** Web Mercator tiles at `z` under each of POINTS (deduplicated). */
function tilesAt(z: number): Array<[number, number, number]> {
  const seen = new Map<string, [number, number, number]>();
  for (const [lon, lat] of POINTS.slice(0, 7)) {
    const n = 2 ** z;
    const x = Math.floor(((lon + 180) / 360) * n);
    const r = (lat * Math.PI) / 180;
    const y = Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n);
    seen.set(`${z}/${x}/${y}`, [z, x, y]);
  }
  return [...seen.values()];
}

const BBOXES: Array<[number, number, number, number]> = [
  [6.2, 44.2, 7.4, 45.3],
  [5, 43, 11, 47],
  [12.5, 48.5, 14, 50],
];

/**
 * Pixels at the edges of the beta COGs (EPSG:3857, read without reprojection in Web Mercator tiles):
 * where an edge crosses a tile pixel off its centre, TiTiler (0.18.10 and 2.4.0 alike, checked on
 * /cog) reads the pixel as data and tessera as nodata — a difference of tessera's windowed reads,
 * not of the catalogue, seen on /cog too, left to the reading work (docs/catalogue.md). Those
 * pixels, a band three pixels wide along each edge of the beta items a tile used, are counted apart.
 */
function edgePixels(items: readonly CatalogueItem[], used: ReadonlySet<string>, z: number, x: number, y: number): Uint8Array {
  const R = 6378137;
  const size = 256;
  const res = (2 * Math.PI * R) / size / 2 ** z;
  const left = -Math.PI * R + x * size * res;
  const top = Math.PI * R - y * size * res;
  const mx = (lon: number): number => (R * lon * Math.PI) / 180;
  const my = (lat: number): number => R * Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));
  const out = new Uint8Array(size * size);
  const mark = (c: number, r: number): void => {
    if (c >= 0 && c < size && r >= 0 && r < size) out[r * size + c] = 1;
  };
  for (const item of items) {
    if (item.collection !== 'beta' || !used.has(`beta/${item.id}`)) continue;
    const [w, s, e, n] = item.bbox;
    const [c0, c1] = [(mx(w) - left) / res, (mx(e) - left) / res];
    const [r0, r1] = [(top - my(n)) / res, (top - my(s)) / res];
    if (c1 < -1 || c0 > size + 1 || r1 < -1 || r0 > size + 1) continue;
    for (let r = Math.floor(r0) - 1; r <= Math.ceil(r1); r++) for (const c of [Math.floor(c0), Math.floor(c1)]) for (let d = -1; d <= 1; d++) mark(c + d, r);
    for (let c = Math.floor(c0) - 1; c <= Math.ceil(c1); c++) for (const r of [Math.floor(r0), Math.floor(r1)]) for (let d = -1; d <= 1; d++) mark(c, r + d);
  }
  return out;
}

/** compareArrays over the pixels `skip` leaves (band-sequential values, the last band the mask). */
function compareOutside(a: Float64Array, b: Float64Array, channels: number, skip: Uint8Array): { within: number; maskEqual: number; skipped: number } {
  const n = skip.length;
  let [values, within, masks, maskEqual, skipped] = [0, 0, 0, 0, 0];
  for (let p = 0; p < n; p++) {
    if (skip[p]) {
      skipped++;
      continue;
    }
    for (let c = 0; c < channels - 1; c++) {
      values++;
      if (Math.abs(a[c * n + p]! - b[c * n + p]!) <= 1) within++;
    }
    masks++;
    if (a[(channels - 1) * n + p] === b[(channels - 1) * n + p]) maskEqual++;
  }
  return { within: values ? within / values : 1, maskEqual: masks ? maskEqual / masks : 1, skipped };
}

/**
 * Tiles that read an EPSG:3857 COG at one of its overviews (zoom 8 and below for beta's ~270 m
 * pixels): at the rasters' edges they are the known difference of docs/differences.md (tiles of a
 * raster already in the grid's CRS, several bands, downsampled: GDAL 3.10's VRT reads the first
 * band at full resolution and the others from an overview; 76% measured at z11 on a 3-band raster
 * by test/parity/sampling.test.ts), on /cog too, so they are held to equal masks and that measured
 * floor, and counted apart (docs/catalogue.md).
 */
const KNOWN_READ_BAR = 0.75;
const knownReadDifference = (z: number, assetsHeader: string | null): boolean => z <= 8 && (assetsHeader ?? '').split(',').some((a) => a.startsWith('beta/'));

interface Row {
  search: string;
  what: string;
  result: string;
}

describe('parity with titiler-pgstac 3.2.0 over the same pgSTAC database', () => {
  let files: FileServer;
  let tmp: string;
  let catalogue: Catalogue;
  let tessera: Service;
  let titiler: string;
  const ids = new Map<string, string>();
  const rows: Row[] = [];
  const pixelTotals = { tiles: 0, values: 0, within: 0, maskValues: 0, maskEqual: 0, worst: 1, edgePixels: 0, pixels: 0 };
  const knownTotals = { tiles: 0, values: 0, within: 0, worst: 1 };

  const both = async (pathAndQuery: string, titilerPath = pathAndQuery): Promise<{ titiler: Response; tessera: Response }> => {
    const init = { headers: { 'accept-encoding': 'identity' } };
    const [a, b] = await Promise.all([fetch(`${titiler}${titilerPath}`, init), fetch(`${tessera.url}${pathAndQuery}`, init)]);
    return { titiler: a, tessera: b };
  };
  const normalise = (s: string): string => s.replaceAll(titiler, '{BASE}').replaceAll(tessera.url, '{BASE}');

  before(async () => {
    const data = await ensureCatalogueData((line) => console.log(line));
    files = await startFileServer(data, { keepLog: false });
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-pgstac-parity-'));
    catalogue = await startCatalogue(files.url, tmp, 'titiler-pgstac', GDAL_ENV);
    titiler = catalogue.apiUrl!;
    tessera = await startServer(TESSERA_COMMAND, { ...GDAL_ENV, TESSERA_PGSTAC_DSN: catalogue.dsn, TESSERA_TILE_CACHE_BYTES: '0' });
  });

  after(async () => {
    const report = [
      '# tessera vs titiler-pgstac 3.2.0: parity report',
      '',
      `Generated by dist/test/parity/pgstac.test.js on ${new Date().toISOString()}, over the generated catalogue of test/helpers/pgstac.ts (1,080 items).`,
      '',
      `Pixels: ${pixelTotals.tiles} tiles, ${((pixelTotals.within / Math.max(1, pixelTotals.values)) * 100).toFixed(3)}% of values within ±1 ` +
        `(worst tile ${(pixelTotals.worst * 100).toFixed(3)}%), masks ${((pixelTotals.maskEqual / Math.max(1, pixelTotals.maskValues)) * 100).toFixed(3)}% equal, ` +
        `leaving out ${pixelTotals.edgePixels} of ${pixelTotals.pixels} pixels (${((pixelTotals.edgePixels / Math.max(1, pixelTotals.pixels)) * 100).toFixed(2)}%) along the edges of the EPSG:3857 COGs (see the test's edgePixels).`,
      '',
      `Of those, ${knownTotals.tiles} tiles read an EPSG:3857 COG at an overview (the known reading difference, see the test's knownReadDifference): ` +
        `${((knownTotals.within / Math.max(1, knownTotals.values)) * 100).toFixed(3)}% within ±1, worst ${(knownTotals.worst * 100).toFixed(3)}%; ` +
        `the other ${pixelTotals.tiles - knownTotals.tiles}: ${(((pixelTotals.within - knownTotals.within) / Math.max(1, pixelTotals.values - knownTotals.values)) * 100).toFixed(3)}% within ±1.`,
      '',
      '| search | what | result |',
      '| --- | --- | --- |',
      ...rows.map((r) => `| ${r.search} | ${r.what.replace(/\|/g, '\\|')} | ${r.result.replace(/\|/g, '\\|').replace(/\n/g, '<br>')} |`),
      '',
    ];
    await fs.mkdir(path.join(ROOT, '.parity'), { recursive: true });
    await fs.writeFile(path.join(ROOT, '.parity/report-pgstac.md'), report.join('\n'));
    await tessera?.stop();
    await catalogue?.stop();
    await files?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('registers every search under the same id (pgSTAC’s hash of the same values)', async () => {
    for (const s of SEARCHES) {
      const init = (body: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = JSON.stringify(s.body);
      const [a, b] = await Promise.all([fetch(`${titiler}/searches/register`, init(text)), fetch(`${tessera.url}/searches/register`, init(text))]);
      assert.equal(a.status, 200, s.name);
      assert.equal(b.status, 200, s.name);
      const [ja, jb] = [
        (await a.json()) as { id: string; links: Array<Record<string, unknown>> },
        (await b.json()) as { id: string; links: Array<Record<string, unknown>> },
      ];
      assert.equal(jb.id, ja.id, s.name);
      ids.set(s.name, ja.id);
      // tessera's links are titiler-pgstac's for what it serves (the map page and WMTS come later).
      for (const link of jb.links) {
        const theirs = ja.links.find((l) => l['rel'] === link['rel'] && l['title'] === link['title']);
        assert.ok(theirs, `${s.name}: link ${JSON.stringify(link)}`);
        assert.equal(normalise(String(link['href'])), normalise(String(theirs['href'])));
      }
      rows.push({ search: s.name, what: 'POST /searches/register', result: `equal id ${ja.id}; links ${jb.links.length} of ${ja.links.length}` });
    }
    // The same values written otherwise: the same id on both.
    const first = SEARCHES[0]!;
    const rewritten = JSON.stringify({ ...first.body, filter: { op: '<', args: [{ property: 'eo:cloud_cover' }, 50] }, collections: ['alpha'], ids: null });
    const res = await fetch(`${tessera.url}/searches/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rewritten });
    assert.equal(((await res.json()) as { id: string }).id, ids.get(first.name));
  });

  it('answers the same info and TileJSON', async () => {
    for (const s of SEARCHES) {
      const id = ids.get(s.name)!;
      const info = await both(`/searches/${id}/info`);
      const [a, b] = [parseJson(await info.titiler.text()), parseJson(await info.tessera.text())];
      const diffs = compareJson(a, b, { ignore: ['$.search.lastused', '$.search.usecount'], normalise });
      assert.deepEqual(diffs, [], `${s.name} info: ${formatDifferences(diffs)}`);
      rows.push({ search: s.name, what: 'info', result: 'equal, links too (but lastused, usecount)' });
      // The every-grid WMTS document (a layer per render and grid, then the query's), and the map page.
      for (const q of ['assets=visual', 'assets=visual&tile_format=jpeg&use_epsg=true&zooms=WebMercatorQuad::6,10']) {
        const wmts = await both(`/searches/${id}/WMTSCapabilities.xml?${q}`);
        assert.equal(wmts.tessera.status, wmts.titiler.status, `${s.name} WMTS ${q}: ${await wmts.tessera.clone().text()}`);
        const d = firstDifference(wmtsNormalised(normalise(await wmts.tessera.text())), wmtsNormalised(normalise(await wmts.titiler.text())));
        assert.equal(d, '', `${s.name} WMTS ${q}`);
      }
      const map = await both(`/searches/${id}/WebMercatorQuad/map.html?assets=visual`);
      assert.equal(map.tessera.status, map.titiler.status);
      assert.match(await map.tessera.text(), new RegExp(`/searches/${id}/WebMercatorQuad/tilejson.json\\?assets=visual\\\\u0026tilesize=256`));
      rows.push({
        search: s.name,
        what: 'WMTSCapabilities.xml (2 queries), WebMercatorQuad/map.html',
        result: 'WMTS equal (but the service’s own names); map page: its TileJSON',
      });
      for (const q of ['assets=visual', 'assets=visual&tile_format=png&tilesize=256&minzoom=7', 'assets=visual&pixel_selection=highest&maxzoom=11']) {
        const tj = await both(`/searches/${id}/WebMercatorQuad/tilejson.json?${q}`);
        assert.equal(tj.tessera.status, tj.titiler.status);
        const d = compareJson(parseJson(await tj.titiler.text()), parseJson(await tj.tessera.text()), { normalise });
        assert.deepEqual(d, [], `${s.name} tilejson ${q}: ${formatDifferences(d)}`);
      }
      rows.push({ search: s.name, what: 'WebMercatorQuad/tilejson.json (3 queries)', result: 'equal' });
    }
  });

  it('finds the same items in the same order for tiles, points and bboxes', async () => {
    for (const s of SEARCHES) {
      const id = ids.get(s.name)!;
      const urls = [
        ...[4, 5, 6, 7, 8, 9, 10, 12].flatMap((z) => tilesAt(z).map(([tz, x, y]) => `/searches/${id}/tiles/WebMercatorQuad/${tz}/${x}/${y}/assets`)),
        `/searches/${id}/tiles/WebMercatorQuad/8/132/93/assets?exitwhenfull=false&skipcovered=false&items_limit=7`,
        `/searches/${id}/tiles/WorldCRS84Quad/7/150/30/assets`,
        ...POINTS.map(([lon, lat]) => `/searches/${id}/point/${lon},${lat}/assets`),
        ...BBOXES.map((b) => `/searches/${id}/bbox/${b.join(',')}/assets`),
      ];
      let items = 0;
      for (const url of urls) {
        const r = await both(url);
        assert.equal(r.tessera.status, r.titiler.status, url);
        const [a, b] = [await r.titiler.text(), await r.tessera.text()];
        const d = compareJson(parseJson(a), parseJson(b), { normalise });
        assert.deepEqual(d, [], `${url}: ${formatDifferences(d)}`);
        items += (JSON.parse(a) as unknown[]).length;
      }
      rows.push({ search: s.name, what: `asset lookups (${urls.length} tiles, points, bboxes)`, result: `equal: ${items} items in all, in the same order` });
    }
  });

  it('reads the same values at points', async () => {
    for (const s of SEARCHES) {
      const id = ids.get(s.name)!;
      let compared = 0;
      for (const [lon, lat] of POINTS) {
        const r = await both(`/searches/${id}/point/${lon},${lat}?assets=visual`);
        assert.equal(r.tessera.status, r.titiler.status, `${s.name} ${lon},${lat}: ${await r.tessera.clone().text()}`);
        if (r.titiler.status !== 200) continue;
        const d = compareJson(parseJson(await r.titiler.text()), parseJson(await r.tessera.text()), { absTolerance: 1 });
        assert.deepEqual(d, [], `${s.name} point ${lon},${lat}: ${formatDifferences(d)}`);
        compared++;
      }
      rows.push({ search: s.name, what: `point values (${POINTS.length} points, assets=visual)`, result: `equal at ${compared} points (values within ±1)` });
    }
  });

  /**
   * The tiles z6–10 under POINTS of the mosaic at `base` (`/searches/{id}`, `/collections/{id}`) with
   * `render`, compared and counted; what fails the bars goes to `failures`. Answers a report row.
   */
  const compareTiles = async (name: string, base: string, render: Render, failures: string[]): Promise<void> => {
    const [query, theirs] = typeof render === 'string' ? [render, render] : [render.tessera, render.titiler];
    let tiles = 0;
    let worst = 1;
    for (const z of [6, 7, 8, 9, 10]) {
      for (const [tz, x, y] of tilesAt(z)) {
        const [path, own] = base.split('?') as [string, string | undefined];
        const tilePath = `${path}/tiles/WebMercatorQuad/${tz}/${x}/${y}.png${own ? `?${own}` : ''}`;
        const url = `${tilePath}${own ? '&' : '?'}${query}`;
        const r = await both(url, `${tilePath}${own ? '&' : '?'}${encodeURI(theirs).replace(/\|/g, '%7C')}`);
        assert.equal(r.tessera.status, r.titiler.status, `${url}: ${r.tessera.status === 200 ? '' : await r.tessera.clone().text()}`);
        if (r.titiler.status !== 200) continue;
        const [a, b] = await Promise.all([decodePng(Buffer.from(await r.titiler.arrayBuffer())), decodePng(Buffer.from(await r.tessera.arrayBuffer()))]);
        assert.deepEqual([b.width, b.height, b.channels], [a.width, a.height, a.channels], url);
        const used = new Set((r.tessera.headers.get('x-assets') ?? '').split(','));
        const { within, maskEqual, skipped } = compareOutside(a.values, b.values, a.channels, edgePixels(catalogue.items, used, tz, x, y));
        const n = a.width * a.height - skipped;
        pixelTotals.tiles++;
        pixelTotals.pixels += a.width * a.height;
        pixelTotals.edgePixels += skipped;
        pixelTotals.values += n * (a.channels - 1);
        pixelTotals.within += within * n * (a.channels - 1);
        pixelTotals.maskValues += n;
        pixelTotals.maskEqual += maskEqual * n;
        pixelTotals.worst = Math.min(pixelTotals.worst, within);
        worst = Math.min(worst, within);
        tiles++;
        const known = knownReadDifference(tz, r.tessera.headers.get('x-assets'));
        if (known) {
          knownTotals.tiles++;
          knownTotals.values += n * (a.channels - 1);
          knownTotals.within += within * n * (a.channels - 1);
          knownTotals.worst = Math.min(knownTotals.worst, within);
        }
        if (within < (known ? KNOWN_READ_BAR : PASS)) failures.push(`${url}: ${(within * 100).toFixed(3)}% of values within ±1`);
        if (maskEqual < 1) failures.push(`${url}: masks differ (${(maskEqual * 100).toFixed(3)}% equal)`);
      }
    }
    rows.push({
      search: name,
      what: `tiles z6–10 .png?${query}${theirs !== query ? ` (titiler-pgstac: ${theirs})` : ''}`,
      result: `${tiles} tiles, worst ${(worst * 100).toFixed(3)}% within ±1, masks equal`,
    });
  };

  it('reads the same areas: /bbox and /feature images, POST /statistics (titiler-pgstac add_part, add_statistics)', async () => {
    const failures: string[] = [];
    const post = async (path: string, body: unknown): Promise<{ titiler: Response; tessera: Response }> => {
      const init = { method: 'POST', headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' }, body: JSON.stringify(body) };
      const [a, b] = await Promise.all([fetch(`${titiler}${path}`, init), fetch(`${tessera.url}${path}`, init)]);
      return { titiler: a, tessera: b };
    };
    const triangle = {
      type: 'Feature',
      properties: { name: 'triangle' },
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [6.3, 44.3],
            [7.3, 44.4],
            [6.8, 45.2],
            [6.3, 44.3],
          ],
        ],
      },
    };
    // The alpha search: rasters in longitude/latitude, read without the EPSG:3857 edges of beta's.
    const id = ids.get(SEARCHES[0]!.name)!;
    const compareImages = async (what: string, r: { titiler: Response; tessera: Response }): Promise<void> => {
      assert.equal(r.tessera.status, r.titiler.status, `${what}: ${r.tessera.status === 200 ? '' : await r.tessera.clone().text()}`);
      if (r.titiler.status !== 200) return;
      const [a, b] = await Promise.all([decodePng(Buffer.from(await r.titiler.arrayBuffer())), decodePng(Buffer.from(await r.tessera.arrayBuffer()))]);
      assert.deepEqual([b.width, b.height, b.channels], [a.width, a.height, a.channels], what);
      const { within, maskEqual } = compareOutside(a.values, b.values, a.channels, new Uint8Array(a.width * a.height));
      const n = a.width * a.height;
      const perBand = Array.from({ length: a.channels - 1 }, (_, c) => {
        let k = 0;
        for (let p = 0; p < n; p++) if (Math.abs(a.values[c * n + p]! - b.values[c * n + p]!) <= 1) k++;
        return k / n;
      });
      rows.push({
        search: SEARCHES[0]!.name,
        what,
        result: `${(within * 100).toFixed(3)}% of values within ±1 (per band ${perBand.map((x) => `${(x * 100).toFixed(2)}%`).join(', ')}), masks ${(maskEqual * 100).toFixed(3)}% equal`,
      });
      // A downsampled multi-band read is the known reading difference (KNOWN_READ_BAR): the first band
      // is read alike, the others held to the measured floor; masks within its edge pixels.
      const [first = 1, ...others] = perBand;
      if (first < PASS) failures.push(`${what}: band 1 ${(first * 100).toFixed(3)}% of values within ±1`);
      if (others.some((x) => x < KNOWN_READ_BAR)) failures.push(`${what}: ${perBand.map((x) => (x * 100).toFixed(3)).join(', ')}% within ±1 per band`);
      if (maskEqual < 0.999) failures.push(`${what}: masks differ (${(maskEqual * 100).toFixed(3)}% equal)`);
    };
    for (const [i, b] of BBOXES.slice(0, 2).entries()) {
      for (const q of ['assets=visual', 'assets=visual&pixel_selection=highest', 'assets=data&rescale=0,3000']) {
        const path = `/searches/${id}/bbox/${b.join(',')}/256x${192 + i * 64}.png?${q}`;
        await compareImages(`bbox ${b.join(',')} ${q}`, await both(path));
      }
    }
    await compareImages('bbox outside the items', await both(`/searches/${id}/bbox/20,20,21,21.png?assets=visual`));
    await compareImages('feature (triangle)', await post(`/searches/${id}/feature.png?assets=visual&max_size=256`, triangle));
    const stats = await post(`/searches/${id}/statistics?assets=visual&max_size=256`, triangle);
    assert.equal(stats.tessera.status, stats.titiler.status, await stats.tessera.clone().text());
    // Bands 2 and 3 carry the known reading difference above: band 1 and the document's shape are compared.
    const d = compareJson(parseJson(await stats.titiler.text()), parseJson(await stats.tessera.text()), {
      normalise,
      ignore: ['$.properties.statistics.b2', '$.properties.statistics.b3'],
    });
    if (d.length > 0) failures.push(`statistics: ${formatDifferences(d)}`);
    rows.push({
      search: SEARCHES[0]!.name,
      what: 'POST statistics (triangle, assets=visual, max_size=256)',
      result: d.length === 0 ? 'equal (b1 and the rest; b2, b3: the known multi-band read difference)' : 'differs',
    });
    assert.deepEqual(failures, []);
  });

  it('makes the same pixels: ≥ 99.5% of values within ±1 and equal masks on every tile', async () => {
    const failures: string[] = [];
    for (const s of SEARCHES) for (const render of s.renders) await compareTiles(s.name, `/searches/${ids.get(s.name)!}`, render, failures);
    assert.ok(pixelTotals.tiles >= 50, `${pixelTotals.tiles} tiles compared`);
    assert.deepEqual(failures, []);
  });

  it("serves a collection's mosaic as titiler-pgstac does: the same search registered, info, TileJSON, items and pixels", async () => {
    const failures: string[] = [];
    const cql2 = encodeURIComponent(JSON.stringify({ op: '<', args: [{ property: 'eo:cloud_cover' }, 50] }));
    for (const [collection, query, renders] of [
      ['alpha', '', ['assets=visual']],
      ['alpha', `filter=${cql2}&filter-lang=cql2-json&sortby=-datetime`, ['assets=visual&pixel_selection=highest']],
      // cql2's reading of a filter given as CQL2-text (the default language): JSON text, numbers as floats.
      ['alpha', `filter=${cql2}&datetime=2023-03-01T00:00:00Z/2023-09-01T00:00:00Z`, []],
      ['beta', `bbox=6,44,10,47&query=${encodeURIComponent(JSON.stringify({ 'eo:cloud_cover': { lt: 70 } }))}&sortby=datetime`, ['assets=visual']],
      ['beta', 'ids=beta-10-2,beta-11-5,beta-20-1', []],
      // CQL2-text proper, read by cql2 0.6.0 on titiler-pgstac's side and by tessera's reader (catalog/cql2.ts).
      [
        'alpha',
        `filter=${encodeURIComponent("eo:cloud_cover < 50 AND datetime >= TIMESTAMP('2023-03-01T01:00:00+01:00') OR id IN ('alpha-20-3')")}&sortby=-datetime`,
        ['assets=visual'],
      ],
      ['beta', `filter=${encodeURIComponent('s_intersects(geometry, POLYGON((6 44, 10 44, 10 47, 6 44))) AND NOT "eo:cloud_cover" BETWEEN 20 AND 40')}`, []],
    ] as Array<[string, string, Render[]]>) {
      const name = `collection ${collection}${query ? ` ?${decodeURIComponent(query)}` : ''}`;
      const base = `/collections/${collection}${query ? `?${query}` : ''}`;
      const q = query ? `?${query}` : '';
      const amp = query ? `&${query}` : '';
      const info = await both(`/collections/${collection}/info${q}`);
      assert.equal(info.tessera.status, 200, `${name}: ${await info.tessera.clone().text()}`);
      const d = compareJson(parseJson(await info.titiler.text()), parseJson(await info.tessera.text()), {
        ignore: ['$.search.lastused', '$.search.usecount', '$.links'],
        normalise,
      });
      assert.deepEqual(d, [], `${name} info: ${formatDifferences(d)}`);
      const tj = await both(`/collections/${collection}/WebMercatorQuad/tilejson.json?assets=visual${amp}`);
      const dt = compareJson(parseJson(await tj.titiler.text()), parseJson(await tj.tessera.text()), { normalise });
      assert.deepEqual(dt, [], `${name} tilejson: ${formatDifferences(dt)}`);
      const cw = await both(`/collections/${collection}/WMTSCapabilities.xml?assets=visual${amp}`);
      assert.equal(cw.tessera.status, cw.titiler.status);
      const dw = firstDifference(wmtsNormalised(normalise(await cw.tessera.text())), wmtsNormalised(normalise(await cw.titiler.text())));
      assert.equal(dw, '', `${name} WMTS`);
      let items = 0;
      const lookups = [
        ...[5, 7, 9, 11].flatMap((z) => tilesAt(z).map(([tz, x, y]) => `/collections/${collection}/tiles/WebMercatorQuad/${tz}/${x}/${y}/assets${q}`)),
        ...POINTS.slice(0, 4).map(([lon, lat]) => `/collections/${collection}/point/${lon},${lat}/assets${q}`),
      ];
      for (const url of lookups) {
        const r = await both(url);
        assert.equal(r.tessera.status, r.titiler.status, url);
        const text = await r.titiler.text();
        const dl = compareJson(parseJson(text), parseJson(await r.tessera.text()), { normalise });
        assert.deepEqual(dl, [], `${url}: ${formatDifferences(dl)}`);
        items += (JSON.parse(text) as unknown[]).length;
      }
      rows.push({ search: name, what: `info, TileJSON, ${lookups.length} asset lookups`, result: `equal (the same search id; ${items} items in all)` });
      for (const render of renders) await compareTiles(name, base, render, failures);
    }
    assert.deepEqual(failures, []);
    const missing = await both('/collections/nope/info');
    assert.equal(missing.titiler.status, 404);
    assert.equal(missing.tessera.status, 404);
    assert.deepEqual(await missing.tessera.json(), await missing.titiler.json());
  });

  it('serves an item of the catalogue as titiler-pgstac does: assets, info, TileJSON, points, WMTS and tiles', async () => {
    const failures: string[] = [];
    let compared = 0;
    for (const [collection, item] of [
      ['alpha', 'alpha-20-3'],
      ['beta', 'beta-10-2'],
    ]) {
      const base = `/collections/${collection}/items/${item}`;
      const found = catalogue.items.find((i) => i.id === item)!;
      const [w, s, e, n] = found.bbox;
      const [lon, lat] = [w + (e - w) / 3, s + (n - s) / 3];
      for (const url of [
        `${base}/assets`,
        `${base}/info?assets=visual`,
        `${base}/info`,
        `${base}/info.geojson?assets=visual`,
        `${base}/WebMercatorQuad/tilejson.json?assets=visual`,
        `${base}/WebMercatorQuad/tilejson.json?assets=data&rescale=0,3000&minzoom=7`,
        `${base}/point/${lon},${lat}?assets=visual`,
        `${base}/point/${lon},${lat}?assets=data`,
      ]) {
        const r = await both(url);
        assert.equal(r.tessera.status, r.titiler.status, `${url}: ${await r.tessera.clone().text()}`);
        const d = compareJson(parseJson(await r.titiler.text()), parseJson(await r.tessera.text()), { normalise, absTolerance: 1e-6 });
        if (d.length > 0) failures.push(`${url}: ${formatDifferences(d)}`);
        compared++;
      }
      const wmts = await both(`${base}/WMTSCapabilities.xml?assets=visual`);
      assert.equal(wmts.tessera.status, wmts.titiler.status);
      const dw = firstDifference(wmtsNormalised(normalise(await wmts.tessera.text())), wmtsNormalised(normalise(await wmts.titiler.text())));
      if (dw) failures.push(`${base}/WMTSCapabilities.xml: ${dw}`);
      compared++;
      const z = 9;
      const x = Math.floor(((lon + 180) / 360) * 2 ** z);
      const r = (lat * Math.PI) / 180;
      const y = Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * 2 ** z);
      for (const q of ['assets=visual', 'assets=data&rescale=0,3000&colormap_name=viridis']) {
        const url = `${base}/tiles/WebMercatorQuad/${z}/${x}/${y}.png?${q}`;
        const t = await both(url);
        assert.equal(t.tessera.status, t.titiler.status, `${url}: ${t.tessera.status === 200 ? '' : await t.tessera.clone().text()}`);
        if (t.titiler.status !== 200) {
          // An asset the item has not (beta's items have `visual` only): the same refusal.
          const d = compareJson(parseJson(await t.titiler.text()), parseJson(await t.tessera.text()));
          if (d.length > 0) failures.push(`${url}: ${formatDifferences(d)}`);
          continue;
        }
        const [a, b] = await Promise.all([decodePng(Buffer.from(await t.titiler.arrayBuffer())), decodePng(Buffer.from(await t.tessera.arrayBuffer()))]);
        const { within, maskEqual } = compareOutside(a.values, b.values, a.channels, new Uint8Array(a.width * a.height));
        if (within < PASS || maskEqual < 1) failures.push(`${url}: ${(within * 100).toFixed(3)}% within ±1, masks ${(maskEqual * 100).toFixed(3)}% equal`);
        compared++;
      }
    }
    const missing = await both('/collections/alpha/items/nope/assets');
    assert.equal(missing.titiler.status, 404);
    assert.equal(missing.tessera.status, 404);
    assert.deepEqual(await missing.tessera.json(), await missing.titiler.json());
    assert.deepEqual(failures, []);
    rows.push({
      search: '(items)',
      what: `/collections/{collection_id}/items/{item_id}: ${compared} requests (assets, info, TileJSON, points, WMTS, tiles), an unknown item`,
      result: 'equal',
    });
  });

  it("reads an item's areas and statistics, and lists its renders, as titiler-pgstac does", async () => {
    const failures: string[] = [];
    let compared = 0;
    const found = catalogue.items.find((i) => i.id === RENDERED_ITEM)!;
    const base = `/collections/${found.collection}/items/${RENDERED_ITEM}`;
    const [w, s, e, n] = found.bbox;
    const [dx, dy] = [(e - w) / 4, (n - s) / 4];
    const area = [w + dx, s + dy, e - dx, n - dy].map((v) => Number(v.toFixed(6)));
    const feature = {
      type: 'Feature',
      properties: {},
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [area[0], area[1]],
            [area[2], area[1]],
            [area[2], area[3]],
            [area[0], area[1]],
          ],
        ],
      },
    };
    const post = async (url: string): Promise<{ titiler: Response; tessera: Response }> => {
      const init = { method: 'POST', headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' }, body: JSON.stringify(feature) };
      const [a, b] = await Promise.all([fetch(`${titiler}${url}`, init), fetch(`${tessera.url}${url}`, init)]);
      return { titiler: a, tessera: b };
    };
    // The render links: titiler-pgstac names the item in each link's query by its Python repr
    // (`url=<Item id=…>`), which no route reads; tessera's links name it by the path alone.
    const reprless = (text: string): string =>
      normalise(text)
        .replace(/\?url=%3CItem\+id%3D[^&"]*&?/g, (m) => (m.endsWith('&') ? '?' : ''))
        .replace(/&url=%3CItem\+id%3D[^&"]*/g, '');
    const json = async (url: string, r: { titiler: Response; tessera: Response }): Promise<void> => {
      assert.equal(r.tessera.status, r.titiler.status, `${url}: ${await r.tessera.clone().text()}`);
      const d = compareJson(parseJson(await r.titiler.text()), parseJson(await r.tessera.text()), {
        normalise: reprless,
        absTolerance: 1e-6,
        relTolerance: 1e-6,
      });
      if (d.length > 0) failures.push(`${url}: ${formatDifferences(d)}`);
      compared++;
    };
    const image = async (url: string, r: { titiler: Response; tessera: Response }): Promise<void> => {
      assert.equal(r.tessera.status, r.titiler.status, `${url}: ${r.tessera.status === 200 ? '' : await r.tessera.clone().text()}`);
      assert.equal(r.tessera.headers.get('content-type'), r.titiler.headers.get('content-type'), url);
      const [a, b] = await Promise.all([decodePng(Buffer.from(await r.titiler.arrayBuffer())), decodePng(Buffer.from(await r.tessera.arrayBuffer()))]);
      assert.deepEqual([b.width, b.height, b.channels], [a.width, a.height, a.channels], `${url}: image layout`);
      const { within, maskEqual } = compareOutside(a.values, b.values, a.channels, new Uint8Array(a.width * a.height));
      if (within < PASS || maskEqual < 0.995) failures.push(`${url}: ${(within * 100).toFixed(3)}% within ±1, masks ${(maskEqual * 100).toFixed(3)}% equal`);
      compared++;
    };
    for (const url of [
      `${base}/statistics?assets=visual`,
      `${base}/statistics?assets=data&max_size=256`,
      `${base}/asset_statistics?assets=visual&assets=data`,
      `${base}/renders`,
      `${base}/renders/elevation`,
      `${base}/renders/broken`,
      `${base}/renders/nope`,
    ])
      await json(url, await both(url));
    for (const url of [
      `${base}/preview.png?assets=visual&max_size=128`,
      `${base}/preview.png?assets=data&rescale=0,3000&colormap_name=viridis&max_size=128`,
      `${base}/bbox/${area.join(',')}.png?assets=visual`,
      `${base}/bbox/${area.join(',')}/96x64.png?assets=visual|bidx=3,2,1`,
    ])
      await image(url, await both(url));
    await json(`POST ${base}/statistics?assets=visual`, await post(`${base}/statistics?assets=visual`));
    await image(`POST ${base}/feature.png?assets=visual`, await post(`${base}/feature.png?assets=visual&max_size=128`));
    assert.deepEqual(failures, []);
    rows.push({
      search: '(items)',
      what: `/collections/{collection_id}/items/{item_id}: ${compared} requests (statistics GET and POST, asset_statistics, renders, preview, bbox, feature)`,
      result: "equal (render links without titiler-pgstac's `url=<Item …>`)",
    });
  });

  it('lists the registered mosaics as titiler-pgstac does: metadata filters, sortby, pages and their links', async () => {
    for (const name of ['parity-b', 'parity-c', 'parity-a']) {
      const res = await fetch(`${tessera.url}/searches/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ collections: ['alpha'], datetime: `2023-0${name.length % 9}-01T00:00:00Z/..`, metadata: { name, owner: 'parity' } }),
      });
      assert.equal(res.status, 200);
    }
    for (const q of ['owner=parity&sortby=-name&limit=2', 'owner=parity&sortby=name&limit=2&offset=2', 'sortby=name,-usecount&owner=parity', 'owner=nobody']) {
      const r = await both(`/searches/?${q}`);
      assert.equal(r.tessera.status, r.titiler.status, q);
      const d = compareJson(parseJson(await r.titiler.text()), parseJson(await r.tessera.text()), {
        ignore: ['$.searches[*].search.lastused', '$.searches[*].search.usecount'],
        normalise,
      });
      assert.deepEqual(d, [], `/searches/?${q}: ${formatDifferences(d)}`);
    }
    rows.push({ search: '(list)', what: 'GET /searches/ (4 queries: filters, sortby, pages)', result: 'equal (but lastused, usecount)' });
  });

  it('answers unknown searches 404 as titiler-pgstac does, and its 422/500 with 400', async () => {
    for (const url of ['/searches/0123456789abcdef/info', '/searches/0123456789abcdef/tiles/WebMercatorQuad/7/66/46/assets']) {
      const r = await both(url);
      assert.equal(r.titiler.status, 404, url);
      assert.equal(r.tessera.status, 404, url);
      assert.deepEqual(await r.tessera.json(), await r.titiler.json(), url);
    }
    rows.push({ search: '(unknown)', what: 'info, tile assets of an unknown search', result: 'equal: 404 `SearchId ... not found`' });
    // CQL2-text at registration: titiler-pgstac's register takes CQL2-JSON only (422); tessera stores the
    // CQL2-JSON cql2 writes for it, the very search titiler-pgstac registers for that JSON (the same id).
    const textBody = '{"collections":["alpha"],"filter":"eo:cloud_cover < 50","filter-lang":"cql2-text"}';
    const jsonBody = '{"collections":["alpha"],"filter":{"op":"<","args":[{"property":"eo:cloud_cover"},50.0]}}';
    const post = (base: string, body: string) => fetch(`${base}/searches/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const [theirText, ourText, theirJson] = await Promise.all([post(titiler, textBody), post(tessera.url, textBody), post(titiler, jsonBody)]);
    assert.equal(theirText.status, 422);
    assert.equal(ourText.status, 200);
    assert.equal(((await ourText.json()) as { id: string }).id, ((await theirJson.json()) as { id: string }).id);
    rows.push({
      search: '(cql2-text)',
      what: `POST /searches/register ${textBody}`,
      result: 'deliberate: tessera registers the CQL2-JSON cql2 writes (the id titiler-pgstac gives that JSON), titiler-pgstac 422',
    });
    for (const [body, theirs] of [
      ['{"bbox":[1,2]}', 422],
      ['{"collections":"alpha"}', 422],
      ['{"datetime":"not a date"}', 500],
      ['{"filter":{"op":"nope","args":[]}}', 500],
    ] as const) {
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
      const [a, b] = await Promise.all([fetch(`${titiler}/searches/register`, init), fetch(`${tessera.url}/searches/register`, init)]);
      assert.equal(a.status, theirs, body);
      assert.equal(b.status, 400, body);
      rows.push({ search: '(invalid)', what: `POST /searches/register ${body}`, result: `deliberate: tessera 400 with a detail, titiler-pgstac ${theirs}` });
    }
  });
});
