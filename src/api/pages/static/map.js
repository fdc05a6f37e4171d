/**
 * The map page (/stac/{tms}/map, /mosaicjson/{tms}/map): fetches the TileJSON the server named (the
 * page's own query string, forwarded), outlines the data bounds, fits to them and draws the tiles
 * in the page's TileMatrixSet.
 */
import { DataLayer, createMap, fetchJson, readConfig, setStatus } from './common.js';

async function main() {
  const config = readConfig();
  const map = createMap('map', config.grid, config.basemap);
  // A handle for scripting the page from the console (and for the browser tests).
  window.tesseraMap = map;
  setStatus('Loading TileJSON…');
  try {
    const tilejson = await fetchJson(config.tilejsonUrl);
    setStatus('');
    new DataLayer(map, config.grid).show(tilejson);
  } catch (err) {
    setStatus(`Cannot show this dataset: ${err.message}`, 'error');
  }
}

main();
