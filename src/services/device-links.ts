/**
 * Device links (wire.md §6.4, the CLI's `rivet login`): the CLI prepares a link and polls it; the
 * developer completes it for a game (Rivet's hub did this; with Tavern it is one call with a token
 * for that game), and the CLI's next poll gets a cloud token. Links live in the catalog's set-once
 * settings, so every instance sees them.
 */
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { SettingStore } from '../io/catalog.js';
import type { Random } from '../io/index.js';

const pendingKey = (token: string): string => `device-link:${token}`;
const doneKey = (token: string): string => `device-link-token:${token}`;
/** The game a link was completed for: claimed (set once) before its token is issued. */
const gameKey = (token: string): string => `device-link-game:${token}`;

/** Mints cloud tokens (the server's token issuer). */
export interface CloudTokens {
  issue(grant: { readonly kind: 'cloud'; readonly gameId: string }): Promise<string>;
}

type Reads = { readonly catalog: SettingStore };

const unknownLink = (): MatchError => matchError('API_BAD_QUERY', { name: 'device_link_token', reason: 'unknown device link' });

/**
 * A new pending link: its id and the token the CLI polls it with (`device_link.<secret>`; the
 * secret comes from the caller's secure random source).
 *
 * @effects catalog (putSettingIfAbsent), random
 * @example
 * const { id, token } = await prepareDeviceLink({ catalog, random }, base64url(randomBytes(32)));
 */
export async function prepareDeviceLink(
  deps: { readonly catalog: SettingStore; readonly random: Random },
  secret: string,
): Promise<{ readonly id: string; readonly token: string }> {
  const id = deps.random.uuid();
  const token = `device_link.${secret}`;
  await deps.catalog.putSettingIfAbsent(pendingKey(token), id);
  return { id, token };
}

/**
 * The cloud token of a completed link (undefined while it is pending).
 *
 * @effects catalog (getSetting)
 * @example
 * const cloudToken = await linkedCloudToken({ catalog }, token); // polled by a waiting CLI
 */
export function linkedCloudToken(deps: Reads, token: string): Promise<string | undefined> {
  return deps.catalog.getSetting(doneKey(token));
}

/**
 * A link's state: its cloud token once completed, undefined while pending; `API_BAD_QUERY` for a
 * token no link has.
 *
 * @effects catalog (getSetting)
 * @example
 * const r = await deviceLinkStatus({ catalog }, token); if (r.ok && r.value !== undefined) login(r.value)
 */
export async function deviceLinkStatus(deps: Reads, token: string): Promise<Result<string | undefined, MatchError>> {
  if ((await deps.catalog.getSetting(pendingKey(token))) === undefined) return err(unknownLink());
  return ok(await linkedCloudToken(deps, token));
}

/**
 * Completes a link for the game with a new cloud token. The link is claimed for the game first
 * (set once, so of two completions racing for two games exactly one wins): completing it again
 * for the same game changes nothing (a retry), for another game is `DEVICE_LINK_ALREADY_COMPLETED`
 * and the link keeps its first token. `API_BAD_QUERY` for a token no link has.
 *
 * @effects catalog (getSetting, putSettingIfAbsent), tokens (issue)
 * @example
 * await completeDeviceLink({ catalog, tokens }, token, gameId);
 */
export async function completeDeviceLink(
  deps: { readonly catalog: SettingStore; readonly tokens: CloudTokens },
  token: string,
  gameId: string,
): Promise<Result<undefined, MatchError>> {
  const status = await deviceLinkStatus(deps, token);
  if (!status.ok) return status;
  if ((await deps.catalog.putSettingIfAbsent(gameKey(token), gameId)) !== gameId) return err(matchError('DEVICE_LINK_ALREADY_COMPLETED'));
  if (status.value === undefined) await deps.catalog.putSettingIfAbsent(doneKey(token), await deps.tokens.issue({ kind: 'cloud', gameId }));
  return ok(undefined);
}
