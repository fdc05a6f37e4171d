/**
 * What `tessera mosaic create|footprint|info|overview` do, behind cli.ts's argument parsing: the COGs come from
 * a list of URLs or a STAC API search (stac/search.ts), their footprints are read under the server's
 * policies with a progress report, every COG that cannot be used is named with the reason (exit 1
 * unless `skipErrors`), then the document, the footprints' GeoJSON or a document's summary is written;
 * `overview` composes a document's mosaic below its minzoom into one COG and names it in the document.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { applySettingsFile, loadSettings, unknownSettings } from './config.js';
import { pyDumps, pyFloatRepr } from './pyjson.js';
import { Progress } from './progress.js';
import { Services } from './services.js';
import { validateCog } from './source/cog-validation.js';
import { searchStac, type StacSearchQuery } from './stac/search.js';
import { getTms, WEB_MERCATOR_QUAD } from './tms/registry.js';
import { buildMosaicJson, type MosaicFootprint, type MosaicOptions } from './mosaic/build.js';
import { parseMosaicDocument } from './mosaic/document.js';
import { mixedCrs, parseUrlList, readFootprints } from './mosaic/footprints.js';
import { Mosaic } from './mosaic/mosaic.js';
import { buildMosaicOverview } from './readers/mosaic-overview-build.js';
import { OVERVIEW_FIELD, overviewFieldJson, type MosaicOverview, type OverviewResampling } from './mosaic/overview.js';
import type { PixelSelection } from './mosaic/methods.js';

export interface AssetOptions {
  stac?: string;
  collections?: string[];
  bbox?: number[];
  datetime?: string;
  query?: Record<string, unknown>;
  limit: number;
  maxItems: number;
  asset?: string;
  threads: number;
  skipErrors?: boolean;
  allowMixedCrs?: boolean;
  output?: string;
}

const warn = (text: string): void => void process.stderr.write(`tessera: warning: ${text}\n`);

/** The server's settings (policies, timeouts, drivers, a TESSERA_CONFIG file); nothing is rendered or cached for a tile. */
function cliServices(): Services {
  const file = process.env['TESSERA_CONFIG'];
  if (file) applySettingsFile(file);
  const settings = loadSettings({ renderThreads: 0, cacheUrl: undefined, tileCacheBytes: 0 });
  for (const name of unknownSettings()) warn(`${name} is not a setting tessera knows (see tessera serve --help); it is ignored`);
  return new Services(settings);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The COG URLs of a list file or standard input, and how to name where they came from. */
async function listedUrls(list: string | undefined): Promise<{ urls: string[]; source: string }> {
  const fromStdin = list === undefined || list === '-';
  const source = fromStdin ? 'standard input' : `'${list}'`;
  if (fromStdin && process.stdin.isTTY) process.stderr.write('tessera: reading COG URLs from standard input, one per line (end with Ctrl-D)\n');
  let text: string;
  try {
    text = fromStdin ? await readStdin() : readFileSync(list, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the list of COG URLs ${source}: ${(err as Error).message}`);
  }
  const urls = parseUrlList(text);
  if (urls.length === 0) throw new Error(`no COG URL in ${source}: give one URL per line`);
  return { urls, source };
}

/** The COG URLs a STAC API search finds (one asset per item); items without the asset are errors. */
async function searchedUrls(services: Services, options: AssetOptions, errors: string[]): Promise<{ urls: string[]; source: string }> {
  const api = options.stac!;
  const asset = options.asset;
  if (!asset) throw new Error("--stac needs --asset NAME: the asset of each item that is the COG (e.g. 'visual', 'B04')");
  const query: StacSearchQuery = {
    collections: options.collections,
    bbox: options.bbox,
    datetime: options.datetime,
    query: options.query,
    limit: options.limit,
    maxItems: options.maxItems,
  };
  const tty = process.stderr.isTTY === true;
  const found = await searchStac(
    api,
    query,
    asset,
    (url, body) => services.fetcher.send(url, 'the STAC API search', body),
    (read, matched) => {
      const of = matched === undefined ? '' : ` of ${matched}`;
      if (tty) process.stderr.write(`\r\x1b[Ktessera: STAC search: ${read}${of} item(s)`);
      else process.stderr.write(`tessera: STAC search: ${read}${of} item(s)\n`);
    },
  );
  if (tty) process.stderr.write('\n');
  for (const m of found.missing) {
    errors.push(`item '${m.item}' has no asset '${asset}' (its assets: ${m.has.join(', ') || 'none'})`);
  }
  if (found.truncated) {
    warn(
      `the search stopped at --max-items ${options.maxItems}${found.matched === undefined ? '' : ` of ${found.matched} matching items`}: raise --max-items, or narrow the search`,
    );
  }
  const source = `the STAC search at ${api}`;
  if (found.assets.length === 0 && found.missing.length === 0) throw new Error(`${source} found no item: check --collections, --bbox, --datetime and --query`);
  return { urls: found.assets.map((a) => a.href), source };
}

/**
 * The footprints of the COGs of a list or a search, each checked as a COG, in the given order.
 * Every COG that cannot be used is reported; unless `skipErrors`, any one of them stops the work.
 */
async function gatherFootprints(services: Services, list: string | undefined, options: AssetOptions): Promise<MosaicFootprint[]> {
  const errors: string[] = [];
  if (options.stac !== undefined && list !== undefined) throw new Error(`give either a list of COG URLs ('${list}') or --stac, not both`);
  const { urls, source } = options.stac !== undefined ? await searchedUrls(services, options, errors) : await listedUrls(list);
  const grid = getTms(WEB_MERCATOR_QUAD)!;
  const progress = new Progress('footprints', urls.length);
  const results = await readFootprints(urls, (url) => services.cog(url), grid, {
    concurrency: options.threads,
    check: async (source) => {
      const report = await validateCog(source, services.bytesOf(source), { strict: false, zoomGrid: grid });
      return { crs: report.GEO.CRS, cogErrors: report.COG_errors ?? [] };
    },
    onDone: (done) => progress.update(done),
  });
  progress.end();
  const bad = new Map<string, string>();
  for (const r of results) if (!r.ok) bad.set(r.url, r.message);
  if (!options.allowMixedCrs) for (const m of mixedCrs(results)) bad.set(m.url, m.message);
  for (const [url, message] of bad) errors.push(message.includes(url) ? message : `${url}: ${message}`);
  const footprints = results.flatMap((r) => (r.ok && !bad.has(r.footprint.url) ? [r.footprint] : []));
  if (errors.length > 0) {
    if (!options.skipErrors) {
      for (const e of errors) process.stderr.write(`tessera: error: ${e}\n`);
      throw new Error(
        `${errors.length} of the assets of ${source} cannot be used (see above); nothing written: fix or remove them, or give --skip-errors to leave them out`,
      );
    }
    for (const e of errors) warn(`left out: ${e}`);
  }
  if (footprints.length === 0) throw new Error(`none of the ${urls.length} COG(s) of ${source} could be used (see above); nothing written`);
  return footprints;
}

/** The text to a file (gzip-compressed for a `.gz` name, as cogeo-mosaic's file backend writes it) or standard output. */
function writeOutput(file: string | undefined, text: string): void {
  if (file === undefined) {
    process.stdout.write(`${text}\n`);
    return;
  }
  try {
    writeFileSync(file, file.endsWith('.gz') ? gzipSync(text, { level: 9 }) : text);
  } catch (err) {
    throw new Error(`cannot write to '${file}': ${(err as Error).message}`);
  }
}

export async function mosaicCreate(list: string | undefined, options: AssetOptions & MosaicOptions): Promise<void> {
  const services = cliServices();
  try {
    const footprints = await gatherFootprints(services, list, options);
    const built = buildMosaicJson(footprints, options);
    for (const warning of built.warnings) warn(warning);
    const json = pyDumps(built.document);
    writeOutput(options.output, json);
    const bytes = Buffer.byteLength(json);
    process.stderr.write(
      `tessera: ${options.output ?? 'standard output'}: ${footprints.length} COG(s), ${built.quadkeys} quadkey(s) at zoom ${built.quadkeyZoom}, ${bytes} bytes\n`,
    );
    if (bytes > services.settings.maxDocumentBytes) {
      warn(
        `tessera reads MosaicJSON documents of up to ${services.settings.maxDocumentBytes} bytes (TESSERA_MAX_DOCUMENT_BYTES): raise it to serve this one, or choose a lower --quadkey-zoom`,
      );
    }
  } finally {
    await services.close();
  }
}

/** `cogeo-mosaic footprint`'s FeatureCollection: one polygon per COG with its path, bounds, zooms and data type. */
export async function mosaicFootprint(list: string | undefined, options: AssetOptions): Promise<void> {
  const services = cliServices();
  try {
    const footprints = await gatherFootprints(services, list, options);
    const features = footprints.map((f) => {
      const [w, s, e, n] = f.bounds;
      return {
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [w, n],
              [w, s],
              [e, s],
              [e, n],
              [w, n],
            ],
          ],
        },
        properties: { path: f.url, bounds: [w, s, e, n], minzoom: f.minzoom, maxzoom: f.maxzoom, datatype: f.datatype },
        type: 'Feature',
      };
    });
    writeOutput(options.output, JSON.stringify({ features, type: 'FeatureCollection' }));
    process.stderr.write(`tessera: ${options.output ?? 'standard output'}: ${features.length} footprint(s)\n`);
  } finally {
    await services.close();
  }
}

/** A MosaicJSON document's bytes and JSON: a local file as given, a URL under the server's policies (the document fetcher). */
async function readDocument(input: string): Promise<{ bytes: Buffer; raw: unknown; remote: boolean; compressed: boolean }> {
  const remote = /^https?:\/\//i.test(input);
  let bytes: Buffer;
  if (remote) {
    const services = cliServices();
    try {
      bytes = await services.fetcher.bytes(input, 'MosaicJSON document');
    } finally {
      await services.close();
    }
  } else {
    try {
      if (!statSync(input).isFile()) throw new Error('not a file');
      bytes = readFileSync(input);
    } catch (err) {
      throw new Error(`cannot read the MosaicJSON document '${input}': ${(err as Error).message}`);
    }
  }
  const compressed = bytes[0] === 0x1f && bytes[1] === 0x8b;
  let raw: unknown;
  try {
    raw = JSON.parse((compressed ? gunzipSync(bytes) : bytes).toString('utf8'));
  } catch (err) {
    throw new Error(`'${input}' is not a MosaicJSON document (${compressed ? 'gzip-compressed ' : ''}JSON): ${(err as Error).message}`);
  }
  return { bytes, raw, remote, compressed };
}

/**
 * `cogeo-mosaic info`: where the document is, its profile, geography and tiles (quadkeys, assets per
 * quadkey, distinct assets). A local file is read as given; a URL under the server's policies.
 */
export async function mosaicInfo(input: string, options: { json?: boolean }): Promise<void> {
  const { bytes, raw, remote, compressed } = await readDocument(input);
  const doc = parseMosaicDocument(raw, `MosaicJSON document '${input}'`);
  const counts = [...doc.tiles.values()].map((assets) => assets.length);
  const assets = new Set([...doc.tiles.values()].flat());
  const tiles: Record<string, number> = {};
  if (counts.length > 0) {
    tiles['Nb Tiles'] = counts.length;
    tiles['Min Files'] = Math.min(...counts);
    tiles['Max Files'] = Math.max(...counts);
    tiles['Mean Files'] = Math.round((counts.reduce((a, b) => a + b, 0) / counts.length) * 100) / 100;
    tiles['Nb Assets'] = assets.size;
  }
  const info = {
    Path: input,
    Backend: remote ? 'HTTP' : 'File',
    'File Size': bytes.length,
    Compressed: compressed,
    Profile: {
      MosaicJSON: doc.mosaicjson,
      Version: doc.version,
      Name: doc.name ?? null,
      Description: doc.description ?? null,
      Attribution: doc.attribution ?? null,
    },
    GEO: {
      TileMatrixSet: doc.tilematrixset?.dump['id'] ?? WEB_MERCATOR_QUAD,
      BoundingBox: doc.bounds,
      Center: doc.center,
      'Min Zoom': doc.minzoom,
      'Max Zoom': doc.maxzoom,
      'QuadKey Zoom': doc.quadkey_zoom ?? null,
    },
    TILES: tiles,
  };
  if (options.json) {
    process.stdout.write(`${JSON.stringify(info)}\n`);
    return;
  }
  const section = (title: string, values: Record<string, unknown>): string =>
    `${title}\n${Object.entries(values)
      .map(
        ([k, v]) =>
          `    ${`${k}:`.padEnd(18)}${Array.isArray(v) ? `(${v.map((x: number, i) => (i < (k === 'Center' ? 2 : 4) ? pyFloatRepr(x) : x)).join(', ')})` : String(v === null ? 'None' : v)}`,
      )
      .join('\n')}`;
  process.stdout.write(
    `${[
      `File: ${info.Path}\nBackend: ${info.Backend}\nFile Size: ${info['File Size']}\nCompressed: ${compressed ? 'True' : 'False'}`,
      section('Profile', info.Profile),
      section('Geo', info.GEO),
      section('Tiles', info.TILES),
    ].join('\n\n')}\n`,
  );
}

export interface OverviewCliOptions {
  output: string;
  href?: string;
  document?: string;
  zoom?: number;
  pixelSelection: PixelSelection;
  resampling: OverviewResampling;
  threads: number;
}

/**
 * `tessera mosaic overview`: composes the mosaic below its minzoom into one COG (readers/mosaic-overview-build.ts)
 * and writes the document again with the field naming it (mosaic/overview.ts). The assets are read
 * under the server's settings and policies, with its mosaic reader.
 */
export async function mosaicOverview(input: string, options: OverviewCliOptions): Promise<void> {
  if (!/\.tiff?$/i.test(options.output)) throw new Error(`--output '${options.output}' must name a .tif file (the overview COG)`);
  const { raw } = await readDocument(input);
  const doc = parseMosaicDocument(raw, `MosaicJSON document '${input}'`);
  const remote = /^https?:\/\//i.test(input);
  const mosaic = new Mosaic(doc, { url: input, tilesInDocument: true, version: '' });
  const services = cliServices();
  const href = options.href ?? path.resolve(options.output);
  try {
    // No deadline and nothing finished after an answer: the overview is every asset's picture.
    const ctx = { ...services.mosaicContext, lowZoomDeadlineMs: 0, finishLater: false };
    let progress: Progress | undefined;
    const built = await buildMosaicOverview(mosaic, ctx, {
      output: options.output,
      ...(options.zoom !== undefined ? { zoom: options.zoom } : {}),
      pixelSelection: options.pixelSelection,
      resampling: options.resampling,
      threads: options.threads,
      onTile: (done, total) => {
        progress ??= new Progress('tiles', total);
        progress.update(done);
      },
    });
    (progress as Progress | undefined)?.end();
    const field: MosaicOverview = { href, maxzoom: built.zoom, pixelSelection: options.pixelSelection };
    const out = { ...(raw as Record<string, unknown>), [OVERVIEW_FIELD]: overviewFieldJson(field) };
    writeOutput(options.document, JSON.stringify(out));
    process.stderr.write(
      `tessera: ${options.output}: zoom ${built.zoom}, ${built.written} of ${built.tiles} tile(s) with data, ${built.width}×${built.height} px, ${built.bytes} bytes; document: ${options.document ?? 'standard output'}\n`,
    );
    if (options.href === undefined) {
      warn(
        `the document names the overview by its local path '${href}' (no --href): a server reads it only inside TESSERA_ALLOWED_LOCAL_ROOTS${remote ? '; give --href with the URL the file will be served at' : ''}`,
      );
    }
  } finally {
    await services.close();
  }
}
