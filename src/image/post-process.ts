/**
 * Everything after the reader, in TiTiler's order: algorithm → rescale → color_formula → colormap +
 * automatic format/dtype → encoder. A RenderSpec is plain data (structured-cloneable), so the same
 * steps run on the main thread or in a render thread (render-threads.ts) with identical output.
 */
import type { ImageData } from './image-data.js';
import { applyRescale } from './rescale.js';
import { applyColorFormula, type ColorOperation } from './color-formula.js';
import { applyColormap, type ColorMap } from './colormap.js';
import { prepareAlgorithm, type AlgorithmId } from './algorithms/index.js';
import { renderImage, type RenderedImage } from './render.js';
import type { encode } from './encode/index.js';
import type { ImageFormat } from './formats.js';

export interface RenderSpec {
  /** A validated algorithm and its parameters as given (PostProcessParams). */
  algorithm: { id: AlgorithmId; params: Record<string, unknown> } | undefined;
  rescale: Array<[number, number]> | undefined;
  colorFormula: ColorOperation[] | undefined;
  colormap: ColorMap | undefined;
  returnMask: boolean;
}

/** Something that post-processes and encodes images: this thread, or a pool of render threads. */
export interface Renderer {
  render(img: ImageData, format: ImageFormat | undefined, spec: RenderSpec): Promise<RenderedImage>;
}

/** Post-processes and encodes `img` in this thread (with `encoder` in place of the usual one, if given). */
export async function postProcessAndRender(img: ImageData, format: ImageFormat | undefined, spec: RenderSpec, encoder?: typeof encode): Promise<RenderedImage> {
  let out = img;
  if (spec.algorithm) out = prepareAlgorithm(spec.algorithm.id, spec.algorithm.params).apply(out);
  if (spec.rescale) out = applyRescale(out, spec.rescale);
  if (spec.colorFormula) out = applyColorFormula(out, spec.colorFormula);
  const cmap = spec.colormap;
  return renderImage(out, {
    ...(format ? { format } : {}),
    returnMask: spec.returnMask,
    synthetic: spec.algorithm !== undefined,
    ...(encoder ? { encode: encoder } : {}),
    ...(cmap ? { colormap: (i: ImageData) => applyColormap(i, cmap) } : {}),
  });
}

/** The renderer without threads. */
export const RENDER_IN_THIS_THREAD: Renderer = { render: postProcessAndRender };
