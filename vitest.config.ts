import { configDefaults, defineConfig } from 'vitest/config';

// One fast-check seed per run, chosen here (in the main process) so every worker shares it and CI
// can print it. Replay a failure with FC_SEED=<seed> npm test.
process.env['FC_SEED'] ??= String((Math.random() * 2 ** 31) | 0);
process.stdout.write(`fast-check seed: FC_SEED=${process.env['FC_SEED']}\n`);

export default defineConfig({
  test: {
    setupFiles: ['test/setup/fast-check.ts'],
    testTimeout: 60_000,
    // Three files at once. Vitest's default on a 2-core machine is one (cores − 1), and most of the
    // suite's time is spent waiting on other processes (servers, HAProxy, containers, S3, tsx
    // starts), not on its own core: on the 2-core machine, one worker took 20 min, three 7.5
    // (bench/RESULTS.md, "npm test time"). Every file makes its own ports, schemas, buckets,
    // containers and images, so files run side by side. `--maxWorkers=N` overrides it.
    maxWorkers: 3,
    // The Swarm files run after every other: each adds a bridge, addresses and namespaces to the
    // host's network, and Chromium aborts a page load in flight on such a change (ERR_NETWORK_CHANGED).
    projects: [
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, 'test/swarm/**'], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'swarm', include: ['test/swarm/**/*.test.ts'], sequence: { groupOrder: 1 } } },
    ],
  },
});
