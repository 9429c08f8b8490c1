import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { simCommand } from '../../src/sim/cli.js';

const run = promisify(execFile);
const BIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

/** Runs the real command (stdin closed, output piped); resolves with its exit code and output. */
const tavern = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', BIN, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const failed = e as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
};

const SHORT = ['--set', 'duration_ms=120000'];

describe('tavern sim (end to end)', () => {
  it('--json prints one JSON object with the metrics and the trace hash; no progress bar when piped', async () => {
    const { code, stdout, stderr } = await tavern('sim', 'steady', ...SHORT, '--json', '--seed', '5');
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(Object.keys(out).sort()).toEqual(['clock_monotone', 'events', 'fill_histogram', 'metrics', 'scenario', 'seed', 'series', 'trace_hash', 'trace_records', 'violations', 'wall_ms']);
    expect((out['series'] as Record<string, unknown[]>)['waiting']).toHaveLength(3);
    expect(out['trace_hash']).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(out['seed']).toBe(5);
    expect(out['violations']).toEqual([]);
    const metrics = out['metrics'] as Record<string, unknown>;
    for (const key of ['served', 'rejected', 'waiting', 'rejections', 'timeToSeatMs', 'timeToReadyMs', 'fillRatio', 'idleLobbyHours', 'cost', 'peakCcu', 'meanCcu', 'peakPortsInUse', 'verificationCalls']) {
      expect(metrics).toHaveProperty(key);
    }
    const again = await tavern('sim', 'steady', ...SHORT, '--json', '--seed', '5');
    expect((JSON.parse(again.stdout) as Record<string, unknown>)['trace_hash']).toBe(out['trace_hash']);
  }, 60_000);

  it('prints the summary table and writes the charts to --out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tavern-sim-'));
    const { code, stdout } = await tavern('sim', 'cold-start', ...SHORT, '--out', dir);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Tavern sim: cold-start \(seed \d+\), 2\.0 min simulated/);
    for (const row of ['players', 'refusals', 'time to ready', 'lobby fill', 'lobby-hours', 'CCU            peak ', 'ports in use', 'verification', 'trace', 'invariants     ok']) {
      expect(stdout).toContain(row);
    }
    const files = (await readdir(dir)).sort();
    expect(files).toEqual(['ccu-lobbies.svg', 'fill-ratio.svg', 'report.html', 'wait-percentiles.svg']);
    for (const f of files.filter((name) => name.endsWith('.svg'))) expect(await readFile(join(dir, f), 'utf8')).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const report = await readFile(join(dir, 'report.html'), 'utf8');
    expect(report).toContain('<td>invariants</td><td>ok</td>');
    expect(report.match(/<svg /g)).toHaveLength(3);
  }, 60_000);

  it('--sweep runs one simulation per value and writes sweep.svg', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tavern-sweep-'));
    const { code, stdout } = await tavern('sim', 'cold-start', ...SHORT, '--sweep', 'version.matchmaker.idle_lobbies={"min":0,"max":0},{"min":4,"max":8}', '--out', dir);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('sweep version.matchmaker.idle_lobbies');
    expect(lines[2]).toMatch(/^\{"min":0,"max":0\}/);
    expect(lines[3]).toMatch(/^\{"min":4,"max":8\}/);
    expect(await readFile(join(dir, 'sweep.svg'), 'utf8')).toContain('idle lobby-hours');
    const report = await readFile(join(dir, 'report.html'), 'utf8');
    expect(report).toContain('<td>{&quot;min&quot;:4,&quot;max&quot;:8}</td>');
    expect(report.match(/<svg /g)).toHaveLength(1);
  }, 60_000);

  it('exits 2 with the path of every problem for an invalid scenario, and for bad usage', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tavern-bad-'));
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ version: {}, infrastructure: { regions: [] }, duration_ms: -1, seed: 'x' }));
    // Independent commands: started together, each waited for (the machine's cores start them side by side).
    const [bad, noScenario, badSeed, negative, misspelt, bogus, traceWithSweep, nope, help] = await Promise.all([
      tavern('sim', file),
      tavern('sim', 'no-such-scenario'),
      tavern('sim', 'steady', '--seed', 'abc'),
      tavern('sim', 'steady', '--set', 'version.matchmaker.max_players=-3'),
      tavern('sim', 'steady', '--set', 'version.matchmaker.max_player=3'),
      tavern('sim', 'steady', '--bogus'),
      tavern('sim', 'steady', '--trace', join(dir, 't.jsonl'), '--sweep', 'seed=1,2'),
      tavern('nope'),
      tavern('sim', '--help'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid scenario');
    expect(bad.stderr).toContain('infrastructure.regions.empty');
    expect(bad.stderr).toContain('demand.missing');
    expect(bad.stderr).toContain('duration-ms.not-positive');
    expect(bad.stderr).toContain('seed.invalid-type');
    expect(noScenario.code).toBe(2);
    expect(badSeed.code).toBe(2);
    expect(negative.stderr).toContain('max-players');
    expect(misspelt.stderr).toContain('version.matchmaker.*max_player*.unknown-key: unknown key `max_player`: did you mean `max_players`?');
    expect(bogus.code).toBe(2);
    expect([traceWithSweep.code, traceWithSweep.stderr.split('\n')[0]]).toEqual([2, '--trace writes the trace of one run: not with --sweep']);
    expect(nope.code).toBe(2);
    expect(help.code).toBe(0);
  }, 60_000);
});

describe('tavern sim --trace', () => {
  it('streams the full trace as JSONL: the first minutes of a built-in are its golden file, byte for byte', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tavern-trace-'));
    const file = join(dir, 'steady.jsonl');
    const out: string[] = [];
    const io = { stdout: (s: string) => void out.push(s), stderr: () => undefined, tty: false, cwd: dir, now: () => 0 };
    expect(await simCommand(['steady', '--set', 'duration_ms=180000', '--trace', 'steady.jsonl', '--json'], io)).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(text).toBe(await readFile(new URL('./golden/steady.jsonl', import.meta.url), 'utf8'));
    expect(text.split('\n').length - 1).toBe((JSON.parse(out[0] ?? '{}') as { trace_records: number }).trace_records);
    expect(await simCommand(['steady', '--trace', join(dir, 'no-such-dir', 'x.jsonl')], io)).toBe(2);
  });
});

describe('simCommand progress bar', () => {
  const io = (tty: boolean) => {
    const out: string[] = [];
    const err: string[] = [];
    let t = 0;
    return { out, err, io: { stdout: (s: string) => void out.push(s), stderr: (s: string) => void err.push(s), tty, cwd: process.cwd(), now: () => (t += 50) } };
  };

  it('draws on a terminal once a run takes over a second, and never when piped', async () => {
    const terminal = io(true);
    expect(await simCommand(['steady', '--set', 'duration_ms=600000'], terminal.io)).toBe(0);
    expect(terminal.err.some((s) => s.includes('%'))).toBe(true);
    const piped = io(false);
    expect(await simCommand(['steady', '--set', 'duration_ms=600000'], piped.io)).toBe(0);
    expect(piped.err).toEqual([]);
  });
});
