/**
 * Fidelity, proven (issue 23 item 4): a real server process driven for three minutes of
 * real time (four independent namespaces at once: see `TEST_WORKLOAD`), its recording exported,
 * calibrated and replayed in the simulator (the mean of `REPLAYS` seeds: see there); the figures
 * printed side by side, each within the goal (±5 % counts, ±10 % percentiles). The workload and
 * the comparison live in bench/fidelity-run.ts (`npm run bench -- fidelity` runs the same for
 * longer).
 *
 * One figure is held to less than the goal, for a reason of measurement:
 * - time to seat p50: most seats go to lobbies already ready, so the median is the server's answer
 *   time (its transaction, commit and response: 0–4 ms here). The simulator models it now
 *   (`infrastructure.answer_ms`, calibrated from the waits of the seats the server found ready), but
 *   both sides count whole milliseconds, so the figure is 1 or 2 ms and a difference of one clock
 *   tick is 50–100 %: here ±10 % would ask for equality. It is held to one millisecond (the
 *   table's goal for times: ±10 % or one tick, `CLOCK_TICK_MS`).
 */
import { describe, expect, it } from 'vitest';
import { CLOCK_TICK_MS, fidelityTable, runFidelity, TEST_WORKLOAD } from '../../bench/fidelity-run.js';

/** Above this the server's median seat waited for a lobby start, and the median is not the answer time. */
const ANSWER_TIME_MS = 50;

describe('the simulator against the real server', () => {
  it('replays a recorded real-time workload with every figure within the goal (the answer-time median within a clock tick)', async () => {
    const result = await runFidelity(TEST_WORKLOAD, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(`${fidelityTable(result.rows)}\n(${result.requests} finds in ${TEST_WORKLOAD.durationMs / 1_000} s; whole run ${(result.wallMs / 1_000).toFixed(0)} s)\n`);
    // The workload is big enough to mean something: lobbies come and go, some finds are refused, some seats wait.
    expect(result.server.lobbiesCreated).toBeGreaterThan(3 * TEST_WORKLOAD.lobbyCountMax * TEST_WORKLOAD.namespaces);
    expect(result.server.refused).toBeGreaterThan(0);
    expect(result.server.seatP95Ms).toBeGreaterThan(ANSWER_TIME_MS);
    expect(result.server.idleLobbySeconds).toBeGreaterThan(0);
    expect(result.rows.filter((r) => !r.within).map((r) => `${r.label}: server ${r.server}, simulator ${r.sim}`)).toEqual([]);
    // The median is the answer time on both sides, and the simulator's is modeled (not 0), within a tick of the server's.
    expect(result.server.seatP50Ms).toBeLessThan(ANSWER_TIME_MS);
    expect(result.sim.seatP50Ms).toBeGreaterThan(0);
    expect(Math.abs(result.sim.seatP50Ms - result.server.seatP50Ms)).toBeLessThanOrEqual(CLOCK_TICK_MS);
  }, 600_000);
});
