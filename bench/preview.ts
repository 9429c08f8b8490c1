/**
 * `npm run bench -- preview [--json] [--days 7] [--ccu 1000]`: the deploy preview of a version that
 * halves max players, on a recording made up deterministically (bench/preview-recording.ts) at a
 * mean CCU with a daily cycle, written to SQLite. Each preview runs in a child process of its own
 * (bench/preview-child.ts), once on a 1-day recording (the baseline) and once on the long one, in
 * the same run: the time (goal ≤ 60 s for 7 days at 1,000 CCU) and the peak RSS, whose ratio says
 * whether memory stays flat in the recording's length (streamed: close to 1×).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { openSqlite } from '../src/adapters/sqlite/index.js';
import { writeRecording } from './preview-recording.js';

const run = promisify(execFile);
const CHILD = new URL('./preview-child.js', import.meta.url).pathname;
const NS = 'bench-preview';
const NOW = Date.UTC(2026, 10, 29);

interface Measured {
  readonly days: number;
  readonly requests: number;
  readonly recordMs: number;
  readonly wallMs: number;
  readonly maxRssMb: number;
  readonly figures: readonly { name: string; live: number; new: number; change_pct: number | null }[];
}

async function measure(days: number, ccu: number): Promise<Measured> {
  const dir = await mkdtemp(join(tmpdir(), `tavern-bench-preview-${days}d-`));
  try {
    const stores = openSqlite(dir, { checkpoints: 'inline' });
    const t0 = performance.now();
    await writeRecording(stores.demand, { namespaceId: NS, start: NOW - days * 86_400_000, minutes: days * 1_440, ccu, gameMode: 'default', region: 'local', seed: 42 });
    const recordMs = performance.now() - t0;
    await stores.close();
    const { stdout } = await run(process.execPath, ['--max-semi-space-size=64', CHILD, dir, NS, String(NOW)], { maxBuffer: 64 * 2 ** 20, timeout: 900_000 });
    const out = JSON.parse(stdout) as { wallMs: number; maxRssKb: number; preview: { requests: number; figures: Measured['figures'] } };
    return { days, requests: out.preview.requests, recordMs, wallMs: out.wallMs, maxRssMb: out.maxRssKb / 1024, figures: out.preview.figures };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function previewBench(args: readonly string[]): Promise<void> {
  const { values } = parseArgs({ args: [...args], options: { json: { type: 'boolean' }, days: { type: 'string' }, ccu: { type: 'string' } } });
  const days = Number(values.days ?? 7);
  const ccu = Number(values.ccu ?? 1_000);
  const base = await measure(1, ccu);
  const long = await measure(days, ccu);
  const rssRatio = long.maxRssMb / base.maxRssMb;
  const result = { ccu, base, long, rssRatio, timeGoalMs: 60_000, timeMet: long.wallMs <= 60_000 };
  if (values.json === true) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const row = (m: Measured): string => `| ${m.days} d | ${m.requests.toLocaleString('en-US')} | ${(m.wallMs / 1000).toFixed(1)} s | ${m.maxRssMb.toFixed(0)} MB |`;
  process.stdout.write([
    `deploy preview, ${ccu.toLocaleString('en-US')} CCU mean, max players 8 → 4 (each run: record to SQLite, then preview in a child process)`,
    '| recording | requests | preview (both runs) | peak RSS |',
    '| --- | ---: | ---: | ---: |',
    row(base),
    row(long),
    `peak RSS ${days} d / 1 d: ${rssRatio.toFixed(2)}× (flat: ≈ 1×); ${days}-day preview ${(long.wallMs / 1000).toFixed(1)} s (goal ≤ 60 s: ${result.timeMet ? 'met' : 'NOT met'})`,
    ...long.figures.filter((f) => ['players', 'lobbies', 'lobby_hours', 'wait_p95', 'refused', 'cost'].includes(f.name)).map((f) => `  ${f.name}: ${f.live} → ${f.new} (${f.change_pct ?? 'new'} %)`),
    '',
  ].join('\n'));
}
