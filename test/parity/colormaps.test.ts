/**
 * Parity of /colorMaps and /colorMaps/{colorMapId} with TiTiler 0.18.10: the same requests to both
 * servers, status, Content-Type, Cache-Control and bodies compared. One difference is allowed and
 * checked for what it is: TiTiler lists the names in its install's directory-listing order (it
 * globs rio_tiler/cmap_data), which varies between machines, where tessera sorts them; so the
 * list, and the list of choices in the 422 message, are compared as sets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compareJson, formatDifferences, parseJson, toPlain, type JsonValue, type PlainJson } from './compare.js';
import { get, startParity, type Parity, type Reply } from './harness.js';
import { decodePng, fetchBoth } from './pixels.js';

const TABLE_IDS = [
  'viridis',
  'viridis_r',
  'cfastie',
  'rplumbo',
  'schwarzwald',
  'terrain_r',
  'gist_earth',
  'tab20c',
  'twilight_shifted_r',
  // cmocean (rio-tiler ≥ 6.2)
  'algae',
  'balance_r',
  'thermal',
  'turbo_r',
];

type Obj = { [key: string]: PlainJson };

function isObj(v: PlainJson | undefined): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sameHeaders(titiler: Reply, tessera: Reply): string[] {
  const problems: string[] = [];
  // Errors are no-store in tessera (public for an hour in TiTiler below 500): compared on successes only.
  const names = ['content-type', ...(titiler.status < 400 ? ['cache-control'] : [])];
  for (const name of names) {
    const a = titiler.headers.get(name);
    const b = tessera.headers.get(name);
    if (a !== b) problems.push(`header ${name}: ${a ?? '(none)'} vs ${b ?? '(none)'}`);
  }
  return problems;
}

/** The quoted choices of a pydantic "Input should be 'a', 'b' or 'c'" message, sorted. */
function choices(msg: PlainJson | undefined): string[] {
  return [...String(msg).matchAll(/'([^']*)'/g)].map((m) => m[1]!).sort();
}

describe('parity with TiTiler 0.18.10: /colorMaps', () => {
  let parity: Parity | undefined;
  let startError: string | undefined;

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
  });

  async function both(pathAndQuery: string): Promise<{ titiler: Reply; tessera: Reply }> {
    assert.ok(parity, `servers not started: ${startError ?? 'unknown reason'}`);
    const [titiler, tessera] = await Promise.all([get(parity.titiler.url, pathAndQuery), get(parity.tessera.url, pathAndQuery)]);
    assert.equal(titiler.error, undefined, `TiTiler gave no answer: ${titiler.error}`);
    assert.equal(tessera.error, undefined, `tessera gave no answer: ${tessera.error}`);
    return { titiler, tessera };
  }

  it('GET /colorMaps: same names (as a set) and the same links', async () => {
    const { titiler, tessera } = await both('/colorMaps');
    assert.equal(titiler.status, 200, titiler.body.slice(0, 300));
    assert.equal(tessera.status, 200, tessera.body.slice(0, 300));
    assert.deepEqual(sameHeaders(titiler, tessera), []);
    const ref = toPlain(parseJson(titiler.body));
    const ours = toPlain(parseJson(tessera.body));
    assert.ok(isObj(ref) && isObj(ours));
    assert.deepEqual(Object.keys(ours), Object.keys(ref));
    const refNames = ref['colorMaps'];
    const ourNames = ours['colorMaps'];
    assert.ok(Array.isArray(refNames) && Array.isArray(ourNames));
    assert.equal(refNames.length, 211, 'TiTiler 0.18.10 (rio-tiler 6.8) has 211 colormaps');
    assert.deepEqual([...ourNames].sort(), [...refNames].sort());
    assert.deepEqual(ourNames, [...ourNames].sort(), 'tessera lists the names sorted');
    // The links, key order and all, once the servers' base URLs are the same placeholder.
    const diffs = compareJson(
      new Map<string, JsonValue>([['links', (parseJson(titiler.body) as Map<string, JsonValue>).get('links')!]]),
      new Map<string, JsonValue>([['links', (parseJson(tessera.body) as Map<string, JsonValue>).get('links')!]]),
      { normalise: parity!.normalise },
    );
    assert.deepEqual(diffs, [], formatDifferences(diffs));
  });

  for (const id of TABLE_IDS) {
    it(`GET /colorMaps/${id}: identical`, async () => {
      const { titiler, tessera } = await both(`/colorMaps/${id}`);
      assert.equal(titiler.status, 200, titiler.body.slice(0, 300));
      assert.deepEqual(sameHeaders(titiler, tessera), []);
      const diffs = compareJson(parseJson(titiler.body), parseJson(tessera.body));
      assert.deepEqual(diffs, [], formatDifferences(diffs));
      // Byte for byte, too: the same compact JSON.
      assert.equal(tessera.body, titiler.body);
    });
  }

  for (const id of ['notacmap', 'VIRIDIS']) {
    it(`GET /colorMaps/${id}: 422 with the same detail but for the order of the choices`, async () => {
      const { titiler, tessera } = await both(`/colorMaps/${id}`);
      assert.equal(titiler.status, 422, titiler.body.slice(0, 300));
      assert.equal(tessera.status, 422, tessera.body.slice(0, 300));
      assert.deepEqual(sameHeaders(titiler, tessera), []);
      const first = (body: string): Obj => {
        const doc = toPlain(parseJson(body));
        const detail = isObj(doc) ? doc['detail'] : undefined;
        const item = Array.isArray(detail) ? detail[0] : undefined;
        assert.ok(isObj(item), `no detail[0] in ${body.slice(0, 200)}`);
        return item;
      };
      const ref = first(titiler.body);
      const ours = first(tessera.body);
      assert.deepEqual(Object.keys(ours), Object.keys(ref));
      for (const key of ['type', 'loc', 'input']) assert.deepEqual(ours[key], ref[key], key);
      assert.deepEqual(choices(ours['msg']), choices(ref['msg']));
      const expected = (d: Obj): PlainJson | undefined => (isObj(d['ctx']) ? d['ctx']['expected'] : undefined);
      assert.deepEqual(choices(expected(ours)), choices(expected(ref)));
    });
  }

  // Legend images: the colormap's ramp, decoded and compared pixel for pixel.
  // Resized legends: TiTiler 0.18.10 fails (500: its resize opens a MEM:::DATAPOINTER dataset that
  // GDAL >= 3.10 refuses, as for stacked assets of different sizes); tessera answers the asked size.
  for (const [query, size] of [
    ['format=png&width=100&height=10', [100, 10]],
    ['format=png&orientation=vertical&height=600', [20, 600]],
  ] as const) {
    it(`GET /colorMaps/cfastie?${query}: TiTiler 500, tessera the legend at ${size.join('×')} (deliberate)`, async () => {
      assert.ok(parity, `servers not started: ${startError ?? 'unknown reason'}`);
      const x = await fetchBoth(parity, `/colorMaps/cfastie?${query}`);
      assert.equal(x.titiler.status, 500, x.titiler.body.toString().slice(0, 200));
      assert.equal(x.tessera.status, 200, x.tessera.body.toString().slice(0, 200));
      const b = await decodePng(x.tessera.body);
      assert.deepEqual([b.width, b.height, b.channels], [...size, 4]);
    });
  }

  for (const query of ['format=png', 'format=png&orientation=vertical', 'format=jpeg', 'format=webp']) {
    it(`GET /colorMaps/cfastie?${query}: the same legend image`, async () => {
      assert.ok(parity, `servers not started: ${startError ?? 'unknown reason'}`);
      const x = await fetchBoth(parity, `/colorMaps/cfastie?${query}`);
      assert.equal(x.titiler.status, 200, x.titiler.body.toString().slice(0, 200));
      assert.equal(x.tessera.status, 200, x.tessera.body.toString().slice(0, 200));
      assert.equal(x.tessera.type, x.titiler.type);
      const [a, b] = await Promise.all([decodePng(x.titiler.body), decodePng(x.tessera.body)]);
      assert.deepEqual([b.width, b.height, b.channels], [a.width, a.height, a.channels]);
      // Lossless formats exactly; JPEG and WebP within what their encoders differ by.
      const tolerance = query.includes('png') ? 0 : 12;
      let worst = 0;
      for (let i = 0; i < a.values.length; i++) worst = Math.max(worst, Math.abs(a.values[i]! - b.values[i]!));
      assert.ok(worst <= tolerance, `largest difference ${worst} > ${tolerance}`);
    });
  }

  it('GET /colorMaps/viridis?format=gif: the same 422', async () => {
    const { titiler, tessera } = await both('/colorMaps/viridis?format=gif');
    assert.equal(titiler.status, 422);
    assert.equal(tessera.status, 422);
    assert.deepEqual(sameHeaders(titiler, tessera), []);
    const diffs = compareJson(parseJson(titiler.body), parseJson(tessera.body));
    assert.deepEqual(diffs, [], formatDifferences(diffs));
  });
});
