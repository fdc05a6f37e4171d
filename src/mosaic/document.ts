/**
 * The MosaicJSON document (spec 0.0.2 and 0.0.3, cogeo-mosaic 7's pydantic model): validation of
 * what a backend fetched, the defaults the model fills in (version, zooms, bounds, a computed
 * center), and the model's JSON dump (field order, floats where the model has floats, unset fields
 * dropped) that `GET /mosaicjson/` answers with. A document that does not fit the model is a 400
 * naming the field, where TiTiler answers 500.
 *
 * Quadkeys are checked here too: every key of `tiles` must be a quadkey (digits 0–3) at the
 * document's quadkey zoom, so that lookups can rely on it.
 */
import { badRequest } from '../errors.js';
import { float, floats, type PyFloat } from '../pyjson.js';
import { parseTileMatrixSetJson, type TileMatrixSetJson } from './tms.js';
import { OVERVIEW_FIELD, parseOverviewField, type MosaicOverview } from './overview.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export interface MosaicDocument {
  mosaicjson: string;
  name?: string;
  description?: string;
  version: string;
  attribution?: string;
  minzoom: number;
  maxzoom: number;
  quadkey_zoom?: number;
  bounds: [number, number, number, number];
  center: [number, number, number];
  /** Quadkey → assets in priority order (without `asset_prefix`). */
  tiles: Map<string, string[]>;
  tilematrixset?: TileMatrixSetJson;
  asset_type?: string;
  asset_prefix?: string;
  data_type?: string;
  colormap?: Map<number, [number, number, number, number]>;
  layers?: JsonObject;
  /**
   * tessera's low-zoom overview (mosaic/overview.ts); not part of cogeo-mosaic's model, so never
   * in the model's dump below (TiTiler drops it too).
   */
  overview?: MosaicOverview;
}

const FIELDS = [
  'mosaicjson',
  'name',
  'description',
  'version',
  'attribution',
  'minzoom',
  'maxzoom',
  'quadkey_zoom',
  'bounds',
  'center',
  'tiles',
  'tilematrixset',
  'asset_type',
  'asset_prefix',
  'data_type',
  'colormap',
  'layers',
] as const;

const QUADKEY_RE = /^[0-3]*$/;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class Fields {
  constructor(
    private readonly doc: JsonObject,
    private readonly what: string,
  ) {}

  fail(field: string, expected: string): never {
    throw badRequest(`Invalid ${this.what}: '${field}' ${expected}`);
  }

  /** Unset or null both mean "not given", as for pydantic's Optional fields. */
  has(field: string): boolean {
    return this.doc[field] !== undefined && this.doc[field] !== null;
  }

  string(field: string): string | undefined {
    const v = this.doc[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') this.fail(field, 'must be a string');
    return v;
  }

  /** pydantic's lax int: an integral number (7 or 7.0). */
  int(field: string, range?: [number, number]): number | undefined {
    const v = this.doc[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) this.fail(field, 'must be an integer');
    if (range && (v < range[0] || v > range[1])) this.fail(field, `must be between ${range[0]} and ${range[1]}`);
    return v;
  }

  numbers(field: string, count: number): number[] | undefined {
    const v = this.doc[field];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.length !== count || !v.every((n) => typeof n === 'number' && Number.isFinite(n))) {
      this.fail(field, `must be an array of ${count} numbers`);
    }
    return v as number[];
  }
}

/**
 * Validates a parsed JSON value as a MosaicJSON document. `what` names it in messages
 * (e.g. "MosaicJSON document at 'https://…'").
 */
export function parseMosaicDocument(raw: unknown, what = 'MosaicJSON document'): MosaicDocument {
  if (!isObject(raw)) throw badRequest(`Invalid ${what}: expected a JSON object`);
  const f: Fields = new Fields(raw, what);
  const mosaicjson = f.string('mosaicjson');
  if (mosaicjson === undefined) f.fail('mosaicjson', 'is required');
  const minzoom = f.int('minzoom', [0, 30]) ?? 0;
  const maxzoom = f.int('maxzoom', [0, 30]) ?? 30;
  const quadkeyZoom = f.int('quadkey_zoom');
  if (quadkeyZoom !== undefined && (quadkeyZoom < 0 || quadkeyZoom > 30)) f.fail('quadkey_zoom', 'must be between 0 and 30');
  const bounds = (f.numbers('bounds', 4) ?? [-180, -90, 180, 90]) as [number, number, number, number];
  let center: [number, number, number];
  const centerRaw = raw['center'];
  if (centerRaw === undefined || centerRaw === null) {
    center = [(bounds[0] + bounds[2]) / 2, (bounds[1] + bounds[3]) / 2, minzoom];
  } else {
    const c = f.numbers('center', 3)!;
    if (!Number.isInteger(c[2])) f.fail('center', 'must be [lon, lat, zoom] with an integer zoom');
    center = [c[0]!, c[1]!, c[2]!];
  }

  const tilematrixset = f.has('tilematrixset') ? parseTileMatrixSetJson(raw['tilematrixset'], `${what}: 'tilematrixset'`) : undefined;
  const tilesRaw = raw['tiles'];
  if (!isObject(tilesRaw)) f.fail('tiles', 'is required and must be an object of quadkey: [assets]');
  // The quadkey zoom the lookups use (cogeo-mosaic: quadkey_zoom, or minzoom when unset or 0);
  // a quadkey has one digit per level below the grid's first one.
  const qz = quadkeyZoom || minzoom;
  const digits = qz - (tilematrixset?.grid.minzoom ?? 0);
  const tiles = new Map<string, string[]>();
  for (const [key, list] of Object.entries(tilesRaw)) {
    if (!QUADKEY_RE.test(key)) f.fail('tiles', `has an invalid quadkey '${key}' (only digits 0 to 3)`);
    if (key.length !== digits) f.fail('tiles', `has quadkey '${key}' of ${key.length} digits where the quadkey zoom ${qz} needs ${digits}`);
    if (!Array.isArray(list) || !list.every((a) => typeof a === 'string')) f.fail('tiles', `entry '${key}' must be an array of strings`);
    tiles.set(key, list as string[]);
  }

  const doc: MosaicDocument = { mosaicjson: mosaicjson!, version: f.string('version') ?? '1.0.0', minzoom, maxzoom, bounds, center, tiles };
  for (const key of ['name', 'description', 'attribution', 'asset_type', 'asset_prefix', 'data_type'] as const) {
    const v = f.string(key);
    if (v !== undefined) doc[key] = v;
  }
  if (quadkeyZoom !== undefined) doc.quadkey_zoom = quadkeyZoom;
  if (tilematrixset) doc.tilematrixset = tilematrixset;
  if (f.has('colormap')) doc.colormap = parseColormap(raw['colormap'], f);
  if (f.has('layers')) {
    const layers = raw['layers'];
    if (!isObject(layers)) f.fail('layers', 'must be an object');
    doc.layers = layers;
  }
  if (f.has(OVERVIEW_FIELD)) doc.overview = parseOverviewField(raw[OVERVIEW_FIELD], what);
  return doc;
}

/** `{int: [r, g, b, a]}`; keys are read as Python's int() reads them ("01" is 1). */
function parseColormap(v: Json | undefined, f: Fields): Map<number, [number, number, number, number]> {
  if (!isObject(v)) f.fail('colormap', 'must be an object of value: [r, g, b, a]');
  const out = new Map<number, [number, number, number, number]>();
  for (const [key, color] of Object.entries(v)) {
    const trimmed = key.trim();
    if (!/^[+-]?\d+$/.test(trimmed)) f.fail('colormap', `has a key '${key}' that is not an integer`);
    if (!Array.isArray(color) || color.length !== 4 || !color.every((c) => typeof c === 'number' && Number.isInteger(c))) {
      f.fail('colormap', `entry '${key}' must be 4 integers [r, g, b, a]`);
    }
    out.set(Number(trimmed), color as [number, number, number, number]);
  }
  return out;
}

/** The quadkey zoom lookups use: `quadkey_zoom`, or `minzoom` when it is unset (or 0). */
export function quadkeyZoomOf(doc: MosaicDocument): number {
  return doc.quadkey_zoom || doc.minzoom;
}

/**
 * The document as cogeo-mosaic's model writes it (exclude-none), ready for `pyDumps`. `withTiles`
 * false writes `tiles: {}` (the SQLite backend keeps tiles in a table and reads none into the model).
 */
export function mosaicDocumentJson(doc: MosaicDocument, withTiles = true): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of FIELDS) {
    switch (key) {
      case 'bounds':
        out[key] = floats(doc.bounds);
        break;
      case 'center':
        out[key] = [float(doc.center[0]), float(doc.center[1]), doc.center[2]] satisfies Array<PyFloat | number>;
        break;
      case 'tiles':
        out[key] = withTiles ? Object.fromEntries(doc.tiles) : {};
        break;
      case 'tilematrixset':
        if (doc.tilematrixset) out[key] = doc.tilematrixset.dump;
        break;
      case 'colormap':
        if (doc.colormap) out[key] = Object.fromEntries([...doc.colormap].map(([k, c]) => [String(k), c]));
        break;
      default: {
        const v = doc[key];
        if (v !== undefined) out[key] = v;
      }
    }
  }
  return out;
}
