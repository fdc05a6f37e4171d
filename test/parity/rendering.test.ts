/**
 * Pixel parity of rendering with TiTiler 0.18.10 (issue 4) on real /stac image routes: rescale,
 * every color_formula operation, named and custom colormaps, each algorithm, return_mask, the
 * automatic format choice and dtype cast, explicit JPEG. Both servers answer the same request and
 * the decoded images (PNG, JPEG, `.npy`) are compared value by value. The bar: equal media types,
 * sizes and band counts, at least 99.5% of values within ±1, identical alpha/mask bands. Bad
 * rendering input must get a clear 4xx: TiTiler's own 4xx status where it has one; where TiTiler
 * fails with a 500 (an unhandled Python exception for what is the client's mistake) tessera answers
 * 400, recorded as deliberate. Every case's figures go to .parity/report-rendering.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startParity, writeReport, type Parity, type ReportRow } from './harness.js';
import { parseNpy } from '../helpers/npy.js';
import { PASS, compareArrays, decodePng, fetchBoth, psnr, serveItems, sharpMeta, type RawReply } from './pixels.js';

/** `png`/`jpeg`: decoded and compared; `npy`: arrays compared; `status`: error statuses compared. */
type Kind = 'png' | 'jpeg' | 'npy' | 'status';

interface Case {
  id: string;
  /** `{s2}` etc. are replaced by the URL of that test item. */
  path: string;
  kind: Kind;
  /** The media type the reference must answer with (checks the automatic choice). */
  type?: string;
  /** Output size (width×height) the reference must have, where the case is about it. */
  size?: [number, number];
  /** Expected status of the reference (a broken setup must not pass as "both fail alike"). */
  status?: number;
  /** A GeoJSON Feature to POST (the feature routes). */
  body?: unknown;
}

const FEATURE = {
  type: 'Feature',
  properties: {},
  geometry: {
    type: 'Polygon',
    coordinates: [
      [
        [23.6, 31.9],
        [23.9, 31.85],
        [24.0, 32.2],
        [23.7, 32.25],
        [23.6, 31.9],
      ],
    ],
  },
};

/** URL-encodes one query value (JSON colormaps, formulas with spaces, expressions with `+`). */
const e = encodeURIComponent;

const B01_TILE = '/stac/tiles/WebMercatorQuad/9/289/207';
const B01_INNER = '/stac/tiles/WebMercatorQuad/10/578/415';
/** A TCI tile over sea and coast (rich colour, every pixel valid). */
const TCI_TILE = '/stac/tiles/WebMercatorQuad/10/579/415';
/** A TCI tile inland, every pixel valid. */
const TCI_FULL = '/stac/tiles/WebMercatorQuad/11/1158/831';
/** A DEM tile inside the raster (every pixel valid). */
const DEM_TILE = '/stac/tiles/WebMercatorQuad/16/34059/23335';

const NAMED_COLORMAPS = [
  'viridis',
  'viridis_r',
  'cfastie',
  'rplumbo',
  'schwarzwald',
  'terrain_r',
  'gist_earth',
  'tab20c',
  'twilight_shifted_r',
  'rdylgn_r',
  // cmocean (rio-tiler ≥ 6.2)
  'algae',
  'balance_r',
  'thermal',
  'turbo_r',
];

/** Discrete: a few exact values, one hex form each (#RGB, #RRGGBB, #RRGGBBAA, lists), alpha 0 entries. */
const DISCRETE = {
  '0': '#000',
  '10': '#ff0000',
  '20': [0, 255, 0],
  '30': [0, 0, 255, 128],
  '40': '#ffff0080',
  '50': '#00ffff00',
  '60': [255, 0, 255, 0],
  '255': '#fff',
};

/** 256 keys 0..255: rio-tiler takes it as a lookup table; the first 20 entries transparent. */
const TABLE_256 = Object.fromEntries(Array.from({ length: 256 }, (_, i) => [String(i), [i, 255 - i, (i * 3) % 256, i < 20 ? 0 : 255]]));

/** Intervals over rescaled uint8 data, overlapping (the later wins), one fully transparent. */
const INTERVALS = [
  [[0, 64], '#440154'],
  [
    [64, 128],
    [59, 82, 139, 255],
  ],
  [[100, 160], '#21918c80'],
  [
    [160, 200],
    [94, 201, 98, 0],
  ],
  [[200, 256], '#fde725'],
];

/** Intervals over raw uint16 values (no rescale): the colormap alone makes the picture. */
const INTERVALS_RAW = [
  [[1, 500], '#0000ff'],
  [[500, 1000], '#00ff00'],
  [[1000, 1500], '#ffff00'],
  [[1500, 65536], '#ff000000'],
];

const CASES: Case[] = [
  // rescale
  { id: 'rescale-one-range', path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=500,2500`, kind: 'png' },
  { id: 'rescale-one-range-npy', path: `${B01_TILE}.npy?url={s2}&assets=B01&rescale=500,2500`, kind: 'npy' },
  { id: 'rescale-one-for-rgb', path: `${TCI_TILE}.png?url={s2}&assets=tci&rescale=20,200`, kind: 'png' },
  { id: 'rescale-per-band', path: `${TCI_TILE}.png?url={s2}&assets=tci&rescale=0,200&rescale=10,255&rescale=50,150`, kind: 'png' },
  { id: 'rescale-per-band-two', path: `${B01_TILE}.npy?url={s2}&assets=B01&assets=B09&rescale=0,2000&rescale=500,4000`, kind: 'npy' },
  { id: 'rescale-count-mismatch', path: `${TCI_TILE}.png?url={s2}&assets=tci&rescale=30,180&rescale=0,255`, kind: 'png' },
  { id: 'rescale-float-dem', path: `${DEM_TILE}.png?url={dem}&assets=dem&rescale=1600,2100`, kind: 'png' },

  // color_formula on the RGB TCI asset (and one 16-bit single band)
  { id: 'formula-gamma', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Gamma RGB 3.5')}`, kind: 'png' },
  { id: 'formula-gamma-one-band', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('gamma b 0.6')}`, kind: 'png' },
  { id: 'formula-sigmoidal', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Sigmoidal RGB 15 0.35')}`, kind: 'png' },
  { id: 'formula-sigmoidal-negative', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Sigmoidal RG -4 0.5')}`, kind: 'png' },
  { id: 'formula-saturation', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Saturation 1.7')}`, kind: 'png' },
  { id: 'formula-desaturation', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Saturation 0.4')}`, kind: 'png' },
  {
    id: 'formula-composite',
    path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Gamma RGB 3.5 Saturation 1.7 Sigmoidal RGB 15 0.35')}`,
    kind: 'png',
  },
  { id: 'formula-commas', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('gamma 123 1.8, sigmoidal 3 8 0.4')}`, kind: 'png' },
  { id: 'formula-after-rescale', path: `${TCI_TILE}.png?url={s2}&assets=tci&rescale=0,180&color_formula=${e('Gamma RGB 1.5')}`, kind: 'png' },
  { id: 'formula-uint16', path: `${B01_TILE}.png?url={s2}&assets=B01&color_formula=${e('Gamma R 0.5')}`, kind: 'png' },

  // named colormaps on a rescaled single band
  ...NAMED_COLORMAPS.map(
    (name): Case => ({
      id: `colormap-${name}`,
      path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=0,2000&colormap_name=${name}`,
      kind: 'png',
    }),
  ),
  { id: 'colormap-name-wins', path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=0,2000&colormap_name=magma&colormap=${e('{bad')}`, kind: 'png' },
  { id: 'colormap-dem-terrain', path: `${DEM_TILE}.png?url={dem}&assets=dem&rescale=1600,2100&colormap_name=terrain`, kind: 'png' },
  { id: 'colormap-npy', path: `${B01_TILE}.npy?url={s2}&assets=B01&rescale=0,2000&colormap_name=viridis`, kind: 'npy' },

  // custom colormaps (JSON, URL-encoded)
  { id: 'colormap-discrete', path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=0,2550&colormap=${e(JSON.stringify(DISCRETE))}`, kind: 'png' },
  { id: 'colormap-custom-256', path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=0,2000&colormap=${e(JSON.stringify(TABLE_256))}`, kind: 'png' },
  { id: 'colormap-intervals', path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=0,2000&colormap=${e(JSON.stringify(INTERVALS))}`, kind: 'png' },
  { id: 'colormap-intervals-raw-uint16', path: `${B01_TILE}.png?url={s2}&assets=B01&colormap=${e(JSON.stringify(INTERVALS_RAW))}`, kind: 'png' },
  {
    id: 'colormap-discrete-return-mask-false',
    path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=0,2550&return_mask=false&colormap=${e(JSON.stringify(DISCRETE))}`,
    kind: 'png',
  },

  // algorithms
  { id: 'algorithm-hillshade-buffer', path: `${DEM_TILE}.png?url={dem}&assets=dem&buffer=3&algorithm=hillshade`, kind: 'png', size: [256, 256] },
  {
    id: 'algorithm-hillshade-params',
    path: `${DEM_TILE}.npy?url={dem}&assets=dem&buffer=3&algorithm=hillshade&algorithm_params=${e('{"azimuth":315,"angle_altitude":45,"buffer":3}')}`,
    kind: 'npy',
    size: [256, 256],
  },
  { id: 'algorithm-contours', path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=contours`, kind: 'png' },
  {
    id: 'algorithm-contours-params',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=contours&algorithm_params=${e('{"increment":5,"thickness":2,"minz":1700,"maxz":2000}')}`,
    kind: 'png',
  },
  {
    id: 'algorithm-normalized-index-expression',
    path: `${B01_TILE}.npy?url={s2}&expression=${e('B01_b1;B09_b1')}&algorithm=normalizedIndex`,
    kind: 'npy',
  },
  {
    id: 'algorithm-normalized-index-asset-as-band',
    path: `${B01_TILE}.png?url={s2}&expression=${e('B01;B09')}&asset_as_band=true&algorithm=normalizedIndex&rescale=-1,1&colormap_name=rdylgn`,
    kind: 'png',
  },
  { id: 'algorithm-normalized-index-auto', path: `${B01_TILE}?url={s2}&assets=B01&assets=B09&algorithm=normalizedIndex`, kind: 'png' },
  { id: 'algorithm-terrarium', path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=terrarium`, kind: 'png' },
  { id: 'algorithm-terrainrgb', path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=terrainrgb`, kind: 'png' },
  {
    id: 'algorithm-terrainrgb-params',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=terrainrgb&algorithm_params=${e('{"interval":0.5,"baseval":-1000}')}`,
    kind: 'png',
  },

  // return_mask, automatic format, dtype casting, explicit JPEG
  { id: 'return-mask-false-png', path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=0,2000&return_mask=false`, kind: 'png' },
  { id: 'return-mask-false-colormap', path: `${B01_TILE}.png?url={s2}&assets=B01&rescale=0,2000&colormap_name=viridis&return_mask=false`, kind: 'png' },
  { id: 'auto-format-partial-png', path: `${B01_TILE}?url={s2}&assets=B01&rescale=0,2000`, kind: 'png', type: 'image/png' },
  { id: 'auto-format-full-jpeg', path: `${DEM_TILE}?url={dem}&assets=dem&rescale=1600,2100`, kind: 'jpeg', type: 'image/jpeg' },
  { id: 'auto-format-tci-full-jpeg', path: `${TCI_FULL}?url={s2}&assets=tci&color_formula=${e('Sigmoidal RGB 6 0.4')}`, kind: 'jpeg', type: 'image/jpeg' },
  { id: 'auto-format-tci-jpeg', path: `${TCI_TILE}?url={s2}&assets=tci`, kind: 'jpeg', type: 'image/jpeg' },
  // Alpha 128 keeps every pixel "valid" (JPEG); an alpha-0 colour on data makes it PNG.
  {
    id: 'auto-format-colormap-half-alpha',
    path: `${DEM_TILE}?url={dem}&assets=dem&rescale=1600,2100&colormap=${e(JSON.stringify(INTERVALS))}`,
    kind: 'jpeg',
    type: 'image/jpeg',
  },
  {
    id: 'auto-format-colormap-alpha-0',
    path: `${DEM_TILE}?url={dem}&assets=dem&rescale=1600,2100&colormap=${e(
      JSON.stringify([
        [[0, 128], '#ff0000'],
        [[128, 256], '#00ff0000'],
      ]),
    )}`,
    kind: 'png',
    type: 'image/png',
  },
  { id: 'cast-float-expression', path: `${B01_TILE}.png?url={s2}&expression=${e('B01_b1/B09_b1')}`, kind: 'png' },
  { id: 'cast-float-expression-auto', path: `${B01_TILE}?url={s2}&expression=${e('B01_b1*1.5')}`, kind: 'png' },
  { id: 'cast-float32-dem-png', path: `${DEM_TILE}.png?url={dem}&assets=dem`, kind: 'png' },
  { id: 'cast-uint16-png-kept', path: `${B01_TILE}.png?url={s2}&assets=B01&assets=B09`, kind: 'png' },
  { id: 'cast-uint16-jpeg', path: `${B01_INNER}.jpg?url={s2}&assets=B01`, kind: 'jpeg' },
  { id: 'jpeg-explicit-rgb', path: `${TCI_TILE}.jpeg?url={s2}&assets=tci`, kind: 'jpeg' },
  { id: 'jpeg-explicit-colormap', path: `${B01_TILE}.jpg?url={s2}&assets=B01&rescale=0,2000&colormap_name=cfastie`, kind: 'jpeg' },

  // the same steps on the other image routes (preview, bbox, feature), odd sizes included
  { id: 'preview-colormap', path: `/stac/preview.png?url={s2}&assets=B01&max_size=200&rescale=0,2000&colormap_name=ylorrd`, kind: 'png' },
  { id: 'preview-formula-auto', path: `/stac/preview?url={s2}&assets=tci&max_size=300&color_formula=${e('Gamma RGB 1.8 Saturation 1.3')}`, kind: 'png' },
  {
    id: 'preview-hillshade',
    path: `/stac/preview.png?url={dem}&assets=dem&max_size=150&algorithm=hillshade&algorithm_params=${e('{"buffer":0}')}`,
    kind: 'png',
  },
  { id: 'preview-jpeg-odd-size', path: `/stac/preview.jpg?url={dem}&assets=dem&max_size=101&rescale=1600,2100&colormap_name=terrain`, kind: 'jpeg' },
  { id: 'bbox-formula', path: `/stac/bbox/23.878,32.063,23.966,32.145.png?url={s2}&assets=tci&color_formula=${e('Sigmoidal RGB 8 0.3')}`, kind: 'png' },
  {
    id: 'bbox-intervals',
    path: `/stac/bbox/23.878,32.063,23.966,32.145/97x83.png?url={s2}&assets=B01&colormap=${e(JSON.stringify(INTERVALS_RAW))}`,
    kind: 'png',
  },
  { id: 'bbox-terrainrgb', path: `/stac/bbox/7.092,45.917,7.101,45.924.png?url={dem}&assets=dem&algorithm=terrainrgb`, kind: 'png' },
  { id: 'feature-colormap', path: `/stac/feature.png?url={s2}&assets=B01&max_size=256&rescale=0,2000&colormap_name=plasma_r`, kind: 'png', body: FEATURE },
  { id: 'feature-normalized-index', path: `/stac/feature.npy?url={s2}&assets=B01&assets=B09&algorithm=normalizedIndex`, kind: 'npy', body: FEATURE },

  // bad rendering input: TiTiler's own 4xx
  { id: 'bad-colormap-json', path: `${B01_TILE}.png?url={s2}&assets=B01&colormap=${e('{"1": "#ff0000"')}`, kind: 'status', status: 400 },
  { id: 'bad-colormap-colour', path: `${B01_TILE}.png?url={s2}&assets=B01&colormap=${e('{"1": "#zz0000"}')}`, kind: 'status', status: 400 },
  { id: 'bad-colormap-colour-list', path: `${B01_TILE}.png?url={s2}&assets=B01&colormap=${e('{"1": [1, 2]}')}`, kind: 'status', status: 400 },
  { id: 'bad-colormap-interval-colour', path: `${B01_TILE}.png?url={s2}&assets=B01&colormap=${e('[[[0, 10], "red"]]')}`, kind: 'status', status: 400 },
  { id: 'unknown-colormap-name', path: `${B01_TILE}.png?url={s2}&assets=B01&colormap_name=notacolormap`, kind: 'status', status: 422 },
  {
    id: 'bad-algorithm-params-range',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=hillshade&algorithm_params=${e('{"azimuth":1000}')}`,
    kind: 'status',
    status: 400,
  },
  {
    id: 'bad-algorithm-params-type',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=contours&algorithm_params=${e('{"increment":"ten"}')}`,
    kind: 'status',
    status: 400,
  },
  // Not a TiTiler 2.x name either (slope & co. answer whatever TESSERA_TITILER_API says: docs/differences.md).
  { id: 'unknown-algorithm', path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=nope`, kind: 'status', status: 422 },
];

/** Bad rendering input on which TiTiler fails with a 500: tessera answers 400 (see the report). */
interface Deliberate500 {
  id: string;
  path: string;
  why: string;
}

const CLIENT_MISTAKES_TITILER_500: Deliberate500[] = [
  {
    id: 'bad-formula-missing-values',
    path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Gamma RGB')}`,
    why: 'gamma() called without its argument (TypeError)',
  },
  {
    id: 'bad-formula-operation',
    path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Brightness RGB 2')}`,
    why: 'unknown operation name (ValueError)',
  },
  { id: 'bad-formula-number', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Gamma RGB x')}`, why: "float('x') (ValueError)" },
  { id: 'bad-formula-band', path: `${TCI_TILE}.png?url={s2}&assets=tci&color_formula=${e('Gamma 4 2')}`, why: 'band 4 out of range (ValueError)' },
  {
    id: 'bad-formula-float-data',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&color_formula=${e('Gamma R 2')}`,
    why: 'float data: "Invalid integer data type" (ValueError)',
  },
  {
    id: 'bad-colormap-key',
    path: `${B01_TILE}.png?url={s2}&assets=B01&colormap=${e('{"a": "#ff0000"}')}`,
    why: "int('a') in the JSON object hook (ValueError)",
  },
  {
    id: 'bad-colormap-multiband',
    path: `${TCI_TILE}.png?url={s2}&assets=tci&colormap_name=viridis`,
    why: 'apply_cmap on 3 bands (InvalidFormat, which TiTiler maps to no status)',
  },
  {
    id: 'bad-colormap-unrescaled-uint16',
    path: `${B01_TILE}.png?url={s2}&assets=B01&colormap_name=viridis`,
    why: 'uint16 values index past the 256-entry table (IndexError)',
  },
  {
    id: 'bad-colormap-float-data',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&colormap_name=viridis`,
    why: 'float32 values cannot index the table (IndexError)',
  },
  {
    id: 'bad-algorithm-params-json',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=hillshade&algorithm_params=${e('{azimuth:1}')}`,
    why: 'json.loads (JSONDecodeError)',
  },
  {
    id: 'bad-algorithm-params-json-alone',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm_params=${e('not json')}`,
    why: 'json.loads runs even without an algorithm (JSONDecodeError)',
  },
  {
    id: 'bad-algorithm-params-list',
    path: `${DEM_TILE}.png?url={dem}&assets=dem&algorithm=hillshade&algorithm_params=${e('[1]')}`,
    why: 'HillShade(**[1]) (TypeError)',
  },
  {
    id: 'bad-algorithm-input-bands',
    path: `${B01_TILE}.png?url={s2}&assets=B01&algorithm=normalizedIndex`,
    why: 'normalizedIndex on a single band (IndexError)',
  },
];

interface Figures {
  shape: string;
  kind: string;
  within: number;
  maskEqual: number;
  /** JPEG: PSNR of tessera's decoded picture against TiTiler's, dB. */
  psnr?: number;
}

/**
 * JPEG answers agree when their decoded pictures are within 40 dB PSNR of each other: two faithful
 * encodings of the same pixels at quality 85 (libjpeg-turbo's in sharp, IJG libjpeg 9's in TiTiler's
 * wheels, which subsample chroma differently) are that close, which no viewer tells apart. At hard
 * colour edges (a colormap) the two subsamplings part further; there tessera's picture must be as
 * faithful to the lossless one (the same request as PNG, equal on both servers) as TiTiler's, within
 * JPEG_FIDELITY_DB.
 */
const JPEG_PSNR = 40;
const JPEG_FIDELITY_DB = 1;

/** The same picture as PNG: the request with its format (or none, for automatic) made `.png`. */
function losslessPath(path: string): string {
  const [route, query = ''] = path.split('?', 2) as [string, string?];
  const png = /\.(jpe?g)$/.test(route) ? route.replace(/\.(jpe?g)$/, '.png') : `${route}.png`;
  return `${png}?${query}`;
}

/** Each server's JPEG against the lossless picture (the RGB or gray planes of the PNG): PSNR in dB. */
async function fidelity(p: Parity, c: Case, titiler: RawReply, tessera: RawReply): Promise<{ titiler: number; tessera: number }> {
  const png = await fetchBoth(p, losslessPath(c.path), c.body);
  assert.equal(png.tessera.status, 200, 'the lossless picture');
  const truth = await decodePng(png.tessera.body);
  const reference = await decodePng(png.titiler.body);
  assert.ok(compareArrays(reference.values, truth.values, truth.channels, 0).within >= PASS, 'both servers draw the same lossless picture');
  const [a, b] = await Promise.all([decodePng(titiler.body), decodePng(tessera.body)]);
  const planes = truth.values.subarray(0, a.values.length);
  return { titiler: psnr(planes, a.values), tessera: psnr(planes, b.values) };
}

async function comparePixels(c: Case, titiler: RawReply, tessera: RawReply): Promise<Figures> {
  if (c.kind === 'npy') {
    const a = parseNpy(titiler.body);
    const b = parseNpy(tessera.body);
    assert.deepEqual(b.shape, a.shape, 'shape');
    assert.equal(b.descr, a.descr, 'dtype');
    if (c.size) assert.deepEqual([a.shape[2], a.shape[1]], c.size, 'reference size');
    const masked = c.path.includes('return_mask=false') ? 0 : 1;
    const r = compareArrays(a.values, b.values, a.shape[0]!, masked);
    return { shape: a.shape.join('×'), kind: `npy ${a.descr}`, ...r };
  }
  const [ma, mb] = await Promise.all([sharpMeta(titiler.body, titiler.type), sharpMeta(tessera.body, tessera.type)]);
  assert.deepEqual(mb, ma, 'format, size, bands and depth');
  const a = await decodePng(titiler.body);
  const b = await decodePng(tessera.body);
  assert.deepEqual([b.width, b.height, b.channels, b.depth], [a.width, a.height, a.channels, a.depth], 'decoded layout');
  if (c.size) assert.deepEqual([a.width, a.height], c.size, 'reference size');
  const alpha = c.kind === 'png' && (a.channels === 2 || a.channels === 4) ? 1 : 0;
  const r = compareArrays(a.values, b.values, a.channels, alpha);
  // The file's own band count (sharp decodes gray as RGB).
  const shape = `${String(ma['channels'])}×${a.height}×${a.width}`;
  return { shape, kind: `${c.kind} ${a.depth}`, ...r, ...(c.kind === 'jpeg' ? { psnr: psnr(a.values, b.values) } : {}) };
}

const pct = (x: number): string => `${(x * 100).toFixed(3)}%`;

describe('parity: rendering on /stac image routes (decoded pixels)', { timeout: 600_000 }, () => {
  let p: Parity;
  const rows: ReportRow[] = [];
  const figures: string[] = ['| case | shape | decoded as | values within ±1 | mask/alpha equal |', '| --- | --- | --- | --- | --- |'];
  /** File sizes of the PNG cases of imagery (no colormap, no algorithm), for the size check. */
  const imageryPngBytes: Array<{ id: string; tessera: number; titiler: number }> = [];

  before(async () => {
    p = await startParity();
    serveItems(p);
  });

  after(async () => {
    const preface = [
      'Pixel parity of rendering (rescale, color_formula, colormaps, algorithms, return_mask, automatic format and dtype cast) ' +
        'on /stac image routes: decoded PNG/JPEG and `.npy` arrays compared value by value; bad rendering input compared on status.',
      '',
      `JPEG is compared by PSNR (at least ${JPEG_PSNR} dB between the decoded pictures): tessera encodes with libjpeg-turbo (sharp), ` +
        'TiTiler with IJG libjpeg 9 (inside its rasterio wheels), which subsamples chroma differently; no viewer tells such pictures apart.',
      '',
      'Deliberate: where TiTiler 0.18.10 answers a client mistake with a 500 (an unhandled Python exception), tessera answers 400 ' +
        'with a message saying what is wrong: a 5xx would make clients retry and monitors alert on what is not a server fault.',
    ];
    await writeReport(rows, preface, ['## Figures', '', ...figures], 'rendering');
    await p?.stop();
  });

  for (const c of CASES) {
    it(c.id, async () => {
      const x = await fetchBoth(p, c.path, c.body);
      const request = `${c.body ? 'POST' : 'GET'} ${c.path}`;
      try {
        if (c.kind === 'status') {
          assert.equal(x.titiler.status, c.status, `reference status (body ${x.titiler.body.toString().slice(0, 200)})`);
          assert.equal(x.tessera.status, x.titiler.status, `tessera: ${x.tessera.body.toString().slice(0, 300)}`);
          rows.push({ id: c.id, request, verdict: 'equal', note: `both ${x.titiler.status}; tessera: ${x.tessera.body.toString().slice(0, 160)}` });
          return;
        }
        assert.equal(x.titiler.status, 200, `reference failed: ${x.titiler.body.toString().slice(0, 300)}`);
        assert.equal(x.tessera.status, 200, `tessera failed: ${x.tessera.body.toString().slice(0, 300)}`);
        if (c.type) assert.equal(x.titiler.type, c.type, 'reference media type');
        assert.equal(x.tessera.type, x.titiler.type, 'content-type');
        const r = await comparePixels(c, x.titiler, x.tessera);
        if (c.kind === 'png' && !/colormap|algorithm/.test(c.path))
          imageryPngBytes.push({ id: c.id, tessera: x.tessera.body.length, titiler: x.titiler.body.length });
        const f = r.psnr !== undefined && r.psnr < JPEG_PSNR ? await fidelity(p, c, x.titiler, x.tessera) : undefined;
        const db =
          r.psnr === undefined
            ? ''
            : ` (PSNR ${r.psnr.toFixed(1)} dB${f ? `; against the lossless picture tessera ${f.tessera.toFixed(1)} dB, TiTiler ${f.titiler.toFixed(1)} dB` : ''})`;
        figures.push(`| ${c.id} | ${r.shape} | ${r.kind} | ${pct(r.within)}${db} | ${pct(r.maskEqual)} |`);
        const jpegOk = r.psnr !== undefined && (r.psnr >= JPEG_PSNR || (f !== undefined && f.tessera >= f.titiler - JPEG_FIDELITY_DB));
        const ok = (r.psnr !== undefined ? jpegOk : r.within >= PASS) && r.maskEqual === 1;
        rows.push({
          id: c.id,
          request,
          verdict: ok ? 'equal' : 'differs',
          note: `${x.titiler.type}; values within ±1: ${pct(r.within)}${db}, mask/alpha equal: ${pct(r.maskEqual)}`,
        });
        if (r.psnr !== undefined) assert.ok(jpegOk, `JPEG${db}: below ${JPEG_PSNR} dB and less faithful than TiTiler's`);
        else assert.ok(r.within >= PASS, `values within ±1: ${pct(r.within)} < 99.5%`);
        assert.equal(r.maskEqual, 1, `masks differ: ${pct(r.maskEqual)} equal`);
      } catch (err) {
        if (!rows.some((row) => row.id === c.id)) rows.push({ id: c.id, request, verdict: 'differs', note: (err as Error).message.split('\n')[0]! });
        throw err;
      }
    });
  }

  // Issue 24: what users pay in bandwidth. Imagery PNGs (rescaled, cast, colour-formula'd sensor
  // values) must not come out larger than TiTiler's files of the same pixels.
  it("imagery PNGs are no larger than TiTiler's in all", () => {
    assert.ok(imageryPngBytes.length >= 8, `${imageryPngBytes.length} imagery PNG cases compared`);
    const sum = (k: 'tessera' | 'titiler'): number => imageryPngBytes.reduce((total, row) => total + row[k], 0);
    const ratio = sum('tessera') / sum('titiler');
    figures.push(
      '',
      `Imagery PNG bytes, tessera ÷ TiTiler, ${imageryPngBytes.length} cases: ${ratio.toFixed(3)} in all; ` +
        imageryPngBytes.map((row) => `${row.id} ${(row.tessera / row.titiler).toFixed(3)}`).join(', '),
    );
    assert.ok(ratio <= 1, `imagery PNGs ${((ratio - 1) * 100).toFixed(1)}% larger than TiTiler's`);
  });

  for (const c of CLIENT_MISTAKES_TITILER_500) {
    it(c.id, async () => {
      const x = await fetchBoth(p, c.path);
      const request = `GET ${c.path}`;
      const tesseraBody = x.tessera.body.toString();
      try {
        assert.equal(x.titiler.status, 500, `the reference failure this case documents (body ${x.titiler.body.toString().slice(0, 200)})`);
        assert.equal(x.tessera.status, 400, `tessera: ${tesseraBody.slice(0, 300)}`);
        const detail = (JSON.parse(tesseraBody) as { detail?: unknown }).detail;
        assert.ok(typeof detail === 'string' && detail.length > 0, 'a {"detail": message} body');
        rows.push({
          id: c.id,
          request,
          verdict: 'deliberate',
          note: `TiTiler 500 ${x.titiler.body.toString().slice(0, 120)} (${c.why}); tessera 400: ${detail}`,
        });
      } catch (err) {
        if (!rows.some((row) => row.id === c.id)) rows.push({ id: c.id, request, verdict: 'differs', note: (err as Error).message.split('\n')[0]! });
        throw err;
      }
    });
  }
});
