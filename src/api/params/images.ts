/**
 * The shape of an answer: TileParams (buffer, padding), the output sizes of PreviewParams and
 * PartFeatureParams, `format`/`scale` where the path has no place for them, TiTiler 2.x's `tilesize`
 * (titiler/core/factory.py 2.4.0: the tile, TileJSON and map routes take it in place of 0.18's
 * `@{scale}x`), and the TileJSON / WMTS parameters (the tile URLs such documents write).
 */
import { badRequest } from '../../errors.js';
import { TITILER2_FORMATS, formatOf, type FormatName, type ImageFormat } from '../../image/formats.js';
import { bool, family, int, type ParamFamily, type Query } from './family.js';

/** Largest `buffer` and `padding`, in pixels: wider than any tile needs, small enough to size no read. */
const MAX_TILE_MARGIN = 1024;

export interface TileMargins {
  buffer: number | undefined;
  padding: number | undefined;
}

/** TileParams: buffer a multiple of 0.5 (rio-tiler's InvalidBufferSize, a 400 here); both bounded. */
export const tileMargins = family(
  'TileParams',
  {
    buffer: {
      schema: { type: 'number', exclusiveMinimum: 0 },
      doc: 'Pixels added around each tile before processing, then trimmed (a multiple of 0.5); algorithms that look at neighbours need it.',
    },
    padding: { schema: { type: 'integer', exclusiveMinimum: 0 }, doc: 'Pixels read around each tile to avoid edge artefacts when resampling. Default: 0.' },
  },
  (q): TileMargins => {
    const buffer = q['buffer'] as number | undefined;
    const padding = q['padding'] as number | undefined;
    if (buffer !== undefined && !Number.isInteger(buffer * 2)) throw badRequest(`Invalid buffer ${buffer}: must be a multiple of 0.5`);
    for (const [name, value] of [
      ['buffer', buffer],
      ['padding', padding],
    ] as const) {
      if (value !== undefined && value > MAX_TILE_MARGIN) throw badRequest(`Invalid ${name} ${value}: at most ${MAX_TILE_MARGIN} pixels`);
    }
    return { buffer, padding };
  },
);

export interface SizeOptions {
  maxSize?: number;
  height?: number;
  width?: number;
}

/** Output size; with both width and height, max_size is dropped (TiTiler's __post_init__). `fixed` comes from a path. */
function outputSize(q: Query, fixed?: { width: number; height: number }): SizeOptions {
  const height = fixed?.height ?? (q['height'] as number | undefined);
  const width = fixed?.width ?? (q['width'] as number | undefined);
  const maxSize = q['max_size'] as number | undefined;
  for (const [name, v] of [
    ['height', height],
    ['width', width],
  ] as const) {
    if (v !== undefined && v <= 0) throw badRequest(`Invalid ${name} ${v}: must be a positive number of pixels`);
  }
  if (maxSize !== undefined && maxSize < 0) throw badRequest(`Invalid max_size ${maxSize}: must be 0 (full resolution) or more`);
  const out: SizeOptions = {};
  if (height) out.height = height;
  if (width) out.width = width;
  if (maxSize && !(width && height)) out.maxSize = maxSize;
  return out;
}

const MAX_SIZE_DOC = 'Maximum width or height of the output, in pixels (aspect ratio kept).';
const width = { schema: int, doc: 'Output width in pixels.' };
const height = { schema: int, doc: 'Output height in pixels.' };

/** PreviewParams (preview, GET statistics): max_size 1024 by default. */
export const previewSize = family('PreviewParams', { max_size: { schema: { type: 'integer', default: 1024 }, doc: MAX_SIZE_DOC }, height, width }, (q) =>
  outputSize(q),
);

/**
 * PartFeatureParams (bbox, feature, POST statistics): full resolution by default. Parsed into the size
 * given a route's fixed `{width}x{height}` path piece (which wins over the query's).
 */
export const partSize = family(
  'PartFeatureParams',
  { max_size: { schema: int, doc: MAX_SIZE_DOC }, height, width },
  (q) =>
    (fixed?: { width: number; height: number }): SizeOptions =>
      outputSize(q, fixed),
);

const FORMAT_DOC = 'Output format; by default PNG when the image needs a mask, else JPEG (`tiff`, TiTiler 2.x, is `tif`).';

/** `format` as a query parameter, for the routes whose path has no place for it. */
export const formatQuery = family(
  'ImageFormat query',
  { format: { schema: { type: 'string', enum: [...TITILER2_FORMATS] }, doc: FORMAT_DOC } },
  (q): ImageFormat | undefined => (q['format'] !== undefined ? formatOf(q['format'] as FormatName) : undefined),
);

/** `format` and `scale` as query parameters, for the tile routes whose path leaves them out. */
export const tileFormatQuery = family(
  'Tile format query',
  {
    format: { schema: { type: 'string', enum: [...TITILER2_FORMATS] }, doc: FORMAT_DOC },
    scale: {
      schema: { type: 'integer', exclusiveMinimum: 0, maximum: 4 },
      doc: 'Tile size scale: 1 gives 256×256 tiles, 2 gives 512×512, up to 4.',
      parserDefault: 1,
    },
  },
  (q): { format?: ImageFormat; scale?: number } => ({
    ...(q['format'] !== undefined ? { format: formatOf(q['format'] as FormatName) } : {}),
    ...(q['scale'] !== undefined ? { scale: q['scale'] as number } : {}),
  }),
);

/** Largest `tilesize`: 16 times a 256 px tile's pixels, far more than any map asks for; TiTiler has no bound. */
const MAX_TILE_SIZE = 4096;

/** TiTiler 2.x's `tilesize` (greater than 0: 422 as FastAPI's `gt=0`; above MAX_TILE_SIZE: 400). */
export const tileSize = family(
  'tilesize',
  {
    tilesize: {
      schema: { type: 'integer', exclusiveMinimum: 0 },
      doc: "Tile size in pixels (TiTiler 2.x, in place of `@{scale}x`; at most 4096). Tiles: default 256, or the grid's tile size with TESSERA_TITILER_API=2. TileJSON and map pages write it into their tile URLs.",
    },
  },
  (q): number | undefined => {
    const size = q['tilesize'] as number | undefined;
    if (size !== undefined && size > MAX_TILE_SIZE) throw badRequest(`Invalid tilesize ${size}: at most ${MAX_TILE_SIZE} pixels`);
    return size;
  },
);

export interface TileDocumentOptions {
  /** As the client named it: TiTiler 2.x writes `tiff` back into the tile URLs as `.tiff`. */
  tileFormat: FormatName | undefined;
  tileScale: number;
  minzoom: number | undefined;
  maxzoom: number | undefined;
}

const TILE_FORMAT_DOC = 'Format of the tile URLs in TileJSON or WMTS documents (`tiff`, TiTiler 2.x, is `tif`, written as named).';

/** TileJSON and map: the tile URLs the document writes, and the zooms it announces. */
export const tileDocument = tileDocumentFamily('TileJSON parameters', undefined);

/** WMTS: the same, its tile URLs in PNG unless `tile_format` names another format. */
export const wmtsDocument = tileDocumentFamily('WMTS parameters', 'png');

function tileDocumentFamily(name: string, defaultFormat: FormatName | undefined): ParamFamily<TileDocumentOptions> {
  return family(
    name,
    {
      tile_format: {
        schema: { type: 'string', enum: [...TITILER2_FORMATS] },
        doc: TILE_FORMAT_DOC,
        ...(defaultFormat ? { parserDefault: defaultFormat } : {}),
      },
      tile_scale: {
        schema: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 4, default: 1 },
        doc: 'Tile size scale of the tile URLs: 1 gives 256×256, 2 gives 512×512.',
      },
      minzoom: { schema: int, doc: "Minimum zoom written in the document, instead of the dataset's." },
      maxzoom: { schema: int, doc: "Maximum zoom written in the document, instead of the dataset's." },
    },
    (q): TileDocumentOptions => ({
      tileFormat: (q['tile_format'] as FormatName | undefined) ?? defaultFormat,
      tileScale: (q['tile_scale'] as number | undefined) ?? 1,
      minzoom: q['minzoom'] as number | undefined,
      maxzoom: q['maxzoom'] as number | undefined,
    }),
  );
}

/** WMTS: the CRS written as EPSG:n (ArcMap) instead of an OGC URI. */
export const wmtsEpsg = family(
  'WMTS use_epsg',
  { use_epsg: { schema: bool, doc: 'Write the CRS as EPSG:n instead of an OGC URI in the capabilities (for ArcMap).', parserDefault: false } },
  (q): boolean => q['use_epsg'] === true,
);
