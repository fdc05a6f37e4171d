/**
 * Pixel parity of the /cog image routes with TiTiler 0.18.10 (TilerFactory over rio-tiler's Reader):
 * a bare GeoTIFF named by `url`, bands `b1 … bn`, `bidx` and expressions over them; tiles in a grid
 * and in the deprecated forms without one, preview, bbox, feature and point, compared as the /stac
 * image suite compares them. Figures go to .parity/report-cog.md.
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
  { id: 'tile-b01', path: '/cog/tiles/WebMercatorQuad/9/289/207.npy?url={file:B01.tif}', kind: 'npy' },
  { id: 'tile-b01-edge', path: '/cog/tiles/WebMercatorQuad/8/144/104.npy?url={file:B01.tif}', kind: 'npy' },
  { id: 'tile-cog-alpha', path: '/cog/tiles/WebMercatorQuad/8/87/49.npy?url={file:cog.tif}', kind: 'npy' },
  { id: 'tile-cog-2x', path: '/cog/tiles/WebMercatorQuad/9/175/98@2x.npy?url={file:cog.tif}', kind: 'npy' },
  { id: 'tile-crs84', path: '/cog/tiles/WorldCRS84Quad/8/289/82.npy?url={file:B01.tif}', kind: 'npy' },
  { id: 'tile-tci-bidx', path: '/cog/tiles/WebMercatorQuad/10/577/416.npy?url={file:TCI.tif}&bidx=3&bidx=1', kind: 'npy' },
  { id: 'tile-tci-expression', path: '/cog/tiles/WebMercatorQuad/10/577/416.npy?url={file:TCI.tif}&expression=(b1-b3)/(b1%2Bb3);b2*2', kind: 'npy' },
  { id: 'tile-nodata', path: '/cog/tiles/WebMercatorQuad/8/87/49.npy?url={file:cog.tif}&nodata=0', kind: 'npy' },
  { id: 'tile-unscale', path: '/cog/tiles/WebMercatorQuad/10/872/397.npy?url={file:cog_scale.tif}&unscale=true', kind: 'npy' },
  { id: 'tile-nan', path: '/cog/tiles/WebMercatorQuad/10/738/448.npy?url={file:cog_with_nan.tif}', kind: 'npy' },
  { id: 'tile-png-rescale', path: '/cog/tiles/WebMercatorQuad/9/289/207.png?url={file:B01.tif}&rescale=0,1000', kind: 'png' },
  { id: 'tile-png-rgb', path: '/cog/tiles/WebMercatorQuad/10/577/416.png?url={file:TCI.tif}', kind: 'png' },
  { id: 'tile-png-colormap', path: '/cog/tiles/WebMercatorQuad/9/289/207.png?url={file:B01.tif}&rescale=0,3000&colormap_name=viridis', kind: 'png' },
  { id: 'tile-default-format', path: '/cog/tiles/WebMercatorQuad/10/577/416?url={file:TCI.tif}', kind: 'image' },
  { id: 'tile-hillshade', path: '/cog/tiles/WebMercatorQuad/14/8514/5834.png?url={file:dem.tif}&algorithm=hillshade&buffer=3', kind: 'png' },

  // The forms without a grid (deprecated, still served): WebMercatorQuad, or the query's grid.
  { id: 'tile-no-grid', path: '/cog/tiles/9/289/207.npy?url={file:B01.tif}', kind: 'npy' },
  { id: 'tile-no-grid-2x-png', path: '/cog/tiles/9/289/207@2x.png?url={file:B01.tif}&rescale=0,1000', kind: 'png' },
  { id: 'tile-no-grid-query-tms', path: '/cog/tiles/8/289/82.npy?url={file:B01.tif}&tileMatrixSetId=WorldCRS84Quad', kind: 'npy' },
  // `format` and `scale` from the query where the path has none (TiTiler declares them as query parameters there).
  { id: 'tile-query-format-scale', path: '/cog/tiles/9/289/207?url={file:B01.tif}&format=npy&scale=2', kind: 'npy' },
  { id: 'tile-grid-query-format', path: '/cog/tiles/WebMercatorQuad/9/289/207@2x?url={file:B01.tif}&format=npy', kind: 'npy' },
  { id: 'preview-query-format', path: '/cog/preview?url={file:B01.tif}&format=npy&max_size=64', kind: 'npy' },
  { id: 'feature-query-format', path: '/cog/feature?url={file:B01.tif}&format=npy', kind: 'npy', body: FEATURE },
  { id: 'stac-tile-no-grid', path: '/stac/tiles/9/289/207.npy?url={s2}&assets=B01', kind: 'npy' },

  { id: 'preview', path: '/cog/preview.npy?url={file:B01.tif}&max_size=64', kind: 'npy' },
  { id: 'preview-cog', path: '/cog/preview.npy?url={file:cog.tif}', kind: 'npy' },
  { id: 'preview-png-expression', path: '/cog/preview.png?url={file:TCI.tif}&expression=b1*0.5&rescale=0,128&max_size=128', kind: 'png' },
  { id: 'bbox', path: '/cog/bbox/23.878,32.063,23.966,32.145.npy?url={file:B01.tif}', kind: 'npy' },
  { id: 'bbox-size-dst-crs', path: '/cog/bbox/23.5,31.7,24.0,32.2/128x128.npy?url={file:TCI.tif}&dst_crs=EPSG:3857', kind: 'npy' },
  { id: 'feature', path: '/cog/feature.npy?url={file:B01.tif}', kind: 'npy', body: FEATURE },
  { id: 'feature-size-png', path: '/cog/feature/100x100.png?url={file:TCI.tif}', kind: 'png', body: FEATURE },

  { id: 'point', path: '/cog/point/23.878,32.063?url={file:B01.tif}', kind: 'json' },
  { id: 'point-rgb-bidx', path: '/cog/point/23.878,32.063?url={file:TCI.tif}&bidx=3&bidx=1', kind: 'json' },
  { id: 'point-expression', path: '/cog/point/23.878,32.063?url={file:TCI.tif}&expression=b1/b3;b2*2', kind: 'json' },

  { id: 'tile-outside', path: '/cog/tiles/WebMercatorQuad/9/1/1.png?url={file:B01.tif}', kind: 'status', status: 404 },
  { id: 'tile-missing-url', path: '/cog/tiles/WebMercatorQuad/9/289/207.png', kind: 'status', status: 422 },
];

describePixelParity(
  'parity: /cog image routes (decoded pixels)',
  'cog',
  'Pixel parity of /cog image routes: `.npy` arrays and decoded PNGs compared value by value.',
  CASES,
);
