/** What `tessera serve --demo` prints once it listens: where a newcomer finds the demo. */
export function demoBanner(address: string): string {
  const item = `${address}/demo/item.json`;
  const q = `url=${encodeURIComponent(item)}`;
  return `
tessera is serving its demo data. Start here: ${address}/

  STAC viewer     ${address}/stac/viewer?${q}
  COG viewer      ${address}/cog/viewer?url=${encodeURIComponent(`${address}/demo/dem.tif`)}
  demo map        ${address}/stac/WebMercatorQuad/map?${q}&assets=rgb
  API docs        ${address}/api.html
  demo item info  ${address}/stac/info?${q}
  demo TileJSON   ${address}/stac/WebMercatorQuad/tilejson.json?${q}&assets=rgb
  WMTS for QGIS   ${address}/stac/WebMercatorQuad/WMTSCapabilities.xml?${q}&assets=rgb
`;
}
