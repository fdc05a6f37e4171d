/**
 * Colormaps: the generated named tables against rio-tiler 6.8's .npy files, the JSON `colormap`
 * parameter, application to images (against rio-tiler's `apply_cmap` + TiTiler's mask combination,
 * values computed in the parity venv), and the /colorMaps routes over HTTP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { applyColormap, colormapNames, isEmptyColormap, namedColormap, parseColor, parseColormapJson, type ColorMap } from '../src/image/colormap.js';
import { ARRAY_OF, type DType, type ImageData } from '../src/image/image-data.js';
import { TesseraError } from '../src/errors.js';
import { REPO_ROOT } from './helpers/paths.js';
import { startTessera, type RunningTessera } from './helpers/tessera.js';

/** Entries 0, 37, 128, 255 and the SHA-256 of the whole 256×4 table, read from rio_tiler/cmap_data. */
const NAMED: Record<string, { entries: Record<number, number[]>; sha256: string }> = {
  viridis: {
    entries: { 0: [68, 1, 84, 255], 37: [69, 50, 127, 255], 128: [32, 144, 140, 255], 255: [253, 231, 36, 255] },
    sha256: '431bb41fd79f015472ceea7282e466c9a4a844399fe06d69719ab849774dc081',
  },
  viridis_r: {
    entries: { 0: [253, 231, 36, 255], 37: [157, 217, 58, 255], 128: [32, 143, 140, 255], 255: [68, 1, 84, 255] },
    sha256: '90dc69c77563bb566fd63625e92fad09fa087c96bddb25b4e5eee918043f3501',
  },
  magma: {
    entries: { 0: [0, 0, 3, 255], 37: [35, 17, 82, 255], 128: [182, 54, 121, 255], 255: [251, 252, 191, 255] },
    sha256: 'eaf7eb1a81ab34e247bd8156494dd9b843f1655e6efd06ce80f758d66a41dabe',
  },
  cfastie: {
    entries: { 0: [255, 255, 255, 255], 37: [98, 98, 98, 255], 128: [96, 96, 96, 255], 255: [255, 1, 239, 255] },
    sha256: '87348cd182649bfdc69fa4b3d97ff46b066913a6e07e4878276230439f0b4561',
  },
  rplumbo: {
    entries: { 0: [0, 0, 0, 255], 37: [25, 25, 25, 255], 128: [85, 85, 85, 255], 255: [0, 67, 8, 255] },
    sha256: '8320510c599f933cb39d8d53055c27207c8e8e76ec89b864025c132bc3c1643f',
  },
  schwarzwald: {
    entries: { 0: [174, 239, 213, 255], 37: [232, 242, 156, 255], 128: [192, 74, 2, 255], 255: [233, 231, 233, 255] },
    sha256: '992447501d4d90330dbb6f6139fc0caac0a9a11af2d7cc8050f0402856383db6',
  },
  terrain: {
    entries: { 0: [51, 51, 153, 255], 37: [1, 149, 251, 255], 128: [254, 253, 152, 255], 255: [255, 255, 255, 255] },
    sha256: '9ccebc028c52ef7266fc60ec41f95df1ffdecabef0542b39eee4ceb9f8b0c7d2',
  },
  gray: {
    entries: { 0: [0, 0, 0, 255], 37: [36, 36, 36, 255], 128: [128, 128, 128, 255], 255: [255, 255, 255, 255] },
    sha256: '5d31dbb2601b2c705844165e973f95befdec3ffe9ca51c64406b420aee13166b',
  },
  jet: {
    entries: { 0: [0, 0, 127, 255], 37: [0, 20, 255, 255], 128: [124, 255, 121, 255], 255: [127, 0, 0, 255] },
    sha256: '878b65944cde43dd8015035710be8c53357a64fa2fbc6eae358ee5257a876b8e',
  },
  balance: {
    entries: { 0: [23, 28, 66, 255], 37: [24, 82, 187, 255], 128: [240, 236, 235, 255], 255: [60, 9, 17, 255] },
    sha256: '1a15cbf378446e1019419ae65d9cbc16a45852465f9dd22395873a582293e819',
  },
  algae_r: {
    entries: { 0: [17, 36, 20, 255], 37: [25, 67, 44, 255], 128: [19, 148, 80, 255], 255: [214, 249, 207, 255] },
    sha256: '835f16a9b781906c780a504ed1f5d29268578f71782c6c18e68f477f9b4f06c2',
  },
  turbo: {
    entries: { 0: [48, 18, 59, 255], 37: [70, 120, 240, 255], 128: [164, 252, 59, 255], 255: [122, 4, 2, 255] },
    sha256: 'cd0f40352a6187a94c5a6d3ee5f09dfc29280d73bee58cd1b1971ffcfcf3e271',
  },
  tab10: {
    entries: { 0: [31, 119, 180, 255], 37: [255, 127, 14, 255], 128: [140, 86, 75, 255], 255: [23, 190, 207, 255] },
    sha256: '7d0ef00f234c02055764216a32322726a4495c51ca0175460bcb0c4037c78610',
  },
  twilight_shifted_r: {
    entries: { 0: [47, 20, 54, 255], 37: [128, 35, 80, 255], 128: [225, 216, 226, 255], 255: [47, 19, 55, 255] },
    sha256: '8b4660a588c8871adfdf5d8a3d843f691b697abbcc6806f755bb6d6d56750a49',
  },
};

function table(cmap: ColorMap): Uint8Array {
  assert.equal(cmap.kind, 'lut');
  return (cmap as { table: Uint8Array }).table;
}

function badRequest(fn: () => unknown, message: RegExp | string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof TesseraError, `expected a TesseraError, got ${String(err)}`);
    assert.equal(err.kind, 'BadRequest');
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

function line(dtype: DType, values: number[], mask?: number[]): ImageData {
  const data = new ARRAY_OF[dtype](values.length);
  values.forEach((v, i) => {
    data[i] = v;
  });
  return {
    width: values.length,
    height: 1,
    dtype,
    bands: [data],
    masks: [Uint8Array.from(mask ?? values.map(() => 255))],
    bandNames: ['b1'],
    bounds: [0, 0, 1, 1],
    crs: 'EPSG:4326',
    datasetStatistics: [[0, 1]],
  };
}

/** [red, green, blue] per band, and the output mask. */
function colours(img: ImageData): { rgb: number[][]; mask: number[] } {
  assert.equal(img.dtype, 'uint8');
  assert.equal(img.bands.length, 3);
  assert.ok(img.masks[0] === img.masks[1] && img.masks[1] === img.masks[2], 'the three bands share one mask');
  return { rgb: img.bands.map((b) => Array.from(b)), mask: Array.from(img.masks[0]!) };
}

describe('named colormaps', () => {
  it("lists rio-tiler 6.8's 211 names, sorted, the same as the generated tables", () => {
    const names = colormapNames();
    assert.equal(names.length, 211);
    assert.deepEqual([...names], [...names].sort());
    for (const n of ['viridis', 'cfastie', 'rplumbo', 'schwarzwald', 'turbo_r', 'algae', 'twilight_shifted_r']) assert.ok(names.includes(n), n);
    for (const n of ['cfastie_r', 'rplumbo_r', 'schwarzwald_r']) assert.ok(!names.includes(n), n);
    const data = JSON.parse(readFileSync(path.join(REPO_ROOT, 'src/image/data/colormaps.json'), 'utf8')) as Record<string, string>;
    assert.deepEqual(Object.keys(data), [...names]);
  });

  for (const [name, want] of Object.entries(NAMED)) {
    it(`${name} equals rio_tiler/cmap_data/${name}.npy`, () => {
      const t = table(namedColormap(name));
      assert.equal(t.length, 1024);
      for (const [i, rgba] of Object.entries(want.entries)) assert.deepEqual(Array.from(t.subarray(Number(i) * 4, Number(i) * 4 + 4)), rgba, `entry ${i}`);
      assert.equal(createHash('sha256').update(t).digest('hex'), want.sha256);
    });
  }

  it('finds names case-insensitively and caches them; unknown names are a 400', () => {
    assert.equal(namedColormap('VIRIDIS'), namedColormap('viridis'));
    badRequest(() => namedColormap('notacmap'), 'Invalid colormap name: notacmap');
    badRequest(() => namedColormap('__proto__'), 'Invalid colormap name: __proto__');
  });
});

describe('parseColor', () => {
  it('reads hex forms and lists as rio-tiler does', () => {
    assert.deepEqual(parseColor('#FFF'), [255, 255, 255, 255]);
    assert.deepEqual(parseColor('#abcd'), [170, 187, 204, 221]);
    assert.deepEqual(parseColor('#FF0000'), [255, 0, 0, 255]);
    assert.deepEqual(parseColor('#00ff0080'), [0, 255, 0, 128]);
    assert.deepEqual(parseColor([1, 2, 3]), [1, 2, 3, 255]);
    assert.deepEqual(parseColor([1, 2, 3, 4]), [1, 2, 3, 4]);
  });

  it('refuses anything else with a 400', () => {
    badRequest(() => parseColor('#12345'), 'Invalid color format: #12345');
    badRequest(() => parseColor('red'), 'Invalid color format: red');
    badRequest(() => parseColor('#GGG'), 'Invalid color format: #GGG');
    badRequest(() => parseColor([1, 2]), 'Invalid color format: [1,2]');
    badRequest(() => parseColor([1, 2, 3, 4, 5]), 'Invalid color format: [1,2,3,4,5]');
    badRequest(() => parseColor([300, 0, 0]), /^Invalid color format: \[300,0,0\] \(values must be integers from 0 to 255\)$/);
    badRequest(() => parseColor([1.5, 0, 0]), /values must be integers/);
    badRequest(() => parseColor(['a', 'b', 'c']), /values must be integers/);
    badRequest(() => parseColor({ 0: 1 }), 'Invalid color format: {"0":1}');
    badRequest(() => parseColor(null), 'Invalid color format: null');
  });
});

describe('parseColormapJson', () => {
  it("makes a discrete map of an object, keys read with Python's int()", () => {
    const cmap = parseColormapJson('{"1": [1, 2, 3], " +1_0 ": "#abc", "-5": "#000000ff", "1000": [0, 0, 0, 0]}');
    assert.equal(cmap.kind, 'discrete');
    // JSON.parse puts integer-like keys first, so compare in key order (order never matters: keys are unique).
    assert.deepEqual(
      [...(cmap as { entries: Map<number, number[]> }).entries].sort((a, b) => a[0] - b[0]),
      [
        [-5, [0, 0, 0, 255]],
        [1, [1, 2, 3, 255]],
        [10, [170, 187, 204, 255]],
        [1000, [0, 0, 0, 0]],
      ],
    );
  });

  it('makes a lookup table of exactly 256 keys within 0..255', () => {
    const full = `{${Array.from({ length: 256 }, (_, i) => `"${i}": [${i}, ${255 - i}, 7]`).join(',')}}`;
    const t = table(parseColormapJson(full));
    assert.deepEqual(Array.from(t.subarray(0, 8)), [0, 255, 7, 255, 1, 254, 7, 255]);
    assert.deepEqual(Array.from(t.subarray(1020)), [255, 0, 7, 255]);
    // 256 keys but one outside 0..255: discrete
    const shifted = `{${Array.from({ length: 256 }, (_, i) => `"${i + 1}": [${i}, 0, 0]`).join(',')}}`;
    assert.equal(parseColormapJson(shifted).kind, 'discrete');
    assert.equal(parseColormapJson('{"0": [1, 2, 3]}').kind, 'discrete');
  });

  it("makes intervals of a list, with Python's Infinity and NaN literals", () => {
    const cmap = parseColormapJson('[[[0, 1], "#fff"], [[1, Infinity], [1, 2, 3, 4]], [[-Infinity, 0], "#000"]]');
    assert.deepEqual(cmap, {
      kind: 'intervals',
      entries: [
        [
          [0, 1],
          [255, 255, 255, 255],
        ],
        [
          [1, Infinity],
          [1, 2, 3, 4],
        ],
        [
          [-Infinity, 0],
          [0, 0, 0, 255],
        ],
      ],
    });
    const nan = parseColormapJson('[[[NaN, 1], "#fff"]]');
    assert.ok(nan.kind === 'intervals' && Number.isNaN(nan.entries[0]![0][0]));
    // The literals are not replaced inside strings.
    badRequest(() => parseColormapJson('{"1": "Infinity"}'), 'Invalid color format: Infinity');
  });

  it("answers TiTiler's message for text that is not JSON, and says what is wrong otherwise", () => {
    for (const text of ['', '{', 'not json', '{"1": [1,2,3],}', '[[[0, 1], "#fff"]] x', 'Infinityx']) {
      badRequest(() => parseColormapJson(text), 'Could not parse the colormap value.');
    }
    badRequest(() => parseColormapJson('{"a": "#fff"}'), /Invalid colormap key 'a': keys must be integers/);
    badRequest(() => parseColormapJson('{"1.5": "#fff"}'), /Invalid colormap key '1.5'/);
    badRequest(() => parseColormapJson('{"1": [1, 2]}'), 'Invalid color format: [1,2]');
    badRequest(() => parseColormapJson('{"1": {"2": [1, 2, 3]}}'), /Invalid color format/);
    badRequest(() => parseColormapJson('[[[0, 1, 2], "#fff"]]'), /Invalid colormap interval \[\[0,1,2\],"#fff"\]: expected \[\[min, max\], color\]/);
    badRequest(() => parseColormapJson('[{"0": "#fff"}]'), /Invalid colormap interval/);
    badRequest(() => parseColormapJson('[[["a", "b"], "#fff"]]'), /Invalid colormap interval/);
    for (const text of ['5', '"ab"', 'null', 'true']) badRequest(() => parseColormapJson(text), /expected a JSON object/);
  });

  it('recognises the empty forms TiTiler ignores', () => {
    assert.ok(isEmptyColormap(parseColormapJson('{}')));
    assert.ok(isEmptyColormap(parseColormapJson('[]')));
    assert.ok(!isEmptyColormap(parseColormapJson('{"1": "#fff"}')));
    assert.ok(!isEmptyColormap(namedColormap('gray')));
  });
});

describe('applyColormap (rio-tiler apply_cmap, alpha AND mask)', () => {
  it('looks uint8 values up in a named table, masked pixels coloured but transparent', () => {
    const out = applyColormap(line('uint8', [0, 37, 128, 255], [255, 255, 0, 255]), namedColormap('viridis'));
    assert.deepEqual(colours(out), {
      rgb: [
        [68, 69, 32, 253],
        [1, 50, 144, 231],
        [84, 127, 140, 36],
      ],
      mask: [255, 255, 0, 255],
    });
    assert.deepEqual(out.bandNames, ['b1', 'b2', 'b3']);
    assert.equal(out.datasetStatistics, undefined);
    assert.deepEqual([out.width, out.height, out.crs], [4, 1, 'EPSG:4326']);
  });

  it('indexes negative integers from the end of the table as numpy does', () => {
    const out = applyColormap(line('int16', [-1, -256, 0, 255, 37]), namedColormap('viridis'));
    assert.deepEqual(colours(out).rgb, [
      [253, 68, 68, 253, 69],
      [231, 1, 1, 231, 50],
      [36, 84, 84, 36, 127],
    ]);
  });

  it('refuses with a 400 what a table cannot index (TiTiler fails with a 500: IndexError)', () => {
    const viridis = namedColormap('viridis');
    badRequest(() => applyColormap(line('float32', [1, 2, 255]), viridis), /needs integer data from 0 to 255, got floating-point data: use rescale first/);
    badRequest(() => applyColormap(line('uint16', [1, 1099, 2]), viridis), 'A 256-entry colormap needs values from 0 to 255, got 1099: use rescale first');
    badRequest(() => applyColormap(line('int16', [0, -257]), viridis), /got -257/);
    // Masked pixels are indexed too (rio-tiler colours the whole array before applying the mask).
    badRequest(() => applyColormap(line('int16', [5, -9999], [255, 0]), viridis), /got -9999/);
  });

  it("combines a user table's alpha with the mask", () => {
    const cmap = parseColormapJson(`{${Array.from({ length: 256 }, (_, i) => `"${i}": [${i}, ${255 - i}, 7, ${i % 2 ? 0 : 255}]`).join(',')}}`);
    const out = applyColormap(line('uint8', [0, 1, 2, 254, 255], [255, 255, 255, 255, 0]), cmap);
    assert.deepEqual(colours(out), {
      rgb: [
        [0, 1, 2, 254, 255],
        [255, 254, 253, 1, 0],
        [7, 7, 7, 7, 7],
      ],
      mask: [255, 0, 255, 255, 0],
    });
  });

  it('colours discrete values by equality, partial alpha kept', () => {
    const cmap = parseColormapJson('{"1": [255,0,0], "2": "#00ff0080", "1000": "#0000ff"}');
    const out = applyColormap(line('float32', [1, 1.5, 2, 1000, NaN, 0, 2], [255, 255, 255, 255, 255, 255, 0]), cmap);
    assert.deepEqual(colours(out), {
      rgb: [
        [255, 0, 0, 0, 0, 0, 0],
        [0, 0, 255, 0, 0, 0, 255],
        [0, 0, 0, 255, 0, 0, 0],
      ],
      mask: [255, 0, 128, 255, 0, 0, 0],
    });
  });

  it('colours intervals min <= v < max, later entries winning', () => {
    const cmap = parseColormapJson('[[[0, 10], "#ff0000"], [[5, 20], [0, 255, 0, 128]], [[-Infinity, 0], "#00F"]]');
    const out = applyColormap(line('float64', [-5, 0, 4.9, 5, 10, 19.99, 20, NaN], [255, 255, 255, 255, 255, 255, 255, 0]), cmap);
    assert.deepEqual(colours(out), {
      rgb: [
        [0, 255, 255, 0, 0, 0, 0, 0],
        [0, 0, 0, 255, 255, 255, 0, 0],
        [255, 0, 0, 0, 0, 0, 0, 0],
      ],
      mask: [255, 255, 255, 128, 128, 128, 0, 0],
    });
  });

  it('uses the dataset mask of the single band and refuses several bands', () => {
    const img = line('uint16', [1, 2, 3], [0, 255, 255]);
    const out = applyColormap(img, parseColormapJson('{"1": "#fff", "2": "#fff", "3": "#fff"}'));
    assert.deepEqual(colours(out).mask, [0, 255, 255]);
    const two: ImageData = { ...img, bands: [img.bands[0]!, img.bands[0]!], masks: [img.masks[0]!, img.masks[0]!], bandNames: ['b1', 'b2'] };
    badRequest(() => applyColormap(two, namedColormap('gray')), /Source data must be 1 band to apply a colormap \(the image has 2\)/);
  });
});

describe('/colorMaps routes', () => {
  let tessera: RunningTessera;
  before(async () => {
    tessera = await startTessera();
  });
  after(async () => {
    await tessera?.close();
  });

  async function get(pathAndQuery: string): Promise<{ status: number; type: string | null; text: string }> {
    const res = await tessera.get(pathAndQuery);
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  }

  it("lists the names with TiTiler's links", async () => {
    const res = await get('/colorMaps');
    assert.equal(res.status, 200);
    assert.equal(res.type, 'application/json');
    const base = tessera.url;
    const body = JSON.parse(res.text) as { colorMaps: string[]; links: unknown[] };
    assert.deepEqual(Object.keys(body), ['colorMaps', 'links']);
    assert.deepEqual(body.colorMaps, [...colormapNames()]);
    assert.deepEqual(body.links, [
      { href: `${base}/colorMaps`, rel: 'self', type: 'application/json', title: 'List of available colormaps' },
      { href: `${base}/colorMaps/{colorMapId}`, rel: 'data', type: 'application/json', templated: true, title: 'Retrieve colorMap metadata' },
      { href: `${base}/colorMaps/{colorMapId}?format=png`, rel: 'data', type: 'image/png', templated: true, title: 'Retrieve colorMap as image' },
    ]);
  });

  it('serves a table as {"0": [r, g, b, a], …, "255": …}', async () => {
    const res = await get('/colorMaps/viridis');
    assert.equal(res.status, 200);
    assert.equal(res.type, 'application/json');
    assert.ok(res.text.startsWith('{"0":[68,1,84,255],"1":[68,2,85,255],'), res.text.slice(0, 60));
    const body = JSON.parse(res.text) as Record<string, number[]>;
    assert.deepEqual(
      Object.keys(body),
      Array.from({ length: 256 }, (_, i) => String(i)),
    );
    assert.deepEqual(body['128'], [32, 144, 140, 255]);
    assert.deepEqual(body['255'], [253, 231, 36, 255]);
  });

  it('answers 422 like FastAPI for an unknown or wrongly cased id and a bad format', async () => {
    for (const id of ['notacmap', 'VIRIDIS']) {
      const res = await get(`/colorMaps/${id}`);
      assert.equal(res.status, 422);
      const detail = (JSON.parse(res.text) as { detail: Array<Record<string, unknown>> }).detail[0]!;
      assert.equal(detail['type'], 'literal_error');
      assert.deepEqual(detail['loc'], ['path', 'colorMapId']);
      assert.equal(detail['input'], id);
      assert.match(String(detail['msg']), /^Input should be 'accent', 'accent_r', .* or 'ylorrd_r'$/);
    }
    const bad = await get('/colorMaps/viridis?format=gif');
    assert.equal(bad.status, 422);
    assert.equal((JSON.parse(bad.text) as { detail: Array<Record<string, unknown>> }).detail[0]!['type'], 'enum');
  });

  it('makes legend images: the ramp of the colormap, in either orientation and any size', async () => {
    const png = await tessera.get('/colorMaps/viridis?format=png');
    assert.equal(png.status, 200);
    assert.equal(png.headers.get('content-type'), 'image/png');
    const { data, info } = await sharp(Buffer.from(await png.arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [256, 20, 4]);
    const viridis = namedColormap('viridis');
    assert.equal(viridis.kind, 'lut');
    if (viridis.kind !== 'lut') return;
    for (const col of [0, 100, 255]) {
      const at = (5 * 256 + col) * 4;
      assert.deepEqual([...data.subarray(at, at + 4)], [...viridis.table.subarray(col * 4, col * 4 + 4)], `column ${col}`);
    }
    const vertical = await tessera.get('/colorMaps/viridis?format=png&orientation=vertical&height=512');
    const v = await sharp(Buffer.from(await vertical.arrayBuffer())).metadata();
    assert.deepEqual([v.width, v.height], [20, 512]);
    const jpeg = await tessera.get('/colorMaps/viridis?format=jpeg');
    assert.equal(jpeg.headers.get('content-type'), 'image/jpeg');
    const huge = await get('/colorMaps/viridis?format=png&width=100000');
    assert.equal(huge.status, 400);
  });
});
