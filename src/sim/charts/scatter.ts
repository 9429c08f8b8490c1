import type { ChartBase } from './frame.js';
/**
 * Labelled scatter charts (e.g. a parameter sweep: wait p95 against idle lobby-hours, each point
 * labelled with its swept value), optionally connected in input order.
 */
import { frame, PALETTE, shorten } from './frame.js';
import { extent, niceTicks } from './scale.js';
import { el, svgDocument, text } from './svg.js';

export interface LabelledPoint {
  readonly x: number;
  readonly y: number;
  readonly label: string;
}

export interface ScatterSpec extends ChartBase {
  readonly points: readonly LabelledPoint[];
  /** Draw a line through the points in their given order. Default `false`. */
  readonly connect?: boolean | undefined;
}

const finite = (p: LabelledPoint): boolean => Number.isFinite(p.x) && Number.isFinite(p.y);

/**
 * Renders a standalone SVG scatter chart with a text label beside each point; points with a
 * non-finite coordinate are skipped.
 *
 * @example
 * scatterChart({
 *   title: 'Idle pool sweep', xLabel: 'idle lobby-hours', yLabel: 'wait p95 (s)', connect: true,
 *   points: [{ x: 10, y: 30, label: 'min=1' }, { x: 40, y: 4, label: 'min=4' }],
 * }) // '<svg xmlns="http://www.w3.org/2000/svg" ...'
 */
export function scatterChart(spec: ScatterSpec): string {
  const points = spec.points.filter(finite);
  const xTicks = niceTicks(...(extent(points.map((p) => p.x)) ?? [0, 1]));
  const yTicks = niceTicks(...(extent(points.map((p) => p.y)) ?? [0, 1]));
  const f = frame({
    ...spec,
    xTicks,
    yTicks,
  });
  const color = PALETTE[0];
  const path = spec.connect === true
    ? [el('polyline', {
        class: 'series', points: points.map((p) => `${f.x(p.x).toFixed(2)},${f.y(p.y).toFixed(2)}`).join(' '),
        fill: 'none', stroke: color, 'stroke-width': 1.5, 'stroke-opacity': 0.6,
      })]
    : [];
  const marks = points.map((p) =>
    el('g', { class: 'point' },
      el('circle', { cx: f.x(p.x), cy: f.y(p.y), r: 4, fill: color }),
      text({ x: f.x(p.x) + 7, y: f.y(p.y) - 7, 'font-size': 11, fill: '#222222' }, shorten(p.label, 24))));
  return svgDocument(f.width, f.height, spec.title, [...f.parts, el('g', { class: 'data' }, ...path, ...marks)]);
}
