/**
 * Parameters of TiTiler 2.x's OGC API routes (titiler/core/factory.py and dependencies.py 2.4.0):
 * `f` (the answer's format, else the Accept header decides), `crs` of the tileset list
 * (CRSParams), `zooms` of the WMTS document listing every grid (ZoomsParams: `grid::min,max`), and
 * OGC API – Maps' `bbox`, `bbox-crs`, `crs`, `width`, `height` (OGCMapsParams).
 */
import { badRequest } from '../../errors.js';
import { ValidationError } from '../errors.js';
import { TITILER2_FORMATS, formatNamed, type ImageFormat } from '../../image/formats.js';
import { parseUserCrs } from '../../gdal/crs.js';
import { getTms } from '../../tms/registry.js';
import type { BBox } from '../../tms/grid.js';
import { family, int, str, strList, text, list } from './family.js';

const F_DOC = 'Format of the answer (OGC API): `json` or `html` for documents, an image format for `/map`. Default: what the Accept header prefers.';
const CRS_DOC = "CRS (OGC API): of the tileset list's bounding boxes (default longitude/latitude), or of the `/map` image (default the dataset's).";

/** `f` of the OGC documents (landing page, conformance, tilesets). */
export const documentFormat = family('OGC f (document)', { f: { schema: { type: 'string', enum: ['html', 'json'] }, doc: F_DOC } }, (q) =>
  q['f'] === 'html' || q['f'] === 'json' ? q['f'] : undefined,
);

/** TiTiler 2.x's 422 for a value its validators refuse (titiler/core/validation.py): pydantic's `value_error`. */
function invalid(name: string, input: string, what: string): ValidationError {
  return new ValidationError([{ type: 'value_error', loc: ['query', name], msg: `Value error, ${what}`, input, ctx: { error: {} } }]);
}

/** A CRS named by the client, checked (422 when it is not one, as validate_crs); `[…]` around it is taken off. */
function userCrs(raw: string | undefined, name: string): string | undefined {
  if (raw === undefined) return undefined;
  const bare = (raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw).trim();
  try {
    parseUserCrs(bare, name);
  } catch {
    throw invalid(name, raw, 'invalid CRS format');
  }
  return bare;
}

/** CRSParams of the tileset list: the CRS its bounding boxes are given in. */
export const tilesetCrs = family('CRSParams', { crs: { schema: str, doc: CRS_DOC } }, (q): string | undefined => userCrs(text(q, 'crs'), 'crs'));

/** ZoomsParams: `grid::minzoom,maxzoom` (or `*::…` for every grid), the zooms a WMTS layer lists per grid. */
export const gridZooms = family(
  'ZoomsParams',
  { zooms: { schema: strList, doc: 'Zooms of the WMTS layers per grid, as `tileMatrixSetId::minzoom,maxzoom` (`*` for every grid); repeat for several.' } },
  (q): Map<string, { minzoom: number; maxzoom: number }> => {
    const out = new Map<string, { minzoom: number; maxzoom: number }>();
    for (const entry of list(q, 'zooms')) {
      const m = /^([^:]+)::(-?\d+),(-?\d+)(?:,.*)?$/.exec(entry);
      if (!m) throw badRequest(`Invalid zooms '${entry}': expected tileMatrixSetId::minzoom,maxzoom`);
      const id = m[1]!;
      if (id !== '*' && !getTms(id)) throw badRequest(`Invalid zooms '${entry}': unknown tileMatrixSetId ${id}`);
      out.set(id, { minzoom: Number(m[2]), maxzoom: Number(m[3]) });
    }
    return out;
  },
);

export interface MapOptions {
  bbox: BBox | undefined;
  bboxCrs: string | undefined;
  crs: string | undefined;
  width: number | undefined;
  height: number | undefined;
  /** The format `f` names, if any (else Accept, else PNG). */
  format: ImageFormat | undefined;
}

/** A decimal number as TiTiler's bbox check takes it. */
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Largest `/map` image side when the request gives no size: OGCMapsParams' max_size. */
export const MAP_DEFAULT_MAX_SIZE = 1024;

/** OGCMapsParams: the map's area, CRSs, size and format. */
export const mapArea = family(
  'OGCMapsParams',
  {
    bbox: { schema: str, doc: 'Bounding box of the map, as minx,miny,maxx,maxy (or six numbers, the heights left out), in bbox-crs.' },
    'bbox-crs': { schema: str, doc: 'CRS of bbox. Default: longitude/latitude (OGC:CRS84).' },
    crs: { schema: str, doc: CRS_DOC },
    width: { schema: { ...int, exclusiveMinimum: 0 }, doc: 'Output width in pixels.' },
    height: { schema: { ...int, exclusiveMinimum: 0 }, doc: 'Output height in pixels.' },
    f: { schema: { type: 'string', enum: [...TITILER2_FORMATS] }, doc: F_DOC },
  },
  (q): MapOptions => {
    const raw = text(q, 'bbox');
    let bbox: BBox | undefined;
    if (raw !== undefined) {
      const parts = raw.split(',').map((v) => v.trim());
      const numbers = parts.map(Number);
      if (!(parts.length === 4 || parts.length === 6) || parts.some((v) => !NUMBER.test(v)) || !numbers.every(Number.isFinite)) {
        throw invalid('bbox', raw, 'invalid bbox content');
      }
      const [minx = 0, miny = 0, maxx = 0, maxy = 0] = numbers.length === 6 ? [numbers[0], numbers[1], numbers[3], numbers[4]] : numbers;
      if (minx >= maxx || miny >= maxy) throw badRequest(`Invalid bbox '${raw}': expected minx < maxx and miny < maxy`);
      bbox = [minx, miny, maxx, maxy];
    }
    return {
      bbox,
      bboxCrs: userCrs(text(q, 'bbox-crs'), 'bbox-crs'),
      crs: userCrs(text(q, 'crs'), 'crs'),
      width: q['width'] as number | undefined,
      height: q['height'] as number | undefined,
      format: typeof q['f'] === 'string' ? formatNamed(q['f']) : undefined,
    };
  },
);
