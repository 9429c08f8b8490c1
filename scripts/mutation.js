// @ts-check
// npm run mutation [-- <file or folder under src/core> ...] [<stryker run options>]
//
// Runs Stryker (stryker.config.js) on all of src/core, or on the files and folders named. Every run is
// incremental: Stryker reuses the verdicts in reports/mutation/incremental.json that no change to the
// code or the tests can affect. Stryker rewrites that file with the results of the current run only,
// so after a run on a part this script puts back the results of the other files, with their test ids
// renumbered to the new run's, so that a later run on another part or on the whole core reuses them.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';

const incrementalFile = 'reports/mutation/incremental.json';

const targets = [];
const options = [];
for (const arg of process.argv.slice(2)) {
  if (/^src\/core(\/|$)/.test(arg)) {
    if (!existsSync(arg)) {
      process.stderr.write(`npm run mutation: ${arg} does not exist\n`);
      process.exit(2);
    }
    targets.push(arg.replace(/\/+$/, ''));
  } else {
    options.push(arg);
  }
}

const read = (file) => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined);
const before = targets.length > 0 ? read(incrementalFile) : undefined;

const run = spawnSync('npx', ['stryker', 'run', ...options], {
  stdio: 'inherit',
  env: { ...process.env, TAVERN_MUTATE: targets.join('\n') },
});

const after = before === undefined ? undefined : read(incrementalFile);
if (before !== undefined && after !== undefined) {
  const inTargets = (file) => targets.some((t) => file === t || file.startsWith(`${t}/`));
  const key = (file, name) => `${file}\0${name}`;
  const ids = new Map();
  let next = 0;
  for (const [file, testFile] of Object.entries(after.testFiles)) {
    for (const test of testFile.tests) {
      ids.set(key(file, test.name), test.id);
      next = Math.max(next, Number(test.id) + 1);
    }
  }
  // A test of the earlier run that is gone keeps a definition (under a fresh id): the next run then
  // sees that the test which killed or covered a mutant no longer exists and tests that mutant again.
  const renumber = new Map();
  for (const [file, testFile] of Object.entries(before.testFiles)) {
    for (const test of testFile.tests) {
      let id = ids.get(key(file, test.name));
      if (id === undefined) {
        id = String(next++);
        ids.set(key(file, test.name), id);
        (after.testFiles[file] ??= { source: testFile.source, tests: [] }).tests.push({ ...test, id });
      }
      renumber.set(test.id, id);
    }
  }
  const map = (list) => list?.map((id) => renumber.get(id) ?? id);
  for (const [file, result] of Object.entries(before.files)) {
    if (inTargets(file) || file in after.files) continue;
    after.files[file] = {
      ...result,
      mutants: result.mutants.map((m) => ({ ...m, coveredBy: map(m.coveredBy), killedBy: map(m.killedBy) })),
    };
  }
  writeFileSync(incrementalFile, JSON.stringify(after));
}
process.exit(run.status ?? 1);
