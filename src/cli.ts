/**
 * `tessera serve [--host H] [--port P] [--workers N] [--render-threads N] [--demo DIR]` starts the server;
 * `tessera demo --out DIR` writes the built-in demo data (COGs, a STAC item, a MosaicJSON).
 */
import { parseArgs } from 'node:util';
import path from 'node:path';
import { loadSettings } from './config.js';

const USAGE = `usage:
  tessera serve [--host HOST] [--port PORT] [--demo DIR]
  tessera demo --out DIR [--base-url URL]`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'serve') {
    const { values } = parseArgs({
      args: rest,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        demo: { type: 'string' },
        workers: { type: 'string' },
        'render-threads': { type: 'string' },
      },
    });
    const overrides: Parameters<typeof loadSettings>[0] = {};
    if (values.host !== undefined) overrides.host = values.host;
    if (values.port !== undefined) {
      const port = Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port '${values.port}'`);
      overrides.port = port;
    }
    if (values.demo !== undefined) overrides.demoDir = path.resolve(values.demo);
    if (values.workers !== undefined) {
      const workers = Number(values.workers);
      if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new Error(`invalid number of workers '${values.workers}' (1 to 64)`);
      overrides.workers = workers;
    }
    if (values['render-threads'] !== undefined) {
      const threads = Number(values['render-threads']);
      if (!Number.isInteger(threads) || threads < 0 || threads > 64) throw new Error(`invalid number of render threads '${values['render-threads']}' (0 to 64)`);
      overrides.renderThreads = threads;
    }
    const settings = loadSettings(overrides);
    if (settings.demoDir && settings.allowedNetworks.length === 0) {
      console.error('tessera: the demo is read back over loopback, which is refused by default: set TESSERA_ALLOWED_NETWORKS=127.0.0.0/8 (make run does)');
    }
    const { serveAll } = await import('./cluster.js');
    await serveAll(settings);
    return 0;
  }
  if (command === 'demo') {
    const { values } = parseArgs({ args: rest, options: { out: { type: 'string' }, 'base-url': { type: 'string' } } });
    if (!values.out) throw new Error('demo needs --out DIR');
    const { makeDemoData } = await import('./demo/make.js');
    const baseUrl = values['base-url'];
    const written = await makeDemoData(path.resolve(values.out), baseUrl ? { baseUrl: baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/` } : {});
    for (const file of written) console.log(`demo: ${file}`);
    return 0;
  }
  console.error(USAGE);
  return command === undefined || command === '--help' || command === '-h' ? 0 : 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    console.error(`tessera: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
