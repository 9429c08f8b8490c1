/**
 * The common tail of find/join/create: run the matchmaker with a seat watch already listening,
 * wait for a starting lobby, mint the player token and record the demand (the route renders it).
 */
import { matchError, type MatchError } from '../core/errors.js';
import { isReady } from '../core/lobby/flags.js';
import type { Lobby } from '../core/lobby/lobby.js';
import { stoppedRefusal } from '../core/lobby/why.js';
import type { NamespaceRecord } from '../io/catalog.js';
import type { Clock, Timers } from '../io/index.js';
import type { AnalyticsHistory } from './analytics-history.js';
import type { TokenIssuer } from './tokens.js';
import type { DemandRecorder, RequestRecord } from './demand-recorder.js';
import type { CreateRequest, FindRequest, JoinRequest, Matchmaker, MatchOutcome } from './matchmaker.js';
import { ensureNamespace, type PublishDeps } from './publish.js';
import { SeatWatch, type SeatOutcome } from './seat-wait.js';

/** The seat as the shared store has it: ready, failed (lobby gone or stopping, player removed), or still waiting. */
async function seatState(matchmaker: Matchmaker, namespaceId: string, lobbyId: string, playerId: string): Promise<SeatOutcome | undefined> {
  const lobby = (await matchmaker.snapshot()).namespaces.get(namespaceId)?.lobbies.get(lobbyId);
  if (lobby === undefined) return { kind: 'failed', error: matchError('MATCHMAKER_LOBBY_NOT_FOUND', undefined, { metadata: { lobby_id: lobbyId } }) };
  const stopped = stoppedRefusal(lobby);
  if (stopped !== undefined) return { kind: 'failed', error: stopped };
  if (!lobby.players.has(playerId)) return { kind: 'failed', error: matchError('MATCHMAKER_PLAYER_REMOVED', undefined, { metadata: { lobby_id: lobbyId } }) };
  return isReady(lobby) ? { kind: 'ready' } : undefined;
}

/** What a request asks the matchmaker for. */
export type AdmitRequest =
  | { readonly kind: 'find'; readonly request: FindRequest }
  | { readonly kind: 'join'; readonly request: JoinRequest }
  | { readonly kind: 'create'; readonly request: CreateRequest };

/** An admitted request's lobby and player token, or why it was refused. */
export type AdmitResult = { readonly ok: true; readonly lobby: Lobby; readonly token: string } | { readonly ok: false; readonly error: MatchError };

export interface AdmitDeps extends PublishDeps {
  readonly matchmaker: Matchmaker;
  readonly timers: Timers;
  readonly clock: Clock;
  readonly tokens: Pick<TokenIssuer, 'playerToken' | 'issue'>;
  /** How long a seat waits for its starting lobby, and how often the store is read meanwhile. */
  readonly settings: { readonly seatWaitMs: number; readonly seatPollMs: number };
  /** The recorder (absent: nothing is recorded). */
  readonly demand?: { readonly recorder?: Pick<DemandRecorder, 'request'> };
  /** The dashboard's per-minute history (absent: nothing is counted). */
  readonly history?: Pick<AnalyticsHistory, 'request'>;
}

const run = (matchmaker: Matchmaker, asked: AdmitRequest): Promise<MatchOutcome> => {
  switch (asked.kind) {
    case 'find':
      return matchmaker.find(asked.request);
    case 'join':
      return matchmaker.join(asked.request);
    case 'create':
      return matchmaker.create(asked.request);
  }
};

/**
 * Admits the request and, when the server records demand, records it with its answer (a push onto
 * the recorder's buffer: nothing is awaited). `signal` gives what aborts the seat wait (the client
 * went away); it is asked for only when a seat waits, since making one costs every request an
 * AbortController and a listener on its socket (a sixth of a find's CPU, measured).
 *
 * @effects matchmaker, timers, catalog (player token), demand recorder
 * @example
 * const result = await admit(ctx.services, ns, { kind: 'find', request: { namespaceId: ns.id, gameModes, client } }, () => ctx.signal);
 */
export async function admit(deps: AdmitDeps, ns: NamespaceRecord, asked: AdmitRequest, signal: () => AbortSignal): Promise<AdmitResult> {
  const { matchmaker, timers, settings, tokens, clock } = deps;
  const recorder = deps.demand?.recorder;
  const at = recorder === undefined ? 0 : clock.now();
  let outcome: MatchOutcome | undefined;
  let code = 'ok';
  if (!matchmaker.knowsNamespace(ns.id)) await ensureNamespace(deps, ns);
  const watch = new SeatWatch(matchmaker.hub);
  try {
    outcome = await run(matchmaker, asked);
    if (!outcome.ok) {
      code = outcome.error.code;
      return outcome;
    }
    const { seat, lobby } = outcome;
    const playerId = seat.playerIds[0];
    if (playerId === undefined) throw new Error('an admitted seat has no player');
    if (!seat.ready) {
      const waited = await watch.wait(playerId, timers, settings.seatWaitMs, signal(), {
        everyMs: settings.seatPollMs,
        check: () => seatState(matchmaker, ns.id, seat.lobbyId, playerId),
      });
      if (waited.kind === 'failed') {
        code = waited.error.code;
        return { ok: false, error: waited.error };
      }
      if (waited.kind !== 'ready') {
        // Give the seat back: the client gets an answer now and may simply try again. After the
        // whole seat wait, a lobby left idle by it stops as not ready (the core decides), its log
        // saying what its server must do; a client that went away earlier just leaves.
        const ref = { namespaceId: ns.id, lobbyId: seat.lobbyId, playerId };
        await (waited.kind === 'timeout' ? matchmaker.seatWaitExpired(ref) : matchmaker.playerDisconnected(ref));
        const error = matchError('MATCHMAKER_LOBBY_NOT_STARTED', { lobby_id: seat.lobbyId, seconds: Math.round(settings.seatWaitMs / 1000) }, { metadata: { lobby_id: seat.lobbyId } });
        code = error.code;
        return { ok: false, error };
      }
    }
    const grant = { kind: 'player', namespaceId: ns.id, lobbyId: lobby.id, playerId } as const;
    const token = tokens.playerToken(grant) ?? (await tokens.issue(grant, ns.nameId));
    return { ok: true, lobby, token };
  } catch (e) {
    code = 'ERROR';
    throw e;
  } finally {
    watch.close();
    if (recorder !== undefined) recorder.request(recordOf(ns.id, asked, at, outcome, code, clock.now() - at));
    deps.history?.request(ns.id, asked.kind, code);
  }
}

/** What the recorder keeps of an answered request: the mode and region of its lobby (admitted, or a refused join's), else what was asked. */
function recordOf(namespaceId: string, asked: AdmitRequest, at: number, outcome: MatchOutcome | undefined, code: string, waitMs: number): RequestRecord {
  const admitted = outcome?.ok === true ? outcome : undefined;
  const record: { -readonly [K in keyof RequestRecord]: RequestRecord[K] } = {
    namespaceId, at, kind: asked.kind, party: admitted?.seat.playerIds.length ?? 1, outcome: code, waitMs, playerIds: admitted?.seat.playerIds ?? [],
  };
  // Admitted: the lobby's; a refused join: its lobby's, when it exists; otherwise what was asked.
  const lobby = admitted?.lobby ?? (outcome?.ok === false ? outcome.lobby : undefined);
  const gameMode = lobby?.gameMode ?? askedOf(asked).gameMode;
  const region = lobby?.region ?? askedOf(asked).region;
  if (gameMode !== undefined) record.gameMode = gameMode;
  if (region !== undefined) record.region = region;
  if (outcome?.gates !== undefined) record.gates = outcome.gates;
  if (admitted !== undefined) record.seatReady = admitted.seat.ready;
  return record;
}

/** What a request asked for (a find: its first mode and region), as recorded when refused. */
const askedOf = ({ kind, request: r }: AdmitRequest): { readonly gameMode?: string | undefined; readonly region?: string | undefined } =>
  kind === 'find' ? { gameMode: r.gameModes[0], region: r.regions?.[0] } : kind === 'create' ? r : {};
