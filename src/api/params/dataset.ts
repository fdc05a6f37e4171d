/**
 * Which dataset and how its values are read: DatasetPathParams (`url`), DatasetParams (nodata,
 * unscale, resampling, reproject), the grid of the deprecated forms without one in the path, and the
 * CRS parameters (CoordCRSParams, DstCRSParams).
 */
import { badRequest } from '../../errors.js';
import { tmsIds, getTms, WEB_MERCATOR_QUAD } from '../../tms/registry.js';
import type { TileMatrixSet } from '../../tms/grid.js';
import { parseUserCrs, WGS84 } from '../../gdal/crs.js';
import type { ValueOptions } from '../../source/reader.js';
import { READ_RESAMPLING, WARP_RESAMPLING, type ReadResampling, type WarpResampling } from '../../source/read.js';
import { bool, family, str, text, type Query } from './family.js';

/** DatasetPathParams: the dataset's URL (a COG, a STAC item or a MosaicJSON document, by family). */
export const datasetUrl = family(
  'DatasetPathParams',
  { url: { schema: str, doc: 'URL of the dataset (a COG, a STAC item or a MosaicJSON document, by family).', required: true } },
  (q) => q['url'] as string,
);

/** `nodata`: a number, `nan` or `inf` (Python's float()). */
function parseNodata(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const t = raw.trim().toLowerCase();
  if (t === 'nan') return NaN;
  if (t === 'inf' || t === '+inf' || t === 'infinity') return Infinity;
  if (t === '-inf' || t === '-infinity') return -Infinity;
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return Number(t);
  throw badRequest(`Invalid nodata value '${raw}': expected a number or 'nan'`);
}

/** DatasetParams, as read options. */
export const datasetValues = family(
  'DatasetParams',
  {
    nodata: { schema: str, doc: "Nodata value overriding the dataset's (a number, or nan / inf / -inf)." },
    unscale: { schema: bool, doc: "Apply the bands' internal scale and offset.", parserDefault: false },
    resampling: {
      schema: { type: 'string', enum: [...READ_RESAMPLING] },
      doc: 'Resampling when reading at another resolution (RasterIO). Default: nearest.',
      parserDefault: 'nearest',
    },
    reproject: {
      schema: { type: 'string', enum: [...WARP_RESAMPLING] },
      doc: 'Resampling when reprojecting (warp kernel). Default: nearest.',
      parserDefault: 'nearest',
    },
  },
  (q): ValueOptions => {
    const nodata = parseNodata(text(q, 'nodata'));
    return {
      unscale: q['unscale'] === true,
      resampling: (q['resampling'] as ReadResampling | undefined) ?? 'nearest',
      reproject: (q['reproject'] as WarpResampling | undefined) ?? 'nearest',
      ...(nodata !== undefined ? { nodata } : {}),
    };
  },
);

/** The grid of the deprecated forms without one in the path (TiTiler 0.18.10 takes it from the query). */
export const gridQuery = family(
  'TileMatrixSet query',
  {
    tileMatrixSetId: {
      schema: { type: 'string', enum: [...tmsIds], default: WEB_MERCATOR_QUAD },
      doc: 'Identifier of the tile matrix set (see /tileMatrixSets). Default: WebMercatorQuad.',
    },
  },
  (q): TileMatrixSet => getTms((q['tileMatrixSetId'] as string | undefined) ?? WEB_MERCATOR_QUAD)!,
);

/** The `{tileMatrixSetId}` path parameter's schema. */
export const tmsPathSchema = { tileMatrixSetId: { type: 'string', enum: [...tmsIds] } };

/** `coord_crs` / `dst_crs`: validated CRS text (400 when it is not one), or undefined. */
function crsParam(q: Query, name: 'coord_crs' | 'dst_crs'): string | undefined {
  const raw = q[name];
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  parseUserCrs(raw, name);
  return raw.trim();
}

/** CoordCRSParams: the CRS of coordinates in the path or body; longitude/latitude by default. */
export const coordCrs = family(
  'CoordCRSParams',
  { coord_crs: { schema: str, doc: 'CRS of the given coordinates. Default: EPSG:4326 (longitude/latitude).' } },
  (q): string => crsParam(q, 'coord_crs') ?? WGS84,
);

/** DstCRSParams: the output image's CRS, or undefined for the route's default. */
export const dstCrs = family(
  'DstCRSParams',
  { dst_crs: { schema: str, doc: "CRS of the output image. Default: the dataset's (bbox and feature: coord_crs)." } },
  (q): string | undefined => crsParam(q, 'dst_crs'),
);
