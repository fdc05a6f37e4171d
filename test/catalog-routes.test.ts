/**
 * /searches and /collections over a catalogue without a database (TESSERA_CATALOG): the pgSTAC
 * tests' generated catalogue written as stac-geoparquet by rustac, its COGs on the test's file
 * server, tessera serving it. Registering (pgSTAC's hash), info, TileJSON, the items of a tile and
 * a point, a tile's pixels, a collection's mosaic; searches kept across a restart; a filter
 * operator tessera does not read is a 400 naming it; damaged and hostile files (not Parquet, a
 * footer claiming gigabytes, billions of rows, a wrong schema, more items than allowed) are a clear
 * 502 and the rest of the server keeps answering. Equality with pgSTAC: test/catalog-pgstac.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { startFileServer, type FileServer } from './helpers/fileserver.js';
import { ensureCatalogueData, writeCatalogueFiles, type CatalogueItem } from './helpers/pgstac.js';
import { writeGeoparquet } from './helpers/geoparquet.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

async function register(t: RunningTessera, body: unknown): Promise<{ status: number; id?: string; detail?: string }> {
  const res = await t.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) });
  const doc = (await res.json()) as { id?: string; detail?: string };
  return { status: res.status, ...doc };
}

/** A copy of `file` whose footer `edit` rewrote (its length field kept right). */
function withFooter(file: string, out: string, edit: (footer: Buffer) => Buffer): void {
  const bytes = readFileSync(file);
  const length = bytes.readUInt32LE(bytes.length - 8);
  const footer = edit(Buffer.from(bytes.subarray(bytes.length - 8 - length, bytes.length - 8)));
  const tail = Buffer.alloc(8);
  tail.writeUInt32LE(footer.length, 0);
  tail.write('PAR1', 4, 'latin1');
  writeFileSync(out, Buffer.concat([bytes.subarray(0, bytes.length - 8 - length), footer, tail]));
}

/** Thrift's compact varint of a zigzag i64. */
function zigzagVarint(n: bigint): Buffer {
  let v = n << 1n;
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number((v & 0x7fn) | 0x80n));
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

describe('/searches over stac-geoparquet (TESSERA_CATALOG)', () => {
  let files: FileServer;
  let tmp: string;
  let folder: string;
  let items: CatalogueItem[];
  let tessera: RunningTessera;

  before(async () => {
    const data = await ensureCatalogueData((line) => console.log(line));
    files = await startFileServer(data);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-catalog-'));
    ({ items } = await writeCatalogueFiles(files.url, tmp));
    folder = path.join(tmp, 'catalog');
    mkdirSync(folder);
    await writeGeoparquet(path.join(tmp, 'items.ndjson'), path.join(folder, 'items.parquet'));
    for (const c of ['alpha.json', 'beta.json']) copyFileSync(path.join(tmp, c), path.join(folder, c));
    tessera = await startTessera({ catalog: folder, catalogSearches: path.join(tmp, 'searches.json'), tileCacheBytes: 0, mosaicConcurrency: 2 });
  });

  after(async () => {
    await tessera?.close();
    await files?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('registers a search, and serves its info, TileJSON, lookups and tiles', async () => {
    const body = { collections: ['alpha'], filter: { op: '<', args: [{ property: 'eo:cloud_cover' }, 50] }, metadata: { name: 'clear alpha', minzoom: 6 } };
    const reg = await register(tessera, body);
    assert.equal(reg.status, 200, reg.detail);
    assert.match(reg.id!, /^[0-9a-f]{32}$/);
    assert.equal((await register(tessera, body)).id, reg.id, 'the same search, the same id');

    const info = (await (await tessera.get(`/searches/${reg.id}/info`)).json()) as {
      search: { hash: string; usecount: number; orderby: string; metadata: Record<string, unknown> };
    };
    assert.equal(info.search.hash, reg.id);
    assert.equal(info.search.usecount, 2);
    assert.equal(info.search.orderby, 'datetime DESC, collection DESC, id DESC');
    assert.equal(info.search.metadata['name'], 'clear alpha');

    const tilejson = (await (await tessera.get(`/searches/${reg.id}/WebMercatorQuad/tilejson.json?assets=visual`)).json()) as {
      minzoom: number;
      tiles: string[];
    };
    assert.equal(tilejson.minzoom, 6);
    assert.match(tilejson.tiles[0]!, new RegExp(`/searches/${reg.id}/tiles/WebMercatorQuad/\\{z\\}/\\{x\\}/\\{y\\}`));

    // The items of a point: every alpha item with cloud < 50 that covers it, newest first.
    const [lon, lat] = [6.6, 44.6];
    const res = await tessera.get(`/searches/${reg.id}/point/${lon},${lat}/assets`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('server-timing') ?? '', /catalog;dur=/);
    const found = (await res.json()) as Array<{ id: string; collection: string; assets: Record<string, unknown> }>;
    const expected = items
      .filter((i) => i.collection === 'alpha' && i.cloud < 50 && lon >= i.bbox[0] && lon <= i.bbox[2] && lat >= i.bbox[1] && lat <= i.bbox[3])
      .sort((a, b) => (a.datetime === b.datetime ? (a.id < b.id ? 1 : -1) : a.datetime < b.datetime ? 1 : -1))
      .map((i) => i.id);
    assert.ok(expected.length > 2);
    assert.deepEqual(
      found.map((i) => i.id),
      expected,
    );
    assert.deepEqual(Object.keys(found[0]!.assets), ['data', 'visual']);

    const tile = await tessera.get(`/searches/${reg.id}/tiles/WebMercatorQuad/8/132/92.png?assets=visual&items_limit=4`);
    assert.equal(tile.status, 200, await tile.clone().text());
    assert.match(tile.headers.get('x-assets') ?? '', /^alpha\/alpha-/);
    const { info: png } = await sharp(Buffer.from(await tile.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.equal(png.width, 256);

    const metrics = await (await tessera.get('/metrics')).text();
    assert.match(metrics, /tessera_catalog_lookup_seconds_count [1-9]/);
  });

  it("serves a collection's mosaic, and 404 for one it does not have", async () => {
    const res = await tessera.get('/collections/beta/tiles/WebMercatorQuad/7/67/46/assets');
    assert.equal(res.status, 200);
    const found = (await res.json()) as Array<{ collection: string }>;
    assert.ok(found.length > 0 && found.every((i) => i.collection === 'beta'));
    assert.equal((await tessera.get('/collections/gamma/info')).status, 404);
  });

  it('serves one item of the catalogue at /collections/{c}/items/{i}, and 404 for one it does not have', async () => {
    const found = (await (await tessera.get('/collections/beta/tiles/WebMercatorQuad/7/67/46/assets')).json()) as Array<{
      id: string;
      assets: Record<string, unknown>;
    }>;
    const item = found[0]!;
    const assets = await tessera.get(`/collections/beta/items/${encodeURIComponent(item.id)}/assets`);
    assert.equal(assets.status, 200);
    assert.deepEqual(await assets.json(), Object.keys(item.assets));
    const asset = Object.keys(item.assets)[0]!;
    const tile = await tessera.get(`/collections/beta/items/${encodeURIComponent(item.id)}/tiles/WebMercatorQuad/7/67/46.png?assets=${asset}`);
    assert.equal(tile.status, 200, await tile.clone().text());
    const missing = await tessera.get('/collections/beta/items/no-such-item/assets');
    assert.equal(missing.status, 404);
  });

  it('answers 400 naming an operator it does not read, and for a bad datetime', async () => {
    const op = await register(tessera, { filter: { op: 't_before', args: [{ property: 'datetime' }, '2023-01-01T00:00:00Z'] } });
    assert.equal(op.status, 400);
    assert.match(op.detail!, /t_before/);
    const dt = await register(tessera, { datetime: 'yesterday' });
    assert.equal(dt.status, 400);
    assert.equal((await tessera.get('/searches/00000000000000000000000000000000/info')).status, 404);
  });

  it("follows a search's policy (tessera:policy): empty tiles below its minzoom, the first N items of a tile", async () => {
    const filter = { op: '<', args: [{ property: 'eo:cloud_cover' }, 80] };
    const open = await register(tessera, { collections: ['alpha'], filter });
    const guarded = await register(tessera, { collections: ['alpha'], filter, metadata: { 'tessera:policy': { minzoom: 8, max_items_per_tile: 2 } } });
    assert.equal(guarded.status, 200, guarded.detail);
    assert.notEqual(guarded.id, open.id, 'the policy is part of the metadata pgSTAC hashes');
    const info = (await (await tessera.get(`/searches/${guarded.id}/info`)).json()) as { search: { metadata: Record<string, unknown> } };
    assert.deepEqual(info.search.metadata['tessera:policy'], { minzoom: 8, max_items_per_tile: 2 });

    // Below the policy's minzoom: titiler-pgstac's answer for a tile without items (204), and no items.
    const low = await tessera.get(`/searches/${guarded.id}/tiles/WebMercatorQuad/7/66/46.png?assets=visual`);
    assert.equal(low.status, 204, await low.clone().text());
    assert.deepEqual(await (await tessera.get(`/searches/${guarded.id}/tiles/WebMercatorQuad/7/66/46/assets`)).json(), []);
    const openLow = (await (await tessera.get(`/searches/${open.id}/tiles/WebMercatorQuad/7/66/46/assets`)).json()) as unknown[];
    assert.ok(openLow.length > 0, 'the same tile has items without the policy');
    const tilejson = (await (await tessera.get(`/searches/${guarded.id}/WebMercatorQuad/tilejson.json?assets=visual`)).json()) as { minzoom: number };
    assert.equal(tilejson.minzoom, 8, "TileJSON's minzoom tells clients not to ask below it");

    // At or above it: the first two of the items the search finds for the tile, in its order, whatever items_limit says.
    const q = 'exitwhenfull=false&skipcovered=false&items_limit=50';
    const all = (await (await tessera.get(`/searches/${open.id}/tiles/WebMercatorQuad/8/132/92/assets?${q}`)).json()) as Array<{ id: string }>;
    assert.ok(all.length > 2, `the tile has ${all.length} items`);
    const firstTwo = (await (await tessera.get(`/searches/${guarded.id}/tiles/WebMercatorQuad/8/132/92/assets?${q}`)).json()) as Array<{ id: string }>;
    assert.deepEqual(
      firstTwo.map((i) => i.id),
      all.slice(0, 2).map((i) => i.id),
    );
    const tile = await tessera.get(`/searches/${guarded.id}/tiles/WebMercatorQuad/8/132/92.png?assets=visual&pixel_selection=lowest&${q}`);
    assert.equal(tile.status, 200, await tile.clone().text());
    const used = (tile.headers.get('x-assets') ?? '').split(',').filter(Boolean);
    assert.ok(used.length > 0 && used.length <= 2, `x-assets: ${used.join(',')}`);

    for (const [policy, detail] of [
      [{ minzoom: -1 }, /minzoom: expected a whole number from 0 to 30/],
      [{ max_items_per_tile: 0 }, /max_items_per_tile: expected a whole number of at least 1/],
      [{ max_zoom: 3 }, /max_zoom: unknown/],
      ['8', /tessera:policy: expected an object/],
    ] as const) {
      const bad = await register(tessera, { collections: ['alpha'], metadata: { 'tessera:policy': policy } });
      assert.equal(bad.status, 400, JSON.stringify(policy));
      assert.match(bad.detail!, detail);
    }
  });

  it("bounds every search's policy by the settings, and reads a collection's from its document", async () => {
    const bounded = path.join(tmp, 'catalog-policy');
    mkdirSync(bounded);
    copyFileSync(path.join(folder, 'items.parquet'), path.join(bounded, 'items.parquet'));
    copyFileSync(path.join(folder, 'beta.json'), path.join(bounded, 'beta.json'));
    const alpha = JSON.parse(readFileSync(path.join(folder, 'alpha.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(path.join(bounded, 'alpha.json'), JSON.stringify({ ...alpha, 'tessera:policy': { minzoom: 10 } }));
    const t = await startTessera({ catalog: bounded, catalogSearches: 'none', tileCacheBytes: 0, searchMinzoom: 9, searchMaxItemsPerTile: 1 });
    try {
      // A search asking for a lower minzoom and more items than the settings allow gets the settings'.
      const reg = await register(t, { collections: ['alpha'], metadata: { 'tessera:policy': { minzoom: 2, max_items_per_tile: 5 } } });
      assert.equal(reg.status, 200, reg.detail);
      assert.equal((await t.get(`/searches/${reg.id}/tiles/WebMercatorQuad/8/132/92.png?assets=visual`)).status, 204);
      const q = 'exitwhenfull=false&skipcovered=false';
      const one = (await (await t.get(`/searches/${reg.id}/tiles/WebMercatorQuad/9/265/184/assets?${q}`)).json()) as unknown[];
      assert.equal(one.length, 1);
      // The collection's own minzoom (10) is stricter than the settings' (9).
      assert.deepEqual(await (await t.get(`/collections/alpha/tiles/WebMercatorQuad/9/265/184/assets?${q}`)).json(), []);
      const at10 = (await (await t.get(`/collections/alpha/tiles/WebMercatorQuad/10/530/368/assets?${q}`)).json()) as unknown[];
      assert.equal(at10.length, 1);
      const tilejson = (await (await t.get('/collections/alpha/WebMercatorQuad/tilejson.json?assets=visual')).json()) as { minzoom: number };
      assert.equal(tilejson.minzoom, 10);
      // beta has no policy of its own: the settings'.
      assert.equal((await t.get('/collections/beta/tiles/WebMercatorQuad/8/132/92.png?assets=visual')).status, 204);
    } finally {
      await t.close();
    }
  });

  it('keeps registered searches across a restart', async () => {
    const reg = await register(tessera, { ids: ['alpha-0-1', 'beta-0-0'], metadata: { name: 'kept' } });
    await tessera.close();
    tessera = await startTessera({ catalog: folder, catalogSearches: path.join(tmp, 'searches.json'), tileCacheBytes: 0, mosaicConcurrency: 2 });
    const info = await tessera.get(`/searches/${reg.id}/info`);
    assert.equal(info.status, 200);
    const list = (await (await tessera.get('/searches/?name=kept')).json()) as { searches: Array<{ search: { hash: string } }> };
    assert.deepEqual(
      list.searches.map((s) => s.search.hash),
      [reg.id],
    );
  });

  it('refuses damaged and hostile files with a clear error, bounded, and keeps serving', async () => {
    const good = path.join(folder, 'items.parquet');
    const cases: Array<[string, (out: string) => void, RegExp, Record<string, unknown>?]> = [
      ['not Parquet', (out) => writeFileSync(out, Buffer.concat([Buffer.from('not a parquet file at all'), Buffer.from('PAR1')])), /footer|Parquet/],
      [
        'a footer claiming gigabytes',
        (out) => {
          const bytes = readFileSync(good);
          bytes.writeUInt32LE(3_000_000_000, bytes.length - 8);
          writeFileSync(out, bytes);
        },
        /footer claims 3000000000 bytes/,
      ],
      [
        'billions of rows',
        (out) =>
          withFooter(good, out, (footer) => {
            // FileMetaData.num_rows (field 3, i64): 1,080 items as thrift writes them, claimed as five billion.
            const at = footer.indexOf(Buffer.concat([Buffer.from([0x16]), zigzagVarint(1080n)]));
            assert.ok(at > 0);
            return Buffer.concat([footer.subarray(0, at + 1), zigzagVarint(5_000_000_000n), footer.subarray(at + 1 + zigzagVarint(1080n).length)]);
          }),
        /5000000000 items, more than/,
      ],
      [
        'a wrong schema',
        (out) => withFooter(good, out, (footer) => Buffer.from(footer.toString('latin1').replaceAll('collection', 'collectioX'), 'latin1')),
        /not stac-geoparquet: no `collection` column/,
      ],
      ['more items than allowed', (out) => copyFileSync(good, out), /1080 items, more than the 100/, { catalogMaxItems: 100 }],
    ];
    for (const [name, write, detail, settings] of cases) {
      const file = path.join(tmp, `${name.replaceAll(' ', '-')}.parquet`);
      write(file);
      const started = Date.now();
      const t = await startTessera({ catalog: file, catalogSearches: 'none', ...settings });
      try {
        const reg = await register(t, { collections: ['alpha'] });
        assert.equal(reg.status, 200, `${name}: a search is registered whatever the items`);
        const res = await t.get(`/searches/${reg.id}/point/5,43/assets`);
        const text = await res.text();
        assert.equal(res.status, 502, `${name}: ${text}`);
        assert.match(text, detail, name);
        assert.ok(Date.now() - started < 5000, `${name}: refused in ${Date.now() - started} ms`);
        assert.equal((await t.get('/healthz')).status, 200, `${name}: the server still answers`);
      } finally {
        await t.close();
      }
    }
  });
});
