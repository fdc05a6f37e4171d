/**
 * numpy's pairwise summation of float64 sequences, reproduced bit for bit.
 *
 * numpy's `add.reduce` on a contiguous float64 array starts from the identity 0.0 and adds a pairwise
 * sum: blocks of at most 128 values are summed with eight interleaved accumulators, longer runs are
 * split in two (at a multiple of 8) and the halves added. The grouping changes the rounding, so
 * statistics that must agree with rio-tiler to the last bit (sum, mean, std) follow the same tree.
 *
 * The sequence is never materialised whole: callers provide a `fill` that writes one block of
 * (at most 128) terms into a scratch buffer, so masked sums, weighted sums and squared deviations are
 * summed straight from the band without an extra full-size array.
 */

/** numpy's PW_BLOCKSIZE. */
const BLOCK = 128;

/** Writes terms `start … start+length-1` of the sequence into `out[0 … length-1]`. */
export type BlockFill = (start: number, length: number, out: Float64Array) => void;

/** `numpy.add.reduce` of a float64 sequence of `length` terms produced block by block by `fill`. */
export function pairwiseSum(length: number, fill: BlockFill): number {
  const scratch = new Float64Array(BLOCK);
  // The reduction adds the pairwise result to the identity (which also turns -0.0 into 0.0).
  return 0 + sumRange(0, length, fill, scratch);
}

function sumRange(start: number, length: number, fill: BlockFill, scratch: Float64Array): number {
  if (length <= BLOCK) {
    fill(start, length, scratch);
    return sumBlock(scratch, length);
  }
  let half = Math.floor(length / 2);
  half -= half % 8;
  return sumRange(start, half, fill, scratch) + sumRange(start + half, length - half, fill, scratch);
}

function sumBlock(a: Float64Array, n: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[i]!;
    return res;
  }
  let r0 = a[0]!,
    r1 = a[1]!,
    r2 = a[2]!,
    r3 = a[3]!,
    r4 = a[4]!,
    r5 = a[5]!,
    r6 = a[6]!,
    r7 = a[7]!;
  const whole = n - (n % 8);
  let i = 8;
  for (; i < whole; i += 8) {
    r0 += a[i]!;
    r1 += a[i + 1]!;
    r2 += a[i + 2]!;
    r3 += a[i + 3]!;
    r4 += a[i + 4]!;
    r5 += a[i + 5]!;
    r6 += a[i + 6]!;
    r7 += a[i + 7]!;
  }
  let res = r0 + r1 + (r2 + r3) + (r4 + r5 + (r6 + r7));
  for (; i < n; i++) res += a[i]!;
  return res;
}

/** Sum of a whole array of numbers (read as float64), numpy's `arr.astype('f8').sum()`. */
export function sumOf(values: ArrayLike<number>): number {
  return pairwiseSum(values.length, (start, length, out) => {
    for (let k = 0; k < length; k++) out[k] = values[start + k]!;
  });
}

/**
 * The same tree in float32 arithmetic (every addition rounded to float32), as numpy sums a float32
 * array: rio-tiler's coverage-weighted sums are float32 (uint16 × float32 coverage → float32).
 */
export function pairwiseSumFloat32(length: number, fill: BlockFill): number {
  const scratch = new Float64Array(BLOCK);
  return Math.fround(0 + sumRangeFloat32(0, length, fill, scratch));
}

function sumRangeFloat32(start: number, length: number, fill: BlockFill, scratch: Float64Array): number {
  const f = Math.fround;
  if (length <= BLOCK) {
    fill(start, length, scratch);
    const a = scratch;
    const n = length;
    if (n < 8) {
      let res = 0;
      for (let i = 0; i < n; i++) res = f(res + a[i]!);
      return res;
    }
    const r = [f(a[0]!), f(a[1]!), f(a[2]!), f(a[3]!), f(a[4]!), f(a[5]!), f(a[6]!), f(a[7]!)];
    const whole = n - (n % 8);
    let i = 8;
    for (; i < whole; i += 8) for (let j = 0; j < 8; j++) r[j] = f(r[j]! + a[i + j]!);
    let res = f(f(f(r[0]! + r[1]!) + f(r[2]! + r[3]!)) + f(f(r[4]! + r[5]!) + f(r[6]! + r[7]!)));
    for (; i < n; i++) res = f(res + a[i]!);
    return res;
  }
  let half = Math.floor(length / 2);
  half -= half % 8;
  return f(sumRangeFloat32(start, half, fill, scratch) + sumRangeFloat32(start + half, length - half, fill, scratch));
}
