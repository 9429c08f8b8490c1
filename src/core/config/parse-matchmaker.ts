/**
 * Parsers of `config.matchmaker`: the settings a game mode inherits, game modes, actions and
 * captcha. Spec and 23.2 spellings are both accepted (`container`/`docker`,
 * `captcha_a`/`hcaptcha`, `captcha_b`/`turnstile`).
 */
import type {
  ActionConfig,
  ActionsConfig,
  CaptchaConfig,
  CreateActionConfig,
  GameModeConfig,
  HcaptchaConfig,
  IdentityRequirement,
  InheritedModeSettings,
  MatchmakerConfig,
  RegionConfig,
  TurnstileConfig,
  VerificationConfig,
} from './types.js';
import { bool, mapOf, object, oneOf, safeInt, str, u32, type Fields, type Parser } from './parse-reader.js';
import { container, idleLobbies } from './parse-container.js';
import { lobbyGroups } from './parse-lobby-groups.js';
import { defined, type Loose } from './path.js';

const IDENTITY_REQUIREMENTS: Readonly<Record<string, IdentityRequirement>> = Object.freeze({
  none: 'none', guest: 'guest', registered: 'registered',
});

const HCAPTCHA_LEVELS: Readonly<Record<string, NonNullable<HcaptchaConfig['level']>>> = Object.freeze({
  easy: 'easy', moderate: 'moderate', difficult: 'difficult', always_on: 'always_on',
});

const region: Parser<RegionConfig> = object((f) =>
  defined<RegionConfig>({ tier: f.opt('tier', str), idleLobbies: f.opt('idle_lobbies', idleLobbies) }),
);

const verification: Parser<VerificationConfig> = object((f) => {
  const url = f.req('url', str);
  const headers = f.req('headers', mapOf(str));
  return url === undefined || headers === undefined ? undefined : { url, headers };
});

function actionFields(f: Fields): Loose<ActionConfig> | undefined {
  const enabled = f.req('enabled', bool);
  const rest = {
    verification: f.opt('verification', verification),
    identityRequirement: f.opt('identity_requirement', oneOf(IDENTITY_REQUIREMENTS)),
  };
  return enabled === undefined ? undefined : { enabled, ...rest };
}

const action: Parser<ActionConfig> = object((f) => {
  const fields = actionFields(f);
  return fields && defined<ActionConfig>(fields);
});

const createAction: Parser<CreateActionConfig> = object((f) => {
  const fields = actionFields(f);
  const extra = {
    enablePublic: f.opt('enable_public', bool),
    enablePrivate: f.opt('enable_private', bool),
    maxLobbiesPerIdentity: f.opt('max_lobbies_per_identity', u32),
  };
  return fields && defined<CreateActionConfig>({ ...fields, ...extra });
});

/** `{find?, join?, create?}`. @example actions({ create: { enabled: true } }, ['a'], []); */
export const actions: Parser<ActionsConfig> = object((f) =>
  defined<ActionsConfig>({ find: f.opt('find', action), join: f.opt('join', action), create: f.opt('create', createAction) }),
);

function inherited(f: Fields): Loose<InheritedModeSettings> {
  return {
    regions: f.opt('regions', mapOf(region)),
    maxPlayers: f.opt('max_players', u32),
    maxPlayersDirect: f.opt('max_players_direct', u32),
    maxPlayersParty: f.opt('max_players_party', u32),
    container: f.either('container', 'docker', container),
    tier: f.opt('tier', str),
    idleLobbies: f.opt('idle_lobbies', idleLobbies),
    actions: f.opt('actions', actions),
    lobbyReadyTimeout: f.opt('lobby_ready_timeout', safeInt),
    playerConnectTimeout: f.opt('player_connect_timeout', safeInt),
    playerMaxLifetime: f.opt('player_max_lifetime', safeInt),
  };
}

/** One game mode. @example gameMode({ max_players: 8 }, ['m'], []); */
export const gameMode: Parser<GameModeConfig> = object((f) =>
  defined<GameModeConfig>({
    ...inherited(f),
    listable: f.opt('listable', bool),
    taggable: f.opt('taggable', bool),
    allowDynamicMaxPlayers: f.opt('allow_dynamic_max_players', bool),
  }),
);

/** The spec's `captcha_a`: both keys required. */
const captchaA: Parser<HcaptchaConfig> = object((f) =>
  defined<HcaptchaConfig>({
    siteKey: f.req('site_key', str),
    secretKey: f.req('secret_key', str),
    level: f.opt('level', oneOf(HCAPTCHA_LEVELS)),
  }),
);

/** 23.2's `hcaptcha`: `level` alone is enough (24.2 added the optional keys). */
const hcaptcha: Parser<HcaptchaConfig> = object((f) =>
  defined<HcaptchaConfig>({
    level: f.opt('level', oneOf(HCAPTCHA_LEVELS)),
    siteKey: f.opt('site_key', str),
    secretKey: f.opt('secret_key', str),
  }),
);

const turnstile: Parser<TurnstileConfig> = object((f) => {
  const siteKey = f.req('site_key', str);
  const secretKey = f.req('secret_key', str);
  return siteKey === undefined || secretKey === undefined ? undefined : { siteKey, secretKey };
});

/** The captcha block. @example captcha({ requests_before_reverify: 15, verification_ttl: 3600000, turnstile: {...} }, ['c'], []); */
export const captcha: Parser<CaptchaConfig> = object((f) => {
  const requestsBeforeReverify = f.req('requests_before_reverify', u32);
  const verificationTtl = f.req('verification_ttl', safeInt);
  const providers = {
    hcaptcha: f.either('captcha_a', 'hcaptcha', captchaA, hcaptcha),
    turnstile: f.either('captcha_b', 'turnstile', turnstile),
  };
  if (requestsBeforeReverify === undefined || verificationTtl === undefined) return undefined;
  return defined<CaptchaConfig>({ requestsBeforeReverify, verificationTtl, ...providers });
});

/**
 * `config.matchmaker`. A present `lobby_groups` replaces `game_modes` (both are still parsed).
 *
 * @example
 * matchmaker({ game_modes: { default: {} } }, ['config', 'matchmaker'], []);
 */
export const matchmaker: Parser<MatchmakerConfig> = object((f) => {
  const gameModes = f.opt('game_modes', mapOf(gameMode));
  const groups = f.opt('lobby_groups', lobbyGroups);
  return defined<MatchmakerConfig>({
    ...inherited(f),
    gameModes: groups ?? gameModes,
    captcha: f.opt('captcha', captcha),
    devHostname: f.opt('dev_hostname', str),
  });
});
