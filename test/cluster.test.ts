/**
 * `tessera serve --workers N` (src/cluster.ts), run as users run it (bin/tessera in its own process
 * group): N worker processes under one primary share the port, a worker that dies is replaced while
 * the others keep serving, SIGTERM stops them all, and bad worker counts are refused.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { TESSERA_BIN, startServer, type Service } from './parity/harness.js';

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (text) out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** GET on a fresh connection each time, so the primary hands every request to the next worker. */
async function ping(service: Service): Promise<number> {
  const res = await fetch(`${service.url}/healthz`, { headers: { connection: 'close' } });
  await res.arrayBuffer();
  return res.status;
}

function startCluster(workers: number): Promise<Service> {
  return startServer({
    name: 'tessera cluster',
    command: TESSERA_BIN,
    args: (port) => ['serve', '--host', '127.0.0.1', '--port', String(port), '--workers', String(workers)],
  });
}

describe('tessera serve --workers', () => {
  it('runs N workers behind one port and replaces one that dies', async () => {
    const service = await startCluster(2);
    try {
      await waitFor('two workers', () => childrenOf(service.pid).length === 2);
      const [first, second] = childrenOf(service.pid);
      // Both must be listening before one is killed: a started worker that has not yet listened takes
      // no connections, and with the only listening one gone the primary closes the port.
      await waitFor('both workers serving', () => [first, second].every((pid) => service.outputTail().includes(`worker ${pid} serving`)));
      for (let i = 0; i < 6; i++) assert.equal(await ping(service), 200);

      process.kill(first!, 'SIGKILL');
      await waitFor('the killed worker to go', () => !alive(first!));
      // The other worker serves meanwhile; a replacement joins it.
      for (let i = 0; i < 4; i++) assert.equal(await ping(service), 200);
      await waitFor('a replacement worker', () => {
        const now = childrenOf(service.pid);
        return now.length === 2 && now.includes(second!) && !now.includes(first!);
      });
      for (let i = 0; i < 4; i++) assert.equal(await ping(service), 200);
      assert.match(service.outputTail(), /worker \d+ exited \(SIGKILL\)/);
    } finally {
      await service.stop();
    }
  });

  it('stops every worker on SIGTERM', async () => {
    const service = await startCluster(2);
    await waitFor('two workers', () => childrenOf(service.pid).length === 2);
    const workers = childrenOf(service.pid);
    process.kill(service.pid, 'SIGTERM');
    await waitFor('the primary and its workers to exit', () => !alive(service.pid) && workers.every((w) => !alive(w)), 15_000);
    await service.stop();
  });

  it('serves from the starting process with --workers 1', async () => {
    const service = await startCluster(1);
    try {
      assert.equal(await ping(service), 200);
      assert.deepEqual(childrenOf(service.pid), []);
    } finally {
      await service.stop();
    }
  });

  it('refuses worker counts outside 1–64', () => {
    for (const bad of ['0', '65', 'two', '1.5']) {
      const run = spawnSync(TESSERA_BIN, ['serve', '--port', '0', '--workers', bad], { encoding: 'utf8', timeout: 20_000 });
      assert.equal(run.status, 2, `--workers ${bad}: a usage mistake`);
      assert.match(run.stderr, /option '--workers <n>' argument '.+' is invalid\. expected (a whole number|at least 1|at most 64)/);
    }
  });
});
