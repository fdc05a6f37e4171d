/**
 * The OGC TMS 1.0 JSON document of a grid (the shape the service spec asks for), built from the
 * TMS 2.0 data TiTiler 0.18.10 uses: `pointOfOrigin` becomes `topLeftCorner`, CRS strings are given as
 * OGC http URIs, and `boundingBox` is the grid's extent when the source declares none.
 */
import type { TileMatrixSet } from './grid.js';

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
      scaleDenominator: m.scaleDenominator,
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
