/**
 * Client mistakes that once answered 5xx (found by fuzzing every route): each is now a 4xx with a
 * JSON `{"detail"}` at once, and the server keeps serving. One case per defect, over HTTP against
 * the fixture item and mosaic on the Range file server.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FIXTURES, fixtureItem, fixtureMosaic, startFileServer, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera, type TestRequest } from './helpers/tessera.js';

let files: FileServer;
let tessera: RunningTessera;
let item: string;
let mosaic: string;

const q = encodeURIComponent;
const polygon = (ring: number[][]): string => JSON.stringify({ type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [ring] } });

before(async () => {
  files = await startFileServer(FIXTURES);
  files.put('/item.json', await fixtureItem(files.url));
  const doc = await fixtureMosaic(files.url);
  files.put('/mosaic.json', JSON.stringify(doc));
  item = q(`${files.url}/item.json`);
  mosaic = q(`${files.url}/mosaic.json`);
  tessera = await startTessera();
});

after(async () => {
  await tessera.close();
  await files.close();
});

async function clientMistake(p: string, pattern: RegExp, init?: TestRequest): Promise<void> {
  const started = Date.now();
  const res = await tessera.request(`${p}`, init);
  const text = await res.text();
  assert.ok(res.status >= 400 && res.status < 500, `${p.slice(0, 120)} → ${res.status} ${text.slice(0, 200)}`);
  assert.equal(res.headers.get('content-type')?.split(';')[0], 'application/json');
  assert.match((JSON.parse(text) as { detail: string }).detail, pattern);
  assert.ok(Date.now() - started < 3000, `${p.slice(0, 120)} took ${Date.now() - started} ms`);
}

describe('client mistakes that answered 5xx', () => {
  it('huge padding and buffer', async () => {
    for (const padding of ['100000', '2147483648', '9007199254740992']) {
      await clientMistake(`/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${mosaic}&padding=${padding}`, /Invalid padding .*at most 1024/);
    }
    await clientMistake(`/stac/tiles/WebMercatorQuad/8/144/103.png?url=${item}&assets=B01&buffer=100000`, /Invalid buffer .*at most 1024/);
  });

  it('a mosaic expression that names no band', async () => {
    await clientMistake(`/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${mosaic}&expression=-1`, /Could not find any valid bands in '-1'/);
  });

  it('lastband pixel selection over one band', async () => {
    await clientMistake(`/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${mosaic}&bidx=1&pixel_selection=lastbandlow`, /needs at least two bands/);
  });

  it('CRSs PROJ cannot reach, on every route that takes one', async () => {
    for (const crs of ['IAU_2015:30100', '+proj=longlat +a=1e308 +b=1e308']) {
      await clientMistake(
        `/stac/bbox/23.8,32.0,23.9,32.1.png?url=${item}&assets=B01&dst_crs=${q(crs)}`,
        /Cannot transform|cannot be reprojected|Cannot reproject/,
      );
      await clientMistake(`/stac/preview.png?url=${item}&assets=B01&dst_crs=${q(crs)}`, /Cannot transform|cannot be reprojected|Cannot reproject/);
      await clientMistake(`/stac/feature.png?url=${item}&assets=B01&dst_crs=${q(crs)}`, /Cannot transform|cannot be reprojected|Cannot reproject/, {
        method: 'POST',
        body: polygon([
          [23.8, 32],
          [23.9, 32],
          [23.9, 32.1],
          [23.8, 32],
        ]),
        headers: { 'content-type': 'application/json' },
      });
    }
  });

  it('path pieces of thousands of characters', async () => {
    await clientMistake(`/stac/tiles/WebMercatorQuad/8/144/${'1'.repeat(3000)}.png?url=${item}&assets=B01`, /is not a tile of/);
  });

  it('polygons with coordinates of ±1e308', async () => {
    const huge = polygon([
      [-1e308, -1e308],
      [1e308, -1e308],
      [1e308, 1e308],
      [-1e308, -1e308],
    ]);
    const res = await tessera.request(`/stac/statistics?url=${item}&assets=B01`, {
      method: 'POST',
      body: huge,
      headers: { 'content-type': 'application/json' },
    });
    assert.ok(res.status < 500, `${res.status} ${await res.clone().text()}`);
    await clientMistake(`/stac/feature.png?url=${item}&assets=B01`, /outside dataset bounds|too large/, {
      method: 'POST',
      body: huge,
      headers: { 'content-type': 'application/json' },
    });
  });

  /** Serves `name` from the fixtures whole, whatever Range asks, as the only asset of an item; returns the info answer. */
  async function infoFromServerWithoutRange(name: string): Promise<{ status: number; text: string; fetched: number }> {
    const body = await fs.readFile(path.join(FIXTURES, name));
    let fetched = 0;
    const whole = createServer((_req, res) => {
      fetched++;
      res.writeHead(200, { 'Content-Length': body.length, 'Content-Type': 'image/tiff' }).end(body);
    });
    await new Promise<void>((resolve) => whole.listen(0, '127.0.0.1', resolve));
    try {
      const doc = JSON.parse(await fixtureItem(files.url)) as { assets: Record<string, unknown> };
      doc.assets = { data: { href: `http://127.0.0.1:${(whole.address() as AddressInfo).port}/${name}`, type: 'image/tiff' } };
      files.put(`/no-range-${name}.json`, JSON.stringify(doc));
      const res = await tessera.request(`/stac/info?url=${q(`${files.url}/no-range-${name}.json`)}&assets=data`);
      return { status: res.status, text: await res.text(), fetched };
    } finally {
      whole.closeAllConnections();
      await new Promise<void>((resolve) => whole.close(() => resolve()));
    }
  }

  it('reads a small file whole (within the byte budget) from an upstream that ignores Range', async () => {
    const { status, text } = await infoFromServerWithoutRange('B01.tif');
    assert.equal(status, 200, text);
    assert.equal((JSON.parse(text) as { data: { width: number } }).data.width, 183);
  });

  it('says that an upstream ignores Range when a large file comes whole (502, not "not a raster")', async () => {
    const { status, text, fetched } = await infoFromServerWithoutRange('cog1.tif');
    assert.equal(status, 502, text);
    assert.match(JSON.parse(text).detail, /does not support HTTP range requests/);
    assert.ok(fetched > 0 && fetched <= 8, `${fetched} upstream requests`);
  });

  it('keeps serving', async () => {
    const res = await tessera.request(`/healthz`);
    assert.equal(res.status, 200);
  });
});
