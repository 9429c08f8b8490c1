/**
 * Colyseus, the benchmarks' peer, from its own package (`bench/peers/colyseus/`): Colyseus 0.18
 * declares Node >= 22 while Tavern supports 20, so Tavern's `npm ci` does not install it (no
 * engine warnings for a user). The first benchmark that needs it installs that package
 * (`npm ci` there, from its lockfile) and compiles its two programs; later runs reuse both.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The in-process matchmaker peer of the routing benchmark (`bench/peers/colyseus/matchmaker.ts`). */
export interface ColyseusPeer {
  /** The routing choice alone: which room would a player go to. */
  choose(): Promise<unknown>;
  /** The choice committed: a seat reserved in the chosen (or a newly created) room. */
  commit(): Promise<unknown>;
  rooms(): number;
  close(): Promise<void>;
}

export interface ColyseusPeerOptions {
  rooms: number;
  maxClients: number;
  fullShare: number;
  lockedShare: number;
  roomNames: readonly string[];
  deadlineMs?: number;
  seed?: number;
}

/** The repository's root: the first folder up from here that holds the peer's package. */
const peerDir = (): string => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'bench', 'peers', 'colyseus', 'package.json'))) return join(dir, 'bench', 'peers', 'colyseus');
  }
  throw new Error('bench/peers/colyseus/package.json not found above the benchmark');
};

let ready: string | undefined;

/**
 * The peer's folder, installed and compiled (once per process; `npm ci` only when its
 * node_modules is missing).
 *
 * @example
 * const http = join(colyseusPeer(), 'dist', 'http.js');
 */
export function colyseusPeer(log: (line: string) => void = (line) => void process.stderr.write(`${line}\n`)): string {
  if (ready !== undefined) return ready;
  const dir = peerDir();
  if (!existsSync(join(dir, 'node_modules', '@colyseus', 'core'))) {
    log(`installing the Colyseus peer in ${dir} (it declares Node >= 22; it runs on ${process.version})`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const tsc = join(dir, '..', '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { stdio: ['ignore', 'inherit', 'inherit'] });
  ready = dir;
  return dir;
}

/** The routing peer's factory, loaded from the peer's package. */
export async function createColyseusPeer(options: ColyseusPeerOptions): Promise<ColyseusPeer> {
  const module = (await import(pathToFileURL(join(colyseusPeer(), 'dist', 'matchmaker.js')).href)) as { createColyseusPeer(o: ColyseusPeerOptions): Promise<ColyseusPeer> };
  return module.createColyseusPeer(options);
}

/** The HTTP peer's program (a child process: `node <it> --room lobby --max-clients 256`). */
export const colyseusHttpMain = (): string => join(colyseusPeer(), 'dist', 'http.js');
