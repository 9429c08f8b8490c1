// Time charts for the dashboard: inline SVG drawn by hand (no library), a time axis over the
// range asked for, a value axis with its unit, one line per series, gaps where a series has no
// value, and an aria-label that says what the chart shows in words.
const NS = 'http://www.w3.org/2000/svg';
const W = 360, H = 180, LEFT = 40, RIGHT = 8, TOP = 20, BOTTOM = 40;

const round = (v) => (v >= 100 ? Math.round(v) : Number(v.toFixed(v >= 10 ? 1 : 2)));

/** A time label for a tick: hours and minutes within a day, else the day and hour. */
function timeLabel(t, spanMs) {
  const d = new Date(t);
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  return spanMs > 86_400_000 ? `${d.toLocaleDateString(undefined, { weekday: 'short' })} ${String(d.getHours()).padStart(2, '0')}h` : hm;
}

/** A round step for about `n` ticks over `max`. */
function niceStep(max, n) {
  const raw = max / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
}

/**
 * An SVG chart of `series` ([{ name, color, values: [v|null per bucket] }]) over buckets starting
 * at `from`, `stepMs` apart, up to `to`; values in `unit`.
 */
export function timeChart({ label, unit, from, to, stepMs, series }) {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('role', 'img');
  const add = (tag, attrs, text) => {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    svg.append(n);
    return n;
  };
  const all = series.flatMap((s) => s.values.filter((v) => v !== null));
  const peak = Math.max(0, ...all);
  const step = niceStep(Math.max(peak, 1), 4);
  const max = Math.max(step, Math.ceil(peak / step) * step);
  const x = (t) => LEFT + ((t - from) / (to - from)) * (W - LEFT - RIGHT);
  const y = (v) => H - BOTTOM - (v / max) * (H - BOTTOM - TOP);
  // Value axis: gridlines with their values, the unit above.
  for (let v = 0; v <= max + 1e-9; v += step) {
    add('line', { x1: LEFT, y1: y(v), x2: W - RIGHT, y2: y(v), class: v === 0 ? 'axis' : 'grid' });
    add('text', { x: LEFT - 4, y: y(v) + 3, 'text-anchor': 'end' }, String(round(v)));
  }
  add('text', { x: 2, y: TOP - 1, class: 'unit' }, unit);
  // Time axis: about five ticks on round times.
  const span = to - from;
  const tickMs = [60_000, 5 * 60_000, 10 * 60_000, 15 * 60_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 86_400_000].find((m) => span / m <= 6) ?? 86_400_000;
  const offset = new Date(from).getTimezoneOffset() * 60_000;
  for (let t = Math.ceil((from - offset) / tickMs) * tickMs + offset; t <= to; t += tickMs) {
    add('line', { x1: x(t), y1: H - BOTTOM, x2: x(t), y2: H - BOTTOM + 4, class: 'axis' });
    add('text', { x: x(t), y: H - BOTTOM + 14, 'text-anchor': 'middle', class: 'tick' }, timeLabel(t, span));
  }
  // The lines (a null value breaks a line), and the legend.
  series.forEach((s, i) => {
    let run = [];
    const flush = () => {
      if (run.length === 1) add('circle', { cx: run[0][0], cy: run[0][1], r: 2, fill: s.color, class: 'series', 'data-series': s.name });
      if (run.length > 1) add('polyline', { points: run.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' '), fill: 'none', stroke: s.color, 'stroke-width': 2, class: 'series', 'data-series': s.name });
      run = [];
    };
    s.values.forEach((v, k) => {
      if (v === null) flush();
      else run.push([x(from + k * stepMs + stepMs / 2), y(v)]);
    });
    flush();
    const lx = LEFT + i * 80;
    add('rect', { x: lx, y: H - 14, width: 10, height: 4, fill: s.color });
    add('text', { x: lx + 13, y: H - 10, class: 'legend' }, s.name);
  });
  const words = series.map((s) => {
    const vs = s.values.filter((v) => v !== null);
    return vs.length === 0 ? `${s.name}: no data` : `${s.name}: peak ${round(Math.max(...vs))}, last ${round(vs.at(-1))}`;
  });
  svg.setAttribute('aria-label', `${label} (${unit}) from ${new Date(from).toLocaleString()} to ${new Date(to).toLocaleString()}: ${words.join('; ')}`);
  return svg;
}
