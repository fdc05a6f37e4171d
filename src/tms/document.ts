/**
 * The OGC TMS 1.0 JSON document of a grid (the shape the service spec asks for), built from the
 * TMS 2.0 data TiTiler 0.18.10 uses: `pointOfOrigin` becomes `topLeftCorner`, CRS strings are given as
 * OGC http URIs, and `boundingBox` is the grid's extent when the source declares none.
 *
 * TMS 1.0 has no cell size: a reader derives it from `scaleDenominator` (× 0.28 mm ÷ metres per
 * unit). morecantile 5.4.2's own scale denominators do not always agree with its cell sizes
 * (CanadianNAD83_LCC: 50,000,000 at z2, i.e. 14,000 m pixels, where the tiles are cut with 13,229 m;
 * CDB1GlobalGrid and GNOSISGlobalGrid by rounding), so a client that trusted them placed tiles up to
 * 179 px off. The document's denominators are therefore computed from the cell sizes the tiles are
 * cut with, so that any TMS 1.0 reader finds exactly the grid tessera serves.
 */
import type { TileMatrixSet } from './grid.js';

/** OGC's standardized rendering pixel size, in metres. */
const SCREEN_PIXEL_SIZE = 0.28e-3;

/**
 * The scale denominator from which a TMS 1.0 or WMTS reader derives exactly the cell size the
 * tiles of `matrix` are cut with (see above): the grid's own where it does (to the last digits,
 * as TiTiler prints it), else one computed from the cell size.
 */
export function scaleDenominatorOf(tms: TileMatrixSet, matrix: { cellSize: number; scaleDenominator: number }): number {
  const own = matrix.scaleDenominator;
  const derived = (own * SCREEN_PIXEL_SIZE) / tms.def.metersPerUnit;
  if (Math.abs(derived - matrix.cellSize) <= 1e-12 * matrix.cellSize) return own;
  return (matrix.cellSize * tms.def.metersPerUnit) / SCREEN_PIXEL_SIZE;
}

export function tmsDocumentV1(tms: TileMatrixSet): Record<string, unknown> {
  const def = tms.def;
  const [minx, miny, maxx, maxy] = tms.extent;
  const box = def.boundingBox ?? {
    crs: def.crsUri,
    lowerCorner: def.invertAxis ? [miny, minx] : [minx, miny],
    upperCorner: def.invertAxis ? [maxy, maxx] : [maxx, maxy],
  };
  const doc: Record<string, unknown> = { type: 'TileMatrixSetType', title: def.title };
  if (def.abstract !== undefined) doc['abstract'] = def.abstract;
  if (def.keywords !== undefined) doc['keywords'] = def.keywords;
  doc['identifier'] = def.id;
  doc['supportedCRS'] = def.crsUri;
  if (def.wellKnownScaleSet !== undefined) doc['wellKnownScaleSet'] = def.wellKnownScaleSet;
  doc['boundingBox'] = {
    type: 'BoundingBoxType',
    crs: box.crs,
    lowerCorner: box.lowerCorner,
    upperCorner: box.upperCorner,
  };
  doc['tileMatrix'] = def.matrices.map((m) => {
    const entry: Record<string, unknown> = {
      type: 'TileMatrixType',
      identifier: m.id,
      scaleDenominator: scaleDenominatorOf(tms, m),
      topLeftCorner: m.pointOfOrigin,
      tileWidth: m.tileWidth,
      tileHeight: m.tileHeight,
      matrixWidth: m.matrixWidth,
      matrixHeight: m.matrixHeight,
    };
    if (m.variableMatrixWidths) {
      entry['variableMatrixWidths'] = m.variableMatrixWidths.map((v) => ({
        type: 'VariableMatrixWidthType',
        coalesce: v.coalesce,
        minTileRow: v.minTileRow,
        maxTileRow: v.maxTileRow,
      }));
    }
    return entry;
  });
  return doc;
}
