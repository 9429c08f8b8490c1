/** The page of lobby states a store answers `lobbyStates` with, from what it read. */
import type { LobbyStatePage } from '../io/index.js';

/**
 * The texts of the `included` lobbies, in their order (one whose state went between the store's
 * two reads is left out), and the lobbies `omitted` for the budget (see `fitStates`).
 *
 * @example
 * const { included, omitted } = fitStates(ids, (id) => sizes.get(id), maxBytes);
 * return statePage(included, omitted, textsOf(included));
 */
export const statePage = (included: readonly string[], omitted: readonly string[], texts: ReadonlyMap<string, string>): LobbyStatePage => {
  const states = new Map<string, string>();
  for (const id of included) {
    const text = texts.get(id);
    if (text !== undefined) states.set(id, text);
  }
  return { states, omitted: new Set(omitted) };
};
