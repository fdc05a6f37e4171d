/**
 * numpy.gradient of one band at a pixel, as hillshade and slope take it (rio-tiler/TiTiler call
 * `np.gradient(data[0])`): central differences halved inside, one-sided and not halved at the first
 * and last row and column; a float32 band rounded back to float32 after each numpy operation. `x`
 * is along axis 0 (rows), `y` along axis 1 (columns). `masked` when a neighbour it reads is masked
 * (numpy.ma carries the mask through the difference).
 */

export interface Gradient {
  x: number;
  y: number;
  masked: boolean;
}

/** The gradient at row `r`, column `c` of a w × h band, written into `g` (no allocation per pixel). */
export function gradientAt(src: ArrayLike<number>, valid: Uint8Array, w: number, h: number, single: boolean, r: number, c: number, g: Gradient): void {
  const up = r === 0 ? 0 : r - 1;
  const down = r === h - 1 ? h - 1 : r + 1;
  const left = c === 0 ? 0 : c - 1;
  const right = c === w - 1 ? w - 1 : c + 1;
  const rowHalves = r === 0 || r === h - 1 ? 1 : 2;
  const colHalves = c === 0 || c === w - 1 ? 1 : 2;
  const x = src[down * w + c]! - src[up * w + c]!;
  const y = src[r * w + right]! - src[r * w + left]!;
  g.x = single ? Math.fround(Math.fround(x) / rowHalves) : x / rowHalves;
  g.y = single ? Math.fround(Math.fround(y) / colHalves) : y / colHalves;
  g.masked = valid[up * w + c] === 0 || valid[down * w + c] === 0 || valid[r * w + left] === 0 || valid[r * w + right] === 0;
}
