import { describe, expect, it } from 'vitest';
import { runCharts, runJson, runReport } from '../../src/sim/report.js';
import { builtinScenario } from '../../src/sim/scenario/builtin.js';
import { scaleDemand } from '../../src/sim/scenario/scale.js';
import { runScenario, type RunResult } from '../../src/sim/world/run.js';
import { svgProblem } from './charts/svg-check.js';

const HOUR = 3_600_000;

/** `steady` at a twentieth of its demand for a whole day: cheap, and long enough for hour ticks. */
let day: RunResult | undefined;
const dayRun = async (): Promise<RunResult> => (day ??= await runScenario({ ...scaleDemand(builtinScenario('steady'), 0.05), durationMs: 24 * HOUR }));

/** The x-axis tick labels of a line chart (below the plot, centred). */
const xTicks = (svg: string): string[] => [...svg.matchAll(/<text x="[\d.]+" y="364" text-anchor="middle">([^<]*)<\/text>/g)].map((m) => m[1] ?? '');

describe('run report', () => {
  it('labels a 24 h run\'s time axes in hours, never in raw milliseconds', async () => {
    const charts = runCharts(await dayRun());
    for (const name of ['ccu-lobbies.svg', 'wait-percentiles.svg']) {
      const svg = charts[name] ?? '';
      expect(svgProblem(svg)).toBeUndefined();
      expect(xTicks(svg)).toEqual(['0', '6 h', '12 h', '18 h', '24 h']);
      expect(svg).not.toMatch(/>\d+(\.\d+)?[kMG]<\/text>/);
    }
    expect(charts['ccu-lobbies.svg']).toContain('>waiting players</text>');
  }, 60_000);

  it('--json carries the per-minute series behind the charts, and the mean CCU', async () => {
    const r = await dayRun();
    const json = JSON.parse(JSON.stringify(runJson(r))) as { series: Record<string, (number | null)[]>; metrics: { meanCcu: number; peakCcu: number }; fill_histogram: { counts: number[] } };
    const minutes = 24 * 60 + 1;
    expect(Object.keys(json.series).sort()).toEqual(['ccu', 'lobbies_active', 'lobbies_idle', 'ports_in_use', 'ready_wait_p50_ms', 'ready_wait_p95_ms', 'ready_wait_p99_ms', 'seated', 't_ms', 'waiting']);
    for (const column of Object.values(json.series)) expect(column).toHaveLength(minutes);
    expect(json.series['t_ms']?.[60]).toBe(HOUR);
    expect(json.series['ccu']).toEqual(r.samples.map((s) => s.ccu));
    expect(json.series['ready_wait_p95_ms']?.[0]).toBeNull();
    const ccu = (json.series['ccu'] ?? []).map(Number);
    expect(Math.max(...ccu)).toBeLessThanOrEqual(json.metrics.peakCcu);
    // The mean over time, from the exact step function, lies close to the mean of the minute samples.
    const sampledMean = ccu.reduce((a, b) => a + b, 0) / ccu.length;
    expect(Math.abs(json.metrics.meanCcu - sampledMean)).toBeLessThan(0.02 * json.metrics.peakCcu);
    expect(json.metrics.meanCcu).toBeGreaterThan(0);
    expect(json.fill_histogram.counts.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  }, 60_000);

  it('the HTML report holds the summary table and every chart inline, and loads nothing', async () => {
    const r = await dayRun();
    const charts = runCharts(r);
    const html = runReport(r, charts, 1234);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain(`<h1>Tavern sim: steady (seed 1), 24.0 h simulated in 1.2 s (${r.events.toLocaleString('en-US')} events,`);
    expect(html).toContain('<td>invariants</td><td>ok</td>');
    expect(html).toContain(`<td>CCU</td><td>peak ${r.metrics.peakCcu.toLocaleString('en-US')} · mean`);
    for (const svg of Object.values(charts)) expect(html).toContain(svg.trim());
    expect(html.match(/<svg /g)).toHaveLength(3);
    expect(html).not.toMatch(/<script|<link|src=|href=/);
  }, 60_000);
});
