/**
 * A raster source: its metadata (read once per open handle set and cached), its zoom range in a
 * TileMatrixSet, its geographic bounds, and rio-tiler's `info` document.
 */
import { stat } from 'node:fs/promises';
import { sharedLoad, type PromiseTable } from '../concurrency.js';
import { LRUCache } from 'lru-cache';
import type { Dataset, SpatialReference } from '../gdal/gdal.js';
import { blockCell, type Affinity, type BlockedImage, type DatasetPool } from './pool.js';
import { gdalOpenError } from './errors.js';
import { srsFrom, transformBounds, WGS84, sameCrs } from '../gdal/crs.js';
import { gdal } from '../gdal/gdal.js';
import type { BBox } from '../tms/grid.js';
import type { TileMatrixSet } from '../tms/grid.js';
import { gdalPath, type Location } from '../upstream/url-policy.js';
import { OpenRefused } from './open.js';
import { TesseraError } from '../errors.js';

export interface BandMeta {
  dataType: string;
  nodata: number | null;
  scale: number;
  offset: number;
  description: string;
  colorInterp: string;
  maskFlags: number;
  metadata: Record<string, string>;
}

export interface SourceMeta {
  driver: string;
  width: number;
  height: number;
  count: number;
  geoTransform: number[];
  /** WKT of the dataset CRS. */
  crs: string;
  /** Native bounds [minx, miny, maxx, maxy] in the dataset CRS. */
  bounds: BBox;
  bands: BandMeta[];
  /** Overview decimation factors of band 1, as rasterio reports them. */
  overviews: number[];
  /** Overview sizes of band 1 [width, height], finest first (GDAL's order). */
  overviewSizes: Array<[number, number]>;
  /** Block size of band 1 [x, y]. */
  blockSize: [number, number];
  /** Block size of band 1's overviews [x, y], as overviewSizes (a COG's may differ from the full resolution's). */
  overviewBlockSizes?: Array<[number, number]>;
  colormap: Record<string, [number, number, number, number]> | undefined;
  /**
   * What identifies the version of the file this metadata was read from (its upstream ETag,
   * Last-Modified and size; a local file's size and mtime); undefined when upstream sent no
   * validator. Answers made from the file are tagged by it (api/etag.ts).
   */
  version?: string | undefined;
}

export interface RasterInfo {
  bounds: BBox;
  minzoom: number;
  maxzoom: number;
  band_metadata: Array<[string, Record<string, string>]>;
  band_descriptions: Array<[string, string]>;
  dtype: string;
  nodata_type: 'Alpha' | 'Mask' | 'Internal' | 'Nodata' | 'None';
  colorinterp: string[];
  scales: number[];
  offsets: number[];
  colormap?: Record<string, [number, number, number, number]>;
  driver: string;
  count: number;
  width: number;
  height: number;
  overviews: number[];
  nodata_value?: number;
  /** The dataset's own bounds and CRS (WKT): rio-tiler 9's `Info` gives these where 0.18's gives longitude/latitude. */
  native?: { bounds: BBox; crs: string };
}

/** GDAL data type names → numpy's, which TiTiler reports. */
const NUMPY_DTYPES: Record<string, string> = {
  Byte: 'uint8',
  Int8: 'int8',
  UInt16: 'uint16',
  Int16: 'int16',
  UInt32: 'uint32',
  Int32: 'int32',
  UInt64: 'uint64',
  Int64: 'int64',
  Float32: 'float32',
  Float64: 'float64',
  CInt16: 'complex_int16',
  CInt32: 'complex_int32',
  CFloat32: 'complex64',
  CFloat64: 'complex128',
};

/**
 * rio-tiler's `_minzoom`/`_maxzoom` of a grid already in the TMS's CRS: the maxzoom matches its
 * resolution, the minzoom that of its smallest theoretical overview (halved until a side is at
 * most one tile).
 */
export function zoomsOfGrid(tms: TileMatrixSet, geoTransform: readonly number[], width: number, height: number): { minzoom: number; maxzoom: number } {
  const resolution = Math.max(Math.abs(geoTransform[1]!), Math.abs(geoTransform[5]!));
  let level = 0;
  let factor = 1;
  while (Math.min(Math.floor(width / factor), Math.floor(height / factor)) > tms.tileWidth) {
    factor *= 2;
    level++;
  }
  return { minzoom: tms.zoomForResolution(resolution * 2 ** level), maxzoom: tms.zoomForResolution(resolution) };
}

export function numpyDtype(gdalType: string): string {
  return NUMPY_DTYPES[gdalType] ?? gdalType.toLowerCase();
}

/** GDAL colour interpretation names → rasterio's ColorInterp member names. */
function colorInterpName(name: string | null): string {
  if (!name) return 'undefined';
  const special: Record<string, string> = { YCbCr_Y: 'Y', YCbCr_Cb: 'Cb', YCbCr_Cr: 'Cr', Grey: 'gray' };
  return special[name] ?? name.toLowerCase();
}

const GMF_PER_DATASET = 0x02;
const GMF_ALPHA = 0x04;

/** WKT by authority code (EPSG:32633): the files of a mosaic mostly share a few CRSs. */
const wktByAuthority = new Map<string, string>();

/** The CRS as WKT: exported once per authority code, as GDAL builds the same CRS for the same code. */
function wktOf(srs: SpatialReference): string {
  const name = srs.getAuthorityName(null);
  const code = srs.getAuthorityCode(null);
  if (!name || !code) return srs.toWKT();
  const key = `${name}:${code}`;
  let wkt = wktByAuthority.get(key);
  if (wkt === undefined) {
    wkt = srs.toWKT();
    if (wktByAuthority.size < 1024) wktByAuthority.set(key, wkt);
  }
  return wkt;
}

async function readMeta(ds: Dataset): Promise<SourceMeta> {
  // GDAL reads a TIFF's overview directories when first asked about overviews (or masks): asked
  // here on the thread pool, so that the synchronous calls below find them read, and the event
  // loop never waits on the network (a thousand-asset mosaic opens spent seconds of it here).
  if (ds.bands.count() > 0) await ds.bands.get(1).overviews.countAsync();
  const size = ds.rasterSize;
  const gt = ds.geoTransform ?? [0, 1, 0, 0, 0, 1];
  // Building the CRS from the file's keys takes 1–25 ms (PROJ's database): on the thread pool too.
  const srs = await ds.srsAsync;
  const bands: BandMeta[] = [];
  let overviews: number[] = [];
  let overviewSizes: Array<[number, number]> = [];
  let overviewBlockSizes: Array<[number, number]> = [];
  let blockSize: [number, number] = [size.x, 1];
  let colormap: SourceMeta['colormap'];
  for (let i = 1; i <= ds.bands.count(); i++) {
    const band = ds.bands.get(i);
    bands.push({
      dataType: band.dataType ?? 'Byte',
      nodata: band.noDataValue,
      scale: band.scale ?? 1,
      offset: band.offset ?? 0,
      description: band.description ?? '',
      colorInterp: colorInterpName(band.colorInterpretation),
      maskFlags: band.getMaskFlags(),
      metadata: (band.getMetadata() ?? {}) as Record<string, string>,
    });
    if (i === 1) {
      overviews = band.overviews.map((ov) => Math.round(size.x / ov.size.x));
      overviewSizes = band.overviews.map((ov) => [ov.size.x, ov.size.y] as [number, number]);
      overviewBlockSizes = band.overviews.map((ov) => [ov.blockSize.x, ov.blockSize.y] as [number, number]);
      blockSize = [band.blockSize.x, band.blockSize.y];
      const table = band.colorTable;
      if (table && table.count() > 0) {
        colormap = {};
        for (let c = 0; c < table.count(); c++) {
          const e = table.get(c);
          colormap[String(c)] = [e.c1, e.c2, e.c3, e.c4];
        }
      }
    }
  }
  const [x0, dx, , y0, , dy] = gt as [number, number, number, number, number, number];
  const xs = [x0, x0 + dx * size.x];
  const ys = [y0, y0 + dy * size.y];
  return {
    driver: ds.driver.description,
    width: size.x,
    height: size.y,
    count: bands.length,
    geoTransform: gt,
    crs: srs ? wktOf(srs) : '',
    bounds: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)],
    bands,
    overviews,
    overviewSizes,
    overviewBlockSizes,
    blockSize,
    colormap,
  };
}

/** Runs a call on a handle with its upstream bytes charged to the current request; `exhausted` says whether that budget ran out. */
export interface Meter {
  run<T>(ds: Dataset, call: () => Promise<T> | T): Promise<T>;
  /** Runs a load shared by every request that waits for it under a budget of its own (Budgets.shared). */
  shared<T>(load: () => Promise<T>): Promise<T>;
  /** A shared load failed because the request that started it went away, and the current one should start it again. */
  startAgain(err: unknown): boolean;
  /** Runs work the current request carries on with after its answer, its budget open until done (Budgets.finishAfter). */
  finishAfter<T>(work: () => Promise<T>): Promise<T>;
  /** The error to answer when the current request has spent its budget; undefined while it has not. */
  exhausted(): TesseraError | undefined;
}

/** Shared state of every source: the handle pool and the metadata caches. */
export class SourceContext {
  readonly metaCache: LRUCache<string, SourceMeta>;
  /** Raster metadata served from the cache, and read from the file (for /metrics). */
  readonly metaStats = { hits: 0, misses: 0 };
  /** Metadata reads in flight, shared by concurrent requests for one source. */
  readonly metaPending = new Map<string, Promise<SourceMeta>>();
  readonly zoomCache: LRUCache<string, { minzoom: number; maxzoom: number }>;
  /** GDAL's suggested warp output per source and target CRS (rasterio's default transform). */
  readonly nativeCache: LRUCache<string, Promise<number[]>>;

  /** GDAL path of a remote raster (the upstream gateway's, or plain /vsicurl/). */
  private readonly remotePath: (url: string) => string;
  /**
   * Upstream faults seen so far by the gateway (undefined without one): a GDAL call that fails while
   * the count stays put failed on a damaged file, not on a failing server.
   */
  readonly upstreamFaults: (() => number) | undefined;
  /** Charges a call's upstream bytes to the current request (upstream/budget.ts); none: unmetered. */
  readonly meter: Meter | undefined;
  /** Why no allowed driver opened a raster (source/open.ts); one look per source at a time. */
  private readonly diagnose: (loc: Location, label: string) => Promise<TesseraError>;
  private readonly diagnosing = new Map<string, Promise<TesseraError>>();
  /**
   * Starts fetching blocks (column, row) of one image (by its size) of a source, ahead of the read
   * that needs them (the upstream gateway's `prefetch`); none: reads fetch what they read.
   */
  readonly prefetch: ((path: string, image: BlockedImage, blocks: Array<[number, number]>) => void) | undefined;
  /** Assets one read may open (a STAC item's, a mosaic's for one tile, point or bbox): TESSERA_MAX_ASSETS. */
  readonly maxAssets: number;
  /** The version of a remote file as its last open saw it (the gateway's validators); none: unknown. */
  private readonly remoteVersion: ((path: string) => Promise<string | undefined>) | undefined;

  constructor(
    readonly pool: DatasetPool,
    opts: {
      ttlMs: number;
      size: number;
      remotePath?: ((url: string) => string) | undefined;
      diagnose?: ((loc: Location, label: string) => Promise<TesseraError>) | undefined;
      upstreamFaults?: (() => number) | undefined;
      meter?: Meter | undefined;
      remoteVersion?: ((path: string) => Promise<string | undefined>) | undefined;
      prefetch?: SourceContext['prefetch'];
      maxAssets?: number | undefined;
    },
  ) {
    this.maxAssets = opts.maxAssets ?? Number.POSITIVE_INFINITY;
    this.remoteVersion = opts.remoteVersion;
    this.prefetch = opts.prefetch;
    this.upstreamFaults = opts.upstreamFaults;
    this.meter = opts.meter;
    this.remotePath = opts.remotePath ?? ((url) => gdalPath({ kind: 'http', url }));
    this.diagnose = opts.diagnose ?? (async (_loc, label) => new TesseraError('BadRequest', `${label} is not a raster tessera opens`));
    this.metaCache = new LRUCache({ max: Math.max(16, opts.size * 4), ttl: opts.ttlMs || undefined });
    this.zoomCache = new LRUCache({ max: Math.max(16, opts.size * 4), ttl: opts.ttlMs || undefined });
    this.nativeCache = new LRUCache({ max: Math.max(16, opts.size * 4), ttl: opts.ttlMs || undefined });
  }

  /**
   * The load of `key` in `table` that every request asking for it shares (concurrency.ts
   * `sharedLoad`), charged to the request that starts it and kept alive if that one's client leaves.
   */
  sharedLoad<T>(table: PromiseTable<T>, key: string, load: () => Promise<T>, keep = false): Promise<T> {
    const meter = this.meter;
    if (!meter) return sharedLoad(table, key, load, { keep });
    return sharedLoad(table, key, () => meter.shared(load), { keep, startAgain: (err) => meter.startAgain(err) });
  }

  /** A local file (tests, tools); sources named by clients come from `sourceAt`. */
  source(path: string, label: string): RasterSource {
    return new RasterSource(path, label, this, { kind: 'file', path });
  }

  /** The source at a location the URL policy allowed. */
  sourceAt(loc: Location, label: string): RasterSource {
    return new RasterSource(loc.kind === 'http' ? this.remotePath(loc.url) : loc.path, label, this, loc);
  }

  /** Drops what is kept of the file at GDAL path `path` (its metadata, zooms and derived numbers): the warm-up's, once it ends. */
  forget(path: string): void {
    this.metaCache.delete(path);
    const ofPath = (key: string): boolean => key.startsWith(`${path}\u0000`);
    for (const key of [...this.zoomCache.keys()]) if (ofPath(key)) this.zoomCache.delete(key);
    for (const key of [...this.nativeCache.keys()]) if (ofPath(key)) this.nativeCache.delete(key);
  }

  /** The version of the file behind `source`, as of now (SourceMeta.version). */
  async versionOf(source: RasterSource): Promise<string | undefined> {
    if (source.location.kind === 'file') {
      const s = await stat(source.location.path).catch(() => undefined);
      return s ? `file ${s.size} ${s.mtimeMs} ${s.ino}` : undefined;
    }
    return this.remoteVersion?.(source.path);
  }

  /** The error to answer when no allowed driver opened `source`. */
  openFailure(source: RasterSource): Promise<TesseraError> {
    return this.sharedLoad(this.diagnosing, source.path, () => this.diagnose(source.location, source.label));
  }
}

export class RasterSource {
  constructor(
    /** GDAL path (e.g. /vsicurl/https://…). */
    readonly path: string,
    /** What to call it in error messages (the URL the client gave). */
    readonly label: string,
    private readonly ctx: SourceContext,
    /** Where it is, as the URL policy allowed it. */
    readonly location: Location,
  ) {}

  /**
   * Runs `fn` with an exclusive handle; open failures become clear TesseraErrors. `affinity` names
   * the region read (see DatasetPool) so that reads of one region share a handle's block cache.
   */
  async use<T>(fn: (ds: Dataset) => Promise<T> | T, affinity?: Affinity): Promise<T> {
    const faultsBefore = this.ctx.upstreamFaults?.();
    const meter = this.ctx.meter;
    const prefetch = this.ctx.prefetch;
    const image = affinity?.image;
    // Blocks a read waits to read are fetched meanwhile (pool.ts), where something can fetch them.
    const aff = prefetch && image ? { ...affinity, cold: (blocks: number[]) => prefetch(this.path, image, blocks.map(blockCell)) } : affinity;
    try {
      return await this.ctx.pool.use(this.path, meter ? (ds) => meter.run(ds, () => fn(ds)) : fn, aff);
    } catch (err) {
      if (err instanceof Error && err.name === 'TesseraError') throw err;
      const spent = meter?.exhausted();
      if (spent) throw spent;
      // Did upstream fail during the call (gateway on), or did GDAL fail on bytes served whole?
      const upstreamFailed = faultsBefore === undefined ? undefined : this.ctx.upstreamFaults!() !== faultsBefore;
      if (err instanceof OpenRefused) {
        if (upstreamFailed)
          throw new TesseraError('UpstreamError', `${this.label} could not be opened: the upstream server failed while it was read`, { cause: err });
        throw await this.ctx.openFailure(this);
      }
      throw gdalOpenError(err, this.label, { damaged: this.location.kind === 'file' || upstreamFailed === false });
    }
  }

  async meta(): Promise<SourceMeta> {
    const cached = this.ctx.metaCache.get(this.path);
    if (cached) {
      this.ctx.metaStats.hits++;
      return cached;
    }
    this.ctx.metaStats.misses++;
    return this.ctx.sharedLoad(this.ctx.metaPending, this.path, async () => {
      const meta = await this.use((ds) => readMeta(ds));
      // After the read: the open that preceded it has seen the file's validators.
      meta.version = await this.ctx.versionOf(this);
      this.ctx.metaCache.set(this.path, meta);
      return meta;
    });
  }

  /**
   * Numbers derived from this source for a target CRS (its default warp transform, its footprint),
   * computed once per `key` (failures are not kept).
   */
  derived<T extends number[]>(key: string, compute: () => Promise<T>): Promise<T> {
    return this.ctx.sharedLoad(this.ctx.nativeCache as unknown as PromiseTable<T>, `${this.path}\u0000${key}`, compute, true);
  }

  /** Bounds in longitude/latitude (a 21-point densified transform), computed once per source; a copy each time. */
  async geographicBounds(): Promise<BBox> {
    const bounds = await this.derived<BBox>('wgs84-bounds', async () => {
      const meta = await this.meta();
      const src = srsFrom(meta.crs);
      const dst = srsFrom(WGS84);
      if (sameCrs(src, dst)) {
        const [l, b, r, t] = meta.bounds;
        return [l, Math.min(b, t), r, Math.max(b, t)];
      }
      const out = transformBounds(src, dst, meta.bounds, 21);
      return out.every(Number.isFinite) ? out : [-180, -90, 180, 90];
    });
    return [...bounds] as BBox;
  }

  /** rio-tiler's dataset min/max zoom in a TMS (resolution of the dataset and of its smallest overview). */
  async zooms(tms: TileMatrixSet): Promise<{ minzoom: number; maxzoom: number }> {
    const key = `${this.path}\u0000${tms.id}`;
    const cached = this.ctx.zoomCache.get(key);
    if (cached) return cached;
    const meta = await this.meta();
    let zooms: { minzoom: number; maxzoom: number };
    try {
      const tmsSrs = srsFrom(tms.srs);
      let affine = meta.geoTransform;
      let w = meta.width;
      let h = meta.height;
      if (!sameCrs(srsFrom(meta.crs), tmsSrs)) {
        const out = await this.use((ds) => gdal.suggestedWarpOutputAsync({ src: ds, s_srs: srsFrom(meta.crs), t_srs: tmsSrs }));
        affine = out.geoTransform;
        w = out.rasterSize.x;
        h = out.rasterSize.y;
      }
      zooms = zoomsOfGrid(tms, affine, w, h);
    } catch (err) {
      if (err instanceof Error && err.name === 'TesseraError') throw err;
      zooms = { minzoom: tms.minzoom, maxzoom: tms.maxzoom };
    }
    this.ctx.zoomCache.set(key, zooms);
    return zooms;
  }

  /** rio-tiler `Reader.info()`; `nodata` overrides the file's nodata as the query parameter does. */
  async info(tms: TileMatrixSet, nodata?: number): Promise<RasterInfo> {
    const [meta, bounds, zooms] = await Promise.all([this.meta(), this.geographicBounds(), this.zooms(tms)]);
    const fileNodata = meta.bands[0]?.nodata ?? null;
    const effectiveNodata = nodata !== undefined ? nodata : fileNodata;
    const hasAlpha = meta.bands.some((b) => (b.maskFlags & GMF_ALPHA) !== 0 || b.colorInterp === 'alpha');
    const hasMask = meta.bands.some((b) => (b.maskFlags & GMF_PER_DATASET) !== 0 && (b.maskFlags & GMF_ALPHA) === 0);
    const nodataType: RasterInfo['nodata_type'] = effectiveNodata !== null ? 'Nodata' : hasAlpha ? 'Alpha' : hasMask ? 'Mask' : 'None';
    const names = meta.bands.map((_, i) => `b${i + 1}`);
    const info: RasterInfo = {
      bounds,
      minzoom: zooms.minzoom,
      maxzoom: zooms.maxzoom,
      band_metadata: meta.bands.map((b, i) => [names[i]!, b.metadata]),
      band_descriptions: meta.bands.map((b, i) => [names[i]!, b.description]),
      dtype: numpyDtype(meta.bands[0]?.dataType ?? 'Byte'),
      nodata_type: nodataType,
      colorinterp: meta.bands.map((b) => b.colorInterp),
      scales: meta.bands.map((b) => b.scale),
      offsets: meta.bands.map((b) => b.offset),
      driver: meta.driver,
      count: meta.count,
      width: meta.width,
      height: meta.height,
      overviews: meta.overviews,
      native: { bounds: meta.bounds, crs: meta.crs },
    };
    if (meta.colormap) info.colormap = meta.colormap;
    if (nodataType === 'Nodata') info.nodata_value = effectiveNodata!;
    return info;
  }
}
