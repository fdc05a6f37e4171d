/**
 * Baseline JPEG encoding that yields the same DCT coefficients as TiTiler's: GDAL's JPEG driver in
 * TiTiler's rasterio wheels is built on IJG libjpeg 9, which subsamples chroma in the DCT domain
 * (a 16×16-sample transform keeping the 8×8 low frequencies) where libjpeg-turbo — under sharp and
 * Debian's GDAL — averages 2×2 pixels first. On smooth imagery the two land within a level or two;
 * on colormapped tiles with hard colour edges they differ by up to ~150 levels on a third of the
 * pixels. Computing the coefficients as libjpeg 9 does makes decoded pixels identical.
 *
 * What that takes, with libjpeg 9's defaults as GDAL uses them (quality 85, 4:2:0, integer DCT):
 * - RGB → YCbCr with the JFIF equations in 16-bit fixed point, rounded as libjpeg rounds them;
 * - luma: the 8×8 Loeffler–Ligtenberg–Moschytz integer DCT (13-bit constants, 2 extra bits
 *   between passes), outputs 8× the true DCT;
 * - chroma: a 16×16 integer DCT of the full-resolution plane giving the 8×8 low-frequency
 *   coefficients at the same 8× scale (the same fixed-point scheme on the 16-point kernel);
 * - quantization by 8·q with rounding half away from zero, q from the Annex K tables scaled to
 *   the quality as libjpeg scales them;
 * - edges: planes are extended by repeating the last column and row up to whole blocks/MCUs.
 * Huffman tables are optimized per image (two passes), as GDAL asks libjpeg to; they change the
 * file size, never the pixels. Arithmetic is exact in doubles (sums stay far below 2^53) and the
 * C right shifts are floor divisions by powers of two.
 */

import { badRequest } from '../../errors.js';

/** The frame header's 16-bit image size. */
const MAX_SIDE = 65535;

/** The JPEG Annex K example tables (luminance, chrominance), in row-major order. */
const LUMA_QUANT = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103,
  77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
const CHROMA_QUANT = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
];

/** ZIGZAG[k] = row-major index of the k-th coefficient in zig-zag order (walking the anti-diagonals). */
const ZIGZAG: Uint8Array = (() => {
  const order = new Uint8Array(64);
  let k = 0;
  for (let s = 0; s < 15; s++) {
    const lo = Math.max(0, s - 7);
    const hi = Math.min(7, s);
    // Even diagonals run bottom-left → top-right, odd ones top-right → bottom-left.
    for (let i = lo; i <= hi; i++) {
      const row = s % 2 === 0 ? s - i : i;
      order[k++] = row * 8 + (s - row);
    }
  }
  return order;
})();

/** libjpeg's quality scaling of a base table, limited to 1..255 (baseline). */
function scaledTable(base: readonly number[], quality: number): Uint8Array {
  const q = Math.min(100, Math.max(1, Math.round(quality)));
  const factor = q < 50 ? Math.floor(5000 / q) : 200 - q * 2;
  return Uint8Array.from(base, (v) => Math.min(255, Math.max(1, Math.floor((v * factor + 50) / 100))));
}

// ---- fixed-point DCTs ------------------------------------------------------------------------------
// Each transform is row pass then column pass. Pass 1 reads samples straight from the plane, centres
// them (−128 each, folded into the DC) and keeps PASS1_BITS extra bits; pass 2 removes them. The 8×8
// transform stays within int32 (8 + 13 + 2 bits ≤ 26, libjpeg's own bound), so its shifts are `>>`;
// the 16-point pass 2 can pass 2^31 (libjpeg's INT32 is 64-bit on LP64) and uses exact floors.

const CONST_BITS = 13;
const PASS1_BITS = 2;
/** round(x · 2^13): the fixed-point constants. */
const fix = (x: number): number => Math.floor(x * (1 << CONST_BITS) + 0.5);

const P1 = CONST_BITS - PASS1_BITS;
const P1_HALF = 1 << (P1 - 1);
const P2 = CONST_BITS + PASS1_BITS;
const P2_HALF = 1 << (P2 - 1);
const P2_16_SCALE = 2 ** -(CONST_BITS + PASS1_BITS + 2);
const P2_16_HALF = 2 ** (CONST_BITS + PASS1_BITS + 1);
const P2_16_DC_SCALE = 2 ** -(PASS1_BITS + 2);
const P2_16_DC_HALF = 2 ** (PASS1_BITS + 1);

// 8-point kernel constants, cK = sqrt(2)·cos(Kπ/16) combinations.
const F_0_298 = fix(0.298631336);
const F_0_390 = fix(0.390180644);
const F_0_541 = fix(0.5411961);
const F_0_765 = fix(0.765366865);
const F_0_899 = fix(0.899976223);
const F_1_175 = fix(1.175875602);
const F_1_501 = fix(1.50132111);
const F_1_847 = fix(1.847759065);
const F_1_961 = fix(1.96157056);
const F_2_053 = fix(2.053119869);
const F_2_562 = fix(2.562915447);
const F_3_072 = fix(3.072711026);

/**
 * The 8-point transform of s0..s7 into out[o + k·step]: pass 1 (`pass1`, samples) or pass 2
 * (pass-1 outputs). Odd outputs share the LL&M rotations; the rounding half is folded into z1.
 */
function dct8(
  s0: number,
  s1: number,
  s2: number,
  s3: number,
  s4: number,
  s5: number,
  s6: number,
  s7: number,
  out: Int32Array,
  o: number,
  step: number,
  pass1: boolean,
): void {
  let t0 = s0 + s7;
  let t1 = s1 + s6;
  let t2 = s2 + s5;
  let t3 = s3 + s4;
  const t10 = t0 + t3;
  let t12 = t0 - t3;
  const t11 = t1 + t2;
  let t13 = t1 - t2;
  t0 = s0 - s7;
  t1 = s1 - s6;
  t2 = s2 - s5;
  t3 = s3 - s4;
  const shift = pass1 ? P1 : P2;
  const half = pass1 ? P1_HALF : P2_HALF;
  if (pass1) {
    out[o] = (t10 + t11 - 8 * 128) << PASS1_BITS;
    out[o + 4 * step] = (t10 - t11) << PASS1_BITS;
  } else {
    const rounding = 1 << (PASS1_BITS - 1);
    out[o] = (t10 + rounding + t11) >> PASS1_BITS;
    out[o + 4 * step] = (t10 + rounding - t11) >> PASS1_BITS;
  }
  let z1 = (t12 + t13) * F_0_541 + half;
  out[o + 2 * step] = (z1 + t12 * F_0_765) >> shift;
  out[o + 6 * step] = (z1 - t13 * F_1_847) >> shift;

  t12 = t0 + t2;
  t13 = t1 + t3;
  z1 = (t12 + t13) * F_1_175 + half;
  t12 = t12 * -F_0_390 + z1;
  t13 = t13 * -F_1_961 + z1;
  z1 = (t0 + t3) * -F_0_899;
  out[o + step] = (t0 * F_1_501 + z1 + t12) >> shift;
  out[o + 7 * step] = (t3 * F_0_298 + z1 + t13) >> shift;
  z1 = (t1 + t2) * -F_2_562;
  out[o + 3 * step] = (t1 * F_3_072 + z1 + t13) >> shift;
  out[o + 5 * step] = (t2 * F_2_053 + z1 + t12) >> shift;
}

// 16-point kernel constants, cK = sqrt(2)·cos(Kπ/32) combinations.
const G_1_306 = fix(1.306562965);
const G_0_275 = fix(0.275899379);
const G_1_387 = fix(1.387039845);
const G_1_451 = fix(1.451774982);
const G_2_172 = fix(2.172734804);
const G_0_211 = fix(0.211164243);
const G_1_061 = fix(1.061594338);
const G_1_353 = fix(1.353318001);
const G_0_410 = fix(0.410524528);
const G_1_247 = fix(1.247225013);
const G_0_666 = fix(0.666655658);
const G_1_093 = fix(1.093201867);
const G_0_897 = fix(0.897167586);
const G_0_138 = fix(0.138617169);
const G_1_407 = fix(1.407403738);
const G_2_286 = fix(2.286341144);
const G_0_779 = fix(0.779653625);
const G_0_071 = fix(0.071888074);
const G_1_663 = fix(1.663905119);
const G_1_125 = fix(1.125726048);
const G_1_227 = fix(1.227391138);
const G_1_065 = fix(1.065388962);
const G_2_167 = fix(2.167985692);

/**
 * The 8 low-frequency outputs of a 16-point transform of v[0..15] into out[o + k·step]. Pass 1
 * centres the DC (−16·128) and keeps PASS1_BITS extra bits; pass 2 removes them and scales by
 * (8/16)², two more bits, with exact floors.
 */
function dct16(v: Int32Array, out: Int32Array, o: number, step: number, pass1: boolean): void {
  let t0 = v[0]! + v[15]!;
  let t1 = v[1]! + v[14]!;
  let t2 = v[2]! + v[13]!;
  let t3 = v[3]! + v[12]!;
  let t4 = v[4]! + v[11]!;
  let t5 = v[5]! + v[10]!;
  let t6 = v[6]! + v[9]!;
  let t7 = v[7]! + v[8]!;
  let t10 = t0 + t7;
  let t14 = t0 - t7;
  let t11 = t1 + t6;
  let t15 = t1 - t6;
  let t12 = t2 + t5;
  let t16 = t2 - t5;
  let t13 = t3 + t4;
  const t17 = t3 - t4;
  t0 = v[0]! - v[15]!;
  t1 = v[1]! - v[14]!;
  t2 = v[2]! - v[13]!;
  t3 = v[3]! - v[12]!;
  t4 = v[4]! - v[11]!;
  t5 = v[5]! - v[10]!;
  t6 = v[6]! - v[9]!;
  t7 = v[7]! - v[8]!;

  const scale = pass1 ? 2 ** -P1 : P2_16_SCALE;
  const half = pass1 ? P1_HALF : P2_16_HALF;
  out[o] = pass1 ? (t10 + t11 + t12 + t13 - 16 * 128) << PASS1_BITS : Math.floor((t10 + t11 + t12 + t13 + P2_16_DC_HALF) * P2_16_DC_SCALE);
  out[o + 4 * step] = Math.floor(((t10 - t13) * G_1_306 + (t11 - t12) * F_0_541 + half) * scale);
  t10 = (t17 - t15) * G_0_275 + (t14 - t16) * G_1_387;
  out[o + 2 * step] = Math.floor((t10 + t15 * G_1_451 + t16 * G_2_172 + half) * scale);
  out[o + 6 * step] = Math.floor((t10 - t14 * G_0_211 - t17 * G_1_061 + half) * scale);

  t11 = (t0 + t1) * G_1_353 + (t6 - t7) * G_0_410;
  t12 = (t0 + t2) * G_1_247 + (t5 + t7) * G_0_666;
  t13 = (t0 + t3) * G_1_093 + (t4 - t7) * G_0_897;
  t14 = (t1 + t2) * G_0_138 + (t6 - t5) * G_1_407;
  t15 = (t1 + t3) * -G_0_666 + (t4 + t6) * -G_1_247;
  t16 = (t2 + t3) * -G_1_353 + (t5 - t4) * G_0_410;
  t10 = t11 + t12 + t13 - t0 * G_2_286 + t7 * G_0_779;
  t11 += t14 + t15 + t1 * G_0_071 - t6 * G_1_663;
  t12 += t14 + t16 - t2 * G_1_125 + t5 * G_1_227;
  t13 += t15 + t16 + t3 * G_1_065 + t4 * G_2_167;
  out[o + step] = Math.floor((t10 + half) * scale);
  out[o + 3 * step] = Math.floor((t11 + half) * scale);
  out[o + 5 * step] = Math.floor((t12 + half) * scale);
  out[o + 7 * step] = Math.floor((t13 + half) * scale);
}

/** Scratch arrays reused across blocks (no allocation per block). */
class Transformer {
  private readonly line = new Int32Array(16);
  private readonly rows = new Int32Array(16 * 8);
  readonly coefficients = new Int32Array(64);

  /** 8×8 DCT of the block at (x, y) of a plane `stride` wide. */
  block8(p: Uint8Array, stride: number, x: number, y: number): Int32Array {
    const { rows, coefficients } = this;
    for (let r = 0; r < 8; r++) {
      const i = (y + r) * stride + x;
      dct8(p[i]!, p[i + 1]!, p[i + 2]!, p[i + 3]!, p[i + 4]!, p[i + 5]!, p[i + 6]!, p[i + 7]!, rows, r * 8, 1, true);
    }
    for (let c = 0; c < 8; c++) {
      dct8(rows[c]!, rows[c + 8]!, rows[c + 16]!, rows[c + 24]!, rows[c + 32]!, rows[c + 40]!, rows[c + 48]!, rows[c + 56]!, coefficients, c, 8, false);
    }
    return coefficients;
  }

  /** 16×16 → 8×8 DCT of the block at (x, y): the chroma of one 4:2:0 MCU. */
  block16(p: Uint8Array, stride: number, x: number, y: number): Int32Array {
    const { line, rows, coefficients } = this;
    for (let r = 0; r < 16; r++) {
      const i = (y + r) * stride + x;
      for (let k = 0; k < 16; k++) line[k] = p[i + k]!;
      dct16(line, rows, r * 8, 1, true);
    }
    for (let c = 0; c < 8; c++) {
      for (let k = 0; k < 16; k++) line[k] = rows[c + k * 8]!;
      dct16(line, coefficients, c, 8, false);
    }
    return coefficients;
  }
}

/** Quantizes into `dst` (zig-zag order) with divisors 8·q, rounding half away from zero. */
function quantize(coefficients: Int32Array, divisors: Float64Array, halves: Float64Array, dst: Int16Array, offset: number): void {
  for (let k = 0; k < 64; k++) {
    const i = ZIGZAG[k]!;
    const v = coefficients[i]!;
    // Non-negative below 2^31: | 0 truncates like C's integer division.
    const q = ((v < 0 ? halves[i]! - v : v + halves[i]!) / divisors[i]!) | 0;
    dst[offset + k] = v < 0 ? -q : q;
  }
}

// ---- planes ---------------------------------------------------------------------------------------

/**
 * Repeats the last column of each of the first `h` rows, then the last row, to fill a plane already
 * holding `w`×`h` samples at the top-left of a `pw`×`ph` layout.
 */
function extendEdges(plane: Uint8Array, w: number, h: number, pw: number, ph: number): void {
  if (pw > w) for (let y = 0; y < h; y++) plane.fill(plane[y * pw + w - 1]!, y * pw + w, (y + 1) * pw);
  for (let y = h; y < ph; y++) plane.copyWithin(y * pw, (h - 1) * pw, h * pw);
}

/** A plane of `w`×`h` samples extended to `pw`×`ph` by repeating the last column and row. */
function padded(src: Uint8Array, w: number, h: number, pw: number, ph: number): Uint8Array {
  const out = new Uint8Array(pw * ph);
  for (let y = 0; y < h; y++) out.set(src.subarray(y * w, (y + 1) * w), y * pw);
  extendEdges(out, w, h, pw, ph);
  return out;
}

// RGB → YCbCr coefficients in 16-bit fixed point, as libjpeg rounds them.
const fix16 = (x: number): number => Math.floor(x * 65536 + 0.5);
const [R_Y, G_Y, B_Y] = [fix16(0.299), fix16(0.587), fix16(0.114)];
const [R_CB, G_CB, HALF_CHROMA] = [fix16(0.16874), fix16(0.33126), fix16(0.5)];
const [G_CR, B_CR] = [fix16(0.41869), fix16(0.08131)];
/** 128 in the chroma channels, with rounding just below one half. */
const CHROMA_OFFSET = 128 * 65536 + 32767;

/** RGB planes `w`×`h` → padded Y, Cb, Cr planes `pw`×`ph` (JFIF equations). */
function toYCbCr(r: Uint8Array, g: Uint8Array, b: Uint8Array, w: number, h: number, pw: number, ph: number): Uint8Array[] {
  const y = new Uint8Array(pw * ph);
  const cb = new Uint8Array(pw * ph);
  const cr = new Uint8Array(pw * ph);
  for (let row = 0; row < h; row++) {
    for (let i = row * w, o = row * pw, end = i + w; i < end; i++, o++) {
      const R = r[i]!;
      const G = g[i]!;
      const B = b[i]!;
      // All sums are non-negative and below 2^24, so >> is the floor division.
      y[o] = (R_Y * R + G_Y * G + B_Y * B + 32768) >> 16;
      cb[o] = (HALF_CHROMA * B - R_CB * R - G_CB * G + CHROMA_OFFSET) >> 16;
      cr[o] = (HALF_CHROMA * R - G_CR * G - B_CR * B + CHROMA_OFFSET) >> 16;
    }
  }
  for (const plane of [y, cb, cr]) extendEdges(plane, w, h, pw, ph);
  return [y, cb, cr];
}

// ---- Huffman coding ---------------------------------------------------------------------------------

/** Number of bits needed for |v| (the JPEG "category"). */
function category(v: number): number {
  let a = v < 0 ? -v : v;
  let n = 0;
  while (a > 0) {
    n++;
    a >>= 1;
  }
  return n;
}

interface HuffmanTable {
  /** bits[l] = number of codes of length l (1..16). */
  bits: Uint8Array;
  values: Uint8Array;
  code: Uint16Array;
  size: Uint8Array;
}

/** Optimal code lengths limited to 16 bits (JPEG Annex K.2), then the canonical codes. */
function buildTable(frequencies: Uint32Array): HuffmanTable {
  const freq = Float64Array.from(frequencies);
  freq[256] = 1; // a reserved symbol, so that no real code is all ones
  const codeSize = new Int32Array(257);
  const next = new Int32Array(257).fill(-1);
  for (;;) {
    let c1 = -1;
    let c2 = -1;
    for (let i = 0; i <= 256; i++) {
      if (freq[i]! <= 0) continue;
      if (c1 < 0 || freq[i]! <= freq[c1]!) {
        c2 = c1;
        c1 = i;
      } else if (c2 < 0 || freq[i]! <= freq[c2]!) c2 = i;
    }
    if (c2 < 0) break;
    freq[c1]! += freq[c2]!;
    freq[c2] = 0;
    for (let i = c1; ; i = next[i]!) {
      codeSize[i]!++;
      if (next[i] === -1) {
        next[i] = c2;
        break;
      }
    }
    for (let i = c2; i !== -1; i = next[i]!) codeSize[i]!++;
  }
  const counts = new Int32Array(33);
  for (let i = 0; i <= 256; i++) if (codeSize[i]! > 0) counts[codeSize[i]!]!++;
  for (let l = 32; l > 16; l--) {
    while (counts[l]! > 0) {
      let j = l - 2;
      while (counts[j] === 0) j--;
      counts[l]! -= 2;
      counts[l - 1]!++;
      counts[j + 1]! += 2;
      counts[j]!--;
    }
  }
  let longest = 16;
  while (counts[longest] === 0) longest--;
  counts[longest]!--; // drop the reserved symbol's code
  const bits = new Uint8Array(17);
  for (let l = 1; l <= 16; l++) bits[l] = counts[l]!;
  const values: number[] = [];
  for (let l = 1; l <= 32; l++) for (let s = 0; s < 256; s++) if (codeSize[s] === l) values.push(s);
  const table: HuffmanTable = { bits, values: Uint8Array.from(values), code: new Uint16Array(256), size: new Uint8Array(256) };
  let code = 0;
  let k = 0;
  for (let l = 1; l <= 16; l++) {
    for (let n = 0; n < bits[l]!; n++) {
      const symbol = table.values[k++]!;
      table.code[symbol] = code++;
      table.size[symbol] = l;
    }
    code <<= 1;
  }
  return table;
}

/** Big-endian bit output with 0xFF byte stuffing. */
class BitWriter {
  private bytes: Uint8Array;
  private length = 0;
  /** Pending bits, `count` (< 8) of them, right-aligned. */
  private buffer = 0;
  private count = 0;

  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(1024, capacity));
  }

  /** Appends the low `size` (≤ 16) bits of `value`. */
  write(value: number, size: number): void {
    let buffer = (this.buffer << size) | (value & ((1 << size) - 1));
    let count = this.count + size;
    if (count >= 8) {
      // At most 3 bytes, each possibly stuffed: make room once.
      if (this.length + 6 > this.bytes.length) this.grow();
      const bytes = this.bytes;
      let length = this.length;
      while (count >= 8) {
        count -= 8;
        const byte = (buffer >> count) & 0xff;
        bytes[length++] = byte;
        if (byte === 0xff) bytes[length++] = 0;
      }
      this.length = length;
      buffer &= (1 << count) - 1;
    }
    this.buffer = buffer;
    this.count = count;
  }

  private grow(): void {
    const grown = new Uint8Array(this.bytes.length * 2);
    grown.set(this.bytes);
    this.bytes = grown;
  }

  /** Pads the last byte with 1 bits and returns the entropy-coded data. */
  finish(): Uint8Array {
    if (this.count > 0) this.write(0x7f, 8 - this.count);
    return this.bytes.subarray(0, this.length);
  }
}

/** Counts the DC-difference and AC run/size symbols of one zig-zag block. */
function countBlock(block: Int16Array, offset: number, previousDc: number, dcFreq: Uint32Array, acFreq: Uint32Array): void {
  dcFreq[category(block[offset]! - previousDc)]!++;
  let run = 0;
  for (let k = 1; k < 64; k++) {
    const v = block[offset + k]!;
    if (v === 0) {
      run++;
      continue;
    }
    while (run > 15) {
      acFreq[0xf0]!++;
      run -= 16;
    }
    acFreq[(run << 4) | category(v)]!++;
    run = 0;
  }
  if (run > 0) acFreq[0x00]!++;
}

/** Writes one zig-zag block: the DC difference, then AC run/size codes with their value bits. */
function writeBlock(block: Int16Array, offset: number, previousDc: number, dc: HuffmanTable, ac: HuffmanTable, out: BitWriter): void {
  const diff = block[offset]! - previousDc;
  const dcSize = category(diff);
  out.write(dc.code[dcSize]!, dc.size[dcSize]!);
  out.write(diff < 0 ? diff - 1 : diff, dcSize);
  let run = 0;
  for (let k = 1; k < 64; k++) {
    const v = block[offset + k]!;
    if (v === 0) {
      run++;
      continue;
    }
    while (run > 15) {
      out.write(ac.code[0xf0]!, ac.size[0xf0]!);
      run -= 16;
    }
    const size = category(v);
    const symbol = (run << 4) | size;
    out.write(ac.code[symbol]!, ac.size[symbol]!);
    out.write(v < 0 ? v - 1 : v, size);
    run = 0;
  }
  if (run > 0) out.write(ac.code[0]!, ac.size[0]!);
}

// ---- the file ---------------------------------------------------------------------------------------

/** A component of the frame: its id, sampling factors (h << 4 | v) and the tables it uses. */
interface Component {
  id: number;
  sampling: number;
  quantTable: number;
  huffTable: number;
}

function segment(marker: number, payload: readonly number[] | Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + payload.length);
  out[0] = 0xff;
  out[1] = marker;
  out[2] = (payload.length + 2) >> 8;
  out[3] = (payload.length + 2) & 0xff;
  out.set(payload, 4);
  return out;
}

/**
 * Encodes 1 (grayscale) or 3 (RGB) uint8 planes of `width`×`height` as a baseline JFIF JPEG at
 * `quality`, 4:2:0 for colour, with libjpeg 9's coefficients.
 */
export function encodeJpegLikeLibjpeg9(planes: readonly Uint8Array[], width: number, height: number, quality: number): Buffer {
  const colour = planes.length === 3;
  if (!colour && planes.length !== 1) throw new Error(`JPEG: expected 1 or 3 planes, got ${planes.length}`);
  if (width > MAX_SIDE || height > MAX_SIDE) {
    throw badRequest(`The JPEG format cannot hold a ${width}×${height} image: at most ${MAX_SIDE} pixels a side`);
  }
  const mcuSize = colour ? 16 : 8;
  const mcusX = Math.ceil(width / mcuSize);
  const mcusY = Math.ceil(height / mcuSize);
  const pw = mcusX * mcuSize;
  const ph = mcusY * mcuSize;
  const tables = [scaledTable(LUMA_QUANT, quality), scaledTable(CHROMA_QUANT, quality)];
  const divisors = tables.map((t) => Float64Array.from(t, (q) => q * 8));
  const halves = tables.map((t) => Float64Array.from(t, (q) => q * 4));

  const padPlanes = colour ? toYCbCr(planes[0]!, planes[1]!, planes[2]!, width, height, pw, ph) : [padded(planes[0]!, width, height, pw, ph)];
  const components: Component[] = colour
    ? [
        { id: 1, sampling: 0x22, quantTable: 0, huffTable: 0 },
        { id: 2, sampling: 0x11, quantTable: 1, huffTable: 1 },
        { id: 3, sampling: 0x11, quantTable: 1, huffTable: 1 },
      ]
    : [{ id: 1, sampling: 0x11, quantTable: 0, huffTable: 0 }];
  const blocksPerMcu = colour ? 6 : 1;

  // Pass 1: every block's quantized coefficients, in coding order (zig-zag within a block).
  const coded = new Int16Array(mcusX * mcusY * blocksPerMcu * 64);
  const dct = new Transformer();
  let at = 0;
  for (let my = 0; my < mcusY; my++) {
    for (let mx = 0; mx < mcusX; mx++) {
      const x = mx * mcuSize;
      const y = my * mcuSize;
      if (colour) {
        // The four luma blocks in raster order within the MCU.
        for (let k = 0; k < 4; k++) {
          quantize(dct.block8(padPlanes[0]!, pw, x + (k & 1) * 8, y + (k >> 1) * 8), divisors[0]!, halves[0]!, coded, at);
          at += 64;
        }
        quantize(dct.block16(padPlanes[1]!, pw, x, y), divisors[1]!, halves[1]!, coded, at);
        at += 64;
        quantize(dct.block16(padPlanes[2]!, pw, x, y), divisors[1]!, halves[1]!, coded, at);
        at += 64;
      } else {
        quantize(dct.block8(padPlanes[0]!, pw, x, y), divisors[0]!, halves[0]!, coded, at);
        at += 64;
      }
    }
  }
  // Which component (and so which tables and DC predictor) each block of an MCU belongs to.
  const blockComponent = colour ? [0, 0, 0, 0, 1, 2] : [0];
  const tableOf = blockComponent.map((c) => components[c]!.huffTable);

  // Pass 2: symbol statistics and optimal tables; pass 3: the entropy-coded data.
  const tableCount = colour ? 2 : 1;
  const dcFreq = Array.from({ length: tableCount }, () => new Uint32Array(257));
  const acFreq = Array.from({ length: tableCount }, () => new Uint32Array(257));
  const lastDc = new Int32Array(components.length);
  for (let offset = 0, b = 0; offset < coded.length; offset += 64, b = b + 1 === blocksPerMcu ? 0 : b + 1) {
    const c = blockComponent[b]!;
    const t = tableOf[b]!;
    countBlock(coded, offset, lastDc[c]!, dcFreq[t]!, acFreq[t]!);
    lastDc[c] = coded[offset]!;
  }
  const dcTables = dcFreq.map(buildTable);
  const acTables = acFreq.map(buildTable);
  const writer = new BitWriter(coded.length / 4);
  lastDc.fill(0);
  for (let offset = 0, b = 0; offset < coded.length; offset += 64, b = b + 1 === blocksPerMcu ? 0 : b + 1) {
    const c = blockComponent[b]!;
    const t = tableOf[b]!;
    writeBlock(coded, offset, lastDc[c]!, dcTables[t]!, acTables[t]!, writer);
    lastDc[c] = coded[offset]!;
  }
  const scan = writer.finish();

  const parts: Uint8Array[] = [Uint8Array.of(0xff, 0xd8)];
  parts.push(segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])); // JFIF 1.01, no density unit
  tables.slice(0, tableCount).forEach((table, id) => {
    parts.push(segment(0xdb, [id, ...Array.from(ZIGZAG, (i) => table[i]!)]));
  });
  const sof = [8, height >> 8, height & 0xff, width >> 8, width & 0xff, components.length];
  for (const c of components) sof.push(c.id, c.sampling, c.quantTable);
  parts.push(segment(0xc0, sof));
  for (let t = 0; t < tableCount; t++) {
    for (const [kind, table] of [
      [0x00, dcTables[t]!],
      [0x10, acTables[t]!],
    ] as const) {
      parts.push(segment(0xc4, [kind | t, ...table.bits.subarray(1), ...table.values]));
    }
  }
  const sos = [components.length];
  for (const c of components) sos.push(c.id, (c.huffTable << 4) | c.huffTable);
  sos.push(0, 63, 0);
  parts.push(segment(0xda, sos), scan, Uint8Array.of(0xff, 0xd9));
  return Buffer.concat(parts);
}
