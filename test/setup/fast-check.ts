import fc from 'fast-check';

// Every property in the suite uses the run's seed (see vitest.config.ts) so a failure can be replayed.
const seed = Number(process.env['FC_SEED']);
fc.configureGlobal({
  seed,
  numRuns: Number(process.env['FC_NUM_RUNS'] ?? 200),
});
