/**
 * How the image is made from the values read, in TiTiler's order: PostProcessParams (`algorithm`),
 * then RescalingParams, ColorFormulaParams, ColorMapParams and ImageRenderingParams (`return_mask`);
 * and StatisticsParams with HistogramParams for the statistics routes. Every check that needs no
 * pixel runs here, so a bad formula or colormap is a 400 before a byte is read.
 */
import { badRequest } from '../../errors.js';
import { ALGORITHM_IDS, isAlgorithmId, prepareAlgorithm, type AlgorithmStep, type TitilerApi } from '../../image/algorithms/index.js';
import { parseColorFormula } from '../../image/color-formula.js';
import { colormapNames, isEmptyColormap, namedColormap, parseColormapJson, type ColorMap } from '../../image/colormap.js';
import type { RenderSpec } from '../../image/post-process.js';
import { parseStatisticsOptions, type StatisticsOptions } from '../../image/statistics.js';
import { bool, family, str, strList, text, type Query } from './family.js';

/** `algorithm_params`: a JSON object (per-algorithm checks live with the algorithms). */
function parseAlgorithmParams(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined || raw === '') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    throw badRequest('Could not parse the algorithm_params value: not valid JSON.');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw badRequest('Invalid algorithm_params: expected a JSON object.');
  return doc as Record<string, unknown>;
}

/**
 * The post-processing step (PostProcessParams), or undefined without `algorithm`. `algorithm_params`
 * must then be a JSON object (400; TiTiler answers 500), whose fields are validated as the
 * algorithm's pydantic model in the generation `api` does (400 with pydantic's text).
 */
export function parseAlgorithm(name: string | undefined, rawParams: string | undefined, api: TitilerApi = '0.18'): AlgorithmStep | undefined {
  if (name === undefined || name === '') return undefined;
  if (!isAlgorithmId(name)) throw badRequest(`Unknown algorithm '${name}': expected one of ${ALGORITHM_IDS.join(', ')}`);
  return prepareAlgorithm({ id: name, api, params: parseAlgorithmParams(rawParams) ?? {} });
}

/**
 * PostProcessParams of a generation: every algorithm name is accepted (the 2.x ones are told apart
 * by their names), and hillshade, terrarium and terrainrgb follow that generation's model. TiTiler
 * decodes `algorithm_params` even without an algorithm: bad JSON is refused either way.
 */
function postProcessOf(api: TitilerApi) {
  return family(
    'PostProcessParams',
    {
      algorithm: { schema: { type: 'string', enum: [...ALGORITHM_IDS] }, doc: 'Algorithm applied to the image (see /algorithms), such as hillshade.' },
      algorithm_params: { schema: str, doc: "The algorithm's parameters, as JSON." },
    },
    (q): RenderSpec['algorithm'] => {
      const name = text(q, 'algorithm');
      const raw = text(q, 'algorithm_params');
      if (!name && raw) parseAlgorithmParams(raw);
      const step = parseAlgorithm(name, raw, api);
      // Validated here; the renderer prepares it again from plain data (it may run in another thread).
      return step ? { id: step.id, api: step.api, params: step.params } : undefined;
    },
  );
}

const POST_PROCESS: Record<TitilerApi, ReturnType<typeof postProcessOf>> = { '0.18': postProcessOf('0.18'), '2': postProcessOf('2') };

/** PostProcessParams as TiTiler 0.18.10 has them (the default generation). */
export const postProcess = POST_PROCESS['0.18'];

/** PostProcessParams of the deployment's generation (TESSERA_TITILER_API). */
export function postProcessFor(api: TitilerApi): ReturnType<typeof postProcessOf> {
  return POST_PROCESS[api];
}

/** RescalingParams: each entry `min,max` (spaces and brackets ignored). */
function parseRescale(q: Query): Array<[number, number]> | undefined {
  const entries = q['rescale'] as string[] | undefined;
  if (!entries || entries.length === 0) return undefined;
  return entries.map((entry) => {
    const nums = entry
      .replace(/[\s[\]]/g, '')
      .split(',')
      .map((p) => (p === '' ? NaN : Number(p)));
    if (nums.length !== 2 || nums.some((n) => Number.isNaN(n))) throw badRequest(`Invalid rescale '${entry}': expected 'min,max'`);
    return [nums[0]!, nums[1]!] as [number, number];
  });
}

/** The image's rendering after the algorithm: rescale, colour formula, colormap, mask. */
export type Rendering = Omit<RenderSpec, 'algorithm' | 'expression'>;

/** RescalingParams, ColorFormulaParams, ColorMapParams, ImageRenderingParams (rendered as TiTiler 0.18.10 does). */
export const rendering = family(
  'ImageRenderingParams',
  {
    rescale: { schema: strList, doc: 'Linear rescale of values to 0–255, as `min,max`; repeat once per band.' },
    color_formula: { schema: str, doc: 'rio-color formula: gamma, sigmoidal and saturation operations, e.g. `gamma rgb 1.3, sigmoidal rgb 8 0.4`.' },
    colormap_name: { schema: { type: 'string', enum: [...colormapNames()] }, doc: 'Name of a colormap (see /colorMaps) for one-band output.' },
    colormap: { schema: str, doc: 'A colormap as JSON: {value: [r, g, b, a]} or a list of [[min, max], [r, g, b, a]] intervals.' },
    return_mask: { schema: bool, doc: 'Add the mask as an alpha band (or transparency) to the output. Default: true.', parserDefault: true },
  },
  (q): Rendering => {
    const formula = text(q, 'color_formula');
    // colormap_name wins over colormap; an empty JSON colormap ({} or []) means none, as in TiTiler.
    let colormap: ColorMap | undefined;
    const name = text(q, 'colormap_name');
    const json = text(q, 'colormap');
    if (name) colormap = namedColormap(name);
    else if (json) colormap = parseColormapJson(json);
    if (colormap && isEmptyColormap(colormap)) colormap = undefined;
    return { rescale: parseRescale(q), colorFormula: formula ? parseColorFormula(formula) : undefined, colormap, returnMask: q['return_mask'] !== false };
  },
);

/** StatisticsParams and HistogramParams (`p` integers and `c` numbers are validated as FastAPI does: 422). */
export const statistics = family(
  'StatisticsParams',
  {
    categorical: { schema: bool, doc: 'Count each distinct value instead of computing a histogram.', parserDefault: false },
    c: { schema: { type: 'array', items: { type: 'number' } }, doc: 'Values whose pixels are counted (categorical statistics); repeat for several.' },
    p: { schema: { type: 'array', items: { type: 'integer' } }, doc: 'Percentiles reported, repeat for several. Default: 2 and 98.' },
    histogram_bins: { schema: str, doc: 'Number of equal-width histogram bins (default 10), or the bin edges separated by commas.' },
    histogram_range: { schema: str, doc: "Range of the histogram, as `min,max`. Default: the band's minimum and maximum." },
  },
  (q): StatisticsOptions => parseStatisticsOptions(q),
);

/** The rendering parameters, encoded as the generation `api`'s `render_image` does (the collision `imageEncoding`). */
const RENDERING_2 = family('ImageRenderingParams', rendering.params, (q): Rendering => ({ ...rendering.parse(q), encoding: '2' }));

/** ImageRenderingParams of the deployment's generation (TESSERA_TITILER_API). */
export function renderingFor(api: TitilerApi): typeof rendering {
  return api === '2' ? RENDERING_2 : rendering;
}
