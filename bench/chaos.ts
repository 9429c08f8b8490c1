/**
 * `npm run bench -- chaos [--json] [--restarts 200] [--stores sqlite,postgres,postgres-pair]
 * [--clients 4] [--seed N] [--baseline 5000] [--pause 100,500]`: histories under faults. For
 * each store, real servers (the compiled `src/server/main.js`, fake runtime) take finds, joins,
 * connects, disconnects and closes from `--clients` clients while one of them is `kill -9`ed and
 * restarted `--restarts` times at random moments (`chaos-run.ts`); then the history is judged
 * against the store (`chaos-check.ts`). Goal: 0 lost, 0 duplicated, 0 over capacity, 0 port
 * conflicts (and 0 of the other violations).
 *
 * Baseline: the same clients against the same servers for `--baseline` ms before the first kill;
 * the table gives the acknowledged requests per second under kills against it. PostgreSQL:
 * `DATABASE_URL` (default the local trust-auth server), in a fresh schema dropped afterwards.
 * `--json` prints one object. Any violation fails the benchmark.
 */
import { fileURLToPath } from 'node:url';
import type { Violations } from './chaos-check.js';
import { runChaos, type ChaosReport, type ChaosStore } from './chaos-run.js';
import { intArg, table, value } from './measure.js';

const STORES: readonly ChaosStore[] = ['sqlite', 'postgres', 'postgres-pair'];
/** `src/server/main.js` next to this file in the compiled bench tree. */
const MAIN = fileURLToPath(new URL('../src/server/main.js', import.meta.url));

const VIOLATIONS: readonly (readonly [keyof Violations, string])[] = [
  ['lost', 'lost'], ['duplicated', 'dup'], ['overCapacity', 'over cap'], ['portConflicts', 'port conflicts'],
  ['stoppedSeats', 'stopped seats'], ['phantom', 'phantom'], ['inconsistent', 'inconsistent'],
];

const total = (v: Violations): number => VIOLATIONS.reduce((n, [k]) => n + v[k], 0);

export const chaosBench = async (args: readonly string[]): Promise<void> => {
  const json = args.includes('--json');
  const stores = (value(args, '--stores') ?? STORES.join(',')).split(',').map((s) => {
    if (!(STORES as readonly string[]).includes(s)) throw new RangeError(`--stores lists ${STORES.join(', ')}, got ${s}`);
    return s as ChaosStore;
  });
  const [min = 100, max = 500] = (value(args, '--pause') ?? '100,500').split(',').map(Number);
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min || max > 60_000) throw new RangeError('--pause is min,max in ms');
  const settings = {
    restarts: intArg(args, '--restarts', 200, 1, 10_000),
    clients: intArg(args, '--clients', 4, 1, 64),
    seed: intArg(args, '--seed', (Math.random() * 2 ** 31) | 0, 0, 2 ** 31),
    baselineMs: intArg(args, '--baseline', 5_000, 0, 600_000),
    pauseMs: [min, max] as const,
  };
  const log = (line: string): void => {
    if (!json) process.stderr.write(`${line}\n`);
  };
  log(`chaos: seed ${settings.seed}, ${settings.restarts} restarts per store, ${settings.clients} clients`);
  const reports: ChaosReport[] = [];
  for (const store of stores) {
    reports.push(await runChaos({
      store, ...settings, serverArgs: [MAIN], requestTimeoutMs: 5_000, log,
      databaseUrl: process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
    }));
  }

  if (json) {
    process.stdout.write(`${JSON.stringify({ bench: 'chaos', goal: 'every violation count 0', ...settings, runs: reports })}\n`);
  } else {
    const rate = (n: number | undefined): string => (n === undefined ? '-' : n.toFixed(1));
    process.stdout.write(`${table(
      ['store', 'restarts', 'requests', 'acked', 'refused', 'unsent', 'unanswered', 'seats', ...VIOLATIONS.map(([, h]) => h), 'restart ms (median/max)', 'acked/s no kills', 'acked/s kills', 'ratio', 'wall s'],
      reports.map((r) => [
        r.store, String(r.restarts), String(r.requests), String(r.outcomes.acked), String(r.outcomes.refused), String(r.outcomes.unsent), String(r.outcomes.unknown), String(r.seats),
        ...VIOLATIONS.map(([k]) => String(r.violations[k])),
        `${r.restartMs.median.toFixed(0)}/${r.restartMs.max.toFixed(0)}`,
        rate(r.baselineAckedPerS), rate(r.chaosAckedPerS),
        r.baselineAckedPerS === undefined || r.baselineAckedPerS === 0 ? '-' : `${(r.chaosAckedPerS / r.baselineAckedPerS).toFixed(2)}x`,
        (r.wallMs / 1000).toFixed(1),
      ]),
    )}\n`);
    for (const r of reports) process.stdout.write(`${r.store} refusals: ${JSON.stringify(r.codes)}\n`);
  }
  const failed = reports.filter((r) => total(r.violations) > 0);
  if (failed.length > 0) throw new Error(`violations in ${failed.map((r) => r.store).join(', ')} (seed ${settings.seed})`);
};
