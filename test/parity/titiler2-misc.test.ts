/**
 * Parity with TiTiler 2.4.0 (titiler.application==2.4.0, tools/parity/titiler2.sh) of the 2.x
 * requests of issue 37's smaller pieces: the `/colorMaps` list and entries (collision `colorMaps`),
 * the mosaic asset lookups at 2.x's paths (`/tiles/{tms}/{z}/{x}/{y}/assets`, `/point/{lon},{lat}/assets`,
 * `/bbox/{minx},{miny},{maxx},{maxy}/assets`), the mosaic `/point` body (collision `mosaicPoint`),
 * and images as 2.x's `render_image` encodes them (collision `imageEncoding`: `.npy` masks, automatic
 * formats), their pixels compared through pixels.ts (±1 on 99.5%, masks exact), and TileJSON 3.0.0
 * bodies (collision `tilejsonBody`).
 * tessera runs with TESSERA_TITILER_API=2. Every case sends the same request to both and compares
 * status, media type and JSON (key order and number kinds). The outcome of every case is written to
 * .parity/report-titiler2-misc.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareJson, formatDifferences, parseJson, toPlain, type PlainJson } from './compare.js';
import { get, startParity, titiler2Command, writeReport, TESSERA_COMMAND, type Parity, type Reply, type ReportRow } from './harness.js';
import { fixturePath, runPixelCase, serveItems, type PixelCase } from './pixels.js';
import { fixtureMosaic } from '../helpers/fileserver.js';

type Kind = 'json' | 'status' | 'html';

interface Case {
  id: string;
  /** Path and query; `{file:NAME}` as in pixels.ts. */
  path: string;
  kind: Kind;
  /** What the reference must answer. */
  status: number;
  headers?: Record<string, string>;
  /** Applied to both bodies before comparing (what the case does not measure, said in `note`). */
  prepare?: (body: PlainJson) => PlainJson;
  note?: string;
}

const MOSAIC = '{file:mosaic.json}';
/** The fixture mosaic with absolute asset URLs (point reads open them), served at /mosaics/fixture.json. */
const ABS_MOSAIC = '{abs}';

/** The colormap list with its entries sorted by id: TiTiler lists them in its directory-listing order. */
function sortedColormaps(body: PlainJson): PlainJson {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const list = body['colormaps'];
  if (!Array.isArray(list)) return body;
  const id = (e: PlainJson): string => (typeof e === 'object' && e !== null && !Array.isArray(e) ? String(e['id']) : '');
  return { ...body, colormaps: [...list].sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0)) };
}

const CASES: Case[] = [
  // /colorMaps (collision colorMaps, as 2.x).
  {
    id: 'colormaps',
    path: '/colorMaps',
    kind: 'json',
    status: 200,
    prepare: sortedColormaps,
    note: 'entries compared sorted by id (TiTiler lists them in directory order)',
  },
  { id: 'colormaps-f-json', path: '/colorMaps?f=json', kind: 'json', status: 200, headers: { accept: 'text/html' }, prepare: sortedColormaps },
  { id: 'colormaps-accept-html', path: '/colorMaps', kind: 'html', status: 200, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } },
  { id: 'colormaps-f-html', path: '/colorMaps?f=html', kind: 'html', status: 200 },
  { id: 'colormaps-f-bad', path: '/colorMaps?f=png', kind: 'json', status: 422 },
  { id: 'colormap-viridis', path: '/colorMaps/viridis', kind: 'json', status: 200 },
  { id: 'colormap-f-json', path: '/colorMaps/cfastie?f=json', kind: 'json', status: 200 },
  { id: 'colormap-f-png', path: '/colorMaps/viridis?f=png', kind: 'status', status: 200 },
  { id: 'colormap-f-jpeg', path: '/colorMaps/viridis?f=jpeg&orientation=vertical', kind: 'status', status: 200 },
  { id: 'colormap-f-html', path: '/colorMaps/viridis?f=html', kind: 'html', status: 200 },
  { id: 'colormap-accept-html', path: '/colorMaps/viridis', kind: 'html', status: 200, headers: { accept: 'text/html' } },
  { id: 'colormap-f-bad', path: '/colorMaps/viridis?f=gif', kind: 'json', status: 422 },

  // Mosaic asset lookups at 2.x's paths (answered under both settings).
  // The collision `infoModel`: cogeo-mosaic 9's Info.
  { id: 'mosaic-info', path: `/mosaicjson/info?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'mosaic-info-geojson', path: `/mosaicjson/info.geojson?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-tile', path: `/mosaicjson/tiles/WebMercatorQuad/7/37/45/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-tile-below-qz', path: `/mosaicjson/tiles/WebMercatorQuad/5/9/11/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-tile-above-qz', path: `/mosaicjson/tiles/WebMercatorQuad/10/300/365/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-tile-wgs', path: `/mosaicjson/tiles/WGS1984Quad/8/148/61/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-tile-empty', path: `/mosaicjson/tiles/WebMercatorQuad/7/1/1/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-tile-bad-grid', path: `/mosaicjson/tiles/NotAGrid/7/37/45/assets?url=${MOSAIC}`, kind: 'status', status: 422 },
  { id: 'assets-tile-bad-z', path: `/mosaicjson/tiles/WebMercatorQuad/a/37/45/assets?url=${MOSAIC}`, kind: 'json', status: 422 },
  { id: 'assets-tile-no-url', path: '/mosaicjson/tiles/WebMercatorQuad/7/37/45/assets', kind: 'json', status: 422 },
  { id: 'assets-point', path: `/mosaicjson/point/-73,46/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-point-3857', path: `/mosaicjson/point/-8200000,5800000/assets?url=${MOSAIC}&coord_crs=EPSG:3857`, kind: 'json', status: 200 },
  { id: 'assets-point-outside', path: `/mosaicjson/point/10,10/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-point-bad', path: `/mosaicjson/point/x,46/assets?url=${MOSAIC}`, kind: 'json', status: 422 },
  { id: 'assets-bbox', path: `/mosaicjson/bbox/-76,45,-72,47/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-bbox-outside', path: `/mosaicjson/bbox/10,10,11,11/assets?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'assets-bbox-bad', path: `/mosaicjson/bbox/-76,45,-72,y/assets?url=${MOSAIC}`, kind: 'json', status: 422 },

  // The mosaic /point body (collision mosaicPoint, as 2.x).
  { id: 'point', path: `/mosaicjson/point/-73,46?url=${ABS_MOSAIC}`, kind: 'json', status: 200 },
  { id: 'point-two-assets', path: `/mosaicjson/point/-72.5,45.6?url=${ABS_MOSAIC}`, kind: 'json', status: 200 },
  { id: 'point-bidx', path: `/mosaicjson/point/-73,46?url=${ABS_MOSAIC}&bidx=1&bidx=1`, kind: 'json', status: 200 },
  { id: 'point-expression', path: `/mosaicjson/point/-73,46?url=${ABS_MOSAIC}&expression=b1*2`, kind: 'json', status: 200 },
  { id: 'point-3857', path: `/mosaicjson/point/-8126000,5780000?url=${ABS_MOSAIC}&coord_crs=EPSG:3857`, kind: 'json', status: 200 },
  { id: 'point-outside', path: `/mosaicjson/point/10,10?url=${ABS_MOSAIC}`, kind: 'status', status: 204 },
  { id: 'point-bad', path: `/mosaicjson/point/x,46?url=${ABS_MOSAIC}`, kind: 'json', status: 422 },

  // TileJSON 3.0.0 (collision tilejsonBody, as 2.x).
  { id: 'tilejson-cog', path: '/cog/WebMercatorQuad/tilejson.json?url={file:cog.tif}&rescale=0,1000', kind: 'json', status: 200 },
  { id: 'tilejson-cog-zooms', path: '/cog/WorldCRS84Quad/tilejson.json?url={file:cog.tif}&minzoom=2&maxzoom=5&tile_format=png', kind: 'json', status: 200 },
  { id: 'tilejson-stac', path: '/stac/WebMercatorQuad/tilejson.json?url={s2}&assets=B01&tilesize=256', kind: 'json', status: 200 },
  { id: 'tilejson-mosaic', path: `/mosaicjson/WebMercatorQuad/tilejson.json?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'tilejson-mosaic-zooms', path: `/mosaicjson/WorldCRS84Quad/tilejson.json?url=${MOSAIC}&minzoom=3`, kind: 'json', status: 200 },
];

/**
 * Images as 2.x's `render_image` encodes them (collision imageEncoding): the `.npy` mask band in the
 * data's dtype, and automatic-format tiles cast to uint8 PNG (or JPEG where nothing is masked).
 */
const PIXEL_CASES: PixelCase[] = [
  { id: 'npy-tile-edge', path: '/cog/tiles/WebMercatorQuad/5/10/6.npy?url={file:cog.tif}', kind: 'npy' },
  { id: 'npy-tile-inside', path: '/cog/tiles/WebMercatorQuad/7/44/25.npy?url={file:cog.tif}', kind: 'npy' },
  { id: 'npy-tile-no-mask', path: '/cog/tiles/WebMercatorQuad/5/10/6.npy?url={file:cog.tif}&return_mask=false', kind: 'npy' },
  { id: 'npy-tile-float', path: '/cog/tiles/WebMercatorQuad/5/10/6.npy?url={file:cog.tif}&expression=b1/3', kind: 'npy' },
  { id: 'npy-tile-colormap', path: '/cog/tiles/WebMercatorQuad/5/10/6.npy?url={file:cog.tif}&rescale=0,1000&colormap_name=viridis', kind: 'npy' },
  { id: 'npy-stac', path: '/stac/tiles/WebMercatorQuad/8/144/103.npy?url={s2}&assets=B01', kind: 'npy' },
  { id: 'npy-preview', path: '/cog/preview.npy?url={file:cog.tif}&max_size=64', kind: 'npy' },
  { id: 'tif-tile-edge', path: '/cog/tiles/WebMercatorQuad/5/10/6.tif?url={file:cog.tif}', kind: 'image' },
  { id: 'auto-tile-edge', path: '/cog/tiles/WebMercatorQuad/5/10/6?url={file:cog.tif}', kind: 'png' },
  { id: 'auto-tile-inside', path: '/cog/tiles/WebMercatorQuad/7/44/25?url={file:cog.tif}', kind: 'image' },
  { id: 'auto-preview', path: '/cog/preview?url={file:cog.tif}&max_size=128', kind: 'png' },
  { id: 'auto-stac', path: '/stac/tiles/WebMercatorQuad/8/144/103?url={s2}&assets=B01', kind: 'image' },
];

/** The media type without parameters. */
function mediaType(reply: Reply): string {
  return (reply.headers.get('content-type') ?? '').split(';')[0]!.trim();
}

async function runCase(p: Parity, c: Case, rows: ReportRow[]): Promise<void> {
  const path = fixturePath(p, c.path.replace(ABS_MOSAIC, encodeURIComponent(`${p.fileserver.url}/mosaics/fixture.json`)));
  const [ref, ours] = await Promise.all([get(p.titiler.url, path, c.headers), get(p.tessera.url, path, c.headers)]);
  const request = `GET ${c.path}${c.headers?.accept ? ` (Accept: ${c.headers.accept})` : ''}`;
  try {
    assert.equal(ref.status, c.status, `reference status (${ref.body.slice(0, 200)})`);
    assert.equal(ours.status, ref.status, `tessera: ${ours.body.slice(0, 300)}`);
    assert.equal(mediaType(ours), mediaType(ref), 'media type');
    if (c.kind === 'json') {
      // A case that prepares its bodies compares them as plain JSON (number kinds are then not told apart).
      const body = (text: string): ReturnType<typeof parseJson> =>
        c.prepare ? parseJson(JSON.stringify(c.prepare(toPlain(parseJson(text))))) : parseJson(text);
      const found = compareJson(body(ref.body), body(ours.body), { normalise: p.normalise });
      assert.equal(found.length, 0, formatDifferences(found));
    }
    rows.push({ id: c.id, request, verdict: 'equal', note: c.note ?? `both ${ref.status} ${mediaType(ref)}` });
  } catch (err) {
    rows.push({ id: c.id, request, verdict: 'differs', note: (err as Error).message.split('\n')[0]! });
    throw err;
  }
}

describe('parity with TiTiler 2.4.0 (TESSERA_TITILER_API=2): colormaps and mosaic lookups', { timeout: 600_000 }, () => {
  let p: Parity;
  const rows: ReportRow[] = [];
  const figures: string[] = ['| case | shape | dtype | values within ±1 | mask equal |', '| --- | --- | --- | --- | --- |'];

  before(async () => {
    p = await startParity(TESSERA_COMMAND, { reference: titiler2Command(), candidateEnv: { TESSERA_TITILER_API: '2' } });
    serveItems(p);
    p.fileserver.put('/mosaics/fixture.json', JSON.stringify(await fixtureMosaic(p.fileserver.url)));
  });

  after(async () => {
    const intro =
      'tessera (TESSERA_TITILER_API=2) against titiler.application 2.4.0: /colorMaps, the mosaic asset lookups at 2.x paths, the mosaic /point body, TileJSON 3.0.0 bodies and images as 2.x encodes them.';
    await writeReport(rows, [intro], ['## Figures', '', ...figures], 'titiler2-misc', 'TiTiler 2.4.0');
    await p?.stop();
  });

  for (const c of CASES) it(c.id, () => runCase(p, c, rows));
  for (const c of PIXEL_CASES) it(c.id, () => runPixelCase(p, c, rows, figures));
});
