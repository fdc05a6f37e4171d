/**
 * TiTiler 2.x's STAC asset syntax over HTTP, tessera alone: per-asset options in `assets`
 * (`name|bidx=…|expression=…|bands=…`), `:all:`, positional expressions (`b1 …` across the assets
 * in order), answered under both settings of TESSERA_TITILER_API since only 2.x clients send them;
 * the 0.18 forms (`asset_bidx`, `asset_b1` expressions) beside them; and the client mistakes
 * answered 400/404 with a detail. Agreement with TiTiler 2.4.0 is test/parity/titiler2-assets.test.ts's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFileServer, fixtureItem, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { parseNpy } from './helpers/npy.js';

const q = encodeURIComponent;
const TILE = '/stac/tiles/WebMercatorQuad/8/144/103';
const POINT = '/stac/point/23.7,32.0';

interface Point {
  values: number[];
  band_names: string[];
}

/** The fixture item's TCI asset with `eo:bands`, beside B01 and B09 (no band metadata). */
async function bandsItem(base: string): Promise<string> {
  const doc = JSON.parse(await fixtureItem(base)) as { assets: Record<string, unknown> };
  doc.assets['tci'] = {
    href: `${base}/TCI.tif`,
    type: 'image/tiff; application=geotiff; profile=cloud-optimized',
    'eo:bands': [
      { name: 'B04', common_name: 'red' },
      { name: 'B03', common_name: 'green' },
      { name: 'B02', common_name: 'blue' },
    ],
  };
  return JSON.stringify(doc);
}

for (const api of ['0.18', '2'] as const) {
  describe(`TiTiler 2.x STAC asset syntax (TESSERA_TITILER_API=${api})`, { timeout: 120_000 }, () => {
    let files: FileServer;
    let server: RunningTessera;
    let item: string;

    before(async () => {
      files = await startFileServer(FIXTURES);
      files.put('/item.json', await bandsItem(files.url));
      item = q(`${files.url}/item.json`);
      server = await startTessera({ titilerApi: api, maxAssets: 2 });
    });

    after(async () => {
      await server?.close();
      await files?.close();
    });

    async function point(query: string): Promise<Point> {
      const res = await server.get(`${POINT}?url=${item}&${query}`);
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as Point;
    }

    async function refused(path: string, status: number, detail: RegExp): Promise<void> {
      const res = await server.get(path);
      assert.equal(res.status, status, await res.clone().text());
      const body = (await res.json()) as { detail: unknown };
      assert.equal(typeof body.detail, 'string');
      assert.match(String(body.detail), detail);
    }

    it('reads the bands an asset names with bidx, in their order', async () => {
      const all = await point('assets=tci');
      const picked = await point(`assets=${q('tci|bidx=3,1')}`);
      assert.deepEqual(picked.values, [all.values[2], all.values[0]]);
      assert.deepEqual(picked.band_names, ['b1', 'b2']);
      const res = await server.get(`${TILE}.npy?url=${item}&assets=${q('tci|bidx=2')}`);
      assert.equal(res.status, 200);
      assert.deepEqual(parseNpy(Buffer.from(await res.arrayBuffer())).shape, [2, 256, 256]);
    });

    it("evaluates an asset's expression over its own bands before stacking", async () => {
      const b01 = await point('assets=B01');
      const p = await point(`assets=${q('B01|expression=b1*2;b1+1')}&assets=${q('tci|bidx=1')}`);
      assert.equal(p.values.length, 3);
      assert.equal(p.values[0], b01.values[0]! * 2);
      assert.equal(p.values[1], b01.values[0]! + 1);
    });

    it('picks bands by their STAC common name (eo:bands), not a shadowed name', async () => {
      const all = await point('assets=tci');
      const p = await point(`assets=${q('tci|bands=blue,red')}`);
      assert.deepEqual(p.values, [all.values[2], all.values[0]]);
      await refused(`${TILE}.png?url=${item}&assets=${q('tci|bands=B04')}`, 400, /Band 'B04' not found/);
      await refused(`${TILE}.png?url=${item}&assets=${q('B01|bands=red')}`, 400, /does not have 'bands' metadata/);
    });

    it('numbers bands across the assets in the order given for a positional expression', async () => {
      const b01 = await point('assets=B01');
      const b09 = await point('assets=B09');
      const p = await point(`assets=B09&assets=B01&expression=${q('b1-b2;b2')}`);
      assert.deepEqual(p.values, [b09.values[0]! - b01.values[0]!, b01.values[0]]);
      assert.deepEqual(p.band_names, ['b1', 'b2']);
      const res = await server.get(`${TILE}.npy?url=${item}&assets=B01&assets=B09&expression=${q('b2/b1')}`);
      assert.equal(res.status, 200);
      assert.deepEqual(parseNpy(Buffer.from(await res.arrayBuffer())).shape, [2, 256, 256]);
      await refused(`${TILE}.png?url=${item}&assets=B01&expression=${q('b2')}`, 400, /unknown name 'b2'/);
    });

    it('keeps the 0.18 forms: asset_bidx, and expressions over asset_b1 that find their assets', async () => {
      const all = await point('assets=tci');
      const p = await point(`assets=tci&asset_bidx=${q('tci|3')}`);
      assert.deepEqual(p.values, [all.values[2]]);
      assert.deepEqual(p.band_names, api === '2' ? ['b1'] : ['tci_b3']);
      if (api === '0.18') {
        const e = await point(`expression=${q('B01_b1*2')}`);
        assert.deepEqual(e.band_names, ['B01_b1*2']);
        await refused(`${TILE}.png?url=${item}&expression=${q('b1*2')}`, 400, /Could not find any valid assets/);
      } else {
        // 2.x requires `assets` (the collision stacAssets): an expression does not stand in for it.
        const res = await server.get(`${POINT}?url=${item}&expression=${q('B01_b1*2')}`);
        assert.equal(res.status, 422);
        assert.deepEqual(await res.json(), { detail: [{ type: 'missing', loc: ['query', 'assets'], msg: 'Field required', input: null }] });
      }
    });

    it('names the bands of a plain read as the setting says (the collision stacBandNames)', async () => {
      const p = await point('assets=B09&assets=B01');
      assert.deepEqual(p.band_names, api === '2' ? ['b1', 'b2'] : ['B09_b1', 'B01_b1']);
      const asBand = await point('assets=B09&assets=B01&asset_as_band=true');
      assert.deepEqual(asBand.band_names, api === '2' ? ['b1', 'b2'] : ['B09', 'B01']);
      const res = await server.get(`/stac/statistics?url=${item}&assets=B01&max_size=64`);
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys((await res.json()) as object), [api === '2' ? 'b1' : 'B01_b1']);
      // An expression over asset_b1 names reads them as 0.18's, whatever the setting.
      assert.deepEqual((await point(`assets=B01&expression=${q('B01_b1+1')}`)).band_names, ['B01_b1+1']);
    });

    it(':all: reads every asset where TiTiler 2.x expands it, within TESSERA_MAX_ASSETS', async () => {
      // maxAssets is 2 here: the item's three assets are refused, before any is opened.
      await refused(`/stac/statistics?url=${item}&assets=:all:`, 400, /TESSERA_MAX_ASSETS/);
      await refused(`/stac/asset_statistics?url=${item}&assets=:all:`, 400, /TESSERA_MAX_ASSETS/);
      await refused(`/stac/info?url=${item}&assets=:all:`, 400, /TESSERA_MAX_ASSETS/);
      // A tile takes it as a name, as TiTiler 2.4.0 does.
      await refused(`${TILE}.png?url=${item}&assets=:all:`, 404, /':all:' is not valid/);
    });

    it('keys /asset_statistics by the asset and its options, as rio-tiler 9', async () => {
      const res = await server.get(`/stac/asset_statistics?url=${item}&assets=${q('tci|bidx=3,1')}&assets=${q('B01|expression=b1 * 2')}&max_size=64`);
      assert.equal(res.status, 200, await res.clone().text());
      const body = (await res.json()) as Record<string, Record<string, { max: number }>>;
      assert.deepEqual(Object.keys(body), ['tci|indexes=[3,1]', 'B01|expression=b1*2']);
      assert.deepEqual(Object.keys(body['tci|indexes=[3,1]']!), ['b3', 'b1']);
      assert.deepEqual(Object.keys(body['B01|expression=b1*2']!), ['b1']);
      const plain = (await (await server.get(`/stac/asset_statistics?url=${item}&assets=B01&max_size=64`)).json()) as Record<
        string,
        Record<string, { max: number }>
      >;
      assert.equal(body['B01|expression=b1*2']!['b1']!.max, plain['B01']!['b1']!.max * 2);
      const bands = (await (await server.get(`/stac/asset_statistics?url=${item}&assets=${q('tci|bands=green')}&max_size=64`)).json()) as object;
      assert.deepEqual(Object.keys(bands), ["tci|bands=['green']"]);
      // The same asset given with different options is read once for each (the same value twice, once).
      const twice = await server.get(`/stac/asset_statistics?url=${item}&assets=B01&assets=${q('B01|expression=b1*2')}&assets=B01&max_size=64`);
      const both = (await twice.json()) as Record<string, Record<string, { max: number; description?: string }>>;
      assert.deepEqual(Object.keys(both), ['B01', 'B01|expression=b1*2']);
      assert.equal(both['B01|expression=b1*2']!['b1']!.max, both['B01']!['b1']!.max * 2);
      // Described as rio-tiler 9 describes them under 2 (the collision describedBands), not at all under 0.18.
      assert.deepEqual(
        [both['B01']!['b1']!.description, both['B01|expression=b1*2']!['b1']!.description],
        api === '2' ? ['b1', 'b1*2'] : [undefined, undefined],
      );
    });

    it('refuses malformed options with a detail', async () => {
      await refused(`${TILE}.png?url=${item}&assets=${q('tci|bidx')}`, 400, /expected key=value/);
      await refused(`${TILE}.png?url=${item}&assets=${q('tci|bidx=0')}`, 400, /1-based band indexes/);
      await refused(`${TILE}.png?url=${item}&assets=${q('tci|bidx=a')}`, 400, /1-based band indexes/);
      await refused(`${TILE}.png?url=${item}&assets=${q('tci|expression=b1+')}`, 400, /expression/i);
      await refused(`${TILE}.png?url=${item}&assets=${q('tci|expression=b4')}`, 400, /band index 4|b4/);
      await refused(`${TILE}.png?url=${item}&assets=${q('nope|bidx=1')}`, 404, /'nope' is not valid/);
    });
  });
}

describe(':all: within the asset limit', { timeout: 60_000 }, () => {
  it('describes every asset', async () => {
    const files = await startFileServer(FIXTURES);
    files.put('/item.json', await fixtureItem(files.url));
    const server = await startTessera({ titilerApi: '2' });
    try {
      const res = await server.get(`/stac/info?url=${q(`${files.url}/item.json`)}&assets=:all:`);
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys((await res.json()) as object), ['B01', 'B09']);
      const stats = await server.get(`/stac/statistics?url=${q(`${files.url}/item.json`)}&assets=:all:&max_size=64`);
      assert.equal(stats.status, 200);
      assert.deepEqual(Object.keys((await stats.json()) as object), ['b1', 'b2']);
    } finally {
      await server.close();
      await files.close();
    }
  });
});
