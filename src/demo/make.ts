/**
 * `tessera demo --out DIR`: writes the built-in demo data, generated from nothing but a seed.
 *
 *   dem.tif        Float32 DEM (EPSG:32632, 30 m, 1024×1024, nodata -9999), a COG
 *   rgb.tif        Byte RGB shaded relief of the same grid (nodata 0), a COG
 *   mosaic-N.tif   four overlapping 600×600 crops of rgb.tif, COGs
 *   item.json      a STAC 1.0.0 Item with the two full rasters as assets (relative hrefs)
 *   mosaic.json    a MosaicJSON 0.0.3 document over the crops (absolute URLs under `baseUrl`)
 *   catalog/       the crops as STAC items in stac-geoparquet, and their collection `demo` (./catalog.ts)
 *
 * Rasters are synthesised in memory (./terrain.ts), put in MEM datasets and written with GDAL's COG
 * driver, so they are genuine COGs (tiled, compressed, internal overviews, header first).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { gdal, type Dataset } from '../gdal/gdal.js';
import { getTms, WEB_MERCATOR_QUAD } from '../tms/registry.js';
import { bboxesIntersect, type BBox } from '../tms/grid.js';
import { hillshade, shadedRelief, statistics, synthesizeDem, type Stats } from './terrain.js';
import { writeDemoCatalog, type DemoCatalogItem } from './catalog.js';

/** Bump when anything below changes the outputs, so existing demo folders get regenerated. */
const DEMO_VERSION = '2';
const DEFAULT_BASE_URL = 'http://127.0.0.1:8000/demo/';

/** The scene's grid: UTM 32N, 30 m pixels, north-west corner near 46.59°N 7.96°E (Bernese Alps). */
const DEMO_GRID = {
  epsg: 32632,
  originX: 420_000,
  originY: 5_160_000,
  pixelSize: 30,
  width: 1024,
  height: 1024,
} as const;
const DEM_NODATA = -9999;
const RGB_NODATA = 0;
const SEED = 0x7e55e7a;
const DATETIME = '2024-06-21T10:00:00Z'; // fixed, so item.json is byte-for-byte reproducible

/** The mosaic's sources: 600×600 windows at the four corners of the scene, overlapping in the middle. */
const CROP_SIZE = 600;
const CROP_OFFSETS: ReadonlyArray<readonly [number, number]> = [
  [0, 0],
  [DEMO_GRID.width - CROP_SIZE, 0],
  [0, DEMO_GRID.height - CROP_SIZE],
  [DEMO_GRID.width - CROP_SIZE, DEMO_GRID.height - CROP_SIZE],
];

const COG_MEDIA_TYPE = 'image/tiff; application=geotiff; profile=cloud-optimized';
const RASTER_EXTENSION = 'https://stac-extensions.github.io/raster/v1.1.0/schema.json';
const STAMP = '.version';
const TILE_SIZE = 256;

type GeoTransform = [number, number, number, number, number, number];

interface Footprint {
  /** Closed, counter-clockwise lon/lat ring (RFC 7946), edges densified. */
  ring: Array<[number, number]>;
  /** [west, south, east, north] of the ring. */
  bbox: BBox;
}

function demoFileNames(): string[] {
  return ['dem.tif', 'rgb.tif', ...CROP_OFFSETS.map((_, i) => `mosaic-${i}.tif`), 'item.json', 'mosaic.json', 'catalog/items.parquet', 'catalog/demo.json'];
}

/**
 * Writes the demo data into `outDir` (created if needed) and returns the paths of its files.
 * When every file is there and the stamp matches this version and base URL, nothing is rewritten
 * and the existing paths are returned, so `make run` does not pay for generation twice.
 */
export async function makeDemoData(outDir: string, opts: { baseUrl?: string } = {}): Promise<string[]> {
  const baseUrl = opts.baseUrl ?? DEFAULT_BASE_URL;
  const files = demoFileNames().map((name) => path.join(outDir, name));
  const stamp = `${DEMO_VERSION} ${baseUrl}\n`;
  if (await isUpToDate(outDir, files, stamp)) return files;

  await fs.mkdir(outDir, { recursive: true });
  // Drop the stamp first: if generation dies half-way, the next run must not trust the folder.
  await fs.rm(path.join(outDir, STAMP), { force: true });

  const geoTransform = gridGeoTransform();
  const demStats = await writeRasters(outDir, geoTransform);
  const footprint = footprintWgs84(geoTransform, DEMO_GRID.width, DEMO_GRID.height);
  await writeJson(path.join(outDir, 'item.json'), stacItem(footprint, demStats));
  await writeJson(path.join(outDir, 'mosaic.json'), mosaicJson(geoTransform, baseUrl));
  await writeDemoCatalog(outDir, catalogItems(geoTransform, baseUrl));

  await fs.writeFile(path.join(outDir, STAMP), stamp);
  return files;
}

/** Synthesises the scene and writes dem.tif, rgb.tif and the mosaic crops; returns the DEM statistics. */
async function writeRasters(outDir: string, geoTransform: GeoTransform): Promise<Stats> {
  const dem = synthesizeDem(DEMO_GRID.width, DEMO_GRID.height, SEED, DEM_NODATA);
  const demStats = statistics(dem.elevation, DEM_NODATA);
  const rgbPlanes = shadedRelief(dem, hillshade(dem, DEMO_GRID.pixelSize));

  const demMem = await memDataset('Float32', [dem.elevation], geoTransform, DEM_NODATA);
  try {
    setStatisticsMetadata(demMem, demStats);
    await writeCog(demMem, path.join(outDir, 'dem.tif'), ['-co', 'PREDICTOR=3']);
  } finally {
    demMem.close();
  }

  const rgbMem = await memDataset('Byte', rgbPlanes, geoTransform, RGB_NODATA);
  try {
    setRgbInterpretation(rgbMem);
    await writeCog(rgbMem, path.join(outDir, 'rgb.tif'), ['-co', 'PREDICTOR=2']);
    for (const [i, [xOff, yOff]] of CROP_OFFSETS.entries()) {
      const window = ['-srcwin', String(xOff), String(yOff), String(CROP_SIZE), String(CROP_SIZE)];
      await writeCog(rgbMem, path.join(outDir, `mosaic-${i}.tif`), [...window, '-co', 'PREDICTOR=2']);
    }
  } finally {
    rgbMem.close();
  }
  return demStats;
}

async function isUpToDate(outDir: string, files: readonly string[], stamp: string): Promise<boolean> {
  try {
    if ((await fs.readFile(path.join(outDir, STAMP), 'utf8')) !== stamp) return false;
    await Promise.all(files.map((file) => fs.access(file)));
    return true;
  } catch {
    return false;
  }
}

function gridGeoTransform(): GeoTransform {
  const { originX, originY, pixelSize } = DEMO_GRID;
  return [originX, pixelSize, 0, originY, 0, -pixelSize];
}

type PixelPlane = Float32Array | Uint8Array;

/** An in-memory dataset on the demo grid holding the given band planes. */
async function memDataset(dataType: 'Float32' | 'Byte', planes: readonly PixelPlane[], geoTransform: GeoTransform, nodata: number): Promise<Dataset> {
  const { width, height, epsg } = DEMO_GRID;
  const ds = await gdal.openAsync('demo', 'w', 'MEM', width, height, planes.length, dataType);
  ds.geoTransform = geoTransform;
  ds.srs = gdal.SpatialReference.fromEPSG(epsg);
  for (const [i, plane] of planes.entries()) {
    const band = ds.bands.get(i + 1);
    band.noDataValue = nodata;
    await band.pixels.writeAsync(0, 0, width, height, plane);
  }
  return ds;
}

/**
 * GDAL's own statistics keys: readers (gdalinfo, rasterio, tessera) take them as the dataset
 * statistics without scanning the pixels. The COG driver carries them into the GDAL_METADATA tag.
 */
function setStatisticsMetadata(ds: Dataset, stats: Stats): void {
  ds.bands.get(1).setMetadata({
    STATISTICS_MINIMUM: String(stats.minimum),
    STATISTICS_MAXIMUM: String(stats.maximum),
    STATISTICS_MEAN: String(stats.mean),
    STATISTICS_STDDEV: String(stats.stddev),
    STATISTICS_VALID_PERCENT: String(stats.validPercent),
  });
}

function setRgbInterpretation(ds: Dataset): void {
  ds.bands.get(1).colorInterpretation = gdal.GCI_RedBand;
  ds.bands.get(2).colorInterpretation = gdal.GCI_GreenBand;
  ds.bands.get(3).colorInterpretation = gdal.GCI_BlueBand;
}

/**
 * Writes `src` as a COG: 256 px blocks as the tile server reads them, DEFLATE, and overviews
 * (the driver builds them down to one block) averaged, because nearest-neighbour overviews of
 * shaded relief alias badly. The output is closed before returning so it is complete on disk.
 */
async function writeCog(src: Dataset, file: string, extra: readonly string[]): Promise<void> {
  await fs.rm(file, { force: true });
  const out = await gdal.translateAsync(file, src, [
    '-of',
    'COG',
    '-co',
    `BLOCKSIZE=${TILE_SIZE}`,
    '-co',
    'COMPRESS=DEFLATE',
    '-co',
    'RESAMPLING=AVERAGE',
    '-co',
    'NUM_THREADS=ALL_CPUS',
    ...extra,
  ]);
  out.close();
}

/** Pixel/line to georeferenced coordinates through an affine geotransform. */
function applyGeoTransform(gt: GeoTransform, px: number, py: number): [number, number] {
  return [gt[0] + px * gt[1] + py * gt[2], gt[3] + px * gt[4] + py * gt[5]];
}

/**
 * The raster's outline in WGS84. Edges are densified because straight lines in UTM are slightly
 * curved in lon/lat; a bbox of the four corners alone could miss a sliver of the raster.
 */
function footprintWgs84(gt: GeoTransform, width: number, height: number, steps = 16): Footprint {
  const toWgs84 = new gdal.CoordinateTransformation(gdal.SpatialReference.fromEPSG(DEMO_GRID.epsg), gdal.SpatialReference.fromEPSG(4326));
  // Counter-clockwise in map view: down the west edge, east along the south, up the east edge.
  const corners: Array<[number, number]> = [
    [0, 0],
    [0, height],
    [width, height],
    [width, 0],
  ];
  const ring: Array<[number, number]> = [];
  for (let k = 0; k < corners.length; k++) {
    const [x0, y0] = corners[k]!;
    const [x1, y1] = corners[(k + 1) % corners.length]!;
    for (let s = 0; s < steps; s++) {
      const t = s / steps;
      const [x, y] = applyGeoTransform(gt, x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
      const p = toWgs84.transformPoint(x, y);
      ring.push([p.x, p.y]);
    }
  }
  ring.push(ring[0]!);
  return { ring, bbox: ringBbox(ring) };
}

function ringBbox(ring: ReadonlyArray<readonly [number, number]>): BBox {
  const xs = ring.map((p) => p[0]);
  const ys = ring.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

/** Rounds a bbox outwards to 1e-7° (about 1 cm) so the written bbox still contains the raster. */
function roundBboxOut(b: BBox): BBox {
  const q = 1e7;
  return [Math.floor(b[0] * q) / q, Math.floor(b[1] * q) / q, Math.ceil(b[2] * q) / q, Math.ceil(b[3] * q) / q];
}

function round7(value: number): number {
  return Math.round(value * 1e7) / 1e7;
}

function stacItem(footprint: Footprint, demStats: Stats): object {
  return {
    type: 'Feature',
    stac_version: '1.0.0',
    stac_extensions: [RASTER_EXTENSION],
    id: 'tessera-demo',
    geometry: {
      type: 'Polygon',
      coordinates: [footprint.ring.map(([lon, lat]) => [round7(lon), round7(lat)])],
    },
    bbox: roundBboxOut(footprint.bbox),
    properties: {
      datetime: DATETIME,
      title: 'tessera demo scene',
      description: 'Synthetic alpine terrain generated by `tessera demo` (not real data).',
    },
    links: [],
    assets: {
      dem: {
        href: './dem.tif',
        type: COG_MEDIA_TYPE,
        title: 'Synthetic elevation model (metres)',
        roles: ['data'],
        'raster:bands': [
          {
            data_type: 'float32',
            nodata: DEM_NODATA,
            unit: 'm',
            statistics: { minimum: demStats.minimum, maximum: demStats.maximum },
          },
        ],
      },
      rgb: {
        href: './rgb.tif',
        type: COG_MEDIA_TYPE,
        title: 'Shaded-relief RGB rendering of the elevation model',
        roles: ['data'],
      },
    },
  };
}

/** The Bing quadkey of a tile: one base-4 digit per zoom level, most significant first. */
function quadkey(x: number, y: number, z: number): string {
  let key = '';
  for (let level = z; level > 0; level--) {
    const mask = 1 << (level - 1);
    key += String((x & mask ? 1 : 0) + (y & mask ? 2 : 0));
  }
  return key;
}

/** rio-cogeo's count of overview levels: halve while the smaller side stays above `minSize`. */
function maximumOverviewLevel(width: number, height: number, minSize: number): number {
  let level = 0;
  let factor = 1;
  while (Math.min(Math.floor(width / factor), Math.floor(height / factor)) > minSize) {
    factor *= 2;
    level++;
  }
  return level;
}

/**
 * Zoom range of a dataset in WebMercatorQuad by rio-tiler's rule (which TiTiler's /info and
 * cogeo-mosaic use): maxzoom matches the native resolution, minzoom the coarsest overview that is
 * still at least a tile across.
 */
function webMercatorZooms(widthPx: number, heightPx: number, mercatorBbox: BBox): [number, number] {
  const tms = getTms(WEB_MERCATOR_QUAD);
  if (!tms) throw new Error('WebMercatorQuad is not registered');
  const resolution = Math.max((mercatorBbox[2] - mercatorBbox[0]) / widthPx, (mercatorBbox[3] - mercatorBbox[1]) / heightPx);
  const level = maximumOverviewLevel(widthPx, heightPx, TILE_SIZE);
  return [tms.zoomForResolution(resolution * 2 ** level), tms.zoomForResolution(resolution)];
}

function transformBbox(ct: gdal.CoordinateTransformation, b: BBox): BBox {
  const lowerLeft = ct.transformPoint(b[0], b[1]);
  const upperRight = ct.transformPoint(b[2], b[3]);
  return [lowerLeft.x, lowerLeft.y, upperRight.x, upperRight.y];
}

/** The crops as the demo collection's items, a day apart (the last on top). */
function catalogItems(gridTransform: GeoTransform, baseUrl: string): DemoCatalogItem[] {
  return CROP_OFFSETS.map(([xOff, yOff], i) => {
    const [x, y] = applyGeoTransform(gridTransform, xOff, yOff);
    const gt: GeoTransform = [x, gridTransform[1], 0, y, 0, gridTransform[5]];
    const { ring, bbox } = footprintWgs84(gt, CROP_SIZE, CROP_SIZE);
    return { id: `crop-${i}`, href: `${baseUrl}mosaic-${i}.tif`, ring, bbox: [bbox[0], bbox[1], bbox[2], bbox[3]], datetime: `2024-06-${21 + i}T10:00:00Z` };
  });
}

function mosaicJson(gridTransform: GeoTransform, baseUrl: string): object {
  const tms = getTms(WEB_MERCATOR_QUAD);
  if (!tms) throw new Error('WebMercatorQuad is not registered');
  const wgs84 = gdal.SpatialReference.fromEPSG(4326);
  const mercator = gdal.SpatialReference.fromEPSG(3857);
  // Lon/lat boxes map to Web Mercator boxes corner-to-corner (the projection is separable and
  // monotonic), so converting the two corners is exact in both directions.
  const toMercator = new gdal.CoordinateTransformation(wgs84, mercator);
  const toWgs84 = new gdal.CoordinateTransformation(mercator, wgs84);

  const assets = CROP_OFFSETS.map(([xOff, yOff], i) => {
    const [x, y] = applyGeoTransform(gridTransform, xOff, yOff);
    const gt: GeoTransform = [x, gridTransform[1], 0, y, 0, gridTransform[5]];
    return { url: `${baseUrl}mosaic-${i}.tif`, bbox: footprintWgs84(gt, CROP_SIZE, CROP_SIZE).bbox };
  });
  const bounds: BBox = [
    Math.min(...assets.map((a) => a.bbox[0])),
    Math.min(...assets.map((a) => a.bbox[1])),
    Math.max(...assets.map((a) => a.bbox[2])),
    Math.max(...assets.map((a) => a.bbox[3])),
  ];

  const zooms = assets.map((a) => webMercatorZooms(CROP_SIZE, CROP_SIZE, transformBbox(toMercator, a.bbox)));
  const minzoom = Math.min(...zooms.map((z) => z[0]));
  const maxzoom = Math.max(...zooms.map((z) => z[1]));
  const quadkeyZoom = minzoom;

  const [mx0, my0, mx1, my1] = transformBbox(toMercator, bounds);
  const first = tms.tileAt(mx0, my1, quadkeyZoom);
  const last = tms.tileAt(mx1, my0, quadkeyZoom);
  const tiles: Record<string, string[]> = {};
  for (let ty = first.y; ty <= last.y; ty++) {
    for (let tx = first.x; tx <= last.x; tx++) {
      const tileBbox = transformBbox(toWgs84, tms.xyBounds({ x: tx, y: ty, z: quadkeyZoom }));
      const urls = assets.filter((a) => bboxesIntersect(a.bbox, tileBbox)).map((a) => a.url);
      if (urls.length) tiles[quadkey(tx, ty, quadkeyZoom)] = urls;
    }
  }

  return {
    mosaicjson: '0.0.3',
    name: 'tessera-demo',
    description: 'Four overlapping crops of the tessera demo scene',
    version: '1.0.0',
    attribution: 'Synthetic data generated by tessera',
    minzoom,
    maxzoom,
    quadkey_zoom: quadkeyZoom,
    bounds: roundBboxOut(bounds),
    center: [round7((bounds[0] + bounds[2]) / 2), round7((bounds[1] + bounds[3]) / 2), minzoom],
    tiles,
  };
}

async function writeJson(file: string, value: object): Promise<void> {
  await fs.writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
}
