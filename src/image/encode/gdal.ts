/**
 * Encoders that go through GDAL's drivers, as rio-tiler's `render` does: GeoTIFF (any dtype, with
 * the georeference), JPEG 2000 and the rare 4-band (CMYK) JPEG. Files are written under unique
 * /vsimem/ names with the async gdal-async calls (GDAL runs on the libuv pool, not the event loop),
 * and every in-memory file is released whatever happens.
 */
import { gdal, type Dataset } from '../../gdal/gdal.js';
import { srsFrom } from '../../gdal/crs.js';
import { TesseraError, badRequest } from '../../errors.js';
import { maskInDtype, type BandArray, type DType } from '../image-data.js';
import type { GeoReference, RasterData } from './types.js';

/** GDAL 3.6 has no Int8 type: signed bytes are Byte bands flagged SIGNEDBYTE (a signed TIFF sample). */
const GDAL_TYPES: Record<DType, string> = {
  bool: 'Byte',
  uint8: 'Byte',
  int8: 'Byte',
  uint16: 'UInt16',
  int16: 'Int16',
  uint32: 'UInt32',
  int32: 'Int32',
  int64: 'Int64',
  uint64: 'UInt64',
  float32: 'Float32',
  float64: 'Float64',
};

let sequence = 0;
function vsimemPath(extension: string): string {
  sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
  return `/vsimem/tessera-encode/${process.pid}-${sequence}.${extension}`;
}

/** Raw bytes of int8 bands go to Byte bands unchanged (gdal-async has no Int8 buffers on GDAL 3.6). */
function writable(band: BandArray): Exclude<BandArray, Int8Array> {
  return band instanceof Int8Array ? new Uint8Array(band.buffer, band.byteOffset, band.length) : band;
}

/**
 * Writes the bands, then the mask as a last band with colour interpretation alpha. The mask is written
 * from its 0/255 bytes and GDAL converts them to the band type, which is numpy's `mask.astype(dtype)`
 * (for int8 the bytes are the same: 255 is -1).
 */
async function fill(ds: Dataset, data: RasterData, mask: Uint8Array | undefined): Promise<void> {
  const { width, height } = data;
  for (let b = 0; b < data.bands.length; b++) {
    await ds.bands.get(b + 1).pixels.writeAsync(0, 0, width, height, writable(data.bands[b]!));
  }
  if (mask) {
    const alpha = ds.bands.get(data.bands.length + 1);
    // rasterio only sets it when no band is alpha yet (GTiff already makes RGB's 4th band alpha).
    if (!ds.bands.map((band) => band.colorInterpretation).includes('Alpha')) alpha.colorInterpretation = 'Alpha';
    await alpha.pixels.writeAsync(0, 0, width, height, data.maskInDtypeRange && data.dtype !== 'uint8' ? writable(maskInDtype(mask, data.dtype)) : mask);
  }
}

function releaseIfPresent(name: string): void {
  try {
    gdal.vsimem.release(name);
  } catch {
    // not there: nothing to free
  }
}

/** Takes the written file's bytes and drops the `.aux.xml` side-car a driver may have added. */
function takeOutput(path: string): Buffer {
  const bytes = gdal.vsimem.release(path);
  releaseIfPresent(`${path}.aux.xml`);
  return bytes;
}

/** After a failure: frees whatever was written. */
function discard(path: string): void {
  releaseIfPresent(path);
  releaseIfPresent(`${path}.aux.xml`);
}

function closeQuietly(ds: Dataset | undefined): void {
  try {
    ds?.close();
  } catch {
    // already closed
  }
}

function internal(what: string, cause: unknown): TesseraError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new TesseraError('Internal', `${what} failed: ${reason}`, { cause });
}

/** Geotransform of a north-up grid from its bounds, as rasterio's `from_bounds`. */
function geoTransform(geo: GeoReference, width: number, height: number): number[] {
  const [west, south, east, north] = geo.bounds;
  return [west, (east - west) / width, 0, north, 0, (south - north) / height];
}

/**
 * GeoTIFF with GDAL's default layout (no compression, as rasterio writes it for TiTiler), the bands
 * in their own dtype, the mask as an alpha band, and the georeference when given.
 */
export async function encodeGeoTiff(data: RasterData, mask: Uint8Array | undefined, geo: GeoReference | undefined): Promise<Buffer> {
  const path = vsimemPath('tif');
  const count = data.bands.length + (mask ? 1 : 0);
  const options = data.dtype === 'int8' ? ['PIXELTYPE=SIGNEDBYTE'] : [];
  let ds: Dataset | undefined;
  let output: Buffer | undefined;
  try {
    ds = await gdal.drivers.get('GTiff').createAsync(path, data.width, data.height, count, GDAL_TYPES[data.dtype], options);
    if (geo) {
      ds.geoTransform = geoTransform(geo, data.width, data.height);
      if (geo.crs) ds.srs = srsFrom(geo.crs);
    }
    await fill(ds, data, mask);
    await ds.flushAsync();
    ds.close();
    ds = undefined;
    output = takeOutput(path);
    return output;
  } catch (err) {
    throw err instanceof TesseraError ? err : internal('Writing the GeoTIFF', err);
  } finally {
    closeQuietly(ds);
    if (!output) discard(path);
  }
}

/** Builds the bands (and mask) in a MEM dataset and has `driver` copy it to an in-memory file. */
async function copyFromMemory(driver: string, data: RasterData, mask: Uint8Array | undefined, options: Record<string, string>): Promise<Buffer> {
  const path = vsimemPath('out');
  const count = data.bands.length + (mask ? 1 : 0);
  let source: Dataset | undefined;
  let copy: Dataset | undefined;
  let output: Buffer | undefined;
  try {
    source = await gdal.drivers.get('MEM').createAsync('', data.width, data.height, count, GDAL_TYPES[data.dtype]);
    await fill(source, data, mask);
    copy = await gdal.drivers.get(driver).createCopyAsync(path, source, options);
    copy.close();
    copy = undefined;
    output = takeOutput(path);
    return output;
  } catch (err) {
    throw err instanceof TesseraError ? err : internal(`Writing the ${driver} image`, err);
  } finally {
    closeQuietly(copy);
    closeQuietly(source);
    if (!output) discard(path);
  }
}

const JP2_DTYPES: ReadonlySet<DType> = new Set(['uint8', 'uint16', 'int16', 'uint32', 'int32']);

/**
 * JPEG 2000 through JP2OpenJPEG with GDAL's defaults (lossy, quality 25) and the mask as a last band.
 * TiTiler's in-memory file has no `.jp2` extension, so GDAL writes a bare J2K codestream (no JP2
 * boxes, hence no alpha channel definition): tessera writes the same.
 */
export async function encodeJpeg2000(data: RasterData, mask: Uint8Array | undefined): Promise<Buffer> {
  if (!JP2_DTYPES.has(data.dtype)) {
    throw badRequest(`The JPEG2000 format cannot hold ${data.dtype} data: it takes uint8, uint16, int16, uint32 or int32 data only`);
  }
  return copyFromMemory('JP2OpenJPEG', data, mask, { CODEC: 'J2K' });
}

/** A 4-band uint8 JPEG, which GDAL writes as CMYK (quality 85). */
export async function encodeCmykJpeg(data: RasterData): Promise<Buffer> {
  return copyFromMemory('JPEG', data, undefined, { QUALITY: '85' });
}
