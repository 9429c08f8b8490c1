/**
 * `npm run bench -- fidelity [--minutes N] [--runtime fake|docker] [--keep DIR] [--json]`: the fidelity test's run for longer (default
 * 10 minutes of real time): a real server process driven by the same workload, its recording
 * exported, calibrated and replayed in the simulator, and the figures side by side. The baseline
 * is the server, measured in the same run; the goal is each figure within ±5 % (counts) and ±10 %
 * (percentiles). `--runtime docker` runs the lobbies as real containers (the Docker fidelity
 * test's workload, test/sim/fidelity-docker.test.ts; default `fake`). `--keep DIR` writes the export and the calibrated scenario there (to replay them with
 * `tavern sim`). See bench/fidelity-run.ts.
 */
import { DOCKER_WORKLOAD, fidelityTable, runFidelity, TEST_WORKLOAD, type FidelityRuntime } from './fidelity-run.js';
import { intArg } from './measure.js';

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
  if (json) {
    process.stdout.write(
      `${JSON.stringify({
        minutes,
        runtime,
        namespaces: workload.namespaces,
        finds: result.requests,
        wall_s: Math.round(result.wallMs / 1_000),
        figures: Object.fromEntries(result.rows.map((r) => [r.figure, { server: r.server, sim: r.sim, delta: Number(r.delta.toFixed(4)), tolerance: r.tolerance, within: r.within }])),
        all_within: result.rows.every((r) => r.within),
      })}\n`,
    );
    return;
  }
  const missed = result.rows.filter((r) => !r.within).map((r) => r.label);
  process.stdout.write(
    `${fidelityTable(result.rows)}\n${result.requests} finds over ${minutes} min (${workload.findsPerSecond}/s in each of ${workload.namespaces} namespace${workload.namespaces === 1 ? '' : 's'}, ${runtime} runtime), whole run ${Math.round(result.wallMs / 1_000)} s; ` +
      `${missed.length === 0 ? 'every figure within the goal' : `missed: ${missed.join(', ')}`}\n`,
  );
};
