/**
 * The viewers (/stac/viewer, /cog/viewer): pick a URL, see what it holds (/stac/info: its assets;
 * /cog/info: the one raster), choose what to show (one band, an RGB composite of one source's bands
 * or of three assets, or a band-math expression) and how (rescale, colormap, color formula,
 * algorithm). Every change of *what* asks the family's statistics route for the same selection,
 * which gives the histogram and, for data that is not 8-bit, the default rescale (2nd to 98th
 * percentile); every change of *how* only rebuilds the TileJSON URL and the map's tiles.
 *
 * The two families differ only in how a selection is written: a STAC item's bands are
 * `assets`/`asset_bidx` and `{asset}_b1` in expressions, a COG's are `bidx` and `b1`.
 */
import { DataLayer, createMap, fetchJson, readConfig, setStatus, withAccessToken } from './common.js';
import { drawHistogram } from './histogram.js';

const EIGHT_BIT = new Set(['uint8', 'int8']);
const STATISTICS_SIZE = '256';
const HISTOGRAM_BINS = '40';

const config = readConfig();
const endpoints = config.endpoints;
/** 'stac' or 'cog'. A COG is shown as one source under the name `COG_SOURCE`. */
const kind = config.kind;
const COG_SOURCE = 'cog';
const $ = (id) => document.getElementById(id);

const map = createMap('map', config.grid, config.basemap);
// A handle for scripting the page from the console (and for the browser tests).
window.tesseraMap = map;
const data = new DataLayer(map, config.grid);

const state = {
  url: '',
  /** asset name → /stac/info entry (for a COG: one entry, COG_SOURCE → /cog/info) */
  info: {},
  /** algorithm id → /algorithms metadata */
  algorithms: {},
  /** band name → statistics of the current selection */
  statistics: null,
  /** Why the statistics of the current selection are missing, if they are. */
  statisticsError: '',
  /** Bumped by every change: answers to an older change arrive late and are dropped. */
  selectionTurn: 0,
  renderTurn: 0,
};

// ---- small DOM helpers ----------------------------------------------------------------------

function fillSelect(select, entries, selected) {
  select.replaceChildren(
    ...entries.map(([value, text]) => {
      const option = document.createElement('option');
      option.value = value;
      option.textContent = text;
      option.selected = value === selected;
      return option;
    }),
  );
}

function query(pairs) {
  return new URLSearchParams(pairs).toString();
}

function shortNumber(value) {
  return Number.isFinite(value) ? String(Number(value.toPrecision(6))) : '';
}

// ---- what is shown ----------------------------------------------------------------------------

function mode() {
  return document.querySelector('input[name="mode"]:checked').value;
}

function assetNames() {
  return Object.keys(state.info);
}

function bandEntries(asset) {
  const bands = state.info[asset]?.band_descriptions ?? [];
  return bands.map(([name, description], i) => [String(i + 1), description ? `${name} (${description})` : name]);
}

/** The layer parameters of the current choice (assets / asset_bidx, or bidx; or expression), or null. */
function layerParams() {
  switch (mode()) {
    case 'band': {
      const asset = $('band-asset').value;
      if (!asset) return null;
      const band = $('band-index').value;
      return kind === 'cog'
        ? [['bidx', band]]
        : [
            ['assets', asset],
            ['asset_bidx', `${asset}|${band}`],
          ];
    }
    case 'rgb': {
      const picks = [$('rgb-r').value, $('rgb-g').value, $('rgb-b').value];
      if (picks.some((p) => !p)) return null;
      if (kind === 'cog') return picks.map((band) => ['bidx', band]);
      if ($('rgb-compose').checked) {
        const distinct = [...new Set(picks)];
        return [...picks.map((asset) => ['assets', asset]), ...distinct.map((asset) => ['asset_bidx', `${asset}|1`])];
      }
      const asset = $('rgb-asset').value;
      return [
        ['assets', asset],
        ['asset_bidx', `${asset}|${picks.join(',')}`],
      ];
    }
    default: {
      const expression = $('expression').value.trim();
      return expression ? [['expression', expression]] : null;
    }
  }
}

/** How an expression names the first band of `asset`. */
function firstBandName(asset) {
  return kind === 'cog' ? 'b1' : `${asset}_b1`;
}

function selectedAlgorithm() {
  const id = $('algorithm').value;
  return id ? { id, meta: state.algorithms[id] } : null;
}

/** algorithm, algorithm_params and, for algorithms that trim a buffer, the matching tile buffer. */
function algorithmParams() {
  const algorithm = selectedAlgorithm();
  if (!algorithm) return [];
  const pairs = [['algorithm', algorithm.id]];
  const text = $('algorithm-params').value.trim();
  if (text) pairs.push(['algorithm_params', text]);
  const bufferSpec = algorithm.meta?.parameters?.buffer;
  if (bufferSpec) {
    let buffer = bufferSpec.default;
    try {
      const given = text ? JSON.parse(text) : {};
      if (given && typeof given.buffer === 'number') buffer = given.buffer;
    } catch {
      // the server reports unparsable parameters when the tiles are asked for
    }
    if (buffer > 0) pairs.push(['buffer', String(buffer)]);
  }
  return pairs;
}

function outputBandCount() {
  const algorithm = selectedAlgorithm();
  if (algorithm?.meta?.outputs?.nbands) return algorithm.meta.outputs.nbands;
  switch (mode()) {
    case 'band':
      return 1;
    case 'rgb':
      return 3;
    default:
      return $('expression')
        .value.split(';')
        .filter((part) => part.trim() !== '').length;
  }
}

/** True when the rendered values are bytes already, so no rescale is needed by default. */
function outputIsEightBit() {
  const algorithm = selectedAlgorithm();
  if (algorithm) return EIGHT_BIT.has(algorithm.meta?.outputs?.dtype);
  if (mode() === 'expression') return false;
  const assets =
    mode() === 'rgb' && $('rgb-compose').checked
      ? [$('rgb-r').value, $('rgb-g').value, $('rgb-b').value]
      : [mode() === 'band' ? $('band-asset').value : $('rgb-asset').value];
  return assets.every((asset) => EIGHT_BIT.has(state.info[asset]?.dtype));
}

// ---- how it is shown ----------------------------------------------------------------------------

function renderParams() {
  const pairs = [];
  const lo = $('rescale-min').value.trim();
  const hi = $('rescale-max').value.trim();
  if (lo !== '' && hi !== '') pairs.push(['rescale', `${lo},${hi}`]);
  if (!$('colormap').disabled && $('colormap').value) pairs.push(['colormap_name', $('colormap').value]);
  const formula = $('color-formula').value.trim();
  if (formula) pairs.push(['color_formula', formula]);
  return pairs;
}

/** Rescale from the statistics: the 2nd–98th percentile range over every band (empty for bytes). */
function applyDefaultRescale() {
  let lo = Infinity;
  let hi = -Infinity;
  if (!outputIsEightBit() && state.statistics) {
    for (const stats of Object.values(state.statistics)) {
      lo = Math.min(lo, stats.percentile_2 ?? stats.min);
      hi = Math.max(hi, stats.percentile_98 ?? stats.max);
    }
  }
  const known = Number.isFinite(lo) && Number.isFinite(hi);
  $('rescale-min').value = known ? shortNumber(lo) : '';
  $('rescale-max').value = known ? shortNumber(hi) : '';
}

function showHistogram() {
  const bands = Object.entries(state.statistics ?? {});
  drawHistogram($('histogram'), bands);
  $('histogram-caption').textContent = bands
    .map(([name, s]) => `${name}: ${shortNumber(s.min)} – ${shortNumber(s.max)}, mean ${shortNumber(s.mean)}, ${shortNumber(s.valid_percent)}% valid`)
    .join('\n');
}

// ---- updates ------------------------------------------------------------------------------------

/** The choice of data changed: statistics (histogram, default rescale), then the tiles. */
async function selectionChanged() {
  const turn = ++state.selectionTurn;
  $('colormap').disabled = outputBandCount() !== 1;
  const layer = layerParams();
  if (!state.url || !layer) return;
  const pairs = [['url', state.url], ...layer, ...algorithmParams(), ['max_size', STATISTICS_SIZE], ['histogram_bins', HISTOGRAM_BINS]];
  try {
    const statistics = await fetchJson(`${endpoints.statistics}?${query(pairs)}`);
    if (turn !== state.selectionTurn) return;
    state.statistics = statistics;
    state.statisticsError = '';
  } catch (err) {
    if (turn !== state.selectionTurn) return;
    state.statistics = null;
    state.statisticsError = err.message;
  }
  applyDefaultRescale();
  showHistogram();
  await renderChanged();
}

/** The rendering changed (or the data did): a new TileJSON, new tiles. */
async function renderChanged() {
  const turn = ++state.renderTurn;
  const layer = layerParams();
  if (!state.url || !layer) return;
  const params = query([['url', state.url], ...layer, ...algorithmParams(), ...renderParams()]);
  const tilejsonUrl = `${endpoints.tilejson}?${params}`;
  $('tilejson-link').href = withAccessToken(tilejsonUrl);
  $('map-link').href = withAccessToken(`${endpoints.map}?${params}`);
  try {
    const tilejson = await fetchJson(tilejsonUrl);
    if (turn !== state.renderTurn) return;
    $('tile-url').textContent = tilejson.tiles[0];
    if (state.statisticsError) setStatus(`No statistics for this choice: ${state.statisticsError}`, 'error');
    else setStatus('');
    data.show(tilejson);
  } catch (err) {
    if (turn !== state.renderTurn) return;
    setStatus(`Cannot render: ${err.message}`, 'error');
  }
}

// ---- the item -----------------------------------------------------------------------------------

function showAssets() {
  const rows = Object.entries(state.info).map(([name, info]) => {
    const row = document.createElement('tr');
    const nodata = info.nodata_value ?? info.nodata_type;
    for (const text of [name, info.dtype, String(info.count), `${info.width}×${info.height}`, String(nodata ?? '')]) {
      const cell = document.createElement('td');
      cell.textContent = text;
      row.append(cell);
    }
    return row;
  });
  $('assets-body').replaceChildren(...rows);
  $('assets').hidden = rows.length === 0;
}

function fillRgbSelects() {
  const compose = $('rgb-compose').checked;
  $('rgb-asset').disabled = compose;
  const entries = compose ? assetNames().map((a) => [a, a]) : bandEntries($('rgb-asset').value);
  ['rgb-r', 'rgb-g', 'rgb-b'].forEach((id, i) => {
    const pick = entries[Math.min(i, entries.length - 1)];
    fillSelect($(id), entries, pick ? pick[0] : '');
  });
}

function showModeControls() {
  const current = mode();
  for (const section of document.querySelectorAll('[data-mode]')) section.hidden = section.dataset.mode !== current;
  if (current === 'rgb') fillRgbSelects();
  if (current === 'expression' && $('expression').value.trim() === '' && assetNames().length > 0) {
    $('expression').value = firstBandName($('band-asset').value || assetNames()[0]);
  }
}

async function loadItem(url) {
  state.url = url;
  state.info = {};
  state.statistics = null;
  $('item-url').value = url;
  const pageUrl = new URL(window.location.href);
  pageUrl.searchParams.set('url', url);
  window.history.replaceState(null, '', pageUrl);
  setStatus(kind === 'cog' ? 'Reading the COG…' : 'Reading the item…');
  try {
    const info = await fetchJson(`${endpoints.info}?${query([['url', url]])}`);
    state.info = kind === 'cog' ? { [COG_SOURCE]: info } : info;
  } catch (err) {
    showAssets();
    setStatus(`Cannot read this ${kind === 'cog' ? 'COG' : 'item'}: ${err.message}`, 'error');
    return;
  }
  setStatus('');
  showAssets();
  const names = assetNames().map((a) => [a, a]);
  const first = assetNames()[0] ?? '';
  fillSelect($('band-asset'), names, first);
  fillSelect($('band-index'), bandEntries(first), '1');
  fillSelect($('rgb-asset'), names, assetNames().find((a) => state.info[a].count >= 3) ?? first);
  showModeControls();
  await selectionChanged();
}

// ---- wiring -------------------------------------------------------------------------------------

function onChange(ids, handler) {
  for (const id of ids) $(id).addEventListener('change', handler);
}

$('item-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const url = $('item-url').value.trim();
  if (url) loadItem(url);
});
$('controls').addEventListener('submit', (event) => event.preventDefault());
for (const radio of document.querySelectorAll('input[name="mode"]')) {
  radio.addEventListener('change', () => {
    showModeControls();
    selectionChanged();
  });
}
$('band-asset').addEventListener('change', () => {
  fillSelect($('band-index'), bandEntries($('band-asset').value), '1');
  selectionChanged();
});
onChange(['rgb-compose', 'rgb-asset'], () => {
  fillRgbSelects();
  selectionChanged();
});
onChange(['band-index', 'rgb-r', 'rgb-g', 'rgb-b', 'expression', 'algorithm-params'], () => selectionChanged());
$('algorithm').addEventListener('change', () => {
  const algorithm = selectedAlgorithm();
  const defaults = Object.fromEntries(Object.entries(algorithm?.meta?.parameters ?? {}).map(([k, spec]) => [k, spec.default]));
  $('algorithm-params').value = '';
  $('algorithm-params').placeholder = algorithm ? JSON.stringify(defaults) : '';
  selectionChanged();
});
onChange(['rescale-min', 'rescale-max', 'colormap', 'color-formula'], () => renderChanged());
$('rescale-auto').addEventListener('click', () => {
  applyDefaultRescale();
  renderChanged();
});

/**
 * /algorithms as id → metadata: TiTiler 0.18's object of metadata, or (TESSERA_TITILER_API=2) TiTiler
 * 2.x's list of links, whose entries are fetched.
 */
async function algorithmMetadata(listing) {
  if (!Array.isArray(listing?.algorithms)) return listing;
  const entries = await Promise.all(listing.algorithms.map(async ({ id }) => [id, await fetchJson(`${endpoints.algorithms}/${encodeURIComponent(id)}`)]));
  return Object.fromEntries(entries);
}

async function main() {
  try {
    const [colormaps, listing] = await Promise.all([fetchJson(endpoints.colorMaps), fetchJson(endpoints.algorithms)]);
    fillSelect($('colormap'), [['', 'none'], ...colormaps.colorMaps.map((name) => [name, name])], '');
    const algorithms = await algorithmMetadata(listing);
    state.algorithms = algorithms;
    fillSelect($('algorithm'), [['', 'none'], ...Object.entries(algorithms).map(([id, meta]) => [id, meta.title ?? id])], '');
  } catch (err) {
    setStatus(`Cannot list colormaps and algorithms: ${err.message}`, 'error');
  }
  const url = new URLSearchParams(window.location.search).get('url');
  if (url) await loadItem(url);
  else setStatus(kind === 'cog' ? 'Enter the URL of a COG to start.' : 'Enter the URL of a STAC item to start.');
}

main();
