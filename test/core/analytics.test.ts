import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EMPTY_LIVE, foldLive, liveSummaries, type LobbySummary, summarize } from '../../src/core/analytics.js';
import type { ResolvedVersion } from '../../src/core/config/types.js';
import type { MatchEvent } from '../../src/core/events.js';
import { isActive } from '../../src/core/lobby/flags.js';
import {
  lobbyExited,
  lobbyReady,
  playerConnected,
  playerDisconnected,
  setClosed,
  stopLobby,
} from '../../src/core/lobby/lifecycle.js';
import { create } from '../../src/core/matchmaker/create.js';
import { find } from '../../src/core/matchmaker/find.js';
import { join } from '../../src/core/matchmaker/join.js';
import { publishVersion } from '../../src/core/namespace.js';
import { tick } from '../../src/core/tick.js';
import { makeVersion, type World } from '../../src/core/world.js';
import { at, client, mode, NS } from './fixtures.js';
import { makeLobby, nsOf, Script } from './helpers.js';

/** The live summaries straight from the world's state: every active lobby, oldest first. */
const fromWorld = (w: World): LobbySummary[] => {
  const ns = nsOf(w);
  return [...ns.lobbies.values()]
    .filter(isActive)
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
    .map((l) => summarize(l, ns.currentVersionId));
};

const fromEvents = (events: readonly MatchEvent[]): LobbySummary[] => liveSummaries(events.reduce(foldLive, EMPTY_LIVE), NS);

const config = (): ResolvedVersion => ({
  gameModes: [
    mode('default', { maxPlayers: { normal: 3, direct: 4, party: 3 } }),
    mode('custom', { allowDynamicMaxPlayers: true, actions: { create: { enabled: true, enablePublic: true } } }),
  ],
});

describe('summarize', () => {
  it('reads every flag and count from the lobby', () => {
    const lobby = makeLobby({
      id: 'X',
      lobbyGroupId: 'group-1',
      gameMode: 'default',
      region: 'eu',
      createdAt: 42,
      lifecycle: { status: 'ready', readyAt: 50 },
      closed: true,
      maxPlayers: { normal: 2, direct: 3, party: 4 },
      playerCount: 3,
      connectedCount: 1,
    });
    expect(summarize(lobby, 'v1')).toEqual({
      lobbyId: 'X',
      lobbyGroupId: 'group-1',
      lobbyGroupNameId: 'default',
      regionId: 'eu',
      createTs: 42,
      isReady: true,
      isIdle: false,
      isClosed: true,
      isOutdated: false,
      maxPlayersNormal: 2,
      maxPlayersDirect: 3,
      maxPlayersParty: 4,
      totalPlayerCount: 3,
      registeredPlayerCount: 1,
    });
    expect(summarize(makeLobby(), 'v2')).toMatchObject({ isReady: false, isIdle: true, isClosed: false, isOutdated: true });
    expect(summarize(makeLobby(), undefined).isOutdated).toBe(true);
  });
});

describe('foldLive', () => {
  it('equals the summaries of the active lobbies at every step of a scripted scenario', () => {
    const s = new Script(config());
    const check = (): void => {
      expect(fromEvents(s.events)).toEqual(fromWorld(s.world));
    };
    const lobby = { namespaceId: NS };
    s.admit(find(s.world, { namespaceId: NS, gameModes: ['default'], playerIds: ['p1', 'p2'], newLobbyId: 'A', client: client('1.1.1.1') }, at(1)));
    check();
    s.admit(find(s.world, { namespaceId: NS, gameModes: ['default'], playerIds: ['p3'], newLobbyId: 'unused', client: client('1.1.1.2') }, at(2)));
    s.step(lobbyReady(s.world, { ...lobby, lobbyId: 'A' }, at(3)));
    s.step(playerConnected(s.world, { ...lobby, lobbyId: 'A', playerId: 'p1' }, at(4)));
    s.step(playerConnected(s.world, { ...lobby, lobbyId: 'A', playerId: 'p3' }, at(4)));
    check();
    // Registered (connected) and total (seated) differ.
    expect(fromEvents(s.events)[0]).toMatchObject({ lobbyId: 'A', isReady: true, totalPlayerCount: 3, registeredPlayerCount: 2 });
    s.admit(create(s.world, { namespaceId: NS, gameMode: 'custom', playerId: 'c1', newLobbyId: 'C', client: client('2.2.2.2'), maxPlayers: 2 }, at(5)));
    s.step(setClosed(s.world, { ...lobby, lobbyId: 'A', closed: true }, at(6)));
    s.admit(join(s.world, { namespaceId: NS, lobbyId: 'A', playerIds: ['p4'], client: client('3.3.3.3') }, at(6)));
    s.admit(find(s.world, { namespaceId: NS, gameModes: ['default'], playerIds: ['p5'], newLobbyId: 'B', client: client('1.1.1.3') }, at(7)));
    check();
    s.step(playerDisconnected(s.world, { ...lobby, lobbyId: 'A', playerId: 'p1' }, at(8)));
    s.step(playerDisconnected(s.world, { ...lobby, lobbyId: 'A', playerId: 'p2' }, at(8)));
    check();
    s.apply(publishVersion(s.world, NS, makeVersion('v2', config()), at(9)));
    check();
    expect(fromEvents(s.events).map((l) => [l.lobbyId, l.isOutdated])).toEqual([['A', true], ['C', true], ['B', true]]);
    s.admit(find(s.world, { namespaceId: NS, gameModes: ['default'], playerIds: ['p6'], newLobbyId: 'D', client: client('1.1.1.4') }, at(10)));
    s.step(lobbyReady(s.world, { ...lobby, lobbyId: 'D' }, at(11)));
    s.step(stopLobby(s.world, { ...lobby, lobbyId: 'B', reason: 'requested' }, at(12)));
    check();
    s.step(lobbyExited(s.world, { ...lobby, lobbyId: 'B', reason: 'exited' }, at(13)));
    s.step(lobbyExited(s.world, { ...lobby, lobbyId: 'C', reason: 'crashed' }, at(14)));
    s.step(setClosed(s.world, { ...lobby, lobbyId: 'A', closed: false }, at(15)));
    check();
    // Reserved seats expire, the unready lobby times out.
    s.apply(tick(s.world, NS, at(1_000_000)));
    check();
    expect(fromEvents(s.events).map((l) => [l.lobbyId, l.isOutdated, l.isClosed, l.totalPlayerCount, l.registeredPlayerCount])).toEqual([
      ['A', true, false, 1, 1],
      ['D', false, false, 0, 0],
    ]);
  });

  it('equals the summaries of the active lobbies after any sequence of operations', () => {
    const op = fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('find' as const), party: fc.integer({ min: 1, max: 3 }), modeIx: fc.nat(1) }) },
      fc.record({ kind: fc.constantFrom('ready' as const, 'close' as const, 'open' as const, 'stop' as const, 'exit' as const, 'crash' as const, 'join' as const), pick: fc.nat() }),
      { weight: 3, arbitrary: fc.record({ kind: fc.constantFrom('connect' as const, 'connect' as const, 'disconnect' as const), pick: fc.nat() }) },
      fc.record({ kind: fc.constantFrom('create' as const, 'publish' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('tick' as const), dt: fc.integer({ min: 1, max: 400_000 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const s = new Script(config());
        let now = 1;
        let n = 0;
        let v = 1;
        const pick = <T>(xs: readonly T[], i: number): T | undefined => xs[i % Math.max(1, xs.length)];
        for (const o of ops) {
          now += 1;
          const lobbies = [...nsOf(s.world).lobbies.values()];
          const lobbyId = 'pick' in o ? (pick(lobbies, o.pick)?.id ?? 'none') : 'none';
          const ref = { namespaceId: NS, lobbyId };
          const players = lobbies.flatMap((l) => [...l.players.values()]);
          const cl = client(`10.0.${n % 7}.1`);
          switch (o.kind) {
            case 'find': {
              const a = find(s.world, { namespaceId: NS, gameModes: [o.modeIx === 0 ? 'default' : 'custom'], playerIds: Array.from({ length: o.party }, () => `p${++n}`), newLobbyId: `L${++n}`, client: cl }, at(now));
              if (a.kind === 'admitted') s.apply(a.decision);
              break;
            }
            case 'join': {
              const a = join(s.world, { namespaceId: NS, lobbyId, playerIds: [`p${++n}`], client: cl }, at(now));
              if (a.kind === 'admitted') s.apply(a.decision);
              break;
            }
            case 'create': {
              const a = create(s.world, { namespaceId: NS, gameMode: 'custom', playerId: `p${++n}`, newLobbyId: `L${++n}`, client: cl, publicity: o.pick % 2 === 0 ? 'public' : 'private' }, at(now));
              if (a.kind === 'admitted') s.apply(a.decision);
              break;
            }
            case 'ready':
            case 'close':
            case 'open':
            case 'stop':
            case 'exit':
            case 'crash': {
              const r =
                o.kind === 'ready' ? lobbyReady(s.world, ref, at(now))
                : o.kind === 'close' || o.kind === 'open' ? setClosed(s.world, { ...ref, closed: o.kind === 'close' }, at(now))
                : o.kind === 'stop' ? stopLobby(s.world, { ...ref, reason: 'requested' }, at(now))
                : lobbyExited(s.world, { ...ref, reason: o.kind === 'exit' ? 'exited' : 'crashed' }, at(now));
              if (r.ok) s.apply(r.value);
              break;
            }
            case 'connect':
            case 'disconnect': {
              const p = pick(players, o.pick);
              if (p === undefined) break;
              const pref = { namespaceId: NS, lobbyId: p.lobbyId, playerId: p.id };
              const r = o.kind === 'connect' ? playerConnected(s.world, pref, at(now)) : playerDisconnected(s.world, pref, at(now));
              if (r.ok) s.apply(r.value);
              break;
            }
            case 'publish':
              s.apply(publishVersion(s.world, NS, makeVersion(`v${++v}`, config()), at(now)));
              break;
            case 'tick':
              now += o.dt;
              s.apply(tick(s.world, NS, at(now)));
              break;
          }
          expect(fromEvents(s.events)).toEqual(fromWorld(s.world));
        }
      }),
      { numRuns: 100 },
    );
  });
});
