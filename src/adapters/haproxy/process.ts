/**
 * One HAProxy process: spawned in the foreground on Tavern's configuration file, its stderr in the
 * log, ready once its runtime API answers; and the HAProxy an earlier Tavern left running (killed
 * with `kill -9`), stopped before a new one starts. The proxy (`proxy.ts`) decides when.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../io/log.js';
import { runtimeCall } from './runtime-api.js';

const READY_MS = 10_000;
/** HAProxy's lines about a route slot going down or empty: what Tavern did itself when it unbound a route. */
const OWN_DOING = /Server lobby-slot-\d+\/lobby is |backend '?lobby-slot-\d+'? has no server available/;

/**
 * Whether the HAProxy at `socket` answers its runtime API.
 *
 * @example
 * if (!(await answers(socket))) child.kill('SIGKILL');
 */
export const answers = (socket: string): Promise<boolean> => runtimeCall(socket, 'show info').then((a) => a.includes('Pid:'), () => false);

/** One line HAProxy wrote, at its level. */
const logLine = (log: Logger, line: string): void => {
  // A slot's server changing state, and its backend then having no server, is Tavern's own
  // doing (a route bound or unbound: slot servers have no health checks), never an alert.
  if (OWN_DOING.test(line)) log.info({ haproxy: line }, 'haproxy');
  else if (line.startsWith('[ALERT]')) log.error({ haproxy: line }, 'haproxy');
  else if (line.startsWith('[WARNING]')) log.warn({ haproxy: line }, 'haproxy');
  else log.info({ haproxy: line }, 'haproxy');
};

export interface Spawned {
  readonly child: ChildProcess;
  /** Resolves once the runtime API answers; rejects with HAProxy's own words when it exits first, or when it does not answer within 10 s (then it is killed). */
  readonly ready: () => Promise<void>;
}

/**
 * Starts `binary` on the configuration file `cfg`, its stderr lines logged.
 *
 * @example
 * const { child, ready } = spawnHaproxy({ binary: '/usr/sbin/haproxy', cfg, socket, log });
 * await ready();
 */
export function spawnHaproxy(o: { readonly binary: string; readonly cfg: string; readonly socket: string; readonly log: Logger }): Spawned {
  const child = spawn(o.binary, ['-db', '-f', o.cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    said = (said + chunk).slice(-4_000);
    for (const raw of chunk.split('\n')) {
      const line = raw.trim();
      if (line !== '') logLine(o.log, line);
    }
  });
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => reject(new Error(`haproxy could not be started (${o.binary}): ${error.message}`)));
    child.once('exit', (code, signal) => reject(new Error(`haproxy exited at start (${signal ?? `code ${code}`}): ${said.trim()}`)));
  });
  failed.catch(() => undefined);
  const ready = async (): Promise<void> => {
    const deadline = Date.now() + READY_MS;
    while (!(await Promise.race([answers(o.socket), failed]))) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`haproxy did not answer on ${o.socket} within ${READY_MS} ms: ${said.trim()}`);
      }
      await sleep(50);
    }
  };
  return { child, ready };
}

/**
 * Stops the HAProxy whose pid `pidFile` holds if it still runs on `cfg` (an earlier Tavern's: it
 * holds the ports and the socket), unless it is `own`; only a process whose command line names
 * this configuration file is touched.
 *
 * @example
 * await killOrphan(pidFile, cfg, undefined, log);
 */
export async function killOrphan(pidFile: string, cfg: string, own: number | undefined, log: Logger): Promise<void> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 1 || pid === own) return;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.split('\0').includes(cfg)) return;
  log.warn({ pid }, 'stopping a game proxy (haproxy) left running by an earlier Tavern');
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && (await readFile(`/proc/${pid}/cmdline`, 'utf8').then((c) => c !== '', () => false)); i++) await sleep(20);
}
