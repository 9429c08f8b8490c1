/** Runs the real `tavern` command (TypeScript sources through tsx) in a folder with only the environment given. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
/** tsx's loader by its URL: the command runs in folders outside the repository. */
const TSX = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

// DATABASE_URL too (CI exports it): a command reads the data folder it is given, not whatever database the run has.
const inheritedEnv = (): Record<string, string | undefined> =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TAVERN_') && !k.startsWith('RIVET_') && k !== 'DATABASE_URL'));

/** `tavern ...args` started in `cwd` (for commands that wait, like `login`); output piped. */
export const spawnTavern = (cwd: string, env: Record<string, string>, ...args: string[]): ChildProcess =>
  spawn(process.execPath, ['--import', TSX, MAIN, ...args], { cwd, env: { ...inheritedEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });

/** `tavern ...args` in `cwd`; TAVERN_/RIVET_ variables and DATABASE_URL come only from `env`. */
export const tavern = (cwd: string, env: Record<string, string>, ...args: string[]): Promise<Ran> => {
  const inherited = inheritedEnv();
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', TSX, MAIN, ...args], { cwd, env: { ...inherited, ...env }, timeout: 240_000, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
};
