/**
 * Where a tiled TIFF's blocks lie, read from the file's first bytes (the gateway's probe): for each
 * image file directory found there, its size, tiling and the offset and byte count of every block.
 * A COG keeps its directories and their block tables at the start of the file, so the probe that
 * opened it already holds them; an image whose tables lie beyond those bytes is left out (its
 * blocks are not fetched ahead, GDAL fetches them as it reads). Classic TIFF and BigTIFF, either
 * byte order; bounded by the bytes given and a number of directories, never a loop.
 */

export interface TiffImage {
  width: number;
  height: number;
  tileWidth: number;
  tileHeight: number;
  /** NewSubfileType: bit 2 marks a transparency mask. */
  subfileType: number;
  /** PlanarConfiguration: 1 chunky (a block holds every band), 2 planar. */
  planar: number;
  offsets: number[];
  counts: number[];
  /** The first and last byte of the image's blocks (leaders and trailers included). */
  extent: [number, number];
}

const MAX_DIRECTORIES = 64;
/** TIFF field types tessera reads (SHORT, LONG, LONG8) and their sizes. */
const TYPE_SIZE: Record<number, number> = { 3: 2, 4: 4, 16: 8 };

/** The tiled images whose directory and block tables lie within `bytes`, in file order. */
export function tiffImages(bytes: Uint8Array): TiffImage[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 16) return [];
  const little = bytes[0] === 0x49 && bytes[1] === 0x49;
  if (!little && !(bytes[0] === 0x4d && bytes[1] === 0x4d)) return [];
  const magic = view.getUint16(2, little);
  if (magic !== 42 && magic !== 43) return [];
  const big = magic === 43;
  const fits = (at: number, n: number): boolean => at >= 0 && at + n <= bytes.length;
  const u64 = (at: number): number => Number(view.getBigUint64(at, little));
  const word = (at: number): number => (big ? u64(at) : view.getUint32(at, little));
  const images: TiffImage[] = [];
  const seen = new Set<number>();
  let ifd = word(big ? 8 : 4);
  while (ifd > 0 && images.length < MAX_DIRECTORIES && !seen.has(ifd) && fits(ifd, big ? 8 : 2)) {
    seen.add(ifd);
    const count = big ? u64(ifd) : view.getUint16(ifd, little);
    const entrySize = big ? 20 : 12;
    const first = ifd + (big ? 8 : 2);
    if (!fits(first, count * entrySize + (big ? 8 : 4))) break;
    const values = new Map<number, number[] | undefined>();
    for (let i = 0; i < count; i++) {
      const at = first + i * entrySize;
      const tag = view.getUint16(at, little);
      const type = view.getUint16(at + 2, little);
      const n = big ? u64(at + 4) : view.getUint32(at + 4, little);
      const size = TYPE_SIZE[type];
      if (size === undefined) continue;
      const inline = n * size <= (big ? 8 : 4);
      const from = inline ? at + (big ? 12 : 8) : word(at + (big ? 12 : 8));
      if (!fits(from, n * size)) {
        values.set(tag, undefined);
        continue;
      }
      const out: number[] = [];
      for (let k = 0; k < n; k++) {
        const p = from + k * size;
        out.push(size === 2 ? view.getUint16(p, little) : size === 4 ? view.getUint32(p, little) : u64(p));
      }
      values.set(tag, out);
    }
    const one = (tag: number, fallback: number): number => values.get(tag)?.[0] ?? fallback;
    const offsets = values.get(324);
    const counts = values.get(325);
    const image = {
      width: one(256, 0),
      height: one(257, 0),
      tileWidth: one(322, 0),
      tileHeight: one(323, 0),
      subfileType: one(254, 0),
      planar: one(284, 1),
    };
    if (offsets && counts && offsets.length === counts.length && image.tileWidth > 0 && image.tileHeight > 0) {
      let [first, last] = [Number.POSITIVE_INFINITY, -1];
      offsets.forEach((offset, k) => {
        if (!offset || !counts[k]) return;
        first = Math.min(first, offset);
        last = Math.max(last, offset + counts[k]! - 1);
      });
      images.push({ ...image, offsets, counts, extent: [first, last] });
    }
    ifd = word(first + count * entrySize);
  }
  // GDAL reads a COG block with its 4-byte leader and trailer: an image's bytes reach that far
  // beyond its blocks, but never into another image's.
  const strict = images.map((i) => [...i.extent] as [number, number]);
  for (const image of images) {
    const [lo, hi] = image.extent;
    let [from, to] = [Math.max(0, lo - 4), hi + 8];
    for (const [a, b] of strict) {
      if (b < lo) from = Math.max(from, b + 1);
      if (a > hi) to = Math.min(to, a - 1);
    }
    image.extent = [from, to];
  }
  return images;
}

/**
 * The byte ranges [first, last] that hold blocks (column, row) of the chunky, unmasked image `of`
 * that size and tiling, with GDAL's block leader and trailer (4 bytes each side, COG layout), each
 * widened to whole `chunk`s (how /vsicurl/ asks for a lone block) within the image's own blocks,
 * and merged where they touch; empty when the bytes hold no such image.
 */
export function blockRanges(
  images: readonly TiffImage[],
  of: { width: number; height: number; blockWidth: number; blockHeight: number },
  blocks: ReadonlyArray<readonly [number, number]>,
  chunk: number,
  size: number,
): Array<[number, number]> {
  const image = images.find(
    (i) =>
      i.width === of.width &&
      i.height === of.height &&
      i.tileWidth === of.blockWidth &&
      i.tileHeight === of.blockHeight &&
      (i.subfileType & 4) === 0 &&
      i.planar === 1,
  );
  if (!image) return [];
  const across = Math.ceil(image.width / image.tileWidth);
  const down = Math.ceil(image.height / image.tileHeight);
  const ranges: Array<[number, number]> = [];
  for (const [col, row] of blocks) {
    if (col < 0 || row < 0 || col >= across || row >= down) continue;
    const offset = image.offsets[row * across + col];
    const count = image.counts[row * across + col];
    if (!offset || !count) continue;
    // Widened to whole chunks, but never past the image's last block (an overview's read stays off the
    // full resolution's, which a COG stores after it).
    const first = Math.floor(Math.max(0, offset - 4) / chunk) * chunk;
    const last = Math.min(size - 1, image.extent[1], Math.ceil((offset + count + 8) / chunk) * chunk - 1);
    if (last >= first) ranges.push([first, last]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}
