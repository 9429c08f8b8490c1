/**
 * Server child processes for the `http` benchmark: spawn (optionally pinned to a core with
 * `taskset`, optionally with `--cpu-prof`), wait for the line that says where it listens, keep
 * draining its output, and stop it (SIGTERM, then SIGKILL). Every child still running when the
 * benchmark process exits is killed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export interface ServerChild {
  readonly name: string;
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The last few KB of its stdout and stderr (for error messages). */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it exited. Idempotent. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves once it exited, with its exit code or the signal that ended it. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
}

export interface SpawnOptions {
  readonly name: string;
  /** Arguments to `node` (script and its arguments). */
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Pin the child (all its threads) to this CPU with `taskset`. */
  readonly cpu?: number;
  /** Write a V8 CPU profile into this directory when the child exits (a sample every 250 µs: node's default 1 ms leaves a 5-second run a few thousand). */
  readonly profileDir?: string;
  /** Reads one output line; returns the port once the child says it listens. */
  readonly portOf: (line: string) => number | undefined;
  readonly timeoutMs?: number;
  /** Configure it with `env` only: `TAVERN_*`, `DATABASE_URL` and `LOG_LEVEL` are not inherited. */
  readonly isolated?: boolean;
  /** A command that runs `node` (e.g. valgrind and its options): the child is `wrapper... node args...`. */
  readonly wrapper?: readonly string[];
}

/** This process's environment without what configures a Tavern server. */
const withoutTavern = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TAVERN_') && k !== 'DATABASE_URL' && k !== 'LOG_LEVEL'));

/**
 * What `node` is given before a server's script: the young generation Tavern is launched with
 * (`tavern`'s shebang and `npm start`: its finds make short-lived garbage, and a 64 MB
 * semi-space cuts its CPU per find by a tenth or more). The http benchmark gives bare and
 * Colyseus the same, so the servers differ only in their code.
 */
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

const TAIL = 8_192;

/** `taskset` is there and the machine has at least two cores. */
export const canPin = (): boolean => cpus().length >= 2 && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;

/** Pins a process (every thread) to `cpu`; false when it could not. */
export const pinProcess = (pid: number, cpu: number): boolean =>
  spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' }).status === 0;

/** Pins this process (every thread) to `cpu`; false when it could not. */
export const pinSelf = (cpu: number): boolean => pinProcess(process.pid, cpu);

/**
 * @example
 * const child = await spawnServer({ name: 'colyseus', args: [script], portOf: (l) => JSON.parse(l).port });
 * await child.stop();
 */
export function spawnServer(opts: SpawnOptions): Promise<ServerChild> {
  const nodeArgs = [...(opts.profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', opts.profileDir]), ...opts.args];
  const [command = process.execPath, ...args] = [
    ...(opts.wrapper ?? []),
    ...(opts.cpu === undefined ? [] : ['taskset', '-c', String(opts.cpu)]),
    process.execPath,
    ...nodeArgs,
  ];
  const child = spawn(command, args, { env: { ...(opts.isolated === true ? withoutTavern() : process.env), ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let tail = '';
  const keep = (chunk: string): void => {
    tail = (tail + chunk).slice(-TAIL);
  };
  const exited = new Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => {
    live.delete(child);
    resolve({ code, signal });
  }));
  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 5_000): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
    })();
    return stopping;
  };
  child.stderr.setEncoding('utf8').on('data', keep);
  child.stdout.setEncoding('utf8');
  return new Promise<ServerChild>((resolve, reject) => {
    let buffered = '';
    let found = false;
    const fail = (why: string): void => {
      if (found) return;
      found = true;
      clearTimeout(timer);
      void stop(500).then(() => reject(new Error(`${opts.name}: ${why}\n${tail}`)));
    };
    const timer = setTimeout(() => fail(`not listening after ${opts.timeoutMs ?? 20_000} ms`), opts.timeoutMs ?? 20_000);
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code, signal) => fail(`exited (${signal ?? code}) before listening`));
    child.stdout.on('data', (chunk: string) => {
      keep(chunk);
      if (found) return;
      buffered += chunk;
      let nl: number;
      while (!found && (nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const port = opts.portOf(line);
        if (port === undefined) continue;
        found = true;
        clearTimeout(timer);
        if (child.pid === undefined) {
          reject(new Error(`${opts.name}: no pid`));
          return;
        }
        resolve({ name: opts.name, pid: child.pid, origin: `http://127.0.0.1:${port}`, output: () => tail, stop, exited });
      }
    });
  });
}

let ticksPerSecond: number | undefined;

/**
 * CPU time (user + system, all threads) a process used so far, in seconds, from
 * `/proc/<pid>/stat`; undefined where that cannot be read (not Linux, process gone).
 */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start with the state (field 3).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
    return Number.isFinite(ticks) ? ticks / ticksPerSecond : undefined;
  } catch {
    return undefined;
  }
}

/** Polls `GET <origin><path>` until it answers 200. */
export async function waitHealthy(origin: string, path: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  while (performance.now() < deadline) {
    try {
      const res = await fetch(`${origin}${path}`);
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${origin}${path} not healthy after ${timeoutMs} ms (${last})`);
}
