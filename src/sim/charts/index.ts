/**
 * Dependency-free SVG charts for the simulator's reports: line charts, histograms and labelled
 * scatter charts, each a pure function from data to a standalone SVG document string.
 */
export { lineChart } from './line.js';
export type { LineChartSpec, Point, Series } from './line.js';
export { histogram } from './histogram.js';
export type { Bin, HistogramSpec } from './histogram.js';
export { scatterChart } from './scatter.js';
export type { LabelledPoint, ScatterSpec } from './scatter.js';
export { formatCompact, formatDuration, formatElapsed, tickFormatter } from './format.js';
export { durationTicks, extent, linearScale, niceStep, niceTicks } from './scale.js';
export type { Ticks } from './scale.js';
export { PALETTE } from './frame.js';
export { escapeXml } from './svg.js';
