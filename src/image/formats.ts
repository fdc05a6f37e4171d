/**
 * The output formats of image routes (TiTiler's `ImageType`) and the media type each is sent with.
 * Lives beside the renderer and encoders so that nothing below `api/` depends on the API layer.
 */

export const IMAGE_FORMATS = ['png', 'npy', 'tif', 'jpeg', 'jpg', 'jp2', 'webp', 'pngraw'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** TiTiler 2.x's ImageType (1.0 added `tiff`, the GeoTIFF under its other name), in its order: the formats of routes only 2.x has. */
export const TITILER2_FORMATS = ['png', 'npy', 'tif', 'tiff', 'jpeg', 'jpg', 'jp2', 'webp', 'pngraw'] as const;

/** A format as a client may name it: one of IMAGE_FORMATS, or `tiff` (TiTiler 2.x), kept as named where it is written back into URLs. */
export type FormatName = (typeof TITILER2_FORMATS)[number];

/** The format a name asks for: one of IMAGE_FORMATS, or `tiff` (TiTiler 2.x) for `tif`; undefined for anything else. */
export function formatNamed(name: string): ImageFormat | undefined {
  if (name === 'tiff') return 'tif';
  return (IMAGE_FORMATS as readonly string[]).includes(name) ? (name as ImageFormat) : undefined;
}

/** The format a valid name (TITILER2_FORMATS) asks for: `tiff` is `tif`. */
export function formatOf(name: FormatName): ImageFormat {
  return name === 'tiff' ? 'tif' : name;
}

/** As TiTiler 0.18 sends them: `jpg` is `image/jpg` (sic) and `pngraw` is a plain PNG. */
export const MEDIA_TYPES: Readonly<Record<ImageFormat, string>> = {
  png: 'image/png',
  npy: 'application/x-binary',
  tif: 'image/tiff; application=geotiff',
  jpeg: 'image/jpeg',
  jpg: 'image/jpg',
  jp2: 'image/jp2',
  webp: 'image/webp',
  pngraw: 'image/png',
};
