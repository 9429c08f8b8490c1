/**
 * `renderVersionConfig`: a parsed {@link VersionConfig} back to its snake_case wire JSON, in the
 * 23.2 client's spellings (`docker`, `hcaptcha`, `turnstile`, `unity|unreal|godot`, proxy
 * `game_guard`). `parseVersionConfig(renderVersionConfig(c))` deep-equals `c`.
 */
import type {
  ActionConfig,
  ActionsConfig,
  CaptchaConfig,
  CdnConfig,
  ContainerConfig,
  CreateActionConfig,
  EngineConfig,
  GameModeConfig,
  IdentityConfig,
  InheritedModeSettings,
  MatchmakerConfig,
  PortConfig,
  PortRange,
  RegionConfig,
  VerificationConfig,
  VersionConfig,
} from './types.js';

type Json = Record<string, unknown>;

/** The object's entries without `undefined` values. */
function compact(entries: Json): Json {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

function mapValues<T>(map: Readonly<Record<string, T>> | undefined, render: (value: T) => unknown): Json | undefined {
  return map && Object.fromEntries(Object.entries(map).map(([k, v]) => [k, render(v)]));
}

const range = (r: PortRange | undefined): Json | undefined => r && { min: r.min, max: r.max };
const copy = <T>(map: Readonly<Record<string, T>> | undefined): Json | undefined => mapValues(map, (v) => v);

function port(p: PortConfig): Json {
  return compact({
    port: p.port, port_range: range(p.portRange), protocol: p.protocol, proxy: p.proxy,
    dev_port: p.devPort, dev_port_range: range(p.devPortRange), dev_protocol: p.devProtocol,
  });
}

function container(c: ContainerConfig | undefined): Json | undefined {
  return c && compact({
    image: c.image, dockerfile: c.dockerfile, build_args: copy(c.buildArgs), image_id: c.imageId,
    args: c.args && [...c.args], env: copy(c.env), network_mode: c.networkMode, ports: mapValues(c.ports, port),
  });
}

const verification = (v: VerificationConfig | undefined): Json | undefined => v && { url: v.url, headers: copy(v.headers) };

function action(a: ActionConfig | undefined): Json | undefined {
  return a && compact({ enabled: a.enabled, verification: verification(a.verification), identity_requirement: a.identityRequirement });
}

function createAction(a: CreateActionConfig | undefined): Json | undefined {
  return a && compact({
    ...action(a), enable_public: a.enablePublic, enable_private: a.enablePrivate, max_lobbies_per_identity: a.maxLobbiesPerIdentity,
  });
}

function actions(a: ActionsConfig | undefined): Json | undefined {
  return a && compact({ find: action(a.find), join: action(a.join), create: createAction(a.create) });
}

const region = (r: RegionConfig): Json => compact({ tier: r.tier, idle_lobbies: range(r.idleLobbies) });

function inherited(s: InheritedModeSettings): Json {
  return {
    regions: mapValues(s.regions, region), max_players: s.maxPlayers, max_players_direct: s.maxPlayersDirect,
    max_players_party: s.maxPlayersParty, docker: container(s.container), tier: s.tier, idle_lobbies: range(s.idleLobbies),
    actions: actions(s.actions), lobby_ready_timeout: s.lobbyReadyTimeout, player_connect_timeout: s.playerConnectTimeout,
    player_max_lifetime: s.playerMaxLifetime,
  };
}

function gameMode(m: GameModeConfig): Json {
  return compact({ ...inherited(m), listable: m.listable, taggable: m.taggable, allow_dynamic_max_players: m.allowDynamicMaxPlayers });
}

function captcha(c: CaptchaConfig | undefined): Json | undefined {
  return c && compact({
    requests_before_reverify: c.requestsBeforeReverify,
    verification_ttl: c.verificationTtl,
    hcaptcha: c.hcaptcha && compact({ level: c.hcaptcha.level, site_key: c.hcaptcha.siteKey, secret_key: c.hcaptcha.secretKey }),
    turnstile: c.turnstile && { site_key: c.turnstile.siteKey, secret_key: c.turnstile.secretKey },
  });
}

function matchmaker(m: MatchmakerConfig | undefined): Json | undefined {
  return m && compact({
    ...inherited(m), game_modes: mapValues(m.gameModes, gameMode), captcha: captcha(m.captcha), dev_hostname: m.devHostname,
  });
}

function cdn(c: CdnConfig | undefined): Json | undefined {
  const routes = c?.routes?.map((r) => ({
    glob: r.glob,
    priority: r.priority,
    middlewares: r.middlewares.map((m) => ({
      kind: compact({
        custom_headers: m.kind.customHeaders && { headers: m.kind.customHeaders.headers.map((h) => ({ name: h.name, value: h.value })) },
      }),
    })),
  }));
  return c && compact({
    build_command: c.buildCommand, build_env: copy(c.buildEnv), build_output: c.buildOutput, site_id: c.siteId, routes,
  });
}

function engine(e: EngineConfig | undefined): Json | undefined {
  return e && compact({
    custom: e.custom && {}, html5: e.html5 && {}, unity: e.unity && {},
    unreal: e.unreal && { game_module: e.unreal.gameModule },
    godot: e.godot && compact({ game_module: e.godot.gameModule }),
  });
}

function identity(i: IdentityConfig | undefined): Json | undefined {
  return i && compact({
    display_names: i.displayNames && [...i.displayNames],
    avatars: i.avatars && [...i.avatars],
    custom_display_names: i.customDisplayNames?.map((d) => ({ display_name: d.displayName })),
    custom_avatars: i.customAvatars?.map((a) => ({ upload_id: a.uploadId })),
  });
}

/**
 * Renders a parsed configuration as the wire JSON that GET version returns (before the service
 * drops what Rivet does not store, such as `engine`).
 *
 * @example
 * renderVersionConfig({ matchmaker: { container: { imageId: 'b' } } });
 * // { matchmaker: { docker: { image_id: 'b' } } }
 */
export function renderVersionConfig(config: VersionConfig): unknown {
  return compact({
    cdn: cdn(config.cdn), engine: engine(config.engine), kv: config.kv && {}, identity: identity(config.identity),
    matchmaker: matchmaker(config.matchmaker), scripts: copy(config.scripts),
  });
}
