/**
 * What every runtime that hosts lobby containers of its own (Docker, Swarm) is given by the
 * server: who it is, where host records, logs and the lobby's environment come from, the
 * hardening, and the clock.
 */
import type { StartLobby } from '../../core/effects.js';
import type { LobbyHostStore, LogStream } from '../../io/catalog.js';
import type { Clock } from '../../io/index.js';
import type { HostedContainer } from '../../io/runtime.js';
import type { Logger } from '../../io/log.js';
import { isStatus } from './engine-errors.js';
import type { Hardening } from './lobby-spec.js';
import type { LogLimits, LogSink } from './log-pump.js';

export interface HostingOptions {
  /** This Tavern's id: its containers (services) carry it (`tavern.instance`), and its lobby host records. */
  readonly instanceId: string;
  readonly hosts: Pick<LobbyHostStore, 'claimLobbyHost' | 'releaseLobbyHost'>;
  readonly logs: LogSink;
  /** When a lobby's log was last written (adoption after a restart asks the engine for what came after). */
  readonly lastLogAt?: (lobbyId: string, stream: LogStream) => Promise<number | undefined>;
  /** What the server adds to a lobby's environment (token, names), given the API origin the container reaches. */
  readonly lobbyEnv?: (lobby: StartLobby, apiOrigin: string) => Promise<Readonly<Record<string, string>>>;
  readonly hardening?: Hardening;
  readonly logLimits?: LogLimits;
  /** SIGTERM, then SIGKILL this long after (the core forces a stop after its own grace too). */
  readonly stopGraceMs: number;
  readonly clock: Clock;
  /** Where something that went wrong and no caller waits for (a removal, a log stream) is said. */
  readonly log?: Pick<Logger, 'warn'>;
}

/**
 * Follows a container (service) of this instance again after a restart, unless it is followed
 * already: its logs from just after the last line kept, and its end. One removed meanwhile (its
 * end was just reported) has nothing to adopt.
 *
 * @example
 * await adoptHosted(c, this.#o, this.#watched.has(c.lobbyId), (since) => this.#watch(c, since));
 */
export async function adoptHosted(
  c: HostedContainer,
  options: Pick<HostingOptions, 'lastLogAt'>,
  followed: boolean,
  watch: (sinceSeconds: number) => Promise<void>,
): Promise<void> {
  if (followed) return;
  const since = options.lastLogAt === undefined ? undefined : await options.lastLogAt(c.lobbyId, 'std_out');
  try {
    await watch(since === undefined ? 0 : (since + 1) / 1000);
  } catch (error) {
    if (!isStatus(error, 404)) throw error;
  }
}
