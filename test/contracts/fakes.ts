/**
 * A Matchmaker service over any MatchStore with in-process fakes (clock, ids, runtime, routes,
 * logs, verifiers), and the version configs the storage tests publish. Shared by the contract
 * suites and by the child processes of the storage tests.
 */
import { randomUUID } from 'node:crypto';
import { FakeRuntime } from '../../src/adapters/fake/runtime.js';
import { parseVersion } from '../../src/core/config/index.js';
import type { ResolvedVersion } from '../../src/core/config/types.js';
import { dehydrateLobby, dehydrateNamespace, dehydrateWorld } from '../../src/core/persist.js';
import { makeVersion, type Version, type World } from '../../src/core/world.js';
import type { MatchStore } from '../../src/io/index.js';
import { Matchmaker } from '../../src/services/matchmaker.js';

const IMAGE = '6f1d2b8e-0d5f-4f0b-9a57-1f2a3b4c5d6e';

/** A resolved version: one mode `default` of `maxPlayers` seats, `idle` idle lobbies (min = max) in `local`. */
export const versionConfig = (maxPlayers: number, idle = 0): ResolvedVersion => {
  const parsed = parseVersion(
    {
      display_name: 'contract',
      config: {
        matchmaker: {
          regions: { local: { idle_lobbies: { min: idle, max: idle } } },
          max_players: maxPlayers,
          docker: { image_id: IMAGE, ports: { default: { port: 7777, protocol: 'udp' }, web: { port: 8080, protocol: 'https' } } },
          game_modes: { default: {} },
        },
      },
    },
    { regions: new Set(['local']) },
  );
  if (!parsed.ok) throw new Error(parsed.error.map((p) => p.path.join('.')).join(', '));
  return parsed.value.resolved;
};

/** A version of {@link versionConfig} with a fresh id. */
export const version = (maxPlayers: number, idle = 0): Version => makeVersion(randomUUID(), versionConfig(maxPlayers, idle));

/** The stored form of a world, in a canonical order: equal for observably equal worlds. */
export const canonicalRows = (world: World) => {
  const { namespaces, lobbies, players } = dehydrateWorld(world);
  const byId = <T extends { id: string }>(xs: T[]) => xs.sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    namespaces: byId(namespaces).map((n) => ({ ...n, versions: byId([...n.versions]), captcha: [...n.captcha].sort((a, b) => (a.source < b.source ? -1 : 1)) })),
    lobbies: byId(lobbies),
    players: players.map((p) => ({ key: `${p.lobbyId}/${p.id}`, p })).sort((a, b) => (a.key < b.key ? -1 : 1)),
    ports: [...world.ports.entries()].map(([region, s]) => [region, s.tcp.toArray(), s.udp.toArray()]).sort(),
  };
};

/** A Matchmaker on `store` with fakes; `clock.t` is its time. */
export const matchmakerOn = (store: MatchStore) => {
  const clock = { t: 1_700_000_000_000, now: () => clock.t };
  // Starts nothing; records what it was asked to start.
  const runtime = new FakeRuntime();
  const mm = new Matchmaker({
    store,
    clock,
    random: { uuid: () => randomUUID(), u32: () => (Math.random() * 2 ** 32) >>> 0 },
    verifier: { verify: () => Promise.resolve({ kind: 'status', status: 204 }) },
    captcha: { verify: () => Promise.resolve({ success: true }) },
    runtime,
    routes: { bind: () => Promise.resolve(), unbind: () => Promise.resolve() },
    logs: { append: () => Promise.resolve() },
  });
  return { mm, clock, runtime };
};

/** Marks every `creating` lobby of the namespace ready. */
export const readyAll = async (mm: Matchmaker, namespaceId: string): Promise<void> => {
  const world = await mm.snapshot();
  for (const lobby of world.namespaces.get(namespaceId)?.lobbies.values() ?? []) {
    if (lobby.lifecycle.status !== 'creating') continue;
    const r = await mm.lobbyReady({ namespaceId, lobbyId: lobby.id });
    if (!r.ok) throw new Error(r.error.code);
  }
};

/** Where a world contradicts itself (the core's check, shared with the chaos benchmark). */
export { inconsistencies } from '../../src/core/invariants.js';

/**
 * A world with a namespace, a published version, seated, connected and ready lobbies (built on
 * `store`), and its rows as schema version 2 stored them: each lobby document held its players and
 * their counts (the migration to player rows reads these).
 */
export const legacyWorld = async (store: MatchStore) => {
  const { mm } = matchmakerOn(store);
  const ns = randomUUID();
  await mm.addNamespace(ns);
  await mm.publish(ns, version(3, 1));
  const seats = [];
  for (let i = 0; i < 7; i++) {
    const outcome = await mm.find({ namespaceId: ns, gameModes: ['default'], client: { ip: `10.0.0.${i}` } });
    if (!outcome.ok) throw new Error(outcome.error.code);
    seats.push(outcome.seat);
  }
  await readyAll(mm, ns);
  for (const seat of seats.slice(0, 3)) {
    const r = await mm.playerConnected({ namespaceId: ns, lobbyId: seat.lobbyId, playerId: seat.playerIds[0] ?? '' });
    if (!r.ok) throw new Error(r.error.code);
  }
  const world = await store.snapshot();
  const namespaces = [...world.namespaces.values()].map((n) => ({ id: n.id, doc: dehydrateNamespace(n) }));
  const lobbies = [...world.namespaces.values()].flatMap((n) =>
    [...n.lobbies.values()].map((l) => ({
      id: l.id,
      namespaceId: l.namespaceId,
      doc: { ...dehydrateLobby(l), players: [...l.players.values()], playerCount: l.playerCount, connectedCount: l.connectedCount },
    })),
  );
  return { world, namespaces, lobbies };
};
