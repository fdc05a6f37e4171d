/**
 * A STAC item's `renders` over HTTP (TiTiler 2.x's render extension, issue 37): `/stac/renders` and
 * `/stac/renders/{render_id}` under both settings, each render's validity asked of the TileJSON route
 * (also behind an access token), its links, and TileJSON 3.0.0's `raster_layers`. Parity with
 * TiTiler 2.4.0: test/parity/titiler2-core.test.ts (renders-*).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFileServer, fixtureItem, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

interface RenderItem {
  valid: boolean;
  params: Record<string, unknown>;
  links: Array<{ href: string; rel: string; title: string; templated?: boolean }>;
}

function item(base: string, renders: Record<string, unknown>): string {
  return JSON.stringify({
    type: 'Feature',
    stac_version: '1.0.0',
    stac_extensions: [],
    id: 'renders',
    properties: { datetime: '2020-01-01T00:00:00Z', renders },
    geometry: null,
    bbox: [23.106076, 31.505174, 24.296465, 32.519335],
    links: [],
    assets: {
      B01: { href: `${base}/B01.tif`, type: 'image/tiff; application=geotiff' },
      tci: { href: `${base}/TCI.tif`, type: 'image/tiff; application=geotiff' },
    },
  });
}

describe('STAC renders: /stac/renders, /stac/renders/{render_id}, raster_layers', () => {
  let files: FileServer;
  let v018: RunningTessera;
  let v2: RunningTessera;
  let guarded: RunningTessera;
  let url: string;

  before(async () => {
    files = await startFileServer(FIXTURES);
    const renders = {
      gray: { title: 'B01', assets: ['B01'], rescale: [[0, 10000]], colormap_name: 'viridis' },
      rgb: { assets: ['tci'], asset_bidx: 'tci|3,2,1', minmax_zoom: [8, 14] },
      broken: { assets: ['B01'], rescale: 'zero,ten' },
    };
    files.put('/renders.json', item(files.url, renders));
    files.put('/many.json', item(files.url, Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`r${i}`, { assets: ['B01'] }]))));
    url = encodeURIComponent(`${files.url}/renders.json`);
    [v018, v2, guarded] = await Promise.all([startTessera(), startTessera({ titilerApi: '2' }), startTessera({ accessToken: 'secret' })]);
  });
  after(async () => {
    await Promise.all([v018?.close(), v2?.close(), guarded?.close()]);
    await files?.close();
  });

  it('lists the renders under both settings, valid where a tile takes their parameters, with their links', async () => {
    for (const server of [v018, v2]) {
      const res = await server.get(`/stac/renders?url=${url}`);
      assert.equal(res.status, 200, await res.clone().text());
      const body = (await res.json()) as { renders: Record<string, RenderItem>; links: Array<{ rel: string }> };
      assert.deepEqual(Object.keys(body.renders), ['gray', 'rgb', 'broken']);
      assert.deepEqual(
        Object.values(body.renders).map((r) => r.valid),
        [true, true, false],
      );
      // 0.18's asset_bidx becomes 2.x's per-asset option.
      assert.deepEqual(body.renders['rgb']!.params['assets'], ['tci|bidx=3,2,1']);
      const gray = body.renders['gray']!;
      assert.deepEqual(
        gray.links.map((l) => l.rel),
        ['self', 'tilesets-map', 'tilesets-map'],
      );
      assert.equal(body.renders['broken']!.links.length, 1, 'an invalid render links only to itself');
      // The TileJSON link works once its grid is filled in.
      const tilejson = gray.links[1]!.href.replace('%7BtileMatrixSetId%7D', 'WebMercatorQuad').replace(server.url, '');
      const doc = await server.get(tilejson);
      assert.equal(doc.status, 200, await doc.clone().text());
      assert.match(((await doc.json()) as { tiles: string[] }).tiles[0]!, /colormap_name=viridis/);
    }
    const one = (await (await v2.get(`/stac/renders/rgb?url=${url}`)).json()) as RenderItem;
    assert.equal(one.valid, true);
    assert.deepEqual(one.params['minmax_zoom'], [8, 14]);
    const missing = await v2.get(`/stac/renders/nope?url=${url}`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { detail: 'Render not found' });
  });

  it('checks renders behind an access token with the request’s token, and bounds how many are listed', async () => {
    const res = await guarded.get(`/stac/renders?url=${url}&access_token=secret`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { renders: Record<string, RenderItem> };
    assert.equal(body.renders['gray']!.valid, true);
    const many = await v2.get(`/stac/renders?url=${encodeURIComponent(`${files.url}/many.json`)}`);
    assert.equal(many.status, 400);
    assert.match(((await many.json()) as { detail: string }).detail, /at most 100/);
  });

  it("writes the item's renders as TileJSON 3.0.0's raster_layers (under 2)", async () => {
    const doc = (await (await v2.get(`/stac/WebMercatorQuad/tilejson.json?url=${url}&assets=B01`)).json()) as { raster_layers: Record<string, unknown> };
    assert.deepEqual(Object.keys(doc.raster_layers), ['gray', 'rgb', 'broken']);
    assert.deepEqual(doc.raster_layers['rgb'], { assets: ['tci'], asset_bidx: 'tci|3,2,1', minmax_zoom: [8, 14] });
  });
  it("lists a WMTS layer per valid render and grid before the query's own (under 2), their tiles carrying the item", async () => {
    const res = await v2.get(`/stac/WMTSCapabilities.xml?url=${url}&assets=B01`);
    assert.equal(res.status, 200, await res.clone().text());
    const xml = await res.text();
    const ids = [...xml.matchAll(/<Layer>\s*<ows:Title>([^<]+)<\/ows:Title>/g)].map((m) => m[1]!);
    const title = `${files.url}/renders.json`;
    const grids = ids.filter((id) => id.endsWith('_default')).map((id) => id.slice(title.length + 1, -'_default'.length));
    assert.ok(grids.includes('WebMercatorQuad'));
    assert.deepEqual(
      ids,
      [...grids.map((g) => `${title}_${g}_gray`), ...grids.map((g) => `${title}_${g}_rgb`), ...grids.map((g) => `${title}_${g}_default`)],
      'gray and rgb (valid), not broken, then the default layer',
    );
    const template = /template="([^"]+)"/.exec(xml.slice(xml.indexOf('_WebMercatorQuad_gray')))![1]!.replace(/&amp;/g, '&');
    assert.match(template, /\?url=[^&]+&title=B01&assets=B01&rescale=/);
    // The template's tile answers.
    const tile = await v2.get(template.replace(v2.url, '').replace('{TileMatrix}', '8').replace('{TileCol}', '144').replace('{TileRow}', '103'));
    assert.equal(tile.status, 200, await tile.clone().text());
  });
  it('lists the renders alone when the query makes no layer of its own, and refuses a document with no layer at all (under 2)', async () => {
    const res = await v2.get(`/stac/WMTSCapabilities.xml?url=${url}`);
    assert.equal(res.status, 200, await res.clone().text());
    const ids = [...(await res.text()).matchAll(/<Layer>\s*<ows:Title>([^<]+)<\/ows:Title>/g)].map((m) => m[1]!);
    assert.ok(ids.length > 0);
    assert.ok(
      ids.every((id) => id.endsWith('_gray') || id.endsWith('_rgb')),
      'no default layer',
    );
    files.put('/no-renders.json', await fixtureItem(files.url));
    const none = await v2.get(`/stac/WMTSCapabilities.xml?url=${encodeURIComponent(`${files.url}/no-renders.json`)}`);
    assert.equal(none.status, 400);
    assert.deepEqual(await none.json(), { detail: 'Could not find any valid layers in metadata or construct one from Query Parameters.' });
  });
});
