/**
 * `npm run bench -- fidelity [--minutes N] [--runtime fake|docker] [--keep DIR] [--json]`: the
 * simulator against the real server, in real time (default 10 minutes): a real server process
 * driven by a synthetic workload, its recording exported, calibrated and replayed in the
 * simulator, and the figures side by side. The baseline is the server, measured in the same run;
 * the goal is each figure within ±5 % (counts) and ±10 % (percentiles).
 *
 * Two workloads (bench/fidelity-run.ts): `--runtime fake` (the default: `TEST_WORKLOAD`, four
 * namespaces on the fake runtime, lobbies ready after a known delay) and `--runtime docker`
 * (`DOCKER_WORKLOAD`, two namespaces whose lobbies are real containers of the node test game
 * server). `--minutes 3` is the run these were once `npm test` files with (test/sim/fidelity*.test.ts:
 * statistical and real-time, they moved here; `npm test` replays a committed recording instead,
 * test/sim/recording). Besides the table, the run checks that its workload meant something (lobbies
 * came and went, finds were refused, seats waited) and exits 1 when a check or a figure missed.
 * `--keep DIR` writes each namespace's export, what calibration read and the calibrated scenario
 * there (to replay them with `tavern sim`, or to refresh test/sim/recording).
 */
import Dockerode from 'dockerode';
import { CLOCK_TICK_MS, DOCKER_WORKLOAD, fidelityTable, runFidelity, TEST_WORKLOAD, type FidelityResult, type FidelityRuntime } from './fidelity-run.js';
import { intArg } from './measure.js';

/** Above this the server's median seat waited for a lobby start, and the median is not the answer time. */
const ANSWER_TIME_MS = 50;

/** What the workload must have produced for its comparison to mean something, per runtime. */
export const workloadChecks = (r: FidelityResult, runtime: FidelityRuntime): { readonly label: string; readonly ok: boolean }[] => {
  const { server, sim, workload: w } = r;
  const common = [
    { label: `lobbies created (${server.lobbiesCreated}) over ${(runtime === 'fake' ? 3 : 5) * w.lobbyCountMax * w.namespaces}`, ok: server.lobbiesCreated > (runtime === 'fake' ? 3 : 5) * w.lobbyCountMax * w.namespaces },
    { label: `some finds refused (${server.refused})`, ok: server.refused > 0 },
  ];
  if (runtime === 'docker') return [...common, { label: `every seat waits for a container start (p50 ${server.seatP50Ms} ms over 100 ms)`, ok: server.seatP50Ms > 100 }];
  return [
    ...common,
    { label: `some seats wait for a lobby start (p95 ${server.seatP95Ms} ms over ${ANSWER_TIME_MS} ms)`, ok: server.seatP95Ms > ANSWER_TIME_MS },
    { label: `idle lobbies (${server.idleLobbySeconds} lobby-seconds)`, ok: server.idleLobbySeconds > 0 },
    // Most seats go to ready lobbies: the median is the answer time on both sides, modeled by the simulator (not 0).
    { label: `the median seat is the answer time (server ${server.seatP50Ms} ms, simulator ${sim.seatP50Ms} ms, within ${CLOCK_TICK_MS} ms)`, ok: server.seatP50Ms < ANSWER_TIME_MS && sim.seatP50Ms > 0 && Math.abs(sim.seatP50Ms - server.seatP50Ms) <= CLOCK_TICK_MS },
  ];
};

/** Containers of fidelity runs left behind (their instance ids begin `fidelity-`): none after a Docker run. */
const leftContainers = async (): Promise<number> => {
  const left = await new Dockerode().listContainers({ all: true, filters: { label: ['tavern.instance'] } });
  return left.filter((c) => c.Labels['tavern.instance']?.startsWith('fidelity-')).length;
};

export const fidelityBench = async (args: readonly string[]): Promise<void> => {
  const minutes = intArg(args, '--minutes', 10, 1, 240);
  const json = args.includes('--json');
  const runtimeAt = args.indexOf('--runtime');
  const runtime = runtimeAt === -1 ? 'fake' : args[runtimeAt + 1];
  if (runtime !== 'fake' && runtime !== 'docker') throw new Error('--runtime needs fake or docker');
  const workload = { ...(runtime === 'docker' ? DOCKER_WORKLOAD : TEST_WORKLOAD), durationMs: minutes * 60_000 };
  const keepAt = args.indexOf('--keep');
  const keep = keepAt === -1 ? undefined : args[keepAt + 1];
  if (keepAt !== -1 && (keep === undefined || keep.startsWith('--'))) throw new Error('--keep needs a directory');
  const result = await runFidelity(workload, json ? undefined : (line) => process.stderr.write(`${line}\n`), keep, runtime satisfies FidelityRuntime);
  const checks = workloadChecks(result, runtime);
  if (runtime === 'docker') {
    const left = await leftContainers();
    checks.push({ label: `every container of the run removed (${left} left)`, ok: left === 0 });
  }
  const allWithin = result.rows.every((r) => r.within);
  process.exitCode = allWithin && checks.every((c) => c.ok) ? 0 : 1;
  if (json) {
    process.stdout.write(
      `${JSON.stringify({
        minutes,
        runtime,
        namespaces: workload.namespaces,
        finds: result.requests,
        wall_s: Math.round(result.wallMs / 1_000),
        figures: Object.fromEntries(result.rows.map((r) => [r.figure, { server: r.server, sim: r.sim, delta: Number(r.delta.toFixed(4)), tolerance: r.tolerance, within: r.within }])),
        all_within: allWithin,
        checks: Object.fromEntries(checks.map((c) => [c.label, c.ok])),
      })}\n`,
    );
    return;
  }
  const missed = result.rows.filter((r) => !r.within).map((r) => r.label);
  process.stdout.write(
    `${fidelityTable(result.rows)}\n${result.requests} finds over ${minutes} min (${workload.findsPerSecond}/s in each of ${workload.namespaces} namespace${workload.namespaces === 1 ? '' : 's'}, ${runtime} runtime), whole run ${Math.round(result.wallMs / 1_000)} s; ` +
      `${missed.length === 0 ? 'every figure within the goal' : `missed: ${missed.join(', ')}`}\n` +
      `${checks.map((c) => `check: ${c.label}: ${c.ok ? 'ok' : 'FAILED'}`).join('\n')}\n`,
  );
};
