/**
 * Parity with TiTiler 2.4.0 of the mosaic area reads (issue 37): `/mosaicjson/bbox`, `/feature`,
 * POST `/statistics` and OGC API – Maps `/map` over a MosaicJSON document. titiler.application
 * 2.4.0 leaves these routes of its MosaicTilerFactory off, so the reference is that application
 * with a second factory mounted beside it, the three switches on (tools/parity/titiler2_mosaic_areas.py),
 * as titiler-pgstac mounts them for its searches. tessera runs with TESSERA_TITILER_API=2 (where
 * `/mosaicjson/map` is the image). Images are compared decoded (±1 on 99.5%, masks exact, pixels.ts),
 * statistics as JSON (key order, number kinds, values within 1e-9). The report is
 * .parity/report-titiler2-mosaic-areas.md.
 */
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareJson, formatDifferences, parseJson } from './compare.js';
import { ROOT, startParity, titiler2Command, writeReport, TESSERA_COMMAND, type Parity, type ReportRow, type ServerCommand } from './harness.js';
import { fetchBoth, runPixelCase, type PixelCase } from './pixels.js';
import { fixtureMosaic } from '../helpers/fileserver.js';

/** The fixture mosaic with absolute asset URLs, served at /mosaics/fixture.json (`{mosaic}` in a path). */
const M = 'url={mosaic}';

/** TiTiler 2.4.0's application with the mosaic area routes mounted (the module beside its setup script). */
function reference(): ServerCommand {
  const base = titiler2Command();
  return {
    ...base,
    args: (port) => [
      'titiler2_mosaic_areas:app',
      '--app-dir',
      path.join(ROOT, 'tools/parity'),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--no-access-log',
    ],
  };
}

const SQUARE = {
  type: 'Feature',
  properties: { name: 'square' },
  geometry: {
    type: 'Polygon',
    coordinates: [
      [
        [-74, 45.5],
        [-72.5, 45.5],
        [-72.5, 46.5],
        [-74, 46.5],
        [-74, 45.5],
      ],
    ],
  },
};
/** A triangle over both assets: its cutline leaves part of its bbox masked. */
const TRIANGLE = {
  type: 'Feature',
  properties: {},
  geometry: {
    type: 'Polygon',
    coordinates: [
      [
        [-75.5, 45.2],
        [-72, 45.4],
        [-73.5, 46.8],
        [-75.5, 45.2],
      ],
    ],
  },
};
const OUTSIDE = {
  type: 'Feature',
  properties: {},
  geometry: {
    type: 'Polygon',
    coordinates: [
      [
        [10, 10],
        [11, 10],
        [11, 11],
        [10, 10],
      ],
    ],
  },
};

const PIXEL_CASES: PixelCase[] = [
  { id: 'bbox-size-npy', path: `/mosaicjson/bbox/-76,45,-72,47/256x256.npy?${M}`, kind: 'npy' },
  { id: 'bbox-native-npy', path: `/mosaicjson/bbox/-73.2,45.6,-72.8,45.9.npy?${M}`, kind: 'npy' },
  { id: 'bbox-max-size-png', path: `/mosaicjson/bbox/-76,45,-72,47.png?${M}&max_size=300&rescale=0,20000`, kind: 'png' },
  { id: 'bbox-highest', path: `/mosaicjson/bbox/-74,45.3,-72,46.7/200x150.npy?${M}&pixel_selection=highest`, kind: 'npy' },
  { id: 'bbox-lowest', path: `/mosaicjson/bbox/-74,45.3,-72,46.7/200x150.npy?${M}&pixel_selection=lowest`, kind: 'npy' },
  { id: 'bbox-mean', path: `/mosaicjson/bbox/-74,45.3,-72,46.7/200x150.npy?${M}&pixel_selection=mean`, kind: 'npy' },
  { id: 'bbox-expression', path: `/mosaicjson/bbox/-74,45.3,-72,46.7/200x150.npy?${M}&expression=b1/2`, kind: 'npy' },
  { id: 'bbox-3857', path: `/mosaicjson/bbox/-8200000,5700000,-8050000,5850000/256x256.npy?${M}&coord_crs=EPSG:3857&dst_crs=EPSG:3857`, kind: 'npy' },
  { id: 'bbox-outside', path: `/mosaicjson/bbox/10,10,11,11.png?${M}`, kind: 'status', status: 204 },
  { id: 'bbox-no-url', path: '/mosaicjson/bbox/-76,45,-72,47.png', kind: 'status', status: 422 },
  { id: 'bbox-bad-selection', path: `/mosaicjson/bbox/-76,45,-72,47.png?${M}&pixel_selection=nope`, kind: 'status', status: 422 },
  { id: 'feature-npy', path: `/mosaicjson/feature.npy?${M}&max_size=256`, kind: 'npy', body: TRIANGLE },
  { id: 'feature-size-png', path: `/mosaicjson/feature/200x200.png?${M}&rescale=0,20000`, kind: 'png', body: SQUARE },
  { id: 'feature-query-format', path: `/mosaicjson/feature?${M}&max_size=128&format=npy`, kind: 'npy', body: SQUARE },
  { id: 'feature-outside', path: `/mosaicjson/feature.png?${M}`, kind: 'status', status: 204, body: OUTSIDE },
  { id: 'map-bbox', path: `/mosaicjson/map?${M}&bbox=-76,45,-72,47&width=300&height=200&f=png&rescale=0,20000`, kind: 'png' },
  { id: 'map-3857', path: `/mosaicjson/map?${M}&bbox=-75,45.5,-73,46.5&crs=EPSG:3857&width=256&height=256&f=png&rescale=0,20000`, kind: 'png' },
  {
    id: 'map-bbox-crs',
    path: `/mosaicjson/map?${M}&bbox=-8300000,5650000,-8100000,5850000&bbox-crs=EPSG:3857&width=256&height=256&f=png&rescale=0,20000`,
    kind: 'png',
  },
];

interface StatisticsCase {
  id: string;
  path: string;
  body: unknown;
  status: number;
}

const STATISTICS_CASES: StatisticsCase[] = [
  { id: 'statistics-feature', path: `/mosaicjson/statistics?${M}&max_size=256`, body: SQUARE, status: 200 },
  { id: 'statistics-native', path: `/mosaicjson/statistics?${M}`, body: TRIANGLE, status: 200 },
  {
    id: 'statistics-collection',
    path: `/mosaicjson/statistics?${M}&max_size=200&categorical=true&c=6693&c=7000`,
    body: { type: 'FeatureCollection', features: [SQUARE, TRIANGLE] },
    status: 200,
  },
  { id: 'statistics-highest', path: `/mosaicjson/statistics?${M}&max_size=200&pixel_selection=highest&p=5&p=95`, body: TRIANGLE, status: 200 },
  { id: 'statistics-outside', path: `/mosaicjson/statistics?${M}`, body: OUTSIDE, status: 204 },
  // An expression's outputs, numbered b1 … bn as rio-tiler 9 names them (two blocks: b1, b2).
  { id: 'statistics-expression', path: `/mosaicjson/statistics?${M}&max_size=200&expression=b1/2;b2*2`, body: SQUARE, status: 200 },
];

describe('parity with TiTiler 2.4.0 (TESSERA_TITILER_API=2): mosaic area reads', { timeout: 600_000 }, () => {
  let p: Parity;
  const rows: ReportRow[] = [];
  const figures: string[] = ['| case | shape | dtype | values within ±1 | mask equal |', '| --- | --- | --- | --- | --- |'];
  const withMosaic = (template: string): string => template.replace('{mosaic}', encodeURIComponent(`${p.fileserver.url}/mosaics/fixture.json`));

  before(async () => {
    p = await startParity(TESSERA_COMMAND, { reference: reference(), candidateEnv: { TESSERA_TITILER_API: '2' } });
    p.fileserver.put('/mosaics/fixture.json', JSON.stringify(await fixtureMosaic(p.fileserver.url)));
  });

  after(async () => {
    const intro =
      "tessera (TESSERA_TITILER_API=2) against titiler.application 2.4.0 with its MosaicTilerFactory's add_part, add_statistics and add_ogc_maps on (tools/parity/titiler2_mosaic_areas.py): /mosaicjson/bbox, /feature, POST /statistics and /map.";
    await writeReport(rows, [intro], ['## Figures', '', ...figures], 'titiler2-mosaic-areas', 'TiTiler 2.4.0');
    await p?.stop();
  });

  for (const c of PIXEL_CASES) it(c.id, () => runPixelCase(p, { ...c, path: withMosaic(c.path) }, rows, figures));

  for (const c of STATISTICS_CASES) {
    it(c.id, async () => {
      const x = await fetchBoth(p, withMosaic(c.path), c.body);
      const request = `POST ${c.path}`;
      try {
        assert.equal(x.titiler.status, c.status, `reference status (${x.titiler.body.toString().slice(0, 200)})`);
        assert.equal(x.tessera.status, x.titiler.status, `tessera: ${x.tessera.body.toString().slice(0, 300)}`);
        if (c.status === 200) {
          assert.equal(x.tessera.type, x.titiler.type, 'media type');
          const found = compareJson(parseJson(x.titiler.body.toString()), parseJson(x.tessera.body.toString()), { normalise: p.normalise });
          assert.equal(found.length, 0, formatDifferences(found));
        }
        rows.push({ id: c.id, request, verdict: 'equal', note: `both ${c.status}` });
      } catch (err) {
        rows.push({ id: c.id, request, verdict: 'differs', note: (err as Error).message.split('\n')[0]! });
        throw err;
      }
    });
  }

  // TiTiler 2.4.0's mosaic backends have no preview: /map without a bbox is its NotImplementedError (501).
  it('map-no-bbox', async () => {
    const x = await fetchBoth(p, withMosaic(`/mosaicjson/map?${M}`));
    assert.equal(x.titiler.status, 501);
    assert.equal(x.tessera.status, 400);
    assert.match(x.tessera.body.toString(), /"detail":"bbox is required/);
    rows.push({
      id: 'map-no-bbox',
      request: `GET /mosaicjson/map?${M}`,
      verdict: 'deliberate',
      note: 'TiTiler 501 (no preview for a mosaic); tessera 400 with a detail',
    });
  });
});
