/**
 * Fidelity, proven (issue 23 item 4): a real server process driven for two and a half minutes of
 * real time, its recording exported, calibrated and replayed in the simulator; the figures printed
 * side by side, each within the goal (±5 % counts, ±10 % percentiles). The workload and the
 * comparison live in bench/fidelity-run.ts (`npm run bench -- fidelity` runs the same for longer).
 *
 * One figure is a known gap, checked for being exactly that gap: most seats go to lobbies already
 * ready, so the median time to a seat is the server's own answer time (a find's transaction and
 * commit, 1–3 ms here), which the simulator does not model (its services answer in zero virtual
 * time). No tolerance can hold a 1–3 ms figure against 0.
 */
import { describe, expect, it } from 'vitest';
import { fidelityTable, runFidelity, TEST_WORKLOAD } from '../../bench/fidelity-run.js';

/** Above this the server's median seat waited for a lobby start, and the gap is not the answer time. */
const ANSWER_TIME_MS = 50;

describe('the simulator against the real server', () => {
  it('replays a recorded real-time workload with every figure within the goal (but the answer time)', async () => {
    const result = await runFidelity(TEST_WORKLOAD, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(`${fidelityTable(result.rows)}\n(${result.requests} finds in ${TEST_WORKLOAD.durationMs / 1_000} s; whole run ${(result.wallMs / 1_000).toFixed(0)} s)\n`);
    // The workload is big enough to mean something: lobbies come and go, some finds are refused, some seats wait.
    expect(result.server.lobbiesCreated).toBeGreaterThan(3 * TEST_WORKLOAD.lobbyCountMax);
    expect(result.server.refused).toBeGreaterThan(0);
    expect(result.server.seatP95Ms).toBeGreaterThan(ANSWER_TIME_MS);
    expect(result.server.idleLobbySeconds).toBeGreaterThan(0);
    expect(result.rows.filter((r) => !r.within && r.figure !== 'seatP50Ms').map((r) => `${r.label}: server ${r.server}, simulator ${r.sim}`)).toEqual([]);
    // The known gap and nothing else: both medians are seats in ready lobbies.
    expect(result.sim.seatP50Ms).toBe(0);
    expect(result.server.seatP50Ms).toBeLessThan(ANSWER_TIME_MS);
  }, 600_000);
});
