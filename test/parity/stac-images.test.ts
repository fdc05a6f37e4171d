/**
 * Pixel parity of the /stac image routes with TiTiler 0.18.10: the same tile, preview, bbox and
 * feature requests go to both servers and the decoded arrays are compared — `.npy` for the read
 * values (data bands and the mask band exactly as numpy saved them), PNG for rendered output —
 * plus point values and error statuses. The bar (issue 3): equal shapes, dtypes, media types and
 * band counts; at least 99.5% of values within ±1; identical masks. Every case's figures go to
 * .parity/report-stac-images.md.
 */
import { describePixelParity, type PixelCase } from './pixels.js';

const FEATURE = {
  type: 'Feature',
  properties: {},
  geometry: {
    type: 'Polygon',
    coordinates: [
      [
        [23.6, 31.9],
        [23.9, 31.85],
        [24.0, 32.2],
        [23.7, 32.25],
        [23.6, 31.9],
      ],
    ],
  },
};

const CASES: PixelCase[] = [
  // Tiles: nodata masks (B01), alpha masks (cog.tif has none), RGB (TCI), several grids and zooms.
  { id: 'tile-b01-z9', path: '/stac/tiles/WebMercatorQuad/9/289/207.npy?url={s2}&assets=B01', kind: 'npy' },
  { id: 'tile-b01-z8-edge', path: '/stac/tiles/WebMercatorQuad/8/144/104.npy?url={s2}&assets=B01', kind: 'npy' },
  { id: 'tile-b01-z10', path: '/stac/tiles/WebMercatorQuad/10/578/415.npy?url={s2}&assets=B01', kind: 'npy' },
  { id: 'tile-b01-z12-overzoom', path: '/stac/tiles/WebMercatorQuad/12/2313/1657.npy?url={s2}&assets=B01', kind: 'npy' },
  { id: 'tile-b01-b09', path: '/stac/tiles/WebMercatorQuad/9/289/207.npy?url={s2}&assets=B01&assets=B09', kind: 'npy' },
  { id: 'tile-crs84', path: '/stac/tiles/WorldCRS84Quad/8/289/82.npy?url={s2}&assets=B01', kind: 'npy' },
  // GDAL 3.6's warper (tessera) and 3.10's (TiTiler's wheels) sample 7 edge pixels of this geographic
  // tile differently (99.989% of the mask equal, 99.8% of values within ±1): measured, kept visible.
  { id: 'tile-wgs1984', path: '/stac/tiles/WGS1984Quad/7/144/41.npy?url={s2}&assets=B01', kind: 'npy', maskAtLeast: 0.9998 },
  { id: 'tile-laea', path: '/stac/tiles/EuropeanETRS89_LAEAQuad/6/51/62.npy?url={s2}&assets=B01', kind: 'npy' },
  { id: 'tile-tci-rgb', path: '/stac/tiles/WebMercatorQuad/10/577/416.npy?url={s2}&assets=tci', kind: 'npy' },
  { id: 'tile-tci-asset-bidx', path: '/stac/tiles/WebMercatorQuad/10/577/416.npy?url={s2}&assets=tci&asset_bidx=tci|3,1', kind: 'npy' },
  { id: 'tile-tci-bidx', path: '/stac/tiles/WebMercatorQuad/10/577/416.npy?url={s2}&assets=tci&bidx=2', kind: 'npy' },
  { id: 'tile-cog-alpha-z8', path: '/stac/tiles/WebMercatorQuad/8/87/49.npy?url={cog}&assets=cog', kind: 'npy' },
  { id: 'tile-cog-alpha-z10', path: '/stac/tiles/WebMercatorQuad/10/350/197.npy?url={cog}&assets=cog', kind: 'npy' },
  { id: 'tile-cog-2x', path: '/stac/tiles/WebMercatorQuad/9/175/98@2x.npy?url={cog}&assets=cog', kind: 'npy' },
  { id: 'tile-cog-nodata-0', path: '/stac/tiles/WebMercatorQuad/8/87/49.npy?url={cog}&assets=cog&nodata=0', kind: 'npy' },
  { id: 'tile-bilinear', path: '/stac/tiles/WebMercatorQuad/10/350/197.npy?url={cog}&assets=cog&resampling=bilinear&reproject=bilinear', kind: 'npy' },
  { id: 'tile-reproject-cubic', path: '/stac/tiles/WebMercatorQuad/12/2313/1657.npy?url={s2}&assets=B01&reproject=cubic', kind: 'npy' },
  { id: 'tile-resampling-average', path: '/stac/tiles/WebMercatorQuad/8/144/104.npy?url={s2}&assets=tci&resampling=average', kind: 'npy' },
  { id: 'tile-unscale', path: '/stac/tiles/WebMercatorQuad/10/872/397.npy?url={scale}&assets=scale&unscale=true', kind: 'npy' },
  { id: 'tile-nan-nodata', path: '/stac/tiles/WebMercatorQuad/10/738/448.npy?url={nan}&assets=nan', kind: 'npy' },
  { id: 'tile-dem', path: '/stac/tiles/WebMercatorQuad/14/8514/5834.npy?url={dem}&assets=dem', kind: 'npy' },
  { id: 'tile-buffer', path: '/stac/tiles/WebMercatorQuad/10/578/415.npy?url={s2}&assets=B01&buffer=2', kind: 'npy' },
  { id: 'tile-buffer-half', path: '/stac/tiles/WebMercatorQuad/10/578/415.npy?url={s2}&assets=B01&buffer=0.5', kind: 'npy' },
  { id: 'tile-padding', path: '/stac/tiles/WebMercatorQuad/10/578/415.npy?url={s2}&assets=B01&padding=2', kind: 'npy' },
  { id: 'tile-expression', path: '/stac/tiles/WebMercatorQuad/9/289/207.npy?url={s2}&expression=B01_b1/B09_b1', kind: 'npy' },
  { id: 'tile-expression-multi', path: '/stac/tiles/WebMercatorQuad/9/289/207.npy?url={s2}&expression=B01_b1*2;B09_b1-B01_b1;(B01_b1>1000)', kind: 'npy' },
  {
    id: 'tile-expression-asset-as-band',
    path: '/stac/tiles/WebMercatorQuad/9/289/207.npy?url={s2}&expression=(B09-B01)/(B09%2BB01)&asset_as_band=true',
    kind: 'npy',
  },
  { id: 'tile-return-mask-false', path: '/stac/tiles/WebMercatorQuad/9/289/207.npy?url={s2}&assets=B01&return_mask=false', kind: 'npy' },
  { id: 'tile-png-default', path: '/stac/tiles/WebMercatorQuad/9/289/207?url={s2}&assets=B01', kind: 'image' },
  { id: 'tile-png-rescale', path: '/stac/tiles/WebMercatorQuad/9/289/207.png?url={s2}&assets=B01&rescale=0,1000', kind: 'png' },
  { id: 'tile-png-rgb', path: '/stac/tiles/WebMercatorQuad/10/577/416.png?url={s2}&assets=tci', kind: 'png' },
  { id: 'tile-png-uint16', path: '/stac/tiles/WebMercatorQuad/9/289/207.png?url={s2}&assets=B01', kind: 'png' },
  { id: 'tile-jpeg-full', path: '/stac/tiles/WebMercatorQuad/10/350/197?url={cog}&assets=cog&rescale=0,10000', kind: 'image' },
  { id: 'tile-tif', path: '/stac/tiles/WebMercatorQuad/9/289/207.tif?url={s2}&assets=B01', kind: 'image' },
  { id: 'tile-webp', path: '/stac/tiles/WebMercatorQuad/10/577/416.webp?url={s2}&assets=tci', kind: 'image' },
  { id: 'tile-jp2', path: '/stac/tiles/WebMercatorQuad/10/577/416.jp2?url={s2}&assets=tci', kind: 'image' },

  // Preview, bbox, feature.
  { id: 'preview-b01-64', path: '/stac/preview.npy?url={s2}&assets=B01&max_size=64', kind: 'npy' },
  { id: 'preview-b01-wh', path: '/stac/preview.npy?url={s2}&assets=B01&width=128&height=128', kind: 'npy' },
  // TiTiler 0.18.10 cannot stack assets of different sizes with its rasterio wheel (resize_array opens a
  // MEM:::DATAPOINTER dataset GDAL ≥3.10 refuses: 500); tessera resizes them (nearest) as rio-tiler means to.
  {
    id: 'preview-multi-size',
    path: '/stac/preview.npy?url={s2}&assets=B01&assets=tci&max_size=256',
    kind: 'npy',
    deliberate: { status: 500, shape: [5, 256, 256] },
  },
  { id: 'preview-cog', path: '/stac/preview.npy?url={cog}&assets=cog', kind: 'npy' },
  { id: 'preview-png', path: '/stac/preview.png?url={s2}&assets=B01&rescale=0,1000&max_size=64', kind: 'png' },
  { id: 'bbox-b01', path: '/stac/bbox/23.878,32.063,23.966,32.145.npy?url={s2}&assets=B01', kind: 'npy' },
  { id: 'bbox-b01-size', path: '/stac/bbox/23.878,32.063,23.966,32.145/128x128.npy?url={s2}&assets=B01', kind: 'npy' },
  { id: 'bbox-dst-crs', path: '/stac/bbox/23.5,31.7,24.0,32.2.npy?url={s2}&assets=tci&dst_crs=EPSG:3857&max_size=256', kind: 'npy' },
  { id: 'bbox-coord-crs', path: '/stac/bbox/2600000,3550000,2650000,3600000.npy?url={s2}&assets=B01&coord_crs=EPSG:3857', kind: 'npy' },
  { id: 'feature-b01', path: '/stac/feature.npy?url={s2}&assets=B01', kind: 'npy', body: FEATURE },
  { id: 'feature-b01-size', path: '/stac/feature/100x100.npy?url={s2}&assets=B01', kind: 'npy', body: FEATURE },
  { id: 'feature-png', path: '/stac/feature.png?url={s2}&assets=tci&max_size=256', kind: 'png', body: FEATURE },

  // Points.
  { id: 'point-b01', path: '/stac/point/23.878,32.063?url={s2}&assets=B01', kind: 'json' },
  { id: 'point-b01-b09', path: '/stac/point/23.878,32.063?url={s2}&assets=B01&assets=B09&assets=tci', kind: 'json' },
  { id: 'point-expression', path: '/stac/point/23.878,32.063?url={s2}&expression=B01_b1/B09_b1;B01_b1*2', kind: 'json' },
  { id: 'point-nodata', path: '/stac/point/23.2,31.6?url={s2}&assets=B01', kind: 'json' },
  { id: 'point-unscale', path: '/stac/point/127.35,37.44?url={scale}&assets=scale&unscale=true', kind: 'json' },
  { id: 'point-nan', path: '/stac/point/80.29,22.09?url={nan}&assets=nan', kind: 'json' },
  { id: 'point-coord-crs', path: '/stac/point/2658086.8,3771583.2?url={s2}&assets=B01&coord_crs=EPSG:3857', kind: 'json' },

  // Errors TiTiler already answers with a 4xx.
  { id: 'tile-no-assets', path: '/stac/tiles/WebMercatorQuad/9/289/207.png?url={s2}', kind: 'status', status: 400 },
  { id: 'tile-outside', path: '/stac/tiles/WebMercatorQuad/9/1/1.png?url={s2}&assets=B01', kind: 'status', status: 404 },
  { id: 'tile-unknown-asset', path: '/stac/tiles/WebMercatorQuad/9/289/207.png?url={s2}&assets=B1111', kind: 'status', status: 404 },
  { id: 'tile-bad-format', path: '/stac/tiles/WebMercatorQuad/9/289/207.gif?url={s2}&assets=B01', kind: 'status', status: 422 },
  { id: 'tile-bad-z', path: '/stac/tiles/WebMercatorQuad/a/289/207.png?url={s2}&assets=B01', kind: 'status', status: 422 },
  { id: 'tile-bad-scale', path: '/stac/tiles/WebMercatorQuad/9/289/207@5x.png?url={s2}&assets=B01', kind: 'status', status: 422 },
  { id: 'preview-unknown-asset', path: '/stac/preview.png?url={s2}&assets=B1111', kind: 'status', status: 404 },
  { id: 'bbox-bad-number', path: '/stac/bbox/23.8a,32.063,23.966,32.145.png?url={s2}&assets=B01', kind: 'status', status: 422 },
];

describePixelParity(
  'parity: /stac image routes (decoded pixels)',
  'stac-images',
  'Pixel parity of /stac image routes: `.npy` arrays and decoded PNGs compared value by value.',
  CASES,
);
