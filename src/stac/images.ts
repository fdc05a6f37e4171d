/**
 * The multi-asset image verbs of a STAC item (rio-tiler `MultiBaseReader`): tile, part, preview,
 * feature and point over the assets named by `assets` or by an expression. Assets are planned
 * first (so limits are enforced before any pixel is read), then read in parallel and stacked in
 * asset order with TiTiler's band names; an expression is evaluated over the stack.
 */
import type { StacReader } from './reader.js';
import type { StacAsset } from './item.js';
import { RasterReader, applyCutline, type ReadPlan, type ValueOptions, type PartOptions } from '../source/reader.js';
import { nonAlphaIndexes } from '../source/read.js';
import { srsFrom, sameCrs, transformBounds, TransformMemo } from '../source/crs.js';
import type { gdal } from '../source/gdal.js';
import { promote, stackImages } from '../image/stack.js';
import { allocate, type ImageData } from '../image/image-data.js';
import { applyExpression, parseExpression, evaluateExpression, type Expression } from '../image/expression.js';
import { TesseraError, pyList } from '../errors.js';
import { checkTile, type TileMatrixSet } from '../tms/grid.js';
import { estimateImageBytes, sampleBytes, type WholeImageGate } from '../image/whole-image-gate.js';

export interface LayerOptions {
  assets?: readonly string[];
  expression?: string;
  assetAsBand: boolean;
  assetBidx: ReadonlyMap<string, readonly number[]>;
  bidx?: readonly number[];
}

export interface ReadLimits {
  /** Largest width × height × bands of an output image. */
  maxOutputPixels: number;
  /** Largest number of source pixels one request may read (after overview choice). */
  maxSourcePixels: number;
  /** Where whole-image requests reserve a slot and the bytes their reads will hold (none: not counted). */
  gate?: WholeImageGate;
  /** The answer is statistics of the image, whose copies of the values add to what the read holds. */
  statistics?: boolean;
}



interface AssetRead {
  asset: StacAsset;
  reader: RasterReader;
  indexes: number[] | undefined;
}

const WGS84 = 'EPSG:4326';

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What to read: the assets (in order) and the parsed expression, checked against the band names. */
export class LayerPlan {
  private constructor(
    readonly reads: AssetRead[],
    readonly expression: Expression | undefined,
    readonly assetAsBand: boolean,
  ) {}

  static async resolve(stac: StacReader, layer: LayerOptions): Promise<LayerPlan> {
    const all = stac.assetNames;
    let names: string[];
    let expression: Expression | undefined;
    if (layer.expression) {
      expression = parseExpression(layer.expression);
      // rio-tiler finds the assets an expression uses by name among the item's readable assets.
      const alternation = all.map(escapeRegExp).join('|');
      const re = layer.assetAsBand ? new RegExp(`\\b(${alternation})\\b`, 'g') : new RegExp(`\\b(${alternation})_b\\d+\\b`, 'g');
      const found = new Set<string>();
      if (all.length > 0) for (const m of layer.expression.matchAll(re)) found.add(m[1]!);
      if (found.size === 0) {
        throw new TesseraError(
          'BadRequest',
          layer.assetAsBand
            ? `Could not find any valid assets in '${layer.expression}' expression. Assets are: ${pyList(all)}`
            : `Could not find any valid assets in '${layer.expression}' expression, maybe try with \`asset_as_band=True\`. Assets are: ${pyList(all)}`,
        );
      }
      names = all.filter((n) => found.has(n));
    } else {
      names = [...(layer.assets ?? [])];
      if (names.length === 0) throw new TesseraError('BadRequest', 'assets must be defined either via expression or assets options.');
    }
    const assets = stac.assets(names);
    const reads = assets.map((asset) => ({
      asset,
      reader: new RasterReader(stac.source(asset)),
      indexes: (layer.assetBidx.get(asset.name) ?? layer.bidx) as number[] | undefined,
    }));
    const plan = new LayerPlan(reads, expression, layer.assetAsBand);
    if (expression) await plan.checkExpression(expression);
    return plan;
  }

  /** Band names the stack will carry, from each asset's metadata (cached, cheap). */
  async bandNames(): Promise<string[]> {
    const lists = await Promise.all(
      this.reads.map(async (r) => {
        const meta = await r.reader.meta();
        const indexes = r.indexes ?? nonAlphaIndexes(meta);
        for (const i of indexes) {
          if (i > meta.count) throw new TesseraError('BadRequest', `Invalid band index ${i} for asset '${r.asset.name}': it has ${meta.count} band(s)`);
        }
        if (this.assetAsBand) {
          if (indexes.length > 1) throw new TesseraError('BadRequest', `Can't use asset_as_band for multibands asset '${r.asset.name}'`);
          return [r.asset.name];
        }
        return indexes.map((i) => `${r.asset.name}_b${i}`);
      }),
    );
    return lists.flat();
  }

  private async checkExpression(expr: Expression): Promise<void> {
    expr.checkVariables(await this.bandNames());
  }

  /**
   * Checks every asset's plan against the limits, before reading, then waits in the limits'
   * whole-image gate for a slot and the bytes the reads will hold.
   */
  async checkLimits(plans: ReadPlan[], limits: ReadLimits): Promise<void> {
    const bands = (await this.bandNames()).length;
    const first = plans[0];
    if (first) {
      const out = Math.max(...plans.map((p) => p.width)) * Math.max(...plans.map((p) => p.height)) * bands;
      if (out > limits.maxOutputPixels) {
        throw new TesseraError('BadRequest', `Requested image is too large: ${first.width}x${first.height} pixels × ${bands} band(s) exceeds the limit of ${limits.maxOutputPixels} values`);
      }
    }
    const source = plans.reduce((s, p) => s + p.sourcePixels, 0);
    if (source > limits.maxSourcePixels) {
      throw new TesseraError('BadRequest', `Requested area is too large: reading it needs ${source} source pixels, above the limit of ${limits.maxSourcePixels}; use a smaller area, max_size or width/height`);
    }
    if (limits.gate) await limits.gate.reserve(await this.heldBytes(plans, limits.statistics));
  }

  /** Bytes reading `plans` (one per asset) and making an answer of them holds at its peak, estimated. */
  async heldBytes(plans: ReadPlan[], statistics = false): Promise<number> {
    const perAsset = await Promise.all(
      this.reads.map(async (r, k) => {
        const plan = plans[k];
        if (!plan || plan.empty) return 0;
        const meta = await r.reader.meta();
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
        const img = await r.reader.read(plans[k]!, { ...shared, ...(r.indexes ? { indexes: r.indexes } : {}) });
        return this.label(r, img);
      }),
    );
    const stacked = stackImages(images);
    return withExpression ? this.finish(stacked) : stacked;
  }

  private label(r: AssetRead, img: ImageData): ImageData {
    const stats = r.asset.statistics;
    if (!img.datasetStatistics && stats) {
      const indexes = r.indexes ?? img.bandNames.map((n) => Number(n.slice(1)));
      if (Math.max(Math.max(...indexes), indexes.length) <= stats.length) img.datasetStatistics = indexes.map((i) => stats[i - 1]!);
    }
    if (this.assetAsBand) {
      if (img.bandNames.length > 1) throw new TesseraError('BadRequest', `Can't use asset_as_band for multibands asset '${r.asset.name}'`);
      img.bandNames = [r.asset.name];
    } else {
      img.bandNames = img.bandNames.map((n) => `${r.asset.name}_${n}`);
    }
    img.assets = [r.asset.href];
    return img;
  }

  /** rio-tiler `apply_expression` over the stacked assets, if the layer has an expression. */
  finish(img: ImageData): ImageData {
    return this.expression ? applyExpression(img, this.expression) : img;
  }

  readers(): RasterReader[] {
    return this.reads.map((r) => r.reader);
  }
}

/** rio-tiler's STAC-level `tile_exists`: the item bbox (WGS84) against the tile, strictly. */
export function itemCoversTile(stac: StacReader, tms: TileMatrixSet, x: number, y: number, z: number): boolean {
  let tb = tms.xyBounds({ x, y, z });
  const tmsSrs = srsFrom(tms.srs);
  const wgs = srsFrom(WGS84);
  if (!sameCrs(tmsSrs, wgs)) tb = transformBounds(tmsSrs, wgs, tb, 21);
  if (!tb.every(Number.isFinite)) return true;
  const [l, b, r, t] = stac.bounds;
  const [tl, tbm, tr, tt] = [Math.min(tb[0], tb[2]), Math.min(tb[1], tb[3]), Math.max(tb[0], tb[2]), Math.max(tb[1], tb[3])];
  return tl < r && tr > l && tt > b && tbm < t;
}

export async function stacTile(
  stac: StacReader,
  layer: LayerPlan,
  tms: TileMatrixSet,
  tile: { x: number; y: number; z: number },
  opts: ValueOptions & { tilesize: number; buffer?: number; padding?: number },
  limits: ReadLimits,
  withExpression = true,
): Promise<ImageData> {
  const { x, y, z } = tile;
  checkTile(tms, x, y, z);
  const outside = (): TesseraError => new TesseraError('TileOutsideBounds', `Tile(x=${x}, y=${y}, z=${z}) is outside bounds`);
  if (!itemCoversTile(stac, tms, x, y, z)) throw outside();
  const readers = layer.readers();
  const exists = await Promise.all(readers.map((r) => r.tileExists(tms, x, y, z)));
  if (exists.some((e) => !e)) throw outside();
  const plans = await Promise.all(
    readers.map((r) =>
      r.planTile(tms, x, y, z, opts.tilesize, {
        ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}),
        ...(opts.padding !== undefined ? { padding: opts.padding } : {}),
      }),
    ),
  );
  await layer.checkLimits(plans, limits);
  return layer.read(plans, opts, withExpression);
}

/** `withExpression` false leaves the layer's expression to the caller (see LayerPlan.read), as for every verb below. */
export async function stacPart(
  layer: LayerPlan,
  bbox: [number, number, number, number],
  part: PartOptions,
  opts: ValueOptions,
  limits: ReadLimits,
  withExpression = true,
): Promise<ImageData> {
  const plans = await Promise.all(layer.readers().map((r) => r.planPart(bbox, part)));
  await layer.checkLimits(plans, limits);
  return layer.read(plans, opts, withExpression);
}

export async function stacPreview(
  layer: LayerPlan,
  size: { maxSize?: number; height?: number; width?: number; dstCrs?: string },
  opts: ValueOptions,
  limits: ReadLimits,
  withExpression = true,
): Promise<ImageData> {
  const plans = await Promise.all(layer.readers().map((r) => r.planPreview(size)));
  await layer.checkLimits(plans, limits);
  return layer.read(plans, opts, withExpression);
}

export async function stacFeature(
  layer: LayerPlan,
  shape: gdal.Geometry,
  shapeCrs: string,
  part: PartOptions,
  opts: ValueOptions,
  limits: ReadLimits,
  withExpression = true,
): Promise<ImageData> {
  const env = shape.getEnvelope();
  const bbox: [number, number, number, number] = [env.minX, env.minY, env.maxX, env.maxY];
  const plans = await Promise.all(layer.readers().map((r) => r.planPart(bbox, { ...part, boundsCrs: shapeCrs, dstCrs: part.dstCrs ?? shapeCrs })));
  if (plans.every((p) => p.empty)) throw new TesseraError('NotFound', 'Feature is outside dataset bounds');
  await layer.checkLimits(plans, limits);
  // The cutline masks every asset's bands, so an expression evaluated later is masked alike.
  return applyCutline(await layer.read(plans, opts, withExpression), shape, shapeCrs);
}

export interface StacPoint {
  values: number[];
  bandNames: string[];
}

/** Values of every requested band at a point; an expression's outputs are computed from them. */
export async function stacPoint(layer: LayerPlan, lon: number, lat: number, coordCrs: string, opts: ValueOptions): Promise<StacPoint> {
  const reads = layer.reads;
  const points = await Promise.all(
    reads.map(async (r) => {
      const p = await r.reader.point(lon, lat, coordCrs, { ...opts, ...(r.indexes ? { indexes: r.indexes } : {}) });
      if (layer.assetAsBand && p.bandNames.length > 1) {
        throw new TesseraError('BadRequest', `Can't use asset_as_band for multibands asset '${r.asset.name}'`);
      }
      const names = layer.assetAsBand ? [r.asset.name] : p.bandNames.map((n) => `${r.asset.name}_${n}`);
      return { ...p, bandNames: names };
    }),
  );
  const values = points.flatMap((p) => p.values);
  const bandNames = points.flatMap((p) => p.bandNames);
  const expr = layer.expression;
  if (!expr) return { values, bandNames };
  // numexpr sees the concatenated values in their promoted dtype, which decides its arithmetic.
  const dtype = points.map((p) => p.dtype).reduce(promote);
  const inputs = new Map(bandNames.map((name, i) => {
    const array = allocate(dtype, 1);
    array[0] = values[i]!;
    return [name, { dtype, array }];
  }));
  const result = evaluateExpression(expr, inputs, 1);
  return { values: result.bands.map((b) => b[0]!), bandNames: expr.blocks.map((b) => b.name) };
}
