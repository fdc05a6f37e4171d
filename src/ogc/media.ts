/** Output formats and their media types, as TiTiler 0.18 sends them (`jpg` is `image/jpg`, sic). */
export const MEDIA_TYPES = {
  png: 'image/png',
  npy: 'application/x-binary',
  tif: 'image/tiff; application=geotiff',
  jpeg: 'image/jpeg',
  jpg: 'image/jpg',
  jp2: 'image/jp2',
  webp: 'image/webp',
  pngraw: 'image/png',
} as const;
