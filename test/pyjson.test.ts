import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { float, pyDumps, pyFloatRepr } from '../src/pyjson.js';
import { quotePlus, urlencode } from '../src/api/urls.js';

describe('Python float repr', () => {
  const cases: Array<[number, string]> = [
    [0, '0.0'],
    [1, '1.0'],
    [-2, '-2.0'],
    [3565, '3565.0'],
    [0.49, '0.49'],
    [1e16, '1e+16'],
    [1.5e16, '1.5e+16'],
    [123456789012345.6, '123456789012345.6'],
    [1e-4, '0.0001'],
    [1e-5, '1e-05'],
    [2.5e-7, '2.5e-07'],
    [23.293255090449595, '23.293255090449595'],
    [-20037508.342789244, '-20037508.342789244'],
    [1e22, '1e+22'],
  ];
  for (const [x, text] of cases) it(`${x} → ${text}`, () => assert.equal(pyFloatRepr(x), text));
});

describe('pyDumps', () => {
  it('writes compact JSON with ints, floats and NaN as null', () => {
    assert.equal(pyDumps({ a: 1, b: float(1), c: [float(NaN), Infinity, 'é'], d: undefined, e: null }), '{"a":1,"b":1.0,"c":[null,null,"é"],"e":null}');
  });

  it('writes a Map as an object in insertion order, integer-like keys included (a dict, not a JS object)', () => {
    const tiles = new Map([
      ['1221022', ['b.tif']],
      ['0302300', ['a.tif']],
      ['12', ['c.tif']],
    ]);
    assert.equal(pyDumps({ tiles }), '{"tiles":{"1221022":["b.tif"],"0302300":["a.tif"],"12":["c.tif"]}}');
  });
});

describe('Python urlencode', () => {
  it('encodes as quote_plus', () => {
    assert.equal(quotePlus("a b/c:d,e|f~!*()'é"), 'a+b%2Fc%3Ad%2Ce%7Cf~%21%2A%28%29%27%C3%A9');
    assert.equal(
      urlencode([
        ['url', 'http://x/y.json'],
        ['assets', 'B01'],
      ]),
      'url=http%3A%2F%2Fx%2Fy.json&assets=B01',
    );
  });
});
