// Line charts as inline SVG over a fixed window (the last hour, or the last 5 minutes): the x
// axis does not rescale as samples arrive, so a line only moves when its number does.

const SVG = 'http://www.w3.org/2000/svg';
export const WINDOW_MS = 60 * 60 * 1000;
/** The windows a chart can show: [label, ms]. */
export const WINDOWS = [['last hour', WINDOW_MS], ['last 5 min', 5 * 60 * 1000]];

function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  return el;
}

/** A y-axis top at a round number at or above `max` (1, 2, 5 × 10^n). */
export function niceMax(max) {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * A chart of `series` ([{ name, cls, points: [[tMs, value]] }]) over [nowMs - windowMs, nowMs],
 * `width` × `height` pixels, with its legend.
 */
export function lineChart(series, nowMs, options = {}) {
  const { width = 640, height = 140, title = '', windowMs = WINDOW_MS } = options;
  const pad = { left: 44, right: 8, top: 8, bottom: 18 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const startMs = nowMs - windowMs;
  const minutes = windowMs / 60_000;
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.points.map((p) => p[1]))));
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img' });
  root.append(svg('title', {}));
  root.firstChild.textContent = title;
  for (const [fraction, label] of [[0, '0'], [0.5, String(max / 2)], [1, String(max)]]) {
    const y = pad.top + plotH * (1 - fraction);
    root.append(svg('line', { x1: pad.left, x2: width - pad.right, y1: y, y2: y, class: 'grid' }));
    const text = svg('text', { x: pad.left - 4, y: y + 4, class: 'axis', 'text-anchor': 'end' });
    text.textContent = label;
    root.append(text);
  }
  for (const [fraction, label] of [[0, `-${minutes} min`], [0.5, `-${minutes / 2} min`],
    [1, 'now']]) {
    const text = svg('text', {
      x: pad.left + plotW * fraction, y: height - 4, class: 'axis',
      'text-anchor': fraction === 0 ? 'start' : fraction === 1 ? 'end' : 'middle',
    });
    text.textContent = label;
    root.append(text);
  }
  for (const s of series) {
    const points = s.points
      .filter(([t]) => t >= startMs)
      .map(([t, v]) => {
        const x = pad.left + ((t - startMs) / windowMs) * plotW;
        const y = pad.top + plotH * (1 - v / max);
        return `${x.toFixed(1)},${y.toFixed(1)}`;
      });
    if (points.length === 0) continue;
    root.append(svg('polyline', { points: points.join(' '), class: s.cls }));
    // The latest value as a dot: visible from the first sample on, before a line can be drawn.
    const [x, y] = points.at(-1).split(',');
    root.append(svg('circle', { cx: x, cy: y, r: 2.5, class: `dot ${s.cls}` }));
  }
  const legend = document.createElement('div');
  legend.className = 'legend';
  for (const s of series) {
    const item = document.createElement('span');
    item.className = `key ${s.cls}`;
    item.textContent = s.name;
    legend.append(item);
  }
  const box = document.createElement('figure');
  box.className = 'chart-box';
  if (title !== '') {
    const caption = document.createElement('figcaption');
    caption.textContent = title;
    box.append(caption);
  }
  box.append(root, legend);
  return box;
}
