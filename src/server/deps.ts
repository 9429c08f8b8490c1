/**
 * What the HTTP edge is built from ({@link AppDeps}, resolved as {@link Services}) and its settings
 * ({@link AppConfig}, resolved as {@link Settings}).
 */
import type { PortProtocol } from '../core/config/types.js';
import type { RegionInfo } from '../core/world.js';
import type { CatalogStore } from '../io/catalog.js';
import type { DemandStore } from '../io/demand.js';
import type { Clock, Random, Timers } from '../io/index.js';
import type { Logger } from '../io/log.js';
import type { ClusterNodes } from '../io/runtime.js';
import type { AnalyticsHistory } from '../services/analytics-history.js';
import type { Simulator } from '../io/simulator.js';
import type { DemandRecorder } from '../services/demand-recorder.js';
import type { LogBook } from '../services/lobby-logs.js';
import type { Matchmaker } from '../services/matchmaker.js';
import type { StoppedLobbies } from '../services/stopped-lobbies.js';
import type { Uploads } from '../services/uploads.js';
import type { TokenIssuer } from '../services/tokens.js';
import type { RateLimitTable } from './rate-limit.js';

/** The uploads service (`src/services/uploads.ts`), as the edge uses it. */
export type UploadsPort = Pick<Uploads, 'prepare' | 'put' | 'complete'>;

/** Recorded demand: where it is read from (the export), and the recorder (absent: nothing is recorded). */
export interface DemandPort {
  readonly store: DemandStore;
  readonly recorder?: Pick<DemandRecorder, 'request'>;
}

export interface AppConfig {
  /** The origin clients and lobbies reach the API at (`RIVET_API_ENDPOINT`), e.g. `http://127.0.0.1:8080`. */
  readonly publicOrigin: string;
  /** `TAVERN_ADMIN_TOKEN`; generated once and kept in the catalog when absent. */
  readonly adminToken?: string;
  /** Lobby hostnames are `<lobby>-<port label>.lobby.<region>.<jobDomain>`; default: the public origin's host name. */
  readonly jobDomain?: string;
  /** The game proxy's ports: find returns these for http/https ports (default 80/443). */
  readonly proxyPorts?: { readonly http: number; readonly https?: number };
  /** The protocols the game proxy serves; a version asking for another is refused. Absent: no check. */
  readonly proxyProtocols?: ReadonlySet<PortProtocol>;
  /** Why each protocol outside `proxyProtocols` is refused, in words: the refusal carries them. */
  readonly protocolRefusals?: Readonly<Partial<Record<PortProtocol, string>>>;
  /** Host of the addresses of host-network ports (`proxy: none`), per region; default: the public origin's host name. */
  readonly regionHosts?: Readonly<Record<string, string>>;
  /** Where a lobby's TCP and UDP ports answer when the runtime knows (the Swarm node it runs on). */
  readonly lobbyAddress?: (lobbyId: string) => string | undefined;
  /** CDN sites answer at `<game>.<cdnDomain>` (prod) and `<game>--<ns>.<cdnDomain>`; used for origin auth and CNAME records. */
  readonly cdnDomain?: string;
  /** The port the CDN's HTTP listener took: a namespace's rendering then carries its site's URL. */
  readonly cdnPort?: number;
  /** The CDN's certificates (`TAVERN_CDN_TLS_DIR`): a custom domain without one says it is served over HTTP only. */
  readonly cdnTls?: { covers(domain: string): boolean };
  /** The port the CDN's HTTPS listener took: a site a certificate covers is given as `https://…` on it. */
  readonly cdnTlsPort?: number;
  /** Browser origins allowed on `/cloud` (CORS); others get `API_CORS_ORIGIN_NOT_ALLOWED`. Default: none. */
  readonly hubOrigins?: RegExp;
  /** Trust `cf-connecting-ip` / `x-forwarded-for` for the client address (behind a proxy). Default true. */
  readonly trustProxyHeaders?: boolean;
  /** How long find/join/create wait for a starting lobby before `MATCHMAKER_LOBBY_NOT_STARTED` (default 50 s, under the client's 60 s). */
  readonly seatWaitMs?: number;
  /** How often a waiting find re-reads the store for a lobby made ready through another instance (default 1 s). */
  readonly seatPollMs?: number;
  /** How long a lobby-logs long poll holds (default 40 s). */
  readonly logWatchMs?: number;
  /** How often a lobby-logs long poll re-reads the catalog for other instances' lines (default 1 s). */
  readonly logPollMs?: number;
  /** JSON body cap (default 1 MiB). */
  readonly maxBodyBytes?: number;
  /**
   * How many bytes (UTF-8 JSON) of lobby states `lobbies/list?include_state=true` carries in all
   * (default 1 MiB, one state's cap); a lobby whose state does not fit is listed with
   * `state_truncated: true` instead.
   */
  readonly listStateBytes?: number;
  /** Verification hosts allowed although not public (`TAVERN_EGRESS_ALLOW`): version validation accepts them too. */
  readonly egressAllow?: readonly string[];
  /**
   * Whether a version may ask for host networking (`TAVERN_DOCKER_ALLOW_HOST_NETWORK`); false: it
   * is refused at publish (`network-mode.host-not-allowed`). Absent: no check (in-process apps and
   * tests; the server passes the setting).
   */
  readonly hostNetworkAllowed?: boolean;
  /** `TAVERN_METRICS_TOKEN`: a bearer token that reads `/metrics` (a scraper's), besides the admin token. */
  readonly metricsToken?: string;
  /** `TAVERN_TIER_PRICES`: the price of a lobby-hour per tier (the deploy preview's cost); absent: no cost. */
  readonly tierPrices?: Readonly<Record<string, number>>;
  /**
   * Request rate limits per client address and endpoint (`TAVERN_RATE_LIMITS`, see
   * `rate-limit.ts`); absent: none (in-process apps and tests; the server passes the defaults).
   */
  readonly rateLimits?: RateLimitTable;
}

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
  /** The price of a lobby-hour per tier (absent: previews show no cost). */
  readonly tierPrices?: Readonly<Record<string, number>>;
}

/**
 * The edge's services, each part resolved: what a handler sees as `ctx.services`. {@link AppDeps}
 * is the same list as `createApp` takes it.
 */
export interface Services {
  readonly catalog: CatalogStore;
  readonly matchmaker: Matchmaker;
  readonly clock: Clock;
  readonly random: Random;
  readonly timers: Timers;
  /** The operator's regions, in order (the matchmaker world's). */
  readonly regions: readonly RegionInfo[];
  /** Builds and CDN sites; absent: those endpoints answer `UPLOAD_INVALID`. */
  readonly uploads?: UploadsPort;
  /** Shared with the lobby-env runtime hook. */
  readonly tokens: TokenIssuer;
  /** Shared with the runtime and the matchmaker's `logs` (without them, only polling wakes long polls). */
  readonly logBook: LogBook;
  readonly logger: Logger;
  readonly settings: Settings;
  /** What `/health` reports beside `status: ok` (the runtime and whether it is reachable). */
  readonly health: () => Readonly<Record<string, unknown>>;
  /** `GET /metrics` (Prometheus text); absent: 404. */
  readonly metrics?: () => Promise<string>;
  /** The runtime's nodes (Swarm), listed and drained by the operator; absent: those endpoints answer 501 `NODES_NOT_SUPPORTED`. */
  readonly nodes?: ClusterNodes;
  /** Recorded demand; absent: nothing is recorded and the export answers 404. */
  readonly demand?: DemandPort;
  /** Lobbies that stopped recently (the matchmaker's stop recorder); absent: their listing answers 404. */
  readonly stoppedLobbies?: StoppedLobbies;
  /** The dashboard's per-minute history (counts each answered request); absent: its endpoint answers 404. */
  readonly history?: Pick<AnalyticsHistory, 'request' | 'read'>;
  /** The dashboard's simulator (`sim/dashboard.ts`, handed in by the composition root); absent: `POST /dashboard/sim` answers 404. */
  readonly simulator?: Simulator;
}

/** The parts `createApp` makes when they are not given (a token issuer, a log book, a silent logger, no health details). */
type Defaulted = 'tokens' | 'logBook' | 'logger' | 'health';

/**
 * What `createApp` takes: the {@link Services}, the {@link Defaulted} parts optional, and the
 * config the settings are resolved from.
 *
 * @example
 * createApp({ catalog, matchmaker, clock, random, timers, regions, config: { publicOrigin } });
 */
export type AppDeps = Omit<Services, Defaulted | 'settings'> & Partial<Pick<Services, Defaulted>> & { readonly config: AppConfig };
