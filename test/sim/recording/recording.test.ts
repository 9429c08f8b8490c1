/**
 * A real server's recording, calibrated and replayed: the deterministic half of the fidelity run
 * (`npm run bench -- fidelity`, which compares the simulator with a real server in real time and
 * statistically). The files here are what one fidelity run kept of its first namespace
 * (`--keep DIR`, fake runtime, three minutes): the demand export (`demand.jsonl`, as
 * `tavern demand export` writes it), the observed endpoint's answer (`observed.json`) and the
 * namespace's version (`version.json`), what `tavern sim calibrate` reads. Calibrating them and
 * replaying the export with `tavern sim <scenario> --recorded demand.jsonl` (seeded) must give
 * exactly `golden.json`: the calibrated scenario, the calibration's report, and the replay's
 * metrics and trace hash. Any change in calibration, in the recorded-demand reader or in the rules
 * fails here. After an intended change, regenerate with
 * `UPDATE_GOLDEN=1 npx vitest run test/sim/recording` and review the diff; to record anew, see
 * bench/RESULTS.md ("npm test time").
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { simCommand } from '../../../src/sim/cli.js';
import { calibrateScenario, type Observed, type RegionDescription } from '../../../src/sim/scenario/calibrate.js';

const file = (name: string): string => new URL(`./${name}`, import.meta.url).pathname;
const json = (name: string): unknown => JSON.parse(readFileSync(file(name), 'utf8'));

/** The seed the fidelity run gave its first namespace (`TEST_WORKLOAD.seed`). */
const SEED = 23;

interface Golden {
  readonly calibration: { readonly scenario: unknown; readonly report: readonly string[] };
  readonly replay: Record<string, unknown>;
}

const dir = mkdtempSync(join(tmpdir(), 'tavern-recording-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Calibrates from the recording as `tavern sim calibrate` does from a server. */
const calibrate = (): { scenario: Record<string, unknown>; report: readonly string[] } => {
  const observed = json('observed.json') as Observed & { lobby_count_max: number; regions_info: RegionDescription[] };
  return calibrateScenario({ version: json('version.json'), observed, regions: observed.regions_info, lobbyCountMax: observed.lobby_count_max, name: 'fidelity', seed: SEED });
};

/** `tavern sim <scenario> --recorded demand.jsonl --json`: its exit code and the figures of its one JSON object that do not depend on the machine. */
const replay = async (scenario: unknown): Promise<{ code: number; figures: Record<string, unknown> }> => {
  const path = join(dir, 'scenario.json');
  writeFileSync(path, JSON.stringify(scenario));
  let out = '';
  let err = '';
  const code = await simCommand([path, '--recorded', file('demand.jsonl'), '--json'], { stdout: (t) => (out += t), stderr: (t) => (err += t), tty: false, cwd: dir, now: () => 0 });
  if (code !== 0) throw new Error(`tavern sim exited ${code}: ${err}`);
  const all = JSON.parse(out) as Record<string, unknown>;
  const { metrics, trace_hash, trace_records, events, violations, clock_monotone, seed } = all;
  return { code, figures: { seed, metrics, trace_hash, trace_records, events, violations, clock_monotone } };
};

describe('a recorded real-server run, calibrated and replayed', () => {
  it('gives exactly its golden calibration and replay', async () => {
    const calibration = calibrate();
    const { figures } = await replay(calibration.scenario);
    const golden = file('golden.json');
    if (process.env['UPDATE_GOLDEN'] === '1' || !existsSync(golden)) {
      if (process.env['CI'] !== undefined && !existsSync(golden)) throw new Error('test/sim/recording/golden.json is missing');
      writeFileSync(golden, `${JSON.stringify({ calibration: { scenario: calibration.scenario, report: calibration.report }, replay: figures }, null, 2)}\n`);
    }
    const expected = json('golden.json') as Golden;
    // JSON both sides: the scenario as `tavern sim calibrate` writes it.
    expect(JSON.parse(JSON.stringify(calibration.scenario))).toEqual(expected.calibration.scenario);
    expect(calibration.report).toEqual(expected.calibration.report);
    expect(figures).toEqual(expected.replay);
  });

  it('is a recording worth replaying: lobbies come and go, some finds are refused, some seats wait for a start', () => {
    const { replay: r } = json('golden.json') as Golden;
    const m = r['metrics'] as { served: number; rejected: number; lobbies: { created: number }; timeToReadyMs: { p50: number; p95: number } };
    expect(r['violations']).toEqual([]);
    expect(m.lobbies.created).toBeGreaterThan(30);
    expect(m.rejected).toBeGreaterThan(0);
    expect(m.served).toBeGreaterThan(m.lobbies.created);
    expect(m.timeToReadyMs.p95).toBeGreaterThan(100 * m.timeToReadyMs.p50);
    // Every request of the export was replayed, refusals marked as the server refused them.
    const lines = readFileSync(file('demand.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    const refused = lines.filter((l) => (JSON.parse(l) as { refused?: boolean }).refused === true).length;
    expect(refused).toBeGreaterThan(0);
    expect(m.served + m.rejected).toBeLessThanOrEqual(lines.reduce((n, l) => n + (JSON.parse(l) as { party: number }).party, 0));
  });
});
