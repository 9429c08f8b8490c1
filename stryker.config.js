// @ts-check
// Mutation testing of the pure core: `npm run mutation` (all of src/core), or one file or folder with
// `npm run mutation -- --mutate 'src/core/routing/**/*.ts'`. Not part of `npm test`: a whole run takes
// tens of minutes on 2 cores. See README, "Tests".
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: ['src/core/**/*.ts'],
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts' },
  checkers: ['typescript'],
  // The core's own tsconfig: a mutant that does not compile is rejected before any test runs.
  tsconfigFile: 'tsconfig.core.json',
  coverageAnalysis: 'perTest',
  // The machine is shared: one test runner (and one checker) unless asked for more (--concurrency 2).
  concurrency: 1,
  // Re-runs cost only what changed since the last run; the file is local (reports/ is ignored).
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
