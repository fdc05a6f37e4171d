/**
 * The low-zoom overview a MosaicJSON document may name (`tessera mosaic overview` writes it): one
 * COG in EPSG:3857 holding the mosaic as tessera composes it below the document's minzoom, so that
 * a tile down there is one read instead of up to every asset's (issue 23).
 *
 *   "tessera:overview": {"href": "https://…/overview.tif", "maxzoom": 9, "pixel_selection": "first"}
 *
 * `href` is where the COG is (an absolute URL, or a local path where the settings allow local
 * files: the same policies as any asset); `maxzoom` the zoom it was rendered at (its full
 * resolution); `pixel_selection` the method its pixels were picked with. The name carries a prefix
 * so that it cannot clash with a future MosaicJSON field, and cogeo-mosaic's model ignores fields it
 * does not know (TiTiler serves such a document as if the field were not there).
 */
import { badRequest } from '../errors.js';
import { PIXEL_SELECTION_METHODS, type PixelSelection } from './methods.js';

/** Resampling of the COG's internal overviews (GDAL's names, as the COG driver takes them). */
export const OVERVIEW_RESAMPLINGS = ['nearest', 'average', 'bilinear', 'cubic', 'cubicspline', 'lanczos', 'mode', 'rms'] as const;
export type OverviewResampling = (typeof OVERVIEW_RESAMPLINGS)[number];

/** The document field naming the overview. */
export const OVERVIEW_FIELD = 'tessera:overview';

export interface MosaicOverview {
  href: string;
  maxzoom: number;
  pixelSelection: PixelSelection;
}

/**
 * The field, validated; a malformed one is a 400 naming it rather than ignored, because ignoring it
 * would leave the author wondering why low zooms stay slow.
 */
export function parseOverviewField(raw: unknown, what: string): MosaicOverview {
  const fail = (expected: string): never => {
    throw badRequest(`Invalid ${what}: '${OVERVIEW_FIELD}' ${expected}`);
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('must be an object {"href", "maxzoom", "pixel_selection"}');
  const o = raw as Record<string, unknown>;
  const href = o['href'];
  if (typeof href !== 'string' || href.trim() === '') fail("needs 'href': the overview COG's URL");
  const maxzoom = o['maxzoom'];
  if (typeof maxzoom !== 'number' || !Number.isInteger(maxzoom) || maxzoom < 0 || maxzoom > 30) fail("needs 'maxzoom': an integer from 0 to 30");
  const selection = o['pixel_selection'] ?? 'first';
  if (typeof selection !== 'string' || !(PIXEL_SELECTION_METHODS as readonly string[]).includes(selection)) {
    fail(`has an unknown 'pixel_selection' (one of ${PIXEL_SELECTION_METHODS.join(', ')})`);
  }
  return { href: (href as string).trim(), maxzoom: maxzoom as number, pixelSelection: selection as PixelSelection };
}

/** The field as written into a document. */
export function overviewFieldJson(overview: MosaicOverview): Record<string, unknown> {
  return { href: overview.href, maxzoom: overview.maxzoom, pixel_selection: overview.pixelSelection };
}
