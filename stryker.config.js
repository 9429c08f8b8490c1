// @ts-check
// Mutation testing of the pure core. Run it with `npm run mutation` (all of src/core) or
// `npm run mutation -- src/core/routing` (files or folders under src/core; test/mutation.js passes
// them here in TAVERN_MUTATE). Not part of `npm test`: a whole run takes tens of minutes on 2 cores.
// See README, "Tests".
import process from 'node:process';

const targets = (process.env['TAVERN_MUTATE'] ?? '').split('\n').filter((t) => t !== '');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: targets.length === 0 ? ['src/core/**/*.ts'] : targets.map((t) => (t.endsWith('.ts') ? t : `${t}/**/*.ts`)),
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts' },
  checkers: ['typescript'],
  // The core's own tsconfig: a mutant that does not compile is rejected before any test runs.
  tsconfigFile: 'tsconfig.core.json',
  coverageAnalysis: 'perTest',
  // The machine is shared: one test runner (and one checker) unless asked for more (--concurrency 2).
  concurrency: 1,
  // Re-runs cost only what changed since the last run. One file for the whole core: a run on a part
  // keeps the other files' results in it. reports/ is ignored by git.
  incremental: true,
  incrementalFile: 'reports/mutation/incremental.json',
  // A busy machine runs a mutant's tests slower than the dry run did: allow 3x (plus 10 s) before a
  // mutant counts as an endless loop ("timeout"), so a slow moment is not scored as a kill.
  timeoutFactor: 3,
  timeoutMS: 10_000,
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false },
  thresholds: { high: 90, low: 80, break: null },
};
