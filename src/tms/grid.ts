/**
 * A TileMatrixSet and its math: tile bounds, the tile holding a point, zoom for a resolution.
 * Pure arithmetic over the grid definition (no CRS library); mirrors morecantile 5 so that tile
 * boundaries are the same to the last bit as TiTiler's.
 */
import { badRequest } from '../errors.js';

export interface VariableMatrixWidth {
  coalesce: number;
  minTileRow: number;
  maxTileRow: number;
}

export interface TileMatrix {
  id: string;
  scaleDenominator: number;
  cellSize: number;
  /** In the CRS's own axis order (lat/lon for EPSG:4326), as the OGC document gives it. */
  pointOfOrigin: [number, number];
  /** Python repr of the origin values (TiTiler prints them verbatim in WMTS). */
  pointOfOriginText?: [string, string];
  tileWidth: number;
  tileHeight: number;
  matrixWidth: number;
  matrixHeight: number;
  variableMatrixWidths?: VariableMatrixWidth[];
}

export interface GridDefinition {
  id: string;
  title: string;
  abstract?: string;
  keywords?: string[];
  /** The CRS string of the source document (URI or URN). */
  crs: string;
  /** The CRS as an OGC http URI. */
  crsUri: string;
  /** The CRS in a form GDAL's OSR accepts (`EPSG:3857`, `OGC:CRS84`). */
  srs: string;
  orderedAxes?: string[];
  /** True when the CRS's first axis is northing/latitude. */
  invertAxis: boolean;
  wellKnownScaleSet?: string;
  /** Declared bounding box of a TMS 1.0 source, in CRS axis order. */
  boundingBox?: { crs: string; lowerCorner: [number, number]; upperCorner: [number, number] };
  /** Metres per CRS unit, as morecantile reckons it (a TMS 1.0 reader derives cell sizes with it). */
  metersPerUnit: number;
  /** Grid extent in x/y order, computed by morecantile. */
  xyBbox: [number, number, number, number];
  /** Grid extent in WGS84 lon/lat, computed by morecantile. */
  geographicBbox: [number, number, number, number];
  matrices: TileMatrix[];
}

export interface Tile {
  x: number;
  y: number;
  z: number;
}

/** [minx, miny, maxx, maxy] */
export type BBox = [number, number, number, number];

/** Strict overlap of two boxes (touching edges do not count), in one CRS. */
export function bboxesIntersect(a: BBox, b: BBox): boolean {
  return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

class InvalidZoomError extends Error {}

export class TileMatrixSet {
  readonly id: string;
  readonly minzoom: number;
  readonly maxzoom: number;
  readonly isVariable: boolean;
  private readonly byZoom = new Map<number, TileMatrix>();

  constructor(readonly def: GridDefinition) {
    this.id = def.id;
    for (const m of def.matrices) this.byZoom.set(Number(m.id), m);
    const first = def.matrices[0];
    const last = def.matrices[def.matrices.length - 1];
    if (!first || !last) throw new Error(`grid ${def.id} has no matrices`);
    this.minzoom = Number(first.id);
    this.maxzoom = Number(last.id);
    this.isVariable = def.matrices.some((m) => m.variableMatrixWidths !== undefined);
  }

  get title(): string {
    return this.def.title;
  }

  get srs(): string {
    return this.def.srs;
  }

  get tileWidth(): number {
    return this.def.matrices[0]!.tileWidth;
  }

  /** The matrix of a zoom level; deeper levels of a regular grid are extrapolated as morecantile does. */
  matrix(zoom: number): TileMatrix {
    const found = this.byZoom.get(zoom);
    if (found) return found;
    if (this.isVariable || zoom < this.minzoom) {
      throw new InvalidZoomError(`TileMatrix not found for level: ${zoom}`);
    }
    const ms = this.def.matrices;
    const ratios = new Set<number>();
    for (let i = 1; i < ms.length; i++) {
      ratios.add(Math.round((ms[i]!.scaleDenominator / ms[i - 1]!.scaleDenominator) * 100) / 100);
    }
    if (ratios.size !== 1) throw new InvalidZoomError(`TileMatrix not found for level: ${zoom}`);
    const factor = 1 / [...ratios][0]!;
    let m = ms[ms.length - 1]!;
    while (Number(m.id) < zoom) {
      m = {
        id: String(Number(m.id) + 1),
        scaleDenominator: m.scaleDenominator / factor,
        cellSize: m.cellSize / factor,
        pointOfOrigin: m.pointOfOrigin,
        tileWidth: m.tileWidth,
        tileHeight: m.tileHeight,
        matrixWidth: Math.trunc(m.matrixWidth * factor),
        matrixHeight: Math.trunc(m.matrixHeight * factor),
      };
    }
    return m;
  }

  /** Origin of a matrix in x/y order. */
  private origin(m: TileMatrix): [number, number] {
    const [a, b] = m.pointOfOrigin;
    return this.def.invertAxis ? [b, a] : [a, b];
  }

  private coalesce(m: TileMatrix, row: number): number {
    if (!m.variableMatrixWidths) return 1;
    for (const v of m.variableMatrixWidths) if (row >= v.minTileRow && row <= v.maxTileRow) return v.coalesce;
    return 1;
  }

  /** Bounds of a tile in the grid's CRS, x/y order. */
  xyBounds(t: Tile): BBox {
    const m = this.matrix(t.z);
    const [ox, oy] = this.origin(m);
    const cf = this.coalesce(m, t.y);
    const spanX = m.cellSize * cf * m.tileWidth;
    const col = Math.floor(t.x / cf);
    const left = ox + col * spanX;
    const right = ox + (col + 1) * spanX;
    const top = oy - t.y * m.cellSize * m.tileHeight;
    const bottom = oy - (t.y + 1) * m.cellSize * m.tileHeight;
    return [left, bottom, right, top];
  }

  /** The tile holding a point given in the grid's CRS (x/y order), clamped to the matrix. */
  tileAt(x: number, y: number, zoom: number, ignoreCoalescence = true): Tile {
    const m = this.matrix(zoom);
    const [ox, oy] = this.origin(m);
    let tx = Number.isFinite(x) ? Math.floor((x - ox) / (m.cellSize * m.tileWidth)) : 0;
    let ty = Number.isFinite(y) ? Math.floor((oy - y) / (m.cellSize * m.tileHeight)) : 0;
    ty = Math.min(Math.max(ty, 0), m.matrixHeight - 1);
    tx = Math.min(Math.max(tx, 0), m.matrixWidth - 1);
    if (!ignoreCoalescence) {
      const cf = this.coalesce(m, ty);
      if (cf !== 1 && tx % cf) tx -= tx % cf;
    }
    return { x: tx, y: ty, z: zoom };
  }

  isValid(t: Tile): boolean {
    if (t.z < this.minzoom) return false;
    let m: TileMatrix;
    try {
      m = this.matrix(t.z);
    } catch {
      return false;
    }
    return t.x >= 0 && t.x < m.matrixWidth && t.y >= 0 && t.y < m.matrixHeight;
  }

  /** morecantile's zoom_for_res with the "auto" strategy (GDAL's COG driver rule). */
  zoomForResolution(res: number, minZ = this.minzoom, maxZ = this.maxzoom): number {
    let zoom = minZ;
    let cell = this.matrix(zoom).cellSize;
    for (zoom = minZ; zoom <= maxZ; zoom++) {
      cell = this.matrix(zoom).cellSize;
      if (res > cell || Math.abs(res - cell) / cell <= 1e-8) break;
    }
    if (zoom > maxZ) zoom = maxZ; // Python's loop variable stays at the last value
    if (zoom > 0 && Math.abs(res - cell) / cell > 1e-8) {
      const below = Math.max(zoom - 1, minZ);
      if (this.matrix(below).cellSize / res < res / cell) zoom = below;
    }
    return zoom;
  }

  /** Extent of the whole grid at its first matrix, in x/y order. */
  get extent(): BBox {
    const m = this.def.matrices[0]!;
    const [ox, oy] = this.origin(m);
    return [ox, oy - m.cellSize * m.tileHeight * m.matrixHeight, ox + m.cellSize * m.tileWidth * m.matrixWidth, oy];
  }
}

/** Deepest zoom tessera serves in any grid (morecantile extrapolates quadtree grids without end). */
const MAX_ZOOM = 30;

/**
 * A tile the grid does not have is the client's mistake: checked before any work, so that no
 * index (2^64, 1e12) ever sizes a loop or a coordinate transform.
 */
export function checkTile(tms: TileMatrixSet, x: number, y: number, z: number): void {
  if (!Number.isSafeInteger(x) || !Number.isSafeInteger(y) || !Number.isSafeInteger(z) || z > MAX_ZOOM || !tms.isValid({ x, y, z })) {
    throw badRequest(`Tile(x=${x}, y=${y}, z=${z}) is not a tile of ${tms.id}`);
  }
}
