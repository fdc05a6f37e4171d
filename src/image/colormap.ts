/**
 * Colormaps: the named ones rio-tiler 6.8 ships (generated into data/colormaps.json by
 * tools/colormaps/generate.py), the user's JSON `colormap` parameter parsed by rio-tiler's rules, and
 * their application to a single-band image as TiTiler's `render_image` does it (`apply_cmap`, then
 * the colormap's alpha AND-ed with the data mask).
 *
 * Three forms, chosen as rio-tiler chooses them:
 * - `lut`: a dict with exactly 256 keys, all in 0..255 (every named colormap): a 256×4 table indexed
 *   by the pixel value;
 * - `discrete`: any other dict: pixels equal to a key get its colour, others are transparent black;
 * - `intervals`: a list of [[min, max], colour]: pixels with min ≤ v < max get the colour, later
 *   entries overwriting earlier ones, others are transparent black.
 */
import { readFileSync } from 'node:fs';
import { badRequest } from '../errors.js';
import { datasetMask, isFloat, type BandArray, type ImageData } from './image-data.js';

export type Rgba = [number, number, number, number];

export type ColorMap =
  /** 256 RGBA entries, 4 bytes each, indexed by the pixel value. */
  { kind: 'lut'; table: Uint8Array } | { kind: 'discrete'; entries: Map<number, Rgba> } | { kind: 'intervals'; entries: Array<[[number, number], Rgba]> };

// ---- named colormaps -----------------------------------------------------------------------------

const DATA_DIR = new URL('./data/', import.meta.url);

let names: readonly string[] | undefined;
let encodedTables: Record<string, string> | undefined;
const tableCache = new Map<string, ColorMap>();

/** The names TiTiler 0.18.10 accepts for `colormap_name` (lower-case, sorted). */
export function colormapNames(): readonly string[] {
  names ??= JSON.parse(readFileSync(new URL('colormap-names.json', DATA_DIR), 'utf8')) as string[];
  return names;
}

/** A named colormap (case-insensitive, as rio-tiler's `cmap.get`); 400 for an unknown name. */
export function namedColormap(name: string): ColorMap {
  const key = name.toLowerCase();
  const cached = tableCache.get(key);
  if (cached) return cached;
  // The tables are loaded on first use: most requests never need one.
  encodedTables ??= JSON.parse(readFileSync(new URL('colormaps.json', DATA_DIR), 'utf8')) as Record<string, string>;
  const encoded = Object.hasOwn(encodedTables, key) ? encodedTables[key] : undefined;
  if (encoded === undefined) throw badRequest(`Invalid colormap name: ${name}`);
  const table = new Uint8Array(Buffer.from(encoded, 'base64'));
  if (table.length !== 1024) throw new Error(`colormaps.json: ${key} is not a 256×4 table`);
  const cmap: ColorMap = { kind: 'lut', table };
  tableCache.set(key, cmap);
  return cmap;
}

// ---- parsing the user's colormap -----------------------------------------------------------------

/** rio-tiler's `parse_color`: `#RGB`, `#RGBA`, `#RRGGBB`, `#RRGGBBAA` or a list of 3–4 integers 0..255. */
export function parseColor(value: unknown): Rgba {
  if (typeof value === 'string') {
    const hex = /^#([0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/.exec(value)?.[1];
    if (hex !== undefined) {
      const step = hex.length <= 4 ? 1 : 2;
      const channel = (i: number): number => {
        const digits = hex.slice(i * step, i * step + step);
        return parseInt(step === 1 ? digits + digits : digits, 16);
      };
      const count = hex.length / step;
      return [channel(0), channel(1), channel(2), count === 4 ? channel(3) : 255];
    }
  } else if (Array.isArray(value) && (value.length === 3 || value.length === 4)) {
    // rio-tiler takes any values here and numpy later wraps or truncates them into uint8; we only
    // accept what a colour can be.
    if (value.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255)) {
      const v = value as number[];
      return [v[0]!, v[1]!, v[2]!, v[3] ?? 255];
    }
    throw badRequest(`Invalid color format: ${JSON.stringify(value)} (values must be integers from 0 to 255)`);
  }
  throw badRequest(`Invalid color format: ${typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))}`);
}

const PARSE_FAILURE = 'Could not parse the colormap value.';

/** Most entries a `colormap` may have: a lookup table needs 256; intervals are searched per pixel. */
const MAX_COLORMAP_ENTRIES = 4096;

/**
 * The `colormap` query parameter: a JSON object `{"<int>": colour}` or a JSON list
 * `[[[min, max], colour], …]`, parsed as TiTiler does (Python's json, so `NaN`/`Infinity` are
 * allowed; keys converted with Python's `int()`). Not JSON → 400 "Could not parse the colormap
 * value." (TiTiler's words); a bad colour, key or interval → 400 saying which.
 */
export function parseColormapJson(text: string): ColorMap {
  let doc: unknown;
  try {
    doc = parsePythonJson(text);
  } catch {
    throw badRequest(PARSE_FAILURE);
  }
  const size = Array.isArray(doc) ? doc.length : doc !== null && typeof doc === 'object' ? Object.keys(doc).length : 0;
  if (size > MAX_COLORMAP_ENTRIES) throw badRequest(`Invalid colormap: ${size} entries, at most ${MAX_COLORMAP_ENTRIES}`);
  if (Array.isArray(doc)) return { kind: 'intervals', entries: doc.map(parseInterval) };
  if (doc === null || typeof doc !== 'object') {
    throw badRequest('Invalid colormap: expected a JSON object {"value": color} or a list [[[min, max], color], ...]');
  }
  const entries = new Map<number, Rgba>();
  for (const [key, color] of Object.entries(doc as Record<string, unknown>)) {
    entries.set(pythonInt(key), parseColor(color));
  }
  return isLookupTable(entries) ? { kind: 'lut', table: toTable(entries) } : { kind: 'discrete', entries };
}

/**
 * A raster's own colour table (band 1's, as rasterio's `colormap(1)` gives it: index → RGBA), as a
 * colormap: a lookup table when it has the 256 entries of 0…255, else discrete (values it does not
 * list are transparent), as rio-tiler applies either.
 */
export function colormapOfTable(table: Readonly<Record<string, Rgba>>): ColorMap {
  const entries = new Map<number, Rgba>(Object.entries(table).map(([k, v]) => [Number(k), v]));
  return isLookupTable(entries) ? { kind: 'lut', table: toTable(entries) } : { kind: 'discrete', entries };
}

/**
 * An empty object or list: TiTiler treats it as "no colormap" (it is falsy in Python) and renders the
 * data as if none was given; callers must skip the colormap step for it.
 */
export function isEmptyColormap(cmap: ColorMap): boolean {
  return cmap.kind !== 'lut' && (cmap.kind === 'discrete' ? cmap.entries.size === 0 : cmap.entries.length === 0);
}

/**
 * Whether the colormap itself can make a pixel transparent: an entry with alpha below 255, or (a
 * discrete or interval colormap) a value it does not list, which rio-tiler paints transparent black.
 * The named colormaps are opaque lookup tables.
 */
export function colormapCanBeTransparent(cmap: ColorMap): boolean {
  if (cmap.kind !== 'lut') return true;
  for (let j = 3; j < cmap.table.length; j += 4) if (cmap.table[j]! < 255) return true;
  return false;
}

function parseInterval(entry: unknown): [[number, number], Rgba] {
  const ok =
    Array.isArray(entry) && entry.length === 2 && Array.isArray(entry[0]) && entry[0].length === 2 && entry[0].every((n: unknown) => typeof n === 'number');
  if (!ok) throw badRequest(`Invalid colormap interval ${JSON.stringify(entry)}: expected [[min, max], color]`);
  const [[min, max], color] = entry as [[number, number], unknown];
  return [[min, max], parseColor(color)];
}

/** Python's `int(str)` for base 10: surrounding whitespace, a sign, `_` between digits. */
function pythonInt(key: string): number {
  const t = key.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(t)) throw badRequest(`Invalid colormap key '${key}': keys must be integers`);
  return Number(t.replace(/_/g, ''));
}

function isLookupTable(entries: Map<number, Rgba>): boolean {
  if (entries.size !== 256) return false;
  for (const k of entries.keys()) if (k < 0 || k > 255) return false;
  return true;
}

function toTable(entries: Map<number, Rgba>): Uint8Array {
  const table = new Uint8Array(1024);
  for (const [k, color] of entries) table.set(color, k * 4);
  return table;
}

const PY_CONSTANTS: Record<string, number> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };
const PLACEHOLDER = '\u0000py:';

/**
 * JSON.parse plus the three non-standard constants Python's json accepts (`NaN`, `Infinity`,
 * `-Infinity`): outside strings they are swapped for placeholder strings that a reviver turns back.
 */
function parsePythonJson(text: string): unknown {
  if (!/NaN|Infinity/.test(text)) return JSON.parse(text);
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i] ?? '';
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    const constant = ch === 'N' || ch === 'I' || ch === '-' ? Object.keys(PY_CONSTANTS).find((c) => text.startsWith(c, i)) : undefined;
    if (constant !== undefined) {
      out += JSON.stringify(PLACEHOLDER + constant);
      i += constant.length - 1;
    } else out += ch;
  }
  return JSON.parse(out, (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(PLACEHOLDER) && Object.hasOwn(PY_CONSTANTS, value.slice(PLACEHOLDER.length))
      ? PY_CONSTANTS[value.slice(PLACEHOLDER.length)]
      : value,
  );
}

// ---- application ---------------------------------------------------------------------------------

/**
 * Colours a single-band image: returns a 3-band uint8 RGB image whose masks (one array shared by
 * the three bands) are the colormap's alpha AND the data mask, as TiTiler's `render_image` combines
 * them. The mask can therefore hold partial alpha values (1–254) from the colormap; it is what the
 * encoder writes as the alpha band. Colours are looked up from the raw values, masked pixels included.
 *
 * Values a lookup table cannot index: rio-tiler fails (TiTiler answers 500) for float data and for
 * integers above 255 or below -256 (masked pixels included), and wraps -256..-1 to the end of the
 * table as numpy indexing does. We wrap the same way and refuse the others with a 400 that tells the
 * client to rescale: it is their request, not the server, that cannot work.
 */
export function applyColormap(img: ImageData, cmap: ColorMap): ImageData {
  if (img.bands.length !== 1) {
    throw badRequest(`Source data must be 1 band to apply a colormap (the image has ${img.bands.length})`);
  }
  const data = img.bands[0]!;
  const n = data.length;
  const mask = datasetMask(img);
  const [red, green, blue, alpha] = [new Uint8Array(n), new Uint8Array(n), new Uint8Array(n), new Uint8Array(n)];
  if (cmap.kind === 'lut' && data instanceof Uint8Array) {
    // The usual case (rescaled bytes through a named colormap): straight into the planes.
    tablePlanes(data, cmap.table, mask, red, green, blue, alpha);
  } else {
    const rgba = new Uint8Array(n * 4);
    if (cmap.kind === 'lut') applyTable(data, isFloat(img.dtype), cmap.table, rgba);
    else if (cmap.kind === 'discrete') applyDiscrete(data, cmap.entries, rgba);
    else applyIntervals(data, cmap.entries, rgba);
    for (let i = 0, j = 0; i < n; i++, j += 4) {
      red[i] = rgba[j]!;
      green[i] = rgba[j + 1]!;
      blue[i] = rgba[j + 2]!;
      alpha[i] = rgba[j + 3]! & mask[i]!;
    }
  }
  const out: ImageData = {
    width: img.width,
    height: img.height,
    dtype: 'uint8',
    bands: [red, green, blue],
    masks: [alpha, alpha, alpha],
    bandNames: ['b1', 'b2', 'b3'],
    bounds: img.bounds,
    crs: img.crs,
  };
  if (img.assets) out.assets = img.assets;
  return out;
}

/** Byte data through a 256-entry table, one pass writing the four planes (alpha ANDed with the mask). */
function tablePlanes(data: Uint8Array, table: Uint8Array, mask: Uint8Array, red: Uint8Array, green: Uint8Array, blue: Uint8Array, alpha: Uint8Array): void {
  for (let i = 0; i < data.length; i++) {
    const j = data[i]! << 2;
    red[i] = table[j]!;
    green[i] = table[j + 1]!;
    blue[i] = table[j + 2]!;
    alpha[i] = table[j + 3]! & mask[i]!;
  }
}

/** Gives pixel `i` the colour held in the 4 bytes at `from` in `colors`. */
function put(rgba: Uint8Array, i: number, colors: Uint8Array, from: number): void {
  const j = i * 4;
  rgba[j] = colors[from]!;
  rgba[j + 1] = colors[from + 1]!;
  rgba[j + 2] = colors[from + 2]!;
  rgba[j + 3] = colors[from + 3]!;
}

function applyTable(data: BandArray, floatData: boolean, table: Uint8Array, rgba: Uint8Array): void {
  if (data instanceof Uint8Array) {
    for (let i = 0; i < data.length; i++) put(rgba, i, table, data[i]! * 4);
    return;
  }
  if (floatData) {
    throw badRequest('A 256-entry colormap needs integer data from 0 to 255, got floating-point data: use rescale first');
  }
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    // Negative indexes count from the end, as numpy's do.
    if (v < -256 || v > 255) {
      throw badRequest(`A 256-entry colormap needs values from 0 to 255, got ${v}: use rescale first`);
    }
    put(rgba, i, table, (v < 0 ? v + 256 : v) * 4);
  }
}

/** Exact equality with a key: the keys sorted once, then a binary search per pixel. */
function applyDiscrete(data: BandArray, entries: Map<number, Rgba>, rgba: Uint8Array): void {
  const sorted = [...entries.keys()].sort((a, b) => a - b);
  const keys = Float64Array.from(sorted);
  const colors = new Uint8Array(keys.length * 4);
  sorted.forEach((k, idx) => {
    colors.set(entries.get(k)!, idx * 4);
  });
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    // NaN equals no key (and would fall through both comparisons below).
    if (v !== v) continue;
    let lo = 0;
    let hi = keys.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const k = keys[mid]!;
      if (k < v) lo = mid + 1;
      else if (k > v) hi = mid - 1;
      else {
        put(rgba, i, colors, mid * 4);
        break;
      }
    }
  }
}

/** min ≤ v < max, the last matching interval winning (numpy assigns them in order). */
function applyIntervals(data: BandArray, entries: Array<[[number, number], Rgba]>, rgba: Uint8Array): void {
  const count = entries.length;
  const mins = Float64Array.from(entries, (e) => e[0][0]);
  const maxs = Float64Array.from(entries, (e) => e[0][1]);
  const colors = new Uint8Array(count * 4);
  entries.forEach((e, idx) => {
    colors.set(e[1], idx * 4);
  });
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    for (let e = count - 1; e >= 0; e--) {
      if (v >= mins[e]! && v < maxs[e]!) {
        put(rgba, i, colors, e * 4);
        break;
      }
    }
  }
}
