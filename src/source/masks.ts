/**
 * Masks (0 masked, 255 valid) from an alpha band, nodata values or a GDAL mask band: one pass over
 * every value read, so at the 64 M values a request may read they are the longest JavaScript loops
 * of a read. Two things keep them off the critical path of everything else the server does:
 *   - Byte data is handled four values per 32-bit word, without a branch: a per-value comparison
 *     mispredicts along the edges of the data (64 M values: 105–135 ms per loop, 35–40 ms this way);
 *   - every loop runs in slices of SLICE values and yields to the event loop between them, so a
 *     whole-image read never holds it for more than a slice (~15 ms) while tiles wait. Tiles fit in
 *     one slice and never yield.
 */
import type { BandArray } from '../image/image-data.js';

const SLICE = 1 << 22;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs `pass(start, end)` over [0, length) in slices, yielding to the event loop between them. */
async function inSlices(length: number, pass: (start: number, end: number) => void): Promise<void> {
  for (let start = 0; start < length; start += SLICE) {
    if (start > 0) await yieldToLoop();
    pass(start, Math.min(length, start + SLICE));
  }
}

/**
 * 32-bit words of `bytes` whose bytes equal `fill` become 0x00, the others 0xff (into `out`): each
 * byte is XORed with `fill`, its bits folded into its lowest bit and spread back to a whole byte.
 */
function wordsToMask(bytes: Uint32Array, fill: number, out: Uint32Array, start: number, end: number): void {
  const f = Math.imul(fill & 0xff, 0x01010101) >>> 0;
  for (let i = start; i < end; i++) {
    let v = (bytes[i]! ^ f) >>> 0;
    v |= (v >>> 4) & 0x0f0f0f0f;
    v |= (v >>> 2) & 0x33333333;
    v |= (v >>> 1) & 0x55555555;
    out[i] = Math.imul(v & 0x01010101, 255);
  }
}

/** `mask[i]` = 0 where `bytes[i]` is `fill`, else 255; `mask` may be `bytes` itself. */
async function byteMask(bytes: Uint8Array, fill: number, mask: Uint8Array): Promise<Uint8Array> {
  const aligned = bytes.byteOffset % 4 === 0 && mask.byteOffset % 4 === 0;
  const wordCount = aligned ? bytes.length >>> 2 : 0;
  if (wordCount > 0) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, wordCount);
    const out = new Uint32Array(mask.buffer, mask.byteOffset, wordCount);
    await inSlices(wordCount, (s, e) => wordsToMask(words, fill, out, s, e));
  }
  for (let i = wordCount * 4; i < bytes.length; i++) mask[i] = bytes[i] === fill ? 0 : 255;
  return mask;
}

/** A GDAL mask band read as Byte (0 masked, anything else valid) becomes 0/255, in place. */
export function normaliseMaskBand(m: Uint8Array): Promise<Uint8Array> {
  return byteMask(m, 0, m);
}

/** 255 where alpha is not 0. A Byte alpha becomes the mask in place. */
export async function maskFromAlpha(alpha: BandArray): Promise<Uint8Array> {
  if (alpha instanceof Uint8Array) return byteMask(alpha, 0, alpha);
  const mask = new Uint8Array(alpha.length);
  await inSlices(alpha.length, (s, e) => {
    for (let i = s; i < e; i++) mask[i] = alpha[i] !== 0 ? 255 : 0;
  });
  return mask;
}

// One loop per common array type: a loop that sees several typed-array kinds runs several times slower.
function maskUint16(values: Uint16Array, nodata: number, mask: Uint8Array, s: number, e: number): void {
  for (let i = s; i < e; i++) mask[i] = values[i] === nodata ? 0 : 255;
}

function maskFloat32(values: Float32Array, nodata: number, mask: Uint8Array, s: number, e: number): void {
  for (let i = s; i < e; i++) mask[i] = values[i] === nodata ? 0 : 255;
}

function maskAny(values: BandArray, nodata: number, mask: Uint8Array, s: number, e: number): void {
  for (let i = s; i < e; i++) mask[i] = values[i] === nodata ? 0 : 255;
}

function maskNaN(values: BandArray, mask: Uint8Array, s: number, e: number): void {
  for (let i = s; i < e; i++) mask[i] = Number.isNaN(values[i]!) ? 0 : 255;
}

/** 0 where the value is `nodata` (NaN matches NaN), else 255. */
export async function maskFromValues(values: BandArray, nodata: number): Promise<Uint8Array> {
  const mask = new Uint8Array(values.length);
  if (Number.isNaN(nodata)) {
    await inSlices(values.length, (s, e) => maskNaN(values, mask, s, e));
  } else if (values instanceof Uint8Array && Number.isInteger(nodata) && nodata >= 0 && nodata <= 255) {
    await byteMask(values, nodata, mask);
  } else if (values instanceof Uint16Array) {
    await inSlices(values.length, (s, e) => maskUint16(values, nodata, mask, s, e));
  } else if (values instanceof Float32Array) {
    await inSlices(values.length, (s, e) => maskFloat32(values, nodata, mask, s, e));
  } else {
    await inSlices(values.length, (s, e) => maskAny(values, nodata, mask, s, e));
  }
  return mask;
}
