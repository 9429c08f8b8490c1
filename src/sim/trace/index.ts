/** Simulation traces: canonical records, a machine-independent hash, golden files and their diffs. */
export { canonicalJson } from './canonical.js';
export { jsonString, Trace, serializeTrace, parseTrace, firstDivergence, formatDivergence, type Divergence, type TraceRecord } from './trace.js';
