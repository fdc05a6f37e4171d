/**
 * The STAC item reader (rio-tiler's `STACReader` over `MultiBaseReader`): the layer is the assets
 * named by `assets` or found in the expression, each read with its `asset_bidx` (or `bidx`), bands
 * named `asset_b1` (or after the asset with `asset_as_band`). Tiles are first held to the item's
 * bbox, then to each asset's footprint; every zoom of the grid is the item's.
 */
import type { StacItemSources } from '../stac/reader.js';
import { RasterReads } from '../source/reader.js';
import { parseExpression, type Expression } from '../image/expression.js';
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
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The assets to read, in the item's order, and the expression (400 when neither names an asset). */
async function stacLayer(stac: StacItemSources, layer: StacLayerOptions): Promise<LayerPlan> {
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
  const reads: SourceRead[] = stac.assets(names).map((asset) => ({
    name: asset.name,
    href: asset.href,
    raster: new RasterReads(stac.source(asset)),
    indexes: (layer.assetBidx.get(asset.name) ?? layer.bidx) as number[] | undefined,
    statistics: asset.statistics,
  }));
  return LayerPlan.checked(reads, expression, layer.assetAsBand ? 'asset-as-band' : 'assets');
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
