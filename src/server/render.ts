/**
 * Catalog and matchmaker records rendered as the 23.2 wire's snake_case JSON. Optional fields are
 * omitted when absent, never null; timestamps are RFC 3339 with milliseconds.
 */
import { createHash } from 'node:crypto';
import type { LobbySummary } from '../core/analytics.js';
import type { RegionInfo } from '../core/world.js';
import type { GameRecord, NamespaceRecord, VersionRecord } from '../io/catalog.js';
import { ts } from './context.js';
import type { Settings } from './deps.js';

/**
 * The stable UUID of a region name id (the cloud API's `region_id` is a UUID; the player-facing
 * API uses name ids). A name-based (v5-style) UUID, so every instance agrees.
 *
 * @example
 * regionUuid('local') // '…-5…-…' (always the same)
 */
export const regionUuid = (name: string): string => {
  const h = createHash('sha1').update(`tavern-region:${name}`).digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x50;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
};

/** A custom domain's state when no TLS certificate covers it. */
export const HTTP_ONLY = 'no TLS certificate for this domain in TAVERN_CDN_TLS_DIR: served over HTTP only';

/**
 * Where a CDN hostname's site answers: `https://` on the CDN's HTTPS port when a certificate covers
 * it, else `http://` on its HTTP port; undefined without a CDN listener.
 *
 * @example
 * cdnSiteUrl('tanks.cdn.localhost', settings) // 'https://tanks.cdn.localhost:8443/'
 */
export function cdnSiteUrl(host: string, settings: Settings): string | undefined {
  const at = (port: number, standard: number): string => (port === standard ? '' : `:${port}`);
  if (settings.cdnTlsPort !== undefined && settings.cdnTls?.covers(host) === true) return `https://${host}${at(settings.cdnTlsPort, 443)}/`;
  return settings.cdnPort === undefined ? undefined : `http://${host}${at(settings.cdnPort, 80)}/`;
}

/** The CDN hostname a custom domain should CNAME to. */
export const cdnHostname = (game: GameRecord, ns: NamespaceRecord, settings: Settings): string | undefined =>
  settings.cdnDomain === undefined ? undefined : ns.nameId === 'prod' ? `${game.nameId}.${settings.cdnDomain}` : `${game.nameId}--${ns.nameId}.${settings.cdnDomain}`;

/** `namespace` of getGameNamespaceById (wire.md §2.2). */
export function renderNamespace(game: GameRecord, ns: NamespaceRecord, settings: Settings): unknown {
  const cname = cdnHostname(game, ns, settings);
  const url = cname === undefined ? undefined : cdnSiteUrl(cname, settings);
  const m = ns.settings;
  return {
    namespace_id: ns.id,
    create_ts: ts(ns.createdAt),
    display_name: ns.displayName,
    version_id: ns.versionId,
    name_id: ns.nameId,
    config: {
      cdn: {
        // A Tavern extension: where the namespace's site answers (HTTPS when the CDN has a certificate for it).
        ...(url === undefined ? {} : { url }),
        enable_domain_public_auth: ns.cdn.enableDomainPublicAuth,
        domains: ns.domains.map((d) => ({
          domain: d.domain,
          create_ts: ts(d.createdAt),
          // Tavern checks no DNS: a domain is served as soon as it is added, over HTTPS once a certificate covers it.
          verification_status: 'active',
          verification_method: cname === undefined ? { invalid: {} } : { http: { cname_record: cname } },
          verification_errors: settings.cdnTls?.covers(d.domain) === true ? [] : [HTTP_ONLY],
        })),
        auth_type: ns.cdn.authType,
        auth_user_list: ns.cdn.authUsers.map((u) => ({ user: u.user })),
      },
      matchmaker: {
        lobby_count_max: m.lobbyCountMax,
        max_players_per_client: m.maxPlayersPerClient,
        max_players_per_client_vpn: m.maxPlayersPerClientVpn,
        max_players_per_client_proxy: m.maxPlayersPerClientProxy,
        max_players_per_client_tor: m.maxPlayersPerClientTor,
        max_players_per_client_hosting: m.maxPlayersPerClientHosting,
      },
      kv: {},
      identity: {},
    },
  };
}

export const renderNamespaceSummary = (ns: NamespaceRecord): unknown => ({
  namespace_id: ns.id,
  create_ts: ts(ns.createdAt),
  display_name: ns.displayName,
  version_id: ns.versionId,
  name_id: ns.nameId,
});

export const renderVersionSummary = (v: VersionRecord): unknown => ({
  version_id: v.id,
  create_ts: ts(v.createdAt),
  display_name: v.displayName,
});

/** `available_regions[]` of GET game (RegionSummary). */
export const renderRegionSummary = (r: RegionInfo): unknown => ({
  region_id: regionUuid(r.id),
  region_name_id: r.id,
  provider: r.provider.toLowerCase().replace(/[^a-z0-9-]/g, '-'),
  universal_region: r.id === 'local' ? 'local' : 'unknown',
  provider_display_name: r.provider,
  region_display_name: r.displayName,
});

/** One element of getAnalyticsMatchmakerLive's `lobbies` (wire.md §2.3). */
export const renderLobbySummary = (s: LobbySummary): unknown => ({
  lobby_id: s.lobbyId,
  lobby_group_id: s.lobbyGroupId,
  lobby_group_name_id: s.lobbyGroupNameId,
  region_id: regionUuid(s.regionId),
  create_ts: ts(s.createTs),
  is_ready: s.isReady,
  is_idle: s.isIdle,
  is_closed: s.isClosed,
  is_outdated: s.isOutdated,
  max_players_normal: s.maxPlayersNormal,
  max_players_direct: s.maxPlayersDirect,
  max_players_party: s.maxPlayersParty,
  total_player_count: s.totalPlayerCount,
  registered_player_count: s.registeredPlayerCount,
});

/** A developer group summary (Tavern has no groups: every game's group is rendered from its id). */
export const renderGroupSummary = (groupId: string): unknown => ({
  group_id: groupId,
  display_name: 'Developers',
  external: { profile: '' },
  is_developer: true,
  bio: '',
  is_current_identity_member: true,
  publicity: 'closed',
  member_count: 0,
  owner_identity_id: '00000000-0000-0000-0000-000000000000',
});

/** A game summary (GET /cloud/games). */
export const renderGameSummary = (g: GameRecord, settings: Settings, playerCount: number): unknown => ({
  game_id: g.id,
  name_id: g.nameId,
  display_name: g.displayName,
  url: settings.cdnDomain === undefined ? settings.publicOrigin : `https://${g.nameId}.${settings.cdnDomain}`,
  developer: { group_id: g.developerGroupId, display_name: 'Developers', external: { profile: '' }, is_developer: true },
  total_player_count: playerCount,
});
