/**
 * The algorithm registry: the metadata `/algorithms` serves and the lookup the image routes use to
 * validate `algorithm_params` and apply the step. TiTiler 2.4.0's eighteen algorithms
 * (titiler/core/algorithm/__init__.py `default_algorithms`, in its order); 0.18.10 lists its first
 * five, in its own order. The thirteen 2.x names are told apart by their names and work under
 * either generation; hillshade, contours, terrarium and terrainrgb have one version per generation
 * (normalizedIndex did not change).
 */
import type { ImageData } from '../image-data.js';
import { ALGORITHM_IDS, ALGORITHM_IDS_018, type Algorithm, type AlgorithmId, type AlgorithmInfo, type TitilerApi } from './algorithm.js';
import { max, mean, median, min, std, sum, variance } from './band-math.js';
import { contours, contours2 } from './contours.js';
import { bitonal, grayscale } from './grayscale.js';
import { hillshade, hillshade2 } from './hillshade.js';
import { normalizedIndex } from './normalized-index.js';
import { cast, ceil, floor } from './ops.js';
import { slope } from './slope.js';
import { terrainrgb, terrainrgb2 } from './terrainrgb.js';
import { terrarium, terrarium2 } from './terrarium.js';

export {
  ALGORITHM_IDS,
  ALGORITHM_IDS_018,
  type Algorithm,
  type AlgorithmId,
  type AlgorithmInfo,
  type ParameterInfo,
  type TitilerApi,
} from './algorithm.js';

/**
 * Each algorithm with its parameters' type erased; `apply` must get what the same algorithm's
 * `parseParams` returned (`prepareAlgorithm` pairs them).
 */
type Registry = Record<AlgorithmId, Algorithm<unknown>>;

/** TiTiler 2.4.0's models. */
const REGISTRY_2: Registry = {
  hillshade: hillshade2,
  slope,
  contours: contours2,
  normalizedIndex,
  terrarium: terrarium2,
  terrainrgb: terrainrgb2,
  cast,
  ceil,
  floor,
  min,
  max,
  median,
  mean,
  std,
  var: variance,
  sum,
  grayscale,
  bitonal,
};

/** Under 0.18: TiTiler 0.18.10's models of its five, 2.4.0's of the names it does not have. */
const REGISTRY_018: Registry = { ...REGISTRY_2, hillshade, contours, terrarium, terrainrgb };

const REGISTRIES: Record<TitilerApi, Registry> = { '0.18': REGISTRY_018, '2': REGISTRY_2 };

/** The ids `/algorithms` lists for a generation, in that TiTiler's order. */
export function listedAlgorithms(api: TitilerApi): readonly AlgorithmId[] {
  return api === '2' ? ALGORITHM_IDS : ALGORITHM_IDS_018;
}

/** One algorithm's metadata as the generation's TiTiler describes it. */
export function algorithmInfo(id: AlgorithmId, api: TitilerApi): AlgorithmInfo {
  return REGISTRIES[api][id].info;
}

export function isAlgorithmId(name: string): name is AlgorithmId {
  return (ALGORITHM_IDS as readonly string[]).includes(name);
}

export function getAlgorithm(name: string, api: TitilerApi = '0.18'): Algorithm<unknown> | undefined {
  return isAlgorithmId(name) ? REGISTRIES[api][name] : undefined;
}

/** Whether an algorithm's output bands keep the descriptions of its input's (Algorithm.passesDescriptionsOn). */
export function passesDescriptionsOn(ref: AlgorithmRef): boolean {
  return REGISTRIES[ref.api][ref.id].passesDescriptionsOn === true;
}

/** What names an algorithm step in plain data (a render spec crossing threads): id, generation, parameters as given. */
export interface AlgorithmRef {
  id: AlgorithmId;
  api: TitilerApi;
  /** The parameters as given, already validated: enough to prepare the same step in another thread. */
  params: Record<string, unknown>;
}

/** A validated algorithm with its parameters, ready to run on images. */
export interface AlgorithmStep extends AlgorithmRef {
  apply(img: ImageData): ImageData;
}

/** Validates the parameters (400 with pydantic's text when they are wrong) and binds them. */
export function prepareAlgorithm(ref: AlgorithmRef): AlgorithmStep {
  const algorithm = REGISTRIES[ref.api][ref.id];
  const params = algorithm.parseParams(ref.params);
  return { ...ref, apply: (img) => algorithm.apply(img, params) };
}
