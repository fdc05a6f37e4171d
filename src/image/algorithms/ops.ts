/**
 * `cast`, `ceil` and `floor` (TiTiler 2.4.0, titiler/core/algorithm/ops.py `CastToInt`, `Ceil`,
 * `Floor`): every band to uint8, as is or rounded up or down first. numpy's `astype("uint8")` on
 * x86-64: floats truncated toward zero through int32 and their low byte kept (NaN, ±Infinity and
 * values beyond int32 give 0, so 300.7 → 44 and -1.5 → 255), integers keep their low byte. Integer
 * bands pass `numpy.ceil`/`floor` unchanged. Masked pixels are converted too; each band keeps its
 * mask and name (TiTiler passes `band_descriptions` on).
 */
import type { BandArray, ImageData } from '../image-data.js';
import { modelFields, resultImage, type Algorithm, type AlgorithmId } from './algorithm.js';
import { toUint8 } from './numeric.js';
import { validateModel } from './pydantic.js';

/** These algorithms have no parameters. */
export type OpsParams = Record<string, never>;

// `input_nbands`/`output_nbands` stay BaseAlgorithm's `int | None`; `output_min: Sequence[int] = [0]`.
const FIELDS = modelFields({ inputNbands: 'optionalInt', outputNbands: 'optionalInt', outputRange: 'intSequence' }, []);

function toUint8Image(img: ImageData, round: ((x: number) => number) | undefined): ImageData {
  const isFloat = img.dtype === 'float32' || img.dtype === 'float64';
  const bands = img.bands.map((band: BandArray): Uint8Array => {
    const out = new Uint8Array(band.length);
    if (round && isFloat) for (let i = 0; i < band.length; i++) out[i] = toUint8(round(band[i]!), img.dtype);
    else for (let i = 0; i < band.length; i++) out[i] = toUint8(band[i]!, img.dtype);
    return out;
  });
  return resultImage(img, { width: img.width, height: img.height, dtype: 'uint8', bands, masks: [...img.masks], bandNames: [...img.bandNames] });
}

function op(id: AlgorithmId, modelName: string, title: string, round: ((x: number) => number) | undefined): Algorithm<OpsParams> {
  return {
    id,
    modelName,
    info: {
      title,
      description: `${title}.`,
      inputs: { nbands: null },
      outputs: { nbands: null, dtype: 'uint8', min: [0], max: [255], integerRange: true },
      parameters: {},
    },
    fields: FIELDS,
    parseParams(raw) {
      validateModel(modelName, FIELDS, raw);
      return {};
    },
    apply: (img) => toUint8Image(img, round),
    passesDescriptionsOn: true,
  };
}

export const cast = op('cast', 'CastToInt', 'Cast data to Integer', undefined);
export const ceil = op('ceil', 'Ceil', 'Round data to the smallest integer', Math.ceil);
export const floor = op('floor', 'Floor', 'Round data to the largest integer', Math.floor);
