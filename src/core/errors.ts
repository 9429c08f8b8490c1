/**
 * The one closed catalog of error codes Tavern answers with (the matchmaker's, the HTTP edge's, the cloud's). Each entry names its HTTP status and a
 * message template (`{field}` placeholders). Codes and statuses follow the Rivet 23.2 wire
 * (`@rivet-gg/api`), plus the Tavern codes marked as such. The README's error table is tested
 * against this object.
 */
export const ERRORS = {
  VALIDATION_ERROR: { status: 400, message: 'did not pass validation: {error}' },
  MATCHMAKER_NO_GAME_MODE_PROVIDED: { status: 400, message: 'No game mode was provided.' },
  MATCHMAKER_GAME_MODE_NOT_FOUND: { status: 400, message: 'Game mode not found: {game_mode}.' },
  MATCHMAKER_REGION_NOT_FOUND: { status: 400, message: 'Region not found: {region}.' },
  MATCHMAKER_REGION_NOT_ENABLED_FOR_GAME_MODE: { status: 400, message: 'Region {region} is not enabled for game mode {game_mode}.' },
  MATCHMAKER_AUTO_CREATE_FAILED: { status: 400, message: 'No requested game mode is enabled in the chosen regions.' },
  MATCHMAKER_NO_AVAILABLE_LOBBIES: { status: 400, message: 'No lobby has a free seat and auto-create is prevented.' },
  MATCHMAKER_LOBBY_NOT_FOUND: { status: 400, message: 'Lobby not found.' },
  MATCHMAKER_LOBBY_STOPPED: { status: 400, message: 'The lobby {lobby_id} has stopped or is stopping ({reason}).' },
  MATCHMAKER_LOBBY_FULL: { status: 400, message: 'The lobby is full.' },
  MATCHMAKER_TOO_MANY_LOBBIES: { status: 400, message: 'The namespace reached its lobby count limit ({max}).' },
  MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE: { status: 400, message: 'Too many players from this client ({max}).' },
  MATCHMAKER_FIND_DISABLED: { status: 400, message: 'Find is disabled for game mode {game_mode}.' },
  MATCHMAKER_JOIN_DISABLED: { status: 400, message: 'Join is disabled for game mode {game_mode}.' },
  MATCHMAKER_IDENTITY_REQUIRED: { status: 400, message: 'Game mode {game_mode} requires a game-user identity, which Tavern does not issue.' },
  MATCHMAKER_CUSTOM_LOBBIES_DISABLED: { status: 400, message: 'Creating lobbies is disabled for game mode {game_mode}.' },
  MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID: { status: 400, message: 'Invalid custom lobby configuration: {reason}.' },
  MATCHMAKER_TAGS_DISABLED: { status: 400, message: 'Tags are disabled for game mode {game_mode}.' },
  MATCHMAKER_TOO_MANY_TAGS: { status: 400, message: 'Too many tags (at most {max}).' },
  MATCHMAKER_TAG_NAME_TOO_LONG: { status: 400, message: 'Tag name too long (at most {max} characters).' },
  MATCHMAKER_TAG_TOO_LONG: { status: 400, message: 'Tag value too long (at most {max} characters).' },
  MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED: { status: 400, message: 'Dynamic max players is disabled for game mode {game_mode}.' },
  MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID: { status: 400, message: 'Dynamic max players must be between 1 and {max}.' },
  MATCHMAKER_VERIFICATION_FAILED: { status: 400, message: 'The game rejected the player (verification status {status}).' },
  MATCHMAKER_VERIFICATION_REQUEST_FAILED: { status: 400, message: 'The verification request failed: {reason}.' },
  MATCHMAKER_PLAYER_ALREADY_CONNECTED: { status: 400, message: 'The player is already connected.' },
  MATCHMAKER_PLAYER_REMOVED: { status: 400, message: 'The player was removed from the lobby.' },
  MATCHMAKER_PLAYER_REGISTRATION_EXPIRED: { status: 400, message: 'The player did not connect within the connect window.' },
  MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY: { status: 400, message: 'The player belongs to a different lobby.' },
  CAPTCHA_CAPTCHA_REQUIRED: { status: 403, message: 'A captcha is required.' },
  CAPTCHA_CAPTCHA_FAILED: { status: 400, message: 'The captcha was rejected: {reason}.' },
  PORT_RANGE_EXHAUSTED: { status: 503, message: 'No free {pool} port in {min}..{max} (Tavern).' },
  MATCHMAKER_RUNTIME_UNAVAILABLE: { status: 503, message: 'No lobby can start in region {region} now: no container runtime is configured or answering, or it has no ready node in that region (Tavern).' },
  MATCHMAKER_LOBBY_START_BACKOFF: { status: 503, message: 'Lobbies of game mode {game_mode} failed to start {failures} times in a row (the last: {lobby_id}); the next start is tried in {seconds} s (Tavern).' },
  API_UNAUTHORIZED: { status: 401, message: 'Failed to authenticate: {reason}.' },
  API_FORBIDDEN: { status: 403, message: 'Forbidden: {reason}.' },
  CLAIMS_ENTITLEMENT_EXPIRED: { status: 401, message: 'The token expired.' },
  TOKEN_REVOKED: { status: 403, message: 'The token was revoked.' },
  API_NOT_FOUND: { status: 404, message: 'No route matches {method} {path}.' },
  API_METHOD_NOT_ALLOWED: { status: 400, message: 'Method {method} is not allowed on {path}.' },
  API_BAD_BODY: { status: 400, message: 'The request body is not valid JSON: {reason}.' },
  API_BAD_QUERY: { status: 400, message: 'Invalid query parameter {name}: {reason}.' },
  API_BODY_TOO_LARGE: { status: 413, message: 'The request body exceeds {max} bytes (Tavern).' },
  API_MISSING_HEADER: { status: 400, message: 'Missing header {header}.' },
  API_RATE_LIMIT: { status: 429, message: 'Too many requests ({key}): try again in {seconds} s.' },
  API_INVALID_IP: { status: 400, message: 'Invalid client address {ip}.' },
  GAME_NOT_FOUND: { status: 404, message: 'Game not found (Tavern; Rivet answered 500).' },
  NAMESPACE_NOT_FOUND: { status: 404, message: 'Namespace not found (Tavern; Rivet answered 500).' },
  VERSION_NOT_FOUND: { status: 404, message: 'Version not found (Tavern; Rivet answered 500).' },
  LOBBY_NOT_FOUND: { status: 404, message: 'Lobby not found (Tavern; Rivet answered 500).' },
  CLOUD_NAME_ID_TAKEN: { status: 400, message: 'The name id {name_id} is already taken (Tavern).' },
  CLOUD_INVALID_CONFIG: { status: 400, message: 'Invalid development configuration: {error}.' },
  CLOUD_HOSTNAME_TAKEN: { status: 400, message: 'The hostname is already taken.' },
  CDN_INVALID_DOMAIN: { status: 400, message: 'Invalid domain: {reason}.' },
  CDN_TOO_MANY_DOMAINS: { status: 400, message: 'Too many domains (at most {max}).' },
  CDN_INVALID_AUTH_USER_PASSWORD: { status: 400, message: 'The password must be a bcrypt hash ($2a$, $2b$ or $2y$) of cost {min} to {max} (Tavern caps the cost: the CDN checks it on requests).' },
  CDN_TOO_MANY_AUTH_USERS: { status: 400, message: 'Too many CDN auth users (at most {max}).' },
  UPLOAD_INVALID: { status: 400, message: 'Invalid upload: {reason}.' },
  UPLOAD_TOO_LARGE: { status: 400, message: 'Upload too large, maximum size {max}.' },
  UPLOAD_NOT_FOUND: { status: 404, message: 'Upload not found (Tavern).' },
  UPLOAD_EXPIRED: { status: 403, message: 'The presigned request expired (Tavern).' },
  UPLOAD_SIGNATURE_INVALID: { status: 403, message: 'The presigned request signature is invalid (Tavern).' },
  UPLOAD_INCOMPLETE: { status: 400, message: 'The upload is incomplete: {reason} (Tavern).' },
  STORAGE_UNAVAILABLE: { status: 503, message: 'The blob storage is unavailable: {reason}; nothing was changed, try again (Tavern).' },
  MATCHMAKER_LOBBY_NOT_STARTED: { status: 400, message: 'The lobby {lobby_id} did not become ready within {seconds} s; the seat was released, try again.' },
  CLAIMS_MISSING_ENTITLEMENT: { status: 401, message: 'Missing "{entitlement}" entitlement.' },
  TOKEN_ERROR: { status: 400, message: 'Invalid player token: {reason}.' },
  API_CORS_ORIGIN_NOT_ALLOWED: { status: 400, message: 'Origin {origin} is not allowed.' },
  SERVER_SHUTTING_DOWN: { status: 503, message: 'The server is shutting down: try again (Tavern).' },
  NODE_NOT_FOUND: { status: 404, message: 'No node {node} in the cluster: `tavern nodes list` names every node (Tavern).' },
  NODES_NOT_SUPPORTED: { status: 501, message: 'This server runs lobbies on one engine: nodes exist only with TAVERN_RUNTIME=swarm (Tavern).' },
  CLUSTER_UNAVAILABLE: { status: 503, message: "The cluster's manager did not answer: {reason}; nothing was changed, try again (Tavern)." },
  DEVICE_LINK_ALREADY_COMPLETED: { status: 409, message: 'The device link was already completed for another game (Tavern).' },
  ERROR: { status: 500, message: 'An internal error has occurred (ray_id {ray_id}).' },
} as const satisfies Record<string, { readonly status: number; readonly message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** An expected failure: a catalog code, the substitutions for its message, and where it applies. */
export interface MatchError {
  readonly code: ErrorCode;
  readonly params?: Readonly<Record<string, string | number>>;
  /** The offending request field, e.g. `['game_modes', '0']`. */
  readonly path?: readonly string[];
  /** Wire `metadata` (the captcha site key for CAPTCHA_CAPTCHA_REQUIRED). */
  readonly metadata?: unknown;
}

/**
 * @example
 * matchError('MATCHMAKER_LOBBY_FULL') // { code: 'MATCHMAKER_LOBBY_FULL' }
 */
export const matchError = (
  code: ErrorCode,
  params?: Readonly<Record<string, string | number>>,
  extra?: { readonly path?: readonly string[]; readonly metadata?: unknown },
): MatchError => ({ code, ...(params ? { params } : {}), ...extra });

/**
 * The message for an error, with its placeholders filled (unknown placeholders stay as written).
 *
 * @example
 * errorMessage(matchError('MATCHMAKER_TOO_MANY_TAGS', { max: 8 })) // 'Too many tags (at most 8).'
 */
export const errorMessage = (e: MatchError): string =>
  ERRORS[e.code].message.replace(/\{(\w+)\}/g, (whole, key: string) => {
    const value = e.params?.[key];
    return value === undefined ? whole : String(value);
  });

/**
 * The `VALIDATION_ERROR` for a list of problems: the message joins each path with `.` and the
 * paths with `, ` (Rivet's wording), a problem's own words after its path in parentheses;
 * `metadata.errors` keeps every path (and message) for clients that want them.
 *
 * @example
 * validationError([{ path: ['display-name', 'too-long'] }]).params // { error: 'display-name.too-long' }
 */
export const validationError = (problems: readonly { readonly path: readonly string[]; readonly message?: string }[]): MatchError =>
  matchError(
    'VALIDATION_ERROR',
    { error: problems.map((p) => (p.message === undefined ? p.path.join('.') : `${p.path.join('.')} (${p.message})`)).join(', ') },
    { metadata: { errors: problems.map((p) => (p.message === undefined ? { path: p.path } : { path: p.path, message: p.message })) } },
  );
