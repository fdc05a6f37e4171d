/**
 * The STAC item reader (rio-tiler's `STACReader` over `MultiBaseReader`): the layer is the assets
 * named by `assets` or found in the expression, each read with its `asset_bidx` (or `bidx`), bands
 * named `asset_b1` (or after the asset with `asset_as_band`). Tiles are first held to the item's
 * bbox, then to each asset's footprint; every zoom of the grid is the item's. TiTiler 2.x's
 * per-asset options (rio-tiler 9's `STACReader._get_options`) choose an asset's bands by index or by
 * name (`bands`: STAC `bands`/`eo:bands`, `eo:common_name` before `name`), or an expression over its
 * own `b1 …`, evaluated before the assets are stacked.
 */
import type { StacItemSources } from '../stac/reader.js';
import type { StacAsset } from '../stac/item.js';
import { RasterReads } from '../source/reader.js';
import { expressionBands, parseExpression, type Expression } from '../image/expression.js';
import { TesseraError, pyList } from '../errors.js';
import type { TileMatrixSet } from '../tms/grid.js';
import { LayerPlan, LayerReader, type SourceRead } from './layer.js';

/** AssetsBidxExprParams, parsed. */
export interface StacLayerOptions {
  assets?: readonly string[];
  expression?: string;
  assetAsBand: boolean;
  assetBidx: ReadonlyMap<string, readonly number[]>;
  bidx?: readonly number[];
  /** 2.x: an expression over one asset's own bands, by asset. */
  assetExpressions?: ReadonlyMap<string, Expression>;
  /** 2.x: band names (from the asset's STAC `bands`/`eo:bands`) to read, by asset. */
  assetBands?: ReadonlyMap<string, readonly string[]>;
  /** The request is TiTiler 2.x's (per-asset options in `assets`): bands are `b1 … bn` across the assets. */
  positional?: boolean;
}

/** Every name the expression reads is a band number (`b1`, `b2` …): rio-tiler 9's positional names. */
function positionalOnly(expression: Expression): boolean {
  return expression.variables.every((v) => /^b[1-9][0-9]*$/.test(v));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The 1-based indexes of `bands` among the asset's STAC band metadata (400 when it has none or lacks one). */
export function bandIndexes(asset: StacAsset, bands: readonly string[]): number[] {
  const meta = asset.fields['bands'] ?? asset.fields['eo:bands'];
  if (!Array.isArray(meta) || meta.length === 0) {
    throw new TesseraError('BadRequest', `Asset '${asset.name}' does not have 'bands' metadata, unable to use 'bands' option`);
  }
  const byName = new Map<string, number>();
  meta.forEach((b: unknown, i) => {
    if (!isRecord(b)) return;
    const key = [b['eo:common_name'], b['common_name'], b['name']].find((v): v is string => typeof v === 'string' && v !== '');
    if (key !== undefined) byName.set(key, i + 1);
  });
  return bands.map((b) => {
    const index = byName.get(b);
    if (index === undefined) throw new TesseraError('BadRequest', `Band '${b}' not found in asset '${asset.name}' metadata, unable to use 'bands' option`);
    return index;
  });
}

/** The bands to read of one asset and its own expression: expression, then `bands`, `bidx` per asset, `bidx`. */
function assetRead(asset: StacAsset, layer: StacLayerOptions): { indexes: number[] | undefined; expression?: Expression } {
  const expression = layer.assetExpressions?.get(asset.name);
  if (expression) return { indexes: expressionBands(expression, `asset '${asset.name}'`), expression };
  const bands = layer.assetBands?.get(asset.name);
  if (bands) return { indexes: bandIndexes(asset, bands) };
  const indexes = layer.assetBidx.get(asset.name) ?? layer.bidx;
  return { indexes: indexes ? [...indexes] : undefined };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The assets to read, in the item's order, and the expression (400 when neither names an asset). */
async function stacLayer(stac: StacItemSources, layer: StacLayerOptions): Promise<LayerPlan> {
  const all = stac.assetNames;
  let names: string[];
  let expression: Expression | undefined;
  let positional = layer.positional === true;
  if (layer.expression && layer.assets && layer.assets.length > 0 && (positional || positionalOnly(parseExpression(layer.expression)))) {
    // TiTiler 2.x: the expression reads `b1 … bn`, numbered across the assets named, in their order.
    // TiTiler 0.18 finds no asset in such an expression (it names bands `asset_b1`) and refuses it:
    // the request can only be 2.x's.
    expression = parseExpression(layer.expression);
    names = [...layer.assets];
    positional = true;
  } else if (layer.expression) {
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
  const reads: SourceRead[] = stac.assets(names).map((asset) => ({
    name: asset.name,
    href: asset.href,
    raster: new RasterReads(stac.source(asset)),
    ...assetRead(asset, layer),
    statistics: asset.statistics,
  }));
  return LayerPlan.checked(reads, expression, positional ? 'positional' : layer.assetAsBand ? 'asset-as-band' : 'assets', positional && layer.assetAsBand);
}

/** The reader of one STAC item and layer. */
export async function stacItemReader(stac: StacItemSources, layer: StacLayerOptions): Promise<LayerReader> {
  return new LayerReader(await stacLayer(stac, layer), {
    bounds: stac.bounds,
    // STAC items span every zoom of the grid (rio-tiler 6).
    zooms: async (tms: TileMatrixSet) => ({ minzoom: tms.minzoom, maxzoom: tms.maxzoom }),
    checkItemBounds: true,
    version: stac.version,
    coveredPart: false,
  });
}
