/**
 * OGC WMTS 1.0.0 capabilities (RESTful), laid out as TiTiler 0.18.10's template so GDAL's WMTS
 * driver, QGIS and ArcMap read it alike.
 */
import type { BBox, TileMatrixSet } from '../tms/grid.js';
import { scaleDenominatorOf } from '../tms/document.js';

export interface WmtsOptions {
  title: string;
  layerName: string;
  /** Absolute URL of this capabilities request (GetCapabilities/GetTile hrefs). */
  requestUrl: string;
  /** Tile URL template with {TileMatrix}/{TileCol}/{TileRow}. */
  tileTemplate: string;
  mediaType: string;
  tms: TileMatrixSet;
  /** The CRS text for ows:SupportedCRS (empty for the mosaic quirk TiTiler 0.18 has; we always give it). */
  supportedCrs: string;
  bounds: BBox;
  minzoom: number;
  maxzoom: number;
  /** Python's text of a float, for numbers TiTiler prints with str(). */
  num: (x: number) => string;
}

/** Text or an attribute value as XML writes it (the entities Python's xml escaping uses). */
export function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');
}

/** One `ows:Operation` of the capabilities' OperationsMetadata, RESTful GET at `href`. */
export function operation(name: string, href: string): string {
  return `        <ows:Operation name="${name}">
            <ows:DCP>
                <ows:HTTP>
                    <ows:Get xlink:href="${href}">
                        <ows:Constraint name="GetEncoding">
                            <ows:AllowedValues>
                                <ows:Value>RESTful</ows:Value>
                            </ows:AllowedValues>
                        </ows:Constraint>
                    </ows:Get>
                </ows:HTTP>
            </ows:DCP>
        </ows:Operation>`;
}

export function wmtsCapabilities(o: WmtsOptions): string {
  const title = xmlEscape(o.title);
  const href = xmlEscape(o.requestUrl);
  const media = xmlEscape(o.mediaType);
  const matrices: string[] = [];
  for (let z = o.minzoom; z <= o.maxzoom; z++) {
    const m = o.tms.matrix(z);
    const origin = m.pointOfOriginText ?? [o.num(m.pointOfOrigin[0]), o.num(m.pointOfOrigin[1])];
    matrices.push(`            
                        <TileMatrix>
                            <ows:Identifier>${xmlEscape(m.id)}</ows:Identifier>
                            <ScaleDenominator>${o.num(scaleDenominatorOf(o.tms, m))}</ScaleDenominator>
                            <TopLeftCorner>${origin[0]} ${origin[1]}</TopLeftCorner>
                            <TileWidth>${m.tileWidth}</TileWidth>
                            <TileHeight>${m.tileHeight}</TileHeight>
                            <MatrixWidth>${m.matrixWidth}</MatrixWidth>
                            <MatrixHeight>${m.matrixHeight}</MatrixHeight>
                        </TileMatrix>
            `);
  }
  const [minx, miny, maxx, maxy] = o.bounds;
  return `<Capabilities xmlns="http://www.opengis.net/wmts/1.0" xmlns:ows="http://www.opengis.net/ows/1.1" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:gml="http://www.opengis.net/gml" xsi:schemaLocation="http://www.opengis.net/wmts/1.0 http://schemas.opengis.net/wmts/1.0/wmtsGetCapabilities_response.xsd" version="1.0.0">
    <ows:ServiceIdentification>
        <ows:Title>${title}</ows:Title>
        <ows:ServiceType>OGC WMTS</ows:ServiceType>
        <ows:ServiceTypeVersion>1.0.0</ows:ServiceTypeVersion>
    </ows:ServiceIdentification>
    <ows:OperationsMetadata>
${operation('GetCapabilities', href)}
${operation('GetTile', href)}
    </ows:OperationsMetadata>
    <Contents>
        <Layer>
            <ows:Title>${title}</ows:Title>
            <ows:Identifier>${xmlEscape(o.layerName)}</ows:Identifier>
            <ows:Abstract>${title}</ows:Abstract>
            <ows:WGS84BoundingBox crs="urn:ogc:def:crs:OGC:2:84">
                <ows:LowerCorner>${o.num(minx)} ${o.num(miny)}</ows:LowerCorner>
                <ows:UpperCorner>${o.num(maxx)} ${o.num(maxy)}</ows:UpperCorner>
            </ows:WGS84BoundingBox>
            <Style isDefault="true">
                <ows:Identifier>default</ows:Identifier>
            </Style>
            <Format>${media}</Format>
            <TileMatrixSetLink>
                <TileMatrixSet>${xmlEscape(o.tms.id)}</TileMatrixSet>
            </TileMatrixSetLink>
            <ResourceURL format="${media}" resourceType="tile" template="${xmlEscape(o.tileTemplate)}" />
        </Layer>
        <TileMatrixSet>
            <ows:Identifier>${xmlEscape(o.tms.id)}</ows:Identifier>
            <ows:SupportedCRS>${xmlEscape(o.supportedCrs)}</ows:SupportedCRS>
${matrices.join('\n')}
        </TileMatrixSet>
    </Contents>
    <ServiceMetadataURL xlink:href="${href}" />
</Capabilities>`;
}
