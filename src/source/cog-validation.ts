/**
 * COG validation and the report TiTiler's `/cog/validate` returns (rio-cogeo 5's `cog_info`): is
 * the GeoTIFF laid out for reads over HTTP, and what it holds. The rules are rio-cogeo's (which
 * follow GDAL's validate_cloud_optimized_geotiff.py): tiled when larger than 512×512, internal
 * overviews recommended, the main IFD in the first 300 bytes, IFDs in order of decreasing
 * resolution, each level's data after the IFDs and the smallest overview's data first, and no edit
 * since GDAL laid the file out. Their messages are rio-cogeo's, word for word, as clients match them.
 *
 * GDAL's side (profile, tags, overviews) comes from the open dataset; the layout from the file's
 * bytes (tiff-structure.ts). Sibling files are never read (tessera opens no .ovr), so the external
 * overview check of rio-cogeo never fires here, as it does not for TiTiler behind
 * GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR.
 */
import type { Dataset } from '../gdal/gdal.js';
import { srsFrom } from '../gdal/crs.js';
import type { TileMatrixSet } from '../tms/grid.js';
import { numpyDtype, type RasterSource, type SourceMeta } from './dataset.js';
import type { ByteRanges } from './byte-ranges.js';
import { readTiffStructure, type TiffStructure, type TiffStructureLimits } from './tiff-structure.js';

/** How much of a file's layout tessera reads to validate it: far more than any COG's IFDs need. */
const VALIDATION_LIMITS: TiffStructureLimits = { maxBytes: 8 * 1024 * 1024, maxDirectories: 256 };

/**
 * The `/cog/validate` report of `source`. GDAL opens it first, so what the driver allow-list refuses
 * is refused before a byte of layout is read; `zoomGrid` gives MinZoom/MaxZoom (WebMercatorQuad).
 */
export async function validateCog(source: RasterSource, bytes: ByteRanges, opts: { strict: boolean; zoomGrid: TileMatrixSet }): Promise<CogReport> {
  const meta = await source.meta();
  const facts = await source.use(datasetFacts);
  const zooms = await source.zooms(opts.zoomGrid).catch(() => null);
  const layout = await readTiffStructure(bytes, source.label, VALIDATION_LIMITS);
  return cogReport(source.label, meta, facts, validateLayout(meta, facts, layout), zooms, opts.strict);
}

/** What the dataset says beyond SourceMeta: its metadata domains and each overview's block size. */
export interface DatasetFacts {
  /** Metadata domain → KEY=VALUE pairs; '' is the default domain. */
  metadata: Array<[string, Record<string, string>]>;
  /** Band 1's overviews: [width, height, blockWidth, blockHeight], GDAL's order. */
  overviews: Array<[number, number, number, number]>;
}

/** Domains a GeoTIFF may carry besides the default one, in the order GDAL lists them. */
const DOMAINS = ['IMAGE_STRUCTURE', 'COLOR_PROFILE', 'RPC', 'IMAGERY', 'GEOLOCATION'];

/**
 * gdal-async hands a domain's items over sorted by key; rasterio (and so TiTiler) keeps the order
 * GDAL's GTiff driver set them in. For the items that driver writes itself that order is known and
 * restored here (a JSON client may not care, but TiTiler's text is the reference); other items keep
 * the sorted order, the default domain's AREA_OR_POINT (set last by the driver) goes last.
 */
const GTIFF_ORDER: Record<string, string[]> = {
  '': [],
  IMAGE_STRUCTURE: ['LAYOUT', 'SOURCE_COLOR_SPACE', 'COMPRESSION', 'INTERLEAVE', 'JPEG_QUALITY', 'JPEGTABLESMODE'],
};
const GTIFF_LAST: Record<string, string[]> = { '': ['AREA_OR_POINT'] };

function inDriverOrder(domain: string, values: Record<string, string>): Record<string, string> {
  const first = GTIFF_ORDER[domain] ?? [];
  const last = GTIFF_LAST[domain] ?? [];
  const keys = Object.keys(values);
  const middle = keys.filter((k) => !first.includes(k) && !last.includes(k));
  const ordered: Record<string, string> = {};
  for (const k of [...first.filter((k) => k in values), ...middle, ...last.filter((k) => k in values)]) ordered[k] = values[k]!;
  return ordered;
}

function datasetFacts(ds: Dataset): DatasetFacts {
  const metadata: DatasetFacts['metadata'] = [['', inDriverOrder('', (ds.getMetadata() ?? {}) as Record<string, string>)]];
  for (const domain of DOMAINS) {
    const values = (ds.getMetadata(domain) ?? {}) as Record<string, string>;
    if (Object.keys(values).length > 0) metadata.push([domain, inDriverOrder(domain, values)]);
  }
  const overviews: DatasetFacts['overviews'] = [];
  if (ds.bands.count() > 0) {
    const band = ds.bands.get(1);
    for (let i = 0; i < band.overviews.count(); i++) {
      const ov = band.overviews.get(i);
      overviews.push([ov.size.x, ov.size.y, ov.blockSize.x, ov.blockSize.y]);
    }
  }
  return { metadata, overviews };
}

export interface Validation {
  errors: string[];
  warnings: string[];
}

/** rio-cogeo's cog_validate over a GeoTIFF tessera opened. */
function validateLayout(meta: SourceMeta, facts: DatasetFacts, layout: TiffStructure): Validation {
  const errors: string[] = [];
  const warnings: string[] = [];
  const decimations = meta.overviews;
  const [blockWidth] = meta.blockSize;

  if (meta.width > 512 && meta.height > 512) {
    if (blockWidth === meta.width) errors.push('The file is greater than 512xH or 512xW, but is not tiled');
    if (decimations.length === 0) warnings.push('The file is greater than 512xH or 512xW, it is recommended to include internal overviews');
  }

  // GDAL's overviews are the reduced-resolution images that are not masks, in file order.
  const main = layout.directories[0]!;
  const reduced = layout.directories.filter((d, i) => i > 0 && (d.subfileType & 1) === 1 && (d.subfileType & 4) === 0);

  if (main.offset > 300) errors.push(`The offset of the main IFD should be < 300. It is ${main.offset} instead`);
  if (layout.ghostHeader?.includes('KNOWN_INCOMPATIBLE_EDITION=YES')) {
    errors.push('This file used to have optimizations in its layout, but those have been, at least partly, invalidated by later changes');
  }
  if (decimations.some((d, i) => i > 0 && d < decimations[i - 1]!)) errors.push('Overviews should be sorted');

  const ifdOffsets = [main.offset];
  decimations.forEach((decimation, ix) => {
    if (!(decimation > 1)) errors.push(`Invalid Decimation ${decimation} for overview level ${ix}`);
    const ifd = reduced[ix];
    if (!ifd) return;
    ifdOffsets.push(ifd.offset);
    const current = ifdOffsets[ifdOffsets.length - 1]!;
    const previous = ifdOffsets[ifdOffsets.length - 2]!;
    if (current < previous) {
      errors.push(
        ix === 0
          ? `The offset of the IFD for overview of index ${ix} is ${current}, whereas it should be greater than the one of the main image, which is at byte ${previous}`
          : `The offset of the IFD for overview of index ${ix} is ${current}, whereas it should be greater than the one of index ${ix - 1}, which is at byte ${previous}`,
      );
    }
  });

  // Data offsets: a level whose blocks are all empty is left out, as rio-cogeo leaves it out.
  const dataOffsets: number[] = [];
  if (main.firstBlockOffset > 0) dataOffsets.push(main.firstBlockOffset);
  decimations.forEach((_, ix) => {
    const ifd = reduced[ix];
    if (ifd && ifd.firstBlockOffset > 0) dataOffsets.push(ifd.firstBlockOffset);
  });
  const lastData = dataOffsets[dataOffsets.length - 1];
  if (lastData !== undefined && lastData < ifdOffsets[ifdOffsets.length - 1]!) {
    errors.push(
      decimations.length > 0
        ? 'The offset of the first block of the smallest overview should be after its IFD'
        : 'The offset of the first block of the image should be after its IFD',
    );
  }
  for (let i = dataOffsets.length - 2; i > 0; i--) {
    if (dataOffsets[i]! < dataOffsets[i + 1]!)
      errors.push(`The offset of the first block of overview of index ${i - 1} should be after the one of the overview of index ${i}`);
  }
  if (dataOffsets.length >= 2 && dataOffsets[0]! < dataOffsets[1]!) {
    errors.push(`The offset of the first block of the main resolution image should be after the one of the overview of index ${decimations.length - 1}`);
  }

  facts.overviews.forEach(([width, height, overviewBlockWidth], ix) => {
    if (width > 512 && height > 512 && overviewBlockWidth === width) errors.push(`Overview of index ${ix} is not tiled`);
  });
  return { errors, warnings };
}

const COLOR_SPACES = new Set(['MINISBLACK', 'MINISWHITE', 'RGB', 'CMYK', 'YCbCr', 'CIELAB', 'ICCLAB', 'ITULAB']);
const INTERLEAVES = new Set(['PIXEL', 'LINE', 'BAND']);

const GMF_PER_DATASET = 0x02;
const GMF_ALPHA = 0x04;

/** rasterio's name of a metadata domain in rio-cogeo's Tags: 'IMAGE_STRUCTURE' → 'Image Structure'. */
function domainTitle(domain: string): string {
  return domain
    .toLowerCase()
    .replace(/(^|[^a-z])([a-z])/g, (_, sep: string, c: string) => sep + c.toUpperCase())
    .replace(/_/g, ' ');
}

/** "EPSG:n" when the CRS carries an EPSG code, else its WKT (rio-cogeo's GEO.CRS). */
function crsName(wkt: string): string | null {
  if (!wkt) return null;
  const srs = srsFrom(wkt);
  const authority = srs.getAuthorityName(null);
  const code = srs.getAuthorityCode(null);
  return authority === 'EPSG' && code ? `EPSG:${code}` : srs.toWKT();
}

export interface BandReport {
  Description: string | null;
  ColorInterp: string;
  Offset: number;
  Scale: number;
  Metadata: Record<string, string>;
}

/** rio-cogeo's `Info` model (the `/cog/validate` answer), its field names as they are sent. */
export interface CogReport {
  Path: string;
  Driver: string;
  COG: boolean;
  Compression: string | null;
  ColorSpace: string | null;
  COG_errors: string[] | null;
  COG_warnings: string[] | null;
  Profile: {
    Bands: number;
    Width: number;
    Height: number;
    Tiled: boolean;
    Dtype: string;
    Interleave: string;
    AlphaBand: boolean;
    InternalMask: boolean;
    Nodata: number | null;
    ColorInterp: string[];
    ColorMap: boolean;
    Scales: number[];
    Offsets: number[];
  };
  GEO: {
    CRS: string | null;
    BoundingBox: [number, number, number, number];
    Origin: [number, number];
    Resolution: [number, number];
    MinZoom: number | null;
    MaxZoom: number | null;
  };
  Tags: Record<string, Record<string, string>>;
  'Band Metadata': Record<string, BandReport>;
  IFD: Array<{ Level: number; Width: number; Height: number; Blocksize: [number, number]; Decimation: number }>;
}

function cogReport(
  path: string,
  meta: SourceMeta,
  facts: DatasetFacts,
  validation: Validation,
  zooms: { minzoom: number; maxzoom: number } | null,
  strict: boolean,
): CogReport {
  const structure = facts.metadata.find(([d]) => d === 'IMAGE_STRUCTURE')?.[1] ?? {};
  // rasterio's name: the last word of GDAL's ('YCbCr JPEG' is JPEG).
  const compression = structure['COMPRESSION']?.split(' ').pop() || null;
  const colorSpace = structure['SOURCE_COLOR_SPACE'];
  const interleave = structure['INTERLEAVE'];
  const [x0, dx, , y0, , dy] = meta.geoTransform as [number, number, number, number, number, number];
  const valid = validation.errors.length === 0 && !(strict && validation.warnings.length > 0);
  const tags: Record<string, Record<string, string>> = {};
  for (const [domain, values] of facts.metadata) tags[domain === '' ? 'Image Metadata' : domainTitle(domain)] = values;
  const bandMetadata: Record<string, BandReport> = {};
  meta.bands.forEach((b, i) => {
    bandMetadata[`Band ${i + 1}`] = { Description: b.description || null, ColorInterp: b.colorInterp, Offset: b.offset, Scale: b.scale, Metadata: b.metadata };
  });
  const [blockWidth, blockHeight] = meta.blockSize;
  return {
    Path: path,
    Driver: meta.driver,
    COG: valid,
    Compression: compression,
    ColorSpace: colorSpace && COLOR_SPACES.has(colorSpace) ? colorSpace : null,
    COG_errors: validation.errors.length > 0 ? validation.errors : null,
    COG_warnings: validation.warnings.length > 0 ? validation.warnings : null,
    Profile: {
      Bands: meta.count,
      Width: meta.width,
      Height: meta.height,
      Tiled: blockWidth !== meta.width,
      Dtype: numpyDtype(meta.bands[0]?.dataType ?? 'Byte'),
      Interleave: interleave && INTERLEAVES.has(interleave) ? interleave : 'UNKNOWN',
      AlphaBand: meta.bands.some((b) => (b.maskFlags & GMF_ALPHA) !== 0 || b.colorInterp === 'alpha'),
      InternalMask: meta.bands.some((b) => (b.maskFlags & GMF_PER_DATASET) !== 0 && (b.maskFlags & GMF_ALPHA) === 0),
      Nodata: meta.bands[0]?.nodata ?? null,
      ColorInterp: meta.bands.map((b) => b.colorInterp),
      ColorMap: meta.colormap !== undefined,
      Scales: meta.bands.map((b) => b.scale),
      Offsets: meta.bands.map((b) => b.offset),
    },
    GEO: {
      CRS: crsName(meta.crs),
      BoundingBox: [...meta.bounds] as [number, number, number, number],
      Origin: [x0, y0],
      Resolution: [dx, dy],
      MinZoom: zooms?.minzoom ?? null,
      MaxZoom: zooms?.maxzoom ?? null,
    },
    Tags: tags,
    'Band Metadata': bandMetadata,
    IFD: [
      { Level: 0, Width: meta.width, Height: meta.height, Blocksize: [blockHeight, blockWidth], Decimation: 0 },
      ...facts.overviews.map(([width, height, bw, bh], i) => ({
        Level: i + 1,
        Width: width,
        Height: height,
        Blocksize: [bh, bw] as [number, number],
        Decimation: meta.overviews[i] ?? 0,
      })),
    ],
  };
}
