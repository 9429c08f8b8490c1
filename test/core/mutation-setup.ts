import fc from 'fast-check';

// Loaded after test/setup/fast-check.ts by vitest.stryker.config.ts only (mutation testing): a
// property that fails has caught its mutant, so stop at the first counterexample instead of
// shrinking it (shrinking can outlast Stryker's timeout and turn a kill into a "timeout"). The run's
// seed and number of runs are kept.
fc.configureGlobal({ ...fc.readConfigureGlobal(), endOnFailure: true });
