import { defineConfig } from 'vitest/config';

// The vitest config Stryker runs (see stryker.config.js): the core's own tests only, never the
// server, storage or simulator suites. fast-check keeps its one-seed-per-run mechanism
// (test/setup/fast-check.ts), but the seed is fixed unless FC_SEED is given, so that a mutant's
// verdict (and the incremental file that remembers it) does not depend on the luck of the draw.
// Each property runs 50 cases instead of the suite's 200 (FC_NUM_RUNS overrides it): a mutant is
// tested by every test that reaches it, and most of the core is reached by the slow model-based and
// persistence properties, so this is what makes a whole-core run fit in an hour on 2 cores. The
// score is then a lower bound of what the suite as CI runs it would catch.
process.env['FC_SEED'] ??= '25';
process.env['FC_NUM_RUNS'] ??= '50';
process.stdout.write(`fast-check seed: FC_SEED=${process.env['FC_SEED']}, runs: FC_NUM_RUNS=${process.env['FC_NUM_RUNS']}\n`);

export default defineConfig({
  test: {
    include: ['test/core/**/*.test.ts'],
    setupFiles: ['test/setup/fast-check.ts', 'test/core/mutation-setup.ts'],
    testTimeout: 60_000,
  },
});
