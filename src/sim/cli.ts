/**
 * `tavern sim <file|builtin> [--seed N] [--out DIR] [--json] [--trace FILE] [--set path=value]... [--sweep path=v1,v2,...]
 * [--recorded FILE]`: run a scenario, print its summary (or one JSON object), write SVG charts and an HTML report.
 * Exit codes: 0 done, 1 an invariant broke during a run, 2 bad usage or an invalid scenario.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Problem } from '../core/config/types.js';
import { builtinScenarioJson, BUILTIN_NAMES, isBuiltinName } from './scenario/builtin.js';
import { applyOverrides, sweepValues } from './scenario/overrides.js';
import { parseScenario } from './scenario/parse.js';
import { checkRecordedDemand, parseRecordedDemand } from './scenario/recorded.js';
import type { RecordedRequest, Scenario } from './scenario/types.js';
import { runCharts, runJson, runReport, summaryTable, sweepChart, sweepReport, sweepTable, type SweepRun } from './report.js';
import { runScenario, type RunResult } from './world/run.js';

/** Where the command writes: injectable so tests run it in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal (the progress bar shows only then). */
  readonly tty: boolean;
  readonly cwd: string;
  readonly now: () => number;
}

export const SIM_USAGE = `usage: tavern sim <scenario.json | ${BUILTIN_NAMES.join(' | ')}> [options]
  --seed N            override the scenario's seed
  --set path=value    override a scenario value (repeatable), e.g. --set version.matchmaker.max_players=12
  --sweep path=v1,v2  one run per value (same seed), a comparison table and sweep.svg
  --recorded FILE     replay a recorded demand (JSONL) instead of the synthetic one
  --out DIR           write the SVG charts and report.html (summary and charts in one file) to DIR
  --json              print one JSON object instead of the tables (metrics, per-minute series, trace hash)
  --trace FILE        write the run's full event trace to FILE as JSONL (streamed; not with --sweep)
tavern sim calibrate -n NS [--since 24h] -o scenario.json   fit a scenario to what a server observed`;

/**
 * The options `tavern sim` takes (node's `parseArgs`), besides one scenario.
 *
 * @example
 * parseArgs({ args: ['steady', '--json'], allowPositionals: true, options: SIM_OPTIONS }).values.json; // true
 */
export const SIM_OPTIONS = {
  seed: { type: 'string' },
  set: { type: 'string', multiple: true },
  sweep: { type: 'string' },
  recorded: { type: 'string' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  trace: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

const problemLines = (what: string, problems: readonly Problem[]): string =>
  [`${what}:`, ...problems.map((p) => `  ${p.path.join('.')}${p.message === undefined ? '' : `: ${p.message}`}`)].join('\n');

interface Loaded {
  readonly json: unknown;
  /** Directory relative paths in the scenario resolve against. */
  readonly base: string;
}

const loadJson = async (arg: string, cwd: string): Promise<Loaded> => {
  if (isBuiltinName(arg)) return { json: builtinScenarioJson(arg), base: cwd };
  const path = resolve(cwd, arg);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read ${arg}: not a file and not a built-in scenario (${BUILTIN_NAMES.join(', ')})`);
  }
  try {
    return { json: JSON.parse(text) as unknown, base: dirname(path) };
  } catch (e) {
    throw new UsageError(`${arg} is not valid JSON: ${(e as Error).message}`);
  }
};

const loadRecorded = async (path: string, scenario: Scenario): Promise<RecordedRequest[]> => {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read recorded demand ${path}`);
  }
  const parsed = parseRecordedDemand(text);
  if (!parsed.ok) throw new UsageError(problemLines(`recorded demand ${path} is invalid`, parsed.error));
  const problems = checkRecordedDemand(scenario, parsed.value);
  if (problems.length > 0) throw new UsageError(problemLines(`recorded demand ${path} does not fit the scenario`, problems));
  return parsed.value;
};

const prepare = async (loaded: Loaded, sets: readonly string[], recordedArg: string | undefined, cwd: string) => {
  const overridden = applyOverrides(loaded.json, sets);
  if (!overridden.ok) throw new UsageError(problemLines('invalid --set', overridden.error));
  const scenario = parseScenario(overridden.value, { externalDemand: recordedArg !== undefined });
  if (!scenario.ok) throw new UsageError(problemLines('invalid scenario', scenario.error));
  const recordedPath =
    recordedArg !== undefined ? resolve(cwd, recordedArg) : scenario.value.recordedDemand !== undefined ? resolve(loaded.base, scenario.value.recordedDemand) : undefined;
  const recorded = recordedPath === undefined ? undefined : await loadRecorded(recordedPath, scenario.value);
  return { scenario: scenario.value, recorded };
};

/** A one-line progress bar on stderr, drawn only on a terminal and only once a run has taken a second. */
const progress = (io: CliIo, label: string): { update: (f: number) => void; done: () => void } => {
  const started = io.now();
  let shown = false;
  return {
    update: (f) => {
      if (!io.tty || io.now() - started < 1000) return;
      shown = true;
      const width = 30;
      const filled = Math.round(f * width);
      io.stderr(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(f * 100).toFixed(0).padStart(3)} %`);
    },
    done: () => {
      if (shown) io.stderr('\r\x1b[2K');
    },
  };
};

const run = async (io: CliIo, scenario: Scenario, recorded: readonly RecordedRequest[] | undefined, seed: number | undefined, label: string, tracePath?: string) => {
  const bar = progress(io, label);
  const started = io.now();
  // Written synchronously as the run goes: a run is one chain of microtasks, so a stream's
  // asynchronous writes would wait for its end and hold the whole trace in memory.
  let fd: number | undefined;
  if (tracePath !== undefined) {
    try {
      fd = openSync(tracePath, 'w');
    } catch (e) {
      throw new UsageError(`cannot write the trace to ${tracePath}: ${(e as Error).message}`);
    }
  }
  const traceFd = fd;
  try {
    const result = await runScenario(scenario, {
      ...(seed === undefined ? {} : { seed }),
      ...(recorded === undefined ? {} : { recorded }),
      ...(traceFd === undefined ? {} : { traceSink: (chunk: string) => void writeSync(traceFd, chunk) }),
      onProgress: bar.update,
    });
    return { result, wallMs: io.now() - started };
  } finally {
    bar.done();
    if (traceFd !== undefined) closeSync(traceFd);
  }
};

const broken = (r: RunResult): boolean => r.violations.length > 0 || !r.clockMonotone;

const writeFiles = async (dir: string, files: Readonly<Record<string, string>>): Promise<string[]> => {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    await writeFile(path, content);
    written.push(path);
  }
  return written;
};

const parseSeed = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 0xffffffff) throw new UsageError(`--seed must be an integer in 0..4294967295, got ${text}`);
  return n;
};

/**
 * Runs `tavern sim` with `args` (after the `sim` word); resolves to the exit code.
 *
 * @example
 * const code = await simCommand(['steady', '--json'], { stdout: console.log, stderr: console.error, tty: false, cwd: process.cwd(), now: () => performance.now() });
 */
export async function simCommand(args: readonly string[], io: CliIo): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: [...args], allowPositionals: true, options: SIM_OPTIONS });
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help === true) {
      io.stdout(SIM_USAGE);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'which scenario?' : `one scenario at a time, got ${positionals.join(' ')}`);
    const seed = parseSeed(values.seed);
    const loaded = await loadJson(positionals[0] as string, io.cwd);
    const sets = values.set ?? [];
    const out = values.out === undefined ? undefined : resolve(io.cwd, values.out);
    const tracePath = values.trace === undefined ? undefined : resolve(io.cwd, values.trace);
    if (tracePath !== undefined && values.sweep !== undefined) throw new UsageError('--trace writes the trace of one run: not with --sweep');

    if (values.sweep === undefined) {
      const { scenario, recorded } = await prepare(loaded, sets, values.recorded, io.cwd);
      const { result, wallMs } = await run(io, scenario, recorded, seed, scenario.name ?? 'scenario', tracePath);
      if (values.json === true) io.stdout(JSON.stringify({ ...runJson(result), wall_ms: Math.round(wallMs) }));
      else io.stdout(summaryTable(result, wallMs));
      if (out !== undefined) {
        const charts = runCharts(result);
        const written = await writeFiles(out, { ...charts, 'report.html': runReport(result, charts, wallMs) });
        if (values.json !== true) io.stdout(`charts: ${written.join(', ')}`);
      }
      return broken(result) ? 1 : 0;
    }

    const sweep = sweepValues(values.sweep);
    if (!sweep.ok) throw new UsageError(problemLines('invalid --sweep', sweep.error));
    const prepared = [];
    for (const value of sweep.value.values) {
      prepared.push({ value, ...(await prepare(loaded, [...sets, `${sweep.value.path}=${JSON.stringify(value)}`], values.recorded, io.cwd)) });
    }
    const runs: SweepRun[] = [];
    for (const p of prepared) {
      const { result } = await run(io, p.scenario, p.recorded, seed, `${sweep.value.path}=${JSON.stringify(p.value)}`);
      runs.push({ value: p.value, result });
    }
    if (values.json === true) io.stdout(JSON.stringify({ sweep: { path: sweep.value.path, runs: runs.map((r) => ({ value: r.value, ...runJson(r.result) })) } }));
    else io.stdout(sweepTable(sweep.value.path, runs));
    if (out !== undefined) {
      const chart = sweepChart(sweep.value.path, runs);
      const written = await writeFiles(out, { 'sweep.svg': chart, 'report.html': sweepReport(sweep.value.path, runs, chart) });
      if (values.json !== true) io.stdout(`chart: ${written.join(', ')}`);
    }
    return runs.some((r) => broken(r.result)) ? 1 : 0;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`${e.message}\n\n${SIM_USAGE}\n`);
    return 2;
  }
}
