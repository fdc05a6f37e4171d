/**
 * The post-processing algorithms and their discovery routes. Every expected value was computed
 * with TiTiler 0.18.10's own classes (titiler.core.algorithm, numpy 2.4, pydantic 2.14) in the
 * parity venv on the same inputs, and the route bodies are TiTiler's responses byte for byte.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  ALGORITHM_IDS,
  ALGORITHM_IDS_018,
  algorithmInfo,
  getAlgorithm,
  listedAlgorithms,
  prepareAlgorithm,
  type TitilerApi,
} from '../src/image/algorithms/index.js';
import { croppedBounds } from '../src/image/algorithms/hillshade.js';
import { acceptedMediaType, algorithmRoutes } from '../src/api/routes/algorithms.js';
import { parseAlgorithm, postProcess, postProcessFor } from '../src/api/params/index.js';
import { installErrorHandling } from '../src/api/errors.js';
import { TesseraError } from '../src/errors.js';
import { allocate, type DType, type ImageData } from '../src/image/image-data.js';

// ---- helpers ------------------------------------------------------------------------------------

/** An image from row-major band values; `masked` holds 1 where a pixel is masked (numpy's mask). */
function image(dtype: DType, width: number, height: number, bands: number[][], masked: number[][], extra: Partial<ImageData> = {}): ImageData {
  return {
    width,
    height,
    dtype,
    bands: bands.map((values) => {
      const a = allocate(dtype, values.length);
      a.set(values);
      return a;
    }),
    masks: masked.map((m) => Uint8Array.from(m, (v) => (v ? 0 : 255))),
    bandNames: bands.map((_, i) => `b${i + 1}`),
    bounds: [0, 0, 1, 1],
    crs: 'EPSG:4326',
    ...extra,
  };
}

interface Expected {
  dtype: DType;
  /** [bands, height, width], as numpy's shape. */
  shape: [number, number, number];
  bounds: number[];
  names: string[];
  data: number[][];
  masked: number[][];
}

function assertImage(out: ImageData, want: Expected): void {
  assert.equal(out.dtype, want.dtype, 'dtype');
  assert.deepEqual([out.bands.length, out.height, out.width], want.shape, 'shape');
  assert.deepEqual(out.bounds, want.bounds, 'bounds');
  assert.deepEqual(out.bandNames, want.names, 'band names');
  assert.equal(out.masks.length, want.shape[0], 'one mask per band');
  want.data.forEach((values, b) => {
    assert.deepEqual(Array.from(out.bands[b]!), values, `band ${b + 1} values`);
    assert.deepEqual(
      Array.from(out.masks[b]!, (v) => (v === 0 ? 1 : 0)),
      want.masked[b],
      `band ${b + 1} mask`,
    );
  });
}

function run(id: string, params: Record<string, unknown>, img: ImageData): ImageData {
  const algorithm = getAlgorithm(id);
  assert.ok(algorithm, `algorithm ${id}`);
  return prepareAlgorithm({ id: algorithm.id, api: '0.18', params }).apply(img);
}

const isBadRequest =
  (message: string | RegExp) =>
  (err: unknown): boolean => {
    assert.ok(err instanceof TesseraError, `expected a TesseraError, got ${String(err)}`);
    assert.equal(err.kind, 'BadRequest');
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  };

// ---- metadata and routes ------------------------------------------------------------------------

/** TiTiler 0.18.10's `GET /algorithms/{id}` bodies. */
const TITILER_METADATA: Record<string, string> = {
  hillshade:
    '{"title":"Hillshade","description":"Create hillshade from DEM dataset.","inputs":{"nbands":1},"outputs":{"nbands":1,"dtype":"uint8","min":null,"max":null},"parameters":{"azimuth":{"default":90,"maximum":360,"minimum":0,"title":"Azimuth","type":"integer"},"angle_altitude":{"default":90.0,"maximum":90.0,"minimum":-90.0,"title":"Angle Altitude","type":"number"},"buffer":{"default":3,"maximum":99,"minimum":0,"title":"Buffer","type":"integer"}}}',
  contours:
    '{"title":"Contours","description":"Create contours from DEM dataset.","inputs":{"nbands":1},"outputs":{"nbands":3,"dtype":"uint8","min":null,"max":null},"parameters":{"increment":{"default":35,"maximum":999,"minimum":0,"title":"Increment","type":"integer"},"thickness":{"default":1,"maximum":10,"minimum":0,"title":"Thickness","type":"integer"},"minz":{"default":-12000,"maximum":99999,"minimum":-99999,"title":"Minz","type":"integer"},"maxz":{"default":8000,"maximum":99999,"minimum":-99999,"title":"Maxz","type":"integer"}}}',
  normalizedIndex:
    '{"title":"Normalized Difference Index","description":"Compute normalized difference index from two bands.","inputs":{"nbands":2},"outputs":{"nbands":1,"dtype":"float32","min":[-1.0],"max":[1.0]},"parameters":{}}',
  terrarium:
    '{"title":"Terrarium","description":"Encode DEM into RGB (Mapzen Terrarium).","inputs":{"nbands":1},"outputs":{"nbands":3,"dtype":"uint8","min":null,"max":null},"parameters":{}}',
  terrainrgb:
    '{"title":"TerrainRGB","description":"Encode DEM into RGB (Mapbox Terrain RGB).","inputs":{"nbands":1},"outputs":{"nbands":3,"dtype":"uint8","min":null,"max":null},"parameters":{"interval":{"default":0.1,"maximum":1.0,"minimum":0.0,"title":"Interval","type":"number"},"baseval":{"default":-10000.0,"maximum":99999.0,"minimum":-99999.0,"title":"Baseval","type":"number"}}}',
};
const TITILER_ORDER = ['hillshade', 'contours', 'normalizedIndex', 'terrarium', 'terrainrgb'];
const TITILER2_ORDER = [
  'hillshade',
  'slope',
  'contours',
  'normalizedIndex',
  'terrarium',
  'terrainrgb',
  'cast',
  'ceil',
  'floor',
  'min',
  'max',
  'median',
  'mean',
  'std',
  'var',
  'sum',
  'grayscale',
  'bitonal',
];
const TITILER_UNKNOWN_ID =
  '{"detail":[{"type":"literal_error","loc":["path","algorithmId"],"msg":"Input should be \'hillshade\', \'contours\', \'normalizedIndex\', \'terrarium\' or \'terrainrgb\'","input":"foo","ctx":{"expected":"\'hillshade\', \'contours\', \'normalizedIndex\', \'terrarium\' or \'terrainrgb\'"}}]}';

async function routesApp(api: TitilerApi = '0.18'): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  installErrorHandling(app);
  app.decorate('rootPath', '');
  await app.register(algorithmRoutes(api));
  await app.ready();
  return app;
}

describe('algorithm registry', () => {
  it("lists TiTiler 0.18.10's five algorithms in its order under 0.18, 2.4.0's eighteen under 2", () => {
    assert.deepEqual([...ALGORITHM_IDS_018], TITILER_ORDER);
    assert.deepEqual([...listedAlgorithms('0.18')], TITILER_ORDER);
    assert.deepEqual([...listedAlgorithms('2')], TITILER2_ORDER);
    assert.deepEqual([...ALGORITHM_IDS], TITILER2_ORDER);
  });

  it('the query enum accepts every name under either generation (the 2.x ones are told apart by their names)', () => {
    assert.deepEqual((postProcess.params['algorithm']!.schema as { enum: string[] }).enum, TITILER2_ORDER);
    assert.deepEqual((postProcessFor('2').params['algorithm']!.schema as { enum: string[] }).enum, TITILER2_ORDER);
  });

  it('finds algorithms by exact id only, in the generation asked for', () => {
    assert.equal(getAlgorithm('hillshade')?.id, 'hillshade');
    assert.equal(getAlgorithm('Hillshade'), undefined);
    assert.equal(getAlgorithm('slope')?.id, 'slope');
    assert.equal(getAlgorithm('slope', '0.18'), getAlgorithm('slope', '2'));
    assert.notEqual(getAlgorithm('hillshade', '0.18'), getAlgorithm('hillshade', '2'));
    assert.equal(getAlgorithm('normalizedIndex', '0.18'), getAlgorithm('normalizedIndex', '2'));
    assert.equal(algorithmInfo('hillshade', '2').parameters['azimuth']!.default, 45);
    assert.equal(algorithmInfo('hillshade', '0.18').parameters['azimuth']!.default, 90);
  });
});

describe('GET /algorithms routes', () => {
  it("GET /algorithms is TiTiler's body byte for byte", async () => {
    const app = await routesApp();
    try {
      const res = await app.inject({ method: 'GET', url: '/algorithms' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.body, `{${TITILER_ORDER.map((id) => `"${id}":${TITILER_METADATA[id]}`).join(',')}}`);
    } finally {
      await app.close();
    }
  });

  it("GET /algorithms/{id} is TiTiler's body for every id", async () => {
    const app = await routesApp();
    try {
      for (const id of TITILER_ORDER) {
        const res = await app.inject({ method: 'GET', url: `/algorithms/${id}` });
        assert.equal(res.statusCode, 200, id);
        assert.equal(res.body, TITILER_METADATA[id], id);
      }
    } finally {
      await app.close();
    }
  });

  it("an unknown id is FastAPI's 422 literal_error", async () => {
    const app = await routesApp();
    try {
      const res = await app.inject({ method: 'GET', url: '/algorithms/foo' });
      assert.equal(res.statusCode, 422);
      assert.equal(res.body, TITILER_UNKNOWN_ID);
    } finally {
      await app.close();
    }
  });
});

// ---- parameter validation -----------------------------------------------------------------------

type ValidationCase = [string, Record<string, unknown>, { ok: Record<string, number> } | { error: string }];

/** pydantic's verdicts on TiTiler's models (`Model(**params)`), as `str(ValidationError)`. */
const VALIDATION: ValidationCase[] = [
  ['hillshade', { azimuth: '45' }, { ok: { azimuth: 45, angleAltitude: 90.0, buffer: 3 } }],
  ['hillshade', { azimuth: ' 45 ' }, { ok: { azimuth: 45, angleAltitude: 90.0, buffer: 3 } }],
  ['hillshade', { azimuth: '45.00' }, { ok: { azimuth: 45, angleAltitude: 90.0, buffer: 3 } }],
  ['hillshade', { azimuth: true }, { ok: { azimuth: 1, angleAltitude: 90.0, buffer: 3 } }],
  ['hillshade', { azimuth: '4_5' }, { ok: { azimuth: 45, angleAltitude: 90.0, buffer: 3 } }],
  [
    'hillshade',
    { azimuth: 45.5 },
    {
      error:
        '1 validation error for HillShade\nazimuth\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=45.5, input_type=float]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_from_float',
    },
  ],
  [
    'hillshade',
    { azimuth: '45.5' },
    {
      error:
        "1 validation error for HillShade\nazimuth\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='45.5', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing",
    },
  ],
  [
    'hillshade',
    { azimuth: null },
    {
      error:
        '1 validation error for HillShade\nazimuth\n  Input should be a valid integer [type=int_type, input_value=None, input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_type',
    },
  ],
  [
    'hillshade',
    { azimuth: 400 },
    {
      error:
        '1 validation error for HillShade\nazimuth\n  Input should be less than or equal to 360 [type=less_than_equal, input_value=400, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal',
    },
  ],
  [
    'hillshade',
    { azimuth: '-45.000' },
    {
      error:
        "1 validation error for HillShade\nazimuth\n  Input should be greater than or equal to 0 [type=greater_than_equal, input_value='-45.000', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal",
    },
  ],
  [
    'hillshade',
    { azimuth: [1.5, 'x', null, true, { k: [2] }] },
    {
      error:
        "1 validation error for HillShade\nazimuth\n  Input should be a valid integer [type=int_type, input_value=[1.5, 'x', None, True, {'k': [2]}], input_type=list]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_type",
    },
  ],
  [
    'hillshade',
    { azimuth: 'a\'b"c' },
    {
      error:
        "1 validation error for HillShade\nazimuth\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='a\\'b\"c', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing",
    },
  ],
  [
    'hillshade',
    {
      azimuth:
        '\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9',
    },
    {
      error:
        "1 validation error for HillShade\nazimuth\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='éééééééééééé...ééééééééééé', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing",
    },
  ],
  [
    'hillshade',
    {
      azimuth: [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
      ],
    },
    {
      error:
        '1 validation error for HillShade\nazimuth\n  Input should be a valid integer [type=int_type, input_value=[0, 1, 2, 3, 4, 5, 6, 7, ... 34, 35, 36, 37, 38, 39], input_type=list]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_type',
    },
  ],
  [
    'hillshade',
    { azimuth: '\u0001\u007f\u00ad\u2028\u200b' },
    {
      error:
        "1 validation error for HillShade\nazimuth\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='\\x01\\x7f\\xad\\u2028\\u200b', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing",
    },
  ],
  [
    'hillshade',
    { azimuth: 1e300 },
    {
      error:
        '1 validation error for HillShade\nazimuth\n  Unable to parse input string as an integer, exceeded maximum size [type=int_parsing_size, input_value=1e+300, input_type=float]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing_size',
    },
  ],
  [
    'hillshade',
    { angle_altitude: 'nan' },
    {
      error:
        "1 validation error for HillShade\nangle_altitude\n  Input should be less than or equal to 90 [type=less_than_equal, input_value='nan', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal",
    },
  ],
  [
    'hillshade',
    { angle_altitude: '-inf' },
    {
      error:
        "1 validation error for HillShade\nangle_altitude\n  Input should be greater than or equal to -90 [type=greater_than_equal, input_value='-inf', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal",
    },
  ],
  ['hillshade', { angle_altitude: '1_.5' }, { ok: { azimuth: 90, angleAltitude: 1.5, buffer: 3 } }],
  [
    'hillshade',
    { angle_altitude: '1__0' },
    {
      error:
        "1 validation error for HillShade\nangle_altitude\n  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='1__0', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing",
    },
  ],
  ['hillshade', { angle_altitude: '\u00a03' }, { ok: { azimuth: 90, angleAltitude: 3.0, buffer: 3 } }],
  [
    'hillshade',
    { angle_altitude: 90.0000001 },
    {
      error:
        '1 validation error for HillShade\nangle_altitude\n  Input should be less than or equal to 90 [type=less_than_equal, input_value=90.0000001, input_type=float]\n    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal',
    },
  ],
  [
    'hillshade',
    { angle_altitude: 'abc' },
    {
      error:
        "1 validation error for HillShade\nangle_altitude\n  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='abc', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing",
    },
  ],
  [
    'hillshade',
    { angle_altitude: { a: 1 } },
    {
      error:
        "1 validation error for HillShade\nangle_altitude\n  Input should be a valid number [type=float_type, input_value={'a': 1}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.14/v/float_type",
    },
  ],
  [
    'hillshade',
    { buffer: -1, azimuth: 400 },
    {
      error:
        '2 validation errors for HillShade\nazimuth\n  Input should be less than or equal to 360 [type=less_than_equal, input_value=400, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal\nbuffer\n  Input should be greater than or equal to 0 [type=greater_than_equal, input_value=-1, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal',
    },
  ],
  [
    'hillshade',
    { input_nbands: 'x', azimuth: 400, title: 5 },
    {
      error:
        "3 validation errors for HillShade\ninput_nbands\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='x', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing\ntitle\n  Input should be a valid string [type=string_type, input_value=5, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/string_type\nazimuth\n  Input should be less than or equal to 360 [type=less_than_equal, input_value=400, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal",
    },
  ],
  ['hillshade', { foo: 'bar', azimuth: '12' }, { ok: { azimuth: 12, angleAltitude: 90.0, buffer: 3 } }],
  ['hillshade', { output_min: 'ab' }, { ok: { azimuth: 90, angleAltitude: 90.0, buffer: 3 } }],
  [
    'hillshade',
    { output_max: { a: 1 } },
    {
      error:
        "1 validation error for HillShade\noutput_max\n  Input should be an instance of Sequence [type=is_instance_of, input_value={'a': 1}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.14/v/is_instance_of",
    },
  ],
  [
    'normalizedIndex',
    { output_min: 'ab' },
    {
      error:
        "1 validation error for NormalizedIndex\noutput_min\n  'str' instances are not allowed as a Sequence value [type=sequence_str, input_value='ab', input_type=str]",
    },
  ],
  [
    'normalizedIndex',
    { output_min: ['a', 1, null, [2], ' 3 '] },
    {
      error:
        "3 validation errors for NormalizedIndex\noutput_min.0\n  Input should be a valid number, unable to parse string as a number [type=float_parsing, input_value='a', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/float_parsing\noutput_min.2\n  Input should be a valid number [type=float_type, input_value=None, input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.14/v/float_type\noutput_min.3\n  Input should be a valid number [type=float_type, input_value=[2], input_type=list]\n    For further information visit https://errors.pydantic.dev/2.14/v/float_type",
    },
  ],
  ['normalizedIndex', { anything: [1] }, { ok: {} }],
  [
    'contours',
    { increment: 0, thickness: 11, minz: '-99999', maxz: 100000 },
    {
      error:
        '2 validation errors for Contours\nthickness\n  Input should be less than or equal to 10 [type=less_than_equal, input_value=11, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal\nmaxz\n  Input should be less than or equal to 99999 [type=less_than_equal, input_value=100000, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal',
    },
  ],
  ['contours', {}, { ok: { increment: 35, thickness: 1, minz: -12000, maxz: 8000 } }],
  [
    'terrarium',
    { input_nbands: 2.5 },
    {
      error:
        '1 validation error for Terrarium\ninput_nbands\n  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=2.5, input_type=float]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_from_float',
    },
  ],
  [
    'terrainrgb',
    { interval: '0.5', baseval: '-1e5' },
    {
      error:
        "1 validation error for TerrainRGB\nbaseval\n  Input should be greater than or equal to -99999 [type=greater_than_equal, input_value='-1e5', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal",
    },
  ],
  ['terrainrgb', { interval: 0 }, { ok: { interval: 0.0, baseval: -10000.0 } }],
];

describe('algorithm_params validation (pydantic v2, lax mode)', () => {
  for (const [id, params, want] of VALIDATION) {
    it(`${id} ${JSON.stringify(params).slice(0, 70)}`, () => {
      const algorithm = getAlgorithm(id)!;
      if ('ok' in want) assert.deepEqual(algorithm.parseParams(params), want.ok);
      else assert.throws(() => algorithm.parseParams(params), isBadRequest(want.error));
    });
  }

  it('fills every default when no parameter is given', () => {
    assert.deepEqual(getAlgorithm('hillshade')!.parseParams({}), { azimuth: 90, angleAltitude: 90, buffer: 3 });
    assert.deepEqual(getAlgorithm('terrainrgb')!.parseParams({}), { interval: 0.1, baseval: -10000 });
    assert.deepEqual(getAlgorithm('terrarium')!.parseParams({ anything: 1 }), {});
  });
});

describe("parseAlgorithm (the image routes' PostProcessParams)", () => {
  it('is undefined without an algorithm, whatever the parameters', () => {
    assert.equal(parseAlgorithm(undefined, undefined), undefined);
    assert.equal(parseAlgorithm(undefined, '{"azimuth": 1}'), undefined);
  });

  it('binds validated parameters to a step', () => {
    const step = parseAlgorithm('hillshade', '{"buffer": 0, "azimuth": "45", "angle_altitude": 30}');
    assert.equal(step?.id, 'hillshade');
    const out = step!.apply(image('float32', 2, 2, [[0, 1, 2, 3]], [[0, 0, 0, 0]]));
    assert.equal(out.width, 2, 'buffer 0 keeps the size');
    // An empty or missing algorithm_params means no parameters: the default buffer 3 applies.
    const defaults = parseAlgorithm('hillshade', '')!.apply(image('float32', 8, 7, [new Array(56).fill(5)], [new Array(56).fill(0)]));
    assert.deepEqual([defaults.width, defaults.height], [2, 1]);
  });

  it('refuses unparsable or non-object parameters with a 400 (TiTiler: 500)', () => {
    assert.throws(() => parseAlgorithm('hillshade', '{azimuth: 1}'), isBadRequest('Could not parse the algorithm_params value: not valid JSON.'));
    assert.throws(() => parseAlgorithm('hillshade', '[1]'), isBadRequest('Invalid algorithm_params: expected a JSON object.'));
    assert.throws(() => parseAlgorithm('terrainrgb', 'null'), isBadRequest('Invalid algorithm_params: expected a JSON object.'));
  });

  it("reports invalid parameters with pydantic's text", () => {
    assert.throws(
      () => parseAlgorithm('contours', '{"thickness": 11}'),
      isBadRequest(
        '1 validation error for Contours\nthickness\n  Input should be less than or equal to 10 [type=less_than_equal, input_value=11, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal',
      ),
    );
  });

  it('refuses an unknown algorithm', () => {
    assert.throws(() => parseAlgorithm('nope', undefined), isBadRequest(/Unknown algorithm 'nope'/));
  });
});

// ---- hillshade ----------------------------------------------------------------------------------

const DEM = [
  [10, 12.5, 15, 13, 11, 9],
  [11, 14, 19.75, 16, 12, 8],
  [12, 17, 25, 21, 14, 7],
  [11, 15, 21.5, 18, 13, 6.5],
  [9, 12, 16, 14, 10, 6],
].flat();
const DEM_MASKED = [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]];

describe('hillshade', () => {
  it("float32 DEM, azimuth 45, altitude 30, no buffer: values and numpy.ma's mask propagation", () => {
    const out = run('hillshade', { azimuth: 45, angle_altitude: 30, buffer: 0 }, image('float32', 6, 5, [DEM], DEM_MASKED, { datasetStatistics: [[6, 25]] }));
    assertImage(out, {
      dtype: 'uint8',
      shape: [1, 5, 6],
      bounds: [0, 0, 1, 1],
      names: ['hillshade'],
      data: [[244, 249, 220, 165, 121, 57, 240, 243, 229, 140, 255, 50, 216, 220, 247, 255, 64, 255, 255, 174, 92, 30, 255, 54, 255, 255, 76, 32, 32, 58]],
      masked: [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0]],
    });
    assert.equal(out.datasetStatistics, undefined, 'statistics of the input do not describe the output');
  });

  it('buffer 1 crops one pixel on each side and shrinks the bounds', () => {
    const out = run('hillshade', { azimuth: 45, angle_altitude: 30, buffer: 1 }, image('float32', 6, 5, [DEM], DEM_MASKED, { bounds: [100, 40, 106, 45] }));
    assertImage(out, {
      dtype: 'uint8',
      shape: [1, 3, 4],
      bounds: [101, 41, 105, 44],
      names: ['hillshade'],
      data: [[243, 229, 140, 255, 220, 247, 255, 64, 174, 92, 30, 255]],
      masked: [[0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1]],
    });
  });

  it('uint16 DEM (computed in float64), azimuth 315, altitude 45', () => {
    const dem = [100, 120, 150, 170, 160, 110, 140, 190, 200, 180, 105, 130, 170, 210, 220, 90, 100, 120, 160, 200];
    const out = run('hillshade', { azimuth: 315, angle_altitude: 45, buffer: 0 }, image('uint16', 5, 4, [dem], [new Array(20).fill(0)]));
    assertImage(out, {
      dtype: 'uint8',
      shape: [1, 4, 5],
      bounds: [0, 0, 1, 1],
      names: ['hillshade'],
      data: [[160, 140, 109, 78, 46, 188, 185, 170, 54, 41, 213, 217, 219, 219, 133, 220, 215, 216, 218, 215]],
      masked: [new Array(20).fill(0)],
    });
  });

  it('int16 DEM with the defaults (azimuth 90, altitude 90, buffer 3)', () => {
    const dem: number[] = [];
    for (let r = 0; r < 8; r++) for (let c = 0; c < 9; c++) dem.push((r * 37 + c * c * 11) % 53);
    const out = run('hillshade', {}, image('int16', 9, 8, [dem], [new Array(72).fill(0)], { bounds: [-1000, 2000, 8000, 10000] }));
    assertImage(out, {
      dtype: 'uint8',
      shape: [1, 2, 3],
      bounds: [2000, 5000, 5000, 7000],
      names: ['hillshade'],
      data: [[134, 132, 138, 133, 136, 138]],
      masked: [new Array(6).fill(0)],
    });
  });

  it('masks pixels next to a NaN (numpy.ma masks non-finite quotients) but not the NaN pixel itself', () => {
    const dem = [1, 2, 4, 7, 2, NaN, 5, 9, 3, 5, 8, 12.5];
    const out = run('hillshade', { azimuth: 135, angle_altitude: 60.5, buffer: 0 }, image('float64', 4, 3, [dem], [new Array(12).fill(0)]));
    assertImage(out, {
      dtype: 'uint8',
      shape: [1, 3, 4],
      bounds: [0, 0, 1, 1],
      names: ['hillshade'],
      data: [[191, 255, 142, 145, 255, 174, 255, 138, 154, 255, 143, 139]],
      masked: [[0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0]],
    });
  });

  it("a 262-pixel tile read with buffer 3 comes back as 256 pixels with the tile's bounds", () => {
    const e = 20037508.342789244;
    const res = e / 256;
    const flat = image('float32', 262, 262, [new Array(262 * 262).fill(100)], [new Array(262 * 262).fill(0)], {
      bounds: [-e - 3 * res, -3 * res, 3 * res, e + 3 * res],
    });
    const out = run('hillshade', {}, flat);
    assert.deepEqual([out.width, out.height, out.bands[0]!.length, out.masks[0]!.length], [256, 256, 65536, 65536]);
    // rasterio's windows.bounds on the buffered tile's transform (its rounding included).
    assert.deepEqual(out.bounds, [-20037508.342789244, -3.725290298461914e-9, 3.725290298461914e-9, 20037508.342789244]);
    assert.ok(
      out.bands[0]!.every((v) => v === 255),
      'flat ground under a zenith sun is 255',
    );
    assert.ok(out.masks[0]!.every((v) => v === 255));
    assert.deepEqual(croppedBounds([0, 0, 262, 262], 262, 262, 0), [0, 0, 262, 262]);
    const unbuffered = run('hillshade', { buffer: 0 }, flat);
    assert.deepEqual([unbuffered.width, unbuffered.height], [262, 262]);
    assert.deepEqual(unbuffered.bounds, flat.bounds);
  });

  it('refuses images the buffer or numpy.gradient cannot handle (TiTiler: an empty image, a 500)', () => {
    const small = image('uint16', 5, 4, [new Array(20).fill(1)], [new Array(20).fill(0)]);
    assert.throws(() => run('hillshade', {}, small), isBadRequest(/buffer 3 crops away the whole 5x4 image/));
    assert.throws(() => run('hillshade', { buffer: 0 }, image('float32', 3, 1, [[1, 2, 3]], [[0, 0, 0]])), isBadRequest(/at least 2x2 pixels/));
  });
});

// ---- contours -----------------------------------------------------------------------------------

describe('contours', () => {
  it('terrain colours, black lines, NaN and a masked pixel (float32)', () => {
    const out = run(
      'contours',
      { increment: 10, thickness: 3, minz: -100, maxz: 500 },
      image('float32', 5, 2, [[-120, -95, 0, 29.5, 30, 250.25, 499, 505, NaN, 1000]], [[0, 0, 1, 0, 0, 0, 0, 0, 0, 0]]),
    );
    assertImage(out, {
      dtype: 'uint8',
      shape: [3, 2, 5],
      bounds: [0, 0, 1, 1],
      names: ['b1', 'b2', 'b3'],
      data: [
        [0, 47, 0, 0, 0, 0, 253, 255, 51, 0],
        [0, 59, 0, 186, 0, 0, 252, 255, 51, 0],
        [0, 161, 0, 154, 0, 0, 252, 255, 153, 0],
      ],
      masked: [
        [0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
      ],
    });
  });

  it('the defaults (increment 35, thickness 1, -12000..8000) on int16', () => {
    const out = run('contours', {}, image('int16', 6, 1, [[-11000, 0, 34, 35, 36, 7999]], [[0, 0, 0, 0, 0, 0]]));
    assert.deepEqual(
      out.bands.map((b) => Array.from(b)),
      [
        [33, 0, 204, 0, 204, 253],
        [85, 0, 189, 0, 189, 252],
        [187, 0, 125, 0, 125, 252],
      ],
    );
  });

  it('refuses more than one band (TiTiler: "Source data must be 1 band", a 500)', () => {
    assert.throws(
      () =>
        run(
          'contours',
          {},
          image(
            'float32',
            2,
            1,
            [
              [1, 2],
              [3, 4],
            ],
            [
              [0, 0],
              [0, 0],
            ],
          ),
        ),
      isBadRequest(/1-band image, got 2 bands/),
    );
  });
});

// ---- terrarium ----------------------------------------------------------------------------------

describe('terrarium', () => {
  it('float32 heights (123.45 → 128,123,115), clipping, a masked pixel and a NaN', () => {
    const out = run('terrarium', {}, image('float32', 6, 1, [[123.45, -9999, 70000, -40000, 0.5, NaN]], [[0, 1, 0, 0, 0, 0]], { assets: ['dem'] }));
    assertImage(out, {
      dtype: 'uint8',
      shape: [3, 1, 6],
      bounds: [0, 0, 1, 1],
      names: ['b1', 'b2', 'b3'],
      data: [
        [128, 0, 255, 0, 128, 0],
        [123, 0, 255, 0, 0, 0],
        [115, 0, 0, 0, 128, 0],
      ],
      // numpy.ma's division masks R (only) where the height is NaN.
      masked: [
        [0, 1, 0, 0, 0, 1],
        [0, 1, 0, 0, 0, 0],
        [0, 1, 0, 0, 0, 0],
      ],
    });
    assert.deepEqual(out.assets, ['dem']);
  });

  it('int16 heights across the whole range', () => {
    const out = run('terrarium', {}, image('int16', 6, 1, [[-32768, -1, 0, 1, 8848, 32767]], [[0, 0, 0, 0, 0, 1]]));
    assertImage(out, {
      dtype: 'uint8',
      shape: [3, 1, 6],
      bounds: [0, 0, 1, 1],
      names: ['b1', 'b2', 'b3'],
      data: [
        [0, 127, 128, 128, 162, 255],
        [0, 255, 0, 1, 144, 255],
        [0, 0, 0, 0, 0, 255],
      ],
      masked: [
        [0, 0, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 1],
      ],
    });
  });
});

// ---- terrainrgb ---------------------------------------------------------------------------------

describe('terrainrgb', () => {
  it('the defaults (interval 0.1, baseval -10000): 123.45 → 1,139,114; masked pixels keep round(h)', () => {
    const out = run('terrainrgb', {}, image('float32', 6, 1, [[123.45, -9999, 70000, -40000, 0.5, NaN]], [[0, 1, 0, 0, 0, 0]]));
    assertImage(out, {
      dtype: 'uint8',
      shape: [3, 1, 6],
      bounds: [0, 0, 1, 1],
      names: ['b1', 'b2', 'b3'],
      data: [
        [1, 241, 12, 251, 1, 0],
        [139, 241, 53, 108, 134, 0],
        [114, 241, 0, 32, 165, 0],
      ],
      masked: [
        [0, 1, 0, 0, 0, 1],
        [0, 1, 0, 0, 0, 1],
        [0, 1, 0, 0, 0, 1],
      ],
    });
  });

  it('interval 0.5, baseval -100 on float64, heights below baseval wrap', () => {
    const out = run('terrainrgb', { interval: 0.5, baseval: -100 }, image('float64', 6, 1, [[-100.25, -100.75, -99.75, 0, 1e5, 12.3]], [[0, 0, 0, 0, 0, 1]]));
    assert.deepEqual(
      out.bands.map((b) => Array.from(b)),
      [
        [0, 255, 0, 0, 3, 12],
        [0, 255, 0, 0, 14, 12],
        [0, 254, 0, 200, 8, 12],
      ],
    );
  });

  it('rounds half to even (numpy.around)', () => {
    const out = run('terrainrgb', { interval: 1, baseval: 0 }, image('float32', 5, 1, [[2.5, 3.5, -0.5, NaN, 70000]], [[0, 0, 0, 0, 0]]));
    assert.deepEqual(
      out.bands.map((b) => Array.from(b)),
      [
        [0, 0, 0, 0, 1],
        [0, 0, 0, 0, 17],
        [2, 4, 0, 0, 112],
      ],
    );
    assert.deepEqual(Array.from(out.masks[0]!), [255, 255, 255, 0, 255]);
  });

  it("interval 0 masks everything (numpy.ma's unsafe division) and encodes round(h - baseval)", () => {
    const out = run('terrainrgb', { interval: 0 }, image('float32', 3, 1, [[1.5, 2.5, 3.5]], [[0, 1, 0]]));
    assert.deepEqual(
      out.bands.map((b) => Array.from(b)),
      [
        [18, 2, 20],
        [18, 2, 20],
        [18, 2, 20],
      ],
    );
    assert.deepEqual(
      out.masks.map((m) => Array.from(m)),
      [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ],
    );
  });

  it('accepts a range of exactly 256³ and refuses a wider one (TiTiler: ValueError, a 500)', () => {
    const fits = run('terrainrgb', { interval: 0.001 }, image('float64', 2, 1, [[0, 16777.216]], [[0, 0]]));
    assert.deepEqual(
      fits.bands.map((b) => Array.from(b)),
      [
        [152, 152],
        [150, 150],
        [128, 128],
      ],
    );
    assert.throws(
      () => run('terrainrgb', { interval: 0.001 }, image('float64', 2, 1, [[0, 16777.217]], [[0, 0]])),
      isBadRequest('Data of 16777217.0 larger than 256 ** 3'),
    );
  });
});

// ---- normalizedIndex ----------------------------------------------------------------------------

describe('normalizedIndex', () => {
  it('uint16 bands: float32 ratios, zero sums and masked inputs masked, the band name', () => {
    const out = run(
      'normalizedIndex',
      {},
      image(
        'uint16',
        6,
        1,
        [
          [100, 0, 300, 7, 5, 65535],
          [300, 0, 100, 7, 9, 1],
        ],
        [
          [0, 0, 0, 1, 0, 0],
          [0, 0, 0, 0, 1, 0],
        ],
        {
          bandNames: ['B04', 'B08'],
        },
      ),
    );
    assertImage(out, {
      dtype: 'float32',
      shape: [1, 1, 6],
      bounds: [0, 0, 1, 1],
      names: ['(B08 - B04) / (B08 + B04)'],
      data: [[0.5, 0, -0.5, 7, 9, -0.999969482421875]],
      masked: [[0, 1, 0, 1, 1, 0]],
    });
  });

  it('float32 rounding, a zero sum and non-finite quotients', () => {
    const out = run(
      'normalizedIndex',
      {},
      image(
        'float32',
        3,
        1,
        [
          [0.1, -2.5, 1e-3],
          [0.7, 2.5, 3e-3],
        ],
        [
          [0, 0, 0],
          [0, 0, 0],
        ],
      ),
    );
    assert.deepEqual(Array.from(out.bands[0]!), [0.7499999403953552, 5, 0.4999999403953552]);
    assert.deepEqual(Array.from(out.masks[0]!), [255, 0, 255]);
    assert.deepEqual(out.bandNames, ['(b2 - b1) / (b2 + b1)']);
    const odd = run(
      'normalizedIndex',
      {},
      image(
        'float32',
        2,
        1,
        [
          [NaN, 1],
          [1, Infinity],
        ],
        [
          [0, 0],
          [0, 0],
        ],
      ),
    );
    assert.ok(Number.isNaN(odd.bands[0]![0]!));
    assert.equal(odd.bands[0]![1], Infinity);
    assert.deepEqual(Array.from(odd.masks[0]!), [0, 0]);
  });

  it('refuses a single band (TiTiler: IndexError, a 500)', () => {
    assert.throws(() => run('normalizedIndex', {}, image('float32', 2, 1, [[1, 2]], [[0, 0]])), isBadRequest(/needs 2 bands, got 1/));
  });
});

// ---- TiTiler 2.x: the discovery routes ----------------------------------------------------------

/** TiTiler 2.4.0's answers (titiler.application 2.4.0, pydantic-core writing the JSON). */
const TITILER2_METADATA: Record<string, string> = {
  slope:
    '{"title":"Slope","description":"Calculate degrees of slope from DEM dataset.","inputs":{"nbands":1},"outputs":{"nbands":1,"dtype":"float32","min":[0.0],"max":[90.0]},"parameters":{"buffer":{"default":3,"description":"Buffer size for edge effects","maximum":99,"minimum":0,"title":"Buffer","type":"integer"},"z_exaggeration":{"default":1.0,"maximum":1000000.0,"minimum":1e-6,"title":"Z Exaggeration","type":"number"}}}',
  hillshade:
    '{"title":"Hillshade","description":"Create hillshade from DEM dataset.","inputs":{"nbands":1},"outputs":{"nbands":1,"dtype":"uint8","min":null,"max":null},"parameters":{"azimuth":{"default":45,"maximum":360,"minimum":0,"title":"Azimuth","type":"integer"},"angle_altitude":{"default":45.0,"maximum":90.0,"minimum":-90.0,"title":"Angle Altitude","type":"number"},"buffer":{"default":3,"maximum":99,"minimum":0,"title":"Buffer","type":"integer"},"z_exaggeration":{"default":1.0,"maximum":1000000.0,"minimum":1e-6,"title":"Z Exaggeration","type":"number"}}}',
  cast: '{"title":"Cast data to Integer","description":"Cast data to Integer.","inputs":{"nbands":null},"outputs":{"nbands":null,"dtype":"uint8","min":[0],"max":[255]},"parameters":{}}',
  terrarium:
    '{"title":"Terrarium","description":"Encode DEM into RGB (Mapzen Terrarium).","inputs":{"nbands":1},"outputs":{"nbands":3,"dtype":"uint8","min":null,"max":null},"parameters":{"nodata_height":{"anyOf":[{"maximum":99999.0,"minimum":-99999.0,"type":"number"},{"type":"null"}],"default":null,"title":"Nodata Height"}}}',
  min: '{"title":"Min","description":"Return Min values along the `bands` axis.","inputs":{"nbands":null},"outputs":{"nbands":1,"dtype":null,"min":null,"max":null},"parameters":{}}',
  median:
    '{"title":"Median","description":"Return Median values along the `bands` axis.","inputs":{"nbands":null},"outputs":{"nbands":1,"dtype":"float64","min":null,"max":null},"parameters":{}}',
};
const TITILER2_EXPECTED = `'${TITILER2_ORDER.slice(0, -1).join("', '")}' or 'bitonal'`;
const TITILER2_UNKNOWN_ID = JSON.stringify({
  detail: [
    { type: 'literal_error', loc: ['path', 'algorithmId'], msg: `Input should be ${TITILER2_EXPECTED}`, input: 'nope', ctx: { expected: TITILER2_EXPECTED } },
  ],
});

describe('GET /algorithms routes under TESSERA_TITILER_API=2 (TiTiler 2.4.0)', () => {
  it('lists the eighteen as {algorithms: [{id, title, links}]}, each linking to its metadata', async () => {
    const app = await routesApp('2');
    try {
      const res = await app.inject({ method: 'GET', url: '/algorithms', headers: { host: 'tiles.example.org' } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/json');
      const link = (id: string): string =>
        `{"href":"http://tiles.example.org/algorithms/${id}","rel":"item","type":"application/json","templated":null,"varBase":null,"hreflang":null,"title":"Definition of ${id} Algorithm","length":null}`;
      assert.equal(res.body, `{"algorithms":[${TITILER2_ORDER.map((id) => `{"id":"${id}","title":null,"links":[${link(id)}]}`).join(',')}]}`);
    } finally {
      await app.close();
    }
  });

  it("answers each algorithm's 2.4.0 metadata byte for byte (pydantic's `1e-6`, int ranges, nullable parameters)", async () => {
    const app = await routesApp('2');
    try {
      for (const [id, body] of Object.entries(TITILER2_METADATA)) {
        const res = await app.inject({ method: 'GET', url: `/algorithms/${id}` });
        assert.equal(res.statusCode, 200, id);
        assert.equal(res.body, body, id);
      }
    } finally {
      await app.close();
    }
  });

  it('refuses an unknown id listing the eighteen, and an `f` other than html or json (422)', async () => {
    const app = await routesApp('2');
    try {
      const unknown = await app.inject({ method: 'GET', url: '/algorithms/nope' });
      assert.equal(unknown.statusCode, 422);
      assert.equal(unknown.body, TITILER2_UNKNOWN_ID);
      const f = await app.inject({ method: 'GET', url: '/algorithms?f=xml' });
      assert.equal(f.statusCode, 422);
      assert.equal(
        f.body,
        '{"detail":[{"type":"literal_error","loc":["query","f"],"msg":"Input should be \'html\' or \'json\'","input":"xml","ctx":{"expected":"\'html\' or \'json\'"}}]}',
      );
    } finally {
      await app.close();
    }
  });

  it('answers HTML for f=html or an Accept header that prefers it, JSON otherwise', async () => {
    const app = await routesApp('2');
    try {
      const html = await app.inject({ method: 'GET', url: '/algorithms?f=html' });
      assert.equal(html.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(html.body, /<a href="http:\/\/localhost:80\/algorithms\/slope">slope<\/a>/);
      assert.ok(html.headers['content-security-policy']);
      const browser = await app.inject({ method: 'GET', url: '/algorithms/slope', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      assert.equal(browser.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(browser.body, /<h1>Slope<\/h1>/);
      assert.match(browser.body, /<td>1e-6<\/td>/);
      const json = await app.inject({ method: 'GET', url: '/algorithms/slope?f=json', headers: { accept: 'text/html' } });
      assert.equal(json.body, TITILER2_METADATA['slope']);
    } finally {
      await app.close();
    }
  });

  it("negotiates the media type as TiTiler's accept_media_type does", () => {
    assert.equal(acceptedMediaType(''), undefined);
    assert.equal(acceptedMediaType('*/*'), undefined);
    assert.equal(acceptedMediaType('*'), 'html');
    assert.equal(acceptedMediaType('application/json'), 'json');
    assert.equal(acceptedMediaType('text/html;q=0.5, application/json;q=0.9'), 'json');
    assert.equal(acceptedMediaType('application/json, text/html'), 'html');
    assert.equal(acceptedMediaType('text/html;q=0, application/json;q=0.1'), 'json');
    assert.equal(acceptedMediaType('text/html;q=abc'), undefined);
  });
});

describe('GET /algorithms routes under 0.18: the 2.x-only algorithms still answer', () => {
  it("/algorithms/slope is 2.4.0's metadata; f=html is HTML, other f values and Accept are ignored as 0.18.10 does", async () => {
    const app = await routesApp('0.18');
    try {
      const slope = await app.inject({ method: 'GET', url: '/algorithms/slope' });
      assert.equal(slope.statusCode, 200);
      assert.equal(slope.body, TITILER2_METADATA['slope']);
      const hillshade = await app.inject({ method: 'GET', url: '/algorithms/hillshade', headers: { accept: 'text/html' } });
      assert.equal(hillshade.headers['content-type'], 'application/json');
      assert.equal(hillshade.body, TITILER_METADATA['hillshade']);
      const ignored = await app.inject({ method: 'GET', url: '/algorithms?f=xml' });
      assert.equal(ignored.statusCode, 200);
      assert.deepEqual(Object.keys(JSON.parse(ignored.body) as object), TITILER_ORDER);
      const html = await app.inject({ method: 'GET', url: '/algorithms?f=html' });
      assert.equal(html.headers['content-type'], 'text/html; charset=utf-8');
    } finally {
      await app.close();
    }
  });
});

// ---- TiTiler 2.x: the new algorithms ------------------------------------------------------------
// Expected values from titiler.core 2.4.0 (rio-tiler 9.4.12, numpy 2.4) on the same arrays;
// test/parity/algorithms-v2.test.ts compares many more against the live reference.

function run2(id: string, params: Record<string, unknown>, img: ImageData): ImageData {
  return prepareAlgorithm({ id: getAlgorithm(id, '2')!.id, api: '2', params }).apply(img);
}

/** Three uint8 bands on 2x2 pixels: g masked on pixel 1, everything masked on pixel 3. */
const RGB = (): ImageData =>
  image(
    'uint8',
    2,
    2,
    [
      [10, 200, 255, 7],
      [20, 100, 255, 9],
      [30, 50, 0, 11],
    ],
    [
      [0, 0, 0, 1],
      [0, 1, 0, 1],
      [0, 0, 0, 1],
    ],
  );

describe('band reductions (min, max, sum, mean, median, std, var)', () => {
  const want: Array<[string, DType, number[], number[]]> = [
    ['min', 'uint8', [10, 50, 0, 63], [0, 0, 0, 1]],
    ['max', 'uint8', [30, 200, 255, 63], [0, 0, 0, 1]],
    ['sum', 'uint64', [60, 250, 510, 0], [0, 0, 0, 1]],
    ['mean', 'float64', [20, 125, 170, 0], [0, 0, 0, 1]],
    ['median', 'float64', [20, 125, 255, 0], [0, 0, 0, 1]],
    ['std', 'float64', [10, 106.06601717798213, 147.22431864335456, 0], [0, 0, 0, 1]],
    ['var', 'float64', [100, 11250, 21675, 0], [0, 0, 0, 1]],
  ];
  for (const [id, dtype, data, masked] of want) {
    it(`${id}: ${dtype}, masked bands left out, the all-masked pixel masked (numpy.ma's fill value as data)`, () => {
      assertImage(run2(id, {}, RGB()), { dtype, shape: [1, 2, 2], bounds: [0, 0, 1, 1], names: [id], data: [data], masked: [masked] });
    });
  }
});

describe('cast, ceil, floor', () => {
  it("keep bands, masks and names; numpy's uint8 cast (300.7 → 44, -1.5 → 255, NaN → 0)", () => {
    const img = (): ImageData => image('float32', 2, 2, [[300.7, -1.5, Number.NaN, 2.2]], [[0, 0, 0, 0]]);
    const one = (id: string, data: number[]): void =>
      assertImage(run2(id, {}, img()), { dtype: 'uint8', shape: [1, 2, 2], bounds: [0, 0, 1, 1], names: ['b1'], data: [data], masked: [[0, 0, 0, 0]] });
    one('cast', [44, 255, 0, 2]);
    one('ceil', [45, 255, 0, 3]);
    one('floor', [44, 254, 0, 2]);
    const rgb = run2('cast', {}, RGB());
    assert.deepEqual(rgb.bandNames, ['b1', 'b2', 'b3']);
    assert.deepEqual(Array.from(rgb.masks[1]!), [255, 0, 255, 0]);
  });
});

describe('grayscale, bitonal', () => {
  it('grayscale: the luma in the input dtype, masked where any of the three bands is', () => {
    assertImage(run2('grayscale', {}, RGB()), {
      dtype: 'uint8',
      shape: [1, 2, 2],
      bounds: [0, 0, 1, 1],
      names: ['grayscale'],
      data: [[18, 59, 225, 7]],
      masked: [[0, 1, 0, 1]],
    });
  });

  it('bitonal: 255 above 127 (of the luma, or of a single band), 0 elsewhere and where masked', () => {
    assertImage(run2('bitonal', {}, RGB()), {
      dtype: 'uint8',
      shape: [1, 2, 2],
      bounds: [0, 0, 1, 1],
      names: ['bitonal'],
      data: [[0, 0, 255, 0]],
      masked: [[0, 1, 0, 1]],
    });
    const single = run2('bitonal', {}, image('float32', 2, 2, [[300.7, -1.5, Number.NaN, 2.2]], [[0, 0, 0, 0]]));
    assert.deepEqual(Array.from(single.bands[0]!), [255, 0, 0, 0]);
  });

  it('refuse band counts TiTiler refuses (a ValueError there, a 400 here)', () => {
    const two = image('uint8', 1, 1, [[1], [2]], [[0], [0]]);
    assert.throws(() => run2('grayscale', {}, two), isBadRequest('Cannot apply `grayscale` algorithm on image with 2 bands.'));
    assert.throws(() => run2('bitonal', {}, two), isBadRequest('Cannot apply `bitonal` algorithm on image with 2 bands.'));
  });
});

describe('slope', () => {
  const ramp = (): ImageData => image('float32', 3, 3, [[0, 10, 20, 0, 10, 20, 0, 10, 20]], [new Array(9).fill(0)], { bounds: [0, 0, 30, 30] });

  it('degrees over the pixel size in CRS units: a 10-per-10 m ramp is 45°', () => {
    assertImage(run2('slope', { buffer: 0 }, ramp()), {
      dtype: 'float32',
      shape: [1, 3, 3],
      bounds: [0, 0, 30, 30],
      names: ['slope'],
      data: [new Array(9).fill(45)],
      masked: [new Array(9).fill(0)],
    });
  });

  it('z_exaggeration steepens it, buffer crops it and its bounds', () => {
    assertImage(run2('slope', { buffer: 1, z_exaggeration: 2 }, ramp()), {
      dtype: 'float32',
      shape: [1, 1, 1],
      bounds: [10, 10, 20, 20],
      names: ['slope'],
      data: [[63.4349479675293]],
      masked: [[0]],
    });
  });

  it('refuses what numpy.gradient or the buffer cannot handle', () => {
    assert.throws(() => run2('slope', {}, ramp()), isBadRequest(/buffer 3 crops away the whole 3x3 image/));
    assert.throws(() => run2('slope', { buffer: 0 }, image('float32', 1, 2, [[1, 2]], [[0, 0]])), isBadRequest(/at least 2x2/));
  });
});

describe('the five older algorithms under 2', () => {
  it("hillshade takes 2.4.0's defaults (azimuth 45, altitude 45) and z_exaggeration", () => {
    assert.deepEqual(getAlgorithm('hillshade', '2')!.parseParams({}), { azimuth: 45, angleAltitude: 45, buffer: 3, zExaggeration: 1 });
    const step = parseAlgorithm('hillshade', '{"z_exaggeration": 2}', '2');
    assert.equal(step?.api, '2');
    assert.throws(
      () => parseAlgorithm('hillshade', '{"z_exaggeration": 0}', '2'),
      isBadRequest(
        '1 validation error for HillShade\nz_exaggeration\n  Input should be greater than or equal to 0.000001 [type=greater_than_equal, input_value=0, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/greater_than_equal',
      ),
    );
    // 0.18 has no such field: ignored as an extra.
    assert.equal(parseAlgorithm('hillshade', '{"z_exaggeration": 0}', '0.18')?.api, '0.18');
  });

  it('terrarium and terrainrgb: nodata_height encodes masked pixels and makes them valid', () => {
    const dem = (): ImageData => image('float32', 2, 1, [[123.45, 5]], [[0, 1]]);
    const t = run2('terrarium', { nodata_height: 0 }, dem());
    assert.deepEqual(t.bandNames, ['terranium_r', 'terranium_g', 'terranium_b']);
    assert.deepEqual([t.bands[0]![1], t.bands[1]![1], t.bands[2]![1], t.masks[0]![1]], [128, 0, 0, 255]);
    const rgb = run2('terrainrgb', { nodata_height: -10000 }, dem());
    assert.deepEqual([rgb.bands[0]![1], rgb.bands[1]![1], rgb.bands[2]![1], rgb.masks[0]![1]], [0, 0, 0, 255]);
    assert.deepEqual([rgb.bands[0]![0], rgb.bands[1]![0], rgb.bands[2]![0]], [1, 139, 114]);
  });
});
