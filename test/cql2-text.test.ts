/**
 * The CQL2-text reader (src/catalog/cql2.ts) on its own: what it writes for the forms a STAC client
 * sends, its bounds (length, nesting) met before any work, and its refusals naming the problem and
 * where. Its agreement with cql2 0.6.0 itself over a larger corpus: test/parity/cql2.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cql2TextToJson, MAX_DEPTH, MAX_FILTER_CHARS } from '../src/catalog/cql2.js';
import { pyDumps } from '../src/pyjson.js';
import { TesseraError } from '../src/errors.js';

const json = (text: string): string => pyDumps(cql2TextToJson(text));

function refused(text: string, detail: RegExp): void {
  assert.throws(
    () => cql2TextToJson(text),
    (err: unknown) => err instanceof TesseraError && err.kind === 'BadRequest' && detail.test(err.message),
    text.slice(0, 60),
  );
}

describe('CQL2-text as cql2 0.6.0 writes it in CQL2-JSON', () => {
  it('writes numbers as floats, operators in the schema’s spelling, and/or chains flat', () => {
    assert.equal(json('eo:cloud_cover < 10'), '{"op":"<","args":[{"property":"eo:cloud_cover"},10.0]}');
    assert.equal(
      json("a = 1 and B = 'x' AND (c >= -2.5 AND d <> 3)"),
      '{"op":"and","args":[{"op":"=","args":[{"property":"a"},1.0]},{"op":"=","args":[{"property":"B"},"x"]},{"op":">=","args":[{"property":"c"},-2.5]},{"op":"<>","args":[{"property":"d"},3.0]}]}',
    );
    assert.equal(
      json('T_METBY(a, b) OR Foo(x)'),
      '{"op":"or","args":[{"op":"t_metBy","args":[{"property":"a"},{"property":"b"}]},{"op":"Foo","args":[{"property":"x"}]}]}',
    );
    assert.equal(json('NOT a IS NULL'), '{"op":"not","args":[{"op":"isNull","args":[{"property":"a"}]}]}');
    assert.equal(json('x NOT IN (1)'), '{"op":"not","args":[{"op":"in","args":[{"property":"x"},[1.0]]}]}');
    assert.equal(
      json('a + 2 * 3 ^ 2 > b'),
      '{"op":">","args":[{"op":"+","args":[{"property":"a"},{"op":"*","args":[2.0,{"op":"^","args":[3.0,2.0]}]}]},{"property":"b"}]}',
    );
    assert.equal(
      json('x BETWEEN 1 AND 2 AND y = 3'),
      '{"op":"and","args":[{"op":"between","args":[{"property":"x"},1.0,2.0]},{"op":"=","args":[{"property":"y"},3.0]}]}',
    );
  });

  it('reads timestamps, intervals and WKT geometries', () => {
    assert.equal(
      json("datetime > TIMESTAMP('2024-03-01T02:00:00.500+02:00')"),
      '{"op":">","args":[{"property":"datetime"},{"timestamp":"2024-03-01T00:00:00.5Z"}]}',
    );
    assert.equal(
      json("t_intersects(datetime, INTERVAL('2020-01-01T00:00:00Z', '..'))"),
      '{"op":"t_intersects","args":[{"property":"datetime"},{"interval":["2020-01-01T00:00:00Z",".."]}]}',
    );
    assert.equal(
      json('S_INTERSECTS(geometry, POLYGON((5 43, 11 43, 11 47, 5 43)))'),
      '{"op":"s_intersects","args":[{"property":"geometry"},{"type":"Polygon","coordinates":[[[5.0,43.0],[11.0,43.0],[11.0,47.0],[5.0,43.0]]]}]}',
    );
    assert.equal(json('s_within(geometry, POINT Z(1 2 3))'), '{"op":"s_within","args":[{"property":"geometry"},{"type":"Point","coordinates":[1.0,2.0,3.0]}]}');
    assert.equal(json('s_within(geometry, BBOX(0, 0, 1, 1))'), '{"op":"s_within","args":[{"property":"geometry"},{"bbox":[0.0,0.0,1.0,1.0]}]}');
  });

  it('reads CQL2-JSON given as text as cql2 reads it (floats, canonical operators)', () => {
    assert.equal(
      json('{"op":"AND","args":[{"op":"<","args":[{"property":"x"},5]},{"op":"and","args":[true]}]}'),
      '{"op":"and","args":[{"op":"<","args":[{"property":"x"},5.0]},true]}',
    );
  });

  it('refuses what it cannot read with a 400 naming the problem and where', () => {
    refused('a = 1 garbage', /expected an operator or the end of the filter at character 7/);
    refused('a =', /expected a property, a literal, a function or “\(” at character 4 \(the end\)/);
    refused("a = 'open", /a string is not closed/);
    refused('a = 1)', /at character 6/);
    refused('   ', /it is empty/);
    refused('{"op": 1}', /is not a CQL2 expression/);
    refused('{"op":', /not valid JSON/);
    refused('a = 1e400', /a number out of range/);
  });

  it('bounds its work before doing it: length and nesting', () => {
    refused(`a = '${'x'.repeat(MAX_FILTER_CHARS)}'`, new RegExp(`longer than ${MAX_FILTER_CHARS} characters`));
    const deep = (n: number): string => `${'('.repeat(n)}a = 1${')'.repeat(n)}`;
    assert.equal(json(deep(20)), '{"op":"=","args":[{"property":"a"},1.0]}');
    for (const text of [
      deep(MAX_DEPTH + 1),
      `${'NOT '.repeat(3000)}a`,
      `a = ${'-'.repeat(5000)}1`,
      `${'f('.repeat(2000)}a${')'.repeat(2000)} = 1`,
      `a = ${'b = '.repeat(3000)}1`,
    ]) {
      const started = performance.now();
      refused(text, /nested deeper than 64 levels/);
      assert.ok(performance.now() - started < 1000, 'refused at once (an exponential reading would take far longer)');
    }
    // Long but flat: read in linear time.
    const flat = Array.from({ length: 900 }, (_, i) => `p${i} = ${i}`).join(' AND ');
    const started = performance.now();
    assert.equal((cql2TextToJson(flat) as { args: unknown[] }).args.length, 900);
    assert.ok(performance.now() - started < 2000, `${performance.now() - started} ms`);
  });
});
