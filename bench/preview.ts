/**
 * `npm run bench -- preview [--json] [--days 7] [--ccu 1000]`: the deploy preview of a version that
 * halves max players, on a recording made up deterministically (bench/preview-recording.ts) at a
 * mean CCU with a daily cycle, written to SQLite. Each preview runs in a child process of its own
 * (bench/preview-child.ts), in the same run: a 1-day recording with the replays one after the other
 * in one thread (the baseline of the threads' speed-up), the same with the replays in two worker
 * threads (the baseline of the long one), and the long recording: its time (goal ≤ 60 s for 7 days
 * at 1,000 CCU) and its peak RSS, whose ratio to the 1-day one's says whether memory stays flat in
 * the recording's length (goal ≤ 1.2×). The children run with V8's default heap settings, as a
 * server or the CLI runs a preview: the runner's `--max-semi-space-size=64` gives each of a
 * preview's three threads up to 128 MB of young generation, which its peak RSS would measure
 * instead of the preview. The load average is printed before and after: the figures are only
 * comparable on a quiet machine.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { openSqlite } from '../src/adapters/sqlite/index.js';
import { writeRecording } from './preview-recording.js';

const run = promisify(execFile);
const CHILD = new URL('./preview-child.js', import.meta.url).pathname;
const NS = 'bench-preview';
const NOW = Date.UTC(2026, 10, 29);
const TIME_GOAL_MS = 60_000;
const RSS_GOAL = 1.2;

interface Measured {
  readonly days: number;
  readonly threads: boolean;
  readonly requests: number;
  readonly recordMs: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly maxRssMb: number;
  readonly figures: readonly { name: string; live: number; new: number; change_pct: number | null }[];
}

/** Records `days` into a fresh SQLite store, then previews it in a child for each threads setting. */
async function measure(days: number, ccu: number, threads: readonly boolean[]): Promise<Measured[]> {
  const dir = await mkdtemp(join(tmpdir(), `tavern-bench-preview-${days}d-`));
  try {
    const stores = openSqlite(dir, { checkpoints: 'inline' });
    const t0 = performance.now();
    await writeRecording(stores.demand, { namespaceId: NS, start: NOW - days * 86_400_000, minutes: days * 1_440, ccu, gameMode: 'default', region: 'local', seed: 42 });
    const recordMs = performance.now() - t0;
    await stores.close();
    const out: Measured[] = [];
    for (const t of threads) {
      const { stdout } = await run(process.execPath, [CHILD, dir, NS, String(NOW), ...(t ? [] : ['one-thread'])], { maxBuffer: 64 * 2 ** 20, timeout: 900_000 });
      const o = JSON.parse(stdout) as { wallMs: number; cpuMs: number; maxRssKb: number; preview: { requests: number; figures: Measured['figures'] } };
      out.push({ days, threads: t, requests: o.preview.requests, recordMs, wallMs: o.wallMs, cpuMs: o.cpuMs, maxRssMb: o.maxRssKb / 1024, figures: o.preview.figures });
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const load = (): string => loadavg().map((l) => l.toFixed(2)).join(', ');

export async function previewBench(args: readonly string[]): Promise<void> {
  const { values } = parseArgs({ args: [...args], options: { json: { type: 'boolean' }, days: { type: 'string' }, ccu: { type: 'string' } } });
  const days = Number(values.days ?? 7);
  const ccu = Number(values.ccu ?? 1_000);
  const loadBefore = load();
  const [one, base] = (await measure(1, ccu, [false, true])) as [Measured, Measured];
  const [long] = (await measure(days, ccu, [true])) as [Measured];
  const loadAfter = load();
  const rssRatio = long.maxRssMb / base.maxRssMb;
  const sameFigures = JSON.stringify(one.figures) === JSON.stringify(base.figures);
  const result = {
    ccu, loadBefore, loadAfter, one, base, long, rssRatio, rssGoal: RSS_GOAL, rssMet: rssRatio <= RSS_GOAL,
    threadsSpeedup: one.wallMs / base.wallMs, timeRatio: long.wallMs / base.wallMs, requestsRatio: long.requests / base.requests,
    timeGoalMs: TIME_GOAL_MS, timeMet: long.wallMs <= TIME_GOAL_MS, sameFigures,
  };
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const row = (m: Measured): string =>
    `| ${m.days} d | ${m.threads ? '2 worker threads' : 'one thread'} | ${m.requests.toLocaleString('en-US')} | ${s(m.wallMs)} | ${s(m.cpuMs)} | ${m.maxRssMb.toFixed(0)} MB |`;
  process.stdout.write([
    `deploy preview, ${ccu.toLocaleString('en-US')} CCU mean, max players 8 → 4 (each run: record to SQLite, then preview in a child process); load average before: ${loadBefore}`,
    '| recording | replays | requests | preview (both runs) | CPU (all threads) | peak RSS |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    row(one),
    row(base),
    row(long),
    `${days}-day preview: ${s(long.wallMs)} (goal ≤ 60 s: ${result.timeMet ? 'met' : 'NOT met'}); ${result.timeRatio.toFixed(2)}× the 1-day time for ${result.requestsRatio.toFixed(2)}× the requests`,
    `peak RSS ${days} d / 1 d: ${rssRatio.toFixed(2)}× (goal ≤ ${RSS_GOAL}×: ${result.rssMet ? 'met' : 'NOT met'})`,
    `worker threads: ${result.threadsSpeedup.toFixed(2)}× faster than one thread on 1 d; same figures: ${sameFigures ? 'yes' : 'NO'}`,
    ...long.figures.filter((f) => ['players', 'lobbies', 'lobby_hours', 'wait_p95', 'refused', 'cost'].includes(f.name)).map((f) => `  ${f.name}: ${f.live} → ${f.new} (${f.change_pct ?? 'new'} %)`),
    `load average after: ${loadAfter}`,
    '',
  ].join('\n'));
}
