/**
 * Everything after the reader, in TiTiler's order: [expression →] algorithm → rescale →
 * color_formula → colormap + automatic format/dtype → encoder; or, for statistics routes,
 * [expression →] algorithm → statistics. Specs are plain data (structured-cloneable), so the same
 * steps run on the main thread or in a render thread (render-threads.ts) with identical output.
 */
import type { ImageData } from './image-data.js';
import { applyRescale } from './rescale.js';
import { applyExpression, cachedExpression } from './expression.js';
import { applyColorFormula, type ColorOperation } from './color-formula.js';
import { applyColormap, colormapCanBeTransparent, type ColorMap } from './colormap.js';
import { prepareAlgorithm, type AlgorithmRef } from './algorithms/index.js';
import { renderImage, type RenderedImage } from './render.js';
import type { encode } from './encode/index.js';
import type { ImageFormat } from './formats.js';
import { imageStatistics, type BandStatistics } from './statistics.js';
import type { StatisticsOptions } from './statistics-options.js';

export interface RenderSpec {
  /**
   * An expression the reader left to the renderer (a STAC tile's, see LayerPlan.read), evaluated
   * first over bands named as the expression names them. Its text was validated on the way in.
   */
  expression?: string;
  /** A validated algorithm, the generation whose model it follows and its parameters as given (PostProcessParams). */
  algorithm: AlgorithmRef | undefined;
  rescale: Array<[number, number]> | undefined;
  colorFormula: ColorOperation[] | undefined;
  colormap: ColorMap | undefined;
  returnMask: boolean;
  /**
   * Whose `render_image` encodes (the collision `imageEncoding`): 0.18.10's (the default) or 2.x's,
   * which writes `.npy` masks in the data's dtype range and casts automatic-format images to uint8.
   */
  encoding?: '0.18' | '2';
}

/** What the statistics routes make of an image: its statistics per band. */
export interface StatisticsSpec {
  /** An expression the reader left to this step (validated on the way in), evaluated first. */
  expression?: string;
  algorithm: AlgorithmRef | undefined;
  options: StatisticsOptions;
  /** Per-pixel weights (the fraction of each pixel a feature covers), as rio-tiler's `coverage`. */
  coverage?: Float32Array;
}

/** Something that post-processes images and encodes them or summarises them: this thread, or a pool of render threads. */
export interface Renderer {
  render(img: ImageData, format: ImageFormat | undefined, spec: RenderSpec): Promise<RenderedImage>;
  statistics(img: ImageData, spec: StatisticsSpec): Promise<Map<string, BandStatistics>>;
}

/** Statistics of `img` per band (after the spec's expression and algorithm), in this thread; plain data, to cross threads. */
export function summariseImage(img: ImageData, spec: StatisticsSpec): Map<string, BandStatistics> {
  let out = spec.expression ? applyExpression(img, cachedExpression(spec.expression)) : img;
  if (spec.algorithm) out = prepareAlgorithm(spec.algorithm).apply(out);
  return imageStatistics(out, spec.options, spec.coverage);
}

/** Post-processes and encodes `img` in this thread (with `encoder` in place of the usual one, if given). */
export async function postProcessAndRender(img: ImageData, format: ImageFormat | undefined, spec: RenderSpec, encoder?: typeof encode): Promise<RenderedImage> {
  let out = spec.expression ? applyExpression(img, cachedExpression(spec.expression)) : img;
  if (spec.algorithm) out = prepareAlgorithm(spec.algorithm).apply(out);
  if (spec.rescale) out = applyRescale(out, spec.rescale);
  if (spec.colorFormula) out = applyColorFormula(out, spec.colorFormula);
  const cmap = spec.colormap;
  return renderImage(out, {
    ...(format ? { format } : {}),
    returnMask: spec.returnMask,
    ...(spec.encoding === '2' ? { encoding: '2' as const } : {}),
    synthetic: spec.algorithm !== undefined,
    ...(encoder ? { encode: encoder } : {}),
    ...(cmap ? { colormap: (i: ImageData) => applyColormap(i, cmap), colormapCanBeTransparent: colormapCanBeTransparent(cmap) } : {}),
  });
}

/** The renderer without threads. */
export const RENDER_IN_THIS_THREAD: Renderer = { render: postProcessAndRender, statistics: async (img, spec) => summariseImage(img, spec) };
