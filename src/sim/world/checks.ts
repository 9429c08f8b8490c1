/**
 * Invariants a run must keep, checked against the services' committed world: the idle pool within
 * its bounds after each reconciliation (when capacity allows), and every port held by exactly the
 * lobbies that were allocated it.
 */
import { isActive, isFindable, isIdle } from '../../core/lobby/flags.js';
import { lobbyPortsInUse, usedCount } from '../../core/ports/index.js';
import { currentVersion, type World } from '../../core/world.js';

/**
 * Pools (region × game mode of the current version) whose idle lobbies find could use are above
 * `idle_lobbies.max`, or (with `checkMin`: the reconciliation's creations all went through) below
 * `min` although the namespace's `lobby_count_max` and the region's runtime (`full`) leave room
 * and the game mode is not under start back-off (`backedOff`: the matchmaker creates none then).
 *
 * @example
 * idleViolations(world, 'sim', { checkMin: true, full: () => false, backedOff: () => false }) // [] after a reconciliation
 */
export const idleViolations = (
  world: World,
  namespaceId: string,
  options: {
    readonly checkMin: boolean;
    readonly full: (region: string) => boolean;
    readonly backedOff: (versionId: string, gameMode: string) => boolean;
  },
): string[] => {
  const ns = world.namespaces.get(namespaceId);
  const version = ns === undefined ? undefined : currentVersion(ns);
  if (ns === undefined || version === undefined) return [];
  const counts = new Map<string, number>();
  // Candidates from the namespace's idle set (the core's tests check it against a full scan).
  for (const lobby of ns.idleLobbies.values()) {
    if (!isActive(lobby) || !isIdle(lobby) || !isFindable(lobby, ns.currentVersionId)) continue;
    const key = `${lobby.region}/${lobby.gameMode}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const out: string[] = [];
  const room = ns.activeLobbies < ns.settings.lobbyCountMax;
  for (const mode of version.config.gameModes) {
    for (const region of mode.regions) {
      const key = `${region.name}/${mode.name}`;
      const n = counts.get(key) ?? 0;
      const { min, max } = region.idleLobbies;
      if (n > max) out.push(`${key}: ${n} idle lobbies, above idle_lobbies.max ${max}`);
      const short = options.checkMin && n < min && room && !options.full(region.name) && !options.backedOff(version.id, mode.name);
      if (short) out.push(`${key}: ${n} idle lobbies, below idle_lobbies.min ${min} with capacity left`);
    }
  }
  return out;
};

/**
 * Ports whose accounting disagrees: per region, the port space's used count against the ports of
 * the lobbies still holding theirs (every lobby not yet stopped), and the allocations the run's
 * metrics saw against those lobbies' allocations.
 *
 * @example
 * portViolations(world, metrics.ports) // []
 */
export const portViolations = (world: World, trackedAllocations: number): string[] => {
  const held = new Map<string, { tcp: number; udp: number }>();
  let allocations = 0;
  for (const ns of world.namespaces.values()) {
    for (const lobby of ns.lobbies.values()) {
      if (lobby.lifecycle.status === 'stopped') continue;
      allocations += lobby.ports.length;
      const used = lobbyPortsInUse(lobby.ports);
      const h = held.get(lobby.region) ?? { tcp: 0, udp: 0 };
      held.set(lobby.region, { tcp: h.tcp + used.tcp.length, udp: h.udp + used.udp.length });
    }
  }
  const out: string[] = [];
  for (const [region, space] of world.ports.entries()) {
    const h = held.get(region) ?? { tcp: 0, udp: 0 };
    for (const transport of ['tcp', 'udp'] as const) {
      const used = usedCount(space, transport, 'proxied') + usedCount(space, transport, 'host');
      if (used !== h[transport]) out.push(`${region} ${transport}: ${used} ports allocated, lobbies hold ${h[transport]}`);
    }
  }
  if (allocations !== trackedAllocations) out.push(`lobbies hold ${allocations} port allocations, events account for ${trackedAllocations}`);
  return out;
};
