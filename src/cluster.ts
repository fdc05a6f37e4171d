/**
 * `tessera serve` in several processes: a primary that only supervises, and `workers` copies of the
 * server sharing one listening socket (node:cluster; the primary hands connections out round-robin).
 *
 * Not the default: one process with render threads (image/render-threads.ts) uses the cores as
 * well for tiles (stac-rgb, c=16: 175 tiles/s against 190 with two processes) and keeps one set of
 * GDAL caches; every added process fills its own (two took 1.6 GiB where one with threads takes
 * ~0.6 GiB). Several processes remain an option for hosts with many cores.
 *
 * GDAL's settings, GDAL_CACHEMAX included, apply to each worker, as they do to each of TiTiler's
 * uvicorn workers. Splitting the block cache between workers was measured and dropped: connections
 * go to any worker, so each needs the whole working set, and with half the cache each warm tiles
 * went back upstream (300 requests and 385 MB in 8 s instead of none).
 */
import cluster, { type Worker } from 'node:cluster';
import type { Settings } from './config.js';
import { demoBanner } from './banner.js';

/** A worker that exits this soon after starting counts towards a crash loop. */
const EARLY_EXIT_MS = 10_000;
/** Stop replacing workers after this many early exits in a row: something is wrong with the setup. */
const MAX_EARLY_EXITS = 5;
/** How long workers get to finish their requests on shutdown before they are killed. */
const SHUTDOWN_GRACE_MS = 12_000;

/** Starts the server: in this process for one worker, else as the primary of `settings.workers`. */
export async function serveAll(settings: Settings): Promise<void> {
  if (settings.workers <= 1 || !cluster.isPrimary) {
    // Loaded here, not at the top: the primary never loads GDAL or the app.
    const { serve } = await import('./server.js');
    await serve(settings, { banner: cluster.isPrimary });
    return;
  }
  await supervise(settings);
}

function supervise(settings: Settings): Promise<void> {
  let closing = false;
  let earlyExits = 0;
  let bannerShown = false;
  const started = new Map<Worker, number>();

  const fork = (): void => {
    const worker = cluster.fork();
    started.set(worker, Date.now());
  };

  return new Promise((resolve, reject) => {
    cluster.on('listening', (worker, address) => {
      earlyExits = 0;
      if (!bannerShown) {
        bannerShown = true;
        const host = address.address?.includes(':') ? `[${address.address}]` : address.address || settings.host;
        const url = `http://${host}:${address.port}`;
        console.log(`tessera: ${settings.workers} workers listening on ${url}`);
        if (settings.demoDir) console.log(demoBanner(url));
      }
      // Connections go only to workers that listen: until this line a started worker takes none.
      console.log(`tessera: worker ${worker.process.pid} serving`);
    });

    cluster.on('exit', (worker, code, signal) => {
      const since = Date.now() - (started.get(worker) ?? 0);
      started.delete(worker);
      if (closing) {
        if (started.size === 0) resolve();
        return;
      }
      console.error(`tessera: worker ${worker.process.pid} exited (${signal ?? `code ${code}`}) after ${Math.round(since / 1000)} s; starting another`);
      if (since < EARLY_EXIT_MS && ++earlyExits >= MAX_EARLY_EXITS) {
        closing = true;
        for (const w of started.keys()) w.process.kill('SIGTERM');
        reject(new Error(`workers keep exiting right after they start (${earlyExits} in a row); see the messages above`));
        return;
      }
      fork();
    });

    const shutdown = (): void => {
      if (closing) return;
      closing = true;
      // Workers shut down gracefully on SIGTERM (server.ts); a Ctrl-C reaches them directly too.
      for (const w of started.keys()) w.process.kill('SIGTERM');
      if (started.size === 0) resolve();
      setTimeout(() => {
        for (const w of started.keys()) w.process.kill('SIGKILL');
        resolve();
      }, SHUTDOWN_GRACE_MS).unref();
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);

    for (let i = 0; i < settings.workers; i++) fork();
  });
}
