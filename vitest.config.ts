import { defineConfig } from 'vitest/config';

// One fast-check seed per run, chosen here (in the main process) so every worker shares it and CI
// can print it. Replay a failure with FC_SEED=<seed> npm test.
// Each project reads this file again in the same process: the seed is printed the first time only.
process.env['FC_SEED'] ??= String((Math.random() * 2 ** 31) | 0);
const SEED_SHOWN = Symbol.for('tavern.fast-check-seed-shown');
const shown = globalThis as { [SEED_SHOWN]?: true };
if (shown[SEED_SHOWN] === undefined) {
  shown[SEED_SHOWN] = true;
  process.stdout.write(`fast-check seed: FC_SEED=${process.env['FC_SEED']}\n`);
}

/**
 * Tests that compare a real server against the simulator in real time. They run after the rest of
 * the suite, together: alongside the CPU-heavy files (the chaos test's kill -9 loops), the
 * server's timers ran late and its figures left the simulator's (lobbies created 92 against 86.8,
 * where alone it gives 88 against 87.6).
 */
const REAL_TIME = ['test/sim/fidelity.test.ts', 'test/sim/fidelity-docker.test.ts'];

export default defineConfig({
  test: {
    setupFiles: ['test/setup/fast-check.ts'],
    testTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: REAL_TIME } },
      { extends: true, test: { name: 'real-time', include: REAL_TIME, sequence: { groupOrder: 1 } } },
    ],
  },
});
