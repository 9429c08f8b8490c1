import type { GameMode, VerificationConfig } from '../config/types.js';
import { type MatchError, matchError } from '../errors.js';
import type { Lobby } from '../lobby/lobby.js';
import type { Client } from '../matchmaker/request.js';
import { err, ok, type Result } from '../result.js';

export type ActionKind = 'Find' | 'Join' | 'Create';

/**
 * POST `body` (JSON) to `url` with exactly `headers`; feed the outcome to {@link verificationVerdict}.
 * The body is the payload of wire.md §3.8, snake_case as the developer's server receives it.
 */
export interface VerificationCheck {
  readonly gameMode: string;
  readonly kind: ActionKind;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: VerificationPayload;
}

export interface VerificationPayload {
  readonly verification_data: unknown;
  readonly game: {
    readonly namespace_id: string;
    readonly game_mode_id: string;
    readonly game_mode_name_id: string;
    readonly lobby: {
      readonly lobby_id: string;
      readonly region_id: string;
      readonly region_name_id: string;
      readonly create_ts: string;
      readonly is_closed: boolean;
    } | null;
    readonly state: unknown;
    readonly config: unknown;
    readonly tags: Readonly<Record<string, string>>;
    readonly dynamic_max_players: number | null;
  };
  readonly clients: Readonly<Record<string, {
    readonly user_agent: string | null;
    readonly latitude: number | null;
    readonly longitude: number | null;
  }>>;
  readonly join_kind: 'Normal' | 'Party';
  readonly kind: ActionKind;
}

/** What happened to the verification request. */
export type VerificationResponse =
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'failed'; readonly reason: string };

/** Proof that one check passed; pass it back to the same decision to be admitted. */
export interface VerificationPass {
  readonly gameMode: string;
  readonly kind: ActionKind;
  readonly url: string;
}

export interface PayloadInput {
  readonly namespaceId: string;
  readonly lobbyGroupId: string;
  readonly mode: GameMode;
  readonly kind: ActionKind;
  readonly client: Client;
  readonly verificationData: unknown;
  readonly lobby?: Lobby;
  readonly lobbyState?: unknown;
  readonly lobbyConfig?: unknown;
  readonly tags: Readonly<Record<string, string>>;
  readonly dynamicMaxPlayers?: number;
  readonly party: boolean;
}

/**
 * The check for one configured verification.
 *
 * @example
 * verificationCheck(cfg, { namespaceId, lobbyGroupId, mode, kind: 'Find', client, verificationData: null, tags: {}, party: false })
 */
export const verificationCheck = (cfg: VerificationConfig, input: PayloadInput): VerificationCheck => {
  const { lobby, client } = input;
  return {
    gameMode: input.mode.name,
    kind: input.kind,
    url: cfg.url,
    headers: cfg.headers,
    body: {
      verification_data: input.verificationData ?? null,
      game: {
        namespace_id: input.namespaceId,
        game_mode_id: input.lobbyGroupId,
        game_mode_name_id: input.mode.name,
        lobby: lobby
          ? {
              lobby_id: lobby.id,
              region_id: lobby.region,
              region_name_id: lobby.region,
              create_ts: new Date(lobby.createdAt).toISOString(),
              is_closed: lobby.closed,
            }
          : null,
        state: input.lobbyState ?? null,
        config: input.lobbyConfig ?? null,
        tags: input.tags,
        dynamic_max_players: input.dynamicMaxPlayers ?? null,
      },
      clients: {
        [client.ip]: {
          user_agent: client.userAgent ?? null,
          latitude: client.coords?.latitude ?? null,
          longitude: client.coords?.longitude ?? null,
        },
      },
      join_kind: input.party ? 'Party' : 'Normal',
      kind: input.kind,
    },
  };
};

/**
 * The verdict of a verification request: any 2xx admits; another status or a timeout is
 * `MATCHMAKER_VERIFICATION_FAILED`; a transport failure (including a URL the egress guard refused)
 * is `MATCHMAKER_VERIFICATION_REQUEST_FAILED`. The response body is never looked at.
 *
 * @example
 * verificationVerdict(check, { kind: 'status', status: 204 }) // ok(pass)
 */
export const verificationVerdict = (
  check: VerificationCheck,
  response: VerificationResponse,
): Result<VerificationPass, MatchError> => {
  switch (response.kind) {
    case 'status':
      return response.status >= 200 && response.status < 300
        ? ok({ gameMode: check.gameMode, kind: check.kind, url: check.url })
        : err(matchError('MATCHMAKER_VERIFICATION_FAILED', { status: response.status }));
    case 'timeout':
      return err(matchError('MATCHMAKER_VERIFICATION_FAILED', { status: 408 }));
    case 'failed':
      return err(matchError('MATCHMAKER_VERIFICATION_REQUEST_FAILED', { reason: response.reason }));
  }
};

/** Whether `passes` holds a pass for `check`. */
export const isPassed = (check: VerificationCheck, passes: readonly VerificationPass[] | undefined): boolean =>
  passes?.some((p) => p.gameMode === check.gameMode && p.kind === check.kind && p.url === check.url) ?? false;
