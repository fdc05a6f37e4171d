/**
 * `tessera mosaic create|footprint --stac` against a real STAC API: stac-fastapi-pgstac over
 * PostgreSQL/PostGIS (tools/stac-api/setup.sh installs it in a throw-away venv, serve.sh runs it on
 * 127.0.0.1), loaded with items made from the fixture item whose assets point at the fixture COGs on
 * the test's Range file server. The search's filters (collections, bbox, datetime, the Query
 * extension) are the API's to apply; pages of one item make tessera follow the API's POST next
 * links. The document made from the search must be the one made from the same COGs in a list, in
 * the order the API answered (pgstac: newest first).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { run, type Run } from './helpers/run.js';
import { BUILT_CLI, FIXTURES, REPO_ROOT } from './helpers/paths.js';
import { startFileServer, type FileServer } from './helpers/fileserver.js';
import { searchStac, type SearchFetch } from '../src/stac/search.js';
import { bboxPolygon } from './helpers/geojson.js';

const LOOPBACK_ENV = { TESSERA_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' };

function tessera(args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return run(process.execPath, ['--enable-source-maps', BUILT_CLI, 'mosaic', ...args], { input: opts.input ?? '', env: opts.env ?? LOOPBACK_ENV });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An item of `collection` like the fixture item, its one asset `assets` pointing at fixture COGs. */
function item(
  template: Record<string, unknown>,
  id: string,
  collection: string,
  datetime: string,
  cloud: number,
  bbox: number[],
  assets: Record<string, string>,
): Record<string, unknown> {
  return {
    ...template,
    id,
    collection,
    bbox,
    geometry: bboxPolygon(bbox),
    properties: { datetime, 'eo:cloud_cover': cloud },
    assets: Object.fromEntries(Object.entries(assets).map(([k, href]) => [k, { href, type: 'image/tiff; application=geotiff; profile=cloud-optimized' }])),
    links: [],
  };
}

function collection(id: string): Record<string, unknown> {
  return {
    type: 'Collection',
    stac_version: '1.0.0',
    id,
    description: `test collection ${id}`,
    license: 'proprietary',
    extent: { spatial: { bbox: [[-180, -90, 180, 90]] }, temporal: { interval: [['2019-01-01T00:00:00Z', null]] } },
    links: [],
  };
}

const QUEBEC = [-76, 44.9, -71.3, 47.1];
const GREENLAND = [-61.3, 72.2, -52.9, 74.7];

describe('tessera mosaic --stac, against stac-fastapi-pgstac on loopback', () => {
  let files: FileServer;
  let tmp: string;
  let api: ChildProcess | undefined;
  let apiUrl: string;
  let apiLog = '';
  const url = (name: string): string => `${files.url}/${name}`;

  before(async () => {
    const setup = await run('bash', [path.join(REPO_ROOT, 'tools/stac-api/setup.sh')]);
    assert.equal(setup.status, 0, `tools/stac-api/setup.sh failed: ${setup.stderr}`);
    files = await startFileServer(FIXTURES);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'tessera-mosaic-stac-'));
    const template = JSON.parse(readFileSync(path.join(FIXTURES, 'item.json'), 'utf8')) as Record<string, unknown>;
    const items = [
      item(template, 'cog1', 'fixtures', '2020-03-01T00:00:00Z', 5, QUEBEC, { data: url('cog1.tif') }),
      item(template, 'cog2', 'fixtures', '2020-03-02T00:00:00Z', 5, QUEBEC, { data: url('cog2.tif') }),
      // Each left out by one filter only.
      item(template, 'cloudy', 'fixtures', '2020-03-03T00:00:00Z', 80, QUEBEC, { data: url('cog.tif') }),
      item(template, 'old', 'fixtures', '2019-06-01T00:00:00Z', 5, QUEBEC, { data: url('cog.tif') }),
      item(template, 'greenland', 'fixtures', '2020-03-04T00:00:00Z', 5, GREENLAND, { data: url('cog.tif') }),
      item(template, 'elsewhere', 'others', '2020-03-01T00:00:00Z', 5, QUEBEC, { data: url('cog.tif') }),
      // Bad assets, in a collection of their own.
      item(template, 'no-data', 'broken', '2020-03-05T00:00:00Z', 5, QUEBEC, { visual: url('cog1.tif') }),
      item(template, 'not-a-cog', 'broken', '2020-03-04T00:00:00Z', 5, GREENLAND, { data: url('non_cog.tif') }),
      item(template, 'fine', 'broken', '2020-03-03T00:00:00Z', 5, QUEBEC, { data: url('cog1.tif') }),
    ];
    writeFileSync(path.join(tmp, 'items.ndjson'), `${items.map((i) => JSON.stringify(i)).join('\n')}\n`);
    const collections = ['fixtures', 'others', 'broken'].map((id) => {
      const file = path.join(tmp, `${id}.json`);
      writeFileSync(file, JSON.stringify(collection(id)));
      return file;
    });
    const [pgPort, apiPort] = [await freePort(), await freePort()];
    apiUrl = `http://127.0.0.1:${apiPort}`;
    api = spawn(
      'bash',
      [path.join(REPO_ROOT, 'tools/stac-api/serve.sh'), tmp, String(pgPort), String(apiPort), path.join(tmp, 'items.ndjson'), ...collections],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    api.stdout!.setEncoding('utf8').on('data', (d: string) => {
      apiLog += d;
    });
    api.stderr!.setEncoding('utf8').on('data', (d: string) => {
      apiLog += d;
    });
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (api.exitCode !== null) assert.fail(`the STAC API stopped (${api.exitCode}): ${apiLog}`);
      const ok = await fetch(`${apiUrl}/collections`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) assert.fail(`the STAC API did not answer within 120 s: ${apiLog}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  });

  after(async () => {
    if (api && api.exitCode === null) {
      const exited = new Promise((r) => api!.once('exit', r));
      api.kill('SIGTERM');
      await exited;
    }
    await files?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const SEARCH = [
    '--collections',
    'fixtures',
    '--bbox',
    '-80,40,-70,50',
    '--datetime',
    '2020-01-01T00:00:00Z/2020-12-31T23:59:59Z',
    '--query',
    '{"eo:cloud_cover": {"lt": 10}}',
    '--asset',
    'data',
  ];

  it('makes from a search, page by page, the document the same COGs make from a list', async () => {
    const searched = await tessera(['create', '--stac', apiUrl, ...SEARCH, '--limit', '1']);
    assert.equal(searched.status, 0, searched.stderr + apiLog);
    // One item a page: the next links were followed (two items, each on its page).
    assert.match(searched.stderr, /STAC search: 1 item\(s\)\n.*STAC search: 2 item\(s\)/);
    // pgstac answers newest first: cog2 (2 March), then cog1.
    const listed = await tessera(['create', '-'], { input: `${url('cog2.tif')}\n${url('cog1.tif')}\n` });
    assert.equal(listed.status, 0, listed.stderr);
    assert.equal(searched.stdout, listed.stdout);
    const doc = JSON.parse(searched.stdout) as { tiles: Record<string, string[]> };
    assert.deepEqual(new Set(Object.values(doc.tiles).flat()), new Set([url('cog1.tif'), url('cog2.tif')]));
    // Each filter is the API's: without it, its item comes in (and is then reported as it should be).
    const unfiltered = await tessera(['create', '--stac', `${apiUrl}/search`, '--collections', 'fixtures', '--asset', 'data', '--allow-mixed-crs']);
    assert.equal(unfiltered.status, 0, unfiltered.stderr);
    assert.match(unfiltered.stdout, /cog\.tif/);
    assert.match(unfiltered.stderr, /STAC search: 5 item\(s\)/);
  });

  it('writes the footprints of a search as of the same list', async () => {
    const searched = await tessera(['footprint', '--stac', apiUrl, ...SEARCH, '--limit', '1']);
    assert.equal(searched.status, 0, searched.stderr);
    const listed = await tessera(['footprint'], { input: `${url('cog2.tif')}\n${url('cog1.tif')}\n` });
    assert.equal(searched.stdout, listed.stdout);
    assert.equal((JSON.parse(searched.stdout) as { features: unknown[] }).features.length, 2);
  });

  it('stops at --max-items and says so', async () => {
    const capped = await tessera(['create', '--stac', apiUrl, ...SEARCH, '--limit', '1', '--max-items', '1']);
    assert.equal(capped.status, 0, capped.stderr);
    assert.match(capped.stderr, /the search stopped at --max-items 1/);
    assert.match(capped.stdout, /cog2\.tif/);
    assert.doesNotMatch(capped.stdout, /cog1\.tif/);
  });

  it('names each item without the asset and each asset that is no COG: exit 1, or left out with --skip-errors', async () => {
    const strict = await tessera(['create', '--stac', apiUrl, '--collections', 'broken', '--asset', 'data', '--allow-mixed-crs']);
    assert.equal(strict.status, 1);
    assert.equal(strict.stdout, '');
    assert.match(strict.stderr, /error: item 'no-data' has no asset 'data' \(its assets: visual\)/);
    assert.match(strict.stderr, /error: .*non_cog\.tif: not a Cloud Optimized GeoTIFF: The file is greater than 512xH or 512xW, but is not tiled/);
    assert.match(strict.stderr, /2 of the assets of the STAC search at .* cannot be used .* --skip-errors/);
    const skipping = await tessera(['create', '--stac', apiUrl, '--collections', 'broken', '--asset', 'data', '--skip-errors']);
    assert.equal(skipping.status, 0, skipping.stderr);
    assert.match(skipping.stderr, /warning: left out: item 'no-data'/);
    assert.deepEqual(new Set(Object.values((JSON.parse(skipping.stdout) as { tiles: Record<string, string[]> }).tiles).flat()), new Set([url('cog1.tif')]));
  });

  it('asks the API under the server policies: a STAC API on loopback is refused unless TESSERA_ALLOWED_NETWORKS opens it', async () => {
    const refused = await tessera(['create', '--stac', apiUrl, ...SEARCH], { env: { TESSERA_ALLOWED_NETWORKS: '' } });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /the STAC API search 'http:\/\/127\.0\.0\.1:\d+\/search' is not allowed: .*loopback .*TESSERA_ALLOWED_NETWORKS/);
    const noAsset = await tessera(['create', '--stac', apiUrl, '--collections', 'fixtures']);
    assert.equal(noAsset.status, 1);
    assert.match(noAsset.stderr, /--stac needs --asset NAME/);
    const both = await tessera(['create', 'urls.txt', '--stac', apiUrl, '--asset', 'data']);
    assert.equal(both.status, 1);
    assert.match(both.stderr, /either a list of COG URLs \('urls.txt'\) or --stac, not both/);
    const badQuery = await tessera(['create', '--stac', apiUrl, '--asset', 'data', '--query', '{cloud < 10}']);
    assert.equal(badQuery.status, 2);
    assert.match(badQuery.stderr, /is not JSON/);
    const nothing = await tessera(['create', '--stac', apiUrl, '--collections', 'none-such', '--asset', 'data']);
    assert.equal(nothing.status, 1);
    assert.match(nothing.stderr, /found no item: check --collections/);
  });
});

describe('searchStac paging (the STAC API paging rules pgstac does not use)', () => {
  const feature = (id: string): Record<string, unknown> => ({
    id,
    assets: { data: { href: `${id}.tif` } },
    links: [{ rel: 'self', href: `https://api.example.com/items/${id}` }],
  });

  it('follows GET next links and POST links with merge, resolves relative hrefs, and stops on a page seen before', async () => {
    const asked: Array<[string, unknown]> = [];
    const pages: unknown[] = [
      { features: [feature('a')], links: [{ rel: 'next', href: '/search?page=2' }] },
      { features: [feature('b')], links: [{ rel: 'next', href: 'https://api.example.com/search', method: 'POST', body: { token: 't3' }, merge: true }] },
      { features: [feature('c')], links: [{ rel: 'next', href: 'https://api.example.com/search', method: 'POST', body: { token: 't4' } }], numberMatched: 4 },
      { features: [{ id: 'd', assets: { other: { href: 'd.tif' } } }], links: [] },
    ];
    const fetch: SearchFetch = async (url, body) => {
      asked.push([url, body]);
      return pages[asked.length - 1];
    };
    const found = await searchStac('https://api.example.com/', { collections: ['c'], limit: 1, maxItems: 10 }, 'data', fetch);
    assert.deepEqual(asked, [
      ['https://api.example.com/search', { limit: 1, collections: ['c'] }],
      ['https://api.example.com/search?page=2', undefined],
      // merge: the link's body over the previous request's (a GET: none).
      ['https://api.example.com/search', { token: 't3' }],
      ['https://api.example.com/search', { token: 't4' }],
    ]);
    assert.deepEqual(
      found.assets.map((a) => a.href),
      ['https://api.example.com/items/a.tif', 'https://api.example.com/items/b.tif', 'https://api.example.com/items/c.tif'],
    );
    assert.deepEqual(found.missing, [{ item: 'd', has: ['other'] }]);
    assert.equal(found.pages, 4);
    assert.equal(found.truncated, false);

    const looping: SearchFetch = async () => ({ features: [feature('x')], links: [{ rel: 'next', href: 'https://api.example.com/search?page=1' }] });
    await assert.rejects(searchStac('https://api.example.com/search', { limit: 1, maxItems: 10 }, 'data', looping), /repeats a page already read/);
    await assert.rejects(
      searchStac('https://api.example.com', { limit: 1, maxItems: 10 }, 'data', async () => ({ type: 'Catalog' })),
      /not an ItemCollection/,
    );
  });
});
