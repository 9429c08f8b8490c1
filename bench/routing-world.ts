/**
 * The benchmark's world: `n` open lobbies spread over 4 regions × 3 game modes (16 seats each),
 * some full, some closed, the rest partly filled, built through the core's own transaction so
 * every index is exactly what decisions maintain. Deterministic for a size.
 */
import { parseVersionConfig, resolveVersion } from '../src/core/config/index.js';
import type { GameMode } from '../src/core/config/types.js';
import type { FindCommand } from '../src/core/matchmaker/find.js';
import { reserveSeats } from '../src/core/matchmaker/seat.js';
import { spawnLobby } from '../src/core/matchmaker/spawn.js';
import { addNamespace, publishVersion } from '../src/core/namespace.js';
import { createRng } from '../src/core/rng.js';
import { Tx } from '../src/core/tx.js';
import { createWorld, makeVersion, namespaceOf, type World } from '../src/core/world.js';

export const REGIONS = ['r0', 'r1', 'r2', 'r3'] as const;
export const MODES = ['m0', 'm1', 'm2'] as const;
export const SEATS = 16;
export const FULL_SHARE = 0.3;
export const CLOSED_SHARE = 0.1;
export const NS = 'bench';

/** The benchmark's version, as a developer would write it: parsed and resolved by the core. */
const benchVersion = () => {
  const parsed = parseVersionConfig({
    matchmaker: {
      regions: Object.fromEntries(REGIONS.map((r) => [r, {}])),
      max_players: SEATS,
      game_modes: Object.fromEntries(MODES.map((m) => [m, {}])),
    },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
  return makeVersion('v1', resolveVersion(parsed.value));
};

/** The naive baseline's view of a lobby: a plain mutable record in an array. */
export interface FlatLobby {
  readonly id: string;
  readonly region: string;
  readonly mode: string;
  readonly closed: boolean;
  players: number;
}

export interface BenchWorld {
  readonly world: World;
  readonly flat: FlatLobby[];
}

/** Player count of lobby `i`: full, closed (partly filled), or 0..15. */
const fillOf = (i: number, draw: number): { readonly players: number; readonly closed: boolean } => {
  const bucket = (i * 7919) % 100;
  if (bucket < FULL_SHARE * 100) return { players: SEATS, closed: false };
  if (bucket < (FULL_SHARE + CLOSED_SHARE) * 100) return { players: draw % SEATS, closed: true };
  return { players: draw % SEATS, closed: false };
};

export const buildWorld = (n: number): BenchWorld => {
  const regions = REGIONS.map((id) => ({ id, displayName: id, provider: 'bench' }));
  const settings = {
    lobbyCountMax: 10_000_000,
    maxPlayersPerClient: 1e9,
    maxPlayersPerClientVpn: 1e9,
    maxPlayersPerClientProxy: 1e9,
    maxPlayersPerClientTor: 1e9,
    maxPlayersPerClientHosting: 1e9,
  };
  let world = addNamespace(createWorld(regions), NS, settings);
  const version = benchVersion();
  world = publishVersion(world, NS, version, { now: 0, seed: 0 }).world;
  const tx = new Tx(world, namespaceOf(world, NS), 0);
  const rng = createRng(n);
  const flat: FlatLobby[] = [];
  const client = { ip: '127.0.0.1' };
  for (let i = 0; i < n; i++) {
    const region = REGIONS[i % 4] as string;
    const gm = version.modes.get(MODES[Math.floor(i / 4) % 3] as string) as GameMode;
    const spawned = spawnLobby(
      tx,
      { lobbyId: `lobby-${i}`, version, mode: gm, region, origin: 'pooled', publicity: 'public', tags: {} },
      rng,
    );
    if (!spawned.ok) throw new Error(spawned.error.code);
    const { players, closed } = fillOf(i, rng.u32());
    const ids = Array.from({ length: players }, (_, k) => `seed-${i}-${k}`);
    if (players > 0) reserveSeats(tx, spawned.value, ids, client, false);
    const lobby = tx.lobby(spawned.value.id);
    if (lobby === undefined) throw new Error('lost lobby');
    tx.putLobby({ ...lobby, closed, lifecycle: { status: 'ready', readyAt: 0 } });
    flat.push({ id: lobby.id, region, mode: gm.name, closed, players });
  }
  return { world: tx.commit(undefined).world, flat };
};

/** The 12 (region, mode) find requests the benchmark rotates through. */
export const findCommands = (): FindCommand[] =>
  REGIONS.flatMap((region) =>
    MODES.map((m) => ({
      namespaceId: NS,
      gameModes: [m],
      regions: [region],
      playerIds: ['p'],
      newLobbyId: 'new',
      client: { ip: '127.0.0.2' },
    })),
  );

/** The naive baseline: scan every lobby, keep the fullest open one with a free seat. */
export const naiveChoose = (flat: readonly FlatLobby[], region: string, gm: string): FlatLobby | undefined => {
  let best: FlatLobby | undefined;
  for (const l of flat) {
    if (l.region !== region || l.mode !== gm || l.closed || l.players >= SEATS) continue;
    if (best === undefined || l.players > best.players) best = l;
  }
  return best;
};
