/**
 * Runs the three processes a parity test needs, each on a free port of 127.0.0.1: the fixture file
 * server (in this process), the reference TiTiler and tessera (`bin/tessera serve`). The reference
 * is TiTiler 0.18.10 (uvicorn from .parity/venv, tools/parity/setup.sh) or, for the 2.x suites of
 * issue 37, TiTiler 2.4.0 (uvicorn from the venv tools/parity/titiler2.sh makes and names), with
 * tessera then started under the setting a suite asks for (TESSERA_TITILER_API=2). Both servers get
 * the same GDAL environment and no proxy, so they read the same bytes the same way. Children run in
 * their own process group and are killed as a group, also when the test process exits early, so a
 * failing test leaves no server behind.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { FIXTURES, fixtureItem, startFileServer, type FileServer } from '../helpers/fileserver.js';
import { baseUrlNormaliser } from './compare.js';
import { REPO_ROOT } from '../helpers/paths.js';

/** The repository root. */
export const ROOT = REPO_ROOT;
export const UVICORN = path.join(ROOT, '.parity/venv/bin/uvicorn');
export const TESSERA_BIN = path.join(ROOT, 'bin/tessera');
const REPORT_PATH = path.join(ROOT, '.parity/report.md');

const STARTUP_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

/** The GDAL settings TiTiler is deployed with; tessera gets the same so both read alike. */
const GDAL_ENV: Record<string, string> = {
  GDAL_DISABLE_READDIR_ON_OPEN: 'EMPTY_DIR',
  GDAL_HTTP_MERGE_CONSECUTIVE_RANGES: 'YES',
  GDAL_INGESTED_BYTES_AT_OPEN: '32768',
  VSI_CACHE: 'TRUE',
};

export interface Service {
  name: string;
  /** The process group leader (the server's own process, or uvicorn's supervisor). */
  pid: number;
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  /** The last lines the process wrote (stdout and stderr), for error messages. */
  outputTail(): string;
  stop(): Promise<void>;
}

export interface Parity {
  fileserver: FileServer;
  /** `${fileserver.url}/item.json`: the fixture STAC item with hrefs on the file server. */
  itemUrl: string;
  /** The reference server (TiTiler 0.18.10 or 2.4.0, as the suite chose). */
  titiler: Service;
  tessera: Service;
  /** Replaces either server's base URL by `{BASE}` (the file server's URL is kept). */
  normalise(s: string): string;
  stop(): Promise<void>;
}

/** How to start a server under test: a command line given the port, and its name in messages. */
export interface ServerCommand {
  name: string;
  command: string;
  args(port: number): string[];
  /** Environment the server always gets (the caller's `env` may override it). */
  env?: Record<string, string>;
  /** What is asked until it answers 200 (default /healthz). */
  healthPath?: string;
}

/** tessera's setting that opens loopback, where the tests' file servers listen. */
export const LOOPBACK_NETWORKS = '127.0.0.0/8,::1/128';

export const TITILER_COMMAND: ServerCommand = {
  name: 'TiTiler',
  command: UVICORN,
  args: (port) => ['titiler.application.main:app', '--host', '127.0.0.1', '--port', String(port), '--no-access-log'],
};

/**
 * TiTiler 2.4.0, the reference of the 2.x suites: its venv's bin folder is what
 * tools/parity/titiler2.sh prints (it makes the venv the first time, from PyPI, pinned). Every
 * family of titiler.application's default app is on, as a 2.x deployment has it.
 */
export function titiler2Command(): ServerCommand {
  let bin: string;
  try {
    bin = execFileSync('bash', [path.join(ROOT, 'tools/parity/titiler2.sh')], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    throw new Error(`parity: the TiTiler 2.4.0 reference environment could not be made (tools/parity/titiler2.sh): ${(err as Error).message}`);
  }
  return { ...TITILER_COMMAND, name: 'TiTiler 2.4.0', command: path.join(bin, 'uvicorn') };
}

export const TESSERA_COMMAND: ServerCommand = {
  name: 'tessera',
  command: TESSERA_BIN,
  args: (port) => ['serve', '--host', '127.0.0.1', '--port', String(port)],
  // The file server is on loopback, which tessera refuses by default.
  env: { TESSERA_ALLOWED_NETWORKS: LOOPBACK_NETWORKS },
};

/** What a suite compares against, and how tessera runs for it. */
export interface ParityOptions {
  /** The reference server (default TiTiler 0.18.10; `titiler2Command()` for the 2.x suites). */
  reference?: ServerCommand;
  /** Settings the candidate runs with, e.g. `{ TESSERA_TITILER_API: '2' }`. */
  candidateEnv?: Record<string, string>;
}

/**
 * Starts the file server, the reference TiTiler and tessera (the candidate can be swapped, e.g. to
 * check the suite against TiTiler itself). Throws, after stopping whatever did start, if the
 * reference's environment is missing or a server does not answer /healthz in time.
 */
export async function startParity(candidate: ServerCommand = TESSERA_COMMAND, options: ParityOptions = {}): Promise<Parity> {
  const reference = options.reference ?? TITILER_COMMAND;
  if (!existsSync(reference.command)) {
    throw new Error(
      `parity: the ${reference.name} reference environment is missing (${path.relative(ROOT, reference.command)} not found); run \`bash tools/parity/setup.sh\` first`,
    );
  }
  const fileserver = await startFileServer(FIXTURES);
  fileserver.put('/item.json', await fixtureItem(fileserver.url));

  // Start both servers at once: TiTiler's import time dominates the start-up.
  const [titiler, tessera] = await Promise.allSettled([startServer(reference), startServer(candidate, options.candidateEnv)]);
  if (titiler.status === 'rejected' || tessera.status === 'rejected') {
    const errors: unknown[] = [];
    for (const r of [titiler, tessera]) {
      if (r.status === 'fulfilled') await r.value.stop();
      else errors.push(r.reason);
    }
    await fileserver.close();
    throw new Error(errors.map((e) => (e instanceof Error ? e.message : String(e))).join('\n\n'));
  }

  const normalise = baseUrlNormaliser([titiler.value.url, tessera.value.url]);
  return {
    fileserver,
    itemUrl: `${fileserver.url}/item.json`,
    titiler: titiler.value,
    tessera: tessera.value,
    normalise,
    async stop() {
      await Promise.all([titiler.value.stop(), tessera.value.stop()]);
      await fileserver.close();
    },
  };
}

/** A port the OS just handed out and released; a race with another process is unlikely. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** The parent's environment without proxies (loopback traffic must not leave) plus GDAL's. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(https?|ftp|all|no)_proxy$/i.test(k)) continue;
    // Settings of either server from the caller's shell would make the two disagree.
    if (/^(TITILER_|TESSERA_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...GDAL_ENV, ...extra, NO_PROXY: '*', no_proxy: '*', PYTHONUNBUFFERED: '1' };
}

/**
 * Starts one server in its own process group and waits for GET /healthz. `env` adds to (or
 * overrides) the shared GDAL settings.
 */
export async function startServer(spec: ServerCommand, env: Record<string, string> = {}): Promise<Service> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(spec.command, spec.args(port), {
    cwd: ROOT,
    env: childEnv({ ...spec.env, ...env }),
    // Its own process group, so stop() reaches whatever the server spawns too.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail = new OutputTail();
  child.stdout?.on('data', (b: Buffer) => tail.push(b));
  child.stderr?.on('data', (b: Buffer) => tail.push(b));
  const exited = new Promise<string>((resolve) => {
    child.on('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code ?? '?'}`));
    child.on('error', (err) => resolve(`spawn error: ${err.message}`));
  });
  liveGroups.add(child);
  const service: Service = {
    name: spec.name,
    pid: child.pid ?? 0,
    url,
    outputTail: () => tail.text(),
    stop: () => stopGroup(child, exited),
  };

  try {
    await waitHealthy(url, exited, STARTUP_TIMEOUT_MS, spec.healthPath);
  } catch (err) {
    await service.stop();
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(
      `parity: ${spec.name} (${spec.command} ${spec.args(port).join(' ')}) ${why}\n` + `--- ${spec.name} output (last lines) ---\n${tail.text() || '(none)'}`,
    );
  }
  return service;
}

/** Polls GET /healthz until it answers 200, the child exits, or the deadline passes. */
async function waitHealthy(url: string, exited: Promise<string>, timeoutMs: number, healthPath = '/healthz'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitReason: string | undefined;
  void exited.then((why) => (exitReason = why));
  let lastError = 'no answer';
  while (Date.now() < deadline) {
    if (exitReason !== undefined) throw new Error(`exited (${exitReason}) before answering /healthz`);
    try {
      const res = await fetch(`${url}${healthPath}`, { signal: AbortSignal.timeout(2_000), redirect: 'manual' });
      await res.arrayBuffer();
      if (res.status === 200) return;
      lastError = `HTTP ${res.status}`;
    } catch (err) {
      lastError = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`did not answer GET /healthz within ${timeoutMs / 1000} s (last: ${lastError})`);
}

/** SIGTERM to the whole group, SIGKILL after a grace period; resolves once the child is gone. */
async function stopGroup(child: ChildProcess, exited: Promise<string>): Promise<void> {
  if (!liveGroups.has(child)) return;
  liveGroups.delete(child);
  signalGroup(child, 'SIGTERM');
  const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), STOP_GRACE_MS).unref());
  if ((await Promise.race([exited, timer])) === 'timeout') {
    signalGroup(child, 'SIGKILL');
    await exited;
  }
  // The leader may be gone while children of it linger; make sure of the whole group.
  signalGroup(child, 'SIGKILL');
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Groups still running. If the test process ends without stop() (an uncaught error, Ctrl-C), they
 * are killed synchronously on the way out: detached children would otherwise outlive us.
 */
const liveGroups = new Set<ChildProcess>();

function killAllNow(): void {
  for (const child of liveGroups) signalGroup(child, 'SIGKILL');
  liveGroups.clear();
}

process.on('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    killAllNow();
    // Die of the same signal, as we would have without this handler.
    process.kill(process.pid, sig);
  });
}

/** The last ~80 lines of a child's output. */
class OutputTail {
  private lines: string[] = [];
  private partial = '';

  push(chunk: Buffer): void {
    const parts = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = parts.pop() ?? '';
    this.lines.push(...parts);
    if (this.lines.length > 80) this.lines.splice(0, this.lines.length - 80);
  }

  text(): string {
    return [...this.lines, this.partial].filter((l) => l.length > 0).join('\n');
  }
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/** One server's answer; `status` 0 and `error` set when there was no HTTP answer at all. */
export interface Reply {
  status: number;
  headers: Headers;
  body: string;
  error?: string;
}

const REQUEST_TIMEOUT_MS = 20_000;

/**
 * GET `pathAndQuery` (sent byte for byte: TiTiler echoes the raw query in WMTS links). By default
 * asks for no compression so that a test that wants gzip has to say so.
 */
export async function get(base: string, pathAndQuery: string, headers: Record<string, string> = {}): Promise<Reply> {
  const once = async (): Promise<Reply> => {
    try {
      const res = await fetch(`${base}${pathAndQuery}`, {
        redirect: 'manual',
        headers: { 'accept-encoding': 'identity', ...headers },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      return { status: res.status, headers: res.headers, body: await res.text() };
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      const error = `${err instanceof Error ? err.message : String(err)}${cause}`;
      return { status: 0, headers: new Headers(), body: '', error };
    }
  };
  const reply = await once();
  // A kept-alive connection the server closed (its idle timeout) just as the request went out is
  // reset before any answer; a GET is safe to send again on a fresh connection. Seen with uvicorn.
  if (reply.error !== undefined && /ECONNRESET|other side closed/.test(reply.error)) return once();
  return reply;
}

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------

export type Verdict = 'equal' | 'differs' | 'deliberate';

export interface ReportRow {
  id: string;
  request: string;
  verdict: Verdict;
  /** How they differ, which deliberate difference applies, or what each server answered. */
  note: string;
}

/**
 * Writes the parity table as markdown and returns its path. `preface` goes above the table,
 * `appendix` (more markdown lines) below it.
 */
export async function writeReport(
  rows: readonly ReportRow[],
  preface: readonly string[] = [],
  appendix: readonly string[] = [],
  /** Suite name: each suite writes .parity/report-<suite>.md; the metadata suite keeps report.md. */
  suite?: string,
  /** What tessera was compared with. */
  reference = 'TiTiler 0.18.10',
): Promise<string> {
  const reportPath = suite ? path.join(path.dirname(REPORT_PATH), `report-${suite}.md`) : REPORT_PATH;
  const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
  const counts = (v: Verdict): number => rows.filter((r) => r.verdict === v).length;
  const lines = [
    `# tessera vs ${reference}: parity report`,
    '',
    `Generated by dist/test/parity/${suite ?? 'stac-metadata'}.test.js on ${new Date().toISOString()}.`,
    '',
    ...preface,
    ...(preface.length > 0 ? [''] : []),
    `${rows.length} cases: ${counts('equal')} equal, ${counts('deliberate')} deliberate, ${counts('differs')} differ.`,
    '',
    '| case | request | result |',
    '| --- | --- | --- |',
    ...rows.map((r) => {
      const result = r.note === '' ? r.verdict : `${r.verdict}: ${r.note}`;
      return `| ${cell(r.id)} | \`${cell(r.request)}\` | ${cell(result)} |`;
    }),
    '',
    ...appendix,
  ];
  await fs.mkdir(path.dirname(reportPath), { recursive: true });
  await fs.writeFile(reportPath, lines.join('\n'));
  return reportPath;
}
