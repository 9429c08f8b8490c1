import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Admission } from '../../../src/core/admission/gate.js';
import { EMPTY_LIVE, foldLive, type LiveAnalytics, liveSummaries, summarize } from '../../../src/core/analytics.js';
import type { MatchError } from '../../../src/core/errors.js';
import { applyIdlePlan, planIdle } from '../../../src/core/idle.js';
import { isActive } from '../../../src/core/lobby/flags.js';
import { lobbyExited, lobbyReady, playerConnected, playerDisconnected, setClosed } from '../../../src/core/lobby/lifecycle.js';
import { create } from '../../../src/core/matchmaker/create.js';
import { find } from '../../../src/core/matchmaker/find.js';
import { join } from '../../../src/core/matchmaker/join.js';
import type { Seat } from '../../../src/core/matchmaker/seat.js';
import { publishVersion } from '../../../src/core/namespace.js';
import { isAllocated, lobbyPortsInUse } from '../../../src/core/ports/index.js';
import type { Result } from '../../../src/core/result.js';
import { EMPTY_INDEX, reindex, type RoutingIndex } from '../../../src/core/routing/index.js';
import { tick } from '../../../src/core/tick.js';
import type { Decision } from '../../../src/core/tx.js';
import { makeVersion, namespaceOf, type World } from '../../../src/core/world.js';
import { mode, NS, worldWith } from '../fixtures.js';
import { lobbyIndexes, routingRows, scannedLobbyIndexes } from '../helpers.js';
import { CONNECT_MS, Model, READY_MS } from './model.js';

const CAP = 5;
const LOBBY_MAX = 6;
const timeouts = { lobbyReadyMs: READY_MS, playerConnectMs: CONNECT_MS };
const region = (name: string, min = 0, max = 0) => ({ name, tier: 'basic-1d1', idleLobbies: { min, max } });
const MODES = [
  mode('a', { regions: [region('local', 1, 2), region('eu')], maxPlayers: { normal: 5, direct: 6, party: 5 }, timeouts }),
  mode('b', {
    regions: [region('local')],
    maxPlayers: { normal: 2, direct: 2, party: 2 },
    container: { args: [], env: {}, networkMode: 'bridge', ports: [] },
    actions: { create: { enabled: true, enablePublic: true, enablePrivate: true } },
    timeouts,
  }),
  mode('c', { regions: [region('local')], actions: { find: { enabled: false } }, timeouts }),
];

interface Real {
  world: World;
  live: LiveAnalytics;
  n: number;
  issued: { id: string; lobby: string }[];
}

const fresh = (r: Real, p: string): string => `${p}${++r.n}`;

const apply = (r: Real, d: Decision<unknown>): void => {
  r.world = d.world;
  r.live = d.events.reduce<LiveAnalytics>(foldLive, r.live);
};

const admission = (r: Real, a: Admission<Seat>): { code: string; seat?: Seat } => {
  if (a.kind === 'admitted') {
    apply(r, a.decision);
    return { code: 'OK', seat: a.decision.value };
  }
  if (a.kind !== 'rejected') throw new Error(`no gate is configured, got ${a.kind}`);
  return { code: a.error.code };
};

const step = (r: Real, res: Result<Decision<undefined>, MatchError>): string => {
  if (!res.ok) return res.error.code;
  apply(r, res.value);
  return 'OK';
};

const pick = <T>(xs: readonly T[], i: number): T | undefined => (xs.length === 0 ? undefined : xs[i % xs.length]);


/** The core and the model agree, and the core's invariants hold. */
const agree = (m: Model, r: Real): void => {
  const ns = namespaceOf(r.world, NS);
  const lobbies = [...ns.lobbies.values()];
  expect(lobbies.map((l) => l.id).sort()).toEqual(m.lobbies.map((l) => l.id).sort());
  for (const l of lobbies) {
    const ml = m.lobby(l.id);
    expect({ id: l.id, status: l.lifecycle.status, closed: l.closed, players: l.playerCount, connected: l.connectedCount }).toEqual({
      id: ml?.id,
      status: ml?.status,
      closed: ml?.closed,
      players: m.count(l.id),
      connected: m.seated(l.id).filter((p) => p.status === 'connected').length,
    });
    expect(l.playerCount).toBeLessThanOrEqual(Math.max(l.maxPlayers.direct, l.maxPlayers.party));
    expect(l.playerCount).toBe(l.players.size);
    for (const p of l.players.values()) expect(p.lobbyId).toBe(l.id);
  }
  const players = lobbies.flatMap((l) => [...l.players.values()]).map((p) => `${p.id}@${p.lobbyId}:${p.status}:${p.connectDeadline}`).sort();
  expect(players).toEqual(m.players.map((p) => `${p.id}@${p.lobby}:${p.status}:${p.deadline}`).sort());
  // Ports: exactly the ports of lobbies not yet stopped are held, in every region.
  for (const [regionId, space] of r.world.ports.entries()) {
    const held = lobbies.filter((l) => l.region === regionId && l.lifecycle.status !== 'stopped');
    const expected = held.flatMap((l) => lobbyPortsInUse(l.ports).udp.concat(lobbyPortsInUse(l.ports).tcp));
    expect(new Set(expected).size).toBe(expected.length);
    expect(space.udp.used + space.tcp.used).toBe(expected.length);
    for (const l of held) for (const p of lobbyPortsInUse(l.ports).udp) expect(isAllocated(space, 'udp', p)).toBe(true);
  }
  // The routing index equals one rebuilt from scratch; analytics folded from events equals the state.
  const rebuilt = lobbies.reduce<RoutingIndex>((idx, l) => reindex(idx, undefined, l, ns.currentVersionId), EMPTY_INDEX);
  expect(routingRows(ns.routing)).toEqual(routingRows(rebuilt));
  // So do the lobby indexes tick and the idle plan visit (order included).
  expect(lobbyIndexes(ns)).toEqual(scannedLobbyIndexes(ns));
  const direct = lobbies.filter(isActive).map((l) => summarize(l, ns.currentVersionId));
  expect(liveSummaries(r.live, NS)).toEqual(direct.sort((a, b) => a.createTs - b.createTs || (a.lobbyId < b.lobbyId ? -1 : 1)));
  expect(ns.activeLobbies).toBe(m.active().length);
};

type Cmd = fc.Command<Model, Real>;
const ctx = (m: Model, seed: number) => ({ now: m.now, seed });

class FindCmd implements Cmd {
  constructor(readonly gm: string, readonly rg: string | undefined, readonly n: number, readonly prevent: boolean, readonly ip: string, readonly seed: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const ids = Array.from({ length: this.n }, () => fresh(r, 'p'));
    const lobbyId = fresh(r, 'L');
    const out = admission(r, find(r.world, {
      namespaceId: NS, gameModes: [this.gm], ...(this.rg ? { regions: [this.rg] } : {}), playerIds: ids,
      newLobbyId: lobbyId, client: { ip: this.ip }, preventAutoCreate: this.prevent,
    }, ctx(m, this.seed)));
    const spec = MODES.find((x) => x.name === this.gm);
    const rg = this.rg ?? 'local';
    let expected: string;
    if (this.gm === 'c') expected = 'MATCHMAKER_FIND_DISABLED';
    else if (!spec?.regions.some((x) => x.name === rg)) expected = 'MATCHMAKER_AUTO_CREATE_FAILED';
    else if (m.heldBy(this.ip) + this.n > CAP) expected = 'MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE';
    else {
      const { candidates } = m.findCandidates(this.gm, rg, this.n);
      const limit = this.n > 1 ? spec.maxPlayers.party : spec.maxPlayers.normal;
      if (candidates.length > 0) {
        expected = 'OK';
        expect(candidates.map((l) => l.id)).toContain(out.seat?.lobbyId);
        if (out.seat) m.seat(out.seat.lobbyId, ids, this.ip);
      } else if (this.prevent) expected = 'MATCHMAKER_NO_AVAILABLE_LOBBIES';
      else if (this.n > limit) expected = 'MATCHMAKER_LOBBY_FULL';
      else if (m.active().length >= LOBBY_MAX) expected = 'MATCHMAKER_TOO_MANY_LOBBIES';
      else {
        expected = 'OK';
        expect(out.seat?.lobbyId).toBe(lobbyId);
        m.addLobby({ id: lobbyId, mode: this.gm, region: rg, publicity: 'public', ...spec.maxPlayers });
        m.seat(lobbyId, ids, this.ip);
      }
    }
    expect(out.code).toBe(expected);
    if (out.code === 'OK') for (const id of ids) r.issued.push({ id, lobby: out.seat?.lobbyId ?? '' });
    agree(m, r);
  }
  toString = () => `find(${this.gm},${this.rg},${this.n},${this.prevent},${this.ip})`;
}

class JoinCmd implements Cmd {
  constructor(readonly at: number, readonly bogus: boolean, readonly ip: string) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const target = this.bogus ? undefined : pick(m.lobbies, this.at);
    const lobbyId = target?.id ?? 'no-such-lobby';
    const id = fresh(r, 'p');
    const out = admission(r, join(r.world, { namespaceId: NS, lobbyId, playerIds: [id], client: { ip: this.ip } }, ctx(m, 1)));
    let expected: string;
    if (target === undefined) expected = 'MATCHMAKER_LOBBY_NOT_FOUND';
    else if (target.status !== 'creating' && target.status !== 'ready') expected = 'MATCHMAKER_LOBBY_STOPPED';
    else if (m.heldBy(this.ip) + 1 > CAP) expected = 'MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE';
    else if (m.count(lobbyId) + 1 > target.direct) expected = 'MATCHMAKER_LOBBY_FULL';
    else {
      expected = 'OK';
      m.seat(lobbyId, [id], this.ip);
      r.issued.push({ id, lobby: lobbyId });
    }
    expect(out.code).toBe(expected);
    agree(m, r);
  }
  toString = () => `join(${this.at},${this.bogus},${this.ip})`;
}

class CreateCmd implements Cmd {
  constructor(readonly gm: string, readonly publicity: 'public' | 'private' | undefined, readonly ip: string) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const id = fresh(r, 'p');
    const lobbyId = fresh(r, 'C');
    const out = admission(r, create(r.world, {
      namespaceId: NS, gameMode: this.gm, ...(this.publicity ? { publicity: this.publicity } : {}),
      playerId: id, newLobbyId: lobbyId, client: { ip: this.ip },
    }, ctx(m, 3)));
    const spec = MODES.find((x) => x.name === this.gm);
    let expected: string;
    if (this.gm !== 'b' || spec === undefined) expected = 'MATCHMAKER_CUSTOM_LOBBIES_DISABLED';
    else if (m.heldBy(this.ip) + 1 > CAP) expected = 'MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE';
    else if (m.active().length >= LOBBY_MAX) expected = 'MATCHMAKER_TOO_MANY_LOBBIES';
    else {
      expected = 'OK';
      m.addLobby({ id: lobbyId, mode: 'b', region: 'local', publicity: this.publicity ?? 'public', ...spec.maxPlayers });
      m.seat(lobbyId, [id], this.ip);
      r.issued.push({ id, lobby: lobbyId });
    }
    expect(out.code).toBe(expected);
    agree(m, r);
  }
  toString = () => `create(${this.gm},${this.publicity},${this.ip})`;
}

/** ready, close/reopen, exit: commands on an existing (or missing) lobby. */
class LobbyCmd implements Cmd {
  constructor(readonly kind: 'ready' | 'close' | 'reopen' | 'exit', readonly at: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const target = pick(m.lobbies, this.at);
    const ref = { namespaceId: NS, lobbyId: target?.id ?? 'no-such-lobby' };
    const c = ctx(m, 0);
    const got =
      this.kind === 'ready' ? step(r, lobbyReady(r.world, ref, c))
      : this.kind === 'exit' ? step(r, lobbyExited(r.world, { ...ref, reason: 'crashed' }, c))
      : step(r, setClosed(r.world, { ...ref, closed: this.kind === 'close' }, c));
    let expected = 'OK';
    if (target === undefined) expected = 'MATCHMAKER_LOBBY_NOT_FOUND';
    else if (this.kind === 'ready') {
      if (target.status === 'stopping' || target.status === 'stopped') expected = 'MATCHMAKER_LOBBY_STOPPED';
      else m.ready(target);
    } else if (this.kind === 'exit') m.finishStop(target);
    else target.closed = this.kind === 'close';
    expect(got).toBe(expected);
    agree(m, r);
  }
  toString = () => `${this.kind}(${this.at})`;
}

class PlayerCmd implements Cmd {
  constructor(readonly kind: 'connect' | 'disconnect', readonly at: number) {}
  check = (m: Model) => m.lobbies.length > 0;
  run(m: Model, r: Real): void {
    const issued = pick(r.issued, this.at);
    if (issued === undefined) return;
    const ref = { namespaceId: NS, lobbyId: issued.lobby, playerId: issued.id };
    const got = step(r, (this.kind === 'connect' ? playerConnected : playerDisconnected)(r.world, ref, ctx(m, 0)));
    const p = m.players.find((x) => x.id === issued.id);
    let expected = 'OK';
    if (m.lobby(issued.lobby) === undefined) expected = 'MATCHMAKER_LOBBY_NOT_FOUND';
    else if (this.kind === 'disconnect') m.removePlayer(issued.id);
    else if (p === undefined) expected = 'MATCHMAKER_PLAYER_REMOVED';
    else if (p.status === 'connected') expected = 'MATCHMAKER_PLAYER_ALREADY_CONNECTED';
    else if (m.now > p.deadline) expected = 'MATCHMAKER_PLAYER_REGISTRATION_EXPIRED';
    else p.status = 'connected';
    expect(got).toBe(expected);
    agree(m, r);
  }
  toString = () => `${this.kind}(${this.at})`;
}

class TickCmd implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    m.now += this.ms;
    apply(r, tick(r.world, NS, ctx(m, 0)));
    m.tick();
    agree(m, r);
  }
  toString = () => `tick(+${this.ms})`;
}

class PublishCmd implements Cmd {
  check = () => true;
  run(m: Model, r: Real): void {
    const id = `v${m.lobbies.length}-${r.n++}`;
    apply(r, publishVersion(r.world, NS, makeVersion(id, { gameModes: MODES }), ctx(m, 0)));
    m.version = id;
    agree(m, r);
  }
  toString = () => 'publish';
}

class IdleCmd implements Cmd {
  constructor(readonly seed: number) {}
  check = () => true;
  run(m: Model, r: Real): void {
    const plan = planIdle(namespaceOf(r.world, NS));
    const before = namespaceOf(r.world, NS);
    const d = applyIdlePlan(r.world, NS, plan, plan.create.map(() => fresh(r, 'I')), ctx(m, this.seed));
    apply(r, d);
    const after = namespaceOf(r.world, NS);
    for (const id of d.value.stopped) {
      expect(before.lobbies.get(id)?.playerCount).toBe(0);
      const ml = m.lobby(id);
      if (ml) m.beginStop(ml);
    }
    for (const id of d.value.created) {
      m.addLobby({ id, mode: after.lobbies.get(id)?.gameMode ?? '', region: after.lobbies.get(id)?.region ?? '', publicity: 'public', normal: 5, direct: 6, party: 5 });
    }
    // Within [min, max] per (region, mode) unless the lobby cap stopped it.
    const idle = (rg: string, gm: string) =>
      [...after.lobbies.values()].filter((l) => isActive(l) && l.playerCount === 0 && !l.closed && l.publicity === 'public' && l.versionId === after.currentVersionId && l.region === rg && l.gameMode === gm).length;
    for (const gm of MODES) {
      for (const rg of gm.regions) {
        expect(idle(rg.name, gm.name)).toBeLessThanOrEqual(rg.idleLobbies.max);
        if (after.activeLobbies < LOBBY_MAX) expect(idle(rg.name, gm.name)).toBeGreaterThanOrEqual(rg.idleLobbies.min);
      }
    }
    agree(m, r);
  }
  toString = () => 'idle';
}

const ip = fc.constantFrom('1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4');
const findCmd = fc
  .tuple(
    fc.constantFrom('a', 'a', 'a', 'b', 'c'),
    fc.constantFrom(undefined, undefined, 'local', 'eu', 'us'),
    fc.constantFrom(1, 1, 1, 2),
    fc.boolean(),
    ip,
    fc.nat(),
  )
  .map(([g, rg, n, p, i, s]) => new FindCmd(g, rg, n, p, i, s));
const playerCmd = fc.tuple(fc.constantFrom('connect' as const, 'connect' as const, 'disconnect' as const), fc.nat()).map(([k, a]) => new PlayerCmd(k, a));
// Finds and player commands are listed several times: sequences then mostly seat and free
// players, so pools hold lobbies of different fill levels for the fullest-first rule to matter.
const commands = [
  findCmd,
  findCmd,
  findCmd,
  findCmd,
  playerCmd,
  playerCmd,
  fc.tuple(fc.nat(), fc.boolean(), ip).map(([a, b, i]) => new JoinCmd(a, b, i)),
  fc.tuple(fc.constantFrom('a', 'b'), fc.constantFrom(undefined, 'public' as const, 'private' as const), ip).map(([g, p, i]) => new CreateCmd(g, p, i)),
  fc.tuple(fc.constantFrom('ready' as const, 'ready' as const, 'close' as const, 'reopen' as const, 'exit' as const), fc.nat()).map(([k, a]) => new LobbyCmd(k, a)),
  fc.integer({ min: 1, max: 200_000 }).map((ms) => new TickCmd(ms)),
  fc.constant(new PublishCmd()),
  fc.nat().map((s) => new IdleCmd(s)),
];

describe('model-based: the core agrees with a simple model over random command sequences', () => {
  it('find/join/create/ready/connect/disconnect/close/exit/publish/tick/idle', () => {
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 60, size: 'max' }), (cmds) => {
        const world = worldWith(MODES, { settings: { maxPlayersPerClient: CAP, lobbyCountMax: LOBBY_MAX } });
        const setup = () => ({ model: new Model(CAP, LOBBY_MAX), real: { world, live: EMPTY_LIVE, n: 0, issued: [] } as Real });
        // The version published by worldWith is the model's 'v1'.
        const live = foldLive(EMPTY_LIVE, { type: 'version-published', at: 0, namespaceId: NS, versionId: 'v1' });
        fc.modelRun(() => {
          const s = setup();
          s.real.live = live;
          return s;
        }, cmds);
      }),
    );
  });
});
