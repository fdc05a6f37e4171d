/**
 * What to read of a dataset: the layer families. BidxExprParams (a COG: `bidx`, an expression over
 * `b1 … bn`), AssetsBidxExprParams (a STAC item: assets, per-asset bands, an expression over
 * `asset_b1 …`; required or optional), the mosaic's (both, for mosaics of COGs or of STAC items) with
 * its pixel selection, AssetsParams (STAC info) and AssetsBidxParams with `asset_expression`
 * (/asset_statistics). An `assets` value may carry TiTiler 2.x's per-asset options
 * (`name|bidx=1,2|expression=b1*2|bands=red,green`, titiler.core 2.4.0's `_parse_asset`); 0.18 has no
 * asset named with a `|`, so both generations' clients are answered whatever the setting, and `:all:`
 * (2.x) names every asset where 2.4.0 takes it (info and statistics).
 */
import { badRequest } from '../../errors.js';
import { ValidationError } from '../errors.js';
import { expressionBands, parseExpression, type Expression } from '../../image/expression.js';
import type { CogLayerOptions } from '../../readers/cog.js';
import type { StacLayerOptions } from '../../readers/stac.js';
import type { MosaicLayer } from '../../readers/mosaic.js';
import { PIXEL_SELECTION_METHODS, type PixelSelection } from '../../mosaic/methods.js';
import { bool, family, intList, list, str, strList, text, type Param, type Query } from './family.js';

const DOCS = {
  bidx: 'Band indexes to read (1-based); repeat for several bands.',
  expression:
    'Band math over the bands (b1, b2 … for a COG; asset_b1 … for a STAC item, or, as TiTiler 2.x, b1, b2 … numbered across the assets named, in their order), `;` between output bands.',
  assets:
    "Names of the assets to read; repeat for several. TiTiler 2.x options may follow a name: `name|bidx=1,2`, `name|expression=b1*2`, `name|bands=red,green` (band names from the asset's STAC `bands`/`eo:bands`).",
  asset_bidx: 'Band indexes per asset, as `asset|1,2,3`; repeat for several assets.',
  asset_as_band: 'Name the bands after their assets (one band per asset) instead of asset_b1 ….',
  asset_expression: 'Band math per asset, as `asset|b1/b2`.',
};

const bidx: Param = { schema: intList, doc: DOCS.bidx };
const expression: Param = { schema: str, doc: DOCS.expression };
const assets: Param = { schema: strList, doc: DOCS.assets };
const assetBidx: Param = { schema: strList, doc: DOCS.asset_bidx };

/** BidxExprParams: an expression must name bands as `b{i}` (400 before anything is read). */
export const bandLayer = family('BidxExprParams', { bidx, expression }, (q): CogLayerOptions => {
  const expr = text(q, 'expression');
  if (expr) expressionBands(parseExpression(expr));
  const indexes = (q['bidx'] as number[] | undefined)?.filter((i) => Number.isInteger(i));
  return { ...(expr ? { expression: expr } : {}), ...(indexes && indexes.length > 0 ? { bidx: indexes } : {}) };
});

/** TiTiler 2.x's options of one asset in `assets` (`name|key=value|…`). */
interface AssetEntryOptions {
  indexes?: number[];
  expression?: Expression;
  bands?: string[];
  /** How rio-tiler 9 keys the asset's answer in /asset_statistics (`name|indexes=[1,2]&expression=b1*2`). */
  label: string;
}

/** Python's `str()` of a list of ints or strings, without spaces (rio-tiler 9's `_dict_to_str`). */
function pyText(values: readonly (number | string)[]): string {
  return `[${values.map((v) => (typeof v === 'number' ? String(v) : v.includes("'") ? `"${v}"` : `'${v}'`)).join(',')}]`.replace(/ /g, '');
}

/** One `assets` value: a name, and its 2.x options where it has any. */
interface AssetEntry {
  name: string;
  options?: AssetEntryOptions;
}

/**
 * `assets` values split into names and 2.x per-asset options (400 for an option without `=` or a bad
 * index): `options` by asset (the last given wins), and `entries` every value in order.
 */
function parseAssetEntries(values: readonly string[]): { names: string[]; options: Map<string, AssetEntryOptions>; entries: AssetEntry[] } {
  const names: string[] = [];
  const options = new Map<string, AssetEntryOptions>();
  const entries: AssetEntry[] = [];
  for (const value of values) {
    const bar = value.indexOf('|');
    if (bar < 0) {
      names.push(value);
      entries.push({ name: value });
      continue;
    }
    const name = value.slice(0, bar);
    const opts: AssetEntryOptions = { label: name };
    const shown = new Map<string, string>();
    for (const option of value.slice(bar + 1).split('|')) {
      const eq = option.indexOf('=');
      if (eq < 0) throw badRequest(`Invalid asset option '${option}' in '${value}': expected key=value (bidx, expression or bands)`);
      const key = option.slice(0, eq);
      const text = option.slice(eq + 1);
      if (key === 'bidx') {
        const parts = text.split(',').map((s) => s.trim());
        if (!parts.every((s) => /^[+]?\d+$/.test(s) && Number(s) > 0)) {
          throw badRequest(`Invalid bidx '${text}' in '${value}': expected 1-based band indexes, e.g. bidx=1,2`);
        }
        opts.indexes = parts.map(Number);
        shown.set('indexes', pyText(opts.indexes));
      } else if (key === 'expression') {
        if (text !== '') opts.expression = parseExpression(text);
        shown.set('expression', text.replace(/ /g, ''));
      } else if (key === 'bands') {
        if (text !== '') opts.bands = text.split(',');
        shown.set('bands', pyText(text.split(',')));
      }
      // TiTiler 2.x ignores other keys.
    }
    opts.label = `${name}|${[...shown].map(([k, v]) => `${k}=${v}`).join('&')}`;
    names.push(name);
    options.set(name, opts);
    entries.push({ name, options: opts });
  }
  return { names, options, entries };
}

/** `asset|1,2,3` entries, by asset. */
function parseAssetBidx(q: Query): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const entry of (q['asset_bidx'] as string[] | undefined) ?? []) {
    const bar = entry.indexOf('|');
    const name = bar > 0 ? entry.slice(0, bar) : '';
    const indexes =
      bar > 0
        ? entry
            .slice(bar + 1)
            .split(',')
            .map((s) => s.trim())
        : [];
    if (!name || indexes.length === 0 || !indexes.every((s) => /^\d+$/.test(s) && Number(s) > 0)) {
      throw badRequest(`Invalid asset_bidx '${entry}': expected 'asset|1,2,3' with 1-based band indexes`);
    }
    out.set(name, indexes.map(Number));
  }
  return out;
}

function parseBidx(q: Query): number[] | undefined {
  const indexes = q['bidx'] as number[] | undefined;
  if (indexes?.some((b) => b < 1)) throw badRequest('Invalid bidx: band indexes start at 1');
  return indexes && indexes.length > 0 ? indexes : undefined;
}

const NO_LAYER = 'assets must be defined either via expression or assets options.';

/** The assets, expression and band choices of a STAC item; `required` applies TiTiler's "assets or expression" rule. */
function stacLayerOf(q: Query, required: boolean): StacLayerOptions {
  const given = list(q, 'assets');
  const expr = text(q, 'expression');
  if (required && !expr && given.length === 0) throw badRequest(NO_LAYER);
  const indexes = parseBidx(q);
  const { names, options } = parseAssetEntries(given);
  const assetBidx = parseAssetBidx(q);
  const assetExpressions = new Map<string, Expression>();
  const assetBands = new Map<string, string[]>();
  for (const [name, o] of options) {
    if (o.indexes) assetBidx.set(name, o.indexes);
    if (o.expression) assetExpressions.set(name, o.expression);
    if (o.bands) assetBands.set(name, o.bands);
  }
  // `:all:` (2.x): every asset, where 2.4.0 expands it (statistics); the tile verbs take it as a name, as 2.4.0.
  const all = !required && names.length === 1 && names[0] === ALL;
  return {
    ...(names.length > 0 && !all ? { assets: names } : {}),
    ...(expr ? { expression: expr } : {}),
    assetAsBand: q['asset_as_band'] === true,
    assetBidx,
    assetExpressions,
    assetBands,
    // Only 2.x clients send per-asset options or `:all:`: rio-tiler 9 names their bands `b1 … bn`.
    ...(options.size > 0 || all ? { positional: true } : {}),
    ...(indexes ? { bidx: indexes } : {}),
  };
}

/** TiTiler 2.x's name for every asset of the item. */
const ALL = ':all:';

const stacLayerParams = { assets, expression, asset_as_band: { schema: bool, doc: DOCS.asset_as_band }, asset_bidx: assetBidx, bidx };

/** AssetsBidxExprParams: assets or an expression naming them is required (400). */
export const stacLayer = family('AssetsBidxExprParams', stacLayerParams, (q) => stacLayerOf(q, true));

/** AssetsBidxExprParamsOptional (statistics): without assets or expression, the reader takes every asset. */
export const optionalStacLayer = family('AssetsBidxExprParamsOptional', stacLayerParams, (q) => stacLayerOf(q, false));

/**
 * TiTiler checks the "assets or expression" rule while parsing dependencies, before FastAPI reports
 * other invalid parameters (even a missing `url`): routes that carry the rule run this first.
 */
export async function requireLayerFirst(request: { query: unknown }): Promise<void> {
  const q = (request.query ?? {}) as Query;
  if (!given(q['assets']) && !given(q['expression'])) throw badRequest(NO_LAYER);
}

/**
 * TiTiler 2.x's AssetsParams: `assets` is a required query parameter of every read of an item (an
 * expression does not stand in for it), FastAPI's 422 when it is missing; checked first, as there.
 */
export async function requireAssets(request: { query: unknown }): Promise<void> {
  const q = (request.query ?? {}) as Query;
  if (!given(q['assets'])) throw new ValidationError([{ type: 'missing', loc: ['query', 'assets'], msg: 'Field required', input: null }]);
}

/** A query value that says something (not absent, not empty). */
function given(v: unknown): boolean {
  return Array.isArray(v) ? v.some((x) => x !== '') : typeof v === 'string' && v !== '';
}

/** The mosaic's layer: BidxExprParams over each COG, or the STAC layer over each item. */
export const mosaicLayer = family('MosaicLayer', stacLayerParams, (q): MosaicLayer => {
  const l = stacLayerOf(q, false);
  return {
    ...(l.bidx ? { bidx: l.bidx } : {}),
    ...(l.expression ? { expression: l.expression } : {}),
    stac: {
      ...(l.assets ? { assets: l.assets } : {}),
      assetAsBand: l.assetAsBand,
      assetBidx: l.assetBidx,
      assetExpressions: l.assetExpressions,
      assetBands: l.assetBands,
      ...(l.positional ? { positional: true } : {}),
    },
  };
});

/** The mosaic's pixel selection (TiTiler's `pixel_selection_dependency`). */
export const pixelSelection = family(
  'PixelSelectionParams',
  {
    pixel_selection: {
      schema: { type: 'string', enum: [...PIXEL_SELECTION_METHODS], default: 'first' },
      doc: 'How a mosaic picks each pixel among overlapping assets. Default: first.',
    },
  },
  (q): PixelSelection => (q['pixel_selection'] as PixelSelection | undefined) ?? 'first',
);

/** AssetsParams (STAC info): the assets to describe, every one by default. */
export const assetNames = family('AssetsParams', { assets }, (q): string[] | undefined => {
  const names = list(q, 'assets');
  return names.length > 0 && !(names.length === 1 && names[0] === ALL) ? names : undefined;
});

/** One answer of /asset_statistics: an asset, and the 2.x options it was given with (if any). */
export interface AssetStatisticsEntry {
  name: string;
  /** 2.x: how rio-tiler 9 keys the answer (`name|indexes=[1]`); the asset's name without options. */
  label?: string;
  indexes?: number[];
  expression?: Expression;
  /** 2.x: band names (STAC `bands`/`eo:bands`). */
  bands?: string[];
}

/** AssetsBidxParams with `asset_expression` (/asset_statistics): each asset its own bands or expression. */
export interface AssetStatisticsLayer {
  /**
   * The answers asked, in order, one per distinct `assets` value (2.x reads an asset given twice with
   * different options twice); undefined for every asset of the item.
   */
  entries: AssetStatisticsEntry[] | undefined;
  bidx: number[] | undefined;
  /** 0.18's `asset_bidx` and `asset_expression`, by asset. */
  assetBidx: Map<string, number[]>;
  expressions: Map<string, Expression>;
}

export const assetStatisticsLayer = family(
  'AssetsBidxParams',
  { assets, bidx, asset_bidx: assetBidx, asset_expression: { schema: strList, doc: DOCS.asset_expression } },
  (q): AssetStatisticsLayer => {
    const expressions = new Map<string, Expression>();
    for (const entry of (q['asset_expression'] as string[] | undefined) ?? []) {
      const bar = entry.indexOf('|');
      if (bar <= 0 || bar === entry.length - 1) {
        throw badRequest(`Invalid asset_expression '${entry}': expected 'asset|expression', e.g. 'data|b1*b2+b3'`);
      }
      expressions.set(entry.slice(0, bar), parseExpression(entry.slice(bar + 1)));
    }
    const { entries } = parseAssetEntries(list(q, 'assets').filter((n) => n !== ALL));
    // One answer per key, as rio-tiler 9's dict: the same asset with the same options (or none) once.
    const byKey = new Map<string, AssetStatisticsEntry>();
    for (const { name, options: o } of entries) {
      const key = o?.label ?? name;
      if (byKey.has(key)) continue;
      byKey.set(
        key,
        o
          ? {
              name,
              label: o.label,
              ...(o.indexes ? { indexes: o.indexes } : {}),
              ...(o.expression ? { expression: o.expression } : {}),
              ...(o.bands ? { bands: o.bands } : {}),
            }
          : { name },
      );
    }
    return { entries: byKey.size > 0 ? [...byKey.values()] : undefined, bidx: parseBidx(q), assetBidx: parseAssetBidx(q), expressions };
  },
);
