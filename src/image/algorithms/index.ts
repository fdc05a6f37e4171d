/**
 * The algorithm registry, in TiTiler 0.18.10's order: the metadata `/algorithms` serves and the
 * lookup the image routes use to validate `algorithm_params` and apply the step.
 */
import type { ImageData } from '../image-data.js';
import { ALGORITHM_IDS, type Algorithm, type AlgorithmId, type AlgorithmInfo } from './algorithm.js';
import { contours } from './contours.js';
import { hillshade } from './hillshade.js';
import { normalizedIndex } from './normalized-index.js';
import { terrainrgb } from './terrainrgb.js';
import { terrarium } from './terrarium.js';

export { ALGORITHM_IDS, type Algorithm, type AlgorithmId, type AlgorithmInfo, type ParameterInfo } from './algorithm.js';

/**
 * Each algorithm with its parameters' type erased; `apply` must get what the same algorithm's
 * `parseParams` returned (`prepareAlgorithm` pairs them).
 */
const REGISTRY: Record<AlgorithmId, Algorithm<unknown>> = {
  hillshade,
  contours,
  normalizedIndex,
  terrarium,
  terrainrgb,
};

/** Every algorithm's metadata, keyed by id, in TiTiler's order. */
export const ALGORITHMS: Readonly<Record<AlgorithmId, AlgorithmInfo>> = Object.fromEntries(ALGORITHM_IDS.map((id) => [id, REGISTRY[id].info])) as Record<
  AlgorithmId,
  AlgorithmInfo
>;

export function isAlgorithmId(name: string): name is AlgorithmId {
  return (ALGORITHM_IDS as readonly string[]).includes(name);
}

export function getAlgorithm(name: string): Algorithm<unknown> | undefined {
  return isAlgorithmId(name) ? REGISTRY[name] : undefined;
}

/** A validated algorithm with its parameters, ready to run on images. */
export interface AlgorithmStep {
  id: AlgorithmId;
  /** The parameters as given, already validated: enough to prepare the same step in another thread. */
  params: Record<string, unknown>;
  apply(img: ImageData): ImageData;
}

/** Validates the parameters (400 with pydantic's text when they are wrong) and binds them. */
export function prepareAlgorithm(id: AlgorithmId, raw: Record<string, unknown>): AlgorithmStep {
  const algorithm = REGISTRY[id];
  const params = algorithm.parseParams(raw);
  return { id, params: raw, apply: (img) => algorithm.apply(img, params) };
}
