import { describe, expect, it } from 'vitest';
import { lobbyReady, playerConnected, setClosed } from '../../src/core/lobby/lifecycle.js';
import { find } from '../../src/core/matchmaker/find.js';
import { publishVersion } from '../../src/core/namespace.js';
import { dehydrateWorld, diffWorld, hydrateWorld } from '../../src/core/persist.js';
import { tick } from '../../src/core/tick.js';
import { makeVersion, type NamespaceState, type World } from '../../src/core/world.js';
import { at, findCommands, ids, mode, NS, REGIONS, worldWith } from './fixtures.js';
import { admitted, lobbyIn, nsOf, okStep } from './helpers.js';

// What a store writes after each decision: diffWorld names exactly the rows that changed, never a
// row that did not (a seat writes one player row, not its lobby; a lobby change does not rewrite
// its namespace's row).

const newId = ids('pd');
const cmd = findCommands(newId);

/** Lobby A, ready, with p1 (connected) and p2 (reserved). */
const base = (): World => {
  let w = worldWith([mode('default')]);
  w = admitted(find(w, cmd({ newLobbyId: 'A', playerIds: ['p1', 'p2'] }), at(1000))).world;
  w = okStep(lobbyReady(w, { namespaceId: NS, lobbyId: 'A' }, at(2000))).world;
  return okStep(playerConnected(w, { namespaceId: NS, lobbyId: 'A', playerId: 'p1' }, at(3000))).world;
};

const withNs = (w: World, f: (ns: NamespaceState) => NamespaceState): World => ({ ...w, namespaces: w.namespaces.set(NS, f(nsOf(w))) });

const only = (before: World, after: World) => {
  const { namespaces } = diffWorld(before, after);
  expect(namespaces).toHaveLength(1);
  const [change] = namespaces;
  if (change === undefined) throw new Error('no change');
  return { ...change, upserted: change.upserted.map((l) => l.id), seated: change.seated.map((p) => p.id), unseated: change.unseated.map((p) => p.id) };
};

describe('diffWorld', () => {
  it('writes one player row for a seat, and neither its lobby nor its namespace', () => {
    const w = base();
    const after = okStep(playerConnected(w, { namespaceId: NS, lobbyId: 'A', playerId: 'p2' }, at(4000))).world;
    expect(lobbyIn(after, 'A').connectedCount).toBe(2);
    expect(only(w, after)).toMatchObject({ rowChanged: false, upserted: [], deleted: [], seated: ['p2'], unseated: [] });
  });

  it('writes the lobby row when one of its own fields changes, and not its players', () => {
    const w = base();
    const after = okStep(setClosed(w, { namespaceId: NS, lobbyId: 'A', closed: true }, at(4000))).world;
    expect(only(w, after)).toMatchObject({ rowChanged: false, upserted: ['A'], deleted: [], seated: [], unseated: [] });
  });

  it('writes the lobby row when a field is removed from it', () => {
    const w = base();
    const withConfig = withNs(w, (ns) => ({ ...ns, lobbies: ns.lobbies.set('A', { ...lobbyIn(w, 'A'), lobbyConfig: { map: 'x' } }) }));
    const { lobbyConfig: _dropped, ...plain } = lobbyIn(withConfig, 'A');
    const without = withNs(withConfig, (ns) => ({ ...ns, lobbies: ns.lobbies.set('A', plain) }));
    expect(only(withConfig, without)).toMatchObject({ upserted: ['A'], seated: [] });
    expect(only(without, withConfig)).toMatchObject({ upserted: ['A'], seated: [] });
    // A copy of the lobby with the same fields is not a change of its row (its players aside).
    const copy = withNs(w, (ns) => ({ ...ns, lobbies: ns.lobbies.set('A', { ...lobbyIn(w, 'A') }) }));
    expect(only(w, copy)).toMatchObject({ rowChanged: false, upserted: [], seated: [] });
    // Its player counts are derived, never stored: a change of them alone writes nothing.
    const counted = withNs(w, (ns) => ({ ...ns, lobbies: ns.lobbies.set('A', { ...lobbyIn(w, 'A'), playerCount: 7, connectedCount: 7 }) }));
    expect(only(w, counted)).toMatchObject({ rowChanged: false, upserted: [], seated: [] });
  });

  it('writes the namespace row when its settings, current version, versions or captcha records change, and only then', () => {
    const w = base();
    const ns = nsOf(w);
    const changes: Array<[string, World]> = [
      ['settings', withNs(w, (n) => ({ ...n, settings: { ...n.settings, lobbyCountMax: 3 } }))],
      ['current version', withNs(w, (n) => ({ ...n, currentVersionId: 'v0' }))],
      ['versions', withNs(w, (n) => ({ ...n, versions: n.versions.set('v9', makeVersion('v9', { gameModes: [mode('default')] })) }))],
      ['captcha', withNs(w, (n) => ({ ...n, captcha: n.captcha.set('10.9.9.9', { verifiedAt: 0, requestsSince: 1 }) }))],
    ];
    for (const [what, after] of changes) expect(only(w, after).rowChanged, what).toBe(true);
    // The same fields in a new namespace record: no row written.
    expect(only(w, withNs(w, () => ({ ...ns }))).rowChanged).toBe(false);
  });

  it('writes nothing for a tick with nothing due (the live versions are the same map)', () => {
    const w = base();
    const d = tick(w, NS, at(5000));
    expect(diffWorld(w, d.world).namespaces.every((c) => !c.rowChanged && c.upserted.length === 0 && c.seated.length === 0)).toBe(true);
    expect(nsOf(d.world).versions).toBe(nsOf(w).versions);
  });

  it('drops a version no lobby runs when another is published', () => {
    const w0 = worldWith([mode('default')]);
    const w = publishVersion(w0, NS, makeVersion('v2', { gameModes: [mode('default')] }), at(10)).world;
    expect([...nsOf(w).versions.keys()]).toEqual(['v2']);
    expect(only(w0, w).rowChanged).toBe(true);
  });
});

describe('hydrateWorld', () => {
  it('gives a namespace without a current version no such field', () => {
    const empty = { ...worldWith([mode('default')]) };
    const none = withNs(empty, (ns) => {
      const { currentVersionId: _current, ...rest } = ns;
      return rest;
    });
    const rows = dehydrateWorld(none);
    expect('currentVersionId' in (rows.namespaces[0] ?? {})).toBe(false);
    const back = hydrateWorld(REGIONS, rows.namespaces, rows.lobbies, rows.players);
    expect('currentVersionId' in nsOf(back)).toBe(false);
    expect(nsOf(hydrateWorld(REGIONS, dehydrateWorld(base()).namespaces, [], [])).currentVersionId).toBe('v1');
  });
});
