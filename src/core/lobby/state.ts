/**
 * The free-form state a lobby publishes (`PUT /matchmaker/lobbies/state`, wire.md §3.10): who may
 * set it, when it goes, and which states a listing carries. The store keeps the text beside the
 * lobby's row and deletes it in the transaction that stops the lobby.
 */
import { matchError, type MatchError } from '../errors.js';
import type { NamespaceChange } from '../persist.js';
import type { World } from '../world.js';
import { isActive } from './flags.js';
import type { LobbyRef } from './lifecycle.js';
import { stoppedRefusal } from './why.js';

/**
 * Why a lobby may not set (or clear) its state now, if it may not: unknown in the namespace
 * (`MATCHMAKER_LOBBY_NOT_FOUND`), or stopping or stopped (`MATCHMAKER_LOBBY_STOPPED`: its state
 * went with it, and nothing would ever remove a new one).
 *
 * @example
 * lobbyStateRefusal(world, { namespaceId, lobbyId }); // undefined: set it
 */
export const lobbyStateRefusal = (world: World, ref: LobbyRef): MatchError | undefined => {
  const lobby = world.namespaces.get(ref.namespaceId)?.lobbies.get(ref.lobbyId);
  if (lobby === undefined) return matchError('MATCHMAKER_LOBBY_NOT_FOUND');
  return stoppedRefusal(lobby);
};

/**
 * The lobbies of a stored change whose state must go: those that stopped or began to stop, and
 * those forgotten.
 *
 * @example
 * for (const id of statelessLobbies(change)) deleteState.run(id);
 */
export const statelessLobbies = (change: NamespaceChange): string[] => {
  const ids = [...change.deleted];
  for (const lobby of change.upserted) if (!isActive(lobby)) ids.push(lobby.id);
  return ids;
};

/**
 * Which states a listing carries within `maxBytes` (UTF-8 bytes of their JSON text): in the
 * order asked, each that still fits is included, each that does not is omitted (a later, smaller
 * one may still fit). Lobbies without a state (`bytesOf` undefined) are in neither list.
 *
 * @example
 * fitStates(['a', 'b'], (id) => (id === 'a' ? 60 : 50), 100); // { included: ['a'], omitted: ['b'] }
 */
export const fitStates = (
  lobbyIds: readonly string[],
  bytesOf: (lobbyId: string) => number | undefined,
  maxBytes: number,
): { readonly included: string[]; readonly omitted: string[] } => {
  const included: string[] = [];
  const omitted: string[] = [];
  let left = maxBytes;
  for (const id of lobbyIds) {
    const bytes = bytesOf(id);
    if (bytes === undefined) continue;
    if (bytes <= left) {
      included.push(id);
      left -= bytes;
    } else omitted.push(id);
  }
  return { included, omitted };
};
