import { afterEach, describe, expect, it, vi } from 'vitest';
import { report, type Run, type Server } from '../../bench/http-report.js';

const run = (server: Server, round: number, rps: number, p99: number, cpu: number): Run => ({
  server, round, concurrency: 64, requests: rps * 5, seconds: 5, rps, p50_ms: 1, p90_ms: p99 / 2, p99_ms: p99, max_ms: p99 * 2,
  errors: 0, errorKinds: {}, cpu_us_per_request: cpu, window_us: [0, 5e6],
});

/** What `report` printed as JSON. */
const printed = (runs: readonly Run[]): Record<string, unknown> => {
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    report(runs, { json: true, clients: [64], servers: ['tavern', 'bare', 'colyseus'], rounds: 3, settings: {} });
  } finally {
    spy.mockRestore();
  }
  return JSON.parse(out) as Record<string, unknown>;
};

describe('the http benchmark report', () => {
  afterEach(() => vi.restoreAllMocks());

  it('gives Tavern over bare per round and their medians, and says whether each target is met', () => {
    const runs = [
      run('tavern', 1, 10_000, 8, 60), run('bare', 1, 25_000, 5, 15), run('colyseus', 1, 3_000, 40, 200),
      run('tavern', 2, 12_000, 9, 55), run('bare', 2, 20_000, 4, 14), run('colyseus', 2, 3_500, 40, 190),
      run('tavern', 3, 11_000, 12, 58), run('bare', 3, 30_000, 5, 16), run('colyseus', 3, 4_000, 40, 210),
    ];
    const r = printed(runs);
    expect(r['bare_shares']).toEqual([0.4, 0.6, 11_000 / 30_000]);
    expect(r['bare_share']).toBe(0.4);
    expect(r['bare_p99_ratios']).toEqual([1.6, 2.25, 2.4]);
    expect(r['bare_p99_ratio']).toBe(2.25);
    expect(r['bare_cpu_shares']).toEqual([15 / 60, 14 / 55, 16 / 58]);
    expect(r['bare_rps']).toBe(25_000);
    // The median of the rounds' ratios (3.33, 3.43, 2.75), not the ratio of the medians.
    expect(r['ratio']).toBeCloseTo(10_000 / 3_000);
    expect(r['targets']).toMatchObject({ ratio: 3, bare_share: 0.5, bare_p99_ratio: 2, ratio_ok: true, p99_ok: true, bare_share_ok: false, bare_p99_ok: false });
  });

  it('without a bare run, there is no bare figure or target', () => {
    const r = printed([run('tavern', 1, 10_000, 8, 60), run('colyseus', 1, 3_000, 40, 200)]);
    expect(r).not.toHaveProperty('bare_share');
    expect(r['targets']).not.toHaveProperty('bare_share_ok');
    expect(r['targets']).toMatchObject({ ratio_ok: true });
  });
});
