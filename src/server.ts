/** Starts tessera: settings → services → Fastify app, with graceful shutdown. */
import type { Settings } from './config.js';
import { Services } from './services.js';
import { buildApp } from './api/app.js';
import { demoBanner } from './banner.js';

/** Serves in this process; `banner`: print where the demo is (a cluster's primary does it once). */
export async function serve(settings: Settings, opts: { banner: boolean }): Promise<void> {
  const services = new Services(settings);
  const app = await buildApp(services);

  // A single bad request must never take the process down.
  process.on('unhandledRejection', (reason) => app.log.error({ err: reason }, 'unhandled rejection'));
  process.on('uncaughtException', (err) => app.log.error({ err }, 'uncaught exception'));

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal}: shutting down`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const address = await app.listen({ host: settings.host, port: settings.port });
  app.log.info(`tessera listening on ${address}`);
  if (settings.demoDir && opts.banner) console.log(demoBanner(address));
}
