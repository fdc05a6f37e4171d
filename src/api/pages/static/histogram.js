/**
 * Draws band histograms (tessera/TiTiler statistics: `histogram: [counts, edges]`) into an <svg>:
 * bars for one band, outlines for several (red, green, blue for a composite), with the value range
 * on the x axis. Plain SVG: no charting library to ship.
 */
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 300;
const HEIGHT = 130;
const AXIS = 18;
const BAND_COLOURS = ['#d62728', '#2ca02c', '#1f77b4', '#9467bd', '#8c564b', '#e377c2'];

function element(name, attributes) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
}

function label(value) {
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e6 || abs < 1e-3)) return value.toExponential(2);
  return String(Number(value.toPrecision(5)));
}

/**
 * Replaces the content of `svg` with the histograms of `bands` (a list of [name, statistics]).
 * Returns the number of bins drawn (0 when there is nothing to draw).
 */
export function drawHistogram(svg, bands) {
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  const usable = bands.filter(([, stats]) => Array.isArray(stats?.histogram) && stats.histogram[0].length > 0);
  if (usable.length === 0) return 0;
  let lo = Infinity;
  let hi = -Infinity;
  let top = 0;
  for (const [, stats] of usable) {
    const [counts, edges] = stats.histogram;
    lo = Math.min(lo, edges[0]);
    hi = Math.max(hi, edges[edges.length - 1]);
    top = Math.max(top, ...counts);
  }
  const plotHeight = HEIGHT - AXIS;
  const span = hi > lo ? hi - lo : 1;
  const x = (v) => ((v - lo) / span) * WIDTH;
  const y = (count) => plotHeight - (top > 0 ? (count / top) * (plotHeight - 4) : 0);

  let bins = 0;
  usable.forEach(([name, stats], index) => {
    const [counts, edges] = stats.histogram;
    const colour = usable.length === 1 ? '#3b7dd8' : BAND_COLOURS[index % BAND_COLOURS.length];
    const group = element('g', { 'data-band': name });
    group.append(element('title', {}));
    group.firstChild.textContent = name;
    if (usable.length === 1) {
      counts.forEach((count, i) => {
        const left = x(edges[i]);
        const width = Math.max(x(edges[i + 1]) - left - 0.5, 0.5);
        group.append(element('rect', { x: left, y: y(count), width, height: plotHeight - y(count), fill: colour }));
      });
    } else {
      const points = counts.map((count, i) => `${x((edges[i] + edges[i + 1]) / 2)},${y(count)}`).join(' ');
      group.append(element('polyline', { points, fill: 'none', stroke: colour, 'stroke-width': 1.5 }));
    }
    bins += counts.length;
    svg.append(group);
  });

  svg.append(element('line', { x1: 0, y1: plotHeight, x2: WIDTH, y2: plotHeight, stroke: '#555' }));
  const left = element('text', { x: 0, y: HEIGHT - 4, 'font-size': 11 });
  left.textContent = label(lo);
  const right = element('text', { x: WIDTH, y: HEIGHT - 4, 'font-size': 11, 'text-anchor': 'end' });
  right.textContent = label(hi);
  svg.append(left, right);
  return bins;
}
