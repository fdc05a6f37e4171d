/**
 * The GDAL-backed encoders (GeoTIFF, JPEG 2000, CMYK JPEG), loaded on first use. gdal-async is not
 * a context-aware addon: it loads in one thread of a process only, the main one, where the readers
 * live. Render threads (render-threads.ts) import the other encoders and must never load it; when
 * one needs a GDAL encoder it says so and the main thread encodes instead.
 */
import { isMainThread } from 'node:worker_threads';

/** Thrown off the main thread when an image needs a GDAL encoder. */
export class NeedsMainThread extends Error {
  constructor(what: string) {
    super(`${what} is encoded by GDAL, on the main thread only`);
    this.name = 'NeedsMainThread';
  }
}

export async function gdalEncoders(what: string): Promise<typeof import('./gdal.js')> {
  if (!isMainThread) throw new NeedsMainThread(what);
  return import('./gdal.js');
}
