import type { ChartBase } from './frame.js';
/**
 * Line charts: one polyline per series over shared nice axes (e.g. CCU, active/idle lobbies or wait
 * percentiles over simulated time).
 */
import { formatElapsed } from './format.js';
import { frame, seriesStyle } from './frame.js';
import { durationTicks, extent, niceTicks } from './scale.js';
import { el, svgDocument } from './svg.js';

export interface Point {
  readonly x: number;
  readonly y: number;
}

export interface Series {
  readonly name: string;
  readonly points: readonly Point[];
}

export interface LineChartSpec extends ChartBase {
  readonly series: readonly Series[];
  /** `'duration'` puts x ticks on round durations in ms, labelled by `formatElapsed` unless `xFormat` is given. Default `'linear'`. */
  readonly xScale?: 'linear' | 'duration' | undefined;
  /** Whether the y axis always includes 0. Default `true`. */
  readonly yIncludeZero?: boolean | undefined;
}

const finite = (p: Point): boolean => Number.isFinite(p.x) && Number.isFinite(p.y);

/**
 * Renders a standalone SVG line chart. Points with a non-finite coordinate are skipped; a series
 * with a single point is drawn as a dot.
 *
 * @example
 * lineChart({
 *   title: 'Players online', xLabel: 'time', yLabel: 'CCU', xScale: 'duration', xFormat: formatDuration,
 *   series: [{ name: 'CCU', points: [{ x: 0, y: 10 }, { x: 3_600_000, y: 42 }] }],
 * }) // '<svg xmlns="http://www.w3.org/2000/svg" ...'
 */
export function lineChart(spec: LineChartSpec): string {
  const points = spec.series.flatMap((s) => s.points.filter(finite));
  const xExtent = extent(points.map((p) => p.x)) ?? [0, 1];
  const yExtent = extent(points.map((p) => p.y)) ?? [0, 1];
  const zero = spec.yIncludeZero ?? true;
  const xTicks = spec.xScale === 'duration' ? durationTicks(...xExtent) : niceTicks(...xExtent);
  const yTicks = niceTicks(zero ? Math.min(0, yExtent[0]) : yExtent[0], zero ? Math.max(0, yExtent[1]) : yExtent[1]);
  const f = frame({
    ...spec,
    xFormat: spec.xFormat ?? (spec.xScale === 'duration' ? formatElapsed : undefined),
    xTicks,
    yTicks,
    legend: spec.series.map((s) => s.name),
  });
  const lines = spec.series.map((s, i) => {
    const { color, dash } = seriesStyle(i);
    const visible = s.points.filter(finite);
    const coords = visible.map((p) => `${f.x(p.x).toFixed(2)},${f.y(p.y).toFixed(2)}`).join(' ');
    const line = el('polyline', {
      class: 'series', 'data-index': i, points: coords, fill: 'none', stroke: color,
      'stroke-width': 2, 'stroke-linejoin': 'round', 'stroke-dasharray': dash,
    });
    const only = visible.length === 1 ? visible[0] : undefined;
    return only === undefined ? line : line + el('circle', { cx: f.x(only.x), cy: f.y(only.y), r: 3.5, fill: color });
  });
  return svgDocument(f.width, f.height, spec.title, [...f.parts, el('g', { class: 'data' }, ...lines)]);
}
