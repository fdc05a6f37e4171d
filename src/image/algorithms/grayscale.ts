/**
 * `grayscale` and `bitonal` (TiTiler 2.4.0, titiler/core/algorithm/image.py `ToGrayScale`,
 * `ToBitonal`). Grayscale is the ITU-R 601-2 luma of the first three bands,
 * `r * 299 / 1000 + g * 587 / 1000 + b * 114 / 1000`, cast back to the input dtype; bitonal is 255
 * where that luma (or a single band as it is) is above 127, else 0, uint8.
 *
 * numpy.ma as TiTiler runs it: the Python ints become int64 arrays, so integer bands are multiplied
 * exactly (int64) and divided in float64, float bands computed in float64 throughout. Each masked
 * operation keeps its left operand's data where masked, and each division also masks a non-finite
 * quotient; so the luma is masked where any of the three bands is (or a float band's luma is not
 * finite), and a masked pixel holds r if r is masked, else r·299/1000 if g is, else the first two
 * terms. Bitonal's masked pixels are 0. Grayscale needs three bands and bitonal one or three, as
 * TiTiler's ValueError says (a 500 there, a 400 here).
 */
import { badRequest } from '../../errors.js';
import { ARRAY_OF, type ImageData } from '../image-data.js';
import { castToDtype } from '../statistics.js';
import { modelFields, resultImage, type Algorithm } from './algorithm.js';
import { validateModel } from './pydantic.js';

/** These algorithms have no parameters. */
export type GrayscaleParams = Record<string, never>;

/** The luma of the first three bands in float64, with its mask (255 valid), as numpy.ma leaves them. */
function luma(img: ImageData): { values: Float64Array; mask: Uint8Array } {
  const n = img.width * img.height;
  const [r, g, b] = [img.bands[0]!, img.bands[1]!, img.bands[2]!];
  const [mr, mg, mb] = [img.masks[0]!, img.masks[1]!, img.masks[2]!];
  const values = new Float64Array(n);
  const mask = new Uint8Array(n);
  /** `x * weight / 1000` as numpy.ma does it: the data (left operand where masked) and whether it is masked. */
  const term = (x: number, weight: number, masked: boolean): [number, boolean] => {
    if (masked) return [x, true];
    const product = x * weight;
    const q = product / 1000;
    return Number.isFinite(q) ? [q, false] : [product, true];
  };
  for (let i = 0; i < n; i++) {
    const [tr, maskedR] = term(r[i]!, 299, mr[i] === 0);
    const [tg, maskedG] = term(g[i]!, 587, mg[i] === 0);
    const [tb, maskedB] = term(b[i]!, 114, mb[i] === 0);
    const partial = maskedR || maskedG ? tr : tr + tg;
    const masked = maskedR || maskedG || maskedB;
    values[i] = masked ? partial : partial + tb;
    if (!masked) mask[i] = 255;
  }
  return { values, mask };
}

const FIELDS_GRAYSCALE = modelFields({ inputNbands: 'optionalInt', outputNbands: 'plainInt', outputDtype: 'optionalStr' }, []);
const FIELDS_BITONAL = modelFields({ inputNbands: 'optionalInt', outputNbands: 'plainInt', outputDtype: 'str' }, []);

export const grayscale: Algorithm<GrayscaleParams> = {
  id: 'grayscale',
  modelName: 'ToGrayScale',
  info: {
    title: 'Transform a RGB Image to Grayscale',
    description: 'Transform a RGB Image to Grayscale using the ITU-R 601-2 luma.',
    inputs: { nbands: null },
    outputs: { nbands: 1, dtype: null, min: null, max: null },
    parameters: {},
  },
  fields: FIELDS_GRAYSCALE,
  parseParams(raw) {
    validateModel('ToGrayScale', FIELDS_GRAYSCALE, raw);
    return {};
  },
  apply(img) {
    if (img.bands.length < 3) throw badRequest(`Cannot apply \`grayscale\` algorithm on image with ${img.bands.length} bands.`);
    const { values, mask } = luma(img);
    const out = new ARRAY_OF[img.dtype](values.length);
    for (let i = 0; i < values.length; i++) out[i] = castToDtype(values[i]!, img.dtype);
    return resultImage(img, { width: img.width, height: img.height, dtype: img.dtype, bands: [out], masks: [mask], bandNames: ['grayscale'] });
  },
};

export const bitonal: Algorithm<GrayscaleParams> = {
  id: 'bitonal',
  modelName: 'ToBitonal',
  info: {
    title: 'Transform an Image to Bitonal',
    description: 'All values larger than 127 are set to 255 (white), all other values to 0 (black).',
    inputs: { nbands: null },
    outputs: { nbands: 1, dtype: 'uint8', min: null, max: null },
    parameters: {},
  },
  fields: FIELDS_BITONAL,
  parseParams(raw) {
    validateModel('ToBitonal', FIELDS_BITONAL, raw);
    return {};
  },
  apply(img) {
    const count = img.bands.length;
    if (count !== 1 && count !== 3) throw badRequest(`Cannot apply \`bitonal\` algorithm on image with ${count} bands.`);
    const { values, mask } = count === 3 ? luma(img) : { values: img.bands[0]!, mask: img.masks[0]! };
    const out = new Uint8Array(values.length);
    for (let i = 0; i < values.length; i++) if (mask[i] !== 0 && values[i]! > 127) out[i] = 255;
    return resultImage(img, { width: img.width, height: img.height, dtype: 'uint8', bands: [out], masks: [mask], bandNames: ['bitonal'] });
  },
};
