import { describe, expect, it } from 'vitest';
import { createGame, DEFAULT_NAMESPACES, FIRST_VERSION, gameDetails, gameNameIdProblems, listGames } from '../../src/services/games.js';
import { cloud, expectError, expectOk, T0 } from './cloud.js';

const GROUP = '00000000-0000-4000-8000-00000000abcd';
const newGame = (nameId = 'my-game') => ({ nameId, displayName: 'My Game', developerGroupId: GROUP });

/** Seats `n` players (one find each) in the namespace. */
const seat = async (c: ReturnType<typeof cloud>, namespaceId: string, n: number): Promise<void> => {
  for (let i = 0; i < n; i++) {
    const outcome = await c.matchmaker.find({ namespaceId, gameModes: ['default'], client: { ip: `203.0.113.${i + 1}` } });
    if (!outcome.ok) throw new Error(outcome.error.code);
  }
};

describe('createGame', () => {
  it('stores the game with an empty first version and the namespaces prod and staging on it, both published', async () => {
    const c = cloud();
    c.clock.t = T0 + 9;
    const game = expectOk(await createGame(c.deps, newGame()));
    expect(game).toEqual({ id: game.id, nameId: 'my-game', displayName: 'My Game', developerGroupId: GROUP, createdAt: T0 + 9 });
    expect(await c.catalog.getGame(game.id)).toEqual(game);
    const [version, ...more] = await c.catalog.listVersions(game.id);
    expect(more).toEqual([]);
    expect(version).toMatchObject({ displayName: FIRST_VERSION, config: {}, lobbyGroupIds: {}, createdAt: T0 + 9 });
    const namespaces = await c.catalog.listNamespaces(game.id);
    expect(namespaces.map((n) => [n.nameId, n.displayName, n.versionId])).toEqual(DEFAULT_NAMESPACES.map((d) => [d.nameId, d.displayName, version?.id]));
    for (const ns of namespaces) expect(c.store.world.namespaces.get(ns.id)?.currentVersionId).toBe(version?.id);
    expect(c.random.issued.slice(0, 2)).toEqual([game.id, version?.id]);
  });

  it('answers CLOUD_NAME_ID_TAKEN for a name id another game has, and creates nothing more', async () => {
    const c = cloud();
    expectOk(await createGame(c.deps, newGame()));
    const error = expectError(await createGame(c.deps, { ...newGame(), displayName: 'Again' }));
    expect(error).toEqual({ code: 'CLOUD_NAME_ID_TAKEN', params: { name_id: 'my-game' } });
    expect(await c.catalog.listGames()).toHaveLength(1);
    expect(c.store.world.namespaces.size).toBe(2);
  });
});

describe('listGames', () => {
  it('lists every game in creation order with the players seated in its namespaces', async () => {
    const c = cloud();
    const first = await c.published();
    await seat(c, first.ns.id, 3);
    const second = expectOk(await createGame(c.deps, newGame('second')));
    expect((await listGames(c.deps)).map((s) => [s.game.id, s.playerCount])).toEqual([[first.game.id, 3], [second.id, 0]]);
  });

  it('lists only the game asked for, and nothing for an unknown one', async () => {
    const c = cloud();
    const first = await c.published();
    await seat(c, first.ns.id, 2);
    await createGame(c.deps, newGame('second'));
    expect(await listGames(c.deps, first.game.id)).toEqual([{ game: first.game, playerCount: 2 }]);
    expect(await listGames(c.deps, '00000000-0000-4000-8000-0000000000ff')).toEqual([]);
  });
});

describe('gameDetails', () => {
  it('gives the namespaces oldest first, the versions newest first and the players', async () => {
    const c = cloud();
    const { game, version, ns } = await c.published();
    const staging = await c.namespace(game.id, version.id, 'staging');
    const v2 = await c.version(game.id, 'v2');
    await seat(c, ns.id, 1);
    const details = await gameDetails(c.deps, game);
    expect(details.game).toEqual(game);
    expect(details.namespaces.map((n) => n.id)).toEqual([ns.id, staging.id]);
    expect(details.versions.map((v) => v.id)).toEqual([v2.id, version.id]);
    expect(details.playerCount).toBe(1);
  });
});

describe('gameNameIdProblems', () => {
  it('reports name-id.not-unique only for a name id a game has', async () => {
    const c = cloud();
    await c.game('taken');
    expect(await gameNameIdProblems(c.deps, 'taken')).toEqual([{ path: ['name-id', 'not-unique'] }]);
    expect(await gameNameIdProblems(c.deps, 'free')).toEqual([]);
  });
});
