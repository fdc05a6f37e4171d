/**
 * Statistics (rio-tiler 6.8 `get_array_statistics` as TiTiler 0.18.10 serves it).
 *
 * Expected outputs are computed by tools/expected/statistics.py with rio-tiler 6.8.0 / numpy 2.4.6 in
 * the parity venv, through TiTiler's own response pipeline (its query dependencies,
 * `ImageData.statistics`, the `Statistics` response model, TiTiler's JSONResponse), from the inputs in
 * test/fixtures/expected/statistics-cases.json: small arrays written out there, large ones from a
 * seeded mulberry32 generator implemented identically in the script and below. Bands without valid
 * pixels make rio-tiler 6.8 raise (TiTiler answers 500); their expected outputs come from the same
 * code with its two weighted helpers returning NaN for empty input, as rio-tiler 7 does.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pyDumps } from '../src/pyjson.js';
import { TesseraError } from '../src/errors.js';
import { ARRAY_OF, type DType, type ImageData } from '../src/image/image-data.js';
import { sumOf } from '../src/image/pairwise-sum.js';
import { sortValues } from '../src/image/sort-values.js';
import { statisticsMapToJson, statisticsToJson } from '../src/image/statistics-json.js';
import { parseStatisticsOptions, type StatisticsOptions } from '../src/image/statistics-options.js';
import { bandStatistics, castToDtype, imageStatistics, roundHalfEven2 } from '../src/image/statistics.js';
import { REPO_ROOT } from './helpers/paths.js';

type Generated = { gen: string; seed: number };

interface StatisticsCase {
  name: string;
  dtype: DType;
  width: number;
  height: number;
  data: number[] | Generated;
  /** 1 = masked. */
  masked?: number[];
  coverage?: number[] | Generated;
  query?: Record<string, string | string[]>;
  /** TiTiler's response body for `{"b1": BandStatistics}`. */
  expected: string;
}

/**
 * The cases and their expected bodies, computed by TiTiler itself: tools/expected/statistics.py reads
 * the inputs from test/fixtures/expected/statistics-cases.json and writes statistics.json beside it.
 * After changing a case, re-run it (from the repository root):
 *   .parity/venv/bin/python tools/expected/statistics.py
 */
const CASES: StatisticsCase[] = loadCases(path.join(REPO_ROOT, 'test/fixtures/expected/statistics.json'));

/** As stored: JSON has no NaN or ±Infinity, so the file spells them "NaN", "Infinity", "-Infinity" (Number() reads them). */
type StoredCase = Omit<StatisticsCase, 'data' | 'coverage'> & {
  data: Array<number | string> | Generated;
  coverage?: Array<number | string> | Generated;
};

function loadCases(file: string): StatisticsCase[] {
  const { cases } = JSON.parse(readFileSync(file, 'utf8')) as { cases: StoredCase[] };
  const numbers = (list: Array<number | string> | Generated): number[] | Generated => (Array.isArray(list) ? list.map(Number) : list);
  return cases.map((c) => ({ ...c, data: numbers(c.data), coverage: c.coverage === undefined ? undefined : numbers(c.coverage) }));
}

/** mulberry32, bit for bit as the Python generator that produced the expected values. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The generators of the Python oracle (tools/expected/statistics.py): three draws per pixel, values and masked flags. */
function generate(spec: Generated, n: number): { values: number[]; masked: boolean[] } {
  const next = mulberry32(spec.seed);
  const values = new Array<number>(n);
  const masked = new Array<boolean>(n);
  for (let i = 0; i < n; i++) {
    const u1 = next();
    const u2 = next();
    const u3 = next();
    switch (spec.gen) {
      case 'float32-noisy': {
        let v = Math.fround(u1 * 2000 - 500);
        if (u2 < 0.01) v = NaN;
        if (u2 > 0.995) v = Infinity;
        values[i] = v;
        masked[i] = u3 < 0.05;
        break;
      }
      case 'uint16-nodata':
        values[i] = Math.floor(u1 * 4096);
        masked[i] = values[i]! < 16;
        break;
      case 'float32-offset':
        values[i] = Math.fround(1e6 + u1 * 1000);
        masked[i] = false;
        break;
      case 'uint8-classes':
        values[i] = Math.floor(u1 * u1 * 12);
        masked[i] = u3 < 0.2;
        break;
      case 'float64-normalish':
        values[i] = (u1 + u2 + u3 - 1.5) * 1e-3;
        masked[i] = false;
        break;
      case 'coverage':
        values[i] = Math.floor(u1 * 101) / 100;
        masked[i] = false;
        break;
      default:
        throw new Error(`unknown generator ${spec.gen}`);
    }
  }
  return { values, masked };
}

interface Inputs {
  band: ReturnType<typeof ARRAY_OF.uint8.prototype.slice>;
  mask: Uint8Array;
  coverage: Float64Array | undefined;
}

function inputsOf(c: StatisticsCase): Inputs {
  const n = c.width * c.height;
  const generated = Array.isArray(c.data) ? undefined : generate(c.data, n);
  const values = generated ? generated.values : (c.data as number[]);
  const band = new ARRAY_OF[c.dtype](n);
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    band[i] = values[i]!;
    const masked = generated ? generated.masked[i]! : c.masked?.[i] === 1;
    mask[i] = masked ? 0 : 255;
  }
  let coverage: Float64Array | undefined;
  if (c.coverage) coverage = Float64Array.from(Array.isArray(c.coverage) ? c.coverage : generate(c.coverage, n).values);
  return { band, mask, coverage };
}

function statisticsText(c: StatisticsCase, inputs: Inputs = inputsOf(c), opts: StatisticsOptions = parseStatisticsOptions(c.query ?? {})): string {
  const stats = bandStatistics(inputs.band, inputs.mask, opts, inputs.coverage, c.dtype);
  return pyDumps({ b1: statisticsToJson(stats) });
}

/** Strings kept, every number replaced by I (Python int) or F (Python float): keys, order, nulls and number kinds. */
function shape(json: string): string {
  return json.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) => (token.startsWith('"') ? token : /[.eE]/.test(token) ? 'F' : 'I'));
}

/** Same structure, numbers within 1e-9 relative (absolute near zero), nulls where nulls are. */
function assertClose(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', `${path}: expected a number, got ${JSON.stringify(actual)}`);
    const a = actual as number;
    const tolerance = 1e-9 * Math.max(Math.abs(expected), 1e-300);
    assert.ok(Math.abs(a - expected) <= tolerance, `${path}: ${a} differs from ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array`);
    assert.equal((actual as unknown[]).length, expected.length, `${path}: length`);
    expected.forEach((e, i) => {
      assertClose((actual as unknown[])[i], e, `${path}[${i}]`);
    });
  } else if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${path}: expected an object`);
    assert.deepEqual(Object.keys(actual as object), Object.keys(expected), `${path}: keys`);
    for (const [k, e] of Object.entries(expected)) assertClose((actual as Record<string, unknown>)[k], e, `${path}.${k}`);
  } else {
    assert.equal(actual, expected, path);
  }
}

describe('bandStatistics against rio-tiler 6.8 / TiTiler 0.18.10', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const text = statisticsText(c);
      assert.equal(shape(text), shape(c.expected), 'keys, order, nulls and int/float kinds');
      assertClose(JSON.parse(text), JSON.parse(c.expected), 'stats');
      // numpy's summation order is reproduced, so the text is byte-identical, not merely close.
      assert.equal(text, c.expected);
    });
  }

  it('reads each band through its own typed array, leaving the input untouched', () => {
    const c = CASES.find((x) => x.name === 'float32 with NaN, Inf and masked pixels')!;
    const inputs = inputsOf(c);
    const before = Array.from(inputs.band);
    const maskBefore = Array.from(inputs.mask);
    statisticsText(c, inputs);
    assert.deepEqual(Array.from(inputs.band), before);
    assert.deepEqual(Array.from(inputs.mask), maskBefore);
  });

  it('refuses more bins than float32 can separate (numpy: "Too many bins for data range")', () => {
    const band = Float32Array.from([1, 1.0000001]);
    const opts = parseStatisticsOptions({ histogram_bins: '100' });
    assert.throws(
      () => bandStatistics(band, new Uint8Array([255, 255]), opts),
      (e: unknown) => e instanceof TesseraError && e.kind === 'BadRequest' && /Too many bins/.test(e.message),
    );
  });

  it('computes a 1024×1024 float32 band with default options quickly', (t) => {
    const c = CASES.find((x) => x.name === 'float32 1024x1024 noisy, defaults')!;
    const inputs = inputsOf(c);
    const opts = parseStatisticsOptions({});
    bandStatistics(inputs.band, inputs.mask, opts); // warm-up
    const runs = 5;
    const start = performance.now();
    for (let i = 0; i < runs; i++) bandStatistics(inputs.band, inputs.mask, opts);
    const ms = (performance.now() - start) / runs;
    t.diagnostic(`1024×1024 float32, default options: ${ms.toFixed(1)} ms per band`);
    assert.ok(ms < 2000, `${ms} ms`);
  });
});

describe('imageStatistics', () => {
  it('keys the bands by name in band order, each with its own mask', () => {
    const img: ImageData = {
      width: 2,
      height: 2,
      dtype: 'int16',
      bounds: [0, 0, 1, 1],
      crs: 'EPSG:4326',
      bands: [Int16Array.from([1, 2, 3, 4]), Int16Array.from([-5, 5, 5, 9])],
      masks: [Uint8Array.from([255, 255, 255, 0]), Uint8Array.from([255, 255, 255, 255])],
      bandNames: ['B09_b1', 'B01_b1'],
    };
    const stats = imageStatistics(img, parseStatisticsOptions({}));
    assert.deepEqual([...stats.keys()], ['B09_b1', 'B01_b1']);
    const json = statisticsMapToJson(stats) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(json), ['B09_b1', 'B01_b1']);
    // hand-derived: band 1 valid = 1, 2, 3; band 2 = -5, 5, 5, 9
    assert.equal(stats.get('B09_b1')!.sum, 6);
    assert.equal(stats.get('B09_b1')!.maskedPixels, 1);
    assert.equal(stats.get('B01_b1')!.majority, 5);
    assert.equal(stats.get('B01_b1')!.median, 5);
    assert.equal(pyDumps(json['B01_b1']!['count']), '4.0');
  });
});

describe('sortValues (radix and counting sorts by dtype)', () => {
  const random = mulberry32(2024);
  const draws: Record<string, () => number> = {
    uint8: () => Math.floor(random() * 256),
    int8: () => Math.floor(random() * 256) - 128,
    uint16: () => Math.floor(random() * 65536),
    int16: () => Math.floor(random() * 65536) - 32768,
    uint32: () => Math.floor(random() * 2 ** 32),
    int32: () => Math.floor(random() * 2 ** 32) - 2 ** 31,
    float32: () => Math.fround((random() - 0.5) * 10 ** (random() * 60 - 30)),
    float64: () => (random() - 0.5) * 10 ** (random() * 600 - 300),
    int64: () => Math.floor((random() - 0.5) * 2 ** 53),
  };
  for (const [dtype, draw] of Object.entries(draws)) {
    it(`orders ${dtype} values as the built-in numeric sort does`, () => {
      const values = new Float64Array(5000).map(draw);
      if (dtype.startsWith('float'))
        values.set(
          [-0, 0, -0, Infinity, -Infinity, dtype === 'float32' ? 3.4028234663852886e38 : Number.MAX_VALUE, dtype === 'float32' ? Math.fround(1e-45) : 5e-324],
          10,
        );
      else values.set([0, 0], 10);
      const expected = Float64Array.from(values).sort();
      sortValues(values, dtype as DType);
      assert.equal(values.length, expected.length);
      for (let i = 0; i < values.length; i++) assert.ok(Object.is(values[i], expected[i]), `${dtype}[${i}]: ${values[i]} vs ${expected[i]}`);
    });
  }
});

describe('pairwise summation', () => {
  // numpy float64 sums (repr) of (u - 0.3) * 1e6 for the first n draws of mulberry32(123).
  const expected: Array<[number, string]> = [
    [0, '0.0'],
    [5, '568264.2676401883'],
    [8, '2294392.289966345'],
    [9, '2778684.577392414'],
    [127, '22203631.343180314'],
    [128, '22233723.228471354'],
    [129, '22718796.07667215'],
    [1000, '201256376.40524656'],
    [100003, '20107364032.049805'],
  ];
  for (const [n, text] of expected) {
    it(`matches numpy bit for bit over ${n} values`, () => {
      const next = mulberry32(123);
      const values = new Float64Array(n);
      for (let i = 0; i < n; i++) values[i] = (next() - 0.3) * 1e6;
      assert.equal(sumOf(values), Number(text));
    });
  }
});

describe('numpy casts and Python rounding', () => {
  it('casts categories to the band dtype as numpy astype does (values observed with numpy 2.4.6 on x86-64)', () => {
    const cases: Array<[number, DType, number]> = [
      [-1, 'uint8', 255],
      [300, 'uint8', 44],
      [2.7, 'uint8', 2],
      [70000, 'int16', 4464],
      [-2.7, 'int16', -2],
      [1e20, 'int16', 0],
      [3e9, 'int16', 0],
      [5e9, 'int32', -2147483648],
      [-1, 'uint32', 4294967295],
      [-3e9, 'uint32', 1294967296],
      [3e9, 'int64', 3000000000],
      [0.1, 'float32', 0.10000000149011612],
      [0.1, 'float64', 0.1],
    ];
    for (const [x, dtype, want] of cases) assert.equal(castToDtype(x, dtype), want, `${x} as ${dtype}`);
  });

  it('rounds valid_percent like Python round(x, 2) (exact halves to even)', () => {
    const cases: Array<[number, number]> = [
      [12.125, 12.12],
      [0.375, 0.38],
      [0.125, 0.12],
      [56.666666666666664, 56.67],
      [93.58, 93.58],
      [99.995, 100],
      [100, 100],
      [87.5, 87.5],
      [0.625, 0.62],
      [33.33333333333333, 33.33],
      [1.005, 1],
    ];
    for (const [x, want] of cases) assert.equal(roundHalfEven2(x), want, String(x));
  });
});

describe('parseStatisticsOptions (TiTiler StatisticsParams + HistogramParams)', () => {
  const bad = (query: Record<string, unknown>, pattern: RegExp): void => {
    assert.throws(
      () => parseStatisticsOptions(query),
      (e: unknown) => e instanceof TesseraError && e.kind === 'BadRequest' && pattern.test(e.message),
      JSON.stringify(query),
    );
  };

  it('defaults: numeric, p=[2, 98], 10 bins, no range, no categories', () => {
    assert.deepEqual(parseStatisticsOptions({}), { categorical: false, percentiles: [2, 98], histogramBins: 10 });
  });

  it('reads categorical spellings, categories and percentiles', () => {
    const o = parseStatisticsOptions({ categorical: 'yes', c: ['1', '2.5', 'nan', '1e3', ' -4 '], p: ['50', '2', 50, '2.0'] });
    assert.equal(o.categorical, true);
    assert.deepEqual(o.categories, [1, 2.5, NaN, 1000, -4]);
    assert.deepEqual(o.percentiles, [50, 2, 50, 2]);
    assert.equal(parseStatisticsOptions({ categorical: true }).categorical, true);
    assert.equal(parseStatisticsOptions({ categorical: 'off' }).categorical, false);
    assert.deepEqual(parseStatisticsOptions({ c: 7, p: '5' }).categories, [7]);
    assert.deepEqual(parseStatisticsOptions({ p: [] }).percentiles, [2, 98]);
  });

  it('reads histogram_bins as Python int() or a list of float()', () => {
    const bins = (text: string): number | number[] => parseStatisticsOptions({ histogram_bins: text }).histogramBins;
    assert.equal(bins(''), 10);
    assert.equal(bins(' 5 '), 5);
    assert.equal(bins('+5'), 5);
    assert.equal(bins('1_0'), 10);
    assert.deepEqual(bins('1,2, 3'), [1, 2, 3]);
    assert.deepEqual(bins('1e2,1_000.5,inf'), [100, 1000.5, Infinity]);
    assert.deepEqual(bins('0,10,10'), [0, 10, 10]);
    assert.deepEqual(bins('-inf,0'), [-Infinity, 0]);
  });

  it('reads histogram_range as min,max', () => {
    assert.deepEqual(parseStatisticsOptions({ histogram_range: '0,1000' }).histogramRange, [0, 1000]);
    assert.deepEqual(parseStatisticsOptions({ histogram_range: ' -1.5 , 2e3 ' }).histogramRange, [-1.5, 2000]);
    assert.equal(parseStatisticsOptions({ histogram_range: '' }).histogramRange, undefined);
    // numpy ignores the range when the edges are explicit, so an inverted one is not an error there
    assert.deepEqual(parseStatisticsOptions({ histogram_bins: '0,10', histogram_range: '10,0' }).histogramRange, [10, 0]);
  });

  it('refuses bad text with a 400 and a clear message', () => {
    bad({ p: '2.5' }, /Invalid percentile '2\.5': expected an integer/);
    bad({ p: 'abc' }, /Invalid percentile 'abc'/);
    bad({ p: ['2', '101'] }, /percentiles must be in the range \[0, 100\]/);
    bad({ p: '-1' }, /percentiles must be in the range \[0, 100\]/);
    bad({ c: ['1', 'abc'] }, /Invalid category 'abc': expected a number/);
    bad({ categorical: 'maybe' }, /Invalid categorical 'maybe'/);
    bad({ histogram_bins: '5.0' }, /Invalid histogram_bins '5\.0': expected a whole number of bins or comma-separated bin edges/);
    bad({ histogram_bins: 'ten' }, /Invalid histogram_bins 'ten'/);
    bad({ histogram_bins: '1,,2' }, /Invalid histogram_bins '1,,2': '' is not a number/);
    bad({ histogram_bins: '1,' }, /Invalid histogram_bins '1,'/);
    bad({ histogram_bins: '0' }, /the number of bins must be positive/);
    bad({ histogram_bins: '-5' }, /the number of bins must be positive/);
    bad({ histogram_bins: '100001' }, /at most 100000 bins/);
    bad({ histogram_bins: '3,1' }, /bin edges must increase monotonically/);
    bad({ histogram_range: '0' }, /Invalid histogram_range values: 0, should be of form 'min,max'/);
    bad({ histogram_range: '0,1,2' }, /should be of form 'min,max'/);
    bad({ histogram_range: 'a,b' }, /should be of form 'min,max'/);
    bad({ histogram_range: '10,0' }, /max must be larger than min/);
    bad({ histogram_range: 'nan,1' }, /the range must be finite/);
    bad({ histogram_range: '0,inf' }, /the range must be finite/);
  });

  it('leaves the histogram options unchecked for categorical statistics, as TiTiler does', () => {
    const o = parseStatisticsOptions({ categorical: 'true', histogram_bins: '0', histogram_range: '10,0' });
    assert.equal(o.histogramBins, 0);
    assert.deepEqual(o.histogramRange, [10, 0]);
    assert.equal(parseStatisticsOptions({ categorical: 'true', histogram_bins: '3,1' }).categorical, true);
  });
});
