/**
 * PROJJSON of a CRS (the STAC projection extension's `proj:projjson`). gdal-async binds no
 * OSRExportToPROJJSON; GDAL's Zarr driver writes exactly that export into the `_CRS` attribute of
 * an array it creates, so a one-pixel array in /vsimem gives it, through GDAL's own code. Each CRS is
 * exported once (a handful per deployment) and kept. The scratch array's files are released after
 * each export, but /vsimem keeps its folders (GDAL's binding has no rmdir), a few hundred bytes: so
 * at most MAX_EXPORTS distinct CRSs are exported per process, and a CRS beyond them (which only a
 * client feeding thousands of made-up CRSs would reach) gets null, its `proj:projjson` left out.
 */
import { gdal, type SpatialReference } from './gdal.js';

const cache = new Map<string, Record<string, unknown> | null>();
const MAX_EXPORTS = 4096;
let serial = 0;

/** The CRS as PROJJSON, or null when GDAL cannot export it. */
export function projJson(srs: SpatialReference): Record<string, unknown> | null {
  const wkt = srs.toWKT();
  const known = cache.get(wkt);
  if (known !== undefined) return known;
  if (serial >= MAX_EXPORTS) return null;
  const dir = `/vsimem/tessera-projjson-${serial++}.zarr`;
  let out: Record<string, unknown> | null = null;
  try {
    const ds = gdal.drivers.get('Zarr').create(dir, 1, 1, 1, gdal.GDT_Byte);
    ds.srs = srs;
    ds.geoTransform = [0, 1, 0, 0, 0, -1];
    ds.close();
    const name = dir.slice(dir.lastIndexOf('/') + 1, -'.zarr'.length);
    const attrs = JSON.parse(gdal.vsimem.release(`${dir}/${name}/.zattrs`).toString('utf8')) as { _CRS?: { projjson?: Record<string, unknown> } };
    out = attrs._CRS?.projjson ?? null;
  } catch {
    out = null;
  } finally {
    for (const file of ['.zgroup', '.zmetadata']) releaseQuietly(`${dir}/${file}`);
    for (const sub of safeReadDir(dir)) {
      for (const file of safeReadDir(`${dir}/${sub}`)) releaseQuietly(`${dir}/${sub}/${file}`);
    }
  }
  cache.set(wkt, out);
  return out;
}

function safeReadDir(path: string): string[] {
  try {
    return gdal.fs.readDir(path);
  } catch {
    return [];
  }
}

function releaseQuietly(path: string): void {
  try {
    gdal.vsimem.release(path);
  } catch {
    // already gone
  }
}
