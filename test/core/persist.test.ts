import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Admission } from '../../src/core/admission/gate.js';
import { parseVersion } from '../../src/core/config/index.js';
import type { ResolvedVersion } from '../../src/core/config/types.js';
import { applyIdlePlan, planIdle } from '../../src/core/idle.js';
import { lobbyExited, lobbyReady, playerConnected, playerDisconnected, recordCaptcha, setClosed, stopLobby } from '../../src/core/lobby/lifecycle.js';
import { create } from '../../src/core/matchmaker/create.js';
import { find } from '../../src/core/matchmaker/find.js';
import { join } from '../../src/core/matchmaker/join.js';
import type { Seat } from '../../src/core/matchmaker/seat.js';
import { addNamespace, publishVersion, updateNamespaceSettings } from '../../src/core/namespace.js';
import {
  dehydrateLobby,
  dehydrateNamespace,
  dehydrateWorld,
  diffWorld,
  hydrateWorld,
  playerFields,
  playerOf,
  type LobbyDoc,
  type PlayerFields,
  type WorldRows,
} from '../../src/core/persist.js';
import { PMap } from '../../src/core/pmap.js';
import {
  allocateLobbyPorts,
  claimLobbyPorts,
  createPortSpace,
  isAllocated,
  lobbyPortsInUse,
  releaseLobbyPorts,
} from '../../src/core/ports/index.js';
import { createRng } from '../../src/core/rng.js';
import { tick } from '../../src/core/tick.js';
import type { Decision } from '../../src/core/tx.js';
import { createWorld, DEFAULT_NAMESPACE_SETTINGS, makeVersion, type World } from '../../src/core/world.js';
import { REGIONS } from './fixtures.js';
import { lobbyIndexes, routingRows, scannedLobbyIndexes } from './helpers.js';

const IMAGE = '6f1d2b8e-0d5f-4f0b-9a57-1f2a3b4c5d6e';

/** A version exercising what a stored config can hold: several modes, proxied and host-network ports, captcha, verification. */
const resolve = (body: unknown): ResolvedVersion => {
  const r = parseVersion(body, { regions: new Set(REGIONS.map((r) => r.id)) });
  if (!r.ok) throw new Error(r.error.map((p) => p.path.join('.')).join(', '));
  return r.value.resolved;
};
// Built per use, never at import: a core call while the file loads would make every config mutant it
// reaches "static" for Stryker (run against the whole suite instead of the tests that cover it).
const config = (): ResolvedVersion => resolve({
  display_name: 'v1',
  config: {
    matchmaker: {
      regions: { local: { idle_lobbies: { min: 1, max: 2 } }, eu: {} },
      max_players: 4,
      max_players_direct: 6,
      max_players_party: 4,
      docker: {
        image_id: IMAGE,
        env: { A: '1' },
        ports: { game: { port: 7777, protocol: 'udp' }, web: { port: 8080, protocol: 'https' }, ctl: { port: 9000, protocol: 'tcp' } },
      },
      game_modes: {
        a: { taggable: true, allow_dynamic_max_players: true },
        b: {
          regions: { local: {} },
          player_max_lifetime: 300_000,
          docker: { image_id: IMAGE, network_mode: 'host', ports: { r: { port_range: { min: 27000, max: 27002 }, protocol: 'udp', proxy: 'none' } } },
          actions: { create: { enabled: true, enable_public: true, enable_private: true } },
        },
      },
    },
  },
});
const gated = (): ResolvedVersion => resolve({
  display_name: 'gated',
  config: {
    matchmaker: {
      regions: { local: {} },
      max_players: 8,
      docker: { image_id: IMAGE, network_mode: 'host', ports: { game: { port_range: { min: 28000, max: 28001 }, protocol: 'tcp', proxy: 'none' } } },
      captcha: { requests_before_reverify: 5, verification_ttl: 3_600_000, turnstile: { site_key: 'k', secret_key: 's' } },
      game_modes: { g: { actions: { find: { enabled: true, verification: { url: 'https://example.com/v', headers: { 'x-a': 'b' } } } } } },
    },
  },
});

/**
 * Where `value` is not plain JSON: an undefined, a non-finite number, or an object that is not a
 * plain record or array (a Map, a class instance). Records the parser builds without a prototype
 * count as plain: they refuse `__proto__`, `constructor` and `prototype` keys, so JSON loses nothing.
 */
const jsonProblems = (value: unknown, path = '$'): string[] => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return [];
  if (typeof value === 'number') return Number.isFinite(value) ? [] : [`${path}: ${value}`];
  if (Array.isArray(value)) return value.flatMap((v, i) => jsonProblems(v, `${path}[${i}]`));
  if (typeof value !== 'object') return [`${path}: ${typeof value}`];
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return [`${path}: not a plain object`];
  return Object.entries(value).flatMap(([k, v]) => jsonProblems(v, `${path}.${k}`));
};

const NAMESPACES = ['ns-1', 'ns-2'];
const IPS = ['1.1.1.1', '2.2.2.2', '3.3.3.3'];

type Op =
  | { k: 'find'; ns: number; mode: 'a' | 'b'; n: number; region: 'local' | 'eu' | undefined; tagged: boolean; prevent: boolean; ip: number; seed: number }
  | { k: 'join'; ns: number; at: number; ip: number }
  | { k: 'create'; ns: number; publicity: 'public' | 'private'; ip: number }
  | { k: 'ready' | 'close' | 'reopen' | 'stop' | 'exit'; ns: number; at: number }
  | { k: 'connect' | 'disconnect'; ns: number; at: number }
  | { k: 'tick'; ns: number; ms: number }
  | { k: 'publish'; ns: number; gated: boolean }
  | { k: 'idle'; ns: number; seed: number }
  | { k: 'captcha'; ns: number; ip: number }
  | { k: 'settings'; ns: number; max: number };

const ns = fc.nat({ max: 1 });
const ip = fc.nat({ max: IPS.length - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      k: fc.constant('find' as const), ns, mode: fc.constantFrom('a' as const, 'a' as const, 'b' as const), n: fc.integer({ min: 1, max: 2 }),
      region: fc.constantFrom(undefined, 'local' as const, 'eu' as const), tagged: fc.boolean(), prevent: fc.boolean(), ip, seed: fc.nat(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('join' as const), ns, at: fc.nat(), ip }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('create' as const), ns, publicity: fc.constantFrom('public' as const, 'private' as const), ip }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constantFrom('ready' as const, 'ready' as const, 'ready' as const, 'close' as const, 'reopen' as const, 'stop' as const, 'exit' as const), ns, at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constantFrom('connect' as const, 'disconnect' as const), ns, at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('tick' as const), ns, ms: fc.oneof(fc.integer({ min: 1, max: 60_000 }), fc.integer({ min: 1, max: 400_000 })) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('publish' as const), ns, gated: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('idle' as const), ns, seed: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('captcha' as const), ns, ip }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('settings' as const), ns, max: fc.integer({ min: 2, max: 20 }) }) },
);

/** The world through its rows and back, as a store does it (rows go through JSON). */
const roundTrip = (world: World): World => {
  const rows = JSON.parse(JSON.stringify(dehydrateWorld(world))) as WorldRows;
  return hydrateWorld(world.regions, rows.namespaces, rows.lobbies, rows.players);
};

/** Runs `ops` from a fresh two-namespace world (one published), round-tripping before the ops listed in `restarts`. */
const run = (ops: readonly Op[], restarts: ReadonlySet<number> = new Set()): World[] => {
  let now = 1_000;
  let n = 0;
  const fresh = (p: string) => `${p}-${++n}`;
  const issued = new Map<string, { lobby: string; player: string }[]>(NAMESPACES.map((id) => [id, []]));
  let world = addNamespace(addNamespace(createWorld(REGIONS), 'ns-1'), 'ns-2', { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 4 });
  const plainConfig = config();
  const gatedConfig = gated();
  world = publishVersion(world, 'ns-1', makeVersion('v1', plainConfig, { a: 'group-a', b: 'group-b' }), { now, seed: 0 }).world;
  const worlds = [world];
  const take = (d: Decision<unknown> | undefined) => {
    if (d !== undefined) world = d.world;
  };
  const admitted = (nsId: string, a: Admission<Seat>, players: readonly string[]) => {
    if (a.kind !== 'admitted') return;
    take(a.decision);
    for (const player of players) issued.get(nsId)?.push({ lobby: a.decision.value.lobbyId, player });
  };
  for (const [i, o] of ops.entries()) {
    if (restarts.has(i)) world = roundTrip(world);
    const nsId = NAMESPACES[o.ns] ?? 'ns-1';
    const state = world.namespaces.get(nsId);
    if (state === undefined) continue;
    const lobbies = [...state.lobbies.keys()];
    const ctx = { now, seed: n };
    const client = (x: number) => ({ ip: IPS[x] ?? '9.9.9.9' });
    const hasVersion = state.currentVersionId !== undefined;
    switch (o.k) {
      case 'find': {
        if (!hasVersion) break;
        const playerIds = Array.from({ length: o.n }, () => fresh('p'));
        const command = {
          namespaceId: nsId, gameModes: [o.mode], playerIds, newLobbyId: fresh('L'), client: client(o.ip), preventAutoCreate: o.prevent,
          ...(o.region === undefined ? {} : { regions: [o.region] }), ...(o.tagged ? { tags: { map: 'dust' } } : {}),
        };
        admitted(nsId, find(world, command, { now, seed: o.seed }), playerIds);
        break;
      }
      case 'join': {
        const lobbyId = lobbies[o.at % Math.max(1, lobbies.length)];
        if (lobbyId === undefined) break;
        const playerId = fresh('p');
        admitted(nsId, join(world, { namespaceId: nsId, lobbyId, playerIds: [playerId], client: client(o.ip) }, ctx), [playerId]);
        break;
      }
      case 'create': {
        if (!hasVersion) break;
        const playerId = fresh('p');
        const command = { namespaceId: nsId, gameMode: 'b', publicity: o.publicity, playerId, newLobbyId: fresh('C'), client: client(o.ip), lobbyConfig: { level: [1, 'x', null] } };
        admitted(nsId, create(world, command, ctx), [playerId]);
        break;
      }
      case 'ready':
      case 'close':
      case 'reopen':
      case 'stop':
      case 'exit': {
        const lobbyId = lobbies[o.at % Math.max(1, lobbies.length)];
        if (lobbyId === undefined) break;
        const ref = { namespaceId: nsId, lobbyId };
        const r =
          o.k === 'ready' ? lobbyReady(world, ref, ctx)
          : o.k === 'stop' ? stopLobby(world, { ...ref, reason: 'requested' }, ctx)
          : o.k === 'exit' ? lobbyExited(world, { ...ref, reason: 'crashed' }, ctx)
          : setClosed(world, { ...ref, closed: o.k === 'close' }, ctx);
        if (r.ok) take(r.value);
        break;
      }
      case 'connect':
      case 'disconnect': {
        const seats = issued.get(nsId) ?? [];
        const seat = seats[o.at % Math.max(1, seats.length)];
        if (seat === undefined) break;
        const ref = { namespaceId: nsId, lobbyId: seat.lobby, playerId: seat.player };
        const r = (o.k === 'connect' ? playerConnected : playerDisconnected)(world, ref, ctx);
        if (r.ok) take(r.value);
        break;
      }
      case 'tick':
        now += o.ms;
        take(tick(world, nsId, { now, seed: 0 }));
        break;
      case 'publish': {
        const id = fresh('v');
        take(publishVersion(world, nsId, makeVersion(id, o.gated ? gatedConfig : plainConfig), ctx));
        break;
      }
      case 'idle': {
        const plan = planIdle(state);
        take(applyIdlePlan(world, nsId, plan, plan.create.map(() => fresh('I')), { now, seed: o.seed }));
        break;
      }
      case 'captcha': {
        const check = { namespaceId: nsId, provider: 'turnstile' as const, siteKey: 'k', secretKey: 's', response: 'r', remoteIp: client(o.ip).ip };
        const r = recordCaptcha(world, check, { success: true }, ctx);
        if (r.ok) take(r.value);
        break;
      }
      case 'settings':
        world = updateNamespaceSettings(world, nsId, { ...state.settings, lobbyCountMax: o.max });
        break;
    }
    worlds.push(world);
  }
  return worlds;
};


const byKey = <V>(m: PMap<string, V>): [string, V][] => [...m.entries()].map(([k, v]): [string, V] => [k, v]).sort(([a], [b]) => (a < b ? -1 : 1));

/** Everything a caller can observe of a world, in a form `toEqual` compares. */
const observe = (w: World) => ({
  regions: w.regions,
  namespaces: byKey(w.namespaces).map(([, ns]) => ({
    id: ns.id,
    settings: ns.settings,
    currentVersionId: ns.currentVersionId,
    activeLobbies: ns.activeLobbies,
    versions: byKey(ns.versions).map(([, v]) => ({ id: v.id, config: v.config, modes: [...v.modes], groups: [...v.lobbyGroupIds] })),
    lobbies: byKey(ns.lobbies).map(([, l]) => ({ ...l, players: byKey(l.players) })),
    sources: byKey(ns.sources),
    captcha: byKey(ns.captcha),
    routing: routingRows(ns.routing),
    indexes: lobbyIndexes(ns),
  })),
  ports: byKey(w.ports).map(([region, s]) => ({ region, pools: s.pools, tcp: s.tcp.toArray(), udp: s.udp.toArray() })),
});

/** What a find with these parameters does to a world: who is seated where, or why not. */
const probe = (w: World, nsId: string, mode: string, n: number, tags?: Record<string, string>) => {
  const a = find(w, { namespaceId: nsId, gameModes: [mode], playerIds: Array.from({ length: n }, (_, i) => `probe-${i}`), newLobbyId: 'probe-lobby', client: { ip: '8.8.8.8' }, ...(tags ? { tags } : {}) }, { now: 10_000_000, seed: 3 });
  return a.kind === 'admitted' ? { seat: a.decision.value, world: observe(a.decision.world) } : a.kind === 'rejected' ? a.error.code : a.kind;
};

/** Rows keyed by id: what a store holds for a world. */
const rowsOf = (w: World) => {
  const { namespaces, lobbies, players } = dehydrateWorld(w);
  return {
    namespaces: new Map(namespaces.map((r) => [r.id, JSON.stringify(r)])),
    lobbies: new Map(lobbies.map((l) => [l.id, JSON.stringify(l)])),
    players: new Map(players.map((p) => [`${p.lobbyId}/${p.id}`, JSON.stringify(p)])),
  };
};

const sortedEntries = (m: Map<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));

describe('persisted world', () => {
  it('a stored version config is plain JSON: it survives a JSON round trip exactly', () => {
    for (const version of [config(), gated()]) {
      expect(jsonProblems(version)).toEqual([]);
      expect(JSON.parse(JSON.stringify(version))).toEqual(version);
    }
  });

  it('rows are plain JSON and hydrate(dehydrate(world)) is observably the same world, finds included', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60, size: 'max' }), (ops) => {
        const worlds = run(ops);
        const world = worlds[worlds.length - 1] as World;
        const rows = dehydrateWorld(world);
        expect(jsonProblems(rows)).toEqual([]);
        const back = roundTrip(world);
        expect(observe(back)).toEqual(observe(world));
        for (const [id, ns] of world.namespaces.entries()) {
          const hydrated = back.namespaces.get(id);
          expect(hydrated?.activeLobbies).toBe(ns.activeLobbies);
          for (const l of ns.lobbies.values()) {
            const h = hydrated?.lobbies.get(l.id);
            expect([h?.playerCount, h?.connectedCount]).toEqual([l.playerCount, l.connectedCount]);
          }
          if (ns.currentVersionId === undefined) continue;
          for (const [mode, n, tags] of [['a', 1, undefined], ['a', 2, undefined], ['a', 1, { map: 'dust' }], ['b', 1, undefined], ['g', 1, undefined]] as const) {
            expect(probe(back, id, mode, n, tags)).toEqual(probe(world, id, mode, n, tags));
          }
        }
        for (const [region, space] of back.ports.entries()) {
          const orig = world.ports.get(region);
          expect([space.tcp.used, space.udp.used]).toEqual([orig?.tcp.used, orig?.udp.used]);
        }
      }),
    );
  });

  it('a player stored as its fields under its key comes back the same, its fields in the same order', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60, size: 'max' }), (ops) => {
        const world = run(ops).at(-1) as World;
        for (const p of dehydrateWorld(world).players) {
          const fields = JSON.parse(JSON.stringify(playerFields(p))) as PlayerFields;
          expect('id' in fields || 'lobbyId' in fields).toBe(false);
          const back = playerOf(p.lobbyId, p.id, fields);
          expect(back).toEqual(p);
          expect(Object.keys(back)).toEqual(Object.keys(p));
        }
      }),
    );
  });

  it('keeps the timed, seat-timed and idle lobby sets equal to a scan of the lobbies, through any run and a restart', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60, size: 'max' }), (ops) => {
        const worlds = run(ops);
        for (const world of [...worlds, roundTrip(worlds[worlds.length - 1] as World)]) {
          for (const ns of world.namespaces.values()) expect(lobbyIndexes(ns)).toEqual(scannedLobbyIndexes(ns));
        }
      }),
    );
  });

  it('a restart (round trip) anywhere in a run changes nothing about where the run ends', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40, size: 'max' }), fc.uniqueArray(fc.nat({ max: 39 }), { maxLength: 4 }), (ops, at) => {
        const straight = run(ops);
        const restarted = run(ops, new Set(at));
        expect(observe(restarted[restarted.length - 1] as World)).toEqual(observe(straight[straight.length - 1] as World));
      }),
    );
  });

  it('diffWorld reports exactly the changed lobbies and rows; applying it to the old rows gives the new rows', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40, size: 'max' }), fc.uniqueArray(fc.nat({ max: 39 }), { maxLength: 2 }), (ops, at) => {
        const worlds = run(ops, new Set(at));
        for (let i = 1; i < worlds.length; i++) {
          const before = worlds[i - 1] as World;
          const after = worlds[i] as World;
          const diff = diffWorld(before, after);
          // Naive: every lobby whose object differs may be reported, every one whose stored row differs must be.
          const mayUp: string[] = [];
          const mustUp: string[] = [];
          const del: string[] = [];
          const players = { may: [] as string[], must: [] as string[], gone: [] as string[] };
          for (const id of new Set([...before.namespaces.keys(), ...after.namespaces.keys()])) {
            const a = before.namespaces.get(id)?.lobbies ?? PMap.empty();
            const b = after.namespaces.get(id)?.lobbies ?? PMap.empty();
            for (const l of new Set([...a.keys(), ...b.keys()])) {
              const was = a.get(l);
              const is = b.get(l);
              if (was === is) continue;
              if (is === undefined) {
                del.push(`${id}/${l}`);
                continue;
              }
              mayUp.push(`${id}/${l}`);
              if (was === undefined || JSON.stringify(dehydrateLobby(was)) !== JSON.stringify(dehydrateLobby(is))) mustUp.push(`${id}/${l}`);
              for (const p of new Set([...(was?.players.keys() ?? []), ...is.players.keys()])) {
                const pw = was?.players.get(p);
                const pi = is.players.get(p);
                if (pw === pi) continue;
                if (pi === undefined) players.gone.push(`${l}/${p}`);
                else {
                  players.may.push(`${l}/${p}`);
                  if (JSON.stringify(pw) !== JSON.stringify(pi)) players.must.push(`${l}/${p}`);
                }
              }
            }
          }
          const up = diff.namespaces.flatMap((c) => c.upserted.map((l) => `${c.id}/${l.id}`));
          expect(diff.namespaces.flatMap((c) => c.deleted.map((l) => `${c.id}/${l}`)).sort()).toEqual(del.sort());
          expect(up.filter((l) => !mayUp.includes(l))).toEqual([]);
          expect(mustUp.filter((l) => !up.includes(l))).toEqual([]);
          const seated = diff.namespaces.flatMap((c) => c.seated.map((p) => `${p.lobbyId}/${p.id}`));
          expect(seated.filter((p) => !players.may.includes(p))).toEqual([]);
          expect(players.must.filter((p) => !seated.includes(p))).toEqual([]);
          expect(diff.namespaces.flatMap((c) => c.unseated.map((p) => `${p.lobbyId}/${p.id}`)).sort()).toEqual(players.gone.sort());
          expect(diff.namespaces.every((c) => before.namespaces.get(c.id) !== after.namespaces.get(c.id))).toBe(true);
          // Persisting only the diff turns the old rows into the new rows.
          const rows = rowsOf(before);
          for (const c of diff.namespaces) {
            if (c.after === undefined) rows.namespaces.delete(c.id);
            else if (c.rowChanged) rows.namespaces.set(c.id, JSON.stringify(dehydrateNamespace(c.after)));
            for (const id of c.deleted) {
              rows.lobbies.delete(id);
              for (const key of [...rows.players.keys()]) if (key.startsWith(`${id}/`)) rows.players.delete(key);
            }
            for (const l of c.upserted) rows.lobbies.set(l.id, JSON.stringify(dehydrateLobby(l)));
            for (const p of c.unseated) rows.players.delete(`${p.lobbyId}/${p.id}`);
            for (const p of c.seated) rows.players.set(`${p.lobbyId}/${p.id}`, JSON.stringify(p));
          }
          const target = rowsOf(after);
          expect(sortedEntries(rows.namespaces)).toEqual(sortedEntries(target.namespaces));
          expect(sortedEntries(rows.lobbies)).toEqual(sortedEntries(target.lobbies));
          expect(sortedEntries(rows.players)).toEqual(sortedEntries(target.players));
        }
      }),
      { numRuns: 100 },
    );
  });

  it('diffWorld of a world with itself is empty, and sees added and removed namespaces', () => {
    const worlds = run([{ k: 'find', ns: 0, mode: 'a', n: 1, region: undefined, tagged: false, prevent: false, ip: 0, seed: 1 }]);
    const world = worlds[1] as World;
    expect(diffWorld(world, world).namespaces).toEqual([]);
    const gone = { ...world, namespaces: world.namespaces.delete('ns-1') };
    const [removed] = diffWorld(world, gone).namespaces;
    expect(removed).toMatchObject({ id: 'ns-1', after: undefined, rowChanged: true, upserted: [] });
    expect(removed?.deleted).toEqual([...(world.namespaces.get('ns-1')?.lobbies.keys() ?? [])]);
    const [added] = diffWorld(gone, world).namespaces;
    expect(added?.upserted.map((l) => l.id)).toEqual(removed?.deleted);
  });

  it('hydrateWorld refuses contradictory rows: a lobby of an unknown namespace, a port held twice', () => {
    const worlds = run([{ k: 'find', ns: 0, mode: 'a', n: 1, region: 'local', tagged: false, prevent: false, ip: 0, seed: 1 }]);
    const { namespaces, lobbies, players } = dehydrateWorld(worlds[1] as World);
    const [lobby] = lobbies;
    const [player] = players;
    if (lobby === undefined || player === undefined) throw new Error('setup: no lobby or player');
    expect(() => hydrateWorld(REGIONS, [], lobbies, players)).toThrow(/unknown namespace ns-1/);
    expect(() => hydrateWorld(REGIONS, namespaces, lobbies, [{ ...player, lobbyId: 'nowhere' }])).toThrow(/player .* sits in unknown lobby nowhere/);
    expect(() => hydrateWorld(REGIONS, namespaces, [lobby, { ...lobby, id: 'twin' }], players)).toThrow(/twin holds (tcp|udp) port/);
    // A stopped lobby holds nothing, and a lobby of a region no longer run holds nothing either.
    const stopped: LobbyDoc = { ...lobby, id: 'twin', lifecycle: { status: 'stopped', stoppedAt: 1, reason: 'requested', failed: false } };
    expect(hydrateWorld(REGIONS, namespaces, [lobby, stopped], players).namespaces.get('ns-1')?.lobbies.size).toBe(2);
    expect(hydrateWorld(REGIONS.slice(1), namespaces, lobbies, players).ports.get('local')).toBeUndefined();
  });
});

describe('claimLobbyPorts', () => {
  const ports = [
    { label: 'g', protocol: 'udp' as const, proxy: 'game_guard' as const, port: 7777 },
    { label: 'w', protocol: 'https' as const, proxy: 'game_guard' as const, port: 80 },
    { label: 'r', protocol: 'tcp' as const, proxy: 'none' as const, portRange: { min: 27000, max: 27004 } },
  ];

  it('is the inverse of releaseLobbyPorts, and refuses a port already held', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), fc.nat(), (seeds, pick) => {
        let space = createPortSpace();
        const held = [];
        for (const seed of seeds) {
          const r = allocateLobbyPorts(space, seeds.length > 1 ? ports.slice(0, 2) : ports, 'bridge', createRng(seed));
          if (!r.ok) throw new Error(r.error.code);
          space = r.value.space;
          held.push(r.value.allocations);
        }
        const one = held[pick % held.length] ?? [];
        const without = releaseLobbyPorts(space, one);
        const back = claimLobbyPorts(without, one);
        expect(back.ok && [back.value.tcp.toArray(), back.value.udp.toArray()]).toEqual([space.tcp.toArray(), space.udp.toArray()]);
        const used = lobbyPortsInUse(one);
        for (const p of used.udp) expect(isAllocated(without, 'udp', p)).toBe(false);
        const twice = claimLobbyPorts(space, one);
        expect(twice.ok).toBe(false);
        if (!twice.ok) expect(isAllocated(space, twice.error.transport, twice.error.port)).toBe(true);
      }),
    );
  });

  it('refuses a port outside the space and leaves the space untouched', () => {
    const space = createPortSpace();
    const r = claimLobbyPorts(space, [{ label: 'x', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 26001, hostPort: 5 }]);
    expect(r).toEqual({ ok: false, error: { transport: 'udp', port: 5 } });
    expect(space.udp.used).toBe(0);
  });
});

describe('PMap.diff', () => {
  type Edit = { set: boolean; key: string | number; value: number };
  const key = fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constantFrom('a', 'b', ''), fc.string({ maxLength: 3 }));
  const edits = fc.array(fc.record({ set: fc.boolean(), key, value: fc.integer({ min: 0, max: 3 }) }), { maxLength: 150 });
  const apply = (m: PMap<string | number, number>, es: readonly Edit[]) => es.reduce((acc, e) => (e.set ? acc.set(e.key, e.value) : acc.delete(e.key)), m);

  const naive = (a: PMap<string | number, number>, b: PMap<string | number, number>) => {
    const out: string[] = [];
    for (const k of new Set([...a.keys(), ...b.keys()])) if (a.get(k) !== b.get(k)) out.push(`${typeof k}:${k}:${a.get(k)}:${b.get(k)}`);
    return out.sort();
  };
  const reported = (a: PMap<string | number, number>, b: PMap<string | number, number>) => {
    const out: string[] = [];
    a.diff(b, (k, before, after) => out.push(`${typeof k}:${k}:${before}:${after}`));
    return out.sort();
  };

  it('agrees with a key-by-key comparison, for derived maps (shared subtrees) and unrelated ones', () => {
    fc.assert(
      fc.property(edits, edits, edits, (base, more, other) => {
        const a = apply(PMap.empty(), base);
        const b = apply(a, more);
        const c = apply(PMap.empty(), other);
        expect(reported(a, b)).toEqual(naive(a, b));
        expect(reported(b, a)).toEqual(naive(b, a));
        expect(reported(a, c)).toEqual(naive(a, c));
        expect(reported(a, a)).toEqual([]);
      }),
    );
  });

  /**
   * Copies of `maps` whose trie nodes record, in `read`, every node diff looks into. A node the maps
   * share stays shared (one copy per node), so diff can still skip it by identity.
   */
  const watched = (maps: readonly PMap<string, number>[], read: Set<unknown>): PMap<string, number>[] => {
    type Node = unknown[];
    const copies = new Map<Node, Node>();
    const copy = (n: Node): Node => {
      const known = copies.get(n);
      if (known !== undefined) return known;
      const target = n.map((slot) => (Array.isArray(slot) ? copy(slot as Node) : slot));
      const proxy = new Proxy(target, { get: (t, prop, receiver) => (read.add(t), Reflect.get(t, prop, receiver) as unknown) });
      copies.set(n, proxy);
      return proxy;
    };
    return maps.map((m) => {
      const root = (m as unknown as { root: Node | undefined }).root;
      return Object.assign(Object.create(PMap.prototype) as PMap<string, number>, { size: m.size, root: root && copy(root) });
    });
  };
  const nodesOf = (m: PMap<string, number>): number => {
    const count = (n: unknown[]): number => 1 + n.reduce<number>((sum, slot) => sum + (Array.isArray(slot) ? count(slot) : 0), 0);
    const root = (m as unknown as { root: unknown[] | undefined }).root;
    return root === undefined ? 0 : count(root);
  };

  it('skips shared subtrees: one change in a large map reads only the nodes on its path', () => {
    const big = PMap.from(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i] as const));
    const changed = big.set('k123', -1).delete('k9');
    const read = new Set<unknown>();
    const [before, after] = watched([big, changed], read) as [PMap<string, number>, PMap<string, number>];
    const seen: string[] = [];
    before.diff(after, (k) => seen.push(k));
    expect(seen.sort()).toEqual(['k123', 'k9']);
    // Nodes counted, not time: the two changed paths on each side (a few levels each), out of ~17,000.
    expect(nodesOf(big)).toBeGreaterThan(10_000);
    expect(read.size).toBeLessThanOrEqual(24);
    // The same contents without shared nodes: every node is read (so the count above means something).
    read.clear();
    const [rebuilt] = watched([PMap.from(big.entries())], read) as [PMap<string, number>];
    const [original] = watched([big], read) as [PMap<string, number>];
    original.diff(rebuilt, () => expect.unreachable());
    expect(read.size).toBe(2 * nodesOf(big));
  });
});
