/**
 * The COG reader (rio-tiler's `Reader`): one raster, its bands `b1 … bn`; `bidx` picks bands, an
 * expression reads exactly the bands it names (`b{i}`) and evaluates over them. Bounds and zooms
 * are the raster's own; a tile is held to the raster's footprint in its CRS.
 */
import type { RasterSource } from '../source/dataset.js';
import { RasterReader } from '../source/reader.js';
import { parseExpression, type Expression } from '../image/expression.js';
import { badRequest } from '../errors.js';
import { LayerPlan, LayerReader } from './layer.js';

/** BidxExprParams, parsed. */
export interface CogLayerOptions {
  bidx?: readonly number[];
  expression?: string;
}

/** The bands an expression reads (rio-tiler `parse_expression`: its `b{i}` names, sorted); 400 for other names. */
export function expressionBands(expression: Expression): number[] {
  const indexes = new Set<number>();
  for (const v of expression.variables) {
    const m = /^b([0-9]+)$/.exec(v);
    if (!m || Number(m[1]) < 1) throw badRequest(`Invalid expression: '${v}' is not a band name (use b1, b2 …)`);
    indexes.add(Number(m[1]));
  }
  if (indexes.size === 0) throw badRequest(`Could not find any valid bands in '${expression.text}' expression.`);
  return [...indexes].sort((a, b) => a - b);
}

/** The reader of one COG and layer. */
export async function cogReader(source: RasterSource, url: string, layer: CogLayerOptions): Promise<LayerReader> {
  const expression = layer.expression ? parseExpression(layer.expression) : undefined;
  const indexes = expression ? expressionBands(expression) : layer.bidx && layer.bidx.length > 0 ? [...layer.bidx] : undefined;
  const read = { name: '', href: url, reader: new RasterReader(source), indexes };
  const [plan, bounds] = await Promise.all([LayerPlan.checked([read], expression, 'bands'), source.geographicBounds()]);
  return new LayerReader(plan, { bounds, zooms: (tms) => source.zooms(tms), checkItemBounds: false });
}
