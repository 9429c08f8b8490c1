/**
 * Games: created with an empty first version and the namespaces `prod` and `staging` on it, listed
 * and read with their players, and name ids unique across games.
 */
import type { Problem } from '../core/config/index.js';
import { matchError, type MatchError } from '../core/errors.js';
import { err, type Result } from '../core/result.js';
import type { GameStore, NamespaceStore, VersionStore, GameRecord, NamespaceRecord, VersionRecord } from '../io/catalog.js';
import type { Clock, Random } from '../io/index.js';
import type { Matchmaker } from './matchmaker.js';
import { newNamespaceRecord } from './namespaces.js';
import { publishNamespace, type PublishDeps } from './publish.js';

/**
 * @example
 * { nameId: 'my-game', displayName: 'My Game', developerGroupId }
 */
export interface NewGame {
  readonly nameId: string;
  readonly displayName: string;
  readonly developerGroupId: string;
}

export interface GameDeps extends PublishDeps {
  readonly catalog: PublishDeps['catalog'] & GameStore & VersionStore & NamespaceStore;
  readonly clock: Clock;
  readonly random: Random;
}

/** The namespaces every new game starts with. */
export const DEFAULT_NAMESPACES = [
  { nameId: 'prod', displayName: 'Production' },
  { nameId: 'staging', displayName: 'Staging' },
] as const;

/** The display name of a new game's empty first version. */
export const FIRST_VERSION = '0.0.1';

/**
 * Creates a game (`CLOUD_NAME_ID_TAKEN` if another game has its name id) with an empty version
 * `0.0.1` and the namespaces `prod` and `staging` pointing to it, published to the matchmaker.
 *
 * @effects catalog (createGame, createVersion, createNamespace, getVersion), matchmaker (addNamespace, publish), clock, random
 * @example
 * const r = await createGame(deps, { nameId: 'my-game', displayName: 'My Game', developerGroupId });
 * if (r.ok) r.value.id
 */
export async function createGame(deps: GameDeps, fields: NewGame): Promise<Result<GameRecord, MatchError>> {
  const { catalog, clock, random } = deps;
  const now = clock.now();
  const created = await catalog.createGame({ id: random.uuid(), ...fields, createdAt: now });
  if (!created.ok) return err(matchError('CLOUD_NAME_ID_TAKEN', { name_id: fields.nameId }));
  const game = created.value;
  const version: VersionRecord = { id: random.uuid(), gameId: game.id, displayName: FIRST_VERSION, createdAt: now, config: {}, lobbyGroupIds: {} };
  await catalog.createVersion(version);
  for (const names of DEFAULT_NAMESPACES) {
    const made = await catalog.createNamespace(newNamespaceRecord(random.uuid(), game.id, { ...names, versionId: version.id }, now));
    if (made.ok) await publishNamespace(deps, made.value);
  }
  return created;
}

type ReadDeps = {
  readonly catalog: NamespaceStore;
  readonly matchmaker: Pick<Matchmaker, 'snapshot'>;
};

/** Players holding a seat in any lobby of the game's namespaces. */
async function playerCount(deps: ReadDeps, gameId: string): Promise<number> {
  const world = await deps.matchmaker.snapshot();
  let n = 0;
  for (const ns of await deps.catalog.listNamespaces(gameId)) {
    for (const lobby of world.namespaces.get(ns.id)?.lobbies.values() ?? []) n += lobby.playerCount;
  }
  return n;
}

/** A game and the players in its lobbies now. */
export interface GameSummary {
  readonly game: GameRecord;
  readonly playerCount: number;
}

/**
 * Every game in creation order, or only the game `gameId` (none if it is unknown).
 *
 * @effects catalog (listGames or getGame, listNamespaces), matchmaker (snapshot)
 * @example
 * await listGames(deps, agent.gameId) // [{ game, playerCount: 3 }]
 */
export async function listGames(
  deps: ReadDeps & { readonly catalog: GameStore },
  gameId?: string,
): Promise<readonly GameSummary[]> {
  let games: readonly GameRecord[];
  if (gameId === undefined) games = await deps.catalog.listGames();
  else {
    const game = await deps.catalog.getGame(gameId);
    games = game === undefined ? [] : [game];
  }
  const out: GameSummary[] = [];
  for (const game of games) out.push({ game, playerCount: await playerCount(deps, game.id) });
  return out;
}

/** A game with its namespaces (oldest first), versions (newest first) and players. */
export interface GameDetails extends GameSummary {
  readonly namespaces: readonly NamespaceRecord[];
  readonly versions: readonly VersionRecord[];
}

/**
 * The game's namespaces, versions and player count.
 *
 * @effects catalog (listNamespaces, listVersions), matchmaker (snapshot)
 * @example
 * (await gameDetails(deps, game)).versions[0] // the newest
 */
export async function gameDetails(deps: ReadDeps & { readonly catalog: VersionStore }, game: GameRecord): Promise<GameDetails> {
  const namespaces = await deps.catalog.listNamespaces(game.id);
  const versions = [...(await deps.catalog.listVersions(game.id))].reverse();
  return { game, namespaces, versions, playerCount: await playerCount(deps, game.id) };
}

/**
 * `name-id.not-unique` when another game has the name id.
 *
 * @effects catalog (listGames)
 * @example
 * await gameNameIdProblems({ catalog }, 'my-game') // [{ path: ['name-id', 'not-unique'] }] once it exists
 */
export async function gameNameIdProblems(deps: { readonly catalog: GameStore }, nameId: string): Promise<readonly Problem[]> {
  const taken = (await deps.catalog.listGames()).some((g) => g.nameId === nameId);
  return taken ? [{ path: ['name-id', 'not-unique'] }] : [];
}
