/**
 * Parameters of TiTiler's extensions on /cog: cogValidateExtension (`strict`) and stacExtension
 * (rio-stac's `create_stac_item` options).
 */
import { ASSET_MEDIA_TYPES, type StacItemOptions } from '../../stac/from-raster.js';
import { bool, family, int, str, strList, type Query } from './family.js';

/** cogValidateExtension: warnings count as errors. */
export const validateStrict = family(
  'cogValidateExtension',
  { strict: { schema: { type: 'boolean', default: false }, doc: 'Treat warnings as errors: a file with warnings is not a valid COG.' } },
  (q): boolean => q['strict'] === true,
);

/** A string parameter as given (an empty one included: rio-stac takes it as it is). */
function given(q: Query, name: string): string | undefined {
  return typeof q[name] === 'string' ? (q[name] as string) : undefined;
}

function listed(q: Query, name: string): string[] {
  return Array.isArray(q[name]) ? (q[name] as string[]) : [];
}

/** stacExtension: the item made from the raster (everything but the read limits, which are the server's). */
export const stacItem = family(
  'stacExtension',
  {
    datetime: { schema: str, doc: 'Date and time of the item, in UTC unless an offset is given (2020-01-01, 2020-01-01T01:01:01Z), or start/end.' },
    extensions: { schema: strList, doc: 'URL of a STAC extension the item implements; repeat for several.' },
    collection: { schema: str, doc: 'Identifier of the collection the item belongs to (adds a collection link).' },
    collection_url: { schema: str, doc: 'URL of that collection, for the collection link. Default: the identifier.' },
    id: { schema: str, doc: 'Identifier of the item. Default: the file name.' },
    asset_name: { schema: { type: 'string', default: 'data' }, doc: 'Name of the asset the raster becomes. Default: data.' },
    asset_roles: { schema: strList, doc: 'Role of the asset; repeat for several.' },
    asset_media_type: {
      schema: { type: 'string', enum: [...ASSET_MEDIA_TYPES], default: 'auto' },
      doc: 'Media type of the asset; auto gives GeoTIFF (or TIFF when the raster has no CRS).',
    },
    asset_href: { schema: str, doc: "URL written as the asset's href. Default: the url read." },
    with_proj: { schema: { ...bool, default: true }, doc: 'Add the projection extension: EPSG code, native bounds, shape, transform, PROJJSON.' },
    with_raster: { schema: { ...bool, default: true }, doc: 'Add the raster extension: per band type, scale, offset, nodata, statistics and histogram.' },
    with_eo: { schema: { ...bool, default: true }, doc: 'Add the eo extension: band names and descriptions, cloud cover when the file has it.' },
    max_size: { schema: { ...int, exclusiveMinimum: 0, default: 1024 }, doc: 'Maximum width or height of the output, in pixels (aspect ratio kept).' },
    // Bounded (TiTiler's are not): each sizes work before anything is read.
    geometry_densify: {
      schema: { ...int, minimum: 0, maximum: 10_000, default: 0 },
      doc: 'Points added on each edge of the footprint before it is carried to longitude/latitude (at most 10000).',
    },
    geometry_precision: {
      schema: { ...int, minimum: -1, maximum: 17, default: -1 },
      doc: "Decimals the footprint's coordinates are rounded to; -1 keeps them whole.",
    },
  },
  (q): Omit<StacItemOptions, 'limits'> => {
    const datetime = given(q, 'datetime');
    const collection = given(q, 'collection');
    const collectionUrl = given(q, 'collection_url');
    const id = given(q, 'id');
    const assetHref = given(q, 'asset_href');
    return {
      ...(datetime !== undefined ? { datetime } : {}),
      extensions: listed(q, 'extensions'),
      ...(collection !== undefined ? { collection } : {}),
      ...(collectionUrl !== undefined ? { collectionUrl } : {}),
      ...(id !== undefined ? { id } : {}),
      assetName: given(q, 'asset_name') ?? 'data',
      assetRoles: listed(q, 'asset_roles'),
      assetMediaType: given(q, 'asset_media_type') ?? 'auto',
      ...(assetHref !== undefined ? { assetHref } : {}),
      withProj: q['with_proj'] !== false,
      withRaster: q['with_raster'] !== false,
      withEo: q['with_eo'] !== false,
      maxSize: q['max_size'] as number,
      densify: q['geometry_densify'] as number,
      precision: q['geometry_precision'] as number,
    };
  },
);
