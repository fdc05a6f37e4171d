/**
 * The footprints of the COGs a mosaic is made of (cogeo-mosaic's `get_footprints`): for each URL its
 * geographic bounds, zoom range in the grid and data type, read as `/cog/info` reads them, through
 * whatever opens sources for the caller (the server's URL, driver and network policies), a bounded
 * number at a time. What cannot be read, or (with `check`) is no COG, is that URL's failure with a
 * message saying why; the list goes on. The order of the list is kept: it is the order of the
 * assets in every tile. `mixedCrs` then names the COGs whose CRS is not the one most of them share.
 */
import { mapLimited } from '../concurrency.js';
import type { RasterSource } from '../source/dataset.js';
import { numpyDtype } from '../source/dataset.js';
import type { TileMatrixSet } from '../tms/grid.js';
import type { MosaicFootprint } from './build.js';

export type FootprintResult = { ok: true; footprint: MosaicFootprint; crs: string | null } | { ok: false; url: string; message: string };

/** What a check says of a source: its CRS's name ("EPSG:32618") and why it is no COG (none: it is one). */
export interface SourceCheck {
  crs: string | null;
  cogErrors: string[];
}

export interface FootprintOptions {
  concurrency: number;
  /** Validates each source (rio-cogeo's rules); without it, anything GDAL opens is taken. */
  check?: (source: RasterSource) => Promise<SourceCheck>;
  /** Called as each URL is done, with the count done so far. */
  onDone?: (done: number, result: FootprintResult) => void;
}

export async function readFootprints(
  urls: readonly string[],
  open: (url: string) => RasterSource,
  grid: TileMatrixSet,
  options: FootprintOptions,
): Promise<FootprintResult[]> {
  let done = 0;
  return mapLimited(urls, options.concurrency, async (url): Promise<FootprintResult> => {
    const result = await readOne(url, open, grid, options.check);
    options.onDone?.(++done, result);
    return result;
  });
}

async function readOne(url: string, open: (url: string) => RasterSource, grid: TileMatrixSet, check: FootprintOptions['check']): Promise<FootprintResult> {
  try {
    // open() may refuse the URL outright (policy): that too is this URL's failure, not the list's.
    const source = open(url);
    const [bounds, zooms, meta] = await Promise.all([source.geographicBounds(), source.zooms(grid), source.meta()]);
    let crs: string | null = null;
    if (check) {
      const checked = await check(source);
      if (checked.cogErrors.length > 0) {
        return {
          ok: false,
          url,
          message: `not a Cloud Optimized GeoTIFF: ${checked.cogErrors.join('; ')} (rio-cogeo's rules; make one with gdal_translate -of COG)`,
        };
      }
      crs = checked.crs;
    }
    return { ok: true, footprint: { url, bounds, ...zooms, datatype: numpyDtype(meta.bands[0]?.dataType ?? 'Byte') }, crs };
  } catch (err) {
    return { ok: false, url, message: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The COGs not in the CRS most of them share (on a tie, the first COG's), each with a message; none
 * when they all share one.
 */
export function mixedCrs(results: readonly FootprintResult[]): Array<{ url: string; message: string }> {
  const read = results.filter((r): r is Extract<FootprintResult, { ok: true }> => r.ok);
  const counts = new Map<string, number>();
  for (const r of read) counts.set(r.crs ?? 'no CRS', (counts.get(r.crs ?? 'no CRS') ?? 0) + 1);
  if (counts.size <= 1) return [];
  let main = read[0]!.crs ?? 'no CRS';
  for (const [crs, n] of counts) if (n > counts.get(main)!) main = crs;
  return read
    .filter((r) => (r.crs ?? 'no CRS') !== main)
    .map((r) => ({
      url: r.footprint.url,
      message: `its CRS is ${r.crs ?? 'not set'}, while ${counts.get(main)} other COG(s) are in ${main}: a mosaic's COGs share one CRS (--allow-mixed-crs takes them all)`,
    }));
}

/** The URLs of a list: one per line, surrounding blanks trimmed; blank lines and `#` comments skipped. */
export function parseUrlList(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
