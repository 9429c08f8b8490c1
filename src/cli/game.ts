/**
 * The game a command acts on: a cloud token's own game (`GET /cloud/auth/inspect`), or with an
 * admin token the `--game` given (an id or a name id), and its namespaces by name.
 */
import type { Api } from './api.js';
import { UsageError } from './errors.js';

export interface NamespaceSummary {
  readonly namespace_id: string;
  readonly name_id: string;
  readonly display_name: string;
  readonly version_id: string;
}

export interface GameSummary {
  readonly game_id: string;
  readonly name_id: string;
  readonly display_name: string;
  readonly namespaces: readonly NamespaceSummary[];
  readonly versions: readonly { readonly version_id: string; readonly display_name: string; readonly create_ts: string }[];
  /** The server's regions: the id lobbies carry (`region_id`) and the name a version config uses. */
  readonly available_regions?: readonly { readonly region_id: string; readonly region_name_id: string }[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The game id: `--game` (an id, or a name id looked up in `GET /cloud/games`) or the cloud token's game. */
export async function resolveGameId(api: Api, game: string | undefined): Promise<string> {
  if (game !== undefined) {
    if (UUID.test(game)) return game;
    const { games } = await api.call<{ games: { game_id: string; name_id: string }[] }>('GET', '/cloud/games');
    const found = games.find((g) => g.name_id === game);
    if (found === undefined) throw new UsageError(`no game named ${game} (tavern game list shows them)`);
    return found.game_id;
  }
  const { agent } = await api.call<{ agent: { game_cloud?: { game_id: string } } }>('GET', '/cloud/auth/inspect');
  if (agent.game_cloud === undefined) throw new UsageError('this token belongs to no game: pass --game <name or id> (with an admin token) or use a cloud token');
  return agent.game_cloud.game_id;
}

export async function getGame(api: Api, gameId: string): Promise<GameSummary> {
  return (await api.call<{ game: GameSummary }>('GET', `/cloud/games/${gameId}`)).game;
}

/** The namespace named `name` (a name id such as `prod`, or an id). */
export function findNamespace(game: GameSummary, name: string): NamespaceSummary {
  const ns = game.namespaces.find((n) => n.name_id === name || n.namespace_id === name);
  if (ns === undefined) throw new UsageError(`game ${game.name_id} has no namespace ${name} (it has: ${game.namespaces.map((n) => n.name_id).join(', ')})`);
  return ns;
}
