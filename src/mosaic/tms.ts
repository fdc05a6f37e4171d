/**
 * The `tilematrixset` of a MosaicJSON 0.0.3 document: an OGC TMS 2.0 JSON object (morecantile's
 * model). It is validated, dumped back the way the model writes it (field order, defaults such as
 * `cornerOfOrigin`, unset fields dropped) and turned into a grid: the registered grid of the same
 * definition when there is one (so that "is the request's grid the mosaic's grid" is an identity
 * test, as cogeo-mosaic's model equality is in practice), else a grid built from the document.
 * Mosaics need quadkeys, so the grid must be a quadtree (morecantile's `is_quadtree`).
 */
import { badRequest } from '../errors.js';
import { TileMatrixSet, type GridDefinition, type TileMatrix } from '../tms/grid.js';
import { getTms, tmsIds } from '../tms/registry.js';
import type { SpatialReference } from '../gdal/gdal.js';
import { srsFrom, transformBounds, WGS84 } from '../gdal/crs.js';
// Float fields of the model are written as Python floats (`1.0`), whatever the JSON had.
import { float, floats } from '../pyjson.js';

export interface TileMatrixSetJson {
  /** The model's JSON dump, as `GET /mosaicjson/` writes it. */
  dump: Record<string, unknown>;
  grid: TileMatrixSet;
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const TMS_FIELDS = ['title', 'description', 'keywords', 'id', 'uri', 'orderedAxes', 'crs', 'wellKnownScaleSet', 'boundingBox', 'tileMatrices'] as const;
const MATRIX_FIELDS = [
  'title',
  'description',
  'keywords',
  'id',
  'scaleDenominator',
  'cellSize',
  'cornerOfOrigin',
  'pointOfOrigin',
  'tileWidth',
  'tileHeight',
  'matrixWidth',
  'matrixHeight',
  'variableMatrixWidths',
] as const;

export function parseTileMatrixSetJson(raw: unknown, what: string): TileMatrixSetJson {
  const fail = (msg: string): never => {
    throw badRequest(`Invalid ${what}: ${msg}`);
  };
  if (!isObject(raw)) fail('expected a TileMatrixSet (OGC TMS 2.0) object');
  const tms = raw as Obj;
  const crs = crsText(tms['crs']) ?? fail("'crs' is required (a URI, or an object with 'uri')");
  const matricesRaw = tms['tileMatrices'];
  if (!Array.isArray(matricesRaw) || matricesRaw.length === 0) fail("'tileMatrices' must be a non-empty array");
  const matrices: TileMatrix[] = [];
  const matrixDumps: Obj[] = [];
  (matricesRaw as unknown[]).forEach((m, i) => {
    const where = `tileMatrices[${i}]`;
    if (!isObject(m)) fail(`${where} must be an object`);
    const mo = m as Obj;
    const id = mo['id'];
    if (typeof id !== 'string' || !/^-?[0-9]+$/.test(id)) fail(`${where}.id must be an integer as a string`);
    const num = (k: string): number => {
      const v = mo[k];
      if (typeof v !== 'number' || !Number.isFinite(v)) fail(`${where}.${k} must be a number`);
      return v as number;
    };
    const int = (k: string): number => {
      const v = num(k);
      if (!Number.isInteger(v) || v < 1) fail(`${where}.${k} must be a positive integer`);
      return v;
    };
    const corner = mo['cornerOfOrigin'] ?? 'topLeft';
    if (corner !== 'topLeft') fail(`${where}.cornerOfOrigin '${String(corner)}' is not supported (only topLeft)`);
    const origin = mo['pointOfOrigin'];
    if (!Array.isArray(origin) || origin.length !== 2 || !origin.every((n) => typeof n === 'number' && Number.isFinite(n))) {
      fail(`${where}.pointOfOrigin must be 2 numbers`);
    }
    if (mo['variableMatrixWidths'] !== undefined && mo['variableMatrixWidths'] !== null) fail(`${where}: variable matrix widths cannot form a quadtree`);
    const matrix: TileMatrix = {
      id: id as string,
      scaleDenominator: num('scaleDenominator'),
      cellSize: num('cellSize'),
      pointOfOrigin: origin as [number, number],
      tileWidth: int('tileWidth'),
      tileHeight: int('tileHeight'),
      matrixWidth: int('matrixWidth'),
      matrixHeight: int('matrixHeight'),
    };
    matrices.push(matrix);
    const dump: Obj = {};
    for (const k of MATRIX_FIELDS) {
      if (k === 'cornerOfOrigin') dump[k] = corner;
      else if (k === 'scaleDenominator' || k === 'cellSize') dump[k] = float(matrix[k]);
      else if (k === 'pointOfOrigin') dump[k] = floats(matrix.pointOfOrigin);
      else if (mo[k] !== undefined && mo[k] !== null) dump[k] = mo[k];
    }
    matrixDumps.push(dump);
  });
  matrices.sort((a, b) => Number(a.id) - Number(b.id));
  if (!isQuadtree(matrices)) fail(`${String(tms['id'] ?? 'the grid')} TMS does not support quadtree`);

  const dump: Obj = {};
  for (const k of TMS_FIELDS) {
    if (k === 'tileMatrices') dump[k] = matrixDumps;
    else if (tms[k] !== undefined && tms[k] !== null) dump[k] = tms[k];
  }
  const orderedAxes = Array.isArray(tms['orderedAxes']) ? (tms['orderedAxes'] as unknown[]).map(String) : undefined;
  const def: Omit<GridDefinition, 'srs' | 'invertAxis' | 'xyBbox' | 'geographicBbox' | 'crsUri'> = {
    id: typeof tms['id'] === 'string' ? tms['id'] : 'custom',
    title: typeof tms['title'] === 'string' ? tms['title'] : '',
    crs,
    matrices,
    // The document's own ratio of scale to cell size (0.28 mm screen pixels): its grids are not served as TMS 1.0 documents.
    metersPerUnit: matrices[0] && matrices[0].cellSize > 0 ? (matrices[0].scaleDenominator * 0.28e-3) / matrices[0].cellSize : 1,
    ...(orderedAxes ? { orderedAxes } : {}),
  };
  return { dump, grid: registeredEquivalent(def) ?? buildGrid(def, fail) };
}

function crsText(v: unknown): string | undefined {
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  if (isObject(v) && typeof v['uri'] === 'string') return v['uri'];
  return undefined;
}

/** morecantile's `check_quadkey_support`: square power-of-two matrices doubling at each level. */
function isQuadtree(ms: readonly TileMatrix[]): boolean {
  for (let i = 0; i < ms.length - 1; i++) {
    const m = ms[i]!;
    const w = m.matrixWidth;
    if (w !== m.matrixHeight || (w & (w - 1)) !== 0 || w * 2 !== ms[i + 1]!.matrixWidth) return false;
  }
  return true;
}

function sameMatrix(a: TileMatrix, b: TileMatrix): boolean {
  return (
    a.id === b.id &&
    a.scaleDenominator === b.scaleDenominator &&
    a.cellSize === b.cellSize &&
    a.pointOfOrigin[0] === b.pointOfOrigin[0] &&
    a.pointOfOrigin[1] === b.pointOfOrigin[1] &&
    a.tileWidth === b.tileWidth &&
    a.tileHeight === b.tileHeight &&
    a.matrixWidth === b.matrixWidth &&
    a.matrixHeight === b.matrixHeight
  );
}

/** The registered grid with this exact definition (id, title, CRS and every matrix), if any. */
function registeredEquivalent(def: Pick<GridDefinition, 'id' | 'title' | 'crs' | 'matrices'>): TileMatrixSet | undefined {
  const known = tmsIds.includes(def.id) ? getTms(def.id) : undefined;
  if (!known) return undefined;
  const k = known.def;
  const same =
    k.title === def.title &&
    (k.crs === def.crs || k.crsUri === def.crs) &&
    k.matrices.length === def.matrices.length &&
    k.matrices.every((m, i) => sameMatrix(m, def.matrices[i]!));
  return same ? known : undefined;
}

/** A grid for a definition no registered grid has: CRS read by GDAL, axis order as morecantile reads it. */
function buildGrid(def: Omit<GridDefinition, 'srs' | 'invertAxis' | 'xyBbox' | 'geographicBbox' | 'crsUri'>, fail: (msg: string) => never): TileMatrixSet {
  let srs: SpatialReference;
  try {
    srs = srsFrom(def.crs);
  } catch {
    return fail(`unknown CRS '${def.crs}'`);
  }
  const authority = srs.getAuthorityName(null);
  const code = srs.getAuthorityCode(null);
  const srsText = authority && code ? `${authority}:${code}` : srs.toWKT();
  const invertAxis = def.orderedAxes
    ? ['Y', 'LAT', 'N'].includes(def.orderedAxes[0]!.toUpperCase())
    : srs.EPSGTreatsAsLatLong() || srs.EPSGTreatsAsNorthingEasting();
  const m = def.matrices[0]!;
  const [a, b] = m.pointOfOrigin;
  const [ox, oy] = invertAxis ? [b, a] : [a, b];
  const xyBbox: [number, number, number, number] = [ox, oy - m.cellSize * m.tileHeight * m.matrixHeight, ox + m.cellSize * m.tileWidth * m.matrixWidth, oy];
  const geographicBbox = transformBounds(srsFrom(srsText), srsFrom(WGS84), xyBbox, 21);
  const crsUri = authority && code ? `http://www.opengis.net/def/crs/${authority}/0/${code}` : def.crs;
  return new TileMatrixSet({ ...def, srs: srsText, crsUri, invertAxis, xyBbox, geographicBbox });
}
