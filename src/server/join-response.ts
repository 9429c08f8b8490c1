/**
 * The JoinResponse of find/join/create (wire.md §3.1, §5.1): the lobby, its ports as clients reach
 * them through the game proxy, and the player token. Also the development-token mocks (§4.3).
 */
import { isIP } from 'node:net';
import type { PortProtocol } from '../core/config/types.js';
import type { Lobby } from '../core/lobby/lobby.js';
import type { RegionInfo } from '../core/world.js';
import type { Settings } from './deps.js';
import { isLocalName } from './local-tls.js';
import { JsonText } from './errors.js';
import type { DevTokenPort } from '../services/tokens.js';

export interface JoinPort {
  readonly host?: string;
  readonly hostname: string;
  readonly port?: number;
  readonly port_range?: { readonly min: number; readonly max: number };
  readonly is_tls: boolean;
}

const isTls = (protocol: string): boolean => protocol === 'https' || protocol === 'tcp_tls';

/**
 * Where clients reach a region's host-network ports and proxied TCP/UDP ports: the region's host,
 * else the job domain; under `localhost` (the default) the API's own host, since a game client's
 * resolver may not know `*.localhost` as browsers and curl do.
 */
const regionHost = (settings: Settings, region: string): string =>
  settings.regionHosts[region] ?? (isLocalName(settings.jobDomain) ? new URL(settings.publicOrigin).hostname.replace(/^\[|\]$/g, '') : settings.jobDomain);

/**
 * The game proxy hostname of a port: `<lobby>-<label>.lobby.<region>.<job domain>`. When the job
 * domain is an IP address (a local install), TCP/UDP ports are reached by that address directly;
 * on a runtime of several hosts (Swarm), by the address of the node the lobby runs on.
 */
const proxyHostname = (lobby: Lobby, label: string, protocol: PortProtocol, settings: Settings): string => {
  const host = (protocol === 'tcp' || protocol === 'udp' ? settings.lobbyAddress?.(lobby.id) : undefined) ?? regionHost(settings, lobby.region);
  if (isIP(host) !== 0 && protocol !== 'http' && protocol !== 'https') return host;
  return `${lobby.id}-${label}.lobby.${lobby.region}.${settings.jobDomain}`;
};

/** http/https ports answer on the game proxy's own ports when it runs on others than 80/443. */
const publicPortOf = (protocol: PortProtocol, port: number, settings: Settings): number =>
  protocol === 'http' ? settings.proxyPorts?.http ?? port : protocol === 'https' ? settings.proxyPorts?.https ?? port : port;

/** The lobby's ports keyed by label (a port with no route is omitted). */
export function renderPorts(lobby: Lobby, settings: Settings): Record<string, JoinPort> {
  const ports: Record<string, JoinPort> = {};
  for (const p of lobby.ports) {
    if (p.proxy === 'game_guard' && p.publicPort !== undefined) {
      const hostname = proxyHostname(lobby, p.label, p.protocol, settings);
      const port = publicPortOf(p.protocol, p.publicPort, settings);
      ports[p.label] = { host: `${hostname}:${port}`, hostname, port, is_tls: isTls(p.protocol) };
    } else if (p.range !== undefined) {
      ports[p.label] = { hostname: regionHost(settings, lobby.region), port_range: { min: p.range.min, max: p.range.max }, is_tls: false };
    }
  }
  return ports;
}

const response = (lobbyId: string, region: { region_id: string; display_name: string }, ports: Record<string, JoinPort>, token: string): unknown => {
  const player = { token };
  return { lobby: { lobby_id: lobbyId, region, ports, player }, ports, player };
};

/** A lobby's JoinResponse around its player token: `head + token + middle + token + '}}'`. */
interface Frame {
  readonly lobbyId: string;
  readonly region: string;
  readonly regions: readonly RegionInfo[];
  readonly settings: Settings;
  readonly head: string;
  readonly middle: string;
}

/**
 * Each lobby's frame, by its ports (fixed for the lobby's life, and kept by every revision of it):
 * the finds into one lobby render its ports and region once, and each answer is the frame around
 * its token, not a fresh object tree through `JSON.stringify`.
 */
const frames = new WeakMap<Lobby['ports'], Frame>();

const frameOf = (lobby: Lobby, regions: readonly RegionInfo[], settings: Settings): Frame => {
  const known = frames.get(lobby.ports);
  if (known !== undefined && known.lobbyId === lobby.id && known.region === lobby.region && known.regions === regions && known.settings === settings) return known;
  const display = regions.find((r) => r.id === lobby.region)?.displayName ?? lobby.region;
  const region = JSON.stringify({ region_id: lobby.region, display_name: display });
  const ports = JSON.stringify(renderPorts(lobby, settings));
  const frame: Frame = {
    lobbyId: lobby.id, region: lobby.region, regions, settings,
    head: `{"lobby":{"lobby_id":${JSON.stringify(lobby.id)},"region":${region},"ports":${ports},"player":{"token":`,
    middle: `}},"ports":${ports},"player":{"token":`,
  };
  frames.set(lobby.ports, frame);
  return frame;
};

/** A real seat's JoinResponse. */
export function joinResponse(lobby: Lobby, regions: readonly RegionInfo[], settings: Settings, playerToken: string): JsonText {
  const { head, middle } = frameOf(lobby, regions, settings);
  const token = JSON.stringify(playerToken);
  return new JsonText(`${head}${token}${middle}${token}}}`);
}

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';
export const DEV_REGION = { region_id: 'dev-lcl', display_name: 'Local' } as const;

/** The mock JoinResponse of a development token: the nil lobby, the token's hostname and ports. */
export function devJoinResponse(hostname: string, ports: readonly DevTokenPort[], playerToken: string): unknown {
  const out: Record<string, JoinPort> = {};
  for (const p of ports) {
    out[p.label] = p.port !== undefined
      ? { host: `${hostname}:${p.port}`, hostname, port: p.port, is_tls: isTls(p.protocol) }
      : { hostname, ...(p.portRange === undefined ? {} : { port_range: p.portRange }), is_tls: isTls(p.protocol) };
  }
  return response(NIL_UUID, DEV_REGION, out, playerToken);
}
