/** Starts tessera: settings → services → Fastify app, with graceful shutdown. */
import type { Settings } from './config.js';
import { Services } from './services.js';
import { buildApp } from './api/app.js';

export async function serve(settings: Settings): Promise<void> {
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
  if (settings.demoDir) {
    const item = `${address}/demo/item.json`;
    const q = `url=${encodeURIComponent(item)}`;
    console.log(`
tessera is serving its demo data. Start here: ${address}/

  STAC viewer     ${address}/stac/viewer?${q}
  demo map        ${address}/stac/WebMercatorQuad/map?${q}&assets=rgb
  API docs        ${address}/api.html
  demo item info  ${address}/stac/info?${q}
  demo TileJSON   ${address}/stac/WebMercatorQuad/tilejson.json?${q}&assets=rgb
  WMTS for QGIS   ${address}/stac/WebMercatorQuad/WMTSCapabilities.xml?${q}&assets=rgb
`);
  }
}
