/**
 * A search's `renders` (titiler-pgstac 3.2.0's `Metadata.defaults_params`, adapted for TiTiler 2 by
 * titiler.extensions' `_adapt_render_for_v2`): its metadata's `defaults`, named sets of tile
 * parameters, as query values — `rescale` pairs as `"min,max"`, a `colormap` object as JSON text,
 * `assets` a list, `asset_bidx`/`asset_expression` folded into the assets' `|` options. TileJSON
 * lists them as `raster_layers`.
 */
import { PyFloat, pyFloatRepr } from '../pyjson.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);
}

/** Python's `str()` of a JSON value read by pyLoads (numbers only matter here). */
function pyStr(v: unknown): string {
  if (v instanceof PyFloat) return pyFloatRepr(v.value);
  return String(v);
}

/** Python's `json.dumps` with its default separators (`, ` and `: `). */
function pyJsonSpaced(v: unknown): string {
  if (v instanceof PyFloat) return Number.isFinite(v.value) ? pyFloatRepr(v.value) : v.value > 0 ? 'Infinity' : v.value < 0 ? '-Infinity' : 'NaN';
  if (Array.isArray(v)) return `[${v.map(pyJsonSpaced).join(', ')}]`;
  if (isObject(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pyJsonSpaced(x)}`)
      .join(', ')}}`;
  if (typeof v === 'string') return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (v === null || v === undefined) return 'null';
  return String(v);
}

const sequence = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

/** titiler-pgstac's `Metadata.defaults_params`: the metadata's `defaults` as query values (the register route's layer links). */
export function defaultsParams(metadata: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const defaults = metadata['defaults'];
  if (!isObject(defaults)) return {};
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, given] of Object.entries(defaults)) {
    if (!isObject(given)) continue;
    const values: Record<string, unknown> = { ...given };
    const rescale = values['rescale'];
    if (rescale !== undefined) {
      delete values['rescale'];
      if (rescale) values['rescale'] = sequence(rescale).map((r) => (typeof r === 'string' ? r : sequence(r).map(pyStr).join(',')));
    }
    const colormap = values['colormap'];
    if (colormap !== undefined) {
      delete values['colormap'];
      if (colormap) values['colormap'] = typeof colormap === 'string' ? colormap : pyJsonSpaced(colormap);
    }
    for (const key of ['assets', 'asset_bidx']) {
      const v = values[key];
      if (v === undefined) continue;
      delete values[key];
      if (v) values[key] = typeof v === 'string' ? [v] : v;
    }
    out[name] = values;
  }
  return out;
}

/** The renders of a search (TileJSON's `raster_layers`): defaultsParams adapted for TiTiler 2, per-asset options in the asset's name. */
export function searchRenders(metadata: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, params] of Object.entries(defaultsParams(metadata))) {
    const values = { ...params };
    const assets = values['assets'];
    if (assets) {
      const options = new Map<string, string[]>(sequence(assets).map((a) => [String(a), []]));
      for (const [key, option] of [
        ['asset_bidx', 'bidx'],
        ['asset_expression', 'expression'],
      ] as const) {
        const entries = values[key];
        delete values[key];
        if (!entries) continue;
        for (const entry of sequence(entries)) {
          const [asset, value] = String(entry).split('|');
          if (asset !== undefined && value !== undefined) options.get(asset)?.push(`${option}=${value}`);
        }
      }
      values['assets'] = [...options].map(([asset, opts]) => (opts.length > 0 ? `${asset}|${opts.join('|')}` : asset));
    }
    out[name] = values;
  }
  return out;
}
