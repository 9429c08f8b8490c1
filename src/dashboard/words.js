// API errors in words: what went wrong and what to do next, the code after it for a search.
const WORDS = {
  CLAIMS_MISSING_ENTITLEMENT: 'this token cannot read games: sign in with a cloud or admin token',
  API_FORBIDDEN: 'this token cannot do that for this game: sign in with the game\'s cloud token or the admin token',
  API_UNAUTHORIZED: 'this server does not know this token (mistyped, or made by another server): paste a token from tavern token create --kind cloud, or the admin token',
  TOKEN_REVOKED: 'this token was revoked: create a new one (tavern token create)',
  CLAIMS_ENTITLEMENT_EXPIRED: 'this token expired: create a new one (tavern token create)',
  LOBBY_NOT_FOUND: 'this lobby is gone: it stopped more than a day ago, or belongs to another game',
  MATCHMAKER_LOBBY_NOT_FOUND: 'this lobby is gone: it stopped more than a day ago, or belongs to another game',
  API_RATE_LIMIT: 'too many requests from here: wait a minute and try again',
};

/**
 * An error answer in words: the known codes say what to do, others keep the server's message.
 *
 * @example
 * inWords(401, 'CLAIMS_MISSING_ENTITLEMENT', '...') // 'this token cannot read games: ... (CLAIMS_MISSING_ENTITLEMENT)'
 */
export function inWords(status, code, message) {
  const words = WORDS[code] ?? (status >= 500 ? `the server failed (${message ?? status}): try again; if it keeps failing, see the server's log` : message ?? `HTTP ${status}`);
  return code === undefined ? words : `${words} (${code})`;
}
