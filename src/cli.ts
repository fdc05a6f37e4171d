/**
 * The `tessera` command (commander): `serve` starts the server, `demo` writes the built-in demo data
 * (COGs, a STAC item, a MosaicJSON), `mosaic create|footprint|info` make and read MosaicJSON as
 * cogeo-mosaic's commands do (cli-mosaic.ts), for a list of COGs or a STAC API search, and `mosaic
 * overview` makes a mosaic's low-zoom overview COG. `--help` on
 * every command (`serve --help` lists every setting), `--version`. Exit codes: 0 done, 1 a setting, the server or the work failed, 2 a usage
 * mistake.
 */
import path from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { applySettingsFile, loadSettings, parseSetting, settingFlags, unknownSettings, type SettingKey } from './config.js';
import { settingsHelp } from './config/docs.js';
import type { MosaicOptions } from './mosaic/build.js';
import type { AssetOptions, OverviewCliOptions } from './cli-mosaic.js';
import { PIXEL_SELECTION_METHODS } from './mosaic/methods.js';
import { OVERVIEW_RESAMPLINGS } from './mosaic/overview.js';
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

const serve = program.command('serve').description('start the server (settings come from the environment and a settings file; flags override a few)');
// The flags are declared with their settings (src/config/settings.ts); each is checked by its
// setting's schema here, so a bad one is a usage mistake (exit 2), and read as its setting's text.
const flagged = settingFlags().map((f) => {
  const option = new Option(f.flag, `${f.description} (${f.env})`).argParser((text: string) => {
    const parsed = parseSetting(f.key, text);
    if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
    return text;
  });
  serve.addOption(option);
  return { key: f.key, attribute: option.attributeName() };
});
serve
  .option('--config <file>', 'settings file (TESSERA_CONFIG): NAME=value lines of the settings below, for those the environment leaves unset')
  .addHelpText('after', `\nSettings (environment, or a --config file of NAME=value lines; see docs/configuration.md):\n${settingsHelp()}\n`)
  .action(async (options: Record<string, string | undefined>) => {
    const file = options['config'] ?? process.env['TESSERA_CONFIG'];
    if (file) applySettingsFile(file);
    const flags: Partial<Record<SettingKey, string>> = {};
    for (const { key, attribute } of flagged) {
      const text = options[attribute];
      if (text !== undefined) flags[key] = text;
    }
    const settings = loadSettings({}, process.env, flags);
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

/** A list of comma-separated words (`a,b`). */
function words(value: string): string[] {
  const list = value
    .split(',')
    .map((w) => w.trim())
    .filter((w) => w !== '');
  if (list.length === 0) throw new InvalidArgumentError('give one or more names separated by commas');
  return list;
}

/** `west,south,east,north` in degrees. */
function bbox(value: string): number[] {
  const n = value.split(',').map((v) => Number(v.trim()));
  if ((n.length !== 4 && n.length !== 6) || n.some((v) => !Number.isFinite(v))) throw new InvalidArgumentError(`'${value}' is not west,south,east,north`);
  return n;
}

/** The Query extension's JSON object. */
function queryJson(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError(`'${value}' is not JSON: give an object such as '{"eo:cloud_cover": {"lt": 10}}'`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new InvalidArgumentError('give a JSON object such as \'{"eo:cloud_cover": {"lt": 10}}\'');
  return parsed as Record<string, unknown>;
}

const POLICIES_HELP = `The COGs (and a STAC API) are read as \`tessera serve\` reads them, under the same settings: http(s)
URLs on public addresses (TESSERA_ALLOWED_NETWORKS opens others, e.g. 10.0.0.0/8 or 127.0.0.0/8),
local paths inside TESSERA_ALLOWED_LOCAL_ROOTS only, TESSERA_ALLOWED_HOSTS, TESSERA_ALLOWED_DRIVERS.

Each line of a list is a COG's URL; blank lines and lines starting with # are skipped. With --stac,
the API's POST /search is asked for the items (--collections, --bbox, --datetime, --query; pages of
--limit items followed by their 'next' links, at most --max-items items), and each item's --asset
is its COG, in the order the API answers.

Every asset is checked: one that cannot be read (unreachable, refused, not a raster), is no Cloud
Optimized GeoTIFF (rio-cogeo's rules), or is in another CRS than the others (unless
--allow-mixed-crs), and every item without the --asset, is named with the reason; then nothing is
written and the exit status is 1, unless --skip-errors leaves them out.

Progress goes to standard error: a bar on a terminal, plain lines otherwise.`;

/** The options `create` and `footprint` share: where the COGs come from and how they are read. */
function assetOptions(command: Command): Command {
  return command
    .argument('[list]', "file of COG URLs, one per line ('-' or none: standard input; not with --stac)")
    .option('--stac <url>', 'a STAC API (its root or its /search endpoint) to search for the COGs instead of a list')
    .option('--collections <names>', 'with --stac: collections to search, comma-separated', words)
    .option('--bbox <w,s,e,n>', 'with --stac: items intersecting this box (degrees)', bbox)
    .option('--datetime <range>', "with --stac: items of this time or range (RFC 3339: '2024-01-01T00:00:00Z/..')")
    .option('--query <json>', 'with --stac: a Query extension object, e.g. \'{"eo:cloud_cover": {"lt": 10}}\'', queryJson)
    .option('--asset <name>', "with --stac: the asset of each item that is its COG (e.g. 'visual')")
    .option('--limit <n>', 'with --stac: items per page', wholeIn('page limit', 1, 10000), 100)
    .option('--max-items <n>', 'with --stac: items read at most', wholeIn('number of items', 1, 1_000_000), 10000)
    .option('--threads <n>', 'COGs read at once', wholeIn('number of threads', 1, 256), 20)
    .option('--skip-errors', 'leave out (with a warning) the assets that cannot be used instead of failing')
    .option('--allow-mixed-crs', 'take COGs in different CRSs (tiles are reprojected anyway; cogeo-mosaic does not check)');
}

const MOSAIC_CREATE_HELP = `
${POLICIES_HELP}

The document is the one cogeo-mosaic writes (MosaicJSON 0.0.3, WebMercatorQuad; its 7.2 and 9.x agree
on it): zooms are the largest of the COGs' unless given, the quadkey zoom is the minzoom unless given.

Examples:
  $ tessera mosaic create urls.txt -o mosaic.json
  $ grep -v B09 urls.txt | tessera mosaic create --quadkey-zoom 8 > mosaic.json
  $ TESSERA_ALLOWED_LOCAL_ROOTS=/data tessera mosaic create tiles.txt --name 'Survey 2024' -o mosaic.json.gz
  $ tessera mosaic create --stac https://earth-search.aws.element84.com/v1 --collections sentinel-2-l2a \\
      --bbox 5.9,45.8,10.5,47.8 --datetime 2024-07-01T00:00:00Z/2024-07-31T23:59:59Z \\
      --query '{"eo:cloud_cover": {"lt": 10}}' --asset visual --skip-errors --allow-mixed-crs -o swiss.json

Exit status: 0 written, 1 nothing written (an asset that cannot be used without --skip-errors, no
COG left, COGs of different data types, a failed search, an unreadable list), 2 a usage mistake.
`;

const MOSAIC_FOOTPRINT_HELP = `
${POLICIES_HELP}

The output is the FeatureCollection \`cogeo-mosaic footprint\` writes: one polygon per COG (its
geographic bounds), with properties path, bounds, minzoom, maxzoom and datatype.

Examples:
  $ tessera mosaic footprint urls.txt -o footprints.geojson
  $ tessera mosaic footprint --stac https://stac.example.com --collections dem --asset data > dem.geojson

Exit status: 0 written, 1 nothing written (as for create), 2 a usage mistake.
`;

const MOSAIC_INFO_HELP = `
Reads a MosaicJSON document (a local file, gzip-compressed or not, or an http(s) URL read under the
server's policies, as for create) and prints what \`cogeo-mosaic info\` prints: the profile (name,
version), the geography (bounds, center, zooms, quadkey zoom) and the tiles (quadkeys, assets per
quadkey), plus the number of distinct assets.

Examples:
  $ tessera mosaic info mosaic.json
  $ tessera mosaic info mosaic.json.gz --json | jq '.TILES'
  $ tessera mosaic info https://data.example.com/mosaics/2024.json

Exit status: 0 printed, 1 the document cannot be read or is not MosaicJSON, 2 a usage mistake.
`;

const MOSAIC_OVERVIEW_HELP = `
Below a mosaic's minzoom a tile covers many assets (four zooms down, hundreds), and reading them all
takes seconds. This composes the mosaic once, as the server does (the same assets, reads and pixel
selection), at one zoom below the minzoom by default (--zoom, at most the minzoom), into one Cloud
Optimized GeoTIFF in EPSG:3857
(internal overviews, DEFLATE, a mask where there is no data), and writes the document again with
the field naming it:

  "tessera:overview": {"href": "<--href>", "maxzoom": <zoom>, "pixel_selection": "<--pixel-selection>"}

tessera then answers tiles from that zoom down with one read of the overview when the request's
pixel_selection is the overview's (--zoom set to the minzoom covers the minzoom too, whose tiles are
then the composed tiles pixel for pixel, at four times the pixels of the default); other readers of MosaicJSON (TiTiler, cogeo-mosaic)
ignore the field. Upload the COG to where --href says, and serve the new document. Rebuild the
overview when the assets change.

The document (a file, gzip-compressed or not, or an http(s) URL) and its assets are read as \`tessera
serve\` reads them, under the same settings (TESSERA_ALLOWED_NETWORKS, TESSERA_ALLOWED_LOCAL_ROOTS,
TESSERA_ALLOWED_HOSTS, TESSERA_ALLOWED_DRIVERS, TESSERA_MOSAIC_CONCURRENCY, …). Progress goes to
standard error.

Examples:
  $ tessera mosaic overview mosaic.json -o overview.tif --href https://data.example.com/overview.tif \\
      --document mosaic-overview.json
  $ tessera mosaic overview https://data.example.com/mosaic.json --zoom 6 -o ov.tif \\
      --href https://data.example.com/ov.tif > mosaic-overview.json

Exit status: 0 written, 1 nothing written (the document cannot be read, a tile cannot be composed: an
asset unreachable or refused, the minzoom is 0, …), 2 a usage mistake.
`;

const mosaic = program
  .command('mosaic')
  .description('MosaicJSON documents: create, footprint, info, overview')
  .addHelpText(
    'after',
    '\nExamples:\n  $ tessera mosaic create urls.txt -o mosaic.json\n  $ tessera mosaic info mosaic.json\n  $ tessera mosaic overview mosaic.json -o overview.tif --href https://data.example.com/overview.tif\n  $ tessera mosaic create --help\n',
  );

assetOptions(mosaic.command('create').description('write a MosaicJSON document for a list of COG URLs or a STAC search (as cogeo-mosaic create)'))
  .option('-o, --output <file>', 'write the document to this file (gzip-compressed if it ends with .gz) instead of standard output')
  .option('--minzoom <z>', "the mosaic's minzoom instead of the largest of the COGs'", wholeIn('minzoom', 0, 30))
  .option('--maxzoom <z>', "the mosaic's maxzoom instead of the largest of the COGs'", wholeIn('maxzoom', 0, 30))
  .option('--quadkey-zoom <z>', 'zoom of the quadkeys indexing the COGs instead of the minzoom', wholeIn('quadkey zoom', 0, 30))
  .option('--name <text>', "the document's name")
  .option('--description <text>', "the document's description")
  .option('--attribution <text>', "the document's attribution")
  .addHelpText('after', MOSAIC_CREATE_HELP)
  .showHelpAfterError('(tessera mosaic create --help: the options, the list and examples)')
  .action(async (list: string | undefined, options: AssetOptions & MosaicOptions) => {
    const { mosaicCreate } = await import('./cli-mosaic.js');
    await mosaicCreate(list, options);
  });

assetOptions(mosaic.command('footprint').description("write the GeoJSON of the COGs' footprints (as cogeo-mosaic footprint)"))
  .option('-o, --output <file>', 'write the GeoJSON to this file (gzip-compressed if it ends with .gz) instead of standard output')
  .addHelpText('after', MOSAIC_FOOTPRINT_HELP)
  .showHelpAfterError('(tessera mosaic footprint --help: the options and examples)')
  .action(async (list: string | undefined, options: AssetOptions) => {
    const { mosaicFootprint } = await import('./cli-mosaic.js');
    await mosaicFootprint(list, options);
  });

mosaic
  .command('info')
  .description("print a MosaicJSON document's summary (as cogeo-mosaic info)")
  .argument('<document>', 'a MosaicJSON file (.json or .json.gz) or http(s) URL')
  .option('--json', 'print it as JSON (the fields of cogeo-mosaic info --json)')
  .addHelpText('after', MOSAIC_INFO_HELP)
  .showHelpAfterError('(tessera mosaic info --help: the options and examples)')
  .action(async (document: string, options: { json?: boolean }) => {
    const { mosaicInfo } = await import('./cli-mosaic.js');
    await mosaicInfo(document, options);
  });

/** One of `choices`, or a usage error naming them. */
function oneOf(what: string, choices: readonly string[]) {
  return (value: string): string => {
    if (!choices.includes(value)) throw new InvalidArgumentError(`unknown ${what} '${value}' (one of ${choices.join(', ')})`);
    return value;
  };
}

mosaic
  .command('overview')
  .description("write a mosaic's low-zoom overview COG, and the document naming it")
  .argument('<document>', 'a MosaicJSON file (.json or .json.gz) or http(s) URL')
  .requiredOption('-o, --output <file.tif>', 'the overview COG to write')
  .option('--href <url>', 'where the COG will be served from, as the document names it (default: its local path)')
  .option('--document <file>', 'write the document to this file (gzip-compressed if it ends with .gz) instead of standard output')
  .option('--zoom <z>', "the zoom rendered, at most the mosaic's minzoom (default: minzoom − 1)", wholeIn('zoom', 0, 30))
  .option(
    '--pixel-selection <method>',
    'how each pixel is picked among the assets, as the tiles it stands for',
    oneOf('pixel selection', PIXEL_SELECTION_METHODS),
    'first',
  )
  .option('--resampling <method>', "resampling of the COG's internal overviews (zooms below --zoom)", oneOf('resampling', OVERVIEW_RESAMPLINGS), 'nearest')
  .option('--threads <n>', 'tiles composed at once', wholeIn('number of threads', 1, 64), 4)
  .addHelpText('after', MOSAIC_OVERVIEW_HELP)
  .showHelpAfterError('(tessera mosaic overview --help: the options and examples)')
  .action(async (document: string, options: OverviewCliOptions) => {
    const { mosaicOverview } = await import('./cli-mosaic.js');
    await mosaicOverview(document, options);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    // --help and --version end here too, with code 0; usage mistakes get 2.
    process.exit(err.exitCode === 0 ? 0 : 2);
  }
  console.error(`tessera: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
