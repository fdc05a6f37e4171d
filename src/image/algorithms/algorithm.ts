/**
 * What a post-processing algorithm is (TiTiler's `titiler.core.algorithm`): metadata served by
 * `/algorithms`, the pydantic-style fields its `algorithm_params` are validated against, and the
 * whole-image transform. Each algorithm lives in its own module; `index.ts` is the registry.
 */
import type { BBox } from '../../tms/grid.js';
import type { BandArray, DType, ImageData } from '../image-data.js';
import type { FieldSpec, NumberField } from './pydantic.js';

export const ALGORITHM_IDS = ['hillshade', 'contours', 'normalizedIndex', 'terrarium', 'terrainrgb'] as const;
export type AlgorithmId = (typeof ALGORITHM_IDS)[number];

/** One parameter as TiTiler's metadata lists it (the field's JSON schema, keys in its order). */
export interface ParameterInfo {
  default: number;
  maximum: number;
  minimum: number;
  title: string;
  /** JSON-schema type: 'integer' values print as Python ints, 'number' values as floats. */
  type: 'integer' | 'number';
}

/** TiTiler's `AlgorithmMetadata`, with plain numbers (the API layer marks the Python floats). */
export interface AlgorithmInfo {
  title: string;
  description: string;
  inputs: { nbands: number };
  /** `min`/`max` are lists of Python floats when set. */
  outputs: { nbands: number; dtype: DType; min: number[] | null; max: number[] | null };
  parameters: Record<string, ParameterInfo>;
}

export interface Algorithm<P> {
  id: AlgorithmId;
  /** The pydantic model's class name, which validation errors name. */
  modelName: string;
  info: AlgorithmInfo;
  /** Every field of the model in pydantic's order (metadata fields first), for validation. */
  fields: readonly FieldSpec[];
  /** Validates a decoded `algorithm_params` object; throws a 400 TesseraError with pydantic's text. */
  parseParams(raw: Record<string, unknown>): P;
  /** Applies the algorithm; the input is not modified (masks may be shared with the output). */
  apply(img: ImageData, params: P): ImageData;
}

/** Python's `str.title()` of a field name, as pydantic titles JSON-schema properties. */
function fieldTitle(name: string): string {
  return name
    .split('_')
    .map((w) => (w === '' ? w : w[0]!.toUpperCase() + w.slice(1).toLowerCase()))
    .join(' ');
}

/**
 * The fields of a TiTiler algorithm model in pydantic's order: BaseAlgorithm's metadata fields, then
 * `title` and `description`, then the parameters. `outputRange` is how the model types
 * `output_min`/`output_max` (`Optional[Sequence]` on the base class, `Sequence[float]` where set).
 */
export function modelFields(outputRange: 'optionalSequence' | 'floatSequence', params: readonly NumberField[]): FieldSpec[] {
  return [
    { name: 'input_nbands', kind: 'plainInt' },
    { name: 'output_nbands', kind: 'plainInt' },
    { name: 'output_dtype', kind: 'str' },
    { name: 'output_min', kind: outputRange },
    { name: 'output_max', kind: outputRange },
    { name: 'title', kind: 'str' },
    { name: 'description', kind: 'str' },
    ...params,
  ];
}

/** The `parameters` metadata of an algorithm's numeric fields. */
export function describeParameters(params: readonly NumberField[]): Record<string, ParameterInfo> {
  const out: Record<string, ParameterInfo> = {};
  for (const p of params) {
    out[p.name] = {
      default: p.default,
      maximum: p.maximum,
      minimum: p.minimum,
      title: fieldTitle(p.name),
      type: p.kind === 'int' ? 'integer' : 'number',
    };
  }
  return out;
}

/**
 * The image an algorithm returns: TiTiler builds a fresh ImageData from the new pixels with the
 * input's CRS and assets, so dataset statistics (and any cutline) do not carry over.
 */
export function resultImage(
  img: ImageData,
  out: { width: number; height: number; dtype: DType; bands: BandArray[]; masks: Uint8Array[]; bandNames?: string[]; bounds?: BBox },
): ImageData {
  const result: ImageData = {
    width: out.width,
    height: out.height,
    dtype: out.dtype,
    bands: out.bands,
    masks: out.masks,
    // rio-tiler names unnamed bands b1, b2, …
    bandNames: out.bandNames ?? out.bands.map((_, i) => `b${i + 1}`),
    bounds: out.bounds ?? [...img.bounds],
    crs: img.crs,
  };
  if (img.assets !== undefined) result.assets = img.assets;
  return result;
}
