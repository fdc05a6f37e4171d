/**
 * The HTML of tessera's pages: the landing page, the map page and the STAC viewer. Markup only:
 * behaviour lives in the browser modules under static/, configured by a JSON block the page embeds
 * (never inline script, so the Content-Security-Policy can forbid it). Everything interpolated is
 * escaped for its context: text and attributes with `escapeHtml`, the JSON block with `scriptJson`.
 */
import { STATIC_PREFIX } from './assets.js';
import type { MapGrid } from './map-grid.js';

export interface Basemap {
  url: string;
  attribution: string;
}

/** Text or attribute value → HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A page of markup alone (TiTiler 2.x's `f=html` answers of JSON resources: the algorithm and
 * colormap lists), with a link back to its JSON; `body` is HTML its caller escaped.
 */
export function plainPage(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
</head>
<body>
<p><a href="?f=json">JSON</a></p>
${body}
</body>
</html>
`;
}

/** JSON safe inside <script>: no `</script>`, no `<!--`, no line separators JavaScript trips on. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The parts of one page; `page` adds the shared head, stylesheets and scripts. */
interface PageParts {
  /** The server's root path ('' or '/prefix'): the page's <base>, which every link is relative to. */
  root: string;
  title: string;
  bodyClass: string;
  body: string;
  /** Leaflet's stylesheet and scripts (and proj4 for custom grids). */
  map?: { proj: boolean };
  config?: unknown;
  module?: string;
}

/** A static prefix as a link relative to the page's <base> (so that a root path applies to it). */
const rel = (prefix: string): string => prefix.replace(/^\//, '');

function page(doc: PageParts): string {
  const css = [...(doc.map ? [`${rel(STATIC_PREFIX.leaflet)}leaflet.css`] : []), `${rel(STATIC_PREFIX.tessera)}pages.css`];
  const scripts = doc.map
    ? [
        `${rel(STATIC_PREFIX.leaflet)}leaflet.js`,
        ...(doc.map.proj ? [`${rel(STATIC_PREFIX.proj4)}proj4.js`, `${rel(STATIC_PREFIX.proj4leaflet)}proj4leaflet.js`] : []),
      ]
    : [];
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="${escapeHtml(doc.root)}/">
<title>${escapeHtml(doc.title)}</title>
<link rel="icon" href="${rel(STATIC_PREFIX.tessera)}favicon.svg" type="image/svg+xml">
${css.map((href) => `<link rel="stylesheet" href="${href}">`).join('\n')}
</head>
<body class="${doc.bodyClass}">
${doc.body}
${doc.config === undefined ? '' : `<script type="application/json" id="tessera-config">${scriptJson(doc.config)}</script>\n`}${scripts
  .map((src) => `<script src="${src}"></script>`)
  .join('\n')}
${doc.module ? `<script type="module" src="${rel(STATIC_PREFIX.tessera)}${doc.module}"></script>` : ''}
</body>
</html>
`;
}

// ---- map page ---------------------------------------------------------------------------------

export interface MapPageOptions {
  root: string;
  title: string;
  tilejsonUrl: string;
  grid: MapGrid;
  basemap: Basemap | null;
}

/** A full-window map of one TileJSON in one grid. */
export function mapPage(opts: MapPageOptions): string {
  return page({
    root: opts.root,
    title: opts.title,
    bodyClass: 'map-page',
    body: `<div id="map" aria-label="map"></div>
<p id="status" class="status" role="status" hidden></p>`,
    map: { proj: !opts.grid.webMercator },
    config: { tilejsonUrl: opts.tilejsonUrl, grid: opts.grid, basemap: opts.basemap },
    module: 'map.js',
  });
}

// ---- viewers (STAC item, COG) ------------------------------------------------------------------

export interface ViewerEndpoints {
  info: string;
  statistics: string;
  tilejson: string;
  map: string;
  colorMaps: string;
  algorithms: string;
}

export interface ViewerPageOptions {
  root: string;
  /** What the page views: a STAC item (its assets) or one COG (its bands). */
  kind: 'stac' | 'cog';
  endpoints: ViewerEndpoints;
  grid: MapGrid;
  basemap: Basemap | null;
}

/** A viewer: a control panel beside a Web Mercator map. */
export function viewerPage(opts: ViewerPageOptions): string {
  const cog = opts.kind === 'cog';
  const name = cog ? 'COG' : 'STAC';
  // A COG is one source: its selects of assets stay in the page (the script fills them) but hidden.
  const assetHidden = cog ? ' hidden' : '';
  const body = `<aside id="panel">
<header><a href="./" class="brand">tessera</a> <span>${name} viewer</span></header>
<form id="item-form">
  <label for="item-url">${cog ? 'COG URL' : 'STAC item URL'}</label>
  <div class="row"><input id="item-url" name="url" type="url" required placeholder="${cog ? 'https://…/image.tif' : 'https://…/item.json'}"><button type="submit">Load</button></div>
</form>
<section id="assets" hidden>
  <h2>${cog ? 'Raster' : 'Assets'}</h2>
  <table><thead><tr><th>${cog ? 'source' : 'asset'}</th><th>type</th><th>bands</th><th>size</th><th>nodata</th></tr></thead><tbody id="assets-body"></tbody></table>
</section>
<form id="controls">
  <fieldset>
    <legend>Show</legend>
    <div class="modes">
      <label><input type="radio" name="mode" value="band" checked> one band</label>
      <label><input type="radio" name="mode" value="rgb"> RGB</label>
      <label><input type="radio" name="mode" value="expression"> expression</label>
    </div>
    <div data-mode="band">
      <label${assetHidden}>asset <select id="band-asset"></select></label>
      <label>band <select id="band-index"></select></label>
    </div>
    <div data-mode="rgb" hidden>
      <label class="check"${assetHidden}><input type="checkbox" id="rgb-compose"> one band from each of three assets</label>
      <label${assetHidden}>asset <select id="rgb-asset"></select></label>
      <div class="rgb"><label>R <select id="rgb-r"></select></label><label>G <select id="rgb-g"></select></label><label>B <select id="rgb-b"></select></label></div>
    </div>
    <div data-mode="expression" hidden>
      <label>expression <input id="expression" type="text" spellcheck="false" placeholder="${cog ? 'b1 / 10' : 'asset_b1 / 10'}"></label>
      <p class="hint">Bands are named ${cog ? '<code>b1</code>, <code>b2</code>' : '<code>asset_b1</code>, <code>asset_b2</code>'}…; <code>;</code> separates output bands.</p>
    </div>
  </fieldset>
  <fieldset>
    <legend>Render</legend>
    <label>rescale</label>
    <div class="row"><input id="rescale-min" type="number" step="any" aria-label="rescale minimum"><span>to</span><input id="rescale-max" type="number" step="any" aria-label="rescale maximum"><button type="button" id="rescale-auto" title="2nd to 98th percentile">auto</button></div>
    <label>colormap <select id="colormap"><option value="">none</option></select></label>
    <label>color formula <input id="color-formula" type="text" spellcheck="false" placeholder="gamma rgb 1.3, sigmoidal rgb 8 0.4"></label>
    <label>algorithm <select id="algorithm"><option value="">none</option></select></label>
    <label>algorithm parameters (JSON) <input id="algorithm-params" type="text" spellcheck="false"></label>
  </fieldset>
</form>
<section>
  <h2>Histogram</h2>
  <svg id="histogram" role="img" aria-label="histogram"></svg>
  <pre id="histogram-caption"></pre>
</section>
<section class="links">
  <h2>Links</h2>
  <p><a id="tilejson-link" href="#">TileJSON</a> · <a id="map-link" href="#">full-window map</a></p>
  <code id="tile-url"></code>
</section>
</aside>
<div id="map" aria-label="map"></div>
<p id="status" class="status" role="status" hidden></p>`;
  return page({
    root: opts.root,
    title: `tessera ${name} viewer`,
    bodyClass: 'viewer-page',
    body,
    map: { proj: !opts.grid.webMercator },
    config: { kind: opts.kind, endpoints: opts.endpoints, grid: opts.grid, basemap: opts.basemap },
    module: 'viewer.js',
  });
}

// ---- landing page -----------------------------------------------------------------------------

export interface Link {
  href: string;
  text: string;
  note?: string;
}

export interface GridRow {
  id: string;
  title: string;
  crs: string;
  document: string;
  /** A map of the demo item in this grid, when the grid covers it. */
  demoMap?: string;
}

export interface LandingPageOptions {
  root: string;
  /** The demo links, or null when tessera runs without --demo. */
  demo: Link[] | null;
  api: Link[];
  grids: GridRow[];
}

function linkList(links: Link[]): string {
  const items = links.map(
    (l) => `<li><a href="${escapeHtml(l.href)}">${escapeHtml(l.text)}</a>${l.note ? ` <span class="note">${escapeHtml(l.note)}</span>` : ''}</li>`,
  );
  return `<ul>\n${items.join('\n')}\n</ul>`;
}

/** What a newcomer sees first: the demo, a way to open their own data, the API and the grids. */
export function landingPage(opts: LandingPageOptions): string {
  const demo = opts.demo
    ? `<section id="demo">
<h2>See the demo data</h2>
<p>A synthetic alpine scene (a float elevation model and its shaded-relief RGB, as a STAC item) and a MosaicJSON of four crops, served by this tessera under <code>/demo/</code>.</p>
${linkList(opts.demo)}
</section>`
    : `<section id="demo">
<h2>Demo data</h2>
<p>This tessera runs without demo data. <code>make run</code> (or <code>tessera demo --out DIR</code> then <code>tessera serve --demo DIR</code>) serves a demo scene here.</p>
</section>`;
  const rows = opts.grids.map(
    (g) =>
      `<tr><td><a href="${escapeHtml(g.document)}">${escapeHtml(g.id)}</a></td><td>${escapeHtml(g.title)}</td><td>${escapeHtml(g.crs)}</td><td>${
        g.demoMap ? `<a href="${escapeHtml(g.demoMap)}">demo map</a>` : ''
      }</td></tr>`,
  );
  const body = `<main class="landing">
<header><h1>tessera</h1><p>Raster tiles and metadata from STAC items and MosaicJSON (TiTiler 0.18 compatible).</p></header>
${demo}
<section id="open">
<h2>Open your own data</h2>
<form action="stac/viewer" method="get"><label>STAC item URL <input name="url" type="url" required placeholder="https://…/item.json"></label><button type="submit">Open in the viewer</button></form>
<form action="mosaicjson/WebMercatorQuad/map" method="get"><label>MosaicJSON URL <input name="url" type="url" required placeholder="https://…/mosaic.json"></label><button type="submit">Open on a map</button></form>
</section>
<section id="api">
<h2>API</h2>
${linkList(opts.api)}
</section>
<section id="grids">
<h2>TileMatrixSets</h2>
<table><thead><tr><th>id</th><th>title</th><th>CRS</th><th></th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>
</section>
</main>`;
  return page({ root: opts.root, title: 'tessera', bodyClass: 'landing-page', body });
}

// ---- OGC API documents as HTML ------------------------------------------------------------------

/** A link of an OGC API document. */
export interface DocumentLink {
  href: string;
  rel: string;
  type?: string;
  title?: string;
}

export interface DocumentPageOptions {
  root: string;
  title: string;
  /** The document's links, listed first. */
  links: DocumentLink[];
  /** The whole JSON document, shown below them. */
  json: unknown;
}

/** An OGC API document (landing page, conformance, tilesets) for a browser: its links, then its JSON. */
export function documentPage(opts: DocumentPageOptions): string {
  const rows = opts.links.map(
    (l) =>
      `<tr><td><a href="${escapeHtml(l.href)}">${escapeHtml(l.title ?? l.href)}</a></td><td>${escapeHtml(l.rel)}</td><td>${escapeHtml(l.type ?? '')}</td></tr>`,
  );
  const body = `<main class="landing">
<header><h1>${escapeHtml(opts.title)}</h1></header>
${
  rows.length > 0
    ? `<section><h2>Links</h2>
<table><thead><tr><th>link</th><th>rel</th><th>type</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody></table>
</section>`
    : ''
}
<section><h2>JSON</h2>
<pre>${escapeHtml(JSON.stringify(opts.json, null, 2))}</pre>
</section>
</main>`;
  return page({ root: opts.root, title: opts.title, bodyClass: 'landing-page', body });
}
