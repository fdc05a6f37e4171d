/**
 * Reading a layer: one or more raster sources (a COG alone; the assets of a STAC item), the bands
 * asked of each and an expression over them, as rio-tiler's `Reader` and `MultiBaseReader` do.
 * Every verb (tile, part, preview, feature, point) plans each source's read first, so that the
 * limits hold before any pixel is read, then reads the sources in parallel and stacks them in
 * order with TiTiler's band names (`b1` for a COG, `asset_b1` for an item); an expression is
 * evaluated over the stack, here or, deferred, in a render thread.
 *
 * Two things a mosaic's compositor asks of its assets' tiles (readers/reader.ts) are done here:
 * a source-pixel limit shared by the tile's assets, and, below the mosaic's minzoom, a read of only
 * the block of the tile the data covers.
 */
import { type RasterReads, applyCutline, coverageArray, overviewFactor, type ReadPlan, type ValueOptions, type PartOptions } from '../source/reader.js';
import type { SourceMeta } from '../source/dataset.js';
import { nonAlphaIndexes } from '../source/read.js';
import { TransformMemo, WGS84 } from '../gdal/crs.js';
import type { gdal } from '../gdal/gdal.js';
import { promote, stackImages } from '../image/stack.js';
import { allocate, type DType, type ImageData } from '../image/image-data.js';
import { applyExpression, evaluateExpression, type Expression } from '../image/expression.js';
import { TesseraError, invalidBandIndex } from '../errors.js';
import { checkOutputValues, checkSourcePixels } from '../source/limits.js';
import { mapLimited } from '../concurrency.js';
import type { BandStatistics } from '../image/statistics.js';
import type { ColorMap } from '../image/colormap.js';
import { checkTile, type BBox, type TileMatrixSet } from '../tms/grid.js';
import { tileTouches } from '../source/geometry.js';
import { estimateImageBytes, sampleBytes } from '../image/whole-image-gate.js';
import type { PreviewSize, ReadLimits, ReadOptions, Reader, ReaderImage, ReaderPoint, TileReadOptions, Zooms } from './reader.js';

export type { ReadLimits } from './reader.js';

/** One source of a layer: a COG, or one asset of an item. */
export interface SourceRead {
  /** The asset's name ('' for a COG read alone). */
  name: string;
  href: string;
  raster: RasterReads;
  /** Bands to read (1-based); all but alpha when absent. */
  indexes: number[] | undefined;
  /** An expression over this source's own `b1 …`, applied before stacking (TiTiler 2.x's per-asset `expression`). */
  expression?: Expression | undefined;
  /** Per-band (min, max) known from the document (STAC `raster:bands`), for automatic rescaling. */
  statistics?: Array<[number, number]> | undefined;
  /** How messages name a raster read alone ('the raster' when absent; a mosaic names its asset). */
  label?: string;
}

/**
 * How the stack's bands are named: `bands` as the raster names them (`b1` …: a COG), `assets`
 * prefixed with the asset (`visual_b1`), `asset-as-band` one band per asset named after it,
 * `positional` `b1 … bn` numbered across the assets in order (rio-tiler 9's `MultiBaseReader`, TiTiler 2.x).
 */
export type BandNaming = 'bands' | 'assets' | 'asset-as-band' | 'positional';

/** `b1 … bn` for a stack of `names.length` bands (BandNaming `positional`). */
function positionalNames(names: readonly string[]): string[] {
  return names.map((_, i) => `b${i + 1}`);
}

/**
 * rio-tiler 9's descriptions of an expression's outputs: each block's text with every band it names
 * (`b1`, `bA` …: rio-tiler's `\bb[0-9A-Z]+\b`) replaced by that band's description.
 */
function describeBlocks(expr: Expression, names: readonly string[], descriptions: readonly string[]): string[] {
  const byName = new Map(names.map((n, i) => [n, descriptions[i] ?? n]));
  return expr.blocks.map((b) => b.name.replace(/\bb[0-9A-Z]+\b/g, (token) => byName.get(token) ?? token));
}

/**
 * rio-tiler 9's descriptions of one raster's read: each band's own description (else `b{i}`), or
 * the blocks of the expression over it.
 */
export function readDescriptions(meta: SourceMeta, indexes: readonly number[] | undefined, expression: Expression | undefined): string[] {
  const own = (i: number): string => meta.bands[i - 1]?.description || `b${i}`;
  if (!expression) return (indexes ?? nonAlphaIndexes(meta)).map(own);
  const names = meta.bands.map((_, k) => `b${k + 1}`);
  return describeBlocks(
    expression,
    names,
    names.map((_, k) => own(k + 1)),
  );
}

/** What to read: the sources (in order) and the expression, checked against the band names. */
export class LayerPlan {
  constructor(
    readonly reads: SourceRead[],
    readonly expression: Expression | undefined,
    readonly naming: BandNaming,
    /** `asset_as_band` with positional names (a 2.x request): each band is described by its asset's name. */
    private readonly assetAsBand = false,
  ) {}

  /** A layer whose expression has been checked against its band names (400 for an unknown name). */
  static async checked(reads: SourceRead[], expression: Expression | undefined, naming: BandNaming, assetAsBand = false): Promise<LayerPlan> {
    const plan = new LayerPlan(reads, expression, naming, assetAsBand);
    if (expression) expression.checkVariables(await plan.bandNames());
    return plan;
  }

  private invalidBand(r: SourceRead, i: number, count: number): TesseraError {
    const what = this.naming === 'bands' ? (r.label ?? 'the raster') : `asset '${r.name}'`;
    return invalidBandIndex(i, count, what);
  }

  private multiband(r: SourceRead): TesseraError {
    return new TesseraError('BadRequest', `Can't use asset_as_band for multibands asset '${r.name}'`);
  }

  /** Names of `bands` (the raster's own: b1 …) of source `r`, as the stack carries them. */
  namesOf(r: SourceRead, bands: string[]): string[] {
    if (this.naming === 'bands') return bands;
    if (this.naming === 'assets' || this.naming === 'positional') return bands.map((n) => `${r.name}_${n}`);
    if (bands.length > 1) throw this.multiband(r);
    return [r.name];
  }

  /** Band names the stack will carry, from each source's metadata (cached, cheap). */
  async bandNames(): Promise<string[]> {
    const lists = await Promise.all(
      this.reads.map(async (r) => {
        const meta = await r.raster.meta();
        const indexes = r.indexes ?? nonAlphaIndexes(meta);
        for (const i of indexes) if (i < 1 || i > meta.count) throw this.invalidBand(r, i, meta.count);
        return this.namesOf(r, r.expression ? r.expression.blocks.map((b) => b.name) : indexes.map((i) => `b${i}`));
      }),
    );
    return this.naming === 'positional' ? positionalNames(lists.flat()) : lists.flat();
  }

  /**
   * What TiTiler 2.x (rio-tiler 9) describes the layer's bands with, after its expression: a band's
   * description in the file, else `b{index}`; an asset's prefixed `{asset}_` (its name alone with
   * asset_as_band); an expression's outputs its blocks with each band replaced by its description.
   */
  async bandDescriptions(): Promise<string[]> {
    const lists = await Promise.all(
      this.reads.map(async (r) => {
        const descriptions = readDescriptions(await r.raster.meta(), r.indexes, r.expression);
        if (this.naming === 'bands') return descriptions;
        if (this.naming === 'asset-as-band' || this.assetAsBand) return descriptions.map(() => r.name);
        return descriptions.map((d) => `${r.name}_${d}`);
      }),
    );
    const stack = lists.flat();
    return this.expression ? describeBlocks(this.expression, await this.bandNames(), stack) : stack;
  }

  /**
   * Checks every asset's plan against the limits, before reading (its source pixels alone, or
   * added to a budget shared with other reads), then waits in the limits' whole-image gate for a
   * slot and the bytes the reads will hold.
   */
  async checkLimits(plans: ReadPlan[], limits: ReadLimits): Promise<void> {
    const bands = (await this.bandNames()).length;
    const first = plans[0];
    if (first) {
      const out = Math.max(...plans.map((p) => p.width)) * Math.max(...plans.map((p) => p.height)) * bands;
      checkOutputValues(out, limits, `${first.width}x${first.height} pixels × ${bands} band(s)`);
    }
    const budget = limits.sourcePixelBudget;
    if (budget) {
      const costs = await Promise.all(this.reads.map(async (r, k) => (plans[k] ? readCost(await r.raster.meta(), plans[k]) : 0)));
      budget.used += costs.reduce((a, b) => a + b, 0);
      checkSourcePixels(budget.used, limits, budget.what, budget.hint);
    } else {
      checkSourcePixels(
        plans.reduce((s, p) => s + p.sourcePixels, 0),
        limits,
        'it',
      );
    }
    if (limits.gate) await limits.gate.reserve(await this.heldBytes(plans, limits.statistics));
  }

  /** Bytes reading `plans` (one per asset) and making an answer of them holds at its peak, estimated. */
  async heldBytes(plans: ReadPlan[], statistics = false): Promise<number> {
    const perAsset = await Promise.all(
      this.reads.map(async (r, k) => {
        const plan = plans[k];
        if (!plan || plan.empty) return 0;
        const meta = await r.raster.meta();
        const bands = r.indexes?.length ?? nonAlphaIndexes(meta).length;
        return estimateImageBytes(plan.width * plan.height, bands, sampleBytes(meta.bands[0]?.dataType), statistics);
      }),
    );
    return perAsset.reduce((a, b) => a + b, 0);
  }

  /**
   * Reads every asset (in parallel) with its plan, then stacks them and applies the expression —
   * unless `withExpression` is false: the caller then hands the expression to the renderer
   * (RenderSpec.expression), which evaluates it in a render thread.
   */
  async read(plans: ReadPlan[], opts: ValueOptions, withExpression = true): Promise<ImageData> {
    // Assets of one item mostly share a CRS and warp onto the same grid: their transformations repeat.
    const shared = this.reads.length > 1 && !opts.transformMemo ? { ...opts, transformMemo: new TransformMemo() } : opts;
    const images = await Promise.all(
      this.reads.map(async (r, k) => {
        const img = await r.raster.read(plans[k]!, { ...shared, ...(r.indexes ? { indexes: r.indexes } : {}) });
        return this.label(r, img);
      }),
    );
    const stacked = stackImages(images);
    if (this.naming === 'positional') stacked.bandNames = positionalNames(stacked.bandNames);
    return withExpression ? this.finish(stacked) : stacked;
  }

  private label(r: SourceRead, img: ImageData): ImageData {
    const stats = r.statistics;
    if (!img.datasetStatistics && stats) {
      const indexes = r.indexes ?? img.bandNames.map((n) => Number(n.slice(1)));
      if (Math.max(Math.max(...indexes), indexes.length) <= stats.length) img.datasetStatistics = indexes.map((i) => stats[i - 1]!);
    }
    if (r.expression) img = applyExpression(img, r.expression);
    img.bandNames = this.namesOf(r, img.bandNames);
    img.assets = [r.href];
    return img;
  }

  /** rio-tiler `apply_expression` over the stacked assets, if the layer has an expression. */
  finish(img: ImageData): ImageData {
    if (!this.expression) return img;
    const out = applyExpression(img, this.expression);
    // rio-tiler 9 numbers the expression's outputs too (its text becomes their description).
    if (this.naming === 'positional') out.bandNames = positionalNames(out.bandNames);
    return out;
  }

  /**
   * Whether a caller may evaluate the expression elsewhere (a render thread): not for positional
   * names, whose outputs are renamed `b1 …` here, where statistics and points take their keys from.
   */
  defers(opts: ReadOptions): boolean {
    return opts.deferExpression === true && this.naming !== 'positional';
  }

  /**
   * Whether TiTiler 2.x numbers the outputs of this layer's expression `b1 … bn`: a COG's, and a 2.x
   * read of an item's; an expression over 0.18's `{asset}_b{i}` keeps 0.18's names (its blocks).
   */
  numbersOutputs(): boolean {
    return this.expression !== undefined && (this.naming === 'bands' || this.naming === 'positional');
  }

  rasters(): RasterReads[] {
    return this.reads.map((r) => r.raster);
  }
}

/**
 * Source pixels one read costs against a shared budget: the plan's estimate, but never more than
 * the whole raster at the overview GDAL picks — a low-zoom tile's grid spans far more than a small
 * asset, and only the asset's own pixels are read.
 */
function readCost(meta: SourceMeta, plan: ReadPlan): number {
  const t = plan.target;
  const decimation =
    t.kind === 'warp'
      ? Math.min(t.grid.width / t.width, t.grid.height / t.height)
      : Math.min(Math.abs(t.window.width) / t.width, Math.abs(t.window.height) / t.height);
  const factor = overviewFactor(meta, decimation);
  return Math.min(plan.sourcePixels, Math.ceil((meta.width * meta.height) / (factor * factor)));
}

/** The block of a tile's pixel grid a layer is read for, and its bounds in the grid's CRS. */
interface TileWindow {
  col: number;
  row: number;
  width: number;
  height: number;
  bounds: BBox;
}

/**
 * The tile pixels the rasters' footprints touch, with a pixel of margin; undefined where that is
 * most of the tile (or a footprint cannot be expressed in the grid's CRS). Outside it a whole-tile
 * read gives only masked pixels, so reading this window alone gives the same tile, but for where
 * the warper's approximate transformer, run over the window's rows instead of the tile's, picks
 * another source pixel (within its error of an eighth of a pixel: 0.6–2% of an asset's pixels on
 * the fixtures, test/mosaic-low-zoom.test.ts). Asked for below a mosaic's minzoom only, where a
 * tile needs tens to hundreds of assets and warping each onto the whole tile cost most of its
 * time; at minzoom and above tiles stay pixel for pixel as rio-tiler makes them.
 */
async function coveredWindow(
  rasters: RasterReads[],
  tms: TileMatrixSet,
  tile: { x: number; y: number; z: number },
  size: number,
): Promise<TileWindow | undefined> {
  const footprints = await Promise.all(rasters.map((r) => r.footprintIn(tms.srs)));
  if (footprints.length === 0 || !footprints.every((f) => f.every(Number.isFinite))) return undefined;
  const fl = Math.min(...footprints.map((f) => f[0]));
  const fb = Math.min(...footprints.map((f) => f[1]));
  const fr = Math.max(...footprints.map((f) => f[2]));
  const ft = Math.max(...footprints.map((f) => f[3]));
  const [l, b, r, t] = tms.xyBounds(tile);
  const px = (r - l) / size;
  const py = (t - b) / size;
  const col0 = Math.max(0, Math.floor((fl - l) / px) - 1);
  const col1 = Math.min(size, Math.ceil((fr - l) / px) + 1);
  const row0 = Math.max(0, Math.floor((t - ft) / py) - 1);
  const row1 = Math.min(size, Math.ceil((t - fb) / py) + 1);
  if (col1 <= col0 || row1 <= row0 || (col1 - col0) * (row1 - row0) * 2 > size * size) return undefined;
  return { col: col0, row: row0, width: col1 - col0, height: row1 - row0, bounds: [l + col0 * px, t - row1 * py, l + col1 * px, t - row0 * py] };
}

/** What a layer reader knows of its dataset beside the layer. */
export interface LayerDataset {
  /** WGS84 bounds. */
  bounds: BBox;
  zooms(tms: TileMatrixSet): Promise<Zooms>;
  /** An item's own bounds check before its assets' (rio-tiler's STAC `tile_exists`); none for a COG. */
  checkItemBounds: boolean;
  /** The version of the document naming the sources (a STAC item's); none for a COG. */
  version?: string;
  /**
   * Tiles may be read for the block the data covers (TileReadOptions.coveredPart): a COG's. A STAC
   * item's are read whole, as they were before mosaics of items read through this contract (the
   * window was measured on COGs, test/mosaic-low-zoom.test.ts).
   */
  coveredPart: boolean;
  /** The dataset's own colormap, handed with every image (ReaderImage.colormap): a paletted COG's. */
  colormap?: ColorMap;
}

/** The image verbs over a layer: the COG and STAC item readers are this with their own layer and dataset. */
export class LayerReader implements Reader {
  constructor(
    readonly plan: LayerPlan,
    private readonly dataset: LayerDataset,
  ) {}

  get bounds(): BBox {
    return this.dataset.bounds;
  }

  zooms(tms: TileMatrixSet): Promise<Zooms> {
    return this.dataset.zooms(tms);
  }

  /** The document's version and those of the layer's rasters (their metadata, cached: no pixel is read). */
  async version(): Promise<string | undefined> {
    const metas = await Promise.all(this.plan.rasters().map((r) => r.meta()));
    const versions = metas.map((m) => m.version);
    return versions.every((v) => v !== undefined) ? JSON.stringify([this.dataset.version ?? null, ...versions]) : undefined;
  }

  /** The stack, with the expression evaluated here or handed to the caller. */
  private async readImage(plans: ReadPlan[], opts: ReadOptions): Promise<ReaderImage> {
    await this.plan.checkLimits(plans, opts.limits);
    return this.result(await this.plan.read(plans, opts, !this.plan.defers(opts)), opts);
  }

  private async result(image: ImageData, opts: ReadOptions): Promise<ReaderImage> {
    const colormap = this.dataset.colormap;
    return {
      image,
      ...(this.plan.defers(opts) && this.plan.expression ? { expression: this.plan.expression.text } : {}),
      ...(colormap ? { colormap } : {}),
      bandDescriptions: await this.plan.bandDescriptions(),
      ...(this.plan.numbersOutputs() ? { numberedOutputs: true } : {}),
    };
  }

  async tile(tms: TileMatrixSet, tile: { x: number; y: number; z: number }, opts: TileReadOptions): Promise<ReaderImage> {
    const { x, y, z } = tile;
    checkTile(tms, x, y, z);
    const outside = (): TesseraError => new TesseraError('TileOutsideBounds', `Tile(x=${x}, y=${y}, z=${z}) is outside bounds`);
    // rio-tiler's STAC-level `tile_exists`, against the item's longitude/latitude bounds.
    if (this.dataset.checkItemBounds && !tileTouches(tms, { x, y, z }, this.bounds, WGS84)) throw outside();
    const rasters = this.plan.rasters();
    const exists = await Promise.all(rasters.map((r) => r.tileExists(tms, x, y, z)));
    if (exists.some((e) => !e)) throw outside();
    const whole = opts.buffer !== undefined || opts.padding !== undefined || !opts.coveredPart || !this.dataset.coveredPart;
    const window = whole ? undefined : await coveredWindow(rasters, tms, tile, opts.tilesize);
    if (window) {
      const { bounds, width, height } = window;
      const plans = await Promise.all(rasters.map((r) => r.planPart(bounds, { dstCrs: tms.srs, boundsCrs: tms.srs, width, height, covered: true })));
      return { ...(await this.readImage(plans, opts)), placement: { col: window.col, row: window.row } };
    }
    const margins = { ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}), ...(opts.padding !== undefined ? { padding: opts.padding } : {}) };
    const plans = await Promise.all(rasters.map((r) => r.planTile(tms, x, y, z, opts.tilesize, margins)));
    return this.readImage(plans, opts);
  }

  async part(bbox: BBox, part: PartOptions, opts: ReadOptions): Promise<ReaderImage> {
    const plans = await Promise.all(this.plan.rasters().map((r) => r.planPart(bbox, part)));
    return this.readImage(plans, opts);
  }

  async preview(size: PreviewSize, opts: ReadOptions): Promise<ReaderImage> {
    const plans = await Promise.all(this.plan.rasters().map((r) => r.planPreview(size)));
    return this.readImage(plans, opts);
  }

  async feature(shape: gdal.Geometry, shapeCrs: string, part: PartOptions, opts: ReadOptions): Promise<ReaderImage> {
    const plans = await this.planFeature(shape, shapeCrs, part);
    if (plans.every((p) => p.empty)) throw new TesseraError('NotFound', 'Feature is outside dataset bounds');
    await this.plan.checkLimits(plans, opts.limits);
    // The cutline masks every source's bands, so an expression evaluated later is masked alike.
    const image = await applyCutline(await this.plan.read(plans, opts, !this.plan.defers(opts)), shape, shapeCrs);
    return this.result(image, opts);
  }

  /** The part of the shape's bounds, per source (rio-tiler `feature`: the part, then the cutline). */
  planFeature(shape: gdal.Geometry, shapeCrs: string, part: PartOptions): Promise<ReadPlan[]> {
    const env = shape.getEnvelope();
    const bbox: BBox = [env.minX, env.minY, env.maxX, env.maxY];
    return Promise.all(this.plan.rasters().map((r) => r.planPart(bbox, { ...part, boundsCrs: shapeCrs, dstCrs: part.dstCrs ?? shapeCrs })));
  }

  async statisticsOfFeatures(
    shapes: gdal.Geometry[],
    shapeCrs: string,
    part: PartOptions,
    opts: ReadOptions & { weighByCoverage?: boolean },
    concurrency: number,
    summarise: (result: ReaderImage) => Promise<Map<string, BandStatistics>>,
  ): Promise<Array<Map<string, BandStatistics>>> {
    const layer = this.plan;
    const limits = opts.limits;
    // Planned for every shape first, so that the limits hold for the whole request. A shape that
    // misses the data reads nothing, so the limits do not apply to its extent.
    const plans = await Promise.all(
      shapes.map(async (shape) => {
        const p = await this.planFeature(shape, shapeCrs, part);
        if (!p.every((x) => x.empty)) await layer.checkLimits(p, limits);
        return p;
      }),
    );
    checkSourcePixels(
      plans.flat().reduce((s, p) => s + p.sourcePixels, 0),
      limits,
      `the ${shapes.length} feature(s)`,
      'use smaller areas, max_size or width/height',
    );
    // Each shape reserved its own bytes; `concurrency` of them are read at once.
    if (limits.gate) {
      // A coverage array burns the shape on a grid 10×10 finer: 100 bytes per pixel, and 4 for the fractions.
      const coverageBytes = (p: ReadPlan[]): number =>
        opts.weighByCoverage && !p.every((x) => x.empty) ? 104 * Math.max(0, ...p.map((x) => x.width * x.height)) : 0;
      const held = (await Promise.all(plans.map(async (p) => (await layer.heldBytes(p, limits.statistics)) + coverageBytes(p)))).sort((a, b) => b - a);
      await limits.gate.reserve(held.slice(0, concurrency).reduce((a, b) => a + b, 0));
    }
    return mapLimited(shapes, concurrency, async (shape, i) => {
      const featurePlans = plans[i]!;
      if (featurePlans.every((p) => p.empty)) return this.emptyFeatureStatistics(featurePlans, opts, summarise);
      const image = await applyCutline(await layer.read(featurePlans, opts, !layer.defers(opts)), shape, shapeCrs);
      const coverage = opts.weighByCoverage ? await coverageArray(image, shape, shapeCrs) : undefined;
      return summarise({ ...(await this.result(image, opts)), ...(coverage ? { coverage } : {}) });
    });
  }

  /**
   * Statistics of a shape that misses the data, without an image of its extent: those of a small
   * all-masked stand-in (same bands, dtype and algorithm), counted over the shape's whole window.
   */
  private async emptyFeatureStatistics(
    plans: ReadPlan[],
    opts: ReadOptions,
    summarise: (result: ReaderImage) => Promise<Map<string, BandStatistics>>,
  ): Promise<Map<string, BandStatistics>> {
    const standIn = plans.map((p) => ({ ...p, width: Math.min(p.width, 16), height: Math.min(p.height, 16) }));
    const stats = await summarise(await this.result(await this.plan.read(standIn, opts, !this.plan.defers(opts)), opts));
    const total = Math.max(...plans.map((p) => p.width)) * Math.max(...plans.map((p) => p.height));
    for (const band of stats.values()) band.maskedPixels = total - band.validPixels;
    return stats;
  }

  /** Values of every requested band at a point; an expression's outputs are computed from them. */
  async point(lon: number, lat: number, coordCrs: string, opts: ValueOptions): Promise<ReaderPoint> {
    const layer = this.plan;
    const points = await Promise.all(
      layer.reads.map(async (r) => {
        const p = await r.raster.point(lon, lat, coordCrs, { ...opts, ...(r.indexes ? { indexes: r.indexes } : {}) });
        const own = r.expression ? pointExpression(r.expression, p) : p;
        return { ...own, bandNames: layer.namesOf(r, own.bandNames) };
      }),
    );
    const values = points.flatMap((p) => p.values);
    const stackNames = points.flatMap((p) => p.bandNames);
    const bandNames = layer.naming === 'positional' ? positionalNames(stackNames) : stackNames;
    const masked = points.flatMap((p) => p.masks);
    const bandDescriptions = await layer.bandDescriptions();
    const expr = layer.expression;
    if (!expr) return { values, bandNames, masked, bandDescriptions };
    // TiTiler 2.x numbers an expression's outputs (0.18 names them by their blocks).
    // numexpr sees the concatenated values in their promoted dtype, which decides its arithmetic.
    const out = pointExpression(expr, { values, bandNames, masks: masked, dtype: points.map((p) => p.dtype).reduce(promote) });
    return {
      values: out.values,
      bandNames: layer.naming === 'positional' ? positionalNames(out.bandNames) : out.bandNames,
      masked: out.masks,
      bandDescriptions,
      ...(layer.numbersOutputs() ? { numberedOutputs: true } : {}),
    };
  }
}

/** Values at a point: per band, its value, name and whether it is masked, all of `dtype`. */
interface PointValues {
  values: number[];
  bandNames: string[];
  masks: boolean[];
  dtype: DType;
}

/**
 * An expression over the values at a point: one value per block, each masked where any input is
 * (as rio-tiler masks an expression's outputs).
 */
function pointExpression(expr: Expression, point: PointValues): PointValues {
  const inputs = new Map(
    point.bandNames.map((name, i) => {
      const array = allocate(point.dtype, 1);
      array[0] = point.values[i]!;
      return [name, { dtype: point.dtype, array }];
    }),
  );
  const result = evaluateExpression(expr, inputs, 1);
  const anyMasked = point.masks.some(Boolean);
  return { values: result.bands.map((b) => b[0]!), bandNames: expr.blocks.map((b) => b.name), masks: result.bands.map(() => anyMasked), dtype: result.dtype };
}
