/**
 * The `tessera` command (commander): `serve` starts the server, `demo` writes the built-in demo data
 * (COGs, a STAC item, a MosaicJSON). `--help` on every command (`serve --help` lists every
 * setting), `--version`. Exit codes: 0 done, 1 a setting or the server failed, 2 a usage mistake.
 */
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { loadSettings, settingsHelp, unknownSettings, type Settings } from './config.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** A whole number in [min, max], or a usage error naming the option. */
function wholeIn(what: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`invalid ${what} '${value}' (${min} to ${max})`);
    return n;
  };
}

const program = new Command()
  .name('tessera')
  .description('Raster tiles and metadata from COGs, STAC items and MosaicJSON (TiTiler 0.18 compatible)')
  .version(VERSION, '-v, --version')
  .showHelpAfterError('(tessera --help, tessera serve --help: the commands, options and settings)')
  .exitOverride();

program
  .command('serve')
  .description('start the server (settings come from the environment; options override a few)')
  .option('--host <host>', 'address to listen on (TESSERA_HOST)')
  .option('--port <port>', 'port to listen on (TESSERA_PORT)', wholeIn('port', 0, 65535))
  .option('--workers <n>', 'server processes sharing the port (TESSERA_WORKERS)', wholeIn('number of workers', 1, 64))
  .option('--render-threads <n>', 'image threads per process (TESSERA_RENDER_THREADS)', wholeIn('number of render threads', 0, 64))
  .option('--demo <dir>', 'serve the demo data written by `tessera demo` under /demo/')
  .addHelpText('after', `\nSettings (environment):\n${settingsHelp()}\n`)
  .action(async (options: { host?: string; port?: number; workers?: number; renderThreads?: number; demo?: string }) => {
    const overrides: Partial<Settings> = {};
    if (options.host !== undefined) overrides.host = options.host;
    if (options.port !== undefined) overrides.port = options.port;
    if (options.workers !== undefined) overrides.workers = options.workers;
    if (options.renderThreads !== undefined) overrides.renderThreads = options.renderThreads;
    if (options.demo !== undefined) overrides.demoDir = path.resolve(options.demo);
    const settings = loadSettings(overrides);
    for (const name of unknownSettings()) console.error(`tessera: warning: ${name} is not a setting tessera knows (see tessera serve --help); it is ignored`);
    if (settings.demoDir && settings.allowedNetworks.length === 0) {
      console.error('tessera: the demo is read back over loopback, which is refused by default: set TESSERA_ALLOWED_NETWORKS=127.0.0.0/8 (make run does)');
    }
    const { serveAll } = await import('./cluster.js');
    await serveAll(settings);
  });

program
  .command('demo')
  .description('write the demo data: two COGs, a STAC item and a MosaicJSON')
  .requiredOption('--out <dir>', 'folder to write into')
  .option('--base-url <url>', 'URL the folder will be served at (the documents link their files by it)')
  .action(async (options: { out: string; baseUrl?: string }) => {
    const { makeDemoData } = await import('./demo/make.js');
    const baseUrl = options.baseUrl;
    const written = await makeDemoData(path.resolve(options.out), baseUrl ? { baseUrl: baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/` } : {});
    for (const file of written) console.log(`demo: ${file}`);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    // --help and --version end here too, with code 0; usage mistakes get 2.
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  console.error(`tessera: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
