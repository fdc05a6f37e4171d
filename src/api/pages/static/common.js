/**
 * tessera's page helpers (browser ES module, no build step): the page configuration the server
 * embeds, JSON fetching with readable errors, a Leaflet map in any TileMatrixSet (proj4leaflet for
 * grids other than Web Mercator), and a data layer drawn from a TileJSON document: outline, fit and
 * tiles. The tile layer's progress is mirrored on <html data-tile-state> and in the status line, so
 * people and browser tests can tell when the tiles are on screen.
 */
/* global L */

/** The JSON the server put in <script id="tessera-config">. */
export function readConfig() {
  const node = document.getElementById('tessera-config');
  if (!node?.textContent) throw new Error('page configuration missing');
  return JSON.parse(node.textContent);
}

/** The access token the page was opened with (a server with TiTiler's global access token wants it everywhere). */
const ACCESS_TOKEN = new URLSearchParams(window.location.search).get('access_token');

/** `url` with the page's access token added, for this server's own URLs. */
export function withAccessToken(url) {
  if (!ACCESS_TOKEN) return url;
  const u = new URL(url, document.baseURI);
  if (u.origin !== window.location.origin || u.searchParams.has('access_token')) return url;
  u.searchParams.set('access_token', ACCESS_TOKEN);
  return u.href;
}

/** GET a JSON document; a failure becomes an Error carrying the server's `detail`. */
export async function fetchJson(url, { signal } = {}) {
  const res = await fetch(withAccessToken(url), { signal, headers: { Accept: 'application/json' } });
  if (!res.ok) {
    let detail = res.statusText;
    try {
      const body = await res.json();
      if (body && body.detail !== undefined) detail = typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail);
    } catch {
      // not JSON: keep the status text
    }
    throw new Error(`${res.status} ${detail}`);
  }
  return res.json();
}

/** The status line at the bottom of a map: plain text, `kind` is 'info' or 'error'. */
export function setStatus(text, kind = 'info') {
  const node = document.getElementById('status');
  if (!node) return;
  node.textContent = text;
  node.dataset.kind = kind;
  node.hidden = text === '';
}

/** Clears the status line if it still shows `text` (so a later, different message survives). */
export function clearStatus(text) {
  const node = document.getElementById('status');
  if (node && node.textContent === text) setStatus('');
}

const LOADING_TILES = 'Loading tiles…';

function leafletCrs(grid) {
  if (grid.webMercator) return L.CRS.EPSG3857;
  const [minx, miny, maxx, maxy] = grid.bounds;
  return new L.Proj.CRS(grid.code, grid.proj4, {
    origin: grid.origin,
    resolutions: grid.resolutions,
    bounds: L.bounds([minx, miny], [maxx, maxy]),
  });
}

/**
 * A Leaflet map in the grid's CRS. The basemap (an XYZ Web Mercator template) is only drawn under
 * Web Mercator maps and only when the server is configured with one.
 */
export function createMap(container, grid, basemap) {
  const map = L.map(container, {
    crs: leafletCrs(grid),
    minZoom: grid.minzoom,
    maxZoom: grid.maxzoom,
    // Tiles appear as soon as they arrive: a finished load is then a finished picture.
    fadeAnimation: false,
  });
  if (basemap && grid.webMercator) {
    L.tileLayer(basemap.url, { attribution: basemap.attribution, maxZoom: grid.maxzoom, className: 'basemap' }).addTo(map);
  }
  // The scale bar measures along the map's left edge, which a zoomed-out custom grid can put
  // outside its projection's domain; it is drawn on Web Mercator maps only.
  if (grid.webMercator) L.control.scale({ imperial: false }).addTo(map);
  const [minx, miny, maxx, maxy] = grid.bounds;
  fitProjected(map, [L.point(minx, miny), L.point(maxx, maxy)], grid.minzoom);
  return map;
}

const EDGE_STEPS = 32;

/**
 * The outline of a lon/lat bbox as a densified ring (straight lines in lon/lat become curves in
 * most grids). A bbox crossing the antimeridian (west > east) is unrolled eastwards.
 */
function outlineRing(bounds) {
  const [west, south, north] = [bounds[0], bounds[1], bounds[3]];
  const east = bounds[2] < west ? bounds[2] + 360 : bounds[2];
  const ring = [];
  const edge = (x0, y0, x1, y1) => {
    for (let i = 0; i < EDGE_STEPS; i++) {
      const t = i / EDGE_STEPS;
      ring.push(L.latLng(y0 + (y1 - y0) * t, x0 + (x1 - x0) * t));
    }
  };
  edge(west, south, east, south);
  edge(east, south, east, north);
  edge(east, north, west, north);
  edge(west, north, west, south);
  return ring;
}

/**
 * Centres the map on points given in the CRS's own units and picks the deepest zoom showing all of
 * them (never below `minZoom`). Measured in the map's pixel space, so it holds in any grid: Leaflet's
 * fitBounds only projects two corners of a lon/lat box, which is wrong in polar grids.
 */
function fitProjected(map, points, minZoom) {
  const crs = map.options.crs;
  const size = map.getSize();
  const room = { x: Math.max(size.x - 40, 1), y: Math.max(size.y - 40, 1) };
  const pixelsAt = (z) => L.bounds(points.map((p) => crs.transformation.transform(p, crs.scale(z))));
  let zoom = map.getMinZoom();
  for (let z = map.getMaxZoom(); z >= map.getMinZoom(); z--) {
    const extent = pixelsAt(z).getSize();
    if (extent.x <= room.x && extent.y <= room.y) {
      zoom = z;
      break;
    }
  }
  zoom = Math.max(zoom, minZoom);
  map.setView(crs.pointToLatLng(pixelsAt(zoom).getCenter(), zoom), zoom, { animate: false });
}

function markTiles(state, layer) {
  const root = document.documentElement.dataset;
  root.tileState = state;
  root.tileUrl = layer.url;
  root.tilesLoaded = String(layer.loaded);
  root.tileErrors = String(layer.failed);
}

/**
 * The data on a map: its bounds outline and its tiles, replaced as a whole by `show(tilejson)`.
 * Zoom levels follow the TileJSON: no tiles below its minzoom, tiles stretched above its maxzoom.
 */
export class DataLayer {
  constructor(map, grid) {
    this.map = map;
    this.grid = grid;
    this.outline = null;
    this.tiles = null;
    this.bboxKey = '';
    this.progress = { url: '', loaded: 0, failed: 0 };
  }

  /** Draws a TileJSON's tiles; fits the map when its bounds differ from the ones shown. */
  show(tilejson, { fit = true } = {}) {
    const bounds = tilejson.bounds ?? [-180, -85, 180, 85];
    const key = bounds.join(',');
    if (key !== this.bboxKey) {
      this.bboxKey = key;
      const ring = outlineRing(bounds);
      if (this.outline) this.outline.remove();
      this.outline = L.polygon(ring, { color: '#3bb2d0', weight: 2, fill: false, interactive: false }).addTo(this.map);
      if (fit)
        fitProjected(
          this.map,
          ring.map((ll) => this.map.options.crs.project(ll)),
          tilejson.minzoom ?? this.grid.minzoom,
        );
    }
    this.setTiles(tilejson, bounds);
  }

  setTiles(tilejson, bounds) {
    if (this.tiles) this.tiles.remove();
    const west = bounds[0] > bounds[2] ? bounds[0] - 360 : bounds[0];
    const url = tilejson.tiles[0];
    const progress = { url, loaded: 0, failed: 0 };
    this.progress = progress;
    const layer = L.tileLayer(url, {
      minZoom: Math.max(tilejson.minzoom ?? this.grid.minzoom, this.grid.minzoom),
      maxZoom: this.grid.maxzoom,
      maxNativeZoom: tilejson.maxzoom ?? this.grid.maxzoom,
      bounds: L.latLngBounds([bounds[1], west], [bounds[3], bounds[2]]),
      tileSize: this.grid.tileSize,
      className: 'data-tiles',
    });
    layer.on('loading', () => {
      progress.loaded = 0;
      progress.failed = 0;
      markTiles('loading', progress);
      setStatus(LOADING_TILES);
    });
    layer.on('tileload', () => {
      progress.loaded += 1;
    });
    layer.on('tileerror', () => {
      progress.failed += 1;
    });
    layer.on('load', () => {
      markTiles('loaded', progress);
      if (progress.failed > 0) setStatus(`${progress.failed} of ${progress.loaded + progress.failed} tiles failed`, 'error');
      else clearStatus(LOADING_TILES);
    });
    markTiles('waiting', progress);
    this.tiles = layer.addTo(this.map);
  }
}
