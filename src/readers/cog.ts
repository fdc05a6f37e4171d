/**
 * The COG reader (rio-tiler's `Reader`): one raster, its bands `b1 … bn`; `bidx` picks bands, an
 * expression reads exactly the bands it names (`b{i}`) and evaluates over them. Bounds and zooms
 * are the raster's own; a tile is held to the raster's footprint in its CRS, and below a mosaic's
 * minzoom may be read for the block the raster covers (readers/layer.ts).
 */
import type { RasterSource } from '../source/dataset.js';
import { RasterReads } from '../source/reader.js';
import { expressionBands, parseExpression, type Expression } from '../image/expression.js';
import { LayerPlan, LayerReader } from './layer.js';
import { colormapOfTable } from '../image/colormap.js';

/** BidxExprParams, parsed. */
export interface CogLayerOptions {
  bidx?: readonly number[];
  expression?: string;
}

/** The bands a COG layer reads and the expression over them: parsed once for every COG it is read from. */
export interface CogBands {
  indexes: number[] | undefined;
  expression: Expression | undefined;
}

export function cogBands(layer: CogLayerOptions): CogBands {
  const expression = layer.expression ? parseExpression(layer.expression) : undefined;
  // rio-tiler reads exactly the bands the expression names.
  const indexes = expression ? expressionBands(expression) : layer.bidx && layer.bidx.length > 0 ? [...layer.bidx] : undefined;
  return { indexes, expression };
}

/** The reader of one COG and layer. */
export async function cogReader(source: RasterSource, url: string, layer: CogLayerOptions): Promise<LayerReader> {
  return cogBandsReader(source, url, cogBands(layer));
}

/** The reader of one COG and parsed layer; `label` names the raster in messages ('the raster' by default). */
export async function cogBandsReader(source: RasterSource, url: string, bands: CogBands, label?: string): Promise<LayerReader> {
  const read = { name: '', href: url, raster: new RasterReads(source), indexes: bands.indexes, ...(label !== undefined ? { label } : {}) };
  const [plan, bounds, meta] = await Promise.all([LayerPlan.checked([read], bands.expression, 'bands'), source.geographicBounds(), source.meta()]);
  // rio-tiler's Reader keeps band 1's colour table (`colormap(1)`); TiTiler draws with it when the request names no colormap.
  const colormap = meta.colormap ? colormapOfTable(meta.colormap) : undefined;
  return new LayerReader(plan, { bounds, zooms: (tms) => source.zooms(tms), checkItemBounds: false, coveredPart: true, ...(colormap ? { colormap } : {}) });
}
