/**
 * What the pixel-parity suites share: the test STAC items (one per fixture, served by the parity
 * file server), sending one request to both servers, decoding PNGs into band-sequential arrays like
 * the `.npy` ones, comparing arrays value by value, and reading an encoded image's layout. Kept
 * apart so that the reading suite (stac-images) and the rendering suite measure pixels the same way.
 */
import sharp from 'sharp';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startParity, writeReport, type Parity, type ReportRow } from './harness.js';
import { parseNpy } from '../helpers/npy.js';
import { bboxPolygon } from '../helpers/geojson.js';

/** The bar of issues 3 and 4: at least 99.5% of values within ±1. */
export const PASS = 0.995;

const COG_TYPE = 'image/tiff; application=geotiff; profile=cloud-optimized';

/** One single-asset item per fixture (bbox from the raster's WGS84 bounds), and a multi-asset one. */
const ITEMS: Record<string, { bbox: [number, number, number, number]; assets: Record<string, string> }> = {
  s2: { bbox: [23.106076, 31.505174, 24.296465, 32.519335], assets: { B01: 'B01.tif', B09: 'B09.tif', tci: 'TCI.tif' } },
  cog: { bbox: [-61.287624, 72.229798, -52.301599, 74.66298], assets: { cog: 'cog.tif' } },
  scale: { bbox: [126.724472, 36.936642, 127.986875, 37.943111], assets: { scale: 'cog_scale.tif' } },
  nan: { bbox: [79.666442, 21.589091, 80.924107, 22.589067], assets: { nan: 'cog_with_nan.tif' } },
  dem: { bbox: [7.090625, 45.916058, 7.10357, 45.925093], assets: { dem: 'dem.tif' } },
};

/** The STAC item of fixture set `name`, its asset hrefs on the file server at `base`. */
function itemDocument(base: string, name: string): string {
  const { bbox, assets } = ITEMS[name]!;
  return JSON.stringify({
    type: 'Feature',
    stac_version: '1.0.0',
    id: `parity-${name}`,
    properties: { datetime: '2020-01-01T00:00:00Z' },
    geometry: bboxPolygon(bbox),
    bbox,
    links: [],
    assets: Object.fromEntries(Object.entries(assets).map(([k, f]) => [k, { href: `${base}/${f}`, type: COG_TYPE }])),
    stac_extensions: [],
  });
}

/** Serves every test item at `/items/<name>.json`; `{name}` in a case's path stands for its URL. */
export function serveItems(p: Parity): void {
  for (const name of Object.keys(ITEMS)) p.fileserver.put(`/items/${name}.json`, itemDocument(p.fileserver.url, name));
}

/**
 * `template` with `{s2}` etc. replaced by the URL-encoded URL of that test item, and `{file:NAME}`
 * by the URL of fixture file NAME (a bare COG for /cog routes).
 */
export function fixturePath(p: Parity, template: string): string {
  return template
    .replace(/\{file:([\w.]+)\}/g, (_, name: string) => encodeURIComponent(`${p.fileserver.url}/${name}`))
    .replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(`${p.fileserver.url}/items/${name}.json`));
}

/** One server's answer with its raw body. */
export interface RawReply {
  status: number;
  type: string | null;
  body: Buffer;
}

/**
 * Sends the same request to TiTiler and tessera (POST with `body` as JSON when given), with `{s2}`
 * etc. in `template` replaced by the URL-encoded item URL; returns the path sent and both answers.
 */
export async function fetchBoth(p: Parity, template: string, body?: unknown): Promise<{ path: string; titiler: RawReply; tessera: RawReply }> {
  const path = fixturePath(p, template);
  const init: RequestInit = body
    ? { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' } }
    : { headers: { 'accept-encoding': 'identity' } };
  // A kept-alive socket the server closed after its previous answer (uvicorn does after a 500) fails
  // on reuse: that is the test client's matter, so such a request is sent once more.
  const send = (url: string): Promise<Response> => fetch(url, init).catch(() => fetch(url, init));
  const [t, s] = await Promise.all([send(`${p.titiler.url}${path}`), send(`${p.tessera.url}${path}`)]);
  return {
    path,
    titiler: { status: t.status, type: t.headers.get('content-type'), body: Buffer.from(await t.arrayBuffer()) },
    tessera: { status: s.status, type: s.headers.get('content-type'), body: Buffer.from(await s.arrayBuffer()) },
  };
}

/**
 * Values within ±1 (NaN equals NaN) over the first `bands - maskBands` bands; the last `maskBands`
 * (mask or alpha) compared exactly. Arrays are band-sequential.
 */
export function compareArrays(a: Float64Array, b: Float64Array, bands: number, maskBands: number): { within: number; maskEqual: number } {
  const per = a.length / bands;
  const dataLen = per * (bands - maskBands);
  let within = 0;
  for (let i = 0; i < dataLen; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if ((Number.isNaN(x) && Number.isNaN(y)) || Math.abs(x - y) <= 1) within++;
  }
  let maskEqual = 0;
  for (let i = dataLen; i < a.length; i++) if (a[i] === b[i]) maskEqual++;
  return { within: dataLen ? within / dataLen : 1, maskEqual: a.length > dataLen ? maskEqual / (a.length - dataLen) : 1 };
}

/** Peak signal-to-noise ratio of `b` against `a` (8-bit values), in dB; Infinity when they are equal. */
export function psnr(a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i]! - b[i]!) ** 2;
  return sum === 0 ? Infinity : 10 * Math.log10((255 * 255) / (sum / a.length));
}

export interface DecodedImage {
  width: number;
  height: number;
  channels: number;
  /** Band-sequential, like the npy arrays. */
  values: Float64Array;
  depth: string;
}

/** Decodes a PNG (8 or 16 bit) or any image sharp reads into band-sequential values. */
export async function decodePng(buf: Buffer): Promise<DecodedImage> {
  const meta = await sharp(buf).metadata();
  const depth = meta.depth === 'ushort' ? 'ushort' : 'uchar';
  const { data, info } = await sharp(buf).raw({ depth }).toBuffer({ resolveWithObject: true });
  const typed = depth === 'ushort' ? new Uint16Array(data.buffer, data.byteOffset, data.length / 2) : data;
  // Interleaved → band-sequential, like the npy arrays.
  const n = info.width * info.height;
  const values = new Float64Array(n * info.channels);
  for (let p = 0; p < n; p++) for (let c = 0; c < info.channels; c++) values[c * n + p] = typed[p * info.channels + c]!;
  return { width: info.width, height: info.height, channels: info.channels, values, depth };
}

/** Size, band count and depth of an encoded image, via sharp (GDAL for tif/jp2, which sharp cannot read). */
export async function sharpMeta(buf: Buffer, type: string | null): Promise<Record<string, unknown>> {
  if (type?.startsWith('image/tiff') || type === 'image/jp2') {
    const { gdal } = await import('../../src/gdal/gdal.js');
    const name = `/vsimem/parity-${Math.random().toString(36).slice(2)}`;
    gdal.vsimem.set(Buffer.from(buf), name);
    try {
      const ds = gdal.open(name);
      const out = { width: ds.rasterSize.x, height: ds.rasterSize.y, bands: ds.bands.count(), type: ds.bands.get(1).dataType, crs: Boolean(ds.srs) };
      ds.close();
      return out;
    } finally {
      gdal.vsimem.release(name);
    }
  }
  const m = await sharp(buf).metadata();
  return { format: m.format, width: m.width, height: m.height, channels: m.channels, depth: m.depth };
}

export type PixelKind = 'npy' | 'png' | 'image' | 'json' | 'status';

/** One request sent to both servers and how its answers are compared. */
export interface PixelCase {
  id: string;
  /** `{s2}` etc. are replaced by the URL of that test item. */
  path: string;
  kind: PixelKind;
  /** Expected status of the reference (a broken setup must not pass as "both fail alike"). */
  status?: number;
  body?: unknown;
  /** Mask agreement accepted below 100% for a documented GDAL-version difference. */
  maskAtLeast?: number;
  /** A known TiTiler failure: its status, and the shape tessera's answer must have instead. */
  deliberate?: { status: number; shape: number[] };
}

/**
 * Sends `c` to both servers and compares: statuses for `status` cases, JSON text for `json`, image
 * layout for `image`, and decoded values (±1 on 99.5%, masks exact) for `npy` and `png`. Adds the
 * case's row (and figures) to the report.
 */
export async function runPixelCase(p: Parity, c: PixelCase, rows: ReportRow[], figures: string[]): Promise<void> {
  const x = await fetchBoth(p, c.path, c.body);
  const note = (text: string, verdict: 'equal' | 'differs' = 'equal'): void => {
    rows.push({ id: c.id, request: `${c.body ? 'POST' : 'GET'} ${c.path}`, verdict, note: text });
  };
  try {
    if (c.deliberate) {
      assert.equal(x.titiler.status, c.deliberate.status, 'the reference failure this case documents');
      assert.equal(x.tessera.status, 200, `tessera failed: ${x.tessera.body.toString().slice(0, 300)}`);
      assert.deepEqual(parseNpy(x.tessera.body).shape, c.deliberate.shape);
      rows.push({
        id: c.id,
        request: `GET ${c.path}`,
        verdict: 'deliberate',
        note: `TiTiler ${x.titiler.status}: ${x.titiler.body.toString().slice(0, 160)}; tessera 200 ${c.deliberate.shape.join('×')}`,
      });
      return;
    }
    if (c.kind === 'status') {
      assert.equal(x.titiler.status, c.status, `reference status (body ${x.titiler.body.toString().slice(0, 200)})`);
      assert.equal(x.tessera.status, x.titiler.status, `tessera: ${x.tessera.body.toString().slice(0, 300)}`);
      note(`both ${x.titiler.status}`);
      return;
    }
    assert.equal(x.titiler.status, 200, `reference failed: ${x.titiler.body.toString().slice(0, 300)}`);
    assert.equal(x.tessera.status, 200, `tessera failed: ${x.tessera.body.toString().slice(0, 300)}`);
    assert.equal(x.tessera.type, x.titiler.type, 'content-type');
    if (c.kind === 'json') {
      const a = JSON.parse(x.titiler.body.toString());
      const b = JSON.parse(x.tessera.body.toString());
      assert.deepEqual(b.band_names, a.band_names);
      assert.deepEqual(b.coordinates, a.coordinates);
      assert.equal(b.values.length, a.values.length);
      a.values.forEach((v: number | null, i: number) => {
        const w = b.values[i] as number | null;
        if (v === null || w === null) assert.equal(w, v, `value ${i}`);
        else assert.ok(Math.abs(v - w) <= 1e-9 * Math.max(1, Math.abs(v)), `value ${i}: ${w} vs ${v}`);
      });
      assert.equal(x.tessera.body.toString(), x.titiler.body.toString(), 'JSON text');
      note('equal JSON');
      return;
    }
    if (c.kind === 'image') {
      const [ma, mb] = await Promise.all([sharpMeta(x.titiler.body, x.titiler.type), sharpMeta(x.tessera.body, x.tessera.type)]);
      assert.deepEqual(mb, ma, 'size, bands and depth');
      note(`${x.titiler.type}; ${JSON.stringify(ma)}`);
      return;
    }
    let shape: string;
    let dtype: string;
    let r: { within: number; maskEqual: number };
    if (c.kind === 'npy') {
      const a = parseNpy(x.titiler.body);
      const b = parseNpy(x.tessera.body);
      assert.deepEqual(b.shape, a.shape, 'shape');
      assert.equal(b.descr, a.descr, 'dtype');
      const masked = c.path.includes('return_mask=false') ? 0 : 1;
      r = compareArrays(a.values, b.values, a.shape[0]!, masked);
      shape = a.shape.join('×');
      dtype = a.descr;
    } else {
      const a = await decodePng(x.titiler.body);
      const b = await decodePng(x.tessera.body);
      assert.deepEqual([b.width, b.height, b.channels, b.depth], [a.width, a.height, a.channels, a.depth], 'png layout');
      const alpha = a.channels === 2 || a.channels === 4 ? 1 : 0;
      r = compareArrays(a.values, b.values, a.channels, alpha);
      shape = `${a.channels}×${a.height}×${a.width}`;
      dtype = `png ${a.depth}`;
    }
    figures.push(`| ${c.id} | ${shape} | ${dtype} | ${(r.within * 100).toFixed(3)}% | ${(r.maskEqual * 100).toFixed(3)}% |`);
    const maskBar = c.maskAtLeast ?? 1;
    const ok = r.within >= PASS && r.maskEqual >= maskBar;
    const verdict = ok ? (r.maskEqual === 1 ? 'equal' : 'deliberate') : 'differs';
    rows.push({
      id: c.id,
      request: `${c.body ? 'POST' : 'GET'} ${c.path}`,
      verdict,
      note: `values within ±1: ${(r.within * 100).toFixed(3)}%, mask equal: ${(r.maskEqual * 100).toFixed(3)}%`,
    });
    assert.ok(r.within >= PASS, `values within ±1: ${(r.within * 100).toFixed(3)}% < 99.5%`);
    assert.ok(r.maskEqual >= maskBar, `masks differ: ${(r.maskEqual * 100).toFixed(3)}% equal`);
  } catch (err) {
    if (!rows.some((row) => row.id === c.id)) note((err as Error).message.split('\n')[0]!, 'differs');
    throw err;
  }
}

/**
 * A pixel-parity suite: both servers started once, the fixture items served, every case run with
 * `runPixelCase`, and the report written to .parity/report-<report>.md.
 */
export function describePixelParity(title: string, report: string, intro: string, cases: readonly PixelCase[]): void {
  describe(title, { timeout: 600_000 }, () => {
    let p: Parity;
    const rows: ReportRow[] = [];
    const figures: string[] = ['| case | shape | dtype | values within ±1 | mask equal |', '| --- | --- | --- | --- | --- |'];

    before(async () => {
      p = await startParity();
      serveItems(p);
    });

    after(async () => {
      await writeReport(rows, [intro], ['## Figures', '', ...figures], report);
      await p?.stop();
    });

    for (const c of cases) it(c.id, () => runPixelCase(p, c, rows, figures));
  });
}
