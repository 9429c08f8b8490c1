/**
 * Lobbies that stopped recently, kept after the matchmaker forgets them (10 min after they stop),
 * so a crash, a failed start or a server that never called ready can still be listed and
 * explained: why it stopped, its exit code, how long it ran and the last lines of its log. What
 * is kept is bounded per namespace and by age (`src/core/lobby/stopped.ts`).
 */
import type { StopReason } from '../core/lobby/lobby.js';
import type { LogStream } from './catalog.js';

/** A log line kept with a stopped lobby, with the stream it came from. */
export interface StoppedLobbyLine {
  /** Epoch ms. */
  readonly at: number;
  readonly stream: LogStream;
  readonly line: string;
}

/** A stop as the matchmaker saw it (a committed `lobby-stopped`), before its log lines are added. */
export interface LobbyStop {
  readonly lobbyId: string;
  readonly namespaceId: string;
  readonly versionId: string;
  readonly gameMode: string;
  readonly region: string;
  readonly createdAt: number;
  readonly readyAt?: number;
  readonly stoppedAt: number;
  readonly reason: StopReason;
  /** A crash, a failed start or a ready timeout. */
  readonly failed: boolean;
  /** The container's exit code, when the runtime reported one. */
  readonly exitCode?: number;
}

/** A stopped lobby as kept: its stop and the last lines of its log (all streams, in time order). */
export interface StoppedLobbyRecord extends LobbyStop {
  readonly lastLines: readonly StoppedLobbyLine[];
}

/** What a namespace keeps: at most `perNamespace` failed stops and as many others, none stopped before `since`. */
export interface StoppedKeep {
  readonly perNamespace: number;
  readonly since: number;
}

/** Which stops of a namespace a listing wants, newest first. */
export interface StoppedQuery {
  /** None stopped before this (epoch ms). */
  readonly since: number;
  /** Only crashes, failed starts and ready timeouts. */
  readonly failedOnly: boolean;
  readonly limit: number;
}

/**
 * Where stopped lobbies are kept: memory, SQLite and PostgreSQL each implement it (one contract
 * suite, `test/contracts/stopped-lobbies.contract.ts`).
 *
 * @example
 * await store.putStoppedLobby(record, { perNamespace: 50, since: now - DAY_MS });
 * const recent = await store.stoppedLobbies(namespaceId, { since: now - DAY_MS, failedOnly: true, limit: 20 });
 */
export interface StoppedLobbyStore {
  /**
   * Keeps a stopped lobby (replacing what was kept of the same lobby), then forgets every stop
   * before `keep.since` and, in the record's namespace, all but the newest `keep.perNamespace`
   * failed stops and as many others (newest: the latest `stoppedAt`, then the greatest lobby id).
   */
  putStoppedLobby(record: StoppedLobbyRecord, keep: StoppedKeep): Promise<void>;
  /** A namespace's stops, newest first. */
  stoppedLobbies(namespaceId: string, query: StoppedQuery): Promise<readonly StoppedLobbyRecord[]>;
  /** What is kept of one lobby, if anything. */
  stoppedLobby(lobbyId: string): Promise<StoppedLobbyRecord | undefined>;
}

/** Where the matchmaker reports each stop it committed (the stopped-lobbies service adds the log lines and keeps it). */
export interface StopRecorder {
  record(stop: LobbyStop): Promise<void>;
}
