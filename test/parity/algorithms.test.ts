/**
 * Parity of the algorithm discovery routes with TiTiler 0.18.10: `/algorithms`, every
 * `/algorithms/{algorithmId}` and an unknown id, sent to both servers and compared on status,
 * Content-Type, Cache-Control and the JSON body (key order and Python's int/float kinds included).
 * No difference is accepted here. The outcome of every case goes to .parity/report-algorithms.md.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareJson, formatDifferences, parseJson, toPlain, type Difference } from './compare.js';
import { get, startParity, writeReport, type Parity, type Reply, type ReportRow } from './harness.js';

interface Case {
  id: string;
  path: string;
  /** What the reference must answer, so a broken setup cannot pass as "both fail alike". */
  status: number;
  /** A further check of the reference's parsed body; returns what is wrong. */
  checkReference?(body: unknown): string | undefined;
}

const IDS = ['hillshade', 'contours', 'normalizedIndex', 'terrarium', 'terrainrgb'];

const CASES: Case[] = [
  {
    id: 'algorithms-list',
    path: '/algorithms',
    status: 200,
    checkReference: (body) => {
      const keys = typeof body === 'object' && body !== null ? Object.keys(body) : [];
      return JSON.stringify(keys) === JSON.stringify(IDS) ? undefined : `TiTiler lists ${JSON.stringify(keys)}`;
    },
  },
  ...IDS.map((id): Case => ({ id: `algorithm-${id}`, path: `/algorithms/${id}`, status: 200 })),
  // Not a TiTiler 2.x name (those, like /algorithms/slope, answer whatever TESSERA_TITILER_API says: docs/differences.md).
  { id: 'algorithm-unknown', path: '/algorithms/nope', status: 422 },
  { id: 'algorithm-wrong-case', path: '/algorithms/HillShade', status: 422 },
];

function differences(titiler: Reply, tessera: Reply): Difference[] {
  if (tessera.error !== undefined) return [{ path: 'request', message: `tessera gave no answer: ${tessera.error}` }];
  const out: Difference[] = [];
  if (titiler.status !== tessera.status) out.push({ path: 'status', message: `${titiler.status} vs ${tessera.status}` });
  // Errors are no-store in tessera (public for an hour in TiTiler below 500): compared on successes only.
  for (const name of ['content-type', ...(titiler.status < 400 ? ['cache-control'] : [])]) {
    const a = titiler.headers.get(name);
    const b = tessera.headers.get(name);
    if (a !== b) out.push({ path: `header ${name}`, message: `${a ?? '(none)'} vs ${b ?? '(none)'}` });
  }
  try {
    out.push(...compareJson(parseJson(titiler.body), parseJson(tessera.body)));
  } catch (err) {
    out.push({ path: 'body', message: err instanceof Error ? err.message : String(err) });
  }
  return out;
}

describe('parity with TiTiler 0.18.10: algorithm routes', () => {
  let parity: Parity | undefined;
  let startError: string | undefined;
  const rows: ReportRow[] = [];

  before(async () => {
    try {
      parity = await startParity();
    } catch (err) {
      startError = err instanceof Error ? err.message : String(err);
      throw err;
    }
  });

  after(async () => {
    await parity?.stop();
    const preface = startError ? ['**The servers did not start:**', '', '```', startError, '```'] : [];
    const file = await writeReport(rows, preface, [], 'algorithms');
    console.log(`parity report: ${file}`);
  });

  for (const c of CASES) {
    it(c.id, async () => {
      assert.ok(parity, `servers not started: ${startError ?? 'unknown reason'}`);
      const [titiler, tessera] = await Promise.all([get(parity.titiler.url, c.path), get(parity.tessera.url, c.path)]);
      assert.equal(titiler.error, undefined, `TiTiler gave no answer: ${titiler.error ?? ''}`);
      assert.equal(titiler.status, c.status, `TiTiler answered ${titiler.status}: ${titiler.body.slice(0, 300)}`);
      const problem = c.checkReference?.(toPlain(parseJson(titiler.body)));
      assert.equal(problem, undefined, `reference answer unexpected: ${problem ?? ''}`);
      const diffs = differences(titiler, tessera);
      const note = diffs.length === 0 ? '' : formatDifferences(diffs, 6).replace(/\n/g, '; ');
      rows.push({ id: c.id, request: `GET ${c.path}`, verdict: diffs.length === 0 ? 'equal' : 'differs', note });
      if (diffs.length > 0) assert.fail(`${c.id}: GET ${c.path}\ntessera differs from TiTiler:\n${formatDifferences(diffs, 40)}`);
    });
  }
});
