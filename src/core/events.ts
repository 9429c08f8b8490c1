import type { MatchError } from './errors.js';
import type { Lobby, Player, StopReason } from './lobby/lobby.js';

/**
 * The facts a decision establishes. Storage persists them, analytics folds them, the simulator
 * traces them, and a waiting find learns its outcome from them (`seat-ready`, `seat-failed`).
 */
export type MatchEvent =
  | { readonly type: 'lobby-created'; readonly at: number; readonly lobby: Lobby }
  | { readonly type: 'lobby-ready'; readonly at: number; readonly namespaceId: string; readonly lobbyId: string }
  | {
      readonly type: 'lobby-closed-set';
      readonly at: number;
      readonly namespaceId: string;
      readonly lobbyId: string;
      readonly closed: boolean;
    }
  | {
      readonly type: 'lobby-stopping';
      readonly at: number;
      readonly namespaceId: string;
      readonly lobbyId: string;
      readonly reason: StopReason;
    }
  | {
      readonly type: 'lobby-stopped';
      readonly at: number;
      readonly namespaceId: string;
      readonly lobbyId: string;
      readonly reason: StopReason;
      readonly failed: boolean;
      /** The container's exit code, when the runtime reported one. */
      readonly exitCode?: number;
    }
  | { readonly type: 'player-reserved'; readonly at: number; readonly namespaceId: string; readonly player: Player }
  | {
      readonly type: 'player-connected';
      readonly at: number;
      readonly namespaceId: string;
      readonly playerId: string;
      readonly lobbyId: string;
    }
  | {
      readonly type: 'player-removed';
      readonly at: number;
      readonly namespaceId: string;
      readonly playerId: string;
      readonly lobbyId: string;
      readonly wasConnected: boolean;
      readonly reason: PlayerRemoval;
    }
  /** A reserved seat's lobby became ready: the waiting find/join/create can answer. */
  | {
      readonly type: 'seat-ready';
      readonly at: number;
      readonly namespaceId: string;
      readonly playerId: string;
      readonly lobbyId: string;
    }
  /** A reserved seat's lobby stopped before it was ready: the waiting request fails with `error`. */
  | {
      readonly type: 'seat-failed';
      readonly at: number;
      readonly namespaceId: string;
      readonly playerId: string;
      readonly lobbyId: string;
      readonly error: MatchError;
    }
  | { readonly type: 'version-published'; readonly at: number; readonly namespaceId: string; readonly versionId: string }
  | {
      readonly type: 'captcha-verified';
      readonly at: number;
      readonly namespaceId: string;
      readonly source: string;
    };

export type PlayerRemoval = 'disconnected' | 'connect-expired' | 'lifetime' | 'lobby-stopped';
