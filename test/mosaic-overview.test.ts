/**
 * A mosaic's low-zoom overview (issue 23): `tessera mosaic overview` (the built CLI, as a user runs
 * it) composes the fixture mosaic (cog1/cog2, minzoom 7) at zoom 6 into a COG and writes the document
 * naming it in `tessera:overview`; the server then reads tiles below minzoom from that one file and
 * nothing else, tiles at minzoom and other pixel selections from the assets, refuses hostile hrefs
 * before reading them, tags tiles by the overview's version, and TiTiler 0.18.10 serves the document
 * as if the field were not there. Everything runs against the fixture file server on loopback.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES, fixtureMosaic, startFileServer, type FileServer } from './helpers/fileserver.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { parseNpy } from './helpers/npy.js';
import { run } from './helpers/run.js';
import { BUILT_CLI } from './helpers/paths.js';
import { gdal } from '../src/gdal/gdal.js';
import { get, startServer, TITILER_COMMAND, UVICORN, type Service } from './parity/harness.js';
import { existsSync } from 'node:fs';

const LOOPBACK_ENV = { TESSERA_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', TESSERA_LOG_LEVEL: 'silent' };
/** Zoom-6 tiles over the fixture mosaic (its minzoom is 7), and one at zoom 5. */
const Z6_TILES = [
  [6, 18, 22],
  [6, 19, 22],
  [6, 18, 23],
  [6, 19, 23],
] as const;

describe('mosaic low-zoom overview', () => {
  let assets: FileServer;
  let files: FileServer;
  let dir: string;
  let overviewDoc: Record<string, unknown>;
  let cliStderr = '';
  const servers: RunningTessera[] = [];
  const q = (doc: string): string => encodeURIComponent(`${assets.url}/${doc}`);

  async function start(overrides: Parameters<typeof startTessera>[0] = {}): Promise<RunningTessera> {
    const t = await startTessera({ tileCacheBytes: 0, ...overrides });
    servers.push(t);
    return t;
  }
  async function npy(t: RunningTessera, p: string) {
    const res = await t.get(p);
    assert.equal(res.status, 200, `${p}: ${res.status}`);
    return { npy: parseNpy(Buffer.from(await res.arrayBuffer())), headers: res.headers };
  }
  /** The requests the file servers saw while `fn` ran. */
  async function logged(fn: () => Promise<void>): Promise<{ assets: string[]; files: string[] }> {
    assets.log.length = 0;
    files.log.length = 0;
    await fn();
    return { assets: [...assets.log], files: [...files.log] };
  }
  /** The fixture document with the overview field set to `field`, served as `name`. */
  function serveWith(name: string, field: unknown): string {
    assets.put(`/${name}`, JSON.stringify({ ...overviewDoc, 'tessera:overview': field }));
    return q(name);
  }

  /**
   * Runs the built CLI as a user would on the fixture document: `NAME.tif` in the temporary folder,
   * named by the second file server's URL, the document written beside it; the CLI must succeed.
   */
  async function buildOverview(name: string, extra: string[]): Promise<{ stderr: string; doc: Record<string, unknown> }> {
    const document = path.join(dir, `${name}.doc.json`);
    const args = [
      'mosaic',
      'overview',
      `${assets.url}/mosaic.json`,
      '-o',
      path.join(dir, `${name}.tif`),
      '--href',
      `${files.url}/${name}.tif`,
      '--document',
      document,
    ];
    const res = await run(process.execPath, [BUILT_CLI, ...args, ...extra], { env: LOOPBACK_ENV });
    assert.equal(res.status, 0, res.stderr);
    return { stderr: res.stderr, doc: JSON.parse(await readFile(document, 'utf8')) as Record<string, unknown> };
  }

  before(async () => {
    assets = await startFileServer(FIXTURES);
    dir = await mkdtemp(path.join(os.tmpdir(), 'tessera-overview-'));
    files = await startFileServer(dir);
    assets.put('/mosaic.json', JSON.stringify(await fixtureMosaic(assets.url)));
    const built = await buildOverview('overview', []);
    cliStderr = built.stderr;
    overviewDoc = built.doc;
    assets.put('/overview.json', JSON.stringify(overviewDoc));
  });
  after(async () => {
    for (const t of servers) await t.close();
    await assets?.close();
    await files?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a COG of zoom 6 (internal overviews, DEFLATE, a mask) and the document naming it', async () => {
    const plain = await fixtureMosaic(assets.url);
    assert.deepEqual(overviewDoc['tessera:overview'], { href: `${files.url}/overview.tif`, maxzoom: 6, pixel_selection: 'first' });
    const { 'tessera:overview': _field, ...rest } = overviewDoc;
    assert.deepEqual(rest, plain, 'every other field as it was');
    assert.match(cliStderr, /zoom 6, [1-9]\d* of \d+ tile\(s\) with data/);
    const ds = gdal.open(path.join(dir, 'overview.tif'));
    try {
      assert.equal(ds.getMetadata('IMAGE_STRUCTURE')['LAYOUT'], 'COG');
      assert.equal(ds.getMetadata('IMAGE_STRUCTURE')['COMPRESSION'], 'DEFLATE');
      assert.equal(ds.srs?.getAuthorityCode(null), '3857');
      const band = ds.bands.get(1);
      assert.equal(band.getMaskFlags(), 0x02, 'a per-dataset mask');
      assert.ok(band.overviews.count() >= 1, 'internal overviews');
      // Pixels are zoom 6's: 2π·6378137 / 2^6 / 256 m.
      assert.ok(Math.abs(ds.geoTransform![1]! - (2 * Math.PI * 6378137) / 2 ** 6 / 256) < 1e-6);
    } finally {
      ds.close();
    }
  });

  it('says what is wrong and exits 1 when it cannot build, with --help giving examples', async () => {
    const cli = (args: string[], env: Record<string, string> = LOOPBACK_ENV) => run(process.execPath, [BUILT_CLI, 'mosaic', 'overview', ...args], { env });
    const out = path.join(dir, 'never.tif');
    const doc = `${assets.url}/mosaic.json`;
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      // Loopback refused (the default): the document cannot even be fetched.
      [[doc, '-o', out], { TESSERA_ALLOWED_NETWORKS: '' }, /not allowed.*loopback|loopback.*not reached/i],
      [[doc, '-o', out, '--zoom', '8'], LOOPBACK_ENV, /--zoom 8 is above the mosaic's minzoom 7/],
      [[doc, '-o', path.join(dir, 'never.png')], LOOPBACK_ENV, /must name a \.tif file/],
      [[`${assets.url}/nothing.json`, '-o', out], LOOPBACK_ENV, /not found|404/],
    ];
    for (const [args, env, message] of cases) {
      const res = await cli(args, env);
      assert.equal(res.status, 1, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, message, args.join(' '));
      assert.ok(!existsSync(out), 'nothing written');
    }
    // An asset the policies refuse (the document on loopback, its assets on 127.0.0.2).
    const port = new URL(assets.url).port;
    const refused = await fixtureMosaic(`http://127.0.0.2:${port}`);
    assets.put('/refused.json', JSON.stringify(refused));
    const res = await cli([`${assets.url}/refused.json`, '-o', out], { ...LOOPBACK_ENV, TESSERA_ALLOWED_NETWORKS: '127.0.0.1/32' });
    assert.equal(res.status, 1, res.stderr);
    assert.match(res.stderr, /tile 6\/\d+\/\d+: mosaic asset 'http:\/\/127\.0\.0\.2:\d+\/cog1\.tif' is not allowed/);
    assert.ok(!existsSync(out));
    const bad = await cli([doc, '-o', out, '--pixel-selection', 'best']);
    assert.equal(bad.status, 2, 'a usage mistake');
    assert.match(bad.stderr, /unknown pixel selection 'best'/);
    const help = await cli(['--help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /Examples:\n\s+\$ tessera mosaic overview/);
    assert.match(help.stdout, /"tessera:overview"/);
  });

  it('makes tiles at its zoom equal to the composed tiles, and close one zoom lower', async (ctx) => {
    // The composed tiles: the plain document, no deadline (every asset).
    const t = await start({ mosaicLowZoomDeadlineMs: 0 });
    const compare = async (z: number, x: number, y: number) => {
      const [fromAssets, fromOverview] = await Promise.all([
        npy(t, `/mosaicjson/tiles/WebMercatorQuad/${z}/${x}/${y}.npy?url=${q('mosaic.json')}`),
        npy(t, `/mosaicjson/tiles/WebMercatorQuad/${z}/${x}/${y}.npy?url=${q('overview.json')}`),
      ]);
      assert.deepEqual(fromOverview.npy.shape, fromAssets.npy.shape);
      const n = 256 * 256;
      const bands = fromAssets.npy.shape[0]! - 1;
      let covered = 0;
      let maskDiffers = 0;
      let valueDiffers = 0;
      let sumAbs = 0;
      // What the values of two neighbouring pixels of the composed tile differ by, on average.
      let neighbourSum = 0;
      let neighbours = 0;
      for (let i = 0; i < n; i++) {
        if (i % 256 < 255 && fromAssets.npy.values[bands * n + i] !== 0 && fromAssets.npy.values[bands * n + i + 1] !== 0) {
          for (let b = 0; b < bands; b++) neighbourSum += Math.abs(fromAssets.npy.values[b * n + i]! - fromAssets.npy.values[b * n + i + 1]!);
          neighbours += bands;
        }
        const a = fromAssets.npy.values[bands * n + i] !== 0;
        const o = fromOverview.npy.values[bands * n + i] !== 0;
        if (a) covered++;
        if (a !== o) maskDiffers++;
        else if (a) {
          for (let b = 0; b < bands; b++) {
            const d = Math.abs(fromAssets.npy.values[b * n + i]! - fromOverview.npy.values[b * n + i]!);
            sumAbs += d;
            if (d !== 0) valueDiffers++;
          }
        }
      }
      return {
        covered,
        maskDiffers,
        valueDiffers,
        meanAbs: sumAbs / Math.max(1, covered * bands),
        neighbourAbs: neighbourSum / Math.max(1, neighbours),
        headers: fromOverview.headers,
      };
    };
    let covered = 0;
    for (const [z, x, y] of Z6_TILES) {
      const r = await compare(z, x, y);
      covered += r.covered;
      ctx.diagnostic(`${z}/${x}/${y}: ${r.covered} pixels covered, ${r.maskDiffers} mask / ${r.valueDiffers} values differ`);
      // The COG's pixels are zoom 6's tiles as composed, written unchanged: the same tile exactly.
      assert.equal(r.maskDiffers, 0, `${z}/${x}/${y}: the same pixels are valid`);
      assert.equal(r.valueDiffers, 0, `${z}/${x}/${y}: the same values`);
      assert.equal(r.headers.get('x-assets'), `${files.url}/overview.tif`);
    }
    assert.ok(covered > 10_000, `the zoom-6 tiles hold the mosaic (${covered} pixels)`);
    // Zoom 5 reads the COG's first internal overview (nearest: one of each 2×2 of zoom 6's pixels),
    // the composition the assets' own overviews: different samples of the same picture. Masks
    // differ by at most a pixel along the edges (≤ 3% of the covered pixels); values by about what
    // neighbouring pixels of the composed tile differ by (mean |Δ| within 1.5× of theirs: a shifted
    // or misplaced picture differs by far more).
    const r = await compare(5, 9, 11);
    ctx.diagnostic(
      `5/9/11: ${r.covered} covered, ${r.maskDiffers} mask differ, mean |Δ| ${r.meanAbs.toFixed(1)} (neighbours in the composed tile: ${r.neighbourAbs.toFixed(1)})`,
    );
    assert.ok(r.covered > 1000);
    assert.ok(r.maskDiffers <= r.covered * 0.03, `5/9/11: ${r.maskDiffers} mask pixels differ`);
    assert.ok(r.meanAbs <= r.neighbourAbs * 1.5, `5/9/11: mean absolute difference ${r.meanAbs}, neighbours ${r.neighbourAbs}`);
  });

  it('built at the minzoom (--zoom 7), serves the minzoom too, pixel for pixel as composed, and nothing above', async () => {
    const { doc: doc7 } = await buildOverview('overview7', ['--zoom', '7']);
    assert.deepEqual(doc7['tessera:overview'], { href: `${files.url}/overview7.tif`, maxzoom: 7, pixel_selection: 'first' });
    assets.put('/overview7.json', JSON.stringify(doc7));
    const t = await start({ mosaicLowZoomDeadlineMs: 0 });
    const headers = new Map<string, string | null>();
    const body = async (doc: string, z: number, x: number, y: number): Promise<Buffer> => {
      const r = await t.get(`/mosaicjson/tiles/WebMercatorQuad/${z}/${x}/${y}.npy?url=${q(doc)}`);
      assert.equal(r.status, 200, `${doc} ${z}/${x}/${y}`);
      headers.set(`${doc} ${z}/${x}/${y}`, r.headers.get('x-assets'));
      return Buffer.from(await r.arrayBuffer());
    };
    for (const [x, y] of [
      [37, 45],
      [38, 45],
      [37, 46],
    ] as const) {
      const composed = await body('mosaic.json', 7, x, y);
      const seen = await logged(async () => {
        assert.ok((await body('overview7.json', 7, x, y)).equals(composed), `7/${x}/${y}: the same array as composed from the assets`);
      });
      assert.equal(headers.get(`overview7.json 7/${x}/${y}`), `${files.url}/overview7.tif`, `7/${x}/${y}: made from the overview`);
      // The first tile fetches the overview's bytes; GDAL's cache may hold the next ones' already.
      if (x === 37 && y === 45)
        assert.ok(
          seen.files.some((l) => l.startsWith('GET /overview7.tif')),
          'the overview is read',
        );
      assert.deepEqual(
        seen.assets.filter((l) => /\.tif/.test(l)),
        [],
        `7/${x}/${y}: no asset read`,
      );
    }
    const above = await logged(async () => {
      await body('overview7.json', 8, 75, 91);
    });
    assert.ok(
      above.assets.some((l) => /^GET \/cog[12]\.tif/.test(l)),
      'above the minzoom the assets are read',
    );
    assert.deepEqual(above.files, [], 'and not the overview');
    assert.equal(headers.get('overview7.json 8/75/91'), `${assets.url}/cog1.tif,${assets.url}/cog2.tif`);
  });

  it('reads only the overview below minzoom, and the assets at minzoom and for another pixel selection', async () => {
    const t = await start();
    const below = await logged(async () => {
      const res = await t.get(`/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?url=${q('overview.json')}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-tessera-partial'), null, 'a whole tile');
      await res.arrayBuffer();
    });
    assert.ok(
      below.files.some((l) => l.startsWith('GET /overview.tif')),
      `the overview is read (${below.files.join('; ')})`,
    );
    assert.deepEqual(
      below.assets.filter((l) => /\.tif/.test(l)),
      [],
      'no asset is read below minzoom',
    );

    const at = await logged(async () => {
      const res = await t.get(`/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${q('overview.json')}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-assets'), `${assets.url}/cog1.tif,${assets.url}/cog2.tif`);
      await res.arrayBuffer();
    });
    assert.ok(
      at.assets.some((l) => l.startsWith('GET /cog1.tif')),
      'at minzoom the assets are read',
    );
    assert.deepEqual(at.files, [], 'and not the overview');

    const other = await logged(async () => {
      const res = await t.get(`/mosaicjson/tiles/WebMercatorQuad/6/19/22.png?url=${q('overview.json')}&pixel_selection=highest`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-assets'), `${assets.url}/cog1.tif,${assets.url}/cog2.tif`);
      await res.arrayBuffer();
    });
    assert.ok(
      other.assets.some((l) => l.startsWith('GET /cog2.tif')),
      'another pixel selection composes the assets',
    );
    assert.deepEqual(other.files, []);
  });

  it('refuses hostile hrefs before reading them, and fails (not falls back) on a missing overview', async () => {
    // Loopback open to 127.0.0.1 only (the fixture servers); 127.0.0.2 is loopback all the same.
    const t = await start({ allowedNetworks: ['127.0.0.1/32'] });
    await writeFile(
      path.join(dir, 'overview.vrt'),
      `<VRTDataset rasterXSize="256" rasterYSize="256"><VRTRasterBand dataType="Byte" band="1"><SimpleSource><SourceFilename>${files.url}/overview.tif</SourceFilename><SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>`,
    );
    const port = new URL(files.url).port;
    const hostile: Array<[string, RegExp]> = [
      [`http://127.0.0.2:${port}/overview.tif`, /not allowed/],
      ['http://169.254.169.254/latest/meta-data/', /not allowed/],
      [path.join(dir, 'overview.tif'), /not allowed|local/i],
      [`file://${path.join(dir, 'overview.tif')}`, /not allowed|local/i],
      [`/vsicurl/${files.url}/overview.tif`, /virtual file systems are refused/],
      [`${files.url}/overview.vrt`, /./],
    ];
    for (const [i, [href, why]] of hostile.entries()) {
      // A document per case: opened documents are cached by URL.
      const url = serveWith(`hostile-${i}.json`, { href, maxzoom: 6, pixel_selection: 'first' });
      const seen = await logged(async () => {
        const res = await t.get(`/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?url=${url}`);
        const body = (await res.json()) as { detail?: unknown };
        assert.ok(res.status >= 400 && res.status < 500, `${href}: ${res.status} ${JSON.stringify(body)}`);
        assert.equal(typeof body.detail, 'string', `${href}: a JSON detail`);
        assert.match(body.detail as string, /mosaic overview/, `${href}: names the overview`);
        assert.match(body.detail as string, why, `${href}: ${body.detail}`);
      });
      assert.ok(!seen.files.some((l) => l.includes('/overview.tif')), `${href}: the overview COG is never read (${seen.files.join('; ')})`);
      assert.deepEqual(
        seen.assets.filter((l) => /\.tif/.test(l)),
        [],
        `${href}: no asset read either (no fallback)`,
      );
    }
    // A missing file: the upstream's 404 said, as for a missing asset; the assets are not read instead.
    const missing = serveWith('missing.json', { href: `${files.url}/nothing-here.tif`, maxzoom: 6, pixel_selection: 'first' });
    const seen = await logged(async () => {
      const res = await t.get(`/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?url=${missing}`);
      const body = (await res.json()) as { detail: string };
      assert.equal(res.status, 404, body.detail);
      assert.match(body.detail, /mosaic overview '.*nothing-here\.tif'.*not found/);
    });
    assert.deepEqual(
      seen.assets.filter((l) => /\.tif/.test(l)),
      [],
      'no fallback onto the assets',
    );
    // A malformed field is named.
    const bad = serveWith('bad.json', { href: 7 });
    const res = await t.get(`/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?url=${bad}`);
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { detail: string }).detail, /'tessera:overview' needs 'href'/);
  });

  it('tags tiles below minzoom by the overview file, tiles at minzoom not', async () => {
    const below = `/mosaicjson/tiles/WebMercatorQuad/6/18/22.png?url=${q('overview.json')}`;
    const at = `/mosaicjson/tiles/WebMercatorQuad/7/37/45.png?url=${q('overview.json')}`;
    const tags = async () => {
      const t = await start();
      const out: string[] = [];
      for (const p of [below, at]) {
        const res = await t.get(p);
        assert.equal(res.status, 200);
        await res.arrayBuffer();
        out.push(res.headers.get('etag')!);
        const again = await t.get(p, { 'If-None-Match': res.headers.get('etag')! });
        assert.equal(again.status, 304, `${p}: revalidated`);
      }
      return out;
    };
    const [belowBefore, atBefore] = await tags();
    const later = new Date(Date.now() + 120_000);
    await utimes(path.join(dir, 'overview.tif'), later, later);
    const [belowAfter, atAfter] = await tags();
    assert.notEqual(belowAfter, belowBefore, 'a new overview file: new tags below minzoom');
    assert.equal(atAfter, atBefore, 'tiles at minzoom do not depend on it');
  });

  it('TiTiler 0.18.10 serves the document with the field as without it', { skip: !existsSync(UVICORN) && 'no TiTiler venv' }, async () => {
    let titiler: Service | undefined;
    try {
      titiler = await startServer(TITILER_COMMAND);
      const tessera = await start();
      for (const route of ['/mosaicjson/', '/mosaicjson/info', '/mosaicjson/bounds', '/mosaicjson/WebMercatorQuad/tilejson.json']) {
        const plain = await get(titiler.url, `${route}?url=${q('mosaic.json')}`);
        const withField = await get(titiler.url, `${route}?url=${q('overview.json')}`);
        assert.equal(withField.status, 200, `${route}: ${withField.body}`);
        const normalise = (s: string) => s.replaceAll(q('overview.json'), 'URL').replaceAll(q('mosaic.json'), 'URL');
        assert.equal(normalise(withField.body), normalise(plain.body), `TiTiler ${route}`);
        // tessera's TiTiler-shaped JSON shows no more of the field than TiTiler does.
        const ours = await tessera.get(`${route}?url=${q('overview.json')}`);
        const text = await ours.text();
        assert.ok(!text.includes('tessera:overview'), `tessera ${route}: the field does not leak`);
        if (route === '/mosaicjson/') assert.deepEqual(JSON.parse(text), JSON.parse(withField.body));
      }
      // TiTiler composes the assets below minzoom (it knows no overview): the same tile as from the plain document.
      const tile = '/mosaicjson/tiles/WebMercatorQuad/6/18/22.npy';
      const a = await fetch(`${titiler.url}${tile}?url=${q('mosaic.json')}`);
      const b = await fetch(`${titiler.url}${tile}?url=${q('overview.json')}`);
      assert.equal(b.status, 200);
      assert.ok(Buffer.from(await a.arrayBuffer()).equals(Buffer.from(await b.arrayBuffer())));
    } finally {
      await titiler?.stop();
    }
  });
});
