import { defineConfig } from 'vitest/config';

// One fast-check seed per run, chosen here (in the main process) so every worker shares it and CI
// can print it. Replay a failure with FC_SEED=<seed> npm test.
process.env['FC_SEED'] ??= String((Math.random() * 2 ** 31) | 0);
process.stdout.write(`fast-check seed: FC_SEED=${process.env['FC_SEED']}\n`);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup/fast-check.ts'],
    testTimeout: 60_000,
  },
});
