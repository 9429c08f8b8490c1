/**
 * `npm run bench -- tokens [--json] [--rounds 2] [--ops 3000] [--finds 3000]`: what signing and
 * verifying tokens with jose instead of node:crypto would cost a find, in instructions (callgrind),
 * against all the instructions a find costs the server, in one run.
 *
 * Token work: `tokens-child.ts` under callgrind, counting only `--ops` rounds of a find's most
 * token work (verify a namespace token never seen before, sign a player token) after as many
 * rounds of warm-up, with Tavern's `signJwt`/`verifyJwt` and with jose's `SignJWT`/`jwtVerify`,
 * alternating `--rounds` times. Server: instructions per find of the compiled server (rate limits
 * off) as `npm run bench -- limits` counts them. Share = (jose − Tavern) per round / server per
 * find: the HTTP benchmark's throughput lost if tokens went through jose (the bar: 5%).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { callgrind, control, instructionsPerFind, lastDump, median, needValgrind } from './limits.js';
import { intArg, table } from './measure.js';

const CHILD = fileURLToPath(new URL('./tokens-child.js', import.meta.url));

type Impl = 'tavern' | 'jose';

/** Instructions per round of token work with `impl`, one child run under callgrind. */
const perRound = async (impl: Impl, ops: number): Promise<number> => {
  const dir = mkdtempSync(join(tmpdir(), 'tavern-tokens-'));
  try {
    const [command = 'valgrind', ...args] = [...callgrind(dir), process.execPath, CHILD, impl, String(ops), String(ops)];
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr = (stderr + c).slice(-4_000); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const lines = createInterface({ input: child.stdout });
    const next = (): Promise<string> => new Promise((resolve, reject) => {
      lines.once('line', resolve);
      void exited.then((code) => reject(new Error(`tokens-child ${impl} exited (${code}): ${stderr}`)));
    });
    if ((await next()) !== 'warm') throw new Error(`tokens-child ${impl}: expected warm`);
    control(child.pid ?? 0, '-i', 'on');
    control(child.pid ?? 0, '-z');
    child.stdin.write('go\n');
    if ((await next()) !== 'done') throw new Error(`tokens-child ${impl}: expected done`);
    control(child.pid ?? 0, '-d');
    control(child.pid ?? 0, '-i', 'off');
    const count = lastDump(dir, child.pid ?? 0);
    child.stdin.end();
    await exited;
    return count / ops;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export const tokensBench = async (args: readonly string[]): Promise<void> => {
  const json = args.includes('--json');
  const rounds = intArg(args, '--rounds', 2, 1, 20);
  const ops = intArg(args, '--ops', 3_000, 100, 1_000_000);
  const finds = intArg(args, '--finds', 3_000, 100, 1_000_000);
  needValgrind('tokens');
  const log = (line: string): void => {
    if (!json) process.stderr.write(`${line}\n`);
  };
  const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
  const runs: Record<Impl, number[]> = { tavern: [], jose: [] };
  for (let round = 1; round <= rounds; round++) {
    for (const impl of ['tavern', 'jose'] as const) {
      runs[impl].push(await perRound(impl, ops));
      log(`round ${round}/${rounds}, ${impl}: ${fmt(runs[impl].at(-1) ?? NaN)} instructions per verify + sign`);
    }
  }
  const server = await instructionsPerFind('off', finds, finds);
  log(`server: ${fmt(server)} instructions per find`);
  const tavern = median(runs.tavern);
  const jose = median(runs.jose);
  const share = (jose - tavern) / server;
  if (json) {
    process.stdout.write(`${JSON.stringify({ bench: 'tokens', rounds, ops, finds, per_round: { tavern, jose }, runs, server_per_find: server, jose_extra_share: share })}\n`);
    return;
  }
  process.stdout.write(`${table(['tokens through', 'instructions per verify + sign (median)', 'runs'], [
    ['Tavern (node:crypto)', fmt(tavern), runs.tavern.map(fmt).join(', ')],
    ['jose (WebCrypto)', fmt(jose), runs.jose.map(fmt).join(', ')],
  ])}\n`);
  process.stdout.write(`server: ${fmt(server)} instructions per find; jose would add ${fmt(jose - tavern)} per find: ${(share * 100).toFixed(1)}% of a find (bar: 5%)\n`);
};
