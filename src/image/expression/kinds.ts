/**
 * numexpr's five value kinds and how they map to numpy dtypes and to the typed arrays the
 * evaluator computes in. numexpr types every node of an expression by kind (never by the input's
 * exact dtype: uint8…uint16 become 'int', uint32 becomes 'long'), so the engine does the same.
 */
import type { BandArray, DType } from '../image-data.js';

/** numexpr's kinds, lowest first: bool < int (int32) < long (int64) < float (float32) < double (float64). */
export type Kind = 'bool' | 'int' | 'long' | 'float' | 'double';

const RANK: Record<Kind, number> = { bool: 0, int: 1, long: 2, float: 3, double: 4 };

export const kindRank = (k: Kind): number => RANK[k];

/** numexpr's `commonKind`: the highest-ranked kind (note long + float → float, unlike numpy). */
export function commonKind(kinds: readonly Kind[]): Kind {
  let best: Kind = 'bool';
  for (const k of kinds) if (RANK[k] > RANK[best]) best = k;
  return best;
}

export const maxKind = (a: Kind, b: Kind): Kind => (RANK[a] >= RANK[b] ? a : b);
export const minKind = (a: Kind, b: Kind): Kind => (RANK[a] <= RANK[b] ? a : b);

export const isIntegerKind = (k: Kind): boolean => k === 'int' || k === 'long';
export const isFloatKind = (k: Kind): boolean => k === 'float' || k === 'double';

/** numexpr's `getType`: the kind an input array of this dtype is evaluated as. */
export const KIND_OF_DTYPE: Record<DType, Kind> = {
  bool: 'bool',
  uint8: 'int',
  int8: 'int',
  uint16: 'int',
  int16: 'int',
  int32: 'int',
  uint32: 'long',
  int64: 'long',
  // numexpr has no uint64; only an algorithm (a sum of unsigned bands) makes it, after any expression.
  uint64: 'double',
  float32: 'float',
  float64: 'double',
};

/** The numpy dtype of a result of this kind. */
export const DTYPE_OF_KIND: Record<Kind, DType> = {
  bool: 'bool',
  int: 'int32',
  long: 'int64',
  float: 'float32',
  double: 'float64',
};

/** Storage of each kind while computing. 'long' is held in doubles: exact up to 2^53. */
export type Storage = 'u8' | 'i32' | 'f32' | 'f64';

export const STORAGE_OF_KIND: Record<Kind, Storage> = { bool: 'u8', int: 'i32', long: 'f64', float: 'f32', double: 'f64' };

export function allocateStorage(storage: Storage, length: number): BandArray {
  switch (storage) {
    case 'u8':
      return new Uint8Array(length);
    case 'i32':
      return new Int32Array(length);
    case 'f32':
      return new Float32Array(length);
    case 'f64':
      return new Float64Array(length);
  }
}

/**
 * numpy's `result_type` restricted to the dtypes numexpr can produce: what
 * `numpy.ma.MaskedArray([block, block, …])` stacks the blocks as.
 */
export function stackDtype(dtypes: readonly DType[]): DType {
  const has = (d: DType): boolean => dtypes.includes(d);
  if (has('float64')) return 'float64';
  if (has('float32')) return has('int32') || has('int64') ? 'float64' : 'float32';
  if (has('int64')) return 'int64';
  if (has('int32')) return 'int32';
  return 'bool';
}
