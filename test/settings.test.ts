/**
 * Settings as declared once (src/config/settings.ts) and read by src/config.ts: the defaults (the
 * values tessera has always started with), bounds and kinds refused with the variable named,
 * TiTiler's and former names, flags over the environment over a settings file, and the page
 * docs/configuration.md, whose tables must be exactly what `make docs` would write from the
 * declaration. The command line's side (exit codes, serve --help, a server started from a file) is
 * tested in cli.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applySettingsFile, loadSettings, parseSetting, settingFlags, unknownSettings, type SettingKey } from '../src/config.js';
import { Computed, GROUPS, SETTINGS, type Setting } from '../src/config/settings.js';
import { settingsHelp, withSettingsTables } from '../src/config/docs.js';
import { shown } from '../src/config/kinds.js';
import { defaultImageBytes } from '../src/image/whole-image-gate.js';
import { REPO_ROOT } from './helpers/paths.js';

const specs = Object.entries(SETTINGS) as Array<[SettingKey, Setting<unknown>]>;

describe('settings', () => {
  it('docs/configuration.md has the tables the declaration makes (run `make docs` after changing a setting)', () => {
    const page = readFileSync(path.join(REPO_ROOT, 'docs/configuration.md'), 'utf8');
    assert.equal(page, withSettingsTables(page), 'docs/configuration.md is out of date: run make docs');
    for (const [, spec] of specs) assert.ok(page.includes(`| \`${spec.env}\``), `${spec.env} has a row`);
    assert.throws(() => withSettingsTables('# no markers\n'), /no .* markers/);
    for (const [, target] of page.matchAll(/\]\(\.\.\/([^)]+)\)/g))
      assert.ok(existsSync(path.join(REPO_ROOT, target!)), `docs/configuration.md links ${target}, which exists`);
  });

  it('declares each name once: TESSERA_* names, TiTiler aliases, every setting in one group', () => {
    const names = specs.flatMap(([, s]) => [s.env, ...(s.formerly ?? []), ...(s.alias ? [s.alias] : [])]);
    assert.equal(new Set(names).size, names.length, 'no name read for two settings');
    for (const [key, s] of specs) {
      assert.match(s.env, /TESSERA_[A-Z0-9_]+$/, key);
      // TiTiler's names, and titiler-pgstac's for the catalogue's settings.
      if (s.alias)
        assert.match(
          s.alias,
          /^(TITILER_API_[A-Z_]+|TITILER_PGSTAC_[A-Z_]+|DATABASE_URL|DB_MAX_CONN_SIZE|AWS_[A-Z0-9_]+|CPL_GS_ENDPOINT|GS_NO_SIGN_REQUEST|AZURE_STORAGE_ACCOUNT|AZURE_NO_SIGN_REQUEST)$/,
          key,
        );
      assert.ok(s.description.length > 0, key);
    }
    const grouped = GROUPS.flatMap((g) => Object.keys(g.settings));
    assert.deepEqual(grouped.sort(), Object.keys(SETTINGS).sort());
  });

  it('starts with the defaults tessera has always had', () => {
    const cores = os.availableParallelism();
    assert.deepEqual(loadSettings({}, {}), {
      host: '127.0.0.1',
      port: 8000,
      workers: 1,
      renderThreads: cores,
      demoDir: undefined,
      rootPath: '',
      trustProxy: false,
      cacheControl: 'public, max-age=3600',
      corsOrigins: ['*'],
      accessToken: undefined,
      allowedLocalRoots: [],
      allowedHosts: [],
      deniedHosts: [],
      allowedNetworks: [],
      allowedBuckets: [],
      s3Region: 'us-east-1',
      s3Endpoint: '',
      s3Https: true,
      s3VirtualHosting: true,
      s3RequestPayer: '',
      s3NoSignRequest: false,
      gsEndpoint: 'https://storage.googleapis.com',
      gsNoSignRequest: false,
      azureAccount: '',
      azureBlobEndpoint: '',
      azureNoSignRequest: false,
      allowedDrivers: ['GTiff'],
      upstreamGateway: true,
      upstreamConnectTimeoutMs: 5000,
      upstreamTimeoutMs: 15000,
      maxUpstreamBytes: 256 * 1024 * 1024,
      maxDocumentBytes: 32 * 1024 * 1024,
      requestTimeoutMs: 30000,
      maxOutputPixels: 64 * 1024 * 1024,
      maxSourcePixels: 256 * 1024 * 1024,
      tileRequests: 3 * cores,
      titilerApi: '0.18',
      maxAssets: 1024,
      requestConcurrency: 8,
      largeRequests: cores,
      maxImageBytes: defaultImageBytes(),
      handlesPerSource: Math.max(4, cores),
      maxHandles: 256,
      shutdownDelayMs: 0,
      shutdownGraceMs: 10000,
      maxInFlight: 1024,
      logLevel: 'info',
      stallWarnMs: 200,
      documentCacheTtlMs: 300000,
      documentCacheSize: 512,
      tileCacheBytes: 64 * 1024 * 1024,
      cacheUrl: undefined,
      cacheTtlSeconds: 300,
      mosaicAssetsHeader: true,
      mosaicConcurrency: 8,
      mosaicLowZoomDeadlineMs: 2000,
      mosaicStrictZoom: false,
      pgstacDsn: undefined,
      pgstacPoolSize: 10,
      pgstacPoolWarm: 6,
      pgstacStatementTimeoutMs: 5000,
      pgstacCacheTtlSeconds: 300,
      pgstacCacheBytes: 32 * 1024 * 1024,
      pgstacScanLimit: 10000,
      pgstacItemsLimit: 100,
      pgstacTimeLimitSeconds: 5,
      pgstacExitWhenFull: true,
      pgstacSkipCovered: true,
      searchMinzoom: undefined,
      searchMaxItemsPerTile: undefined,
      catalog: undefined,
      catalogSearches: undefined,
      catalogMaxSearches: 100_000,
      catalogMaxItems: 5_000_000,
      catalogMaxBytes: 8 * 1024 * 1024 * 1024,
      catalogRefreshSeconds: 60,
      pngLevel: 4,
      basemapUrl: '',
      basemapAttribution: '',
      disabledFamilies: [],
    });
  });

  it('shows each default as a value that reads back as that default', () => {
    for (const [key, s] of specs) {
      if (s.default instanceof Computed || s.default === undefined) continue;
      const text = shown(s.default);
      if (text === '') continue;
      const parsed = parseSetting(key, text);
      assert.ok(parsed.ok, `${key}: ${text}`);
      assert.deepEqual(parsed.value, s.default, key);
    }
  });

  it('works out defaults from the machine and the number of workers', () => {
    const cores = os.availableParallelism();
    assert.equal(loadSettings({}, { TESSERA_WORKERS: '2' }).renderThreads, 0, 'several processes: no render threads');
    assert.equal(loadSettings({ workers: 3 }, {}).renderThreads, 0, 'workers given in code count too');
    assert.equal(loadSettings({}, { TESSERA_WORKERS: '2', TESSERA_RENDER_THREADS: '2' }).renderThreads, 2);
    assert.equal(loadSettings({}, {}, { workers: '4' }).renderThreads, 0, 'and from a flag');
    assert.equal(loadSettings({}, { TESSERA_TILE_REQUESTS: '0' }).tileRequests, 0);
    assert.equal(loadSettings({}, {}).handlesPerSource, Math.max(4, cores));
  });

  it('refuses values out of bounds or of the wrong kind, naming the variable and what was expected', () => {
    for (const [env, message] of [
      [{ TESSERA_PORT: '70000' }, /TESSERA_PORT: expected at most 65535, got '70000'$/],
      [{ TESSERA_WORKERS: '0' }, /TESSERA_WORKERS: expected at least 1, got '0'$/],
      [{ TESSERA_PNG_LEVEL: '10' }, /TESSERA_PNG_LEVEL: expected at most 9/],
      [{ TESSERA_REQUEST_TIMEOUT_MS: '1.5' }, /TESSERA_REQUEST_TIMEOUT_MS: expected a whole number, got '1\.5'$/],
      [{ TESSERA_TILE_CACHE_BYTES: '-1' }, /TESSERA_TILE_CACHE_BYTES: expected a whole number/],
      [{ TESSERA_LOG_LEVEL: 'loud' }, /TESSERA_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got 'loud'$/],
      [{ TESSERA_UPSTREAM_GATEWAY: 'maybe' }, /TESSERA_UPSTREAM_GATEWAY: expected one of 1, true, yes, on, t, y, 0, false/],
      [{ TESSERA_CACHE_URL: 'http://cache:6379' }, /TESSERA_CACHE_URL: expected redis:\/\/host:port\/db/],
      [{ TESSERA_BASEMAP_URL: 'https://tiles.example/{z}/{x}.png' }, /TESSERA_BASEMAP_URL: expected an http\(s\) URL or a path with \{z\}, \{x\} and \{y\}/],
      [{ TITILER_API_ROOT_PATH: 'tiles' }, /TITILER_API_ROOT_PATH: expected a path such as \/tiles/],
      [{ TESSERA_MAX_QUEUE: 'lots' }, /TESSERA_MAX_QUEUE: expected a whole number, got 'lots'$/],
    ] as const) {
      assert.throws(() => loadSettings({}, env), message, JSON.stringify(env));
    }
    assert.throws(() => loadSettings({}, {}, { port: 'x' }), /--port: expected a whole number, got 'x'$/);
  });

  it("reads TiTiler's names and former names when tessera's are unset, blank values as unset", () => {
    assert.equal(loadSettings({}, { TESSERA_MAX_QUEUE: '64' }).maxInFlight, 64, 'the former name still works');
    assert.equal(loadSettings({}, { TESSERA_MAX_IN_FLIGHT: '32', TESSERA_MAX_QUEUE: '64' }).maxInFlight, 32, 'the current name wins');
    assert.deepEqual(loadSettings({}, { TITILER_API_DISABLE_STAC: 'TRUE' }).disabledFamilies, ['stac']);
    assert.deepEqual(loadSettings({}, { TESSERA_DISABLE_COG: '1', TESSERA_DISABLE_MOSAIC: 'yes', TITILER_API_DISABLE_MOSAIC: 'no' }).disabledFamilies, [
      'cog',
      'mosaicjson',
    ]);
    assert.equal(loadSettings({}, { TITILER_API_GLOBAL_ACCESS_TOKEN: 's3cret' }).accessToken, 's3cret');
    assert.equal(loadSettings({}, { TITILER_API_CACHECONTROL: 'no-cache', TESSERA_CACHE_CONTROL: ' ' }).cacheControl, 'no-cache');
    assert.equal(loadSettings({}, { TITILER_API_ROOT_PATH: '/tiles/' }).rootPath, '/tiles');
    assert.equal(loadSettings({}, { TESSERA_PORT: '  ' }).port, 8000);
    assert.deepEqual(loadSettings({}, { TESSERA_ALLOWED_NETWORKS: ' 10.0.0.0/8 , ,::1/128,' }).allowedNetworks, ['10.0.0.0/8', '::1/128']);
    assert.equal(loadSettings({}, { TESSERA_LOG_LEVEL: 'WARN' }).logLevel, 'warn');
    assert.deepEqual(unknownSettings({ TESSERA_MAX_QUEUE: '1', TESSERA_MAX_IN_FLIGHT: '1', TESSERA_CONFIG: 'x', TITILER_API_DISABLE_COG: '1' }), []);
  });

  it('lets flags win over the environment, and values from code over both', () => {
    assert.equal(loadSettings({}, { TESSERA_PORT: '9000' }, { port: '9001' }).port, 9001);
    assert.equal(loadSettings({ port: 9002 }, { TESSERA_PORT: '9000' }, { port: '9001' }).port, 9002);
    assert.equal(loadSettings({}, {}, { demoDir: 'some/demo' }).demoDir, path.resolve('some/demo'), 'a folder is made absolute');
    assert.deepEqual(loadSettings({ disabledFamilies: ['cog'] }, { TESSERA_DISABLE_STAC: '1' }).disabledFamilies, ['cog']);
    assert.deepEqual(
      settingFlags().map((f) => f.flag),
      ['--host <host>', '--port <port>', '--workers <n>', '--render-threads <n>', '--demo <dir>'],
    );
  });

  it('takes a settings file under the environment; a name it does not know stops it', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-settings-'));
    try {
      const file = path.join(dir, 'tessera.env');
      writeFileSync(file, "TESSERA_MAX_IN_FLIGHT=16\nTITILER_API_CORS_ORIGINS='https://a.example,https://b.example'\nTESSERA_PORT=9100 # a comment\n");
      const env: NodeJS.ProcessEnv = { TESSERA_PORT: '9200' };
      assert.deepEqual(applySettingsFile(file, env), ['TESSERA_MAX_IN_FLIGHT', 'TITILER_API_CORS_ORIGINS']);
      const settings = loadSettings({}, env);
      assert.equal(settings.maxInFlight, 16);
      assert.deepEqual(settings.corsOrigins, ['https://a.example', 'https://b.example']);
      assert.equal(settings.port, 9200);
      writeFileSync(file, 'TESSERA_PROT=1\nTITILER_API_DEBUG=1\nTESSERA_PORT=1\n');
      assert.throws(() => applySettingsFile(file, {}), /tessera\.env: TESSERA_PROT, TITILER_API_DEBUG are not settings tessera knows/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lists every setting in serve --help with its kind and default', () => {
    const help = settingsHelp();
    assert.match(help, /TESSERA_PORT, flag --port\n {6}port to listen on .*\[whole number, 0 to 65535; default: 8000\]/);
    assert.match(help, /TESSERA_MAX_IN_FLIGHT \(or TESSERA_MAX_QUEUE\)\n/);
    assert.match(help, /TESSERA_ROOT_PATH \(or TITILER_API_ROOT_PATH\)\n/);
    assert.match(help, /TESSERA_TILE_REQUESTS\n.*default: 3 × cores\]/);
    for (const [, s] of specs) assert.ok(help.includes(`  ${s.env}`), s.env);
  });
});
