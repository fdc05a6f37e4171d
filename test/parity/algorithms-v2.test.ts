/**
 * Parity of the algorithms with TiTiler 2.4.0 (issue 37): the thirteen it added (slope, cast, ceil,
 * floor, min, max, median, mean, std, var, sum, grayscale, bitonal) and its versions of hillshade,
 * terrarium and terrainrgb.
 *
 * 1. Arrays: generated DEMs and multi-band images of every source dtype, with per-band masks, NaN,
 *    infinities and out-of-range values, go through titiler.core.algorithm 2.4.0 (rio-tiler 9.4.12,
 *    numpy 2.4) in its pinned venv (tools/parity/titiler2.sh, tools/parity/algorithms_v2.py) and
 *    through tessera's modules; dtype, shape, bounds, band names, every mask and every value (masked
 *    ones included) are compared. So are pydantic's verdicts on `algorithm_params`.
 * 2. HTTP: TiTiler 2.4.0 (uvicorn) and tessera with TESSERA_TITILER_API=2 answer `/algorithms`,
 *    every `/algorithms/{id}` and `.npy` tiles of the fixtures with `algorithm=…`. A tile's values
 *    are compared where both servers read the same input values (the pixel, or its 3x3
 *    neighbourhood for slope and hillshade): where the reads themselves differ (warped sampling,
 *    which the COG parity suites compare) the algorithm cannot be judged, and such pixels are
 *    counted in the report, not failed.
 * Outcomes go to .parity/report-algorithms-v2.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ALGORITHM_IDS, getAlgorithm, prepareAlgorithm, type AlgorithmId } from '../../src/image/algorithms/index.js';
import { allocate, type BandArray, type DType, type ImageData } from '../../src/image/image-data.js';
import { TesseraError } from '../../src/errors.js';
import { FIXTURES, startFileServer, type FileServer } from '../helpers/fileserver.js';
import { parseNpy } from '../helpers/npy.js';
import { compareJson, formatDifferences, parseJson } from './compare.js';
import { get, ROOT, startServer, TESSERA_COMMAND, writeReport, type ReportRow, type Service } from './harness.js';

/** The 2.4.0 venv's bin folder (tools/parity/titiler2.sh makes the venv once, then only prints it). */
function titiler2Bin(): string {
  return execFileSync('bash', [path.join(ROOT, 'tools/parity/titiler2.sh')], { encoding: 'utf8' }).trim();
}

// ---- generated inputs ---------------------------------------------------------------------------

/** mulberry32: a small deterministic PRNG, so every run sends the same arrays. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Input {
  name: string;
  img: ImageData;
}

const RANGES: Partial<Record<DType, [number, number]>> = {
  uint8: [0, 255],
  int8: [-128, 127],
  uint16: [0, 65535],
  int16: [-32768, 32767],
  uint32: [0, 4294967295],
  int32: [-2147483648, 2147483647],
};

/** Special float values mixed into float bands: NaN, infinities, -0, the float32 extremes, out-of-range for uint8. */
const SPECIALS = [Number.NaN, Infinity, -Infinity, -0, 3.4e38, -3.4e38, 300.7, -1.5, 127.5, 255.9, 1e-40];

function bandValues(dtype: DType, n: number, rand: () => number, specialRate: number): BandArray {
  const out = allocate(dtype, n);
  const range = RANGES[dtype];
  for (let i = 0; i < n; i++) {
    if (range) {
      // Mostly mid-range, some extremes.
      const r = rand();
      out[i] = r < 0.05 ? range[0] : r < 0.1 ? range[1] : Math.floor(range[0] + rand() * (range[1] - range[0] + 1));
    } else {
      out[i] = rand() < specialRate ? SPECIALS[Math.floor(rand() * SPECIALS.length)]! : (rand() - 0.3) * 400;
    }
  }
  return out;
}

/** Per-band masks (255 valid): `rate` of pixels masked at random, plus the first 8 pixels masked in every band. */
function masks(count: number, n: number, rand: () => number, rate: number): Uint8Array[] {
  return Array.from({ length: count }, () => {
    const m = new Uint8Array(n).fill(255);
    for (let i = 0; i < n; i++) if (rand() < rate || i < 8) m[i] = 0;
    return m;
  });
}

function multiband(name: string, dtype: DType, count: number, seed: number, opts: { maskRate?: number; specialRate?: number; size?: number } = {}): Input {
  const size = opts.size ?? 24;
  const n = size * size;
  const rand = prng(seed);
  const bands = Array.from({ length: count }, () => bandValues(dtype, n, rand, opts.specialRate ?? 0.1));
  return {
    name,
    img: {
      width: size,
      height: size,
      dtype,
      bands,
      masks: masks(count, n, rand, opts.maskRate ?? 0.15),
      bandNames: bands.map((_, i) => `b${i + 1}`),
      bounds: [0, 0, size, size],
      crs: 'EPSG:4326',
    },
  };
}

/** A smooth DEM (with noise), `nanRate` of valid NaNs for floats, masked pixels, on `bounds`. */
function dem(name: string, dtype: DType, seed: number, bounds: [number, number, number, number], opts: { nanRate?: number; maskRate?: number } = {}): Input {
  const w = 40;
  const h = 36;
  const rand = prng(seed);
  const band = allocate(dtype, w * h);
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      let v = 1000 + 300 * Math.sin(c / 7) * Math.cos(r / 9) + 40 * rand();
      if (dtype !== 'float32' && dtype !== 'float64') v = Math.round(v);
      if ((dtype === 'float32' || dtype === 'float64') && rand() < (opts.nanRate ?? 0)) v = Number.NaN;
      band[r * w + c] = v;
    }
  }
  const mask = new Uint8Array(w * h).fill(255);
  for (let i = 0; i < w * h; i++) if (rand() < (opts.maskRate ?? 0.03)) mask[i] = 0;
  return { name, img: { width: w, height: h, dtype, bands: [band], masks: [mask], bandNames: ['b1'], bounds, crs: 'EPSG:3857' } };
}

const IMAGES: Input[] = [
  multiband('rgb-uint8', 'uint8', 3, 1),
  multiband('uint16x4', 'uint16', 4, 2),
  multiband('int16x5', 'int16', 5, 3),
  multiband('float32x3-specials', 'float32', 3, 4, { specialRate: 0.2 }),
  multiband('float64x2', 'float64', 2, 5, { specialRate: 0.1 }),
  multiband('int8x3', 'int8', 3, 6),
  multiband('uint32x3', 'uint32', 3, 7),
  multiband('int32x2', 'int32', 2, 8),
  multiband('uint8x1', 'uint8', 1, 9),
  multiband('float32x1-nan', 'float32', 1, 10, { specialRate: 0.1 }),
  multiband('float32x4-clean', 'float32', 4, 11, { specialRate: 0, maskRate: 0 }),
  multiband('uint8x3-unmasked', 'uint8', 3, 12, { maskRate: 0 }),
  multiband('float64x6-specials', 'float64', 6, 13, { specialRate: 0.3, maskRate: 0.3 }),
];

const DEMS: Input[] = [
  dem('dem-float32-metres', 'float32', 21, [500000, 4000000, 501200, 4001080], { nanRate: 0.02 }),
  dem('dem-int16-metres', 'int16', 22, [0, 0, 1200, 1080]),
  dem('dem-uint16-degrees', 'uint16', 23, [7.0, 45.9, 7.0004, 45.90036]),
  dem('dem-float64-metres', 'float64', 24, [-1200, -1080, 0, 0], { nanRate: 0.01, maskRate: 0.1 }),
];

// ---- cases ------------------------------------------------------------------------------------

interface ImageCase {
  id: string;
  algorithm: AlgorithmId;
  params: Record<string, unknown>;
  input: Input;
}

const REDUCTIONS: AlgorithmId[] = ['cast', 'ceil', 'floor', 'min', 'max', 'median', 'mean', 'std', 'var', 'sum', 'grayscale', 'bitonal'];

const IMAGE_CASES: ImageCase[] = [
  ...IMAGES.flatMap((input) => REDUCTIONS.map((algorithm): ImageCase => ({ id: `${algorithm}/${input.name}`, algorithm, params: {}, input }))),
  ...DEMS.flatMap((input): ImageCase[] => [
    { id: `slope/${input.name}`, algorithm: 'slope', params: {}, input },
    { id: `slope-b0/${input.name}`, algorithm: 'slope', params: { buffer: 0 }, input },
    { id: `slope-b2-z2.5/${input.name}`, algorithm: 'slope', params: { buffer: 2, z_exaggeration: 2.5 }, input },
    { id: `slope-z1e-6/${input.name}`, algorithm: 'slope', params: { buffer: 1, z_exaggeration: 1e-6 }, input },
    { id: `hillshade/${input.name}`, algorithm: 'hillshade', params: {}, input },
    { id: `hillshade-params/${input.name}`, algorithm: 'hillshade', params: { azimuth: 315, angle_altitude: 30.5, buffer: 0, z_exaggeration: 3 }, input },
    { id: `terrarium/${input.name}`, algorithm: 'terrarium', params: {}, input },
    { id: `terrarium-nodata/${input.name}`, algorithm: 'terrarium', params: { nodata_height: -100.5 }, input },
    { id: `terrainrgb/${input.name}`, algorithm: 'terrainrgb', params: {}, input },
    { id: `terrainrgb-nodata/${input.name}`, algorithm: 'terrainrgb', params: { interval: 0.5, baseval: -500, nodata_height: 250.25 }, input },
    { id: `contours/${input.name}`, algorithm: 'contours', params: { increment: 20, thickness: 3, minz: 800, maxz: 1400 }, input },
  ]),
  { id: 'normalizedIndex/uint16x4', algorithm: 'normalizedIndex', params: {}, input: IMAGES[1]! },
  { id: 'normalizedIndex/float64x2', algorithm: 'normalizedIndex', params: {}, input: IMAGES[4]! },
];

/** `algorithm_params` whose pydantic verdict (valid, or the error text) is compared. No integral floats: JSON cannot tell 1.0 from 1 in JavaScript. */
const VALIDATION_CASES: Array<[AlgorithmId, Record<string, unknown>]> = [
  ['slope', {}],
  ['slope', { buffer: 100 }],
  ['slope', { buffer: '2', z_exaggeration: '1e-6' }],
  ['slope', { z_exaggeration: 0 }],
  ['slope', { z_exaggeration: 1e-7 }],
  ['slope', { z_exaggeration: 1000001 }],
  ['slope', { z_exaggeration: 'abc', buffer: 1.5 }],
  ['slope', { output_min: 'ab' }],
  ['slope', { output_min: [0.5, 'x'] }],
  ['slope', { output_max: { a: 1 } }],
  ['slope', { input_nbands: null }],
  ['hillshade', { z_exaggeration: 0.5, azimuth: 400 }],
  ['hillshade', { z_exaggeration: null }],
  ['hillshade', { azimuth: '45', angle_altitude: '-90' }],
  ['terrarium', { nodata_height: null }],
  ['terrarium', { nodata_height: '12.5' }],
  ['terrarium', { nodata_height: 100000 }],
  ['terrarium', { nodata_height: 'x' }],
  ['terrainrgb', { nodata_height: -99999.5, interval: 2 }],
  ['terrainrgb', { nodata_height: [1] }],
  ['cast', { input_nbands: null, output_nbands: null }],
  ['cast', { output_min: [0.5] }],
  ['cast', { output_min: ['3', 'x'] }],
  ['cast', { output_max: 'ab' }],
  ['ceil', { output_dtype: 5, title: null }],
  ['floor', { anything: [1, 2] }],
  ['min', { output_dtype: null, output_nbands: null }],
  ['max', { output_nbands: 'two' }],
  ['sum', { output_min: 'ab', input_nbands: '3' }],
  ['median', { output_dtype: null }],
  ['mean', { output_dtype: 'float32', description: 1 }],
  ['std', { input_nbands: 2.5 }],
  ['var', { output_max: { k: 1 } }],
  ['grayscale', { output_dtype: null, output_nbands: 3 }],
  ['bitonal', { output_dtype: null }],
  ['normalizedIndex', { output_min: 'ab' }],
  ['contours', { increment: 1000 }],
];

// ---- the reference --------------------------------------------------------------------------------

interface ReferenceImage {
  dtype: string;
  shape: [number, number, number];
  bounds: number[];
  names: string[];
  data: string[];
  mask: string[];
}
type ReferenceResult = ReferenceImage | { error: string } | { validation: string } | { valid: true };

function b64(a: ArrayBufferView): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
}

/** numpy's mask of a band (1 masked) from tessera's (0 masked). */
const numpyMask = (m: Uint8Array): Uint8Array => Uint8Array.from(m, (v) => (v === 0 ? 1 : 0));

function runReference(python: string, cases: unknown[]): ReferenceResult[] {
  const res = spawnSync(python, [path.join(ROOT, 'tools/parity/algorithms_v2.py')], { input: JSON.stringify(cases), maxBuffer: 1 << 30, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`tools/parity/algorithms_v2.py failed (${res.status}): ${res.stderr.slice(-2000)}`);
  return JSON.parse(res.stdout) as ReferenceResult[];
}

const TYPED: Record<string, (buf: ArrayBuffer) => ArrayLike<number>> = {
  uint8: (b) => new Uint8Array(b),
  bool: (b) => new Uint8Array(b),
  int8: (b) => new Int8Array(b),
  uint16: (b) => new Uint16Array(b),
  int16: (b) => new Int16Array(b),
  uint32: (b) => new Uint32Array(b),
  int32: (b) => new Int32Array(b),
  float32: (b) => new Float32Array(b),
  float64: (b) => new Float64Array(b),
  int64: (b) => Array.from(new BigInt64Array(b), Number),
  uint64: (b) => Array.from(new BigUint64Array(b), Number),
};

function decodeBand(text: string, dtype: string): ArrayLike<number> {
  const bytes = Buffer.from(text, 'base64');
  const copy = new ArrayBuffer(bytes.length);
  new Uint8Array(copy).set(bytes);
  const make = TYPED[dtype];
  if (!make) throw new Error(`reference dtype ${dtype} not handled`);
  return make(copy);
}

// ---- comparison -----------------------------------------------------------------------------------

const same = (a: number, b: number): boolean => a === b || (Number.isNaN(a) && Number.isNaN(b));

/** Distance in float32 units in the last place (0 for equal values). */
function ulps32(a: number, b: number): number {
  const f = new Float32Array([a, b]);
  const i = new Int32Array(f.buffer);
  const key = (x: number): number => (x < 0 ? -2147483648 - x : x);
  return Math.abs(key(i[0]!) - key(i[1]!));
}

interface Outcome {
  problems: string[];
  /** Valid pixels whose value differs, of all valid pixels. */
  validDiffer: number;
  valid: number;
  maskedDiffer: number;
  masked: number;
  maxUlp: number;
  maxAbs: number;
}

function compareImage(out: ImageData, ref: ReferenceImage): Outcome {
  const problems: string[] = [];
  const o: Outcome = { problems, validDiffer: 0, valid: 0, maskedDiffer: 0, masked: 0, maxUlp: 0, maxAbs: 0 };
  if (out.dtype !== ref.dtype) problems.push(`dtype ${out.dtype} vs ${ref.dtype}`);
  const shape = [out.bands.length, out.height, out.width];
  if (JSON.stringify(shape) !== JSON.stringify(ref.shape)) {
    problems.push(`shape ${JSON.stringify(shape)} vs ${JSON.stringify(ref.shape)}`);
    return o;
  }
  if (!out.bounds.every((v, i) => v === ref.bounds[i])) problems.push(`bounds ${JSON.stringify(out.bounds)} vs ${JSON.stringify(ref.bounds)}`);
  if (JSON.stringify(out.bandNames) !== JSON.stringify(ref.names)) problems.push(`names ${JSON.stringify(out.bandNames)} vs ${JSON.stringify(ref.names)}`);
  let maskDiffer = 0;
  for (let b = 0; b < ref.shape[0]; b++) {
    const data = decodeBand(ref.data[b]!, ref.dtype);
    const mask = decodeBand(ref.mask[b]!, 'uint8');
    const ours = out.bands[b]!;
    const ourMask = out.masks[b]!;
    for (let i = 0; i < data.length; i++) {
      const masked = mask[i] === 1;
      if (masked !== (ourMask[i] === 0)) maskDiffer++;
      if (masked) o.masked++;
      else o.valid++;
      if (same(ours[i]!, data[i]!)) continue;
      if (masked) o.maskedDiffer++;
      else {
        o.validDiffer++;
        if (ref.dtype === 'float32') o.maxUlp = Math.max(o.maxUlp, ulps32(ours[i]!, data[i]!));
        o.maxAbs = Math.max(o.maxAbs, Math.abs(ours[i]! - data[i]!));
      }
    }
  }
  if (maskDiffer > 0) problems.push(`${maskDiffer} mask values differ`);
  return o;
}

/**
 * What is accepted beyond exact equality: numpy's SIMD float32 arctan is not always correctly
 * rounded (V8's is), so an arctan-based output may be 1 float32 ULP (slope) or 1 grey level
 * (hillshade) off on a few pixels. Nothing else.
 */
function tolerated(c: ImageCase, o: Outcome): boolean {
  if (o.validDiffer === 0) return true;
  const few = o.validDiffer <= Math.max(2, 0.01 * o.valid);
  if (c.algorithm === 'slope') return few && o.maxUlp <= 1;
  if (c.algorithm === 'hillshade') return few && o.maxAbs <= 1;
  return false;
}

function run(c: ImageCase): ImageData | TesseraError {
  const algorithm = getAlgorithm(c.algorithm, '2')!;
  try {
    return prepareAlgorithm({ id: algorithm.id, api: '2', params: c.params }).apply(c.input.img);
  } catch (err) {
    if (err instanceof TesseraError) return err;
    throw err;
  }
}

// ---- the tests ------------------------------------------------------------------------------------

describe('parity with TiTiler 2.4.0: algorithms on arrays', () => {
  let results: ReferenceResult[] = [];
  let validations: ReferenceResult[] = [];
  const rows: ReportRow[] = [];

  before(() => {
    const python = path.join(titiler2Bin(), 'python');
    const imageCases = IMAGE_CASES.map((c) => ({
      algorithm: c.algorithm,
      params: c.params,
      image: {
        dtype: c.input.img.dtype,
        width: c.input.img.width,
        height: c.input.img.height,
        bounds: c.input.img.bounds,
        names: c.input.img.bandNames,
        bands: c.input.img.bands.map(b64),
        masks: c.input.img.masks.map((m) => b64(numpyMask(m))),
      },
    }));
    results = runReference(python, imageCases);
    validations = runReference(
      python,
      VALIDATION_CASES.map(([algorithm, params]) => ({ algorithm, params })),
    );
  });

  after(async () => {
    const equal = rows.filter((r) => r.verdict === 'equal').length;
    const file = await writeReport(
      rows,
      [`Algorithms on generated arrays and their parameters: ${equal} of ${rows.length} cases equal to TiTiler 2.4.0.`],
      [],
      'algorithms-v2-arrays',
    );
    console.log(`parity report: ${file}`);
  });

  IMAGE_CASES.forEach((c, k) => {
    it(c.id, () => {
      const ref = results[k]!;
      const out = run(c);
      if ('error' in ref) {
        assert.ok(out instanceof TesseraError, `TiTiler fails (${ref.error}), tessera answers`);
        assert.equal(out.kind, 'BadRequest');
        rows.push({ id: c.id, request: JSON.stringify(c.params), verdict: 'equal', note: `both refuse: ${ref.error} / 400 ${out.message}` });
        if (ref.error.startsWith('ValueError: ')) assert.equal(out.message, ref.error.slice('ValueError: '.length));
        return;
      }
      assert.ok(!('validation' in ref) && !('valid' in ref));
      if (out instanceof TesseraError) assert.fail(`tessera refuses (${out.message}) what TiTiler computes`);
      const o = compareImage(out, ref);
      const note = `${o.valid} valid (${o.validDiffer} differ${o.maxUlp ? `, ≤${o.maxUlp} ULP` : ''}${o.maxAbs ? `, ≤${o.maxAbs}` : ''}), ${o.masked} masked (${o.maskedDiffer} differ)`;
      const ok = o.problems.length === 0 && o.maskedDiffer === 0 && tolerated(c, o);
      rows.push({
        id: c.id,
        request: JSON.stringify(c.params),
        verdict: ok && o.validDiffer === 0 ? 'equal' : 'differs',
        note: [...o.problems, note].join('; '),
      });
      assert.deepEqual(o.problems, [], c.id);
      assert.equal(o.maskedDiffer, 0, `masked pixels' data differ: ${note}`);
      assert.ok(tolerated(c, o), `valid pixels differ: ${note}`);
    });
  });

  VALIDATION_CASES.forEach(([algorithm, params], k) => {
    it(`algorithm_params ${algorithm} ${JSON.stringify(params)}`, () => {
      const ref = validations[k]!;
      let ours: string | true;
      try {
        getAlgorithm(algorithm, '2')!.parseParams(params);
        ours = true;
      } catch (err) {
        assert.ok(err instanceof TesseraError && err.kind === 'BadRequest', String(err));
        ours = err.message;
      }
      const theirs = 'validation' in ref ? ref.validation : 'valid' in ref ? true : `unexpected ${JSON.stringify(ref)}`;
      rows.push({
        id: `params ${algorithm}`,
        request: JSON.stringify(params),
        verdict: ours === theirs ? 'equal' : 'differs',
        note: ours === true ? 'valid' : ours.split('\n')[0]!,
      });
      assert.equal(ours, theirs);
    });
  });
});

// ---- over HTTP ------------------------------------------------------------------------------------

const e = encodeURIComponent;
const DEM_TILE = '/cog/tiles/WebMercatorQuad/15/17029/11668';
const TCI_TILE = '/cog/tiles/WebMercatorQuad/9/289/207';
const COG1_TILE = '/cog/tiles/WebMercatorQuad/9/150/182';

interface HttpCase {
  id: string;
  path: string;
  kind: 'json' | 'npy' | 'status' | 'html';
  status?: number;
  /** For an algorithm tile: the same tile without the algorithm (its input), the crop and the neighbourhood radius. */
  input?: { path: string; offset: number; radius: number };
}

/** An algorithm tile of `base` (a tile path with its query): its input is `base` itself. */
function algorithmTile(id: string, base: string, algorithm: string, params: string | undefined, offset = 0, radius = 0): HttpCase {
  const query = `&algorithm=${algorithm}${params ? `&algorithm_params=${e(params)}` : ''}`;
  return { id, path: `${base}${query}`, kind: 'npy', input: { path: base, offset, radius } };
}

const HTTP_CASES: HttpCase[] = [
  { id: 'list', path: '/algorithms', kind: 'json' },
  // Every algorithm tessera has is 2.4.0's: each entry compared with TiTiler's.
  ...ALGORITHM_IDS.map((id): HttpCase => ({ id: `metadata-${id}`, path: `/algorithms/${id}`, kind: 'json' })),
  { id: 'metadata-f-json', path: '/algorithms/slope?f=json', kind: 'json' },
  { id: 'unknown-id', path: '/algorithms/nope', kind: 'json', status: 422 },
  { id: 'wrong-case-id', path: '/algorithms/Slope', kind: 'json', status: 422 },
  { id: 'bad-f', path: '/algorithms?f=xml', kind: 'json', status: 422 },
  { id: 'list-html', path: '/algorithms?f=html', kind: 'html' },
  { id: 'metadata-html', path: '/algorithms/slope?f=html', kind: 'html' },
  // Tiles (.npy: the values and the mask as they are).
  { id: 'dem-plain', path: `${DEM_TILE}.npy?url={dem.tif}`, kind: 'npy' },
  algorithmTile('dem-slope', `${DEM_TILE}.npy?url={dem.tif}&buffer=3`, 'slope', undefined, 3, 1),
  algorithmTile('dem-slope-z', `${DEM_TILE}.npy?url={dem.tif}`, 'slope', '{"buffer":0,"z_exaggeration":4.5}', 0, 1),
  algorithmTile('dem-hillshade', `${DEM_TILE}.npy?url={dem.tif}&buffer=3`, 'hillshade', undefined, 3, 1),
  algorithmTile('dem-terrarium-nodata', `${DEM_TILE}.npy?url={dem.tif}`, 'terrarium', '{"nodata_height":0}'),
  algorithmTile('dem-terrainrgb', `${DEM_TILE}.npy?url={dem.tif}`, 'terrainrgb', undefined),
  algorithmTile('dem-terrainrgb-nodata', `${DEM_TILE}.npy?url={dem.tif}`, 'terrainrgb', '{"nodata_height":-10}'),
  { id: 'tci-plain', path: `${TCI_TILE}.npy?url={TCI.tif}`, kind: 'npy' },
  ...['grayscale', 'bitonal', 'cast', 'ceil', 'floor', 'min', 'max', 'sum', 'mean', 'median', 'std', 'var'].map((a) =>
    algorithmTile(`tci-${a}`, `${TCI_TILE}.npy?url={TCI.tif}`, a, undefined),
  ),
  { id: 'cog1-plain', path: `${COG1_TILE}.npy?url={cog1.tif}`, kind: 'npy' },
  ...['sum', 'mean', 'median', 'std', 'grayscale', 'cast'].map((a) => algorithmTile(`cog1-${a}`, `${COG1_TILE}.npy?url={cog1.tif}`, a, undefined)),
  { id: 'bad-slope-params', path: `${DEM_TILE}.npy?url={dem.tif}&algorithm=slope&algorithm_params=${e('{"z_exaggeration":0}')}`, kind: 'json', status: 400 },
  { id: 'unknown-algorithm', path: `${DEM_TILE}.npy?url={dem.tif}&algorithm=nope`, kind: 'status', status: 422 },
];

/** Is the mask band's value masked? TiTiler 2.x writes dtype minimum/maximum, tessera's npy 0/255: both "not above 0". */
const maskedValue = (v: number): boolean => v <= 0;

interface NpyComparison {
  /** What fails the case. */
  problems: string[];
  /** What the report says besides. */
  notes: string[];
}

/**
 * Compares two servers' `.npy` tiles (data bands, then the mask band). With `inputs` (the plain
 * tiles both read), only output pixels whose input neighbourhood both read alike are compared.
 */
function compareNpy(a: Buffer, b: Buffer, inputs?: { a: Buffer; b: Buffer; offset: number; radius: number }): NpyComparison {
  const x = parseNpy(a);
  const y = parseNpy(b);
  const problems: string[] = [];
  const notes: string[] = [];
  if (x.descr !== y.descr) problems.push(`dtype ${x.descr} vs ${y.descr}`);
  if (JSON.stringify(x.shape) !== JSON.stringify(y.shape))
    return { problems: [...problems, `shape ${JSON.stringify(x.shape)} vs ${JSON.stringify(y.shape)}`], notes };
  const [bands = 0, h = 0, w = 0] = x.shape;
  const n = h * w;
  const dataBands = bands - 1;
  // Output pixels whose inputs both servers read alike (all of them without inputs).
  let comparable: (i: number) => boolean = () => true;
  if (inputs) {
    const ia = parseNpy(inputs.a);
    const ib = parseNpy(inputs.b);
    const [ibands = 0, ih = 0, iw = 0] = ia.shape;
    const m = ih * iw;
    const readSame = new Uint8Array(m);
    let readDiffer = 0;
    for (let j = 0; j < m; j++) {
      let ok = maskedValue(ia.values[(ibands - 1) * m + j]!) === maskedValue(ib.values[(ibands - 1) * m + j]!);
      for (let band = 0; ok && band < ibands - 1; band++) ok = same(ia.values[band * m + j]!, ib.values[band * m + j]!);
      readSame[j] = ok ? 1 : 0;
      if (!ok) readDiffer++;
    }
    const { offset, radius } = inputs;
    comparable = (i) => {
      const r = Math.floor(i / w) + offset;
      const c = (i % w) + offset;
      for (let rr = Math.max(0, r - radius); rr <= Math.min(ih - 1, r + radius); rr++) {
        for (let cc = Math.max(0, c - radius); cc <= Math.min(iw - 1, c + radius); cc++) if (!readSame[rr * iw + cc]) return false;
      }
      return true;
    };
    if (readDiffer) notes.push(`the reads differ on ${readDiffer} of ${m} input pixels`);
  }
  let compared = 0;
  let maskDiffer = 0;
  let validDiffer = 0;
  let maxAbs = 0;
  for (let i = 0; i < n; i++) {
    if (!comparable(i)) continue;
    compared++;
    const maskedX = maskedValue(x.values[dataBands * n + i]!);
    if (maskedX !== maskedValue(y.values[dataBands * n + i]!)) maskDiffer++;
    if (maskedX) continue;
    for (let band = 0; band < dataBands; band++) {
      const p = x.values[band * n + i]!;
      const q = y.values[band * n + i]!;
      if (!same(p, q)) {
        validDiffer++;
        maxAbs = Math.max(maxAbs, Math.abs(p - q));
      }
    }
  }
  const what = inputs ? ` (of ${compared} pixels read alike)` : '';
  const found: string[] = [];
  if (maskDiffer) found.push(`${maskDiffer} of ${compared} mask values differ${what}`);
  if (validDiffer) found.push(`${validDiffer} valid values differ${what}, max |Δ| ${maxAbs}`);
  // Plain tiles are the reads themselves: reported here, judged by the COG parity suites.
  if (inputs) problems.push(...found);
  else notes.push(...found.map((f) => `read: ${f}`));
  if (inputs) notes.push(`${compared} of ${n} pixels compared`);
  return { problems, notes };
}

describe('parity with TiTiler 2.4.0 over HTTP: /algorithms and algorithm tiles (TESSERA_TITILER_API=2)', () => {
  let fileserver: FileServer | undefined;
  let titiler: Service | undefined;
  let tessera: Service | undefined;
  const rows: ReportRow[] = [];

  before(async () => {
    const bin = titiler2Bin();
    assert.ok(existsSync(path.join(bin, 'uvicorn')), `TiTiler 2.4.0's venv has no uvicorn in ${bin}`);
    fileserver = await startFileServer(FIXTURES);
    [titiler, tessera] = await Promise.all([
      startServer({
        name: 'TiTiler 2.4.0',
        command: path.join(bin, 'uvicorn'),
        args: (port) => ['titiler.application.main:app', '--host', '127.0.0.1', '--port', String(port), '--no-access-log'],
      }),
      startServer(TESSERA_COMMAND, { TESSERA_TITILER_API: '2' }),
    ]);
  });

  after(async () => {
    await Promise.all([titiler?.stop(), tessera?.stop()]);
    await fileserver?.close();
    const equal = rows.filter((r) => r.verdict === 'equal').length;
    const file = await writeReport(rows, [`Against a live TiTiler 2.4.0: ${equal} of ${rows.length} cases equal.`], [], 'algorithms-v2-http');
    console.log(`parity report: ${file}`);
  });

  for (const c of HTTP_CASES) {
    it(c.id, async () => {
      assert.ok(titiler && tessera && fileserver, 'servers not started');
      const files = fileserver;
      const p = c.path.replace(/\{([^}]+)\}/g, (_, name: string) => e(`${files.url}/${name}`));
      const [a, b] = await Promise.all([get(titiler.url, p), get(tessera.url, p)]);
      const problems: string[] = [];
      assert.equal(a.status, c.status ?? 200, `TiTiler 2.4.0 answered ${a.status}: ${a.body.slice(0, 300)}`);
      if (b.status !== a.status) problems.push(`status ${a.status} vs ${b.status}: ${b.body.slice(0, 200)}`);
      const typeA = a.headers.get('content-type');
      const typeB = b.headers.get('content-type');
      if (c.kind !== 'status' && typeA !== typeB) problems.push(`content-type ${typeA} vs ${typeB}`);
      if (problems.length === 0 && c.kind === 'json') {
        const normalise = (s: string): string => s.split(titiler!.url).join('{BASE}').split(tessera!.url).join('{BASE}');
        const diffs = compareJson(parseJson(normalise(a.body)), parseJson(normalise(b.body)));
        if (diffs.length > 0) problems.push(formatDifferences(diffs, 10));
        // Byte for byte too (key order, float spellings), base URLs aside.
        if (diffs.length === 0 && normalise(a.body) !== normalise(b.body))
          problems.push(`bytes differ:\n${normalise(a.body).slice(0, 400)}\n${normalise(b.body).slice(0, 400)}`);
      }
      const notes: string[] = [];
      if (problems.length === 0 && c.kind === 'npy') {
        const [ra, rb] = await Promise.all([rawGet(titiler.url, p), rawGet(tessera.url, p)]);
        let inputs: { a: Buffer; b: Buffer; offset: number; radius: number } | undefined;
        if (c.input) {
          const q = c.input.path.replace(/\{([^}]+)\}/g, (_, name: string) => e(`${files.url}/${name}`));
          const [ia, ib] = await Promise.all([rawGet(titiler.url, q), rawGet(tessera.url, q)]);
          inputs = { a: ia, b: ib, offset: c.input.offset, radius: c.input.radius };
        }
        const r = compareNpy(ra, rb, inputs);
        problems.push(...r.problems);
        notes.push(...r.notes);
      }
      rows.push({
        id: c.id,
        request: `GET ${c.path}`,
        verdict: problems.length === 0 ? 'equal' : 'differs',
        note: [...problems, ...notes].join('; ').slice(0, 400),
      });
      assert.deepEqual(problems, []);
    });
  }
});

async function rawGet(base: string, p: string): Promise<Buffer> {
  const res = await fetch(`${base}${p}`, { signal: AbortSignal.timeout(30_000) });
  return Buffer.from(await res.arrayBuffer());
}
