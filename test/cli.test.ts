/**
 * The command line as operators use it: --version, --help on every command (serve's lists every
 * setting of src/config/settings.ts, as docs/configuration.md does), exit codes (0 done, 1 a bad
 * setting, 2 a usage mistake), and a warning for
 * TESSERA_* / TITILER_API_* names tessera does not know, which used to be ignored silently, and
 * settings files (`serve --config`, TESSERA_CONFIG) under the environment.
 * `mosaic create` runs from this build (BUILT_CLI; bin/tessera runs dist's); its documents are
 * checked in mosaic-create.test.ts. How each setting is read is tested in settings.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { TESSERA_BIN } from './parity/harness.js';
import { applySettingsFile, loadSettings, unknownSettings } from '../src/config.js';
import { SETTINGS } from '../src/config/settings.js';
import { BUILT_CLI, REPO_ROOT } from './helpers/paths.js';

function run(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(TESSERA_BIN, args, { encoding: 'utf8', timeout: 20_000, env: { ...process.env, ...env } });
}

function runBuilt(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [BUILT_CLI, ...args], { encoding: 'utf8', timeout: 20_000 });
}

describe('tessera command line', () => {
  it('prints its version and help, with every setting in serve --help and in docs/configuration.md', () => {
    const version = run(['--version']);
    assert.equal(version.status, 0);
    assert.equal(version.stdout.trim(), (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version);
    const help = run(['serve', '--help']);
    assert.equal(help.status, 0);
    const docs = readFileSync(path.join(REPO_ROOT, 'docs/configuration.md'), 'utf8');
    for (const spec of Object.values(SETTINGS) as Array<{ env: string; alias?: string; formerly?: readonly string[]; flag?: string }>) {
      for (const name of [spec.env, ...(spec.alias ? [spec.alias] : []), ...(spec.formerly ?? [])]) {
        assert.ok(help.stdout.includes(name), `${name} in serve --help`);
        assert.ok(docs.includes(`\`${name}\``), `${name} in docs/configuration.md`);
      }
      if (spec.flag) assert.ok(help.stdout.includes(spec.flag), `${spec.flag} in serve --help`);
    }
    assert.equal(run(['demo', '--help']).status, 0);
  });

  it('exits 2 on usage mistakes and 1 on a bad setting, saying what is wrong', () => {
    for (const args of [['bogus'], ['serve', '--port', 'eighty'], ['serve', '--workers', '65'], ['demo'], []]) {
      const r = run(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    }
    // A flag is checked by its setting's schema, and says so.
    assert.match(run(['serve', '--render-threads', '65']).stderr, /--render-threads <n>' argument '65' is invalid\. expected at most 64/);
    const bad = run(['serve', '--port', '0'], { TESSERA_MAX_QUEUE: 'lots' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /TESSERA_MAX_QUEUE: expected a whole number, got 'lots'/);
  });

  it('reads booleans as operators write them, and names settings it does not know', () => {
    for (const [text, value] of [
      ['1', true],
      ['yes', true],
      ['On', true],
      ['0', false],
      ['no', false],
      ['FALSE', false],
    ] as const) {
      assert.equal(loadSettings({}, { TESSERA_TRUST_PROXY: text }).trustProxy, value, text);
    }
    assert.throws(() => loadSettings({}, { TESSERA_TRUST_PROXY: 'sometimes' }), /TESSERA_TRUST_PROXY: expected one of 1, true, yes/);
    assert.deepEqual(
      unknownSettings({ TESSERA_PROT: '80', TITILER_API_CORS_ALLOW_METHODS: 'GET', TITILER_API_ROOT_PATH: '/x', TESSERA_PORT: '80', PATH: '/bin' }),
      ['TESSERA_PROT', 'TITILER_API_CORS_ALLOW_METHODS'],
    );
    assert.equal(loadSettings({}, { TITILER_API_CORS_ORIGINS: 'https://a.example, https://b.example' }).corsOrigins.length, 2);
    assert.equal(
      loadSettings({}, { TESSERA_CORS_ORIGINS: 'https://c.example', TITILER_API_CORS_ORIGINS: 'https://a.example' }).corsOrigins[0],
      'https://c.example',
      "tessera's name wins",
    );
  });

  it('mosaic create: --help with examples, exit 2 on usage mistakes, 1 on a list that cannot be read', () => {
    const help = runBuilt(['mosaic', 'create', '--help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /tessera mosaic create urls\.txt -o mosaic\.json/);
    assert.match(help.stdout, /--quadkey-zoom <z>/);
    assert.match(runBuilt(['--help']).stdout, /mosaic/);
    for (const args of [['mosaic'], ['mosaic', 'create', '--minzoom', '31'], ['mosaic', 'create', '--threads', '0'], ['mosaic', 'create', '--bogus']]) {
      const r = runBuilt(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    }
    assert.match(runBuilt(['mosaic', 'create', '--quadkey-zoom', 'x']).stderr, /invalid quadkey zoom 'x' \(0 to 30\)[\s\S]*tessera mosaic create --help/);
    const missing = runBuilt(['mosaic', 'create', path.join(REPO_ROOT, 'no-such-list.txt')]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /tessera: cannot read the list of COG URLs '.*no-such-list\.txt'/);
  });

  it('takes settings from a --config file (or TESSERA_CONFIG) under the environment, refusing names it does not know', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-config-'));
    try {
      const file = path.join(dir, 'tessera.env');
      writeFileSync(file, '# tessera settings\nTESSERA_MAX_QUEUE=64\nTESSERA_TRUST_PROXY=yes\nTITILER_API_ROOT_PATH="/tiles"\nTESSERA_CACHE_TTL=60\n');
      const env: NodeJS.ProcessEnv = { TESSERA_CACHE_TTL: '900' };
      assert.deepEqual(applySettingsFile(file, env), ['TESSERA_MAX_QUEUE', 'TESSERA_TRUST_PROXY', 'TITILER_API_ROOT_PATH']);
      const settings = loadSettings({}, env);
      assert.equal(settings.maxInFlight, 64);
      assert.equal(settings.trustProxy, true);
      assert.equal(settings.rootPath, '/tiles');
      assert.equal(settings.cacheTtlSeconds, 900, 'the environment wins over the file');

      // serve reads it: a bad value in the file fails the start naming the setting, a misspelt name names the file.
      writeFileSync(file, 'TESSERA_MAX_QUEUE=lots\n');
      const bad = run(['serve', '--config', file]);
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /TESSERA_MAX_QUEUE: expected a whole number, got 'lots'/);
      writeFileSync(file, 'TESSERA_PROT=8001\n');
      const misspelt = run(['serve'], { TESSERA_CONFIG: file });
      assert.equal(misspelt.status, 1);
      assert.match(misspelt.stderr, /tessera\.env: TESSERA_PROT is not a setting tessera knows/);
      const missing = run(['serve', '--config', path.join(dir, 'none.env')]);
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /cannot read the settings file '.*none\.env': ENOENT/);

      // A server started from the file listens where the file says.
      const port = await freePort();
      writeFileSync(file, `TESSERA_HOST=127.0.0.1\nTESSERA_PORT=${port}\nTESSERA_LOG_LEVEL=warn\n`);
      const server = spawn(TESSERA_BIN, ['serve', '--config', file], { stdio: 'ignore' });
      try {
        let status = 0;
        for (let i = 0; i < 100 && status !== 200; i++) {
          await new Promise((r) => setTimeout(r, 100));
          status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.status,
            () => 0,
          );
        }
        assert.equal(status, 200, `tessera answers on the file's port ${port}`);
      } finally {
        server.kill('SIGTERM');
        await new Promise((r) => server.once('exit', r));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
