/**
 * OGC WMTS 1.0.0 capabilities with every grid as a layer, laid out as TiTiler 2.x's template
 * (titiler/extensions/templates/wmts.xml and titiler/extensions/wmts.py 2.4.0; the mosaic extension
 * writes the same): one `Layer` per grid named `{title}_{grid}_default` (and per render `{title}_{grid}_{render}`), with the dataset's
 * longitude/latitude box and the rows and columns each zoom covers (ogc/tilesets.ts), then every
 * grid's matrices. Scale denominators are those that give the cell size tiles are cut with
 * (tms/document.ts), as in tessera's one-grid document (ogc/wmts.ts), so GDAL, QGIS and OpenLayers
 * place tiles where they are.
 */
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { scaleDenominatorOf } from '../tms/document.js';
import type { TileMatrixLimits } from './tilesets.js';
import { operation, xmlEscape } from './wmts.js';

/** One grid's layer: of the request's query (`default`), or of one of the dataset's renders. */
export interface WmtsGridLayer {
  tms: TileMatrixSet;
  limits: TileMatrixLimits[];
  /** Tile URL with `{TileMatrix}`, `{TileCol}`, `{TileRow}`, without its query. */
  tileUrl: string;
  /** The last piece of the layer's name (`{title}_{grid}_{name}`): a render's name; default `default`. */
  name?: string;
  /** The layer's own tile query (a render's parameters); default the document's. */
  query?: string;
  /** The layer's own longitude/latitude box (a render's `spatial_extent`); default the dataset's. */
  bounds?: BBox;
}

export interface WmtsGridsOptions {
  /** What names the layers (TiTiler: the dataset's URL). */
  title: string;
  /** Absolute URL of this capabilities request. */
  requestUrl: string;
  mediaType: string;
  /** The dataset's longitude/latitude box. */
  bounds: BBox;
  /** The box's numbers as the dataset writes them, where not `num`'s (a STAC item's ints stay ints). */
  boundsText?: readonly string[];
  layers: WmtsGridLayer[];
  /** The tile URLs' query (urlencoded, no `?`). */
  query: string;
  /** Every grid, with the CRS its matrix set names. */
  grids: Array<{ tms: TileMatrixSet; crs: string }>;
  /** Python's text of a float. */
  num: (x: number) => string;
}

function layer(o: WmtsGridsOptions, l: WmtsGridLayer, media: string): string {
  const name = xmlEscape(`${o.title}_${l.tms.id}_${l.name ?? 'default'}`);
  // A render's own box as it names it; the dataset's as it writes it (a STAC item's ints stay ints).
  const [minx, miny, maxx, maxy] = l.bounds ?? o.boundsText ?? o.bounds.map(o.num);
  const limits = l.limits.map(
    (m) => `
                    <TileMatrixLimits>
                    <TileMatrix>${xmlEscape(m.tileMatrix)}</TileMatrix>
                    <MinTileRow>${m.minTileRow}</MinTileRow>
                    <MaxTileRow>${m.maxTileRow}</MaxTileRow>
                    <MinTileCol>${m.minTileCol}</MinTileCol>
                    <MaxTileCol>${m.maxTileCol}</MaxTileCol>
                    </TileMatrixLimits>
                `,
  );
  return `<Layer>
            <ows:Title>${name}</ows:Title>
            <ows:Identifier>${name}</ows:Identifier>
            <ows:WGS84BoundingBox crs="urn:ogc:def:crs:OGC:2:84">
                <ows:LowerCorner>${minx} ${miny}</ows:LowerCorner>
                <ows:UpperCorner>${maxx} ${maxy}</ows:UpperCorner>
            </ows:WGS84BoundingBox>
            <Style isDefault="true">
                <ows:Title>${name}</ows:Title>
                <ows:Identifier>${name}</ows:Identifier>
            </Style>
            <Format>${media}</Format>
            <TileMatrixSetLink>
                <TileMatrixSet>${xmlEscape(l.tms.id)}</TileMatrixSet>
                <TileMatrixSetLimits>
                ${limits.join('')}
                </TileMatrixSetLimits>
            </TileMatrixSetLink>
            <ResourceURL format="${media}" resourceType="tile" template="${xmlEscape(l.tileUrl)}?${xmlEscape(l.query ?? o.query)}" />
        </Layer>`;
}

function matrixSet(g: { tms: TileMatrixSet; crs: string }, num: (x: number) => string): string {
  const matrices = g.tms.def.matrices.map((m) => {
    const origin = m.pointOfOriginText ?? [num(m.pointOfOrigin[0]), num(m.pointOfOrigin[1])];
    return `
            <TileMatrix>
                <ows:Identifier>${xmlEscape(m.id)}</ows:Identifier>
                <ScaleDenominator>${num(scaleDenominatorOf(g.tms, m))}</ScaleDenominator>
                <TopLeftCorner>${origin[0]} ${origin[1]}</TopLeftCorner>
                <TileWidth>${m.tileWidth}</TileWidth>
                <TileHeight>${m.tileHeight}</TileHeight>
                <MatrixWidth>${m.matrixWidth}</MatrixWidth>
                <MatrixHeight>${m.matrixHeight}</MatrixHeight>
            </TileMatrix>
            `;
  });
  return `<TileMatrixSet>
            <ows:Identifier>${xmlEscape(g.tms.id)}</ows:Identifier>
            <ows:SupportedCRS>${xmlEscape(g.crs)}</ows:SupportedCRS>
            ${matrices.join('')}
        </TileMatrixSet>`;
}

export function wmtsGridsCapabilities(o: WmtsGridsOptions): string {
  const href = xmlEscape(o.requestUrl);
  const media = xmlEscape(o.mediaType);
  return `<Capabilities xmlns="http://www.opengis.net/wmts/1.0" xmlns:ows="http://www.opengis.net/ows/1.1" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:gml="http://www.opengis.net/gml" xsi:schemaLocation="http://www.opengis.net/wmts/1.0 http://schemas.opengis.net/wmts/1.0/wmtsGetCapabilities_response.xsd" version="1.0.0">
    <ows:ServiceIdentification>
        <ows:Title>Web Map Tile Service by tessera</ows:Title>
        <ows:ServiceType>OGC WMTS</ows:ServiceType>
        <ows:ServiceTypeVersion>1.0.0</ows:ServiceTypeVersion>
    </ows:ServiceIdentification>
    <ows:ServiceProvider>
        <ows:ProviderName>tessera</ows:ProviderName>
        <ows:ServiceContact/>
    </ows:ServiceProvider>
    <ows:OperationsMetadata>
${operation('GetCapabilities', href)}
${operation('GetTile', href)}
    </ows:OperationsMetadata>
    <Contents>
    ${o.layers.map((l) => layer(o, l, media)).join('')}
    ${o.grids.map((g) => matrixSet(g, o.num)).join('')}
    </Contents>
    <ServiceMetadataURL xlink:href="${href}" />
</Capabilities>`;
}
