/**
 * What a post-processing algorithm is (TiTiler's `titiler.core.algorithm`): metadata served by
 * `/algorithms`, the pydantic-style fields its `algorithm_params` are validated against, and the
 * whole-image transform. Each algorithm lives in its own module; `index.ts` is the registry.
 *
 * Two TiTiler generations: 0.18.10 has five algorithms, 2.4.0 eighteen
 * (titiler/core/algorithm/__init__.py of titiler.core 2.4.0). The thirteen new ones are told apart
 * by their names and answer whatever the deployment's generation; the five old ones changed in 2.x
 * (hillshade's defaults and `z_exaggeration`, terrarium's and terrainrgb's `nodata_height`), so
 * each generation has its own model of those.
 */
import type { BBox } from '../../tms/grid.js';
import type { BandArray, DType, ImageData } from '../image-data.js';
import type { FieldKind, FieldSpec, NumberField } from './pydantic.js';

/** Which TiTiler generation answers where the two collide (the setting TESSERA_TITILER_API). */
export type TitilerApi = '0.18' | '2';

/** TiTiler 0.18.10's algorithms, in its order (what `/algorithms` lists under 0.18). */
export const ALGORITHM_IDS_018 = ['hillshade', 'contours', 'normalizedIndex', 'terrarium', 'terrainrgb'] as const;

/** Every algorithm tessera has: TiTiler 2.4.0's, in its order (what `/algorithms` lists under 2). */
export const ALGORITHM_IDS = [
  'hillshade',
  'slope',
  'contours',
  'normalizedIndex',
  'terrarium',
  'terrainrgb',
  'cast',
  'ceil',
  'floor',
  'min',
  'max',
  'median',
  'mean',
  'std',
  'var',
  'sum',
  'grayscale',
  'bitonal',
] as const;
export type AlgorithmId = (typeof ALGORITHM_IDS)[number];

/** One parameter as TiTiler's metadata lists it (the field's JSON schema, keys in its order). */
export interface ParameterInfo {
  /** `null` for an optional parameter without default (`nodata_height`). */
  default: number | null;
  maximum: number;
  minimum: number;
  title: string;
  /** JSON-schema type: 'integer' values print as Python ints, 'number' values as floats. */
  type: 'integer' | 'number';
  /** The field's description, where the model gives one. */
  description?: string;
  /** `Optional[...]`: the schema is `anyOf` the bounded number and null. */
  nullable?: boolean;
}

/** TiTiler's `AlgorithmMetadata`, with plain numbers (the API layer marks the Python floats). */
export interface AlgorithmInfo {
  title: string;
  description: string;
  /** `nbands` null: any number of bands. */
  inputs: { nbands: number | null };
  /**
   * `dtype` null: the input's. `min`/`max` are lists of Python floats when set, of ints where the
   * model types them `Sequence[int]` (`integerRange`).
   */
  outputs: { nbands: number | null; dtype: DType | null; min: number[] | null; max: number[] | null; integerRange?: boolean };
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
  /** Its output bands are its input's, their descriptions passed on (TiTiler 2.x's ops: cast, ceil, floor). */
  passesDescriptionsOn?: true;
}

/** Python's `str.title()` of a field name, as pydantic titles JSON-schema properties. */
function fieldTitle(name: string): string {
  return name
    .split('_')
    .map((w) => (w === '' ? w : w[0]!.toUpperCase() + w.slice(1).toLowerCase()))
    .join(' ');
}

/**
 * How a model types its metadata fields: BaseAlgorithm's `Optional[int]`, `Optional[str]` and
 * `Optional[Sequence]`, unless the algorithm overrides them (`input_nbands: int = 1`,
 * `output_min: Sequence[float]` …). The defaults are what the 0.18 models have.
 */
export interface MetadataKinds {
  inputNbands?: FieldKind;
  outputNbands?: FieldKind;
  outputDtype?: FieldKind;
  outputRange?: FieldKind;
}

/**
 * The fields of a TiTiler algorithm model in pydantic's order: BaseAlgorithm's metadata fields, then
 * `title` and `description`, then the parameters.
 */
export function modelFields(kinds: MetadataKinds, params: readonly NumberField[]): FieldSpec[] {
  const range = kinds.outputRange ?? 'optionalSequence';
  return [
    { name: 'input_nbands', kind: kinds.inputNbands ?? 'plainInt' },
    { name: 'output_nbands', kind: kinds.outputNbands ?? 'plainInt' },
    { name: 'output_dtype', kind: kinds.outputDtype ?? 'str' },
    { name: 'output_min', kind: range },
    { name: 'output_max', kind: range },
    { name: 'title', kind: 'str' },
    { name: 'description', kind: 'str' },
    ...params,
  ];
}

/** The `parameters` metadata of an algorithm's numeric fields. */
export function describeParameters(params: readonly NumberField[]): Record<string, ParameterInfo> {
  const out: Record<string, ParameterInfo> = {};
  for (const p of params) {
    const info: ParameterInfo = {
      default: p.default,
      maximum: p.maximum,
      minimum: p.minimum,
      title: fieldTitle(p.name),
      type: p.kind === 'int' ? 'integer' : 'number',
    };
    if (p.description !== undefined) info.description = p.description;
    if (p.nullable) info.nullable = true;
    out[p.name] = info;
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
