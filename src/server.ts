/** Starts tessera: settings → services → Fastify app, with graceful shutdown. */
import type { Settings } from './config.js';
import { Services } from './services.js';
import { buildApp } from './api/app.js';
import { demoBanner } from './banner.js';

/** How long start waits for the services' warm-up at most. */
const STARTUP_WARM_MS = 2000;

/** Serves in this process; `banner`: print where the demo is (a cluster's primary does it once). */
export async function serve(settings: Settings, opts: { banner: boolean }): Promise<void> {
  const services = new Services(settings);
  const app = await buildApp(services);

  // A single bad request must never take the process down.
  process.on('unhandledRejection', (reason) => app.log.error({ err: reason }, 'unhandled rejection'));
  process.on('uncaughtException', (err) => app.log.error({ err }, 'uncaught exception'));

  // Shutdown: /readyz says 503 at once; after TESSERA_SHUTDOWN_DELAY_MS (time for a load balancer
  // to take this replica out) the server stops accepting and lets requests in flight finish, for
  // at most TESSERA_SHUTDOWN_GRACE_MS, then exits: 0 when they all finished, 1 when cut short.
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    app.draining = true;
    app.log.info(`${signal}: shutting down (delay ${settings.shutdownDelayMs} ms, grace ${settings.shutdownGraceMs} ms)`);
    setTimeout(() => {
      const force = setTimeout(() => {
        app.log.warn('requests still in flight after the shutdown grace period: exiting');
        process.exit(1);
      }, settings.shutdownGraceMs);
      force.unref();
      // Connections that go idle after close began (their request finished) are closed too.
      setInterval(() => app.server.closeIdleConnections(), 100).unref();
      app.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    }, settings.shutdownDelayMs).unref();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  // What the first requests would pay for, paid before the first request (bounded; never fails):
  // the catalogue's first connections, the reads and encoders, the routes asked in process.
  await services.warm(STARTUP_WARM_MS, (url, headers) => app.inject({ method: 'GET', url, headers }).then((res) => res.statusCode));
  const address = await app.listen({ host: settings.host, port: settings.port });
  app.log.info(`tessera listening on ${address}`);
  if (settings.demoDir && opts.banner) console.log(demoBanner(address));
}
