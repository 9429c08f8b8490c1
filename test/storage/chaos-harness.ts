/**
 * The chaos test's run and verdict (test/storage/chaos*.test.ts, one file per store family so
 * they run side by side): `RESTARTS` kill -9s of a real server process at random moments while
 * clients find, join, connect, disconnect and close over HTTP (`bench/chaos-run.ts`), then every
 * violation counted (`bench/chaos-check.ts`). `npm run bench -- chaos` runs 200 restarts per store.
 */
import { expect } from 'vitest';
import { runChaos, type ChaosReport, type ChaosStore } from '../../bench/chaos-run.js';
import { compiledServer } from './chaos-server.js';
import { DATABASE_URL, postgresProblem } from './postgres-harness.js';

export const RESTARTS = 20;

/** Why PostgreSQL cannot be used, or undefined when it answers. */
export const problem = await postgresProblem();

/**
 * One chaos run against `store`, its report printed.
 *
 * @example
 * expectSound(await chaos('sqlite'));
 */
export const chaos = async (store: ChaosStore): Promise<ChaosReport> => {
  if (store !== 'sqlite' && problem !== undefined) throw new Error(`PostgreSQL is unreachable at ${DATABASE_URL}: ${problem}`);
  const seed = Number(process.env['FC_SEED'] ?? 1);
  const report = await runChaos({
    store, restarts: RESTARTS, clients: 4, serverArgs: [compiledServer()], databaseUrl: DATABASE_URL,
    seed, baselineMs: 0, pauseMs: [100, 500], requestTimeoutMs: 5_000,
  });
  const { violations: v, outcomes: o } = report;
  process.stdout.write(
    `chaos ${store} (seed ${seed}): ${report.restarts} kill -9, ${report.requests} requests (${o.acked} acknowledged, ${o.refused} refused, ` +
      `${o.unsent} unsent, ${o.unknown} unanswered), ${report.seats} seats; lost ${v.lost}, duplicated ${v.duplicated}, over capacity ${v.overCapacity}, ` +
      `port conflicts ${v.portConflicts}, seats in stopped lobbies ${v.stoppedSeats}, phantom ${v.phantom}, inconsistent ${v.inconsistent}; ${(report.wallMs / 1000).toFixed(1)} s\n`,
  );
  return report;
};

/**
 * No violation, every restart done, and a run worth judging: seats were acknowledged, and
 * connects, disconnects or closes too.
 *
 * @example
 * expectSound(await chaos('postgres'));
 */
export const expectSound = (report: ChaosReport): void => {
  expect(report.violations).toEqual({ lost: 0, duplicated: 0, overCapacity: 0, portConflicts: 0, stoppedSeats: 0, phantom: 0, inconsistent: 0 });
  expect(report.restarts).toBe(RESTARTS);
  expect(report.seats).toBeGreaterThan(RESTARTS);
  expect(report.outcomes.acked).toBeGreaterThan(report.seats);
};
