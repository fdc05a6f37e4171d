/**
 * The catalogue without a database equals pgSTAC, measured: the generated catalogue of the pgSTAC
 * tests (test/helpers/pgstac.ts, 1,080 items over real COGs) loaded into pgSTAC by pypgstac and
 * written as stac-geoparquet by rustac (test/helpers/geoparquet.ts), one tessera over each
 * (TESSERA_PGSTAC_DSN, TESSERA_CATALOG). The same searches and collection queries get the same ids,
 * and for a seeded grid of tiles (zoom 4 to 12), points and bboxes, with pgSTAC's limits at their
 * defaults and varied, the same items in the same order with the same assets; a sample of tiles
 * decodes to the same pixels. The figures are printed (docs/catalogue.md has the latest).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { startFileServer, type FileServer } from './helpers/fileserver.js';
import { ensureCatalogueData, startCatalogue, type Catalogue } from './helpers/pgstac.js';
import { writeGeoparquet } from './helpers/geoparquet.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { compareLookups, pgstacRowSizes, lookupCases, random, SEARCHES, tileOf } from './helpers/catalog-grid.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

describe('the stac-geoparquet catalogue equals pgSTAC on the same items', () => {
  let files: FileServer;
  let tmp: string;
  let catalogue: Catalogue;
  let overPgstac: RunningTessera;
  let overParquet: RunningTessera;
  /** Search name → id (the same in both, checked). */
  const ids = new Map<string, string>();

  before(async () => {
    const data = await ensureCatalogueData((line) => console.log(line));
    files = await startFileServer(data);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-catalog-pgstac-'));
    catalogue = await startCatalogue(files.url, tmp);
    const folder = path.join(tmp, 'geoparquet');
    mkdirSync(folder);
    await writeGeoparquet(path.join(tmp, 'items.ndjson'), path.join(folder, 'items.parquet'));
    for (const c of ['alpha.json', 'beta.json']) copyFileSync(path.join(tmp, c), path.join(folder, c));
    // Nothing kept over pgSTAC: a lookup asked again is asked of the database again.
    overPgstac = await startTessera({ pgstacDsn: catalogue.dsn, pgstacCacheTtlSeconds: 0, tileCacheBytes: 0, mosaicConcurrency: 2 });
    overParquet = await startTessera({ catalog: folder, catalogSearches: path.join(tmp, 'searches.json'), tileCacheBytes: 0, mosaicConcurrency: 2 });
  });

  after(async () => {
    await overParquet?.close();
    await overPgstac?.close();
    await catalogue?.stop();
    await files?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("registers every search under pgSTAC's id", async () => {
    for (const { name, body } of SEARCHES) {
      const answers: string[] = [];
      for (const t of [overPgstac, overParquet]) {
        const res = await t.request('/searches/register', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ ...body, metadata: { name } }) });
        const text = await res.text();
        assert.equal(res.status, 200, `${name}: ${text}`);
        answers.push((JSON.parse(text) as { id: string }).id);
      }
      assert.equal(answers[1], answers[0], `${name}: the same id`);
      ids.set(name, answers[0]!);
    }
    // Listed alike: the same records, the same page.
    const lists = await Promise.all([overPgstac, overParquet].map(async (t) => (await t.get('/searches/?limit=100&sortby=name')).json()));
    const names = lists.map((l) => (l as { searches: Array<{ search: { hash: string } }> }).searches.map((s) => s.search.hash));
    assert.deepEqual(names[1], names[0]);
  });

  it('finds the same items in the same order for every tile, point and bbox of the grid', async () => {
    console.log([...ids].map(([n, id]) => `${id}: ${n}`).join('\n'));
    const cases = lookupCases(ids);
    const { same, heap, noise, differ, items } = await compareLookups(
      overPgstac,
      overParquet,
      cases,
      catalogue.items,
      { psql: catalogue.psql, sizes: await pgstacRowSizes(catalogue.psql) },
      'geoparquet',
    );
    console.log(
      `catalog-pgstac: ${cases.length} lookups, ${same} equal, ${heap} equal in the order pgSTAC's temporary table holds them, ${noise} equal but for items pgSTAC keeps that cover nothing new (GEOS's rounding), ${differ.length} differ; ${items} items found by pgSTAC`,
    );
    assert.ok(items > 3000, `the grid finds items (${items})`);
    // Every difference explained: pgSTAC's answer is its temporary table's order of the items its
    // loop found in the search's order (heapOrder, checked against psql), and those are tessera's
    // items, or tessera's with items that cover nothing new.
    assert.equal(differ.length, 0, `${differ.length} lookups differ:\n${differ.slice(0, 5).join('\n')}`);
  });

  it('makes the same tiles', async () => {
    const next = random(7);
    let compared = 0;
    for (const name of [...ids.keys()].slice(0, 4)) {
      for (let k = 0; k < 3; k++) {
        const z = 7 + k;
        const [x, y] = tileOf(5 + next() * 7, 43 + next() * 4, z);
        const url = `/searches/${ids.get(name)}/tiles/WebMercatorQuad/${z}/${x}/${y}.png?assets=visual&skipcovered=false&exitwhenfull=false&items_limit=6`;
        const a = await overPgstac.get(url);
        const b = await overParquet.get(url);
        if (b.status !== a.status) assert.fail(`${url}: ${a.status} ${await a.text()} / ${b.status} ${await b.text()}`);
        if (a.status !== 200) continue;
        assert.equal(b.headers.get('x-assets'), a.headers.get('x-assets'), url);
        const [pa, pb] = await Promise.all(
          [a, b].map(async (r) =>
            sharp(Buffer.from(await r.arrayBuffer()))
              .raw()
              .toBuffer(),
          ),
        );
        assert.ok(pa!.equals(pb!), `${url}: the same pixels`);
        compared++;
      }
    }
    assert.ok(compared >= 6, `tiles compared: ${compared}`);
  });
});
