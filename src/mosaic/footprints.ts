/**
 * The footprints of the COGs a mosaic is made of (cogeo-mosaic's `get_footprints`): for each URL its
 * geographic bounds, zoom range in the grid and data type, read as `/cog/info` reads them, through
 * whatever opens sources for the caller (the server's URL, driver and network policies), a bounded
 * number at a time. A source that cannot be read is reported and left out, as cogeo-mosaic logs and
 * skips it; the order of the list is kept, since it is the order of the assets in every tile.
 */
import { mapLimited } from '../concurrency.js';
import type { RasterSource } from '../source/dataset.js';
import { numpyDtype } from '../source/dataset.js';
import type { TileMatrixSet } from '../tms/grid.js';
import type { MosaicFootprint } from './build.js';

export type FootprintResult = { ok: true; footprint: MosaicFootprint } | { ok: false; url: string; message: string };

export function readFootprints(
  urls: readonly string[],
  open: (url: string) => RasterSource,
  grid: TileMatrixSet,
  concurrency: number,
): Promise<FootprintResult[]> {
  return mapLimited(urls, concurrency, async (url): Promise<FootprintResult> => {
    try {
      // open() may refuse the URL outright (policy): that too is this URL's failure, not the list's.
      const source = open(url);
      const [bounds, zooms, meta] = await Promise.all([source.geographicBounds(), source.zooms(grid), source.meta()]);
      return { ok: true, footprint: { url, bounds, ...zooms, datatype: numpyDtype(meta.bands[0]?.dataType ?? 'Byte') } };
    } catch (err) {
      return { ok: false, url, message: err instanceof Error ? err.message : String(err) };
    }
  });
}

/** The URLs of a list: one per line, surrounding blanks trimmed; blank lines and `#` comments skipped. */
export function parseUrlList(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
