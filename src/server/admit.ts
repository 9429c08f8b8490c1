/**
 * The common tail of find/join/create: run the matchmaker with a seat watch already listening,
 * wait for a starting lobby, mint the player token and render the JoinResponse.
 */
import { matchError, type MatchError } from '../core/errors.js';
import { isReady } from '../core/lobby/flags.js';
import { stoppedRefusal } from '../core/lobby/why.js';
import type { NamespaceRecord } from '../io/catalog.js';
import type { RequestRecord } from '../services/demand-recorder.js';
import type { Matchmaker, MatchOutcome } from '../services/matchmaker.js';
import { ensureNamespace } from '../services/publish.js';
import type { Ctx } from './context.js';
import { fail, failWith, HttpError } from './errors.js';
import { joinResponse } from './join-response.js';
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

const unwrapOutcome = (outcome: MatchOutcome): Extract<MatchOutcome, { ok: true }> => (outcome.ok ? outcome : failWith(outcome.error));

/** What a request asked for, as recorded when refused (an admitted one records its lobby's mode and region). */
export interface Asked {
  readonly kind: 'find' | 'join' | 'create';
  readonly gameMode?: string;
  readonly region?: string;
}

/**
 * Admits the request and, when the server records demand, records it with its answer (a push onto
 * the recorder's buffer: nothing is awaited).
 *
 * @effects matchmaker, timers, catalog (player token), demand recorder
 * @example
 * return admit(ctx, ns, { kind: 'find', gameMode: 'default' }, (mm) => mm.find({ namespaceId: ns.id, gameModes, client }));
 */
export async function admit(ctx: Ctx, ns: NamespaceRecord, asked: Asked, run: (mm: Matchmaker) => Promise<MatchOutcome>): Promise<unknown> {
  const { matchmaker, timers, settings, tokens, regions, clock } = ctx.services;
  const recorder = ctx.services.demand?.recorder;
  const at = recorder === undefined ? 0 : clock.now();
  let outcome: MatchOutcome | undefined;
  let code = 'ok';
  if (!matchmaker.knowsNamespace(ns.id)) await ensureNamespace(ctx.services, ns);
  const watch = new SeatWatch(matchmaker.hub);
  try {
    outcome = await run(matchmaker);
    const { seat, lobby } = unwrapOutcome(outcome);
    const playerId = seat.playerIds[0];
    if (playerId === undefined) throw new Error('an admitted seat has no player');
    if (!seat.ready) {
      const waited = await watch.wait(playerId, timers, settings.seatWaitMs, ctx.signal, {
        everyMs: settings.seatPollMs,
        check: () => seatState(matchmaker, ns.id, seat.lobbyId, playerId),
      });
      if (waited.kind === 'failed') failWith(waited.error);
      if (waited.kind !== 'ready') {
        // Give the seat back: the client gets an answer now and may simply try again. After the
        // whole seat wait, a lobby left idle by it stops as not ready (the core decides), its log
        // saying what its server must do; a client that went away earlier just leaves.
        const ref = { namespaceId: ns.id, lobbyId: seat.lobbyId, playerId };
        await (waited.kind === 'timeout' ? matchmaker.seatWaitExpired(ref) : matchmaker.playerDisconnected(ref));
        fail('MATCHMAKER_LOBBY_NOT_STARTED', { lobby_id: seat.lobbyId, seconds: Math.round(settings.seatWaitMs / 1000) }, { lobby_id: seat.lobbyId });
      }
    }
    const grant = { kind: 'player', namespaceId: ns.id, lobbyId: lobby.id, playerId } as const;
    const token = tokens.playerToken(grant) ?? (await tokens.issue(grant, ns.nameId));
    return joinResponse(lobby, regions, settings, token);
  } catch (e) {
    code = e instanceof HttpError ? e.error.code : 'ERROR';
    throw e;
  } finally {
    watch.close();
    if (recorder !== undefined) recorder.request(recordOf(ns.id, asked, at, outcome, code, clock.now() - at));
    ctx.services.history?.request(ns.id, asked.kind, code);
  }
}

/** What the recorder keeps of an answered request: the mode and region of its lobby (admitted, or a refused join's), else what was asked. */
function recordOf(namespaceId: string, asked: Asked, at: number, outcome: MatchOutcome | undefined, code: string, waitMs: number): RequestRecord {
  const admitted = outcome?.ok === true ? outcome : undefined;
  const record: { -readonly [K in keyof RequestRecord]: RequestRecord[K] } = {
    namespaceId, at, kind: asked.kind, party: admitted?.seat.playerIds.length ?? 1, outcome: code, waitMs, playerIds: admitted?.seat.playerIds ?? [],
  };
  // Admitted: the lobby's; a refused join: its lobby's, when it exists; otherwise what was asked.
  const lobby = admitted?.lobby ?? (outcome?.ok === false ? outcome.lobby : undefined);
  const gameMode = lobby?.gameMode ?? asked.gameMode;
  const region = lobby?.region ?? asked.region;
  if (gameMode !== undefined) record.gameMode = gameMode;
  if (region !== undefined) record.region = region;
  if (outcome?.gates !== undefined) record.gates = outcome.gates;
  if (admitted !== undefined) record.seatReady = admitted.seat.ready;
  return record;
}

/** A matchmaker result as a handler's answer (`{}`), or its error. */
export const done = (r: { readonly ok: true } | { readonly ok: false; readonly error: MatchError }): unknown => (r.ok ? {} : failWith(r.error));
