/**
 * /api documents the parameters as TiTiler 0.18.10's own /api does: for every operation both
 * documents have (every operation TiTiler's has is in tessera's), each parameter TiTiler lists is
 * there with the same default and the same enum. TiTiler's document is its application's
 * `app.openapi()`, made by the parity venv's Python; tessera's is its /api.
 *
 * Deliberate exceptions, each checked for exactly what it is (tessera's enum is TiTiler's plus the
 * values listed, nothing else):
 * - `algorithm`, `algorithmId`: tessera also runs TiTiler 2.x's thirteen new algorithms, whatever
 *   TESSERA_TITILER_API says (docs/titiler2.md, "answered always");
 * - `tileMatrixSetId`: tessera has one grid more, NZTM2000 (docs/differences.md).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './harness.js';
import { startTessera, type RunningTessera } from '../helpers/tessera.js';

const PYTHON = path.join(ROOT, '.parity/venv/bin/python');

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  schema?: Json;
}
interface Document {
  paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
  components?: { schemas?: Record<string, Json> };
}

const NEW_ALGORITHMS = ['bitonal', 'cast', 'ceil', 'floor', 'grayscale', 'max', 'mean', 'median', 'min', 'slope', 'std', 'sum', 'var'];

/** Parameter name → the values tessera's enum has beyond TiTiler's, and why. */
const DELIBERATE_ENUM_EXTRAS: Record<string, { extra: string[]; why: string }> = {
  algorithm: { extra: NEW_ALGORITHMS, why: "TiTiler 2.x's algorithms are answered always" },
  algorithmId: { extra: NEW_ALGORITHMS, why: "TiTiler 2.x's algorithms are answered always" },
  tileMatrixSetId: { extra: ['NZTM2000'], why: 'one grid more (docs/differences.md)' },
};

function titilerDocument(): Document {
  const script = 'import json, sys\nfrom titiler.application.main import app\njson.dump(app.openapi(), sys.stdout)';
  const run = spawnSync(PYTHON, ['-c', script], { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 120_000 });
  assert.equal(run.status, 0, `TiTiler's app.openapi(): ${run.stderr}`);
  return JSON.parse(run.stdout) as Document;
}

/** A schema with its `$ref` followed (TiTiler's enums of classes are components). */
function resolved(doc: Document, schema: Json | undefined): Json {
  const ref = schema?.['$ref'];
  if (typeof ref !== 'string') return schema ?? {};
  const target = doc.components?.schemas?.[ref.split('/').pop()!];
  assert.ok(target, `${ref} is in the document`);
  return resolved(doc, target);
}

/** The values a schema allows, when it lists them (also inside anyOf/oneOf/allOf, as pydantic writes Optional[Literal]), sorted. */
function enumOf(doc: Document, schema: Json | undefined): string[] | undefined {
  const s = resolved(doc, schema);
  if (Array.isArray(s['enum'])) return (s['enum'] as unknown[]).map(String).sort();
  if (s['const'] !== undefined) return [String(s['const'])];
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    for (const sub of (s[key] as Json[] | undefined) ?? []) {
      const found = enumOf(doc, sub);
      if (found) return found;
    }
  }
  return undefined;
}

function defaultOf(doc: Document, schema: Json | undefined): unknown {
  if (schema && 'default' in schema) return schema['default'];
  const s = resolved(doc, schema);
  return 'default' in s ? s['default'] : '(none)';
}

describe("/api: parameters' defaults and enums as TiTiler 0.18.10's /api", { timeout: 180_000 }, () => {
  let tessera: RunningTessera;
  let titiler: Document;
  let ours: Document;
  before(async () => {
    titiler = titilerDocument();
    tessera = await startTessera();
    ours = (await (await tessera.get('/api')).json()) as Document;
  });
  after(async () => {
    await tessera?.close();
  });

  it("has every operation of TiTiler's document", () => {
    const missing: string[] = [];
    for (const [p, item] of Object.entries(titiler.paths)) for (const method of Object.keys(item)) if (!ours.paths[p]?.[method]) missing.push(`${method} ${p}`);
    assert.deepEqual(missing, []);
  });

  it('gives every parameter of every common operation the default and the enum TiTiler gives it', () => {
    const problems: string[] = [];
    const extrasSeen = new Set<string>();
    let compared = 0;
    for (const [p, item] of Object.entries(titiler.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const theirs = op.parameters ?? [];
        const mine = new Map((ours.paths[p]?.[method]?.parameters ?? []).map((q) => [`${q.in} ${q.name}`, q]));
        for (const param of theirs) {
          const where = `${method} ${p} ${param.in} ${param.name}`;
          const q = mine.get(`${param.in} ${param.name}`);
          if (!q) {
            problems.push(`${where}: not documented`);
            continue;
          }
          compared++;
          const [d1, d2] = [defaultOf(titiler, param.schema), defaultOf(ours, q.schema)];
          if (JSON.stringify(d1) !== JSON.stringify(d2)) problems.push(`${where}: default ${JSON.stringify(d2)}, TiTiler ${JSON.stringify(d1)}`);
          const [e1, e2] = [enumOf(titiler, param.schema), enumOf(ours, q.schema)];
          const deliberate = DELIBERATE_ENUM_EXTRAS[param.name];
          if (deliberate && e1 && e2) {
            const extra = e2.filter((v) => !e1.includes(v));
            const lost = e1.filter((v) => !e2.includes(v));
            if (lost.length > 0 || JSON.stringify(extra) !== JSON.stringify([...deliberate.extra].sort()))
              problems.push(
                `${where}: enum ${JSON.stringify(e2)}, TiTiler's ${JSON.stringify(e1)} plus ${JSON.stringify(deliberate.extra)} expected (${deliberate.why})`,
              );
            extrasSeen.add(param.name);
          } else if (JSON.stringify(e1) !== JSON.stringify(e2)) {
            problems.push(`${where}: enum ${JSON.stringify(e2)}, TiTiler ${JSON.stringify(e1)}`);
          }
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(compared > 1000, `${compared} parameters compared`);
    // Every deliberate exception is used: one no operation needs is a stale entry.
    assert.deepEqual([...extrasSeen].sort(), Object.keys(DELIBERATE_ENUM_EXTRAS).sort());
  });
});
