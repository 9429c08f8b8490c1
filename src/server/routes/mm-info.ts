/**
 * Matchmaker listings (wire.md §3.1): lobbies/list, regions and players/statistics.
 */
import { distanceKm } from '../../core/matchmaker/request.js';
import { isActive, isPublic, isReady } from '../../core/lobby/flags.js';
import type { Lobby } from '../../core/lobby/lobby.js';
import { currentVersion, type NamespaceState, type RegionInfo } from '../../core/world.js';
import { requireMatchmakerNamespace } from '../auth.js';
import { clientCoords } from '../client.js';
import type { Ctx, Handler } from '../context.js';
import { DEV_REGION } from '../join-response.js';
import { ensureNamespace } from '../../services/publish.js';
import type { Router } from '../router.js';

const KM_PER_MILE = 1.609344;

type Coords = { readonly latitude: number; readonly longitude: number } | undefined;

export const renderRegionInfo = (r: RegionInfo, client: Coords): unknown => {
  const km = client !== undefined && r.coords !== undefined ? distanceKm(client, r.coords) : 0;
  return {
    region_id: r.id,
    provider_display_name: r.provider,
    region_display_name: r.displayName,
    datacenter_coord: { latitude: r.coords?.latitude ?? 0, longitude: r.coords?.longitude ?? 0 },
    datacenter_distance_from_client: { kilometers: km, miles: km / KM_PER_MILE },
  };
};

/** The regions the namespace's current game modes run in, closest first when the client's location is known. */
function namespaceRegions(ctx: Ctx, state: NamespaceState | undefined): RegionInfo[] {
  const version = state === undefined ? undefined : currentVersion(state);
  const used = new Set(version?.config.gameModes.flatMap((m) => m.regions.map((r) => r.name)) ?? []);
  const coords = clientCoords(ctx);
  const regions = ctx.services.regions.filter((r) => used.has(r.id));
  if (coords === undefined) return regions;
  const km = (r: RegionInfo): number => (r.coords === undefined ? Infinity : distanceKm(coords, r.coords));
  return [...regions].sort((a, b) => km(a) - km(b));
}

async function namespaceState(ctx: Ctx, allowOrigin: boolean) {
  const agent = await requireMatchmakerNamespace(ctx, allowOrigin);
  if (agent.kind === 'dev') return { agent, state: undefined };
  await ensureNamespace(ctx.services, agent.ns);
  return { agent, state: (await ctx.services.matchmaker.snapshot()).namespaces.get(agent.ns.id) };
}

const DEV_REGION_INFO = {
  region_id: DEV_REGION.region_id,
  provider_display_name: 'Development',
  region_display_name: DEV_REGION.display_name,
  datacenter_coord: { latitude: 0, longitude: 0 },
  datacenter_distance_from_client: { kilometers: 0, miles: 0 },
};

/**
 * Listable lobbies: public, ready, open, current-version lobbies of listable modes with at least
 * one connected player — and a mode's only such lobby even when empty (wire.md §3.1).
 */
function listable(state: NamespaceState): Lobby[] {
  const version = currentVersion(state);
  if (version === undefined) return [];
  const byMode = new Map<string, Lobby[]>();
  for (const lobby of state.lobbies.values()) {
    const mode = version.modes.get(lobby.gameMode);
    if (lobby.versionId !== version.id || mode?.listable !== true || !isActive(lobby) || !isReady(lobby) || !isPublic(lobby) || lobby.closed) continue;
    byMode.set(lobby.gameMode, [...(byMode.get(lobby.gameMode) ?? []), lobby]);
  }
  return [...byMode.values()].flatMap((ls) => (ls.length === 1 ? ls : ls.filter((l) => l.connectedCount > 0)));
}

async function list(ctx: Ctx): Promise<unknown> {
  const includeState = ctx.url.searchParams.get('include_state') === 'true';
  const { agent, state } = await namespaceState(ctx, true);
  if (agent.kind === 'dev') {
    const world = await ctx.services.matchmaker.snapshot();
    const nsState = world.namespaces.get(agent.ns.id);
    const modes = (nsState === undefined ? undefined : currentVersion(nsState))?.config.gameModes ?? [];
    return {
      game_modes: modes.map((m) => ({ game_mode_id: m.name })),
      regions: [DEV_REGION_INFO],
      lobbies: modes.map((m) => ({
        region_id: DEV_REGION.region_id, game_mode_id: m.name, lobby_id: '00000000-0000-0000-0000-000000000000',
        max_players_normal: m.maxPlayers.normal, max_players_direct: m.maxPlayers.direct, max_players_party: m.maxPlayers.party,
        total_player_count: 0, ...(includeState ? { state: { foo: 'bar' } } : {}),
      })),
    };
  }
  const version = state === undefined ? undefined : currentVersion(state);
  const listed = state === undefined ? [] : listable(state);
  const page = includeState ? await ctx.services.matchmaker.lobbyStates(listed.map((l) => l.id), ctx.services.settings.listStateBytes) : undefined;
  const lobbies = listed.map((l) => {
    const text = page?.states.get(l.id);
    return {
      region_id: l.region, game_mode_id: l.gameMode, lobby_id: l.id,
      max_players_normal: l.maxPlayers.normal, max_players_direct: l.maxPlayers.direct, max_players_party: l.maxPlayers.party,
      total_player_count: l.connectedCount,
      ...(text === undefined ? {} : { state: JSON.parse(text) as unknown }),
      // Tavern: the state exists but did not fit the listing's byte budget.
      ...(page?.omitted.has(l.id) === true ? { state_truncated: true } : {}),
    };
  });
  return {
    game_modes: (version?.config.gameModes ?? []).map((m) => ({ game_mode_id: m.name })),
    regions: namespaceRegions(ctx, state).map((r) => renderRegionInfo(r, clientCoords(ctx))),
    lobbies,
  };
}

async function regions(ctx: Ctx): Promise<unknown> {
  const { agent, state } = await namespaceState(ctx, true);
  if (agent.kind === 'dev') {
    const first = ctx.services.regions[0];
    return { regions: [{ ...DEV_REGION_INFO, region_id: first?.id ?? 'local', provider_display_name: 'Your Computer' }] };
  }
  return { regions: namespaceRegions(ctx, state).map((r) => renderRegionInfo(r, clientCoords(ctx))) };
}

/** Players holding a seat in the namespace's active lobbies, per game mode and region (a token is required). */
async function statistics(ctx: Ctx): Promise<unknown> {
  const { agent, state } = await namespaceState(ctx, false);
  if (agent.kind === 'dev' || state === undefined) return { player_count: 0, game_modes: {} };
  const modes: Record<string, { player_count: number; regions: Record<string, { player_count: number }> }> = {};
  let total = 0;
  for (const lobby of state.lobbies.values()) {
    if (!isActive(lobby)) continue;
    total += lobby.playerCount;
    const mode = (modes[lobby.gameMode] ??= { player_count: 0, regions: {} });
    mode.player_count += lobby.playerCount;
    const region = (mode.regions[lobby.region] ??= { player_count: 0 });
    region.player_count += lobby.playerCount;
  }
  return { player_count: total, game_modes: modes };
}

export function registerMatchmakerInfo(router: Router<Handler>): void {
  router
    .add('GET', '/matchmaker/lobbies/list', list)
    .add('GET', '/matchmaker/regions', regions)
    .add('GET', '/matchmaker/players/statistics', statistics);
}
