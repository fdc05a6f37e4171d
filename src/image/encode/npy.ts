/**
 * A writer of NumPy's `.npy` format (version 1.0), byte for byte what `numpy.save` writes for the
 * (bands, height, width) array TiTiler's `npy` output holds: the data bands, then the mask as one
 * more band when it is returned. Appending the uint8 mask promotes the array's dtype the way
 * `numpy.concatenate` does (bool → uint8, int8 → int16, every other dtype already holds 0–255).
 */
import { endianness } from 'node:os';
import type { DType } from '../image-data.js';
import type { RasterData } from './types.js';

interface NpyType {
  /** numpy's `descr`: byte order (`|` when it does not apply), kind, item size. */
  descr: string;
  bytes: number;
}

const NPY_TYPES: Record<DType, NpyType> = {
  bool: { descr: '|b1', bytes: 1 },
  uint8: { descr: '|u1', bytes: 1 },
  int8: { descr: '|i1', bytes: 1 },
  uint16: { descr: '<u2', bytes: 2 },
  int16: { descr: '<i2', bytes: 2 },
  uint32: { descr: '<u4', bytes: 4 },
  int32: { descr: '<i4', bytes: 4 },
  int64: { descr: '<i8', bytes: 8 },
  uint64: { descr: '<u8', bytes: 8 },
  float32: { descr: '<f4', bytes: 4 },
  float64: { descr: '<f8', bytes: 8 },
};

/** `numpy.result_type(dtype, uint8)`: the dtype of data with a uint8 mask band appended. */
function dtypeWithMask(dtype: DType): DType {
  if (dtype === 'bool') return 'uint8';
  if (dtype === 'int8') return 'int16';
  return dtype;
}

/** numpy pads the shape's first axis to 21 digits' room, then the whole header to 64 bytes. */
const GROWTH_AXIS_MAX_DIGITS = 21;
const ARRAY_ALIGN = 64;
const PREAMBLE_BYTES = 10; // magic (6) + version (2) + header length (2)

function header(descr: string, shape: readonly number[]): Buffer {
  const dict =
    `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}), }` +
    ' '.repeat(Math.max(0, GROWTH_AXIS_MAX_DIGITS - String(shape[0]).length));
  const withNewline = dict.length + 1;
  const pad = ARRAY_ALIGN - ((PREAMBLE_BYTES + withNewline) % ARRAY_ALIGN);
  const text = `${dict + ' '.repeat(pad)}\n`;
  const out = Buffer.alloc(PREAMBLE_BYTES + text.length);
  out.write('\x93NUMPY', 0, 'latin1');
  out[6] = 1;
  out[7] = 0;
  out.writeUInt16LE(text.length, 8);
  out.write(text, PREAMBLE_BYTES, 'latin1');
  return out;
}

/** Typed views below write native byte order, which must be the file's little-endian order. */
const LITTLE_ENDIAN = endianness() === 'LE';

type Writable = { set(values: ArrayLike<number>): void };

function viewOf(dtype: DType, buffer: ArrayBuffer, offset: number, length: number): Writable {
  switch (dtype) {
    case 'bool':
    case 'uint8':
      return new Uint8Array(buffer, offset, length);
    case 'int8':
      return new Int8Array(buffer, offset, length);
    case 'uint16':
      return new Uint16Array(buffer, offset, length);
    case 'int16':
      return new Int16Array(buffer, offset, length);
    case 'uint32':
      return new Uint32Array(buffer, offset, length);
    case 'int32':
      return new Int32Array(buffer, offset, length);
    case 'float32':
      return new Float32Array(buffer, offset, length);
    case 'float64':
      return new Float64Array(buffer, offset, length);
    case 'int64':
    case 'uint64':
      throw new Error('64-bit integers are written by writeInt64');
  }
}

/**
 * int64 and uint64 values live in a Float64Array (exact to 2^53): split each into two 32-bit
 * little-endian words. The doubles that stand for the types' largest values (2^63, 2^64: a mask band
 * in the data's dtype) are written as those values (numpy's iinfo max), not wrapped around to 0.
 */
function writeInt64(values: ArrayLike<number>, buffer: ArrayBuffer, offset: number, unsigned: boolean): void {
  const words = new Uint32Array(buffer, offset, values.length * 2);
  const top = unsigned ? 2 ** 64 : 2 ** 63;
  const topHigh = unsigned ? 0xffffffff : 0x7fffffff;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v >= top) {
      words[2 * i] = 0xffffffff;
      words[2 * i + 1] = topHigh;
      continue;
    }
    const high = Math.floor(v / 4294967296);
    words[2 * i] = v - high * 4294967296;
    words[2 * i + 1] = high; // Uint32Array stores the two's complement of a negative high word
  }
}

/** The `.npy` file of the bands (and the mask as a last band when given). */
export function encodeNpy(data: RasterData, mask: Uint8Array | undefined): Buffer {
  if (!LITTLE_ENDIAN) throw new Error('the npy writer needs a little-endian host');
  const dtype = mask ? dtypeWithMask(data.dtype) : data.dtype;
  const type = NPY_TYPES[dtype];
  const planes: readonly ArrayLike<number>[] = mask ? [...data.bands, mask] : data.bands;
  const pixels = data.width * data.height;
  const head = header(type.descr, [planes.length, data.height, data.width]);
  // One ArrayBuffer owned here, so every band's view is aligned (the header is a multiple of 64).
  const body = new ArrayBuffer(head.length + planes.length * pixels * type.bytes);
  const out = Buffer.from(body);
  head.copy(out, 0);
  planes.forEach((plane, b) => {
    const offset = head.length + b * pixels * type.bytes;
    if (dtype === 'int64' || dtype === 'uint64') writeInt64(plane, body, offset, dtype === 'uint64');
    else viewOf(dtype, body, offset, pixels).set(plane);
  });
  return out;
}
