/**
 * Parity with TiTiler 2.4.0 (titiler.application==2.4.0 in its own venv, tools/parity/titiler2.sh)
 * of the 2.x requests issue 37's core slice answers: `tilesize=` tiles, the OGC API – Tiles tileset
 * documents, the landing page and conformance, `/{tileMatrixSetId}/map.html`, the WMTS document of
 * every grid, OGC API – Maps' `/map`, and `/tileMatrixSets`. tessera runs with
 * TESSERA_TITILER_API=2, the dialect a 2.x deployment selects. Every case sends the same request to
 * both and compares status, media type and the body: JSON with key order and number kinds, XML as
 * element trees, decoded pixels (±1 on 99.5%, masks exact) through pixels.ts. A difference is
 * accepted only where the case says which deliberate difference it is (titiler2-deliberate.ts).
 * The outcome of every case is written to .parity/report-titiler2-core.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareJson, compareXml, formatDifferences, parseJson, parseXml, type Difference } from './compare.js';
import { get, startParity, titiler2Command, writeReport, TESSERA_COMMAND, type Parity, type Reply, type ReportRow } from './harness.js';
import { fixturePath, runPixelCase, serveItems, type PixelCase } from './pixels.js';
import { DELIBERATE_2, type Deliberate2 } from './titiler2-deliberate.js';

type Kind = 'json' | 'xml' | 'status' | 'html';

interface Case {
  id: string;
  /** Path and query; `{file:NAME}` and `{s2}` … as in pixels.ts. */
  path: string;
  kind: Kind;
  /** What the reference must answer. */
  status: number;
  headers?: Record<string, string>;
  /** JSON paths left out of the comparison (what the case does not measure, said in `note`). */
  ignore?: string[];
  note?: string;
  /** A deliberate difference this case accounts for. */
  deliberate?: Deliberate2;
}

const COG = '{file:cog.tif}';
const MOSAIC = '{file:mosaic.json}';
const GRIDS = [
  'CDB1GlobalGrid',
  'CanadianNAD83_LCC',
  'EuropeanETRS89_LAEAQuad',
  'GNOSISGlobalGrid',
  'LINZAntarticaMapTilegrid',
  'NZTM2000Quad',
  'UPSAntarcticWGS84Quad',
  'UPSArcticWGS84Quad',
  'UTM31WGS84Quad',
  'WGS1984Quad',
  'WebMercatorQuad',
  'WorldCRS84Quad',
  'WorldMercatorWGS84Quad',
];

const CASES: Case[] = [
  // A STAC item's renders (render extension): the list, one, a missing one, an item without, TileJSON's raster_layers.
  { id: 'statistics-width-only', path: `/cog/statistics?url=${COG}&width=120`, kind: 'json', status: 200 },
  { id: 'renders-list', path: '/stac/renders?url={renders}', kind: 'json', status: 200 },
  { id: 'render-one', path: '/stac/renders/tci-bands?url={renders}', kind: 'json', status: 200 },
  { id: 'render-broken', path: '/stac/renders/broken?url={renders}', kind: 'json', status: 200 },
  { id: 'render-missing', path: '/stac/renders/nope?url={renders}', kind: 'json', status: 404 },
  { id: 'renders-none', path: '/stac/renders?url={s2}', kind: 'json', status: 200 },
  { id: 'tilejson-renders', path: '/stac/WebMercatorQuad/tilejson.json?url={renders}&assets=B01', kind: 'json', status: 200 },
  // The collision `stacProjection`, as 2.x: an item's bounds and zooms from its projection extension,
  // its assets' grids (proj) or the item's own (proj_item), in TileJSON, tilesets and WMTS documents.
  { id: 'tilejson-stac-proj', path: '/stac/WebMercatorQuad/tilejson.json?url={proj}&assets=B01', kind: 'json', status: 200 },
  { id: 'tilejson-stac-proj-item', path: '/stac/WebMercatorQuad/tilejson.json?url={proj_item}&assets=B01', kind: 'json', status: 200 },
  { id: 'tilejson-stac-proj-crs84', path: '/stac/WorldCRS84Quad/tilejson.json?url={proj}&assets=B01&tilesize=256', kind: 'json', status: 200 },
  { id: 'tileset-stac-proj', path: '/stac/tiles/WebMercatorQuad?url={proj}&assets=B01', kind: 'json', status: 200 },
  { id: 'tileset-stac-proj-utm', path: '/stac/tiles/UTM31WGS84Quad?url={proj_item}&assets=B01', kind: 'json', status: 200 },
  { id: 'wmts-stac-proj', path: '/stac/WMTSCapabilities.xml?url={proj}&assets=B01', kind: 'xml', status: 200, deliberate: DELIBERATE_2.wmtsGrids },
  // The landing page (the collision `landing`, as 2.x) and conformance.
  { id: 'landing-json', path: '/', kind: 'json', status: 200, deliberate: DELIBERATE_2.landing },
  { id: 'landing-f-json', path: '/?f=json', kind: 'json', status: 200, headers: { accept: 'text/html' }, deliberate: DELIBERATE_2.landing },
  { id: 'landing-accept-html', path: '/', kind: 'html', status: 200, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } },
  { id: 'landing-f-html', path: '/?f=html', kind: 'html', status: 200 },
  { id: 'landing-f-bad', path: '/?f=xml', kind: 'json', status: 422 },
  { id: 'conformance', path: '/conformance', kind: 'json', status: 200, deliberate: DELIBERATE_2.conformance },
  { id: 'conformance-f-html', path: '/conformance?f=html', kind: 'html', status: 200 },
  { id: 'conformance-accept-html', path: '/conformance', kind: 'html', status: 200, headers: { accept: 'text/html' } },
  { id: 'conformance-f-bad', path: '/conformance?f=yaml', kind: 'json', status: 422 },

  // Grids: tessera's TMS 1.0 documents against 2.4.0's TMS 2.0 ones, matrix by matrix.
  { id: 'tms-list', path: '/tileMatrixSets', kind: 'json', status: 200, deliberate: DELIBERATE_2.tmsList },
  ...GRIDS.map((grid): Case => ({ id: `tms-${grid}`, path: `/tileMatrixSets/${grid}`, kind: 'json', status: 200, deliberate: DELIBERATE_2.tmsDocument })),
  { id: 'tms-unknown', path: '/tileMatrixSets/NotAGrid', kind: 'json', status: 422, deliberate: DELIBERATE_2.gridEnum },

  // OGC API – Tiles: the tileset list and each tileset.
  { id: 'tilesets-cog', path: `/cog/tiles?url=${COG}&rescale=0,100`, kind: 'json', status: 200, deliberate: DELIBERATE_2.tilesetListGrids },
  { id: 'tilesets-stac', path: '/stac/tiles?url={s2}', kind: 'json', status: 200, deliberate: DELIBERATE_2.tilesetListGrids },
  { id: 'tilesets-mosaic', path: `/mosaicjson/tiles?url=${MOSAIC}`, kind: 'json', status: 200, deliberate: DELIBERATE_2.tilesetListGrids },
  { id: 'tilesets-crs', path: `/cog/tiles?url=${COG}&crs=EPSG:3857`, kind: 'json', status: 200, deliberate: DELIBERATE_2.tilesetListGrids },
  ...GRIDS.map((grid): Case => ({ id: `tileset-cog-${grid}`, path: `/cog/tiles/${grid}?url=${COG}&rescale=0,1000`, kind: 'json', status: 200 })),
  { id: 'tileset-cog-zooms', path: `/cog/tiles/WebMercatorQuad?url=${COG}&minzoom=3&maxzoom=6`, kind: 'json', status: 200 },
  { id: 'tileset-stac', path: '/stac/tiles/WebMercatorQuad?url={s2}&assets=B01', kind: 'json', status: 200 },
  { id: 'tileset-stac-crs84', path: '/stac/tiles/WorldCRS84Quad?url={s2}', kind: 'json', status: 200 },
  { id: 'tileset-mosaic', path: `/mosaicjson/tiles/WebMercatorQuad?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'tileset-mosaic-nad83', path: `/mosaicjson/tiles/CanadianNAD83_LCC?url=${MOSAIC}`, kind: 'json', status: 200 },
  { id: 'tileset-f-html', path: `/cog/tiles/WebMercatorQuad?url=${COG}&f=html`, kind: 'html', status: 200 },
  { id: 'tileset-accept-html', path: `/cog/tiles?url=${COG}`, kind: 'html', status: 200, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } },
  { id: 'tileset-accept-json', path: `/cog/tiles/WebMercatorQuad?url=${COG}`, kind: 'json', status: 200, headers: { accept: 'application/json' } },
  { id: 'tileset-f-bad', path: `/cog/tiles/WebMercatorQuad?url=${COG}&f=xml`, kind: 'json', status: 422 },
  { id: 'tileset-grid-unknown', path: `/cog/tiles/NotAGrid?url=${COG}`, kind: 'json', status: 422, deliberate: DELIBERATE_2.gridEnum },
  { id: 'tileset-no-url', path: '/cog/tiles/WebMercatorQuad', kind: 'json', status: 422 },

  // WMTS: every grid as a layer (the collision `wmts`, as 2.x).
  { id: 'wmts-cog', path: `/cog/WMTSCapabilities.xml?url=${COG}&rescale=0,1000`, kind: 'xml', status: 200, deliberate: DELIBERATE_2.wmtsGrids },
  {
    id: 'wmts-cog-zooms-jpeg',
    path: `/cog/WMTSCapabilities.xml?url=${COG}&zooms=WebMercatorQuad::5,6&zooms=*::3,4&tile_format=jpeg&tilesize=512&SERVICE=WMTS&REQUEST=GetCapabilities`,
    kind: 'xml',
    status: 200,
    deliberate: DELIBERATE_2.wmtsGrids,
  },
  { id: 'wmts-cog-epsg', path: `/cog/WMTSCapabilities.xml?url=${COG}&use_epsg=true&bidx=1`, kind: 'xml', status: 200, deliberate: DELIBERATE_2.wmtsGrids },
  { id: 'wmts-stac', path: '/stac/WMTSCapabilities.xml?url={s2}&assets=B01&rescale=0,10000', kind: 'xml', status: 200, deliberate: DELIBERATE_2.wmtsGrids },
  { id: 'wmts-mosaic', path: `/mosaicjson/WMTSCapabilities.xml?url=${MOSAIC}`, kind: 'xml', status: 200, deliberate: DELIBERATE_2.wmtsGrids },
  { id: 'wmts-stac-no-assets', path: '/stac/WMTSCapabilities.xml?url={s2}', kind: 'status', status: 400 },
  // Without a layer of its own: the renders' layers alone.
  { id: 'wmts-stac-renders-alone', path: '/stac/WMTSCapabilities.xml?url={renders}', kind: 'xml', status: 200, deliberate: DELIBERATE_2.wmtsRenders },
  // A layer per render whose parameters a tile takes, before the query's own.
  {
    id: 'wmts-stac-renders',
    path: '/stac/WMTSCapabilities.xml?url={renders}&assets=B01&rescale=0,10000',
    kind: 'xml',
    status: 200,
    deliberate: DELIBERATE_2.wmtsRenders,
  },
  // A 422 on both; the message lists the formats each takes (tessera 0.18's, without `tiff`: a deliberate difference).
  { id: 'wmts-bad-format', path: `/cog/WMTSCapabilities.xml?url=${COG}&tile_format=gif`, kind: 'status', status: 422 },
  // `tiff` as `tile_format`: the documents' tile URLs end in `.tiff`, as named.
  { id: 'wmts-tile-format-tiff', path: `/cog/WMTSCapabilities.xml?url=${COG}&tile_format=tiff`, kind: 'xml', status: 200, deliberate: DELIBERATE_2.wmtsGrids },
  { id: 'tilejson-tile-format-tiff', path: `/cog/WebMercatorQuad/tilejson.json?url=${COG}&tile_format=tiff`, kind: 'json', status: 200 },
  { id: 'map-html-tile-format-tiff', path: `/cog/WebMercatorQuad/map.html?url=${COG}&tile_format=tiff`, kind: 'html', status: 200 },

  // The map page of 2.x (tessera's own page: status and media type compared).
  { id: 'map-html-cog', path: `/cog/WebMercatorQuad/map.html?url=${COG}&rescale=0,1000`, kind: 'html', status: 200 },
  { id: 'map-html-stac', path: '/stac/WorldCRS84Quad/map.html?url={s2}&assets=B01&tilesize=512', kind: 'html', status: 200 },
  { id: 'map-html-mosaic', path: `/mosaicjson/WebMercatorQuad/map.html?url=${MOSAIC}`, kind: 'html', status: 200 },
  { id: 'map-bad-bbox-body', path: `/cog/map?url=${COG}&bbox=1,2,3`, kind: 'json', status: 422 },
  { id: 'map-bad-crs', path: `/cog/map?url=${COG}&crs=foo`, kind: 'json', status: 422 },
  { id: 'tilesets-bad-crs', path: `/cog/tiles?url=${COG}&crs=foo`, kind: 'json', status: 422 },
  { id: 'map-accept-jpeg', path: `/cog/map?url=${COG}&width=64&height=64&rescale=0,1000`, kind: 'status', status: 200, headers: { accept: 'image/jpeg' } },
  { id: 'map-html-bad-grid', path: `/cog/NotAGrid/map.html?url=${COG}`, kind: 'json', status: 422, deliberate: DELIBERATE_2.gridEnum },

  // tilesize on tile routes: errors (the pixels are the pixel cases below).
  { id: 'tile-tilesize-0', path: `/cog/tiles/WebMercatorQuad/7/44/25.png?url=${COG}&tilesize=0`, kind: 'json', status: 422 },
  { id: 'tile-tilesize-text', path: `/cog/tiles/WebMercatorQuad/7/44/25.png?url=${COG}&tilesize=big`, kind: 'json', status: 422 },
  // TileJSON 3.0.0 as 2.x writes it (collisions tilejsonTiles and tilejsonBody), with and without tilesize.
  {
    id: 'tilejson-tilesize',
    path: `/cog/WebMercatorQuad/tilejson.json?url=${COG}&tilesize=256&tile_format=png&rescale=0,1000`,
    kind: 'json',
    status: 200,
  },
  {
    id: 'tilejson-default-size',
    path: `/cog/WebMercatorQuad/tilejson.json?url=${COG}&rescale=0,1000`,
    kind: 'json',
    status: 200,
  },
  {
    id: 'tilejson-default-size-mosaic',
    path: `/mosaicjson/WorldCRS84Quad/tilejson.json?url=${MOSAIC}&tile_format=webp`,
    kind: 'json',
    status: 200,
  },
  {
    id: 'tilejson-tilesize-stac',
    path: '/stac/WorldCRS84Quad/tilejson.json?url={s2}&assets=B01&tilesize=512',
    kind: 'json',
    status: 200,
  },
];

/**
 * Pixels as PNG: the `.npy` of 2.x writes its mask band as the data type's largest value (65535 for
 * uint16) where 0.18 wrote 255, a collision outside this slice, so arrays are compared through PNG.
 */
const PIXEL_CASES: PixelCase[] = [
  { id: 'tile-tilesize-512', path: `/cog/tiles/WebMercatorQuad/7/44/25.png?url=${COG}&tilesize=512&rescale=0,1000`, kind: 'png' },
  { id: 'tile-tilesize-128', path: `/cog/tiles/WebMercatorQuad/7/44/25.png?url=${COG}&tilesize=128&rescale=0,1000`, kind: 'png' },
  { id: 'tile-tilesize-300-buffer', path: `/cog/tiles/WebMercatorQuad/7/44/25.png?url=${COG}&tilesize=300&buffer=2&rescale=0,1000`, kind: 'png' },
  { id: 'tile-tilesize-extensionless', path: `/cog/tiles/WebMercatorQuad/7/44/25?url=${COG}&tilesize=384&rescale=0,1000&format=png`, kind: 'png' },
  { id: 'tile-tilesize-stac', path: '/stac/tiles/WebMercatorQuad/8/144/103.png?url={s2}&assets=B01&tilesize=512&rescale=0,10000', kind: 'png' },
  { id: 'tile-tilesize-crs84', path: '/stac/tiles/WorldCRS84Quad/8/289/82.png?url={s2}&assets=B09&tilesize=64&rescale=0,10000', kind: 'png' },
  // Without tilesize, 2.x cuts tiles at the matrix's own size: 128 px at CDB1GlobalGrid's zoom -3 (collision defaultTileSize).
  { id: 'tile-grid-size-cdb1', path: `/cog/tiles/CDB1GlobalGrid/-3/120/16.png?url=${COG}&rescale=0,1000`, kind: 'png' },
  { id: 'tile-default-size', path: `/cog/tiles/WebMercatorQuad/7/44/25.png?url=${COG}&rescale=0,1000`, kind: 'png' },
  // OGC API – Maps (the collision `prefixMap`, as 2.x).
  { id: 'map-cog', path: `/cog/map?url=${COG}&rescale=0,1000`, kind: 'png' },
  { id: 'map-cog-bbox', path: `/cog/map?url=${COG}&bbox=-60,73,-55,74&width=400&height=200&rescale=0,1000`, kind: 'png' },
  {
    id: 'map-cog-bbox-crs',
    path: `/cog/map?url=${COG}&bbox=-6600000,12100000,-6200000,12500000&bbox-crs=EPSG:3857&crs=EPSG:3857&width=256&height=256&rescale=0,1000`,
    kind: 'png',
  },
  { id: 'map-cog-crs-jpeg', path: `/cog/map?url=${COG}&crs=EPSG:3857&f=jpeg&rescale=0,1000`, kind: 'image' },
  { id: 'map-cog-tif', path: `/cog/map?url=${COG}&f=tif&width=128&height=128`, kind: 'image' },
  { id: 'map-stac-bbox', path: '/stac/map?url={s2}&assets=B01&bbox=23.2,31.6,23.8,32.2&width=300&height=300&rescale=0,10000', kind: 'png' },
  {
    id: 'map-stac-colormap',
    path: '/stac/map?url={s2}&assets=B09&bbox=23.2,31.6,23.8,32.2&width=128&height=128&rescale=0,5000&colormap_name=viridis',
    kind: 'png',
  },
  // /mosaicjson/map is measured against the factory with add_ogc_maps (titiler2-mosaic-areas.test.ts): 2.4.0's application leaves it off.
  // One of width/height: the other keeps the read's aspect ratio (rio-tiler 9's output_size).
  { id: 'map-cog-width-only', path: `/cog/map?url=${COG}&bbox=-60,73,-55,74&width=300&rescale=0,1000`, kind: 'png' },
  { id: 'map-cog-height-only', path: `/cog/map?url=${COG}&height=200&rescale=0,1000`, kind: 'png' },
  { id: 'map-cog-width-only-crs', path: `/cog/map?url=${COG}&crs=EPSG:3857&width=250&rescale=0,1000`, kind: 'png' },
  { id: 'map-stac-height-only', path: '/stac/map?url={s2}&assets=B01&bbox=23.2,31.6,23.8,32.2&height=150&rescale=0,10000', kind: 'png' },
  // The collision `outputSize`, as 2.x: one of width/height keeps the aspect ratio on every whole-image route, max_size ignored.
  { id: 'bbox-width-only', path: `/cog/bbox/-60,73,-55,74.png?url=${COG}&width=300&rescale=0,1000`, kind: 'png' },
  { id: 'preview-width-only', path: `/cog/preview.png?url=${COG}&width=200&rescale=0,1000`, kind: 'png' },
  { id: 'preview-height-max-size', path: `/cog/preview.png?url=${COG}&height=150&max_size=64&rescale=0,1000`, kind: 'png' },
  { id: 'stac-preview-width-only', path: '/stac/preview.png?url={s2}&assets=B01&width=100&rescale=0,10000', kind: 'png' },
  // `/stac/map` draws in the item's CRS where its projection extension names one its assets share.
  { id: 'map-stac-proj-crs', path: '/stac/map?url={proj}&assets=B01&width=128&height=128&rescale=0,10000', kind: 'png' },
  { id: 'map-stac-proj-bbox', path: '/stac/map?url={proj}&assets=B09&bbox=23.2,31.6,23.8,32.2&width=100&rescale=0,10000', kind: 'png' },
  { id: 'map-stac-no-proj', path: '/stac/map?url={s2}&assets=B01&width=128&height=128&rescale=0,10000', kind: 'png' },
  // `tiff`, 2.x's other name of the GeoTIFF format.
  { id: 'map-cog-tiff', path: `/cog/map?url=${COG}&f=tiff&width=128&height=128`, kind: 'image' },
  { id: 'tile-tiff', path: `/cog/tiles/WebMercatorQuad/7/44/25.tiff?url=${COG}`, kind: 'image' },
  { id: 'bbox-tiff', path: `/cog/bbox/-60,73,-55,74/64x64.tiff?url=${COG}`, kind: 'image' },
  { id: 'preview-tiff', path: `/cog/preview.tiff?url=${COG}&max_size=64`, kind: 'image' },
  // …and as the `format` query value (paths without an extension).
  { id: 'tile-format-tiff', path: `/cog/tiles/WebMercatorQuad/7/44/25?url=${COG}&format=tiff`, kind: 'image' },
  { id: 'preview-format-tiff', path: `/cog/preview?url=${COG}&max_size=64&format=tiff`, kind: 'image' },
  { id: 'map-bad-bbox', path: `/cog/map?url=${COG}&bbox=1,2,3`, kind: 'status', status: 422 },
];

/** The s2 item with the projection extension: its assets' grids in EPSG:32634 (as their files), so rio-tiler 9 reads it in that CRS. */
function projectedItem(base: string): string {
  const bbox = [23.106076, 31.505174, 24.296465, 32.519335];
  const asset = (file: string) => ({
    href: `${base}/${file}`,
    type: 'image/tiff; application=geotiff; profile=cloud-optimized',
    'proj:epsg': 32634,
    'proj:shape': [183, 183],
    'proj:transform': [600, 0, 699960, 0, -600, 3600000],
  });
  return JSON.stringify({
    type: 'Feature',
    stac_version: '1.0.0',
    stac_extensions: ['https://stac-extensions.github.io/projection/v1.1.0/schema.json'],
    id: 'parity-proj',
    properties: { datetime: '2020-01-01T00:00:00Z', 'proj:epsg': 32634 },
    geometry: {
      type: 'Polygon',
      coordinates: [
        [
          [bbox[0], bbox[1]],
          [bbox[2], bbox[1]],
          [bbox[2], bbox[3]],
          [bbox[0], bbox[3]],
          [bbox[0], bbox[1]],
        ],
      ],
    },
    bbox,
    links: [],
    assets: { B01: asset('B01.tif'), B09: asset('B09.tif') },
  });
}

/** The s2 item with the projection extension on the item only: its own grid, the assets without one. */
function projectedItemLevel(base: string): string {
  const doc = JSON.parse(projectedItem(base)) as Record<string, Record<string, Record<string, unknown>>>;
  doc['id'] = 'parity-proj-item' as never;
  for (const asset of Object.values(doc['assets']!)) {
    for (const key of Object.keys(asset)) if (key.startsWith('proj:')) delete asset[key];
  }
  Object.assign(doc['properties']!, { 'proj:epsg': 32634, 'proj:shape': [183, 183], 'proj:transform': [600, 0, 699960, 0, -600, 3600000, 0, 0, 1] });
  return JSON.stringify(doc);
}

/** The s2 item with renders (the STAC render extension): valid ones, 0.18's per-asset forms, and one no tile takes. */
function renderedItem(base: string): string {
  const doc = JSON.parse(projectedItem(base)) as Record<string, Record<string, unknown>>;
  doc['id'] = 'parity-renders' as never;
  // Without the projection extension: rio-tiler 9 then reads it as tessera does, in its bbox at every zoom.
  doc['stac_extensions'] = [] as never;
  doc['assets']!['tci'] = { href: `${base}/TCI.tif`, type: 'image/tiff; application=geotiff; profile=cloud-optimized' };
  doc['properties']!['renders'] = {
    b01: { title: 'B01 in viridis', assets: ['B01'], rescale: [[0, 10000]], colormap_name: 'viridis' },
    'tci-bands': { title: 'TCI', assets: ['tci'], asset_bidx: ['tci|3,2,1'], minmax_zoom: [6, 12] },
    ratio: { assets: ['B01', 'B09'], expression: 'b1/b2', rescale: [[0, 2]], nodata: 0, resampling: 'bilinear' },
    broken: { assets: ['B01'], colormap_name: 'not-a-colormap' },
  };
  return JSON.stringify(doc);
}

/** The media type without parameters. */
function mediaType(reply: Reply): string {
  return (reply.headers.get('content-type') ?? '').split(';')[0]!.trim();
}

function differences(c: Case, ref: Reply, ours: Reply, normalise: (s: string) => string): Difference[] {
  if (c.kind === 'xml') return compareXml(parseXml(ref.body), parseXml(ours.body), { normalise });
  if (c.kind === 'json') return compareJson(parseJson(ref.body), parseJson(ours.body), { normalise, ...(c.ignore ? { ignore: c.ignore } : {}) });
  return [];
}

async function runCase(p: Parity, c: Case, rows: ReportRow[]): Promise<void> {
  const path = fixturePath(p, c.path);
  const [ref, ours] = await Promise.all([get(p.titiler.url, path, c.headers), get(p.tessera.url, path, c.headers)]);
  const request = `GET ${c.path}${c.headers?.accept ? ` (Accept: ${c.headers.accept})` : ''}`;
  try {
    assert.equal(ref.status, c.status, `reference status (${ref.body.slice(0, 200)})`);
    assert.equal(ours.status, ref.status, `tessera: ${ours.body.slice(0, 300)}`);
    assert.equal(mediaType(ours), mediaType(ref), 'media type');
    if (c.kind === 'status' || c.kind === 'html') {
      rows.push({ id: c.id, request, verdict: 'equal', note: `both ${ref.status} ${mediaType(ref)}` });
      return;
    }
    const found = differences(c, ref, ours, p.normalise);
    if (found.length > 0 && c.deliberate) {
      const left = c.deliberate.accept({ titiler: ref, tessera: ours, normalise: p.normalise });
      assert.deepEqual(left, [], `beyond the deliberate difference ${c.deliberate.id}:\n${left.join('\n')}`);
      rows.push({ id: c.id, request, verdict: 'deliberate', note: c.deliberate.id });
      return;
    }
    assert.equal(found.length, 0, formatDifferences(found));
    rows.push({ id: c.id, request, verdict: 'equal', note: c.note ?? '' });
  } catch (err) {
    if (!rows.some((r) => r.id === c.id)) rows.push({ id: c.id, request, verdict: 'differs', note: (err as Error).message.split('\n')[0]! });
    throw err;
  }
}

describe('parity with TiTiler 2.4.0 (TESSERA_TITILER_API=2): 2.x core requests', { timeout: 600_000 }, () => {
  let p: Parity;
  const rows: ReportRow[] = [];
  const figures: string[] = ['| case | shape | dtype | values within ±1 | mask equal |', '| --- | --- | --- | --- | --- |'];

  before(async () => {
    p = await startParity(TESSERA_COMMAND, { reference: titiler2Command(), candidateEnv: { TESSERA_TITILER_API: '2' } });
    serveItems(p);
    p.fileserver.put('/items/proj.json', projectedItem(p.fileserver.url));
    p.fileserver.put('/items/renders.json', renderedItem(p.fileserver.url));
    p.fileserver.put('/items/proj_item.json', projectedItemLevel(p.fileserver.url));
  });

  after(async () => {
    const intro =
      'tessera (TESSERA_TITILER_API=2) against titiler.application 2.4.0: the 2.x requests of issue 37 both settings answer, and the collisions as 2.x.';
    await writeReport(rows, [intro], ['## Figures', '', ...figures], 'titiler2-core', 'TiTiler 2.4.0');
    await p?.stop();
  });

  for (const c of CASES) it(c.id, () => runCase(p, c, rows));
  for (const c of PIXEL_CASES) it(c.id, () => runPixelCase(p, c, rows, figures));
});
