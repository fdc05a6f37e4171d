/**
 * Query parameters, one definition per family of TiTiler "dependencies": a JSON-schema fragment
 * (validated by Fastify, 422 on failure, as FastAPI does) and a parser that turns the validated
 * query into typed options (400 for the semantic mistakes TiTiler reports or should report).
 * Every route that takes a family composes the same fragment and calls the same parser.
 */
import { readFileSync } from 'node:fs';
import { badRequest } from '../errors.js';
import { tmsIds } from '../tms/registry.js';
import { parseUserCrs } from '../gdal/crs.js';
import { IMAGE_FORMATS } from '../image/formats.js';
import { ALGORITHM_IDS, isAlgorithmId, prepareAlgorithm, type AlgorithmStep } from '../image/algorithms/index.js';

type Schema = Record<string, unknown>;
export type Query = Record<string, unknown>;

const str = { type: 'string' } as const;
const strList = { type: 'array', items: { type: 'string' } } as const;
const bool = { type: 'boolean' } as const;
const int = { type: 'integer' } as const;

export { IMAGE_FORMATS, type ImageFormat } from '../image/formats.js';
export const READ_RESAMPLING = ['nearest', 'bilinear', 'cubic', 'cubic_spline', 'lanczos', 'average', 'mode', 'gauss', 'rms'] as const;
export const WARP_RESAMPLING = ['nearest', 'bilinear', 'cubic', 'cubic_spline', 'lanczos', 'average', 'mode', 'sum', 'rms'] as const;
export const COLORMAP_NAMES: readonly string[] = JSON.parse(
  readFileSync(new URL('../image/data/colormap-names.json', import.meta.url), 'utf8'),
) as string[];

/** Parameters that are booleans; pydantic's spellings are normalised before validation. */
export const BOOLEAN_PARAMS = new Set(['asset_as_band', 'unscale', 'return_mask', 'use_epsg', 'categorical', 'strict', 'with_proj', 'with_raster', 'with_eo']);
const TRUE = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE = new Set(['0', 'false', 'f', 'no', 'n', 'off']);

/** Rewrites pydantic boolean spellings ("yes", "On", "0" …) to what the schema validator accepts. */
export function normaliseBooleans(query: Query): void {
  for (const key of BOOLEAN_PARAMS) {
    const v = query[key];
    if (typeof v !== 'string') continue;
    const lower = v.trim().toLowerCase();
    if (TRUE.has(lower)) query[key] = 'true';
    else if (FALSE.has(lower)) query[key] = 'false';
  }
}

// ---- schema fragments (TiTiler dependency families) -------------------------------------------

export const tmsPathSchema: Schema = { tileMatrixSetId: { type: 'string', enum: [...tmsIds] } };

/** DatasetPathParams: the item (or document) URL. */
export const urlSchema: Schema = { url: str };

/** stacExtension's parameters (`/cog/stac`): the item rio-stac makes from a raster. */
export const stacItemSchema = (mediaTypes: readonly string[]): Schema => ({
  datetime: str,
  extensions: strList,
  collection: str,
  collection_url: str,
  id: str,
  asset_name: { type: 'string', default: 'data' },
  asset_roles: strList,
  asset_media_type: { type: 'string', enum: [...mediaTypes], default: 'auto' },
  asset_href: str,
  with_proj: { ...bool, default: true },
  with_raster: { ...bool, default: true },
  with_eo: { ...bool, default: true },
  max_size: { ...int, exclusiveMinimum: 0, default: 1024 },
  // Bounded (TiTiler's are not): each sizes work before anything is read.
  geometry_densify: { ...int, minimum: 0, maximum: 10_000, default: 0 },
  geometry_precision: { ...int, minimum: -1, maximum: 17, default: -1 },
});

/** AssetsParams (info routes). */
export const assetsSchema: Schema = { assets: strList };

/** AssetsBidxExprParams (image and point routes, tilejson, WMTS, map). */
export const layerSchema: Schema = {
  assets: strList,
  expression: str,
  asset_as_band: bool,
  asset_bidx: strList,
  bidx: { type: 'array', items: int },
};

/** BidxExprParams (/cog): bands of one raster, or an expression over `b1 … bn`. */
export const bandLayerSchema: Schema = {
  bidx: { type: 'array', items: int },
  expression: str,
};

/** DatasetParams. */
export const datasetSchema: Schema = {
  nodata: str,
  unscale: bool,
  resampling: { type: 'string', enum: [...READ_RESAMPLING] },
  reproject: { type: 'string', enum: [...WARP_RESAMPLING] },
};

/** TileParams. */
export const tileSchema: Schema = {
  buffer: { type: 'number', exclusiveMinimum: 0 },
  padding: { type: 'integer', exclusiveMinimum: 0 },
};

/** PostProcessParams. */
export const algorithmSchema: Schema = {
  algorithm: { type: 'string', enum: [...ALGORITHM_IDS] },
  algorithm_params: str,
};

/** ImageRenderingParams, RescalingParams, ColorFormulaParams, ColorMapParams. */
export const renderSchema: Schema = {
  rescale: strList,
  color_formula: str,
  colormap_name: { type: 'string', enum: [...COLORMAP_NAMES] },
  colormap: str,
  return_mask: bool,
};

/** The grid of the deprecated forms without one in the path (TiTiler 0.18.10 takes it from the query). */
export const gridQuerySchema: Schema = { tileMatrixSetId: { type: 'string', enum: [...tmsIds], default: 'WebMercatorQuad' } };

/** TileJSON and map extras. */
export const tilejsonSchema: Schema = {
  tile_format: { type: 'string', enum: [...IMAGE_FORMATS] },
  tile_scale: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 4, default: 1 },
  minzoom: int,
  maxzoom: int,
};

export function querySchema(required: string[], ...parts: Schema[]): Schema {
  return { type: 'object', properties: Object.assign({}, ...parts), required };
}

// ---- parsers ------------------------------------------------------------------------------------

export interface LayerParams {
  assets: string[] | undefined;
  expression: string | undefined;
  assetAsBand: boolean;
  assetBidx: Map<string, number[]>;
  bidx: number[] | undefined;
}

const NO_LAYER = 'assets must be defined either via expression or assets options.';

/**
 * TiTiler checks the "assets or expression" rule while parsing dependencies, before FastAPI reports
 * other invalid parameters (even a missing `url`): routes that carry the rule run this first.
 */
export async function requireLayerFirst(request: { query: unknown }): Promise<void> {
  const q = (request.query ?? {}) as Query;
  const has = (v: unknown): boolean => (Array.isArray(v) ? v.some((x) => x !== '') : typeof v === 'string' && v !== '');
  if (!has(q['assets']) && !has(q['expression'])) throw badRequest(NO_LAYER);
}

/** AssetsBidxExprParams; `required` applies TiTiler's "assets or expression" rule (400). */
export function parseLayer(q: Query, required: boolean): LayerParams {
  const assets = (q['assets'] as string[] | undefined)?.filter((a) => a !== '');
  const expression = typeof q['expression'] === 'string' && q['expression'] !== '' ? q['expression'] : undefined;
  if (required && !expression && (!assets || assets.length === 0)) throw badRequest(NO_LAYER);
  const assetBidx = new Map<string, number[]>();
  for (const entry of (q['asset_bidx'] as string[] | undefined) ?? []) {
    const bar = entry.indexOf('|');
    const name = bar > 0 ? entry.slice(0, bar) : '';
    const indexes = bar > 0 ? entry.slice(bar + 1).split(',').map((s) => s.trim()) : [];
    if (!name || indexes.length === 0 || !indexes.every((s) => /^\d+$/.test(s) && Number(s) > 0)) {
      throw badRequest(`Invalid asset_bidx '${entry}': expected 'asset|1,2,3' with 1-based band indexes`);
    }
    assetBidx.set(name, indexes.map(Number));
  }
  const bidx = q['bidx'] as number[] | undefined;
  if (bidx?.some((b) => b < 1)) throw badRequest('Invalid bidx: band indexes start at 1');
  return { assets, expression, assetAsBand: q['asset_as_band'] === true, assetBidx, bidx };
}

export interface DatasetOptions {
  nodata: number | undefined;
  unscale: boolean;
  resampling: (typeof READ_RESAMPLING)[number];
  reproject: (typeof WARP_RESAMPLING)[number];
}

/** DatasetParams: `nodata` is a number, `nan`, or `inf` (Python's float()). */
export function parseDataset(q: Query): DatasetOptions {
  let nodata: number | undefined;
  const raw = q['nodata'];
  if (typeof raw === 'string' && raw !== '') {
    const t = raw.trim().toLowerCase();
    if (t === 'nan') nodata = NaN;
    else if (t === 'inf' || t === '+inf' || t === 'infinity') nodata = Infinity;
    else if (t === '-inf' || t === '-infinity') nodata = -Infinity;
    else if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) nodata = Number(t);
    else throw badRequest(`Invalid nodata value '${raw}': expected a number or 'nan'`);
  }
  return {
    nodata,
    unscale: q['unscale'] === true,
    resampling: (q['resampling'] as DatasetOptions['resampling'] | undefined) ?? 'nearest',
    reproject: (q['reproject'] as DatasetOptions['reproject'] | undefined) ?? 'nearest',
  };
}

export interface TileOptions {
  buffer: number | undefined;
  padding: number | undefined;
}

/** Largest `buffer` and `padding`, in pixels: wider than any tile needs, small enough to size no read. */
export const MAX_TILE_MARGIN = 1024;

/** TileParams: buffer must be a multiple of 0.5 (rio-tiler's InvalidBufferSize, a 400 here); both bounded. */
export function parseTile(q: Query): TileOptions {
  const buffer = q['buffer'] as number | undefined;
  const padding = q['padding'] as number | undefined;
  if (buffer !== undefined && !Number.isInteger(buffer * 2)) {
    throw badRequest(`Invalid buffer ${buffer}: must be a multiple of 0.5`);
  }
  for (const [name, value] of [['buffer', buffer], ['padding', padding]] as const) {
    if (value !== undefined && value > MAX_TILE_MARGIN) throw badRequest(`Invalid ${name} ${value}: at most ${MAX_TILE_MARGIN} pixels`);
  }
  return { buffer, padding };
}

/** RescalingParams: each entry `min,max` (spaces and brackets ignored). */
export function parseRescale(q: Query): Array<[number, number]> | undefined {
  const entries = q['rescale'] as string[] | undefined;
  if (!entries || entries.length === 0) return undefined;
  return entries.map((entry) => {
    const parts = entry.replace(/[\s[\]]/g, '').split(',');
    const nums = parts.map((p) => (p === '' ? NaN : Number(p)));
    if (nums.length !== 2 || nums.some((n) => Number.isNaN(n))) {
      throw badRequest(`Invalid rescale '${entry}': expected 'min,max'`);
    }
    return [nums[0]!, nums[1]!] as [number, number];
  });
}

/** PostProcessParams `algorithm_params`: a JSON object (per-algorithm checks live with the algorithms). */
export function parseAlgorithmParams(q: Query): Record<string, unknown> | undefined {
  const raw = q['algorithm_params'];
  if (typeof raw !== 'string' || raw === '') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw badRequest('Could not parse the algorithm_params value: not valid JSON.');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw badRequest('Invalid algorithm_params: expected a JSON object.');
  }
  return doc as Record<string, unknown>;
}


// ---- image sizing and CRS (PreviewParams, PartFeatureParams, CoordCRSParams, DstCRSParams) ------

/** PreviewParams (preview, GET statistics): max_size 1024 by default. */
export const previewSizeSchema: Schema = { max_size: { type: 'integer', default: 1024 }, height: int, width: int };

/** PartFeatureParams (bbox, feature, POST statistics): full resolution by default. */
export const partSizeSchema: Schema = { max_size: int, height: int, width: int };

export const dstCrsSchema: Schema = { dst_crs: str };
export const coordCrsSchema: Schema = { coord_crs: str };

export interface SizeOptions {
  maxSize?: number;
  height?: number;
  width?: number;
}

/** Output size options; with both width and height, max_size is dropped (TiTiler's __post_init__). */
export function parseSize(q: Query, fixed?: { width: number; height: number }): SizeOptions {
  const height = fixed?.height ?? (q['height'] as number | undefined);
  const width = fixed?.width ?? (q['width'] as number | undefined);
  const maxSize = q['max_size'] as number | undefined;
  for (const [name, v] of [['height', height], ['width', width]] as const) {
    if (v !== undefined && v <= 0) throw badRequest(`Invalid ${name} ${v}: must be a positive number of pixels`);
  }
  if (maxSize !== undefined && maxSize < 0) throw badRequest(`Invalid max_size ${maxSize}: must be 0 (full resolution) or more`);
  const out: SizeOptions = {};
  if (height) out.height = height;
  if (width) out.width = width;
  if (maxSize && !(width && height)) out.maxSize = maxSize;
  return out;
}

/** `coord_crs` / `dst_crs`: validated CRS text (400 when it is not one), or undefined. */
export function parseCrsParam(q: Query, name: 'coord_crs' | 'dst_crs'): string | undefined {
  const raw = q[name];
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  parseUserCrs(raw, name);
  return raw.trim();
}

/**
 * The post-processing step of an image request (TiTiler's PostProcessParams), or undefined without
 * `algorithm`. `algorithm_params` must then be a JSON object (400 otherwise; TiTiler answers 500),
 * whose fields are validated as the algorithm's pydantic model does (400 with pydantic's text).
 * `name` is expected to have passed the query schema's enum already; an unknown one is a 400.
 */
export function parseAlgorithm(name: string | undefined, rawParams: string | undefined): AlgorithmStep | undefined {
  if (name === undefined || name === '') return undefined;
  if (!isAlgorithmId(name)) throw badRequest(`Unknown algorithm '${name}': expected one of ${ALGORITHM_IDS.join(', ')}`);
  const params = parseAlgorithmParams({ algorithm_params: rawParams }) ?? {};
  return prepareAlgorithm(name, params);
}
