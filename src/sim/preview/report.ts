/**
 * A preview for people (a table, its notes and its error bound) and for programs (one JSON object,
 * snake_case like the API).
 */
import type { FigureRow } from './figures.js';
import type { GateCheck } from './gate.js';
import type { PreviewResult } from './preview.js';
import type { RunSeries } from './series.js';

/** The preview as the API answers it (`previewJson`). */
export interface PreviewWire {
  readonly window: { readonly start_ts: string; readonly end_ts: string; readonly asked_start_ts: string };
  readonly requests: number;
  readonly seed: number;
  readonly figures: readonly { readonly name: string; readonly label: string; readonly kind: FigureRow['kind']; readonly live: number; readonly new: number; readonly change_pct: number | null; readonly delta: number }[];
  readonly notes: readonly string[];
  readonly error_bound: {
    readonly counts_pct: number;
    readonly times_pct: number;
    readonly measured: { readonly lobbies_created_pct: number; readonly refused_pct: number; readonly wait_p95_pct: number };
    readonly source: string;
    readonly text: string;
  };
  /** Both runs over time (`series.ts`): one value per bucket of `step_ms` from `start_ts`, each bucket's peak. */
  readonly series: {
    readonly start_ts: string;
    readonly step_ms: number;
    readonly live: SeriesWire;
    readonly new: SeriesWire;
  };
}

/** One run's series on the wire (`wait_p95_ms` null in a bucket where nobody got a ready seat). */
export interface SeriesWire {
  readonly players: readonly number[];
  readonly lobbies: readonly number[];
  readonly ports: readonly number[];
  readonly wait_p95_ms: readonly (number | null)[];
}

const seriesWire = (s: RunSeries): SeriesWire => ({ players: s.players, lobbies: s.lobbies, ports: s.ports, wait_p95_ms: s.waitP95Ms });

/** The rows of a preview as the API answered it (what a gate checks). */
export const wireRows = (p: PreviewWire): FigureRow[] =>
  p.figures.map((f) => ({ name: f.name, label: f.label, kind: f.kind, live: f.live, next: f.new, changePct: f.change_pct, delta: f.delta }));

const number = (n: number, kind: FigureRow['kind']): string => {
  if (kind === 'ms') return `${Math.round(n).toLocaleString('en-US')} ms`;
  if (kind === 'share') return `${n.toFixed(1)} %`;
  if (kind === 'hours' || kind === 'money') return n.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  return Math.round(n).toLocaleString('en-US');
};

const change = (r: FigureRow): string => {
  if (r.kind === 'share') return `${r.delta >= 0 ? '+' : ''}${r.delta.toFixed(1)} pp`;
  if (r.changePct === null) return 'new';
  return `${r.changePct >= 0 ? '+' : ''}${r.changePct.toFixed(1)} %`;
};

const pad = (rows: readonly (readonly string[])[]): string[] => {
  const widths = rows.reduce<number[]>((w, r) => r.map((c, i) => Math.max(w[i] ?? 0, c.length)), []);
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ').trimEnd());
};

const day = (ts: string): string => ts.slice(0, 16).replace('T', ' ');

/**
 * The side-by-side table, then the notes and the bound, as lines.
 *
 * @example
 * for (const line of previewLines(previewJson(result))) console.log(line);
 */
export function previewLines(p: PreviewWire): string[] {
  const rows = [['figure', 'live', 'new', 'change'], ...wireRows(p).map((r) => [p.figures.find((f) => f.name === r.name && f.name.includes('.')) === undefined ? r.label : `  ${r.label}`, number(r.live, r.kind), number(r.next, r.kind), change(r)])];
  return [
    `preview: ${p.requests.toLocaleString('en-US')} recorded requests, ${day(p.window.start_ts)} .. ${day(p.window.end_ts)} UTC, replayed under each config (seed ${p.seed})`,
    ...pad(rows),
    ...p.notes.map((n) => `note: ${n}`),
    `error bound: ${p.error_bound.text}`,
  ];
}

/** A gate's checks as lines: each condition, what was measured, and whether it held. */
export function gateLines(checks: readonly GateCheck[]): string[] {
  return checks.map((c) => {
    const unit = c.condition.measure === 'relative' ? ' %' : c.condition.measure === 'points' ? ' pp' : '';
    const measured = c.measured === null ? 'a rise from 0' : `${Number(c.measured.toFixed(1))}${unit}`;
    return `gate ${c.condition.text}: ${measured} — ${c.holds ? 'holds' : 'FAILS'}`;
  });
}

/**
 * The preview as one JSON object (what `POST …/preview` answers and `--json` prints).
 *
 * @example
 * JSON.stringify(previewJson(result));
 */
export function previewJson(p: PreviewResult): PreviewWire {
  const iso = (ms: number): string => new Date(ms).toISOString();
  return {
    window: { start_ts: iso(p.window.from), end_ts: iso(p.window.to), asked_start_ts: iso(p.window.askedFrom) },
    requests: p.requests,
    seed: p.seed,
    figures: p.rows.map((r) => ({ name: r.name, label: r.label, kind: r.kind, live: r.live, new: r.next, change_pct: r.changePct, delta: r.delta })),
    notes: p.notes,
    error_bound: {
      counts_pct: p.errorBound.countsPct,
      times_pct: p.errorBound.timesPct,
      measured: { lobbies_created_pct: p.errorBound.measured.lobbiesCreatedPct, refused_pct: p.errorBound.measured.refusedPct, wait_p95_pct: p.errorBound.measured.waitP95Pct },
      source: p.errorBound.source,
      text: p.errorBound.text,
    },
    series: { start_ts: iso(p.series.from), step_ms: p.series.stepMs, live: seriesWire(p.series.live), new: seriesWire(p.series.next) },
  };
}
