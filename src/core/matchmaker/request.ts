import type { GameMode } from '../config/types.js';
import { type MatchError, matchError } from '../errors.js';
import { err, ok, type Result } from '../result.js';
import type { NamespaceSettings, RegionInfo, Version } from '../world.js';

/** The requesting client, as the HTTP edge saw it. */
export interface Client {
  /** The address seats are counted against (`max_players_per_client`). */
  readonly ip: string;
  /** How the address was classified; each kind has its own cap. Default `normal`. */
  readonly kind?: 'normal' | 'vpn' | 'proxy' | 'tor' | 'hosting';
  readonly coords?: { readonly latitude: number; readonly longitude: number };
  readonly userAgent?: string;
}

export const MAX_TAGS = 8;
export const MAX_TAG_NAME = 128;
export const MAX_TAG_VALUE = 512;

/**
 * The requested game modes of the current version, in request order.
 *
 * @example
 * resolveModes(version, ['default']) // ok([defaultMode])
 */
export const resolveModes = (version: Version | undefined, names: readonly string[]): Result<GameMode[], MatchError> => {
  if (names.length === 0) return err(matchError('MATCHMAKER_NO_GAME_MODE_PROVIDED', undefined, { path: ['game_modes'] }));
  const modes: GameMode[] = [];
  for (const [i, name] of names.entries()) {
    const mode = version?.modes.get(name);
    if (mode === undefined) {
      return err(matchError('MATCHMAKER_GAME_MODE_NOT_FOUND', { game_mode: name }, { path: ['game_modes', String(i)] }));
    }
    if (!modes.includes(mode)) modes.push(mode);
  }
  return ok(modes);
};

/**
 * Tags: at most 8, names ≤ 128 and values ≤ 512 characters, and every mode taggable.
 *
 * @example
 * checkTags({ map: 'dust' }, [taggableMode]) // undefined (fine)
 */
export const checkTags = (tags: Readonly<Record<string, string>>, modes: readonly GameMode[]): MatchError | undefined => {
  const names = Object.keys(tags);
  if (names.length === 0) return undefined;
  if (names.length > MAX_TAGS) return matchError('MATCHMAKER_TOO_MANY_TAGS', { max: MAX_TAGS }, { path: ['tags'] });
  for (const name of names) {
    if (name.length > MAX_TAG_NAME) return matchError('MATCHMAKER_TAG_NAME_TOO_LONG', { max: MAX_TAG_NAME }, { path: ['tags', name] });
    if ((tags[name] as string).length > MAX_TAG_VALUE) {
      return matchError('MATCHMAKER_TAG_TOO_LONG', { max: MAX_TAG_VALUE }, { path: ['tags', name] });
    }
  }
  const untaggable = modes.find((m) => !m.taggable);
  return untaggable && matchError('MATCHMAKER_TAGS_DISABLED', { game_mode: untaggable.name }, { path: ['tags'] });
};

/**
 * Dynamic max players: an integer ≥ 1, allowed by every mode, at most max(normal, direct) of each.
 *
 * @example
 * checkDynamicMax(4, [modeAllowingIt]) // undefined (fine)
 */
export const checkDynamicMax = (maxPlayers: number | undefined, modes: readonly GameMode[]): MatchError | undefined => {
  if (maxPlayers === undefined) return undefined;
  const path = ['max_players'];
  const closed = modes.find((m) => !m.allowDynamicMaxPlayers);
  if (closed) return matchError('MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED', { game_mode: closed.name }, { path });
  const cap = Math.min(...modes.map((m) => Math.max(m.maxPlayers.normal, m.maxPlayers.direct)));
  if (!Number.isInteger(maxPlayers) || maxPlayers < 1 || maxPlayers > cap) {
    return matchError('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID', { max: cap }, { path });
  }
  return undefined;
};

const EARTH_KM = 6371;
const rad = (deg: number): number => (deg * Math.PI) / 180;

/** Great-circle distance in kilometres. @example distanceKm(a, a) // 0 */
export const distanceKm = (
  a: { readonly latitude: number; readonly longitude: number },
  b: { readonly latitude: number; readonly longitude: number },
): number => {
  const h =
    Math.sin(rad(b.latitude - a.latitude) / 2) ** 2 +
    Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(rad(b.longitude - a.longitude) / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(h)));
};

/**
 * The one region closest to the client among `candidates`, or the first in the operator's order
 * when the client's location is unknown (Rivet chose the lowest UUID there).
 *
 * @example
 * closestRegion(world.regions, new Set(['local']), undefined) // 'local'
 */
export const closestRegion = (
  catalog: readonly RegionInfo[],
  candidates: { has(id: string): boolean },
  coords: Client['coords'],
): string | undefined => {
  let best: RegionInfo | undefined;
  let bestKm = Infinity;
  for (const r of catalog) {
    if (!candidates.has(r.id)) continue;
    const km = coords && r.coords ? distanceKm(coords, r.coords) : Infinity;
    if (best === undefined || km < bestKm) {
      best = r;
      bestKm = km;
    }
  }
  return best?.id;
};

const knownRegion = (catalog: readonly RegionInfo[], id: string): boolean => {
  for (const r of catalog) if (r.id === id) return true;
  return false;
};

/**
 * The regions to search, in priority order. A given list is a **priority order** (Tavern; Rivet
 * treated it as an unordered filter): lobbies of the first region are preferred, and a lobby is
 * only ever auto-created in a listed region. Without a list: the single closest region among
 * those the modes enable.
 *
 * @example
 * resolveRegions(world.regions, modes, ['eu', 'us'], undefined) // ok(['eu', 'us'])
 */
export const resolveRegions = (
  catalog: readonly RegionInfo[],
  modes: readonly GameMode[],
  requested: readonly string[] | undefined,
  coords: Client['coords'],
): Result<string[], MatchError> => {
  if (requested !== undefined && requested.length > 0) {
    const out: string[] = [];
    for (let i = 0; i < requested.length; i++) {
      const id = requested[i] as string;
      if (!knownRegion(catalog, id)) {
        return err(matchError('MATCHMAKER_REGION_NOT_FOUND', { region: id }, { path: ['regions', String(i)] }));
      }
      if (!out.includes(id)) out.push(id);
    }
    return ok(out);
  }
  const closest = closestRegion(catalog, { has: (id) => modes.some((m) => m.regions.some((r) => r.name === id)) }, coords);
  return ok(closest === undefined ? [] : [closest]);
};

/** The seat cap that applies to a client of this kind. @example sourceCap(settings, 'vpn') // 4 */
export const sourceCap = (settings: NamespaceSettings, kind: Client['kind']): number => {
  switch (kind) {
    case 'vpn':
      return settings.maxPlayersPerClientVpn;
    case 'proxy':
      return settings.maxPlayersPerClientProxy;
    case 'tor':
      return settings.maxPlayersPerClientTor;
    case 'hosting':
      return settings.maxPlayersPerClientHosting;
    case 'normal':
    case undefined:
      return settings.maxPlayersPerClient;
  }
};

/**
 * `seats` more players from this client stay within its cap.
 *
 * @example
 * checkSourceCap(settings, client, 7, 1) // undefined: the 8th seat is allowed
 */
export const checkSourceCap = (
  settings: NamespaceSettings,
  client: Client,
  held: number,
  seats: number,
): MatchError | undefined => {
  const cap = sourceCap(settings, client.kind);
  return held + seats > cap ? matchError('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE', { max: cap }) : undefined;
};
