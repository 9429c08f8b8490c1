/**
 * A world's consistency with itself: what every store must hold after every commit, whatever was
 * killed when. The storage tests check it after crashes; the chaos benchmark after each restart.
 */
import { lobbyPortsInUse, isAllocated } from './ports/index.js';
import type { World } from './world.js';

/**
 * Where a world contradicts itself, as messages (none when consistent): lobby player counts against
 * their players, per-client seat counts, active lobby counts, and each region's taken ports against
 * the allocations of its lobbies that have not stopped (each port held once).
 *
 * @example
 * inconsistencies(await store.snapshot()); // [] for a sound world
 */
export const inconsistencies = (world: World): string[] => {
  const out: string[] = [];
  type Held = { tcp: Map<number, string>; udp: Map<number, string> };
  const none = (): Held => ({ tcp: new Map(), udp: new Map() });
  const held = new Map<string, Held>();
  for (const ns of world.namespaces.values()) {
    const sources = new Map<string, number>();
    let active = 0;
    for (const lobby of ns.lobbies.values()) {
      if (lobby.namespaceId !== ns.id) out.push(`lobby ${lobby.id} is filed under ${ns.id} but says ${lobby.namespaceId}`);
      const players = [...lobby.players.values()];
      if (lobby.playerCount !== players.length) out.push(`lobby ${lobby.id}: playerCount ${lobby.playerCount}, ${players.length} players`);
      const connected = players.filter((p) => p.status === 'connected').length;
      if (lobby.connectedCount !== connected) out.push(`lobby ${lobby.id}: connectedCount ${lobby.connectedCount}, ${connected} connected`);
      if (lobby.playerCount > Math.max(lobby.maxPlayers.direct, lobby.maxPlayers.party)) out.push(`lobby ${lobby.id}: ${lobby.playerCount} players over its limits`);
      for (const p of players) sources.set(p.source, (sources.get(p.source) ?? 0) + 1);
      if (lobby.lifecycle.status === 'creating' || lobby.lifecycle.status === 'ready') active++;
      if (lobby.lifecycle.status === 'stopped') continue;
      const region = held.get(lobby.region) ?? none();
      held.set(lobby.region, region);
      const used = lobbyPortsInUse(lobby.ports);
      for (const transport of ['tcp', 'udp'] as const) {
        for (const port of used[transport]) {
          const owner = region[transport].get(port);
          if (owner !== undefined) out.push(`${transport} port ${port} held by ${owner} and ${lobby.id}`);
          region[transport].set(port, lobby.id);
        }
      }
    }
    if (active !== ns.activeLobbies) out.push(`namespace ${ns.id}: activeLobbies ${ns.activeLobbies}, ${active} active`);
    const recorded = new Map(ns.sources.entries());
    if (JSON.stringify([...recorded].sort()) !== JSON.stringify([...sources].sort())) out.push(`namespace ${ns.id}: per-client seat counts disagree`);
  }
  for (const [region, space] of world.ports.entries()) {
    const ports = held.get(region) ?? none();
    for (const transport of ['tcp', 'udp'] as const) {
      if (space[transport].used !== ports[transport].size) out.push(`${region} ${transport}: ${space[transport].used} ports taken, lobbies hold ${ports[transport].size}`);
      for (const port of ports[transport].keys()) if (!isAllocated(space, transport, port)) out.push(`${region} ${transport} port ${port} held but free`);
    }
  }
  return out;
};
