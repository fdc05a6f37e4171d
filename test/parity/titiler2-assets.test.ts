/**
 * Parity with TiTiler 2.4.0 of the STAC asset syntax only 2.x clients send (issue 37): per-asset
 * options inside `assets` (`name|bidx=…`, `name|expression=…`, `name|bands=…`, titiler.core's
 * `_parse_asset` and rio-tiler 9's `STACReader._get_options`) and `:all:`. tessera runs with
 * TESSERA_TITILER_API=2; both servers get the same requests on the fixture items (pixels.ts) and an
 * item whose TCI asset names its bands (`eo:bands`), and the answers are compared as pixels.ts does
 * (PNG values ±1 on 99.5%, masks exact), JSON documents (points, statistics) as trees with the
 * keys 2.x adds left out, and statuses; where 2.4.0 fails with a 500 on a client mistake, tessera
 * must answer 400 with a detail. The outcome of every case is written to
 * .parity/report-titiler2-assets.md. Positional expressions (`b1+b2` over the assets, in order) are
 * here too: TiTiler 0.18 finds no asset in them and refuses them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareJson, formatDifferences, parseJson } from './compare.js';
import { get, startParity, titiler2Command, writeReport, TESSERA_COMMAND, type Parity, type ReportRow } from './harness.js';
import { fixturePath, runPixelCase, serveItems, type PixelCase } from './pixels.js';

const COG_TYPE = 'image/tiff; application=geotiff; profile=cloud-optimized';
const S2_BBOX = [23.106076, 31.505174, 24.296465, 32.519335];

/** An item whose assets carry band names: TCI with `eo:bands` (1.0), B09 with `bands` (1.1). */
function bandsItem(base: string): string {
  const [w, s, e, n] = S2_BBOX as [number, number, number, number];
  return JSON.stringify({
    type: 'Feature',
    stac_version: '1.1.0',
    id: 'parity-bands',
    properties: { datetime: '2020-01-01T00:00:00Z' },
    geometry: {
      type: 'Polygon',
      coordinates: [
        [
          [w, s],
          [e, s],
          [e, n],
          [w, n],
          [w, s],
        ],
      ],
    },
    bbox: S2_BBOX,
    links: [],
    assets: {
      tci: {
        href: `${base}/TCI.tif`,
        type: COG_TYPE,
        'eo:bands': [
          { name: 'B04', common_name: 'red' },
          { name: 'B03', common_name: 'green' },
          { name: 'B02', common_name: 'blue' },
        ],
      },
      B09: { href: `${base}/B09.tif`, type: COG_TYPE, bands: [{ name: 'B09', 'eo:common_name': 'watervapour' }] },
    },
    stac_extensions: [],
  });
}

const TILE = '/stac/tiles/WebMercatorQuad/8/144/103.png';
const POINT = '/stac/point/23.7,32.0';
const enc = encodeURIComponent;

const CASES: PixelCase[] = [
  // Per-asset band indexes.
  { id: 'tile-asset-bidx-one', path: `${TILE}?url={s2}&assets=${enc('tci|bidx=2')}`, kind: 'png' },
  { id: 'tile-asset-bidx-order', path: `${TILE}?url={s2}&assets=${enc('tci|bidx=3,2,1')}`, kind: 'png' },
  {
    id: 'tile-asset-bidx-two-assets',
    path: `${TILE}?url={s2}&assets=${enc('tci|bidx=1')}&assets=B09&assets=B01&rescale=0,255&rescale=0,10000&rescale=0,10000`,
    kind: 'png',
  },
  // Per-asset expressions.
  { id: 'tile-asset-expression', path: `${TILE}?url={s2}&assets=${enc('B01|expression=b1*2')}&rescale=0,20000`, kind: 'png' },
  { id: 'tile-asset-expression-blocks', path: `${TILE}?url={s2}&assets=${enc('tci|expression=b3;b2;b1')}&rescale=0,255`, kind: 'png' },
  { id: 'tile-asset-expression-and-bidx', path: `${TILE}?url={s2}&assets=${enc('tci|bidx=1|expression=b2/2')}&rescale=0,255`, kind: 'png' },
  {
    id: 'tile-asset-expression-mixed',
    path: `${TILE}?url={s2}&assets=${enc('B01|expression=b1/10')}&assets=${enc('tci|bidx=1')}&assets=${enc('B09|expression=b1/10')}&rescale=0,1000&rescale=0,255&rescale=0,1000`,
    kind: 'png',
  },
  { id: 'map-asset-bidx', path: `/stac/map?url={s2}&assets=${enc('tci|bidx=2')}&bbox=23.2,31.6,23.8,32.2&width=200&height=200`, kind: 'png' },
  // Band names from the item's STAC band metadata.
  { id: 'tile-asset-bands-common-name', path: `${TILE}?url={bands}&assets=${enc('tci|bands=blue,red')}&rescale=0,255`, kind: 'png' },
  { id: 'tile-asset-bands-stac-1.1', path: `${TILE}?url={bands}&assets=${enc('B09|bands=watervapour')}&rescale=0,10000`, kind: 'png' },
  // Positional expressions over the assets (b1 … in the order of `assets`).
  { id: 'tile-positional-expression', path: `${TILE}?url={s2}&assets=B09&assets=B01&expression=${enc('b1/b2')}&rescale=0,5`, kind: 'png' },
  { id: 'tile-positional-one-asset', path: `${TILE}?url={s2}&assets=B01&expression=${enc('b1*2')}&rescale=0,20000`, kind: 'png' },
  {
    id: 'tile-positional-over-options',
    path: `${TILE}?url={s2}&assets=${enc('tci|bidx=3,1')}&assets=B01&expression=${enc('b1;b2;b3/40')}&rescale=0,255`,
    kind: 'png',
  },
  {
    id: 'map-positional-expression',
    path: `/stac/map?url={s2}&assets=B01&assets=B09&expression=${enc('b2-b1')}&bbox=23.2,31.6,23.8,32.2&width=200&height=200&rescale=0,8000`,
    kind: 'png',
  },
  // What 2.4.0 refuses alike.
  { id: 'tile-asset-unknown-name', path: `${TILE}?url={s2}&assets=${enc('nope|bidx=1')}`, kind: 'status', status: 404 },
  // :all: is a name like any other where 2.4.0 does not expand it.
  { id: 'tile-all', path: `${TILE}?url={s2}&assets=:all:`, kind: 'status', status: 404 },
];

/** A JSON answer compared as a tree; `ignore` leaves out what 2.x's models add beside this slice. */
interface JsonCase {
  id: string;
  path: string;
  status: number;
  ignore?: string[];
}

const JSON_CASES: JsonCase[] = [
  {
    id: 'point-asset-options',
    path: `${POINT}?url={s2}&assets=${enc('tci|bidx=3,1')}&assets=${enc('B01|expression=b1*2')}`,
    status: 200,
  },
  {
    id: 'point-positional-expression',
    path: `${POINT}?url={s2}&assets=B09&assets=B01&expression=${enc('b1/b2;b2')}`,
    status: 200,
  },
  { id: 'point-asset-bands', path: `${POINT}?url={bands}&assets=${enc('tci|bands=green')}&assets=B09`, status: 200 },
  // The collision `stacBandNames`, as 2.x: a plain read's bands are b1 … too.
  { id: 'point-plain-assets', path: `${POINT}?url={s2}&assets=B01&assets=tci`, status: 200 },
  { id: 'point-plain-asset-as-band', path: `${POINT}?url={s2}&assets=B01&assets=B09&asset_as_band=true`, status: 200 },
  { id: 'statistics-plain-assets', path: '/stac/statistics?url={s2}&assets=B09&assets=B01&max_size=256', status: 200 },
  { id: 'statistics-all', path: '/stac/statistics?url={s2}&assets=:all:&max_size=256', status: 200 },
  {
    id: 'statistics-asset-options',
    path: `/stac/statistics?url={s2}&assets=${enc('tci|bidx=2')}&assets=${enc('B01|expression=b1/10')}&max_size=256`,
    status: 200,
  },
  {
    id: 'statistics-positional-expression',
    path: `/stac/statistics?url={s2}&assets=B01&assets=B09&expression=${enc('b1+b2')}&max_size=256`,
    status: 200,
  },
  // The collision `describedBands`, as 2.x: descriptions, null for masked values, valid_percent over a feature's coverage.
  { id: 'cog-point', path: '/cog/point/-73,46?url={file:cog1.tif}', status: 200 },
  { id: 'cog-point-bidx-expression', path: `/cog/point/-73,46?url={file:cog1.tif}&expression=${enc('b3/b1;b2*2')}`, status: 200 },
  { id: 'cog-point-described', path: '/cog/point/127.35,37.44?url={file:cog_scale.tif}', status: 200 },
  { id: 'cog-point-masked', path: '/cog/point/80.20662305841088,22.11035484926084?url={file:cog_with_nan.tif}', status: 200 },
  { id: 'cog-statistics', path: '/cog/statistics?url={file:cog1.tif}&max_size=128', status: 200 },
  { id: 'cog-statistics-expression', path: `/cog/statistics?url={file:cog1.tif}&max_size=128&expression=${enc('b1+b2')}`, status: 200 },
  { id: 'cog-statistics-described', path: '/cog/statistics?url={file:cog_scale.tif}&max_size=128', status: 200 },
  // TiTiler's ops pass the input bands' descriptions on (and an expression's outputs stay b1 … bn); other algorithms describe their own.
  { id: 'cog-statistics-cast-described', path: '/cog/statistics?url={file:cog_scale.tif}&max_size=128&algorithm=cast', status: 200 },
  {
    id: 'cog-statistics-floor-expression',
    path: `/cog/statistics?url={file:cog1.tif}&max_size=128&expression=${enc('b1/100;b2/100')}&algorithm=floor`,
    status: 200,
  },
  { id: 'cog-statistics-ceil', path: '/cog/statistics?url={file:cog1.tif}&max_size=128&algorithm=ceil', status: 200 },
  { id: 'cog-statistics-grayscale', path: '/cog/statistics?url={file:cog1.tif}&max_size=128&algorithm=grayscale', status: 200 },
  { id: 'cog-statistics-hillshade', path: '/cog/statistics?url={file:dem.tif}&max_size=128&algorithm=hillshade', status: 200 },
  { id: 'cog-statistics-terrainrgb', path: '/cog/statistics?url={file:dem.tif}&max_size=128&algorithm=terrainrgb', status: 200 },
  { id: 'stac-point-asset-as-band', path: `${POINT}?url={s2}&assets=B01&assets=B09&asset_as_band=true&expression=${enc('b1*2')}`, status: 200 },
  {
    id: 'info-all',
    path: '/stac/info?url={s2}&assets=:all:',
    status: 200,
  },
  // The collision `infoModel`: rio-tiler 9's Info.
  { id: 'cog-info', path: '/cog/info?url={file:cog1.tif}', status: 200 },
  { id: 'cog-info-described', path: '/cog/info?url={file:cog_scale.tif}', status: 200 },
  { id: 'cog-info-geojson', path: '/cog/info.geojson?url={file:cog1.tif}', status: 200 },
  { id: 'stac-info-geojson', path: '/stac/info.geojson?url={s2}&assets=B01', status: 200 },
  {
    id: 'asset-statistics-options',
    path: `/stac/asset_statistics?url={s2}&assets=${enc('tci|bidx=3,1')}&assets=${enc('B01|expression=b1 * 2')}&assets=B09&max_size=128`,
    status: 200,
  },
  // The same asset given several times: each distinct value read with its own options (the same one once).
  {
    id: 'asset-statistics-same-asset',
    path: `/stac/asset_statistics?url={s2}&assets=${enc('B01|bidx=1')}&assets=${enc('B01|expression=b1*2')}&assets=B01&assets=B01&assets=${enc('B01|bidx=1')}&max_size=128`,
    status: 200,
  },
  {
    id: 'asset-statistics-bands',
    path: `/stac/asset_statistics?url={bands}&assets=${enc('tci|bands=blue,red')}&max_size=128`,
    status: 200,
  },
  { id: 'asset-statistics-all', path: '/stac/asset_statistics?url={s2}&assets=:all:&max_size=128', status: 200 },
];

/** Client mistakes 2.4.0 answers with a 500 (an uncaught ValueError or rasterio error); tessera says 400. */
const REFUSED: Array<{ id: string; path: string }> = [
  { id: 'tile-asset-bands-unknown', path: `${TILE}?url={bands}&assets=${enc('tci|bands=nir')}` },
  // A band's `name` is not looked at when it has a common name (rio-tiler 9 keys each band once).
  { id: 'tile-asset-bands-name-shadowed', path: `${TILE}?url={bands}&assets=${enc('tci|bands=B04')}` },
  { id: 'tile-asset-bands-no-metadata', path: `${TILE}?url={s2}&assets=${enc('B01|bands=red')}` },
  { id: 'tile-asset-bidx-too-high', path: `${TILE}?url={s2}&assets=${enc('B01|bidx=2')}` },
];

describe('parity with TiTiler 2.4.0 (TESSERA_TITILER_API=2): STAC asset syntax', { timeout: 600_000 }, () => {
  let p: Parity;
  const rows: ReportRow[] = [];
  const figures: string[] = ['| case | shape | dtype | values within ±1 | mask equal |', '| --- | --- | --- | --- | --- |'];

  before(async () => {
    p = await startParity(TESSERA_COMMAND, { reference: titiler2Command(), candidateEnv: { TESSERA_TITILER_API: '2' } });
    serveItems(p);
    p.fileserver.put('/items/bands.json', bandsItem(p.fileserver.url));
  });

  after(async () => {
    const intro = "tessera (TESSERA_TITILER_API=2) against titiler.application 2.4.0: TiTiler 2.x's per-asset options in `assets`, and `:all:`.";
    await writeReport(rows, [intro], ['## Figures', '', ...figures], 'titiler2-assets', 'TiTiler 2.4.0');
    await p?.stop();
  });

  for (const c of CASES) it(c.id, () => runPixelCase(p, c, rows, figures));

  for (const c of JSON_CASES) {
    it(c.id, async () => {
      const path = fixturePath(p, c.path);
      const [ref, ours] = await Promise.all([get(p.titiler.url, path), get(p.tessera.url, path)]);
      try {
        assert.equal(ref.status, c.status, `reference status (${ref.body.slice(0, 200)})`);
        assert.equal(ours.status, ref.status, `tessera: ${ours.body.slice(0, 300)}`);
        const found = compareJson(parseJson(ref.body), parseJson(ours.body), { normalise: p.normalise, ...(c.ignore ? { ignore: c.ignore } : {}) });
        assert.equal(found.length, 0, formatDifferences(found));
        rows.push({ id: c.id, request: `GET ${c.path}`, verdict: 'equal', note: c.ignore ? `not compared: ${c.ignore.join(', ')}` : '' });
      } catch (err) {
        rows.push({ id: c.id, request: `GET ${c.path}`, verdict: 'differs', note: (err as Error).message.split('\n')[0]! });
        throw err;
      }
    });
  }

  for (const c of REFUSED) {
    it(c.id, async () => {
      const path = fixturePath(p, c.path);
      const [ref, ours] = await Promise.all([get(p.titiler.url, path), get(p.tessera.url, path)]);
      try {
        assert.equal(ref.status, 500, `the reference failure this case documents (${ref.body.slice(0, 200)})`);
        assert.equal(ours.status, 400, `tessera: ${ours.body.slice(0, 300)}`);
        const detail: unknown = JSON.parse(ours.body).detail;
        assert.equal(typeof detail, 'string');
        rows.push({
          id: c.id,
          request: `GET ${c.path}`,
          verdict: 'deliberate',
          note: `TiTiler 500: ${ref.body.slice(0, 120)}; tessera 400: ${String(detail).slice(0, 120)}`,
        });
      } catch (err) {
        rows.push({ id: c.id, request: `GET ${c.path}`, verdict: 'differs', note: (err as Error).message.split('\n')[0]! });
        throw err;
      }
    });
  }
});
