/**
 * The `tessera` command (commander): `serve` starts the server, `demo` writes the built-in demo data
 * (COGs, a STAC item, a MosaicJSON), `mosaic create` writes a MosaicJSON for a list of COGs as
 * `cogeo-mosaic create` does. `--help` on every command (`serve --help` lists every setting),
 * `--version`. Exit codes: 0 done, 1 a setting, the server or the work failed, 2 a usage mistake.
 */
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { applySettingsFile, loadSettings, settingsHelp, unknownSettings, type Settings } from './config.js';
import { TESSERA_VERSION } from './version.js';

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
  .version(TESSERA_VERSION, '-v, --version')
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
  .option('--config <file>', 'settings file (TESSERA_CONFIG): NAME=value lines of the settings below, for those the environment leaves unset')
  .addHelpText('after', `\nSettings (environment, or a --config file of NAME=value lines):\n${settingsHelp()}\n`)
  .action(async (options: { host?: string; port?: number; workers?: number; renderThreads?: number; demo?: string; config?: string }) => {
    const file = options.config ?? process.env['TESSERA_CONFIG'];
    if (file) applySettingsFile(file);
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

const MOSAIC_CREATE_HELP = `
Each line of the list is a COG's URL; blank lines and lines starting with # are skipped. The COGs are
read as \`tessera serve\` reads them, under the same settings: http(s) URLs on public addresses
(TESSERA_ALLOWED_NETWORKS opens others), local paths inside TESSERA_ALLOWED_LOCAL_ROOTS only,
TESSERA_ALLOWED_HOSTS, TESSERA_ALLOWED_DRIVERS. A COG that cannot be read is reported and left out.
The document is the one cogeo-mosaic 7.2 writes (MosaicJSON 0.0.3, WebMercatorQuad): zooms are the
largest of the COGs' unless given, the quadkey zoom is the minzoom unless given.

Examples:
  $ tessera mosaic create urls.txt -o mosaic.json
  $ grep -v B09 urls.txt | tessera mosaic create --quadkey-zoom 8 > mosaic.json
  $ TESSERA_ALLOWED_LOCAL_ROOTS=/data tessera mosaic create tiles.txt --name 'Survey 2024' -o mosaic.json.gz

Exit status: 0 written, 1 nothing written (no COG could be read, COGs of different data types, an
unreadable list), 2 a usage mistake.
`;

interface MosaicCreateOptions {
  output?: string;
  minzoom?: number;
  maxzoom?: number;
  quadkeyZoom?: number;
  threads: number;
  name?: string;
  description?: string;
  attribution?: string;
}

const mosaic = program.command('mosaic').description('MosaicJSON documents');
mosaic
  .command('create')
  .description('write a MosaicJSON document for a list of COG URLs (as cogeo-mosaic create)')
  .argument('[list]', "file of COG URLs, one per line ('-' or none: standard input)")
  .option('-o, --output <file>', 'write the document to this file (gzip-compressed if it ends with .gz) instead of standard output')
  .option('--minzoom <z>', "the mosaic's minzoom instead of the largest of the COGs'", wholeIn('minzoom', 0, 30))
  .option('--maxzoom <z>', "the mosaic's maxzoom instead of the largest of the COGs'", wholeIn('maxzoom', 0, 30))
  .option('--quadkey-zoom <z>', 'zoom of the quadkeys indexing the COGs instead of the minzoom', wholeIn('quadkey zoom', 0, 30))
  .option('--threads <n>', 'COGs read at once', wholeIn('number of threads', 1, 256), 20)
  .option('--name <text>', "the document's name")
  .option('--description <text>', "the document's description")
  .option('--attribution <text>', "the document's attribution")
  .addHelpText('after', MOSAIC_CREATE_HELP)
  .showHelpAfterError('(tessera mosaic create --help: the options, the list and examples)')
  .action(async (list: string | undefined, options: MosaicCreateOptions) => {
    const fromStdin = list === undefined || list === '-';
    const source = fromStdin ? 'standard input' : `'${list}'`;
    if (fromStdin && process.stdin.isTTY) console.error('tessera: reading COG URLs from standard input, one per line (end with Ctrl-D)');
    let text: string;
    try {
      text = fromStdin ? await readStdin() : readFileSync(list, 'utf8');
    } catch (err) {
      throw new Error(`cannot read the list of COG URLs ${source}: ${(err as Error).message}`);
    }
    const { parseUrlList, readFootprints } = await import('./mosaic/footprints.js');
    const urls = parseUrlList(text);
    if (urls.length === 0) throw new Error(`no COG URL in ${source}: give one URL per line`);
    // The server's settings (policies, timeouts, drivers); nothing is rendered or cached for a tile.
    const settings = loadSettings({ renderThreads: 0, cacheUrl: undefined, tileCacheBytes: 0 });
    for (const name of unknownSettings()) console.error(`tessera: warning: ${name} is not a setting tessera knows (see tessera serve --help); it is ignored`);
    const [{ Services }, { buildMosaicJson }, { getTms, WEB_MERCATOR_QUAD }, { pyDumps }] = await Promise.all([
      import('./services.js'),
      import('./mosaic/build.js'),
      import('./tms/registry.js'),
      import('./pyjson.js'),
    ]);
    const services = new Services(settings);
    try {
      const results = await readFootprints(urls, (url) => services.cog(url), getTms(WEB_MERCATOR_QUAD)!, options.threads);
      const footprints = results.flatMap((r) => (r.ok ? [r.footprint] : []));
      for (const r of results) if (!r.ok) console.error(`tessera: warning: ${r.url} is left out: ${r.message}`);
      if (footprints.length === 0) throw new Error(`none of the ${urls.length} COG(s) in ${source} could be read (see the warnings above); nothing written`);
      const built = buildMosaicJson(footprints, options);
      for (const warning of built.warnings) console.error(`tessera: warning: ${warning}`);
      const json = pyDumps(built.document);
      if (options.output === undefined) process.stdout.write(`${json}\n`);
      else writeOutput(options.output, json);
      const bytes = Buffer.byteLength(json);
      console.error(
        `tessera: ${options.output ?? 'standard output'}: ${footprints.length} COG(s), ${built.quadkeys} quadkey(s) at zoom ${built.quadkeyZoom}, ${bytes} bytes`,
      );
      if (bytes > settings.maxDocumentBytes) {
        console.error(
          `tessera: warning: tessera reads MosaicJSON documents of up to ${settings.maxDocumentBytes} bytes (TESSERA_MAX_DOCUMENT_BYTES): raise it to serve this one, or choose a lower --quadkey-zoom`,
        );
      }
    } finally {
      await services.close();
    }
  });

/** The document to a file, gzip-compressed as cogeo-mosaic's file backend writes `.gz` names. */
function writeOutput(file: string, json: string): void {
  try {
    writeFileSync(file, file.endsWith('.gz') ? gzipSync(json, { level: 9 }) : json);
  } catch (err) {
    throw new Error(`cannot write the document to '${file}': ${(err as Error).message}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    // --help and --version end here too, with code 0; usage mistakes get 2.
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  console.error(`tessera: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
