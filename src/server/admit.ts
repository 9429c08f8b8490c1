/**
 * The common tail of find/join/create: run the matchmaker with a seat watch already listening,
 * wait for a starting lobby, mint the player token and render the JoinResponse.
 */
import { matchError, type MatchError } from '../core/errors.js';
import { isActive, isReady } from '../core/lobby/flags.js';
import type { NamespaceRecord } from '../io/catalog.js';
import type { Matchmaker, MatchOutcome } from '../services/matchmaker.js';
import { ensureNamespace } from '../services/publish.js';
import type { Ctx } from './context.js';
import { fail, failWith, HttpError } from './errors.js';
import { joinResponse } from './join-response.js';
import { SeatWatch, type SeatOutcome } from './seat-wait.js';

/** The seat as the shared store has it: ready, failed (lobby gone or stopping, player removed), or still waiting. */
async function seatState(matchmaker: Matchmaker, namespaceId: string, lobbyId: string, playerId: string): Promise<SeatOutcome | undefined> {
  const lobby = (await matchmaker.snapshot()).namespaces.get(namespaceId)?.lobbies.get(lobbyId);
  if (lobby === undefined || !isActive(lobby) || !lobby.players.has(playerId)) return { kind: 'failed', error: matchError('MATCHMAKER_LOBBY_STOPPED') };
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
  const recorder = ctx.services.demand?.recorder;
  if (recorder === undefined) return seatAndAnswer(ctx, ns, run);
  const { clock } = ctx.services;
  const at = clock.now();
  let outcome: MatchOutcome | undefined;
  let code = 'ok';
  try {
    return await seatAndAnswer(ctx, ns, async (mm) => (outcome = await run(mm)));
  } catch (e) {
    code = e instanceof HttpError ? e.error.code : 'ERROR';
    throw e;
  } finally {
    const admitted = outcome?.ok === true ? outcome : undefined;
    recorder.request({
      namespaceId: ns.id, at,
      ...(admitted === undefined ? asked : { kind: asked.kind, gameMode: admitted.lobby.gameMode, region: admitted.lobby.region }),
      party: admitted?.seat.playerIds.length ?? 1,
      ...(outcome?.gates === undefined ? {} : { gates: outcome.gates }),
      outcome: code, waitMs: clock.now() - at, playerIds: admitted?.seat.playerIds ?? [],
    });
  }
}

async function seatAndAnswer(ctx: Ctx, ns: NamespaceRecord, run: (mm: Matchmaker) => Promise<MatchOutcome>): Promise<unknown> {
  const { matchmaker, timers, settings, tokens, regions } = ctx.services;
  await ensureNamespace(ctx.services, ns);
  const watch = new SeatWatch(matchmaker.hub);
  try {
    const { seat, lobby } = unwrapOutcome(await run(matchmaker));
    const playerId = seat.playerIds[0];
    if (playerId === undefined) throw new Error('an admitted seat has no player');
    if (!seat.ready) {
      const waited = await watch.wait(playerId, timers, settings.seatWaitMs, ctx.signal, {
        everyMs: settings.seatPollMs,
        check: () => seatState(matchmaker, ns.id, seat.lobbyId, playerId),
      });
      if (waited.kind === 'failed') failWith(waited.error);
      if (waited.kind !== 'ready') {
        // Give the seat back: the client gets an answer now and may simply try again.
        await matchmaker.playerDisconnected({ namespaceId: ns.id, lobbyId: seat.lobbyId, playerId });
        fail('MATCHMAKER_LOBBY_NOT_STARTED', { seconds: Math.round(settings.seatWaitMs / 1000) });
      }
    }
    const token = await tokens.issue({ kind: 'player', namespaceId: ns.id, lobbyId: lobby.id, playerId }, ns.nameId);
    return joinResponse(lobby, regions, settings, token);
  } finally {
    watch.close();
  }
}

/** A matchmaker result as a handler's answer (`{}`), or its error. */
export const done = (r: { readonly ok: true } | { readonly ok: false; readonly error: MatchError }): unknown => (r.ok ? {} : failWith(r.error));
