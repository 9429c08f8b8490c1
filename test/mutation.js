// @ts-check
// npm run mutation [-- <file or folder under src/core> ...] [<stryker run options>]
//
// Runs Stryker (stryker.config.js) on all of src/core, or on the files and folders named (passed to
// the config in TAVERN_MUTATE). Every run is incremental: Stryker reuses the verdicts in
// reports/mutation/incremental.json that no change to the code or the tests can affect, and keeps
// the results of the files a partial run leaves out.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import process from 'node:process';

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

const run = spawnSync('npx', ['stryker', 'run', ...options], {
  stdio: 'inherit',
  env: { ...process.env, TAVERN_MUTATE: targets.join('\n') },
});
process.exit(run.status ?? 1);
