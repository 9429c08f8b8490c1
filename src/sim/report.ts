/**
 * What a run (or a sweep of runs) looks like to a person: the summary table, the comparison table
 * and the SVG charts. Pure functions of results: the CLI prints and writes them.
 */
import { histogram } from './charts/histogram.js';
import { lineChart } from './charts/line.js';
import { scatterChart } from './charts/scatter.js';
import { escapeXml } from './charts/svg.js';
import type { RunResult } from './world/run.js';

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
/** A duration for people: `120 ms`, `4.2 s`, `12.5 min`, `3.0 h`. */
export const humanDuration = (ms: number): string => {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
};
const ms = humanDuration;
const pct = (n: number): string => `${(n * 100).toFixed(1)} %`;
const money = (n: number): string => n.toFixed(2);

const codes = (counts: Readonly<Partial<Record<string, number>>>): string => {
  const entries = Object.entries(counts).filter((e): e is [string, number] => (e[1] ?? 0) > 0);
  return entries.length === 0 ? 'none' : entries.sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${int(n)}`).join(' · ');
};

const table = (rows: readonly (readonly [string, string])[]): string => {
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
};

/** The summary's first line: scenario, seed, time simulated and, given `wallMs`, the real time it took. */
const headline = (r: RunResult, wallMs?: number): string => {
  const speed = wallMs === undefined ? '' : ` in ${humanDuration(wallMs)} (${int(r.events)} events, ${int(r.events / Math.max(wallMs / 1000, 1e-9))} events/s)`;
  return `Tavern sim: ${r.scenario} (seed ${r.seed}), ${humanDuration(r.metrics.durationMs)} simulated${speed}`;
};

/** The summary's rows: what, and its figures. */
const summaryRows = (r: RunResult): (readonly [string, string])[] => {
  const m = r.metrics;
  return [
      ['players', `${int(m.arrivals.players)} arrived · ${int(m.served)} seated · ${int(m.rejected)} refused · ${int(m.waiting)} waiting`],
      ['refusals', codes(m.rejections)],
      ['seat failures', codes(m.seatFailures)],
      ['time to seat', `p50 ${ms(m.timeToSeatMs.p50)} · p95 ${ms(m.timeToSeatMs.p95)} · p99 ${ms(m.timeToSeatMs.p99)}`],
      ['time to ready', `p50 ${ms(m.timeToReadyMs.p50)} · p95 ${ms(m.timeToReadyMs.p95)} · p99 ${ms(m.timeToReadyMs.p99)}`],
      ['lobby fill', pct(m.fillRatio)],
      ['lobbies', `${int(m.lobbies.created)} created · ${int(m.lobbies.crashed)} crashed · peak ${int(m.lobbies.peakActive)} active`],
      ['lobby-hours', `${m.lobbyHours.toFixed(1)} (${m.idleLobbyHours.toFixed(1)} idle) · cost ${money(m.cost)} (idle ${money(m.idleCost)})`],
      ['CCU', `peak ${int(m.peakCcu)} · mean ${int(m.meanCcu)}`],
      ['ports in use', `peak ${int(m.peakPortsInUse)}`],
      ['verification', `${int(m.verificationCalls)} calls · captcha ${int(m.captchaCalls)} calls`],
      ['trace', `${r.trace.hash} (${int(r.trace.length)} records)`],
      ['invariants', r.violations.length === 0 && r.clockMonotone ? 'ok' : `BROKEN: ${r.violations.slice(0, 3).join('; ')}`],
  ];
};

/**
 * The terminal summary of one run; `wallMs` (real time spent) is shown when given.
 *
 * @example
 * console.log(summaryTable(result, 2300));
 */
export const summaryTable = (r: RunResult, wallMs?: number): string => [headline(r, wallMs), table(summaryRows(r))].join('\n');

/** A per-minute figure as JSON: `null` where there is none (no player became ready that minute). */
const orNull = (n: number): number | null => (Number.isFinite(n) ? n : null);

/**
 * The time series behind the charts, one column per figure, one entry per sample (every minute
 * of virtual time, from 0); waits in ms.
 */
const seriesJson = (r: RunResult): Record<string, unknown> => {
  const column = <T>(pick: (s: RunResult['samples'][number]) => T): T[] => r.samples.map(pick);
  return {
    t_ms: column((s) => s.t),
    ccu: column((s) => s.ccu),
    lobbies_active: column((s) => s.lobbiesActive),
    lobbies_idle: column((s) => s.lobbiesIdle),
    waiting: column((s) => s.waiting),
    seated: column((s) => s.seated),
    ports_in_use: column((s) => s.portsInUse),
    ready_wait_p50_ms: column((s) => orNull(s.waitP50)),
    ready_wait_p95_ms: column((s) => orNull(s.waitP95)),
    ready_wait_p99_ms: column((s) => orNull(s.waitP99)),
  };
};

/**
 * One JSON object per run (`--json`): the metrics, the per-minute series behind the charts, the
 * fill histogram, the trace hash and the invariant checks.
 *
 * @example
 * JSON.stringify(runJson(result))
 */
export const runJson = (r: RunResult): Record<string, unknown> => ({
  scenario: r.scenario,
  seed: r.seed,
  metrics: r.metrics,
  series: seriesJson(r),
  fill_histogram: { bins: fillBins(r).map((b) => [b.from, b.to]), counts: fillBins(r).map((b) => b.count) },
  events: r.events,
  trace_hash: r.trace.hash,
  trace_records: r.trace.length,
  violations: r.violations,
  clock_monotone: r.clockMonotone,
});

/** One run of a sweep: the value it ran with and its result. */
export interface SweepRun {
  readonly value: unknown;
  readonly result: RunResult;
}

/** A sweep's columns, and its rows: one per value. */
const SWEEP_HEAD = ['value', 'seated', 'refused', 'ready p50', 'ready p95', 'ready p99', 'fill', 'lobby-h', 'idle lobby-h', 'cost', 'peak CCU'];

const sweepRows = (runs: readonly SweepRun[]): string[][] =>
  runs.map(({ value, result: { metrics: m } }) => [
    JSON.stringify(value),
    int(m.served),
    int(m.rejected),
    ms(m.timeToReadyMs.p50),
    ms(m.timeToReadyMs.p95),
    ms(m.timeToReadyMs.p99),
    pct(m.fillRatio),
    m.lobbyHours.toFixed(1),
    m.idleLobbyHours.toFixed(1),
    money(m.cost),
    int(m.peakCcu),
  ]);

/**
 * The comparison table of a sweep: one row per value.
 *
 * @example
 * console.log(sweepTable('version.matchmaker.idle_lobbies.max', runs));
 */
export const sweepTable = (path: string, runs: readonly SweepRun[]): string => {
  const head = SWEEP_HEAD;
  const rows = sweepRows(runs);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [`sweep ${path}`, line(head), ...rows.map(line)].join('\n');
};

/** The fill histogram's bins (tenths of a lobby's max players). */
const fillBins = (r: RunResult): { from: number; to: number; count: number }[] =>
  r.fillHistogram.counts.map((count, i) => {
    const { min, max, bins } = r.fillHistogram.spec;
    const w = (max - min) / bins;
    return { from: Math.round((min + i * w) * 1e6) / 1e6, to: Math.min(1, Math.round((min + (i + 1) * w) * 1e6) / 1e6), count };
  });

/** The charts of one run, by file name. */
export const runCharts = (r: RunResult): Record<string, string> => {
  const at = (pick: (s: RunResult['samples'][number]) => number) => r.samples.map((s) => ({ x: s.t, y: pick(s) }));
  const seconds = (v: number): number => v / 1000;
  return {
    'ccu-lobbies.svg': lineChart({
      title: `${r.scenario}: players and lobbies`,
      xLabel: 'time',
      yLabel: 'count',
      xScale: 'duration',
      series: [
        { name: 'CCU', points: at((s) => s.ccu) },
        { name: 'lobbies active', points: at((s) => s.lobbiesActive) },
        { name: 'lobbies idle', points: at((s) => s.lobbiesIdle) },
        { name: 'waiting players', points: at((s) => s.waiting) },
      ],
    }),
    'wait-percentiles.svg': lineChart({
      title: `${r.scenario}: time to a ready lobby`,
      xLabel: 'time',
      yLabel: 'wait (s)',
      xScale: 'duration',
      series: [
        { name: 'p50', points: at((s) => seconds(s.waitP50)).filter((p) => Number.isFinite(p.y)) },
        { name: 'p95', points: at((s) => seconds(s.waitP95)).filter((p) => Number.isFinite(p.y)) },
        { name: 'p99', points: at((s) => seconds(s.waitP99)).filter((p) => Number.isFinite(p.y)) },
      ],
    }),
    'fill-ratio.svg': histogram({
      title: `${r.scenario}: lobby fill (ready lobbies, sampled each minute)`,
      xLabel: 'seats taken / max players',
      yLabel: 'samples',
      bins: fillBins(r),
    }),
  };
};

/**
 * The sweep's chart: time-to-ready p95 against idle lobby-hours, one labelled point per value.
 *
 * @example
 * writeFileSync('sweep.svg', sweepChart('version.matchmaker.idle_lobbies.max', runs));
 */
export const sweepChart = (path: string, runs: readonly SweepRun[]): string =>
  scatterChart({
    title: `sweep ${path}: wait against idle cost`,
    xLabel: 'idle lobby-hours',
    yLabel: 'time to ready p95 (s)',
    connect: true,
    points: runs.map(({ value, result: { metrics: m } }) => ({ x: m.idleLobbyHours, y: m.timeToReadyMs.p95 / 1000, label: String(JSON.stringify(value)) })),
  });

const STYLE = `body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:760px;color:#111}
table{border-collapse:collapse;margin:1rem 0}th,td{padding:.25rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}figure{margin:1.5rem 0}svg{max-width:100%;height:auto}`;

/** A standalone HTML page: no script, no external file; `body` is already HTML. */
const page = (title: string, body: readonly string[]): string =>
  `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${escapeXml(title)}</title>\n<style>${STYLE}</style>\n</head>\n<body>\n${body.join('\n')}\n</body>\n</html>\n`;

const row = (cells: readonly string[], tag: 'td' | 'th', numeric: (i: number) => boolean): string =>
  `<tr>${cells.map((c, i) => `<${tag}${tag === 'td' && numeric(i) ? ' class="n"' : ''}>${escapeXml(c)}</${tag}>`).join('')}</tr>`;

/** An inline SVG chart in a figure (the document's own `<title>` names it). */
const figure = (svg: string): string => `<figure>${svg.trim()}</figure>`;

/**
 * The HTML report `--out` writes for one run: the summary table and the charts, inline.
 *
 * @example
 * writeFileSync('report.html', runReport(result, runCharts(result), 2300));
 */
export const runReport = (r: RunResult, charts: Readonly<Record<string, string>>, wallMs?: number): string =>
  page(`Tavern sim: ${r.scenario}`, [
    `<h1>${escapeXml(headline(r, wallMs))}</h1>`,
    `<table>${summaryRows(r).map(([k, v]) => row([k, v], 'td', () => false)).join('')}</table>`,
    ...Object.values(charts).map(figure),
  ]);

/**
 * The HTML report `--out` writes for a sweep: the comparison table and its chart, inline.
 *
 * @example
 * writeFileSync('report.html', sweepReport('version.matchmaker.idle_lobbies', runs, sweepChart(path, runs)));
 */
export const sweepReport = (path: string, runs: readonly SweepRun[], chart: string): string =>
  page(`Tavern sim: sweep ${path}`, [
    `<h1>${escapeXml(`sweep ${path}`)}</h1>`,
    `<table>${row(SWEEP_HEAD, 'th', () => false)}${sweepRows(runs).map((cells) => row(cells, 'td', (i) => i > 0)).join('')}</table>`,
    figure(chart),
  ]);
