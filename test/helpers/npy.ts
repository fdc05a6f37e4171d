/**
 * Reads NumPy .npy files (format 1.0/2.0, little-endian, C order) into float64 values, so tests can
 * compare the arrays both servers return for `.npy` requests.
 */
export interface NpyArray {
  /** numpy's dtype descriptor, e.g. '<u2', '|u1', '<f4'. */
  descr: string;
  shape: number[];
  values: Float64Array;
}

const READERS: Record<string, { size: number; read: (v: DataView, o: number) => number }> = {
  '|u1': { size: 1, read: (v, o) => v.getUint8(o) },
  '|i1': { size: 1, read: (v, o) => v.getInt8(o) },
  '|b1': { size: 1, read: (v, o) => v.getUint8(o) },
  '<u2': { size: 2, read: (v, o) => v.getUint16(o, true) },
  '<i2': { size: 2, read: (v, o) => v.getInt16(o, true) },
  '<u4': { size: 4, read: (v, o) => v.getUint32(o, true) },
  '<i4': { size: 4, read: (v, o) => v.getInt32(o, true) },
  '<i8': { size: 8, read: (v, o) => Number(v.getBigInt64(o, true)) },
  '<u8': { size: 8, read: (v, o) => Number(v.getBigUint64(o, true)) },
  '<f4': { size: 4, read: (v, o) => v.getFloat32(o, true) },
  '<f8': { size: 8, read: (v, o) => v.getFloat64(o, true) },
};

export function parseNpy(buf: Buffer): NpyArray {
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error('not an .npy file');
  const major = buf[6]!;
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || shapeText === undefined) throw new Error(`bad .npy header: ${header}`);
  if (/'fortran_order':\s*True/.test(header)) throw new Error('fortran order not supported');
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  const reader = READERS[descr];
  if (!reader) throw new Error(`unsupported dtype ${descr}`);
  const count = shape.reduce((a, b) => a * b, 1);
  const view = new DataView(buf.buffer, buf.byteOffset + start + headerLen, count * reader.size);
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) values[i] = reader.read(view, i * reader.size);
  return { descr, shape, values };
}
