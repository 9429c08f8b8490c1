import type { ChartBase } from './frame.js';
/**
 * Histograms of pre-binned counts (e.g. the distribution of lobby fill ratios).
 */
import { frame, PALETTE } from './frame.js';
import { extent, niceTicks } from './scale.js';
import { el, svgDocument } from './svg.js';

export interface Bin {
  readonly from: number;
  readonly to: number;
  readonly count: number;
}

export interface HistogramSpec extends ChartBase {
  readonly bins: readonly Bin[];
}

const usable = (b: Bin): boolean => Number.isFinite(b.from) && Number.isFinite(b.to) && Number.isFinite(b.count);

/**
 * Renders a standalone SVG histogram: one bar per bin from 0 to its count. Bins with a non-finite
 * field are skipped; reversed bounds are accepted; zero-width bins are drawn one pixel wide.
 *
 * @example
 * histogram({
 *   title: 'Lobby fill at start', xLabel: 'fill ratio', yLabel: 'lobbies',
 *   bins: [{ from: 0, to: 0.5, count: 3 }, { from: 0.5, to: 1, count: 9 }],
 * }) // '<svg xmlns="http://www.w3.org/2000/svg" ...'
 */
export function histogram(spec: HistogramSpec): string {
  const bins = spec.bins.filter(usable);
  const xExtent = extent(bins.flatMap((b) => [b.from, b.to])) ?? [0, 1];
  const yExtent = extent(bins.map((b) => b.count)) ?? [0, 1];
  const xTicks = niceTicks(...xExtent);
  const yTicks = niceTicks(Math.min(0, yExtent[0]), Math.max(0, yExtent[1]));
  const f = frame({
    ...spec,
    xTicks,
    yTicks,
  });
  const bars = bins.map((b) => {
    const x0 = f.x(Math.min(b.from, b.to));
    const x1 = f.x(Math.max(b.from, b.to));
    const y0 = f.y(Math.max(0, b.count));
    const y1 = f.y(Math.min(0, b.count));
    return el('rect', {
      x: x0, y: y0, width: Math.max(1, x1 - x0), height: Math.max(0, y1 - y0),
      fill: PALETTE[0], 'fill-opacity': 0.8, stroke: '#ffffff', 'stroke-width': 1,
    });
  });
  return svgDocument(f.width, f.height, spec.title, [...f.parts, el('g', { class: 'data' }, ...bars)]);
}
