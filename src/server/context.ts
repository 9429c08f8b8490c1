/**
 * What a route handler gets: the request, its path parameters, the resolved services, and lazy,
 * memoised readers for the JSON body and the caller's token.
 */
import type { PortProtocol } from '../core/config/types.js';
import type { RegionInfo } from '../core/world.js';
import type { CatalogStore } from '../io/catalog.js';
import type { Clock, Random, Timers } from '../io/index.js';
import type { Logger } from '../io/log.js';
import type { LogBook } from '../services/lobby-logs.js';
import type { Matchmaker } from '../services/matchmaker.js';
import type { StoppedLobbies } from '../services/stopped-lobbies.js';
import type { Agent } from './auth.js';
import type { DemandPort, UploadsPort } from './deps.js';
import type { Incoming } from './incoming.js';
import type { TokenIssuer } from './tokens.js';

/** The `AppConfig` with every default applied. */
export interface Settings {
  readonly publicOrigin: string;
  readonly jobDomain: string;
  readonly regionHosts: Readonly<Record<string, string>>;
  /** Where a lobby's TCP and UDP ports answer when the runtime knows (the Swarm node it runs on); else the region's host. */
  readonly lobbyAddress?: (lobbyId: string) => string | undefined;
  /** The game proxy's ports for http/https (absent: the core's 80/443). */
  readonly proxyPorts?: { readonly http: number; readonly https?: number };
  /** The protocols the game proxy serves (absent: no check at publish). */
  readonly proxyProtocols?: ReadonlySet<PortProtocol>;
  /** Why each protocol outside `proxyProtocols` is refused, in words (what to install or set). */
  readonly protocolRefusals?: Readonly<Partial<Record<PortProtocol, string>>>;
  readonly cdnDomain?: string;
  readonly cdnPort?: number;
  /** Whether the CDN has a TLS certificate for a domain now; absent: no TLS (every domain over HTTP). */
  readonly cdnTls?: { covers(domain: string): boolean };
  /** The CDN's HTTPS port (absent: no HTTPS listener). */
  readonly cdnTlsPort?: number;
  readonly hubOrigins?: RegExp;
  readonly trustProxyHeaders: boolean;
  readonly seatWaitMs: number;
  readonly seatPollMs: number;
  readonly logWatchMs: number;
  readonly logPollMs: number;
  readonly maxBodyBytes: number;
  /** How many bytes of lobby states `lobbies/list?include_state=true` carries at most. */
  readonly listStateBytes: number;
  /** Non-public verification hosts the operator allows (version validation and the egress guard). */
  readonly egressAllow: readonly string[];
  /** Whether a version may ask for host networking (absent: no check at publish). */
  readonly hostNetworkAllowed?: boolean;
  /** The token that reads `/metrics` besides the admin token. */
  readonly metricsToken?: string;
}

export interface Services {
  readonly catalog: CatalogStore;
  readonly matchmaker: Matchmaker;
  readonly clock: Clock;
  readonly random: Random;
  readonly timers: Timers;
  readonly regions: readonly RegionInfo[];
  readonly uploads?: UploadsPort;
  readonly tokens: TokenIssuer;
  readonly logBook: LogBook;
  readonly logger: Logger;
  readonly settings: Settings;
  /** What `/health` adds beside `status` (the runtime and whether it is reachable). */
  readonly health: () => Readonly<Record<string, unknown>>;
  /** `GET /metrics` (Prometheus text), when the server has metrics. */
  readonly metrics?: () => Promise<string>;
  /** Recorded demand, when the server records it. */
  readonly demand?: DemandPort;
  /** Lobbies that stopped recently, when the server keeps them. */
  readonly stoppedLobbies?: StoppedLobbies;
}

export interface Ctx {
  readonly services: Services;
  readonly request: Incoming;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  readonly rayId: string;
  /** The TCP peer's address, when the bridge knows it. */
  readonly remoteAddress: string | undefined;
  /** The JSON body (`{}` when empty); read once. */
  body(): Promise<unknown>;
  /** Whether the body was empty (only `PUT lobbies/state` tells `{}` from nothing). */
  bodyWasEmpty(): Promise<boolean>;
  /** Aborts when the client goes away (long polls and seat waits stop). */
  readonly signal: AbortSignal;
  /** The verified caller (undefined without a token; a bad token throws); checked once per request. */
  agent(): Promise<Agent | undefined>;
}

/** A route handler: returns a JSON-able value (answered 200). */
export type Handler = (ctx: Ctx) => Promise<unknown>;

/** The path parameter (the router guarantees it). */
export const param = (ctx: Ctx, name: string): string => {
  const v = ctx.params[name];
  if (v === undefined) throw new Error(`route has no parameter ${name}`);
  return v;
};

/** Epoch ms → RFC 3339 with milliseconds and `Z` (wire.md §1.4). */
export const ts = (ms: number): string => new Date(ms).toISOString();
