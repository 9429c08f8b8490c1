/**
 * Fidelity, proven (issue 23 item 4): a real server process driven for two and a half minutes of
 * real time, its recording exported, calibrated and replayed in the simulator; every figure within
 * the goal (±5 % counts, ±10 % percentiles), printed side by side. The workload and the comparison
 * live in bench/fidelity-run.ts (`npm run bench -- fidelity` runs the same for longer).
 */
import { describe, expect, it } from 'vitest';
import { fidelityTable, runFidelity, TEST_WORKLOAD } from '../../bench/fidelity-run.js';

describe('the simulator against the real server', () => {
  it('replays a recorded real-time workload with every figure within the goal', async () => {
    const result = await runFidelity(TEST_WORKLOAD, (line) => process.stdout.write(`${line}\n`));
    process.stdout.write(`${fidelityTable(result.rows)}\n(${result.requests} finds in ${TEST_WORKLOAD.durationMs / 1_000} s; whole run ${(result.wallMs / 1_000).toFixed(0)} s)\n`);
    // The workload is big enough to mean something: lobbies come and go, some finds are refused, some seats wait.
    expect(result.server.lobbiesCreated).toBeGreaterThan(TEST_WORKLOAD.lobbyCountMax);
    expect(result.server.refused).toBeGreaterThan(0);
    expect(result.server.seatP95Ms).toBeGreaterThan(0);
    expect(result.server.idleLobbySeconds).toBeGreaterThan(0);
    expect(result.rows.filter((r) => !r.within).map((r) => `${r.label}: server ${r.server}, simulator ${r.sim}`)).toEqual([]);
  }, 600_000);
});
