/**
 * Pure synthesis of the demo scene: a seeded elevation model and its shaded-relief rendering.
 * No GDAL and no I/O here, so the pixels are a deterministic function of the seed and the size
 * (the same bytes on every machine, which keeps the demo COGs and any test expectations stable).
 */

/** mulberry32: a tiny, well-mixed 32-bit PRNG; Math.random cannot be seeded. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hash of a lattice point to 32 bits: the noise needs random values at arbitrary integer points. */
function latticeHash(ix: number, iy: number, seed: number): number {
  let h = Math.imul(ix, 0x27d4eb2d) ^ Math.imul(iy, 0x165667b1) ^ seed;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Quintic fade: continuous slope at lattice lines, so hillshading shows no grid seams. */
function fade(t: number): number {
  return t * t * t * (t * (t * 6 - 15) + 10);
}

/** 16 unit gradient directions; a table is much cheaper than cos/sin per lattice point. */
const GRADIENTS: ReadonlyArray<readonly [number, number]> = Array.from({ length: 16 }, (_, k) => {
  const angle = (2 * Math.PI * (k + 0.5)) / 16;
  return [Math.cos(angle), Math.sin(angle)] as const;
});

function cornerDot(ix: number, iy: number, dx: number, dy: number, seed: number): number {
  const g = GRADIENTS[latticeHash(ix, iy, seed) & 15]!;
  return g[0] * dx + g[1] * dy;
}

/**
 * Gradient (Perlin) noise in about [-1, 1]. Unlike value noise its features are not aligned with
 * the lattice, so ridges built from it do not come out as little squares.
 */
function gradientNoise(x: number, y: number, seed: number): number {
  const ix = Math.floor(x);
  const iy = Math.floor(y);
  const fx = x - ix;
  const fy = y - iy;
  const u = fade(fx);
  const v = fade(fy);
  const a = cornerDot(ix, iy, fx, fy, seed);
  const b = cornerDot(ix + 1, iy, fx - 1, fy, seed);
  const c = cornerDot(ix, iy + 1, fx, fy - 1, seed);
  const d = cornerDot(ix + 1, iy + 1, fx - 1, fy - 1, seed);
  const top = a + (b - a) * u;
  const bottom = c + (d - c) * u;
  return Math.SQRT2 * (top + (bottom - top) * v);
}

/** Each octave is rotated by this angle so the octaves' lattices never line up. */
const OCTAVE_COS = Math.cos(0.65);
const OCTAVE_SIN = Math.sin(0.65);

/**
 * Sum of `octaves` octaves of gradient noise, each `shape`d, normalised by the amplitudes.
 * Frequencies double and amplitudes halve per octave (a 1/f spectrum, as real terrain roughly has).
 */
function fractal(x: number, y: number, octaves: number, seed: number, shape: (n: number) => number): number {
  let sum = 0;
  let amplitude = 1;
  let total = 0;
  let px = x;
  let py = y;
  for (let o = 0; o < octaves; o++) {
    sum += amplitude * shape(gradientNoise(px, py, seed + o * 1013));
    total += amplitude;
    amplitude *= 0.5;
    const rx = OCTAVE_COS * px - OCTAVE_SIN * py;
    const ry = OCTAVE_SIN * px + OCTAVE_COS * py;
    px = 2 * rx;
    py = 2 * ry;
  }
  return sum / total;
}

/** Smooth fractal noise in about [0, 1]. */
function fbm(x: number, y: number, octaves: number, seed: number): number {
  return fractal(x, y, octaves, seed, (n) => 0.5 + 0.5 * n);
}

/**
 * Musgrave's ridged multifractal, roughly in [0, 1.3]: folded noise gives sharp crests, and each
 * octave is weighted by the one before so detail gathers on the crests while valleys stay smooth,
 * which is what makes synthetic terrain read as eroded mountains rather than crumpled paper.
 */
function ridgedMultifractal(x: number, y: number, octaves: number, seed: number): number {
  let px = x;
  let py = y;
  let signal = 1 - Math.abs(gradientNoise(px, py, seed));
  signal *= signal;
  let result = signal;
  let amplitude = 1;
  for (let o = 1; o < octaves; o++) {
    const rx = OCTAVE_COS * px - OCTAVE_SIN * py;
    const ry = OCTAVE_SIN * px + OCTAVE_COS * py;
    px = 2 * rx;
    py = 2 * ry;
    amplitude *= 0.5;
    const weight = Math.min(1, Math.max(0, signal * 2));
    signal = 1 - Math.abs(gradientNoise(px, py, seed + o * 7919));
    signal = signal * signal * weight;
    result += signal * amplitude;
  }
  return result;
}

interface Peak {
  u: number;
  v: number;
  /** Added to the mountain envelope at the centre (unitless). */
  height: number;
  sigma: number;
}

/** A handful of summits north of the valley, where the main crest runs. */
function placePeaks(random: () => number, count: number): Peak[] {
  const peaks: Peak[] = [];
  for (let i = 0; i < count; i++) {
    peaks.push({
      u: 0.1 + 0.85 * random(),
      v: 0.08 + 0.45 * random(),
      height: 0.2 + 0.3 * random(),
      sigma: 0.05 + 0.05 * random(),
    });
  }
  return peaks;
}

export interface Dem {
  width: number;
  height: number;
  /** Elevations in metres; `nodata` outside the valid footprint. */
  elevation: Float32Array;
  /** 1 where the pixel is lake surface (drawn as water, not land). */
  lake: Uint8Array;
  nodata: number;
}

const LAKE_LEVEL = 452;
/** Width of the shore, in lake-radius units, over which the land eases down to the water. */
const SHORE = 0.6;
const MIN_ELEVATION = 400;
const MAX_ELEVATION = 4000;
const SOFT_CEILING = 3300;

/** Centre line of the main valley (v as a function of u), shared by the valley and the lake. */
function valleyCentre(u: number): number {
  return 0.74 + 0.05 * Math.sin(4 * u + 0.3);
}

/**
 * The scene, in unit coordinates (u east, v south, both 0..1): an alpine massif whose crest runs
 * west-east across the north, a broad glacial valley across the south with a lake at its western
 * end, and foothills beyond. Everything is domain-warped so no feature is a perfect curve.
 */
function elevationAt(u: number, v: number, peaks: readonly Peak[], seed: number): number {
  const wu = u + 0.06 * (fbm(u * 3, v * 3, 3, seed + 11) - 0.5);
  const wv = v + 0.06 * (fbm(u * 3 + 17, v * 3 + 5, 3, seed + 23) - 0.5);

  // Where the mountains are (0 = lowland, ~1 = high range): a west-east crest across the north,
  // a few summits on it and lower hills along the southern edge.
  const crestV = 0.33 + 0.07 * Math.sin(2.5 * wu + 0.6);
  let envelope = Math.exp(-(((wv - crestV) / 0.2) ** 2)) * (0.75 + 0.25 * wu);
  envelope += 0.35 * Math.exp(-(((wv - 1.02) / 0.12) ** 2));
  for (const p of peaks) {
    const d2 = (wu - p.u) ** 2 + (wv - p.v) ** 2;
    envelope += p.height * Math.exp(-d2 / (2 * p.sigma * p.sigma));
  }
  envelope = Math.min(1.2, envelope);
  const ridges = ridgedMultifractal(wu * 3, wv * 3, 7, seed + 101);
  const hills = 300 * fbm(wu * 3, wv * 3, 5, seed + 211);
  let h = 650 + hills + envelope * (400 + 1800 * ridges);
  // Soft ceiling: summits approach but never reach MAX_ELEVATION, so nothing is clipped flat.
  if (h > SOFT_CEILING) {
    const room = MAX_ELEVATION - 50 - SOFT_CEILING;
    h = SOFT_CEILING + room * Math.tanh((h - SOFT_CEILING) / room);
  }

  // Glacial valley: blend towards a floor that rises gently up-valley (west to east).
  const across = (wv - valleyCentre(wu)) / 0.1;
  if (Math.abs(across) > 4) return h; // the valley's influence is below a millimetre here
  const carve = 0.92 * Math.exp(-(across * across));
  const floor = LAKE_LEVEL + 12 + 300 * Math.max(0, wu) ** 1.5 + 30 * fbm(wu * 20, wv * 20, 3, seed + 307);
  return h * (1 - carve) + floor * carve;
}

/** Lake shape: an ellipse in the western valley with a noisy shoreline; > 0 means water. */
function lakeness(u: number, v: number, seed: number): number {
  const du = (u - 0.22) / 0.14;
  const dv = (v - valleyCentre(u)) / 0.045;
  const distance = Math.sqrt(du * du + dv * dv);
  // Far from the lake the answer is "dry" whatever the wobble, so skip evaluating the noise.
  if (distance > 2) return 1 - distance;
  const wobble = 0.25 * (fbm(u * 12, v * 12, 3, seed + 401) - 0.5);
  return 1 - distance + wobble;
}

/**
 * Nodata in the south-east corner: a quarter disc with a ragged edge, like the unfilled corner of
 * a real scene, so masks and nodata handling are exercised by every consumer of the demo.
 */
function isOutsideFootprint(u: number, v: number, seed: number): boolean {
  const d = Math.hypot(1 - u, 1 - v);
  if (d > 0.25) return false; // beyond any wobble: no need to evaluate the noise
  return d < 0.2 + 0.04 * (fbm(u * 8, v * 8, 2, seed + 503) - 0.5);
}

export function synthesizeDem(width: number, height: number, seed: number, nodata: number): Dem {
  const random = mulberry32(seed);
  const peaks = placePeaks(random, 9);
  const elevation = new Float32Array(width * height);
  const lake = new Uint8Array(width * height);
  for (let row = 0; row < height; row++) {
    const v = (row + 0.5) / height;
    for (let col = 0; col < width; col++) {
      const u = (col + 0.5) / width;
      const i = row * width + col;
      if (isOutsideFootprint(u, v, seed)) {
        elevation[i] = nodata;
        continue;
      }
      let h = elevationAt(u, v, peaks, seed);
      const water = lakeness(u, v, seed);
      if (water > 0) {
        h = LAKE_LEVEL;
        lake[i] = 1;
      } else if (water > -SHORE) {
        // Shore: ease the land down to the water line instead of leaving a cliff at the edge.
        const t = fade(-water / SHORE);
        h = LAKE_LEVEL + 2 + (h - LAKE_LEVEL - 2) * t;
      }
      elevation[i] = Math.min(MAX_ELEVATION, Math.max(MIN_ELEVATION, h));
    }
  }
  return { width, height, elevation, lake, nodata };
}

export interface Stats {
  minimum: number;
  maximum: number;
  mean: number;
  stddev: number;
  validPercent: number;
}

/** Statistics over valid pixels, of the float32 values as stored (so they match a re-read). */
export function statistics(values: Float32Array, nodata: number): Stats {
  let minimum = Infinity;
  let maximum = -Infinity;
  let sum = 0;
  let sumSq = 0;
  let count = 0;
  for (const value of values) {
    if (value === nodata) continue;
    if (value < minimum) minimum = value;
    if (value > maximum) maximum = value;
    sum += value;
    sumSq += value * value;
    count++;
  }
  const mean = count ? sum / count : 0;
  const stddev = count ? Math.sqrt(Math.max(0, sumSq / count - mean * mean)) : 0;
  return { minimum, maximum, mean, stddev, validPercent: (100 * count) / values.length };
}

/**
 * Horn's hillshade in [0, 1] (sun from the north-west, 45° up). A nodata neighbour is replaced by
 * the centre pixel, so the footprint edge does not get a dark artificial cliff.
 */
export function hillshade(dem: Dem, cellSize: number): Float32Array {
  const { width, height, elevation, nodata } = dem;
  const out = new Float32Array(width * height);
  // ESRI's formulation: compass azimuth 315° becomes the math angle 360 - 315 + 90 = 135°.
  const azimuth = ((360 - 315 + 90) * Math.PI) / 180;
  const altitude = (45 * Math.PI) / 180;
  const zenith = Math.PI / 2 - altitude;
  const at = (col: number, row: number, fallback: number): number => {
    const c = Math.min(width - 1, Math.max(0, col));
    const r = Math.min(height - 1, Math.max(0, row));
    const value = elevation[r * width + c] ?? nodata;
    return value === nodata ? fallback : value;
  };
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) {
      const z = elevation[row * width + col] ?? nodata;
      if (z === nodata) continue;
      const a = at(col - 1, row - 1, z);
      const b = at(col, row - 1, z);
      const c = at(col + 1, row - 1, z);
      const d = at(col - 1, row, z);
      const f = at(col + 1, row, z);
      const g = at(col - 1, row + 1, z);
      const h = at(col, row + 1, z);
      const i = at(col + 1, row + 1, z);
      const dzdx = (c + 2 * f + i - (a + 2 * d + g)) / (8 * cellSize);
      const dzdy = (g + 2 * h + i - (a + 2 * b + c)) / (8 * cellSize);
      const slope = Math.atan(Math.hypot(dzdx, dzdy));
      // dzdy grows southwards (rows run north to south), which is what this aspect formula expects.
      const aspect = Math.atan2(dzdy, -dzdx);
      const shade = Math.cos(zenith) * Math.cos(slope) + Math.sin(zenith) * Math.sin(slope) * Math.cos(azimuth - aspect);
      out[row * width + col] = Math.max(0, shade);
    }
  }
  return out;
}

/** Hypsometric tint stops: [metres, r, g, b], valley greens through rock to snow. */
const TINT: ReadonlyArray<readonly [number, number, number, number]> = [
  [400, 86, 134, 74],
  [800, 112, 160, 88],
  [1300, 166, 184, 108],
  [1800, 196, 176, 122],
  [2300, 164, 134, 102],
  [2900, 150, 144, 138],
  [3400, 232, 232, 236],
  [4000, 255, 255, 255],
];
const WATER: readonly [number, number, number] = [64, 118, 172];

function tint(z: number): [number, number, number] {
  const first = TINT[0]!;
  if (z <= first[0]) return [first[1], first[2], first[3]];
  for (let k = 1; k < TINT.length; k++) {
    const hi = TINT[k]!;
    if (z <= hi[0]) {
      const lo = TINT[k - 1]!;
      const t = (z - lo[0]) / (hi[0] - lo[0]);
      return [lo[1] + t * (hi[1] - lo[1]), lo[2] + t * (hi[2] - lo[2]), lo[3] + t * (hi[3] - lo[3])];
    }
  }
  const last = TINT[TINT.length - 1]!;
  return [last[1], last[2], last[3]];
}

/**
 * The shaded-relief "scene": tint × hillshade, as three Byte planes. Valid pixels are clamped to
 * at least 1 in every band because 0 is the RGB nodata value.
 */
export function shadedRelief(dem: Dem, shade: Float32Array): [Uint8Array, Uint8Array, Uint8Array] {
  const n = dem.width * dem.height;
  const planes: [Uint8Array, Uint8Array, Uint8Array] = [new Uint8Array(n), new Uint8Array(n), new Uint8Array(n)];
  for (let i = 0; i < n; i++) {
    const z = dem.elevation[i] ?? dem.nodata;
    if (z === dem.nodata) continue; // stays 0: nodata in all three bands
    const water = dem.lake[i] === 1;
    const colour = water ? WATER : tint(z);
    // Water is flat, so its shade is constant; keep it a touch brighter than the formula gives.
    const light = water ? 0.95 : 0.3 + 0.85 * (shade[i] ?? 0);
    for (let b = 0; b < 3; b++) {
      const value = Math.round((colour[b] ?? 0) * light);
      planes[b]![i] = Math.min(255, Math.max(1, value));
    }
  }
  return planes;
}
