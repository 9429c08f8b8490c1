/**
 * The game-version configuration, as parsed from the wire (the superset of the interface spec and the
 * `@rivet-gg/api@23.2.0-rc1` client), and as resolved into per-game-mode settings with every default
 * applied. Internal names are camelCase; snake_case lives only at the HTTP edge.
 */

export type PortProtocol = 'http' | 'https' | 'tcp' | 'tcp_tls' | 'udp';
/** `game_guard` is Rivet's wire name for the game proxy (the spec's `game-proxy`); both parse to it. */
export type ProxyKind = 'game_guard' | 'none';
export type NetworkMode = 'bridge' | 'host';

export interface PortRange {
  readonly min: number;
  readonly max: number;
}

export interface PortConfig {
  readonly port?: number;
  readonly portRange?: PortRange;
  readonly protocol?: PortProtocol;
  readonly proxy?: ProxyKind;
  /** CLI-only. */
  readonly devPort?: number;
  /** CLI-only. */
  readonly devPortRange?: PortRange;
  /** CLI-only. */
  readonly devProtocol?: PortProtocol;
}

/** The container runtime block: `container` in the spec, `docker` in the 23.2 client. */
export interface ContainerConfig {
  /** CLI-only. */
  readonly image?: string;
  /** CLI-only. */
  readonly dockerfile?: string;
  /** CLI-only. */
  readonly buildArgs?: Readonly<Record<string, string>>;
  /** The build id (a UUID) whose image the lobby runs. */
  readonly imageId?: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly networkMode?: NetworkMode;
  /** Keyed by port label, in configuration order. */
  readonly ports?: Readonly<Record<string, PortConfig>>;
}

export interface VerificationConfig {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export type IdentityRequirement = 'none' | 'guest' | 'registered';

export interface ActionConfig {
  readonly enabled: boolean;
  readonly verification?: VerificationConfig;
  /** 23.2 only; parsed and kept, Tavern has no game-user identities so only `none` admits. */
  readonly identityRequirement?: IdentityRequirement;
}

export interface CreateActionConfig extends ActionConfig {
  readonly enablePublic?: boolean;
  readonly enablePrivate?: boolean;
  readonly maxLobbiesPerIdentity?: number;
}

export interface ActionsConfig {
  readonly find?: ActionConfig;
  readonly join?: ActionConfig;
  readonly create?: CreateActionConfig;
}

export interface IdleLobbies {
  readonly min: number;
  readonly max: number;
}

export interface RegionConfig {
  readonly tier?: string;
  readonly idleLobbies?: IdleLobbies;
}

/**
 * Settings that a game mode inherits from the matchmaker level when it does not set them itself.
 * The three timeouts are Tavern extensions (milliseconds).
 */
export interface InheritedModeSettings {
  /** Keyed by region name id, in priority order. */
  readonly regions?: Readonly<Record<string, RegionConfig>>;
  readonly maxPlayers?: number;
  readonly maxPlayersDirect?: number;
  readonly maxPlayersParty?: number;
  readonly container?: ContainerConfig;
  readonly tier?: string;
  readonly idleLobbies?: IdleLobbies;
  /** Tavern extension: matchmaker-level action defaults; a mode's action replaces the whole entry. */
  readonly actions?: ActionsConfig;
  /** Tavern extension: a lobby that has not called ready after this long is stopped (default 5 min). */
  readonly lobbyReadyTimeout?: number;
  /** Tavern extension: a reserved player who has not connected after this long is removed (default 2 min). */
  readonly playerConnectTimeout?: number;
  /** Tavern extension: players are removed this long after their reservation; absent means never. */
  readonly playerMaxLifetime?: number;
}

export interface GameModeConfig extends InheritedModeSettings {
  readonly listable?: boolean;
  readonly taggable?: boolean;
  readonly allowDynamicMaxPlayers?: boolean;
}

export interface HcaptchaConfig {
  /** 23.2 only (Rivet's own account); kept for compatibility. */
  readonly level?: 'easy' | 'moderate' | 'difficult' | 'always_on';
  readonly siteKey?: string;
  readonly secretKey?: string;
}

export interface TurnstileConfig {
  readonly siteKey: string;
  readonly secretKey: string;
}

/** `captcha_a` = hCaptcha, `captcha_b` = Turnstile; both wire spellings parse here. */
export interface CaptchaConfig {
  readonly requestsBeforeReverify: number;
  /** Milliseconds. */
  readonly verificationTtl: number;
  readonly hcaptcha?: HcaptchaConfig;
  readonly turnstile?: TurnstileConfig;
}

export interface MatchmakerConfig extends InheritedModeSettings {
  /** Keyed by game mode name id, in configuration order. Deprecated `lobby_groups` convert into this. */
  readonly gameModes?: Readonly<Record<string, GameModeConfig>>;
  readonly captcha?: CaptchaConfig;
  /** CLI-only. */
  readonly devHostname?: string;
}

export interface CdnHeader {
  readonly name: string;
  readonly value: string;
}

export interface CdnMiddleware {
  readonly kind: { readonly customHeaders?: { readonly headers: readonly CdnHeader[] } };
}

export interface CdnRoute {
  readonly glob: string;
  readonly priority: number;
  readonly middlewares: readonly CdnMiddleware[];
}

export interface CdnConfig {
  /** CLI-only. */
  readonly buildCommand?: string;
  /** CLI-only. */
  readonly buildEnv?: Readonly<Record<string, string>>;
  /** CLI-only. */
  readonly buildOutput?: string;
  readonly siteId?: string;
  readonly routes?: readonly CdnRoute[];
}

/** `engine_a/b/c` are the spec's neutral names of unity/unreal/godot; both spellings parse here. */
export interface EngineConfig {
  readonly custom?: Readonly<Record<string, never>>;
  readonly html5?: Readonly<Record<string, never>>;
  readonly unity?: Readonly<Record<string, never>>;
  readonly unreal?: { readonly gameModule: string };
  readonly godot?: { readonly gameModule?: string };
}

export interface IdentityConfig {
  readonly displayNames?: readonly string[];
  readonly avatars?: readonly string[];
  readonly customDisplayNames?: readonly { readonly displayName: string }[];
  readonly customAvatars?: readonly { readonly uploadId: string }[];
}

export interface VersionConfig {
  readonly cdn?: CdnConfig;
  readonly engine?: EngineConfig;
  readonly kv?: Readonly<Record<string, never>>;
  readonly identity?: IdentityConfig;
  readonly matchmaker?: MatchmakerConfig;
  readonly scripts?: Readonly<Record<string, string>>;
}

// ---------------------------------------------------------------------------------------------
// Resolved: every default applied, one record per game mode.

export interface ResolvedPort {
  readonly label: string;
  readonly protocol: PortProtocol;
  readonly proxy: ProxyKind;
  /** Exactly one of `port` and `portRange` is set (validation guarantees it). */
  readonly port?: number;
  readonly portRange?: PortRange;
}

export interface ResolvedContainer {
  readonly imageId?: string;
  readonly args: readonly string[];
  /** Matchmaker env merged with the mode's (mode keys win). */
  readonly env: Readonly<Record<string, string>>;
  readonly networkMode: NetworkMode;
  readonly ports: readonly ResolvedPort[];
}

export interface ResolvedAction {
  readonly enabled: boolean;
  readonly verification?: VerificationConfig;
  readonly identityRequirement: IdentityRequirement;
}

export interface ResolvedCreateAction extends ResolvedAction {
  readonly enablePublic: boolean;
  readonly enablePrivate: boolean;
  readonly maxLobbiesPerIdentity?: number;
}

export interface ResolvedRegion {
  readonly name: string;
  readonly tier: string;
  readonly idleLobbies: IdleLobbies;
}

export interface MaxPlayers {
  readonly normal: number;
  readonly direct: number;
  readonly party: number;
}

export interface ModeTimeouts {
  readonly lobbyReadyMs: number;
  readonly playerConnectMs: number;
  /** Absent: players are never removed for age. */
  readonly playerMaxLifetimeMs?: number;
}

export interface GameMode {
  readonly name: string;
  /** In configuration (priority) order. */
  readonly regions: readonly ResolvedRegion[];
  readonly maxPlayers: MaxPlayers;
  readonly container?: ResolvedContainer;
  readonly listable: boolean;
  readonly taggable: boolean;
  readonly allowDynamicMaxPlayers: boolean;
  readonly actions: {
    readonly find: ResolvedAction;
    readonly join: ResolvedAction;
    readonly create: ResolvedCreateAction;
  };
  readonly timeouts: ModeTimeouts;
}

export interface ResolvedVersion {
  /** In configuration order. */
  readonly gameModes: readonly GameMode[];
  readonly captcha?: CaptchaConfig;
}

/**
 * One validation problem. The path follows Rivet's style: lowercase kebab segments, named items
 * wrapped in asterisks, indexes as decimal strings, and the problem itself as the last segment,
 * e.g. `['config', 'matchmaker', 'game-modes', '*default*', 'max-players', 'out-of-range']`.
 */
export interface Problem {
  readonly path: readonly string[];
  /** Why, in words, and what to do about it (a setting to change, the key that was meant); optional. */
  readonly message?: string;
}

/** What validation needs to know about the world; everything optional is checked only when given. */
export interface ValidationContext {
  /** Region name ids the operator runs. */
  readonly regions: ReadonlySet<string>;
  /** Tier name ids; defaults to the Rivet tier catalogue. */
  readonly tiers?: ReadonlySet<string>;
  /** Display names of the game's existing versions (display names are unique per game). */
  readonly versionDisplayNames?: ReadonlySet<string>;
  readonly build?: (buildId: string) => 'complete' | 'incomplete' | 'missing';
  readonly site?: (siteId: string) => 'complete' | 'incomplete' | 'missing';
  /**
   * Verification hosts the operator allows although they are not public (local development and
   * tests): exact host names or IP literals, or IP CIDRs (`127.0.0.1`, `10.0.0.0/8`, `::1`,
   * `verify.internal`). The egress guard gets the same list.
   */
  readonly verificationHostsAllowed?: readonly string[];
  /**
   * The protocols the operator's game proxy serves (`game_guard` ports); a port asking for another is
   * `ports.*label*.protocol-not-served` (HTTPS without a certificate, for example). Absent: every protocol.
   */
  readonly proxyProtocols?: ReadonlySet<PortProtocol>;
  /**
   * Whether the operator allows host networking (`TAVERN_DOCKER_ALLOW_HOST_NETWORK`); `false`: a
   * container block asking for it is `network-mode.host-not-allowed`, with the reason and the setting
   * in its message. Absent: no check.
   */
  readonly hostNetworkAllowed?: boolean;
  /**
   * Why the proxy does not serve a protocol and what would make it, in words (e.g. `https needs the
   * game proxy with a certificate: install HAProxy…`): carried by that protocol's `protocol-not-served`.
   */
  readonly protocolRefusals?: Readonly<Partial<Record<PortProtocol, string>>>;
}
