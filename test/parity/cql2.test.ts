/**
 * The CQL2-text reader (src/catalog/cql2.ts) against cql2 0.6.0 itself, the library titiler-pgstac
 * 3.2.0 reads `filter-lang=cql2-text` with (`Expr(text).to_json()`), from its venv
 * (tools/stac-api/setup.sh): for every filter of CORPUS, the same CQL2-JSON value for value (floats
 * as floats; pgSTAC hashes a search's JSON, so a search id depends on it), or both refuse it.
 * Deliberate differences, each checked here: a number past a double's range (cql2 writes Infinity,
 * which is not JSON) and an EMPTY geometry are refused with a 400.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { cql2TextToJson } from '../../src/catalog/cql2.js';
import { pyDumps } from '../../src/pyjson.js';
import { REPO_ROOT } from '../helpers/paths.js';

/** Filters STAC clients write, and the corners of cql2's grammar (precedence, keywords, WKT, timestamps, JSON text). */
const CORPUS: string[] = [
  'eo:cloud_cover < 10',
  "id='a' AND collection='b'",
  's_intersects(geometry, POLYGON((0 0, 1 0, 1 1, 0 0)))',
  'S_INTERSECTS(geometry, BBOX(0,0,1,1))',
  "datetime > TIMESTAMP('2020-01-01T00:00:00Z')",
  "t_after(datetime, DATE('2020-01-01'))",
  "x IN (1, 2.5, 'a')",
  "x NOT IN ('a','b')",
  'NOT (a = 1)',
  'a BETWEEN 1 AND 5',
  'a NOT BETWEEN 1 AND 5',
  "a LIKE 'x%'",
  "a NOT LIKE 'x%'",
  'a IS NULL',
  'a IS NOT NULL',
  'a = TRUE',
  'a = false',
  "CASEI(a) = casei('B')",
  "ACCENTI(a) = accenti('é')",
  '"eo:cloud_cover" < 5',
  'a + 2 * 3 > b',
  'a - 2 / 3 >= b % 4',
  'a ^ 2 = 4',
  'a div 2 = 1',
  'a <> 1',
  'a >= -1.5e3',
  'a = -0.0',
  'A_CONTAINS(x, (1,2))',
  "a_overlaps(x, ('a'))",
  'a = 1 OR b = 2 AND c = 3',
  '(a = 1 OR b = 2) AND c = 3',
  "t_intersects(datetime, INTERVAL('2020-01-01T00:00:00Z', '..'))",
  "T_DURING(INTERVAL(start_datetime, end_datetime), INTERVAL('2020-01-01', '2021-01-01'))",
  'properties.a = 1',
  'FOO(a, 1) = 2',
  's_within(geometry, POINT(1 2))',
  's_intersects(geometry, MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0))))',
  's_intersects(geometry, LINESTRING(0 0, 1 1))',
  's_intersects(geometry, POINT Z(1 2 3))',
  's_intersects(geometry, GEOMETRYCOLLECTION(POINT(1 2), LINESTRING(0 0, 1 1)))',
  "a = 'it''s'",
  'a = 123456789012345678',
  'a = 0.1',
  'a = 1.0',
  'a=1 and b=2',
  'a = 1 AND NOT b = 2',
  'TRUE',
  'a = NULL',
  'a in (1)',
  'x < 5 garbage',
  'a =',
  '((a = 1)',
  'a = 1)',
  '',
  '   ',
  "a = 'unterminated",
  's_intersects(geometry, POLYGON((0 0, 1 0)))',
  "t_intersects(datetime, INTERVAL('2020-01-01T00:00:00+02:00', '2020-01-01T00:00:00.500Z'))",
  "datetime = TIMESTAMP('2020-01-01T00:00:00.000000Z')",
  "datetime = TIMESTAMP('2012-08-10 05:30:00Z')",
  "datetime > TIMESTAMP('2016-12-31T23:59:60Z')",
  "datetime > TIMESTAMP('2020-13-01T00:00:00Z')",
  "datetime > TIMESTAMP('2020-01-01T10:00:00-05:30')",
  'notes = 1',
  'null_count = 1',
  'true_color = 1',
  'NOT NOT a = 1',
  '-a = 1',
  '- - 1 = a',
  'a = 1.',
  'a=1.5e-3',
  'a = 1.5E+3',
  's_intersects(geometry, POINT(1 2 3 4))',
  's_intersects(geometry, POINT ZM(1 2 3 4))',
  's_intersects(geometry, POINT M(1 2 3))',
  's_intersects(geometry, POINT Z (1 2 3))',
  's_intersects(geometry, MULTIPOINT(1 2, 3 4))',
  's_intersects(geometry, MULTIPOINT((1 2), (3 4)))',
  's_intersects(geometry, GEOMETRYCOLLECTION(GEOMETRYCOLLECTION(POINT(1 2))))',
  's_intersects(geometry, MULTILINESTRING((0 0, 1 1), (2 2, 3 3)))',
  's_intersects(geometry, POLYGON((0 0, 1 0, 1 1, 0 0), (0.1 0.1, 0.2 0.1, 0.2 0.2, 0.1 0.1)))',
  's_intersects(geometry, polygon((-1.5 -2, 1 0, 1 1, -1.5 -2)))',
  'in(a, 1, 2)',
  'in(a, (1, 2))',
  'isNull(a)',
  'ISNULL(a)',
  'T_METBY(a, b)',
  'ST_INTERSECTS(geometry, POINT(1 2))',
  'intersects(geometry, POINT(1 2))',
  "anyinteracts(datetime, DATE('2020-01-01'))",
  'a = 1 OR b = 2 OR c = 3',
  'a = 1 OR (b = 2 OR c = 3)',
  'a = 1 AND (b = 2 AND c = 3) AND d = 4',
  'NOT a = 1 AND b = 2',
  'a = b = c',
  'a < b + 1 * 2 ^ 3 ^ 2',
  '(a + b) * c = 1',
  'a + b - c = 1',
  'ß = 1',
  'größe > 1',
  "été = 'x'",
  'a = 1\r\n AND b = 2',
  'a IS NOT NULL AND b IS NULL',
  "a NOT  LIKE 'x' AND b NOT\tIN (1)",
  'x BETWEEN 1 AND 2 AND y = 3',
  'y = 3 AND x BETWEEN 1 + 1 AND -2',
  'x NOT BETWEEN a AND b',
  '"quoted""name" = 1',
  "\"a b\" = 'c''d'",
  'eq(a, b)',
  "a_contains(x, 'a')",
  'a_equals(x, (1))',
  "a_overlaps(x, (1, 'b'))",
  'A_CONTAINEDBY(x, TRUE)',
  "casei(name) LIKE casei('%ab%')",
  "accenti(x) = accenti('É')",
  "a in ('x')",
  "a in 'x'",
  'foo()',
  'Foo(1) = 2',
  'a = 1 AND',
  'AND a = 1',
  'a = (1, 2)',
  '(a, b) = (1, 2)',
  'a = ()',
  'bbox(1,2,3,4)',
  's_within(geometry, BBOX(-10, -5.5, 10, 5.5))',
  "t_before(datetime, TIMESTAMP('2020-01-01T00:00:00Z'))",
  "t_during(interval(start_datetime, end_datetime), interval('..', '2020-01-01'))",
  "date('2020-01-01') = datetime",
  'a = true AND b = FALSE AND c IS NULL',
  'a = 5 div 2',
  'a = 5 % 2',
  'a div b = 1',
  '{"op":"AND","args":[{"op":"and","args":[{"op":"=","args":[{"property":"a"},1]},true]},{"op":"FOO","args":[]}]}',
  '{"op":"t_metby","args":[{"property":"a"},{"timestamp":"2020-01-01T00:00:00.000Z"}]}',
  '{"op":"s_intersects","args":[{"property":"geometry"},{"type":"Point","coordinates":[1,2]}]}',
  '{"op":"in","args":[{"property":"a"},[1,2]]}',
  '{"nope":1}',
  '  {"op":"<","args":[{"property":"x"},5]}  ',
  '{"op":"ST_Within","args":[{"property":"geometry"},{"bbox":[1,2,3,4]}]}',
  '{"op":"<","args":[{"property":"x"},5], "extra": 1}',
  '{"op":"t_intersects","args":[{"property":"datetime"},{"interval":["2020-01-01T00:00:00+01:00",".."]}]}',
  '{"op":"=","args":[{"property":"a"},{"date":"2020-01-01"}]}',
  '[1,2]',
  '1',
  "'x'",
  'a',
  'a = 1 garbage',
  'a = 1)',
  '((a = 1))',
  "a = 'x' or",
  'a <> 1 AND b != 2',
  'a >= 1 and b <= 2 and c > 3 and d < 4',
  "a like 'x' or b like 'y'",
  "x IN (1, 2) AND y NOT IN ('a')",
  'properties.eo:cloud_cover < 10',
  'eo:cloud_cover<10',
  "eo:cloud_cover < 10 AND datetime > TIMESTAMP('2023-01-01T00:00:00Z')",
  's_intersects(geometry,POLYGON((5 43,11 43,11 47,5 47,5 43)))',
];

/**
 * cql2 0.6.0 reads each filter, and compares its JSON with tessera's (given as text, read by Python's
 * json, so `1.0` stays a float and `1` an int): the filters where they differ.
 */
const CQL2_SCRIPT = `
import json, sys
from cql2 import Expr
given = json.load(sys.stdin)
out = {"differences": [], "refused": 0}
for text, ours in zip(given["corpus"], given["ours"]):
    try:
        theirs = json.dumps(Expr(text).to_json(), sort_keys=True)
    except Exception:
        theirs = None
    mine = None if ours is None else json.dumps(json.loads(ours), sort_keys=True)
    if theirs is None and mine is None:
        out["refused"] += 1
    elif theirs != mine:
        out["differences"].append(f"{text}: cql2 {theirs or 'refuses'}, tessera {mine or 'refuses'}")
print(json.dumps(out))
`;

describe('CQL2-text read as cql2 0.6.0 reads it', () => {
  it('writes the same CQL2-JSON for every filter of the corpus, or refuses what cql2 refuses', () => {
    const setup = spawnSync('bash', [path.join(REPO_ROOT, 'tools/stac-api/setup.sh')], { encoding: 'utf8' });
    assert.equal(setup.status, 0, setup.stderr);
    const ours = CORPUS.map((text) => {
      try {
        return pyDumps(cql2TextToJson(text));
      } catch {
        return null;
      }
    });
    const python = spawnSync(path.join(REPO_ROOT, '.parity/titiler-pgstac-3.2.0/bin/python'), ['-c', CQL2_SCRIPT], {
      input: JSON.stringify({ corpus: CORPUS, ours }),
      encoding: 'utf8',
    });
    assert.equal(python.status, 0, python.stderr);
    const { differences, refused } = JSON.parse(python.stdout) as { differences: string[]; refused: number };
    assert.deepEqual(differences, []);
    // The corpus has its share of mistakes, refused by both (a check that refusing everything would fail).
    assert.ok(refused >= 5 && refused < CORPUS.length / 4, `${refused} refused by both`);
  });

  it('refuses on purpose what cql2 writes as non-JSON or reads as an empty geometry', () => {
    assert.throws(() => cql2TextToJson('a = 1e400'), /out of range/);
    assert.throws(() => cql2TextToJson('s_intersects(geometry, POINT EMPTY)'), /empty geometries/);
  });
});
