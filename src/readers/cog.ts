/**
 * The COG reader (rio-tiler's `Reader`): one raster, its bands `b1 … bn`; `bidx` picks bands, an
 * expression reads exactly the bands it names (`b{i}`) and evaluates over them. Bounds and zooms
 * are the raster's own; a tile is held to the raster's footprint in its CRS.
 */
import type { RasterSource } from '../source/dataset.js';
import { RasterReader } from '../source/reader.js';
import { expressionBands, parseExpression } from '../image/expression.js';
import { LayerPlan, LayerReader } from './layer.js';

/** BidxExprParams, parsed. */
export interface CogLayerOptions {
  bidx?: readonly number[];
  expression?: string;
}

/** The reader of one COG and layer. */
export async function cogReader(source: RasterSource, url: string, layer: CogLayerOptions): Promise<LayerReader> {
  const expression = layer.expression ? parseExpression(layer.expression) : undefined;
  const indexes = expression ? expressionBands(expression) : layer.bidx && layer.bidx.length > 0 ? [...layer.bidx] : undefined;
  const read = { name: '', href: url, reader: new RasterReader(source), indexes };
  const [plan, bounds] = await Promise.all([LayerPlan.checked([read], expression, 'bands'), source.geographicBounds()]);
  return new LayerReader(plan, { bounds, zooms: (tms) => source.zooms(tms), checkItemBounds: false });
}
