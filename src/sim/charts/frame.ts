/**
 * The parts every chart shares: size, title, legend, gridlines, axes with tick labels, axis labels,
 * and the scales that map data onto the plot area.
 */
import type { Ticks } from './scale.js';
import { linearScale } from './scale.js';
import { el, text } from './svg.js';
import { tickFormatter } from './format.js';

/** A colorblind-safe palette (Okabe & Ito), in the order series receive it. */
export const PALETTE: readonly string[] = Object.freeze([
  '#0072B2', '#E69F00', '#009E73', '#D55E00', '#56B4E9', '#CC79A7', '#000000', '#F0E442',
]);

/** Dash patterns that keep series distinct once the palette has been used up. */
const DASHES: readonly (string | undefined)[] = [undefined, '6 3', '2 3', '8 3 2 3'];

/** The stroke of the `index`th series: a palette color, dashed after the first round. */
export function seriesStyle(index: number): { readonly color: string; readonly dash: string | undefined } {
  const round = Math.floor(index / PALETTE.length);
  return { color: PALETTE[index % PALETTE.length] ?? '#000000', dash: DASHES[round % DASHES.length] };
}

/** A chart's common options plus its ticks; tick labels default to `tickFormatter` of the ticks. */
export interface FrameSpec extends ChartBase {
  readonly xTicks: Ticks;
  readonly yTicks: Ticks;
  readonly legend?: readonly string[] | undefined;
}

export interface Frame {
  readonly width: number;
  readonly height: number;
  /** Background layers: title, legend, gridlines, axes, labels. */
  readonly parts: readonly string[];
  readonly x: (v: number) => number;
  readonly y: (v: number) => number;
  readonly plot: { readonly left: number; readonly top: number; readonly right: number; readonly bottom: number };
}

const LEGEND_ROW = 18;
const MAX_NAME = 40;

/** Clamps a requested size to something drawable, falling back to the default. */
function size(requested: number | undefined, fallback: number): number {
  return requested !== undefined && Number.isFinite(requested) ? Math.min(10_000, Math.max(160, requested)) : fallback;
}

/** Shortens long legend names so that they fit on a row. */
export function shorten(name: string, max = MAX_NAME): string {
  const chars = Array.from(name);
  return chars.length <= max ? name : `${chars.slice(0, max - 1).join('')}…`;
}

/** Legend entries laid out in rows that wrap at `maxWidth`; returns the items and the row count. */
function legendLayout(names: readonly string[], left: number, top: number, maxWidth: number): { items: string[]; rows: number } {
  const items: string[] = [];
  let x = left;
  let row = 0;
  names.forEach((raw, i) => {
    const name = shorten(raw);
    const w = 28 + name.length * 6.5 + 16;
    if (x > left && x + w > left + maxWidth) {
      x = left;
      row++;
    }
    const y = top + row * LEGEND_ROW;
    const { color, dash } = seriesStyle(i);
    items.push(el('g', { class: 'legend-item' },
      el('line', { x1: x, y1: y - 4, x2: x + 22, y2: y - 4, stroke: color, 'stroke-width': 2.5, 'stroke-dasharray': dash }),
      text({ x: x + 28, y, 'font-size': 12, fill: '#333333' }, name)));
    x += w;
  });
  return { items, rows: names.length === 0 ? 0 : row + 1 };
}

/**
 * Lays out a chart and draws everything except the data.
 *
 * @example
 * const f = frame({ title: 'CCU', xLabel: 't', yLabel: 'players', xTicks, yTicks, xFormat: String, yFormat: String });
 * svgDocument(f.width, f.height, 'CCU', [...f.parts, el('circle', { cx: f.x(1), cy: f.y(2), r: 3 })]);
 */
export function frame(spec: FrameSpec): Frame {
  const xFormat = spec.xFormat ?? tickFormatter(spec.xTicks);
  const yFormat = spec.yFormat ?? tickFormatter(spec.yTicks);
  const width = size(spec.width, 720);
  const left = 72;
  const right = width - 24;
  const legend = legendLayout(spec.legend ?? [], left, 48, right - left);
  const top = 40 + legend.rows * LEGEND_ROW + 12;
  // A long legend makes the chart taller rather than squeezing the plot away.
  const height = Math.max(size(spec.height, 400), top + 132);
  const bottom = height - 52;
  const xs = spec.xTicks.ticks;
  const ys = spec.yTicks.ticks;
  const x = linearScale([xs[0] ?? 0, xs[xs.length - 1] ?? 1], [left, right]);
  const y = linearScale([ys[0] ?? 0, ys[ys.length - 1] ?? 1], [bottom, top]);
  const grid = { stroke: '#e6e6e6', 'stroke-width': 1 };
  const parts = [
    text({ x: width / 2, y: 26, 'text-anchor': 'middle', 'font-size': 16, 'font-weight': 'bold', fill: '#111111' }, spec.title),
    el('g', { class: 'legend' }, ...legend.items),
    el('g', { class: 'grid' },
      ...ys.map((t) => el('line', { x1: left, y1: y(t), x2: right, y2: y(t), ...grid })),
      ...xs.map((t) => el('line', { x1: x(t), y1: top, x2: x(t), y2: bottom, ...grid }))),
    el('g', { class: 'axes', stroke: '#333333', 'stroke-width': 1 },
      el('line', { x1: left, y1: bottom, x2: right, y2: bottom }),
      el('line', { x1: left, y1: top, x2: left, y2: bottom })),
    el('g', { class: 'ticks', 'font-size': 11, fill: '#444444' },
      ...xs.map((t) => text({ x: x(t), y: bottom + 16, 'text-anchor': 'middle' }, xFormat(t))),
      ...ys.map((t) => text({ x: left - 6, y: y(t) + 4, 'text-anchor': 'end' }, yFormat(t)))),
    text({ x: (left + right) / 2, y: height - 12, 'text-anchor': 'middle', 'font-size': 13, fill: '#222222' }, spec.xLabel),
    text({ x: 0, y: 0, transform: `translate(18 ${((top + bottom) / 2).toFixed(2)}) rotate(-90)`, 'text-anchor': 'middle', 'font-size': 13, fill: '#222222' }, spec.yLabel),
  ];
  return { width, height, parts, x, y, plot: { left, top, right, bottom } };
}

/** What every chart takes: a title, axis labels, and optionally its size and tick label formats. */
export interface ChartBase {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly width?: number | undefined;
  readonly height?: number | undefined;
  readonly xFormat?: ((v: number) => string) | undefined;
  readonly yFormat?: ((v: number) => string) | undefined;
}
