/**
 * The container recipe, built and run: the repository's Dockerfile built by podman (Debian's) from a
 * Debian 12 base image made here by debootstrap (scripts/container-base.sh; no container registry is
 * needed, and the image stays in podman's store for the next run), then
 *  - one container: it runs as a non-root user, its HEALTHCHECK (/readyz) passes, it serves a tile of
 *    a fixture COG read over HTTP from the tests' Range file server on the host, byte for byte the
 *    tile this checkout's tessera makes, and it exits cleanly on `podman stop` (SIGTERM);
 *  - deploy/compose.yaml under podman-compose: two replicas, Redis and nginx built from their
 *    Dockerfiles; a tile answers through nginx under /tiles/ with public TileJSON URLs, the second
 *    request for it is a hit from Redis (the replicas' memory tier is off), both replicas serve.
 * Podman runs with deploy/containers.conf (runc, no default ulimits: what these VMs need).
 * The first run builds the base image (~1 min) and the image (~10 min); later runs reuse both.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFileServer, FIXTURES, type FileServer } from './helpers/fileserver.js';
import { REPO_ROOT } from './helpers/paths.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';
import { freePort } from './parity/harness.js';

const IMAGE = 'localhost/tessera:latest';
const BASE = 'localhost/tessera-debian:bookworm';
const CONTAINER = 'tessera-container-test';
const PROJECT = 'tessera-compose-test';
// BUILDAH_FORMAT=docker: podman's default OCI format has no HEALTHCHECK (podman-compose builds with it too).
const ENV = { ...process.env, CONTAINERS_CONF: path.join(REPO_ROOT, 'deploy/containers.conf'), BUILDAH_FORMAT: 'docker' };
/** What containers may read from: the host reached through their network's gateway (podman's private ranges). */
const PRIVATE_NETWORKS = '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16';
/** host.containers.internal: the name podman gives every container for the host. */
const HOST_FROM_CONTAINER = 'host.containers.internal';

interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

/** A command's output and exit code, never throwing (long builds log to `logFile`). */
function run(command: string, args: string[], timeoutMs = 120_000, extraEnv: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: REPO_ROOT, env: { ...ENV, ...extraEnv }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ stdout: String(stdout), stderr: String(stderr) + (error && code === 1 && !stderr ? error.message : ''), code });
    });
  });
}

/** The command's stdout; a failure names the command and shows the end of its output. */
async function must(command: string, args: string[], timeoutMs?: number, extraEnv?: Record<string, string>): Promise<string> {
  const r = await run(command, args, timeoutMs, extraEnv);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.code}:\n${(r.stdout + r.stderr).slice(-4000)}`);
  return r.stdout;
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > until) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(0)} s`;

describe('the container image and deploy/compose.yaml, built and run with podman', { timeout: 45 * 60_000 }, () => {
  let files: FileServer;
  let local: RunningTessera;
  let tilePath: string;
  let composeArgs: string[];
  let composeEnv: Record<string, string>;

  /**
   * The compose project gone whatever state it is in: `podman-compose down` first, then every container
   * still carrying the project's label (one stuck in a restart loop can survive `down`) and the network
   * podman-compose 1.0 leaves behind. A failed run must not leave a stack restarting on the machine.
   */
  async function tearDownCompose(): Promise<void> {
    if (composeArgs) await run('podman-compose', [...composeArgs, 'down'], 120_000, composeEnv);
    const left = (await run('podman', ['ps', '--all', '--quiet', '--filter', `label=io.podman.compose.project=${PROJECT}`])).stdout.split('\n').filter(Boolean);
    if (left.length > 0) await run('podman', ['rm', '--force', '--time', '0', ...left], 120_000);
    await run('podman', ['network', 'rm', '--force', `${PROJECT}_default`]);
  }

  before(async () => {
    // No skip: `make install` installs podman, runc, debootstrap and podman-compose.
    for (const tool of ['podman', 'podman-compose', 'debootstrap']) {
      assert.equal((await run('sh', ['-c', `command -v ${tool}`])).code, 0, `${tool} is not installed (make install installs it)`);
    }
    // Compose services find each other by name only through netavark's DNS (aardvark-dns); CNI has none.
    const backend = (await must('podman', ['info', '--format', '{{.Host.NetworkBackend}}'])).trim();
    assert.equal(backend, 'netavark', 'podman must run with netavark (deploy/containers.conf; make install installs it)');
    assert.equal((await run('sh', ['-c', 'command -v aardvark-dns || test -x /usr/lib/podman/aardvark-dns'])).code, 0, 'aardvark-dns is not installed');
    // Every address: containers reach the host through their network's gateway.
    files = await startFileServer(FIXTURES, { host: '0.0.0.0' });
    const port = new URL(files.url).port;
    tilePath = `/cog/tiles/WebMercatorQuad/9/289/207.png?url=${encodeURIComponent(`http://${HOST_FROM_CONTAINER}:${port}/B01.tif`)}&rescale=0,1000`;
    local = await startTessera();
    const started = Date.now();
    const base = (await must('bash', ['scripts/container-base.sh', BASE], 10 * 60_000)).trim();
    assert.equal(base, BASE);
    console.log(`# base image ${BASE}: ${seconds(started)}`);
    const building = Date.now();
    const previous = (await run('podman', ['image', 'inspect', '--format', '{{.Id}}', IMAGE])).stdout.trim();
    await must('podman', ['build', '--format', 'docker', '--pull=never', '--build-arg', `BASE=${BASE}`, '-t', IMAGE, '.'], 30 * 60_000);
    console.log(`# podman build ${IMAGE}: ${seconds(building)}`);
    // The image this build replaced, if any, would stay as an untagged copy: removed (its layers the new one shares stay).
    const current = (await must('podman', ['image', 'inspect', '--format', '{{.Id}}', IMAGE])).trim();
    if (previous && previous !== current) await run('podman', ['rmi', previous]);
    const size = Number((await must('podman', ['image', 'inspect', '--format', '{{.Size}}', IMAGE])).trim());
    console.log(`# image size: ${(size / 1e6).toFixed(0)} MB`);
  });

  after(async () => {
    await run('podman', ['rm', '--force', '--time', '0', CONTAINER]);
    if (composeArgs) await tearDownCompose();
    await local?.close();
    await files?.close();
  });

  it('runs as a non-root user, passes its healthcheck, serves a tile read over HTTP and stops cleanly', async () => {
    await run('podman', ['rm', '--force', '--time', '0', CONTAINER]);
    const port = await freePort();
    await must('podman', [
      'run',
      '--detach',
      '--name',
      CONTAINER,
      '--publish',
      `127.0.0.1:${port}:8000`,
      '--env',
      `TESSERA_ALLOWED_NETWORKS=${PRIVATE_NETWORKS}`,
      IMAGE,
    ]);
    const url = `http://127.0.0.1:${port}`;

    assert.notEqual((await must('podman', ['exec', CONTAINER, 'id', '-u'])).trim(), '0', 'not root');
    assert.equal((await must('podman', ['exec', CONTAINER, 'id', '-un'])).trim(), 'tessera');
    const healthcheck = (await must('podman', ['image', 'inspect', '--format', '{{json .HealthCheck.Test}}', IMAGE])).trim();
    assert.match(healthcheck, /\/readyz/, 'the image carries the HEALTHCHECK');
    // `podman healthcheck run` runs the image's HEALTHCHECK now (no systemd timer needed).
    await waitFor('the healthcheck passes', 60_000, async () => (await run('podman', ['healthcheck', 'run', CONTAINER])).code === 0);
    assert.equal((await must('podman', ['inspect', '--format', '{{.State.Health.Status}}', CONTAINER])).trim(), 'healthy');

    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 200);
    const tile = await fetch(`${url}${tilePath}`);
    assert.equal(tile.status, 200, await tile.clone().text());
    assert.equal(tile.headers.get('content-type'), 'image/png');
    const fromImage = Buffer.from(await tile.arrayBuffer());
    const reference = await local.get(tilePath.replace(HOST_FROM_CONTAINER, '127.0.0.1'));
    assert.equal(reference.status, 200);
    assert.ok(fromImage.equals(Buffer.from(await reference.arrayBuffer())), "the image's tile is this checkout's");
    const logs = await must('podman', ['logs', CONTAINER]);
    assert.match(logs, /"path":"\/cog\/tiles\/WebMercatorQuad\/9\/289\/207\.png"/, 'the request log on stdout');

    await must('podman', ['stop', '--time', '30', CONTAINER], 60_000);
    assert.equal((await must('podman', ['inspect', '--format', '{{.State.ExitCode}}', CONTAINER])).trim(), '0', 'SIGTERM: a clean exit');
    await must('podman', ['rm', CONTAINER]);
  });

  it('runs deploy/compose.yaml: two replicas behind nginx sharing Redis', async () => {
    const httpPort = await freePort();
    const override = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-compose-')), 'compose.test.yaml');
    // The test's only additions: the replicas may read the host's file server, and keep no tiles in
    // memory, so that a repeated tile can only come from Redis.
    const testEnv = `      TESSERA_ALLOWED_NETWORKS: "${PRIVATE_NETWORKS}"\n      TESSERA_TILE_CACHE_BYTES: "0"\n`;
    await fs.writeFile(override, `services:\n  tessera-1:\n    environment:\n${testEnv}  tessera-2:\n    environment:\n${testEnv}`);
    composeEnv = { TESSERA_BASE: BASE, TESSERA_HTTP_PORT: String(httpPort) };
    composeArgs = ['--project-name', PROJECT, '-f', 'deploy/compose.yaml', '-f', override];
    await tearDownCompose();
    const started = Date.now();
    await must('podman-compose', [...composeArgs, 'up', '--detach'], 15 * 60_000, composeEnv);
    const front = `http://127.0.0.1:${httpPort}`;
    const replicas = ['tessera-1', 'tessera-2'].map((service) => `${PROJECT}_${service}_1`);
    const logs = async (name: string): Promise<string> => {
      const r = await run('podman', ['logs', name]);
      return r.stdout + r.stderr;
    };
    for (const name of replicas) {
      await waitFor(`${name} is healthy`, 120_000, async () => (await run('podman', ['healthcheck', 'run', name])).code === 0);
    }
    await waitFor('nginx answers /tiles/readyz', 60_000, async () => (await fetch(`${front}/tiles/readyz`)).status === 200);
    // nginx counts a replica that refused while starting as failed for a few seconds (max_fails, fail_timeout):
    // once both have answered through it, it sends to both.
    await waitFor('both replicas answer through nginx', 60_000, async () => {
      await (await fetch(`${front}/tiles/healthz`)).arrayBuffer();
      return (await Promise.all(replicas.map(logs))).every((log) => log.includes('"path":"/healthz"'));
    });
    console.log(`# compose up (nginx and redis images built if missing): ${seconds(started)}`);

    const tilejson = (await (await fetch(`${front}/tiles/cog/WebMercatorQuad/tilejson.json?${tilePath.split('?')[1]}`)).json()) as { tiles: string[] };
    assert.ok(tilejson.tiles[0]!.startsWith(`${front}/tiles/cog/tiles/WebMercatorQuad/{z}/{x}/{y}`), tilejson.tiles[0]);
    const first = await fetch(`${front}/tiles${tilePath}`);
    assert.equal(first.status, 200, await first.clone().text());
    assert.equal(first.headers.get('content-type'), 'image/png');
    assert.equal(first.headers.get('x-cache'), 'miss');
    const body = Buffer.from(await first.arrayBuffer());
    for (let i = 0; i < 6; i++) {
      const again = await fetch(`${front}/tiles${tilePath}`);
      assert.equal(again.headers.get('x-cache'), 'hit', 'from Redis, whichever replica answered');
      assert.ok(Buffer.from(await again.arrayBuffer()).equals(body));
    }
    const keys = Number((await must('podman', ['exec', `${PROJECT}_redis_1`, 'redis-cli', 'dbsize'])).trim());
    assert.ok(keys >= 1, `Redis holds the tile (${keys} keys)`);
    for (const name of replicas) {
      assert.match(await logs(name), /"path":"\/cog\/tiles\/WebMercatorQuad\/9\/289\/207\.png/, `${name} served some of the tiles`);
    }
  });
});
