/**
 * Opening rasters, safely. A raster is opened only by the GDAL drivers the operator allows (GTiff by
 * default: a COG is a GeoTIFF), so a document that names a VRT, an XML or netCDF file, an ENVI
 * header or anything else is never parsed, and nothing such a file references is ever read.
 *
 * GDAL opens with a driver list through `Driver.open` (GDALOpenEx with that one driver), which
 * reports no reason when it fails. Why it failed (missing, refused, slow, or not a GeoTIFF) is then
 * found out by reading the first bytes through tessera's own policy-checked client and saying what
 * they look like (`describeFormat`): GDAL's own identification would try every driver, and its
 * second pass opens files with drivers that cannot identify them cheaply.
 */
import { open as openFile } from 'node:fs/promises';
import { TesseraError } from '../errors.js';
import { gdal, type Dataset } from '../gdal/gdal.js';
import { UpstreamRefused, UpstreamTimeout, type UpstreamClient } from '../upstream/client.js';
import type { Location } from '../upstream/url-policy.js';
import { isObjectUrl, storeError, storeErrorCode } from '../upstream/object-stores.js';

const ALLOWED_DRIVERS_SETTING = 'TESSERA_ALLOWED_DRIVERS';

/** No allowed driver opened the file; `diagnoseOpen` says why. */
export class OpenRefused extends Error {
  constructor(readonly path: string) {
    super(`no allowed GDAL driver opened ${path}`);
    this.name = 'OpenRefused';
  }
}

/** An open function for the pool that tries each allowed driver in turn (GTiff alone by default). */
export function rasterOpener(driverNames: readonly string[] = ['GTiff']): (path: string) => Promise<Dataset> {
  if (driverNames.length === 0) throw new Error(`${ALLOWED_DRIVERS_SETTING} names no driver`);
  const drivers = driverNames.map((name) => {
    let driver: gdal.Driver | undefined;
    try {
      driver = gdal.drivers.get(name);
    } catch {
      driver = undefined;
    }
    if (!driver) throw new Error(`${ALLOWED_DRIVERS_SETTING}: GDAL has no driver '${name}'`);
    if (driver.getMetadata()['DCAP_RASTER'] !== 'YES') throw new Error(`${ALLOWED_DRIVERS_SETTING}: '${name}' is not a raster driver`);
    return driver;
  });
  return async (path) => {
    for (const driver of drivers) {
      try {
        return await driver.openAsync(path, 'r');
      } catch {
        // The next allowed driver, if any.
      }
    }
    throw new OpenRefused(path);
  };
}

const HEAD_BYTES = 1024;

/**
 * Why no allowed driver opened the raster at `loc`, as the error to answer: reads its first bytes
 * (under the same URL and network policies as GDAL's reads) and names what they are.
 */
export async function diagnoseOpen(loc: Location, label: string, drivers: readonly string[], client: UpstreamClient, timeoutMs: number): Promise<TesseraError> {
  let head: Uint8Array;
  if (loc.kind === 'file') {
    try {
      const file = await openFile(loc.path, 'r');
      try {
        const buf = Buffer.alloc(HEAD_BYTES);
        const { bytesRead } = await file.read(buf, 0, HEAD_BYTES, 0);
        head = buf.subarray(0, bytesRead);
      } finally {
        await file.close();
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return new TesseraError('UpstreamNotFound', `${label} not found`, { cause: err });
      return new TesseraError('BadRequest', `${label} could not be read: ${code ?? String(err)}`, { cause: err });
    }
  } else {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await client.get(loc.url, { range: `bytes=0-${HEAD_BYTES - 1}`, signal });
      const status = res.statusCode ?? 502;
      if (status === 200 || status === 206) {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res as AsyncIterable<Buffer>) {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= HEAD_BYTES) break;
        }
        res.destroy();
        head = Buffer.concat(chunks).subarray(0, HEAD_BYTES);
        const length = Number(res.headers['content-length'] ?? NaN);
        if (status === 200 && length > HEAD_BYTES && isTiff(head)) {
          return new TesseraError(
            'UpstreamError',
            `${label}: the server does not support HTTP range requests (it answered 200 with the whole file), which tessera needs to read a raster`,
          );
        }
      } else if (isObjectUrl(loc.url)) {
        return storeError(status, await storeErrorCode(res), label) ?? new TesseraError('UpstreamError', `${label}: the store answered ${status}`);
      } else {
        res.resume();
        if (status === 404 || status === 410) return new TesseraError('UpstreamNotFound', `${label} not found (upstream answered ${status})`);
        if (status === 401 || status === 403) return new TesseraError('UpstreamForbidden', `${label}: access refused (upstream answered ${status})`);
        if (status === 416) return new TesseraError('BadRequest', `${label} is empty`);
        return new TesseraError('UpstreamError', `${label}: upstream answered ${status}`);
      }
    } catch (err) {
      if (err instanceof TesseraError) return err;
      if (err instanceof UpstreamRefused) return new TesseraError('BadRequest', `${label} is not allowed: ${err.message}`, { cause: err });
      if (err instanceof UpstreamTimeout || signal.aborted) return new TesseraError('Timeout', `${label}: upstream did not answer in time`, { cause: err });
      return new TesseraError('UpstreamError', `${label}: could not connect to the upstream server`, { cause: err });
    }
  }
  if (head.length === 0) return new TesseraError('BadRequest', `${label} is empty`);
  if (isTiff(head) && drivers.includes('GTiff')) {
    return new TesseraError('BadRequest', `${label} is a TIFF that GDAL could not open: it is damaged or not a raster layout GDAL reads`);
  }
  return new TesseraError(
    'BadRequest',
    `${label} is not a raster tessera opens: it looks like ${describeFormat(head)}; rasters open only with the GDAL driver${drivers.length > 1 ? 's' : ''} ` +
      `${drivers.join(', ')} (${ALLOWED_DRIVERS_SETTING}), and nothing the file names is read`,
  );
}

function isTiff(b: Uint8Array): boolean {
  return (
    b.length >= 4 &&
    ((b[0] === 0x49 && b[1] === 0x49 && (b[2] === 42 || b[2] === 43) && b[3] === 0) ||
      (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && (b[3] === 42 || b[3] === 43)))
  );
}

const startsWith = (b: Uint8Array, magic: readonly number[]): boolean => magic.every((m, i) => b[i] === m);

/** What the first bytes of a file look like, in words for an error message. */
function describeFormat(b: Uint8Array): string {
  if (isTiff(b)) return b[2] === 43 || b[3] === 43 ? 'a BigTIFF' : 'a TIFF';
  const text = Buffer.from(b.subarray(0, 512))
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
    .trimStart();
  if (/^<VRTDataset\b/i.test(text) || /<VRTDataset\b/i.test(text)) return 'a GDAL VRT (XML that names other files)';
  if (/^(<\?xml|<)/.test(text)) return /^<!doctype html|^<html/i.test(text) ? 'an HTML page' : 'an XML document';
  if (/^[{[]/.test(text)) return 'a JSON document';
  if (/^ENVI\b/.test(text)) return 'an ENVI header';
  if (startsWith(b, [0x43, 0x44, 0x46]) && (b[3] === 1 || b[3] === 2 || b[3] === 5)) return 'a netCDF file';
  if (startsWith(b, [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a])) return 'an HDF5 or netCDF-4 file';
  if (startsWith(b, [0x0e, 0x03, 0x13, 0x01])) return 'an HDF4 file';
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47])) return 'a PNG image';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'a JPEG image';
  if (startsWith(b, [0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50]) || startsWith(b, [0xff, 0x4f, 0xff, 0x51])) return 'a JPEG 2000 image';
  if (startsWith(b, [0x47, 0x49, 0x46, 0x38])) return 'a GIF image';
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return 'a ZIP archive';
  if (startsWith(b, [0x1f, 0x8b])) return 'gzip-compressed data';
  if (/^[\x09\x0a\x0d\x20-\x7e]*$/.test(text.slice(0, 256))) return 'text';
  return 'data of no format tessera opens';
}
