/**
 * What the pixel-parity suites share: the test STAC items (one per fixture, served by the parity
 * file server), sending one request to both servers, decoding PNGs into band-sequential arrays like
 * the `.npy` ones, comparing arrays value by value, and reading an encoded image's layout. Kept
 * apart so that the reading suite (stac-images) and the rendering suite measure pixels the same way.
 */
import sharp from 'sharp';
import type { Parity } from './harness.js';

/** The bar of issues 3 and 4: at least 99.5% of values within ±1. */
export const PASS = 0.995;

const COG_TYPE = 'image/tiff; application=geotiff; profile=cloud-optimized';

/** One single-asset item per fixture (bbox from the raster's WGS84 bounds), and a multi-asset one. */
export const ITEMS: Record<string, { bbox: [number, number, number, number]; assets: Record<string, string> }> = {
  s2: { bbox: [23.106076, 31.505174, 24.296465, 32.519335], assets: { B01: 'B01.tif', B09: 'B09.tif', tci: 'TCI.tif' } },
  cog: { bbox: [-61.287624, 72.229798, -52.301599, 74.66298], assets: { cog: 'cog.tif' } },
  scale: { bbox: [126.724472, 36.936642, 127.986875, 37.943111], assets: { scale: 'cog_scale.tif' } },
  nan: { bbox: [79.666442, 21.589091, 80.924107, 22.589067], assets: { nan: 'cog_with_nan.tif' } },
  dem: { bbox: [7.090625, 45.916058, 7.10357, 45.925093], assets: { dem: 'dem.tif' } },
};

/** The STAC item of fixture set `name`, its asset hrefs on the file server at `base`. */
export function itemDocument(base: string, name: string): string {
  const { bbox, assets } = ITEMS[name]!;
  const [w, s, e, n] = bbox;
  return JSON.stringify({
    type: 'Feature',
    stac_version: '1.0.0',
    id: `parity-${name}`,
    properties: { datetime: '2020-01-01T00:00:00Z' },
    geometry: { type: 'Polygon', coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] },
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
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(`${p.fileserver.url}/items/${name}.json`));
  const init: RequestInit = body
    ? { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', 'accept-encoding': 'identity' } }
    : { headers: { 'accept-encoding': 'identity' } };
  const [t, s] = await Promise.all([fetch(`${p.titiler.url}${path}`, init), fetch(`${p.tessera.url}${path}`, init)]);
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
    const { gdal } = await import('../../src/source/gdal.js');
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
