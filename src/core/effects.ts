import type { NetworkMode, PortProtocol } from './config/types.js';
import type { StopReason } from './lobby/lobby.js';
import type { LobbyPortAllocation } from './ports/index.js';

/**
 * What a decision asks the outside world to do, as data. The server's interpreter
 * (`services/perform.ts`) and the simulator interpret the same list; the core never performs them.
 */
export type Effect = StartLobby | StopLobby | BindRoute | UnbindRoute | AppendLog;

/** Start the lobby's container. The interpreter adds what only it knows (lobby token, API origin, names, tier resources). */
export interface StartLobby {
  readonly type: 'start-lobby';
  readonly lobbyId: string;
  readonly namespaceId: string;
  readonly versionId: string;
  readonly gameMode: string;
  readonly region: string;
  readonly tier: string;
  readonly imageId?: string;
  readonly args: readonly string[];
  /** Developer env merged with Tavern's (`RIVET_LOBBY_ID`, `PORT_<label>`, ...). */
  readonly env: Readonly<Record<string, string>>;
  readonly networkMode: NetworkMode;
  readonly ports: readonly LobbyPortAllocation[];
}

/** Stop the lobby's container; `force` after the stop grace ran out. */
export interface StopLobby {
  readonly type: 'stop-lobby';
  readonly lobbyId: string;
  readonly region: string;
  readonly reason: StopReason;
  readonly force: boolean;
}

/** A game-proxy route: clients reach `publicPort` (80/443 by hostname, or a proxied TCP/UDP port). */
export interface ProxyRoute {
  readonly lobbyId: string;
  readonly region: string;
  readonly label: string;
  readonly protocol: PortProtocol;
  readonly publicPort: number;
  readonly hostPort: number;
}

export interface BindRoute {
  readonly type: 'bind-route';
  readonly route: ProxyRoute;
}

export interface UnbindRoute {
  readonly type: 'unbind-route';
  readonly route: ProxyRoute;
}

/**
 * A line Tavern itself writes into a lobby's log (why it was stopped, for example): on the lobby's
 * `tavern` stream, never mixed into the game server's own output.
 */
export interface AppendLog {
  readonly type: 'append-log';
  readonly lobbyId: string;
  readonly at: number;
  readonly line: string;
}
