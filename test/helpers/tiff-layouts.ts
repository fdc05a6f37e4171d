/**
 * GeoTIFFs laid out in the ways a COG validation must tell apart, made from the shared fixtures with
 * GDAL at test time: JPEG in YCbCr without overviews, overviews added after the data (gdaladdo on a
 * tiled GeoTIFF), BigTIFF, a COG edited in place (GDAL flags the broken layout in its ghost header),
 * an internal mask, strips, band-interleaved tiles with overviews, and a JPEG COG.
 */
import os from 'node:os';
import path from 'node:path';
import { promises as fs } from 'node:fs';
import gdal from 'gdal-async';
import { FIXTURES } from './paths.js';

export async function makeTiffLayouts(): Promise<Map<string, Buffer>> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'tessera-layouts-'));
  const fixture = (name: string): gdal.Dataset => gdal.open(path.join(FIXTURES, name));
  const out = (name: string): string => path.join(dir, `${name}.tif`);
  const translate = (name: string, src: string, args: string[]): void => {
    const ds = fixture(src);
    gdal.translate(out(name), ds, args).close();
    ds.close();
  };
  const addOverviews = (name: string, resampling: string, levels: number[]): void => {
    const ds = gdal.open(out(name), 'r+');
    ds.buildOverviews(resampling, levels);
    ds.close();
  };
  try {
    translate('ycbcr', 'TCI.tif', ['-co', 'COMPRESS=JPEG', '-co', 'PHOTOMETRIC=YCBCR', '-co', 'TILED=YES']);
    translate('overviews-after-data', 'cog.tif', ['-co', 'TILED=YES', '-co', 'COMPRESS=DEFLATE']);
    addOverviews('overviews-after-data', 'NEAREST', [2, 4, 8]);
    translate('bigtiff', 'TCI.tif', ['-of', 'COG', '-co', 'BIGTIFF=YES']);
    translate('edited', 'cog.tif', ['-of', 'COG']);
    const edited = gdal.open(out('edited'), 'r+');
    edited.bands.get(1).pixels.write(0, 0, 2, 2, new Uint16Array([1, 2, 3, 4]));
    edited.close();
    translate('masked', 'TCI.tif', ['-b', '1', '-b', '2', '-b', '3', '-mask', '1', '-of', 'COG']);
    translate('strips', 'B09.tif', ['-co', 'BLOCKYSIZE=16']);
    translate('band-interleaved', 'TCI.tif', ['-co', 'TILED=YES', '-co', 'INTERLEAVE=BAND']);
    addOverviews('band-interleaved', 'AVERAGE', [2, 4]);
    translate('jpeg', 'TCI.tif', ['-of', 'COG', '-co', 'COMPRESS=JPEG']);
    const made = new Map<string, Buffer>();
    for (const file of await fs.readdir(dir)) made.set(path.basename(file, '.tif'), await fs.readFile(path.join(dir, file)));
    return made;
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
