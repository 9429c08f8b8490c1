/**
 * `npm run bench -- limits [--json] [--rounds 2] [--finds 3000] [--warmup 1500]`: what the rate
 * limiter costs a find, counted in instructions rather than seconds, so the figure holds on a
 * machine whose speed moves by 2× from one minute to the next.
 *
 * The compiled server (SQLite, fake runtime) runs under valgrind's callgrind with counting off; a
 * client sends `--warmup` finds (JIT, caches, the first lobbies), then counting is switched on
 * (`callgrind_control -i on`, counters zeroed), `--finds` more finds are sent, and the counters are
 * dumped: every instruction the server ran for them, on every thread (the HTTP edge, the limiter,
 * the core, SQLite's group commits and its checkpointer), divided by the finds. Rate limits off and
 * on at their defaults, alternating, `--rounds` times each; each find from its own address (as in
 * `npm run bench -- http --servers tavern,tavern-no-limits`: every find counted, none refused, the
 * limiter's worst case for memory). Ratio: the medians' on / off. Needs `valgrind` (Debian's).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTavern, type TavernServer } from './http-tavern.js';
import { intArg, table } from './measure.js';

type Mode = 'off' | 'on';

/** Sends finds for addresses `from..to-1` (8 at a time, kept alive); throws on any answer but 200. */
const sendFinds = async (server: TavernServer, from: number, to: number): Promise<void> => {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const body = Buffer.from(JSON.stringify({ game_modes: ['default'] }));
  const url = new URL('/matchmaker/lobbies/find', server.origin);
  const one = (n: number): Promise<void> => new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        'content-length': String(body.length),
        authorization: `Bearer ${server.publicToken}`,
        'x-forwarded-for': `10.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`,
      },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => { text += c; });
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`find ${n} answered ${res.statusCode}: ${text.slice(0, 300)}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) await one(next++);
  };
  try {
    await Promise.all(Array.from({ length: 8 }, worker));
  } finally {
    agent.destroy();
  }
};

/** `callgrind_control <args> <pid>`: switch counting on or off (`-i on|off`), zero (`-z`), dump (`-d`). */
export const control = (pid: number, ...args: string[]): void => {
  execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore', timeout: 60_000 });
};

/** `summary:` of the newest dump `cg.<pid>.<n>` in `dir`. */
export const lastDump = (dir: string, pid: number): number => {
  const dumps = readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.`)).sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]));
  const file = dumps.at(-1);
  if (file === undefined) throw new Error(`callgrind wrote no dump for ${pid} in ${dir}`);
  const summary = /^summary: (\d+)$/m.exec(readFileSync(join(dir, file), 'utf8'));
  if (summary === null) throw new Error(`${file} has no summary line`);
  return Number(summary[1]);
};

/** valgrind's callgrind with counting off until switched on, its dumps in `dir`. */
export const callgrind = (dir: string): string[] => ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${join(dir, 'cg.%p')}`];

/** Throws unless valgrind is installed. */
export const needValgrind = (bench: string): void => {
  if (spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status !== 0) throw new Error(`${bench}: needs valgrind (apt-get install -y valgrind)`);
};

/** Instructions per find with rate limits `mode`, one server run under callgrind. */
export const instructionsPerFind = async (mode: Mode, warmup: number, finds: number): Promise<number> => {
  const dir = mkdtempSync(join(tmpdir(), 'tavern-limits-'));
  try {
    const server = await startTavern({
      maxPlayers: 256,
      idleLobbies: 2,
      rateLimits: mode,
      wrapper: { command: callgrind(dir), startMs: 300_000 },
    });
    try {
      await sendFinds(server, 0, warmup);
      control(server.child.pid, '-i', 'on');
      control(server.child.pid, '-z');
      await sendFinds(server, warmup, warmup + finds);
      control(server.child.pid, '-d');
      control(server.child.pid, '-i', 'off');
      return lastDump(dir, server.child.pid) / finds;
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
};

export const limitsBench = async (args: readonly string[]): Promise<void> => {
  const json = args.includes('--json');
  const rounds = intArg(args, '--rounds', 2, 1, 20);
  const finds = intArg(args, '--finds', 3_000, 100, 1_000_000);
  const warmup = intArg(args, '--warmup', 1_500, 0, 1_000_000);
  needValgrind('limits');
  const log = (line: string): void => {
    if (!json) process.stderr.write(`${line}\n`);
  };
  const runs: Record<Mode, number[]> = { off: [], on: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const mode of ['off', 'on'] as const) {
      const perFind = await instructionsPerFind(mode, warmup, finds);
      runs[mode].push(perFind);
      log(`round ${round}/${rounds}, rate limits ${mode}: ${Math.round(perFind).toLocaleString('en-US')} instructions per find`);
    }
  }
  const off = median(runs.off);
  const on = median(runs.on);
  const ratio = on / off;
  if (json) {
    process.stdout.write(`${JSON.stringify({ bench: 'limits', rounds, finds, warmup, instructions_per_find: { off, on }, runs, limits_ratio: ratio, limiter_instructions_per_find: on - off })}\n`);
    return;
  }
  const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
  process.stdout.write(`${table(['rate limits', 'instructions per find (median)', 'runs'], [
    ['off', fmt(off), runs.off.map(fmt).join(', ')],
    ['on', fmt(on), runs.on.map(fmt).join(', ')],
  ])}\n`);
  process.stdout.write(`limits on / off: ${ratio.toFixed(3)}x (${fmt(on - off)} instructions per find, ${((ratio - 1) * 100).toFixed(1)}%)\n`);
};
