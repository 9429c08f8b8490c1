/**
 * Tavern's tokens: JWTs (RFC 7519, HS256) carrying a kind and a scope. A Rivet-style label prefix
 * (`cloud.`, `pub_<ns>.`, `dev_<ns>.`, `lobby.`, `player.`) is prepended and ignored on use.
 *
 * Every token but a player's is recorded by its `jti`, and the record is looked up on every use, so
 * a revocation takes effect on the next request on every instance. A player token is good only for
 * its seat, which the matchmaker checks on every use (`players/connected` refuses a player no
 * longer seated), so it needs no record: a find writes the seat and nothing else.
 *
 * Signing and verifying use node:crypto's HMAC, synchronously (`jwt.ts`): through jose (WebCrypto)
 * a find would run 94 % more instructions (`npm run bench -- tokens`). The tests check these
 * tokens against jose both ways.
 */
import { createHash, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { SettingStore, TokenKind, TokenRecord, TokenStore } from '../io/catalog.js';
import type { Clock, Random } from '../io/index.js';
import { signJwt, signJwtText, verifyJwt } from './jwt.js';

/** A development token's port (the `ports` map entry of `tokens/development`, with its label). */
export interface DevTokenPort {
  readonly label: string;
  readonly protocol: string;
  readonly port?: number;
  readonly portRange?: { readonly min: number; readonly max: number };
}

/** What a token grants. */
export type Grant =
  | { readonly kind: 'cloud'; readonly gameId: string }
  | { readonly kind: 'namespace-public'; readonly gameId: string; readonly namespaceId: string }
  | {
      readonly kind: 'namespace-development';
      readonly gameId: string;
      readonly namespaceId: string;
      readonly hostname: string;
      readonly ports: readonly DevTokenPort[];
    }
  | { readonly kind: 'lobby'; readonly namespaceId: string; readonly lobbyId: string }
  | {
      readonly kind: 'player';
      readonly namespaceId: string;
      readonly lobbyId: string;
      readonly playerId: string;
      /** A development player (mock find through a development token). */
      readonly dev?: boolean;
    };

/** A verified token: its grant, `jti` and issue time (epoch ms). */
export type Verified = Grant & { readonly jti: string; readonly issuedAt: number };

/** A JWT whose signature and claims checked out, with its expiry (seconds). */
interface Checked {
  readonly jwt: string;
  readonly verified: Verified;
  readonly exp: number;
}

/** The operator's admin token: access to every game. */
export type Admin = { readonly kind: 'admin' };
const ADMIN: Admin = Object.freeze({ kind: 'admin' });

/** Tokens remembered as verified before the cache starts over. */
const CHECKED_MAX = 10_000;

/** A token's Rivet-style label (undefined when it has none) and its JWT. */
interface Labelled {
  readonly label: string | undefined;
  readonly jwt: string;
}

const labelled = (token: string): Labelled => {
  const first = token.indexOf('.');
  let dots = 0;
  for (let at = first; at !== -1; at = token.indexOf('.', at + 1)) dots++;
  // Four parts: a label, then the JWT's three.
  return dots === 3 ? { label: token.slice(0, first), jwt: token.slice(first + 1) } : { label: undefined, jwt: token };
};

/** Whether a label (if any) is the one {@link labelOf} gives this kind of token (a namespace's name may differ: it is only a hint). */
const labelFits = (label: string | undefined, grant: Grant): boolean => {
  if (label === undefined) return true;
  switch (grant.kind) {
    case 'cloud':
    case 'lobby':
      return label === grant.kind;
    case 'namespace-public':
      return label.startsWith('pub_');
    case 'namespace-development':
      return label.startsWith('dev_');
    case 'player':
      return label === (grant.dev === true ? 'dev_player' : 'player');
  }
};

/** Whether a token's record says what its claims say: the same kind, game and namespace. */
const recordFits = (record: TokenRecord, grant: Grant): boolean =>
  record.kind === grant.kind &&
  record.gameId === ('gameId' in grant ? grant.gameId : undefined) &&
  record.namespaceId === ('namespaceId' in grant ? grant.namespaceId : undefined);

/** What a verified JWT is remembered by: its signature segment (hashing it beats hashing the whole JWT). */
const checkedKey = (jwt: string): string => jwt.slice(jwt.lastIndexOf('.') + 1);

const DAY_MS = 24 * 60 * 60 * 1000;
/** Lifetimes of wire.md §4.2. */
export const TOKEN_TTL_MS: Readonly<Record<TokenKind, number>> = Object.freeze({
  cloud: 365 * DAY_MS,
  'namespace-public': 365 * DAY_MS,
  'namespace-development': 365 * DAY_MS,
  lobby: 365 * DAY_MS,
  player: 90 * DAY_MS,
});

const SIGNING_KEY_SETTING = 'token-signing-key';
/** Where the generated admin token is kept (the catalog's settings). */
export const ADMIN_TOKEN_SETTING = 'admin-token';

const randomSecret = (bytes: number): string => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url');

const labelOf = (grant: Grant, nsName: string | undefined): string => {
  const ns = (): string => (nsName ?? 'ns').replace(/-/g, '_');
  switch (grant.kind) {
    case 'cloud':
      return 'cloud';
    case 'namespace-public':
      return `pub_${ns()}`;
    case 'namespace-development':
      return `dev_${ns()}`;
    case 'lobby':
      return 'lobby';
    case 'player':
      return grant.dev === true ? 'dev_player' : 'player';
  }
};

type Claims = Record<string, unknown>;

/** The claims of a recorded token (every kind but a player's: {@link playerClaims}). */
const grantClaims = (g: Exclude<Grant, PlayerGrant>): Claims => {
  switch (g.kind) {
    case 'cloud':
      return { kind: g.kind, game_id: g.gameId };
    case 'namespace-public':
      return { kind: g.kind, game_id: g.gameId, namespace_id: g.namespaceId };
    case 'namespace-development':
      return { kind: g.kind, game_id: g.gameId, namespace_id: g.namespaceId, hostname: g.hostname, ports: g.ports };
    case 'lobby':
      return { kind: g.kind, namespace_id: g.namespaceId, lobby_id: g.lobbyId };
  }
};

const s = (c: Claims, key: string): string => {
  const v = c[key];
  if (typeof v !== 'string') throw new Error(`claim ${key} is missing`);
  return v;
};

const claimsGrant = (c: Claims): Grant => {
  switch (c['kind']) {
    case 'cloud':
      return { kind: 'cloud', gameId: s(c, 'game_id') };
    case 'namespace-public':
      return { kind: 'namespace-public', gameId: s(c, 'game_id'), namespaceId: s(c, 'namespace_id') };
    case 'namespace-development':
      return {
        kind: 'namespace-development', gameId: s(c, 'game_id'), namespaceId: s(c, 'namespace_id'), hostname: s(c, 'hostname'),
        ports: Array.isArray(c['ports']) ? (c['ports'] as DevTokenPort[]) : [],
      };
    case 'lobby':
      return { kind: 'lobby', namespaceId: s(c, 'namespace_id'), lobbyId: s(c, 'lobby_id') };
    case 'player':
      return { kind: 'player', namespaceId: s(c, 'namespace_id'), lobbyId: s(c, 'lobby_id'), playerId: s(c, 'player_id'), ...(c['dev'] === true ? { dev: true } : {}) };
    default:
      throw new Error('unknown token kind');
  }
};

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

type PlayerGrant = Extract<Grant, { kind: 'player' }>;

/**
 * A player token's claims as JSON text, written out: the text `JSON.stringify` gives the same
 * object (same members, same order), without building the object first.
 */
const playerClaims = (g: PlayerGrant, iatS: number, expS: number): string =>
  `{"kind":"player","namespace_id":${JSON.stringify(g.namespaceId)},"lobby_id":${JSON.stringify(g.lobbyId)},"player_id":${JSON.stringify(g.playerId)}${g.dev === true ? ',"dev":true' : ''},"iat":${iatS},"exp":${expS}}`;

export interface TokenIssuerDeps {
  readonly catalog: TokenStore & SettingStore;
  readonly clock: Clock;
  readonly random: Random;
  /** `TAVERN_ADMIN_TOKEN`; when absent one is generated once and kept in the catalog. */
  readonly adminToken?: string;
}

/**
 * Issues and verifies tokens. Several instances over one catalog share the signing key (kept in
 * the catalog's settings), so tokens issued by one are accepted by all.
 *
 * @example
 * const tokens = new TokenIssuer({ catalog, clock, random });
 * const token = await tokens.issue({ kind: 'cloud', gameId });
 * const verified = await tokens.verify(token); // ok({ kind: 'cloud', gameId, jti, issuedAt })
 */
export class TokenIssuer {
  readonly #deps: TokenIssuerDeps;
  #key: Promise<KeyObject> | undefined;
  /** The key once loaded: the hot path signs and verifies without waiting. */
  #loaded: KeyObject | undefined;
  #admin: Promise<{ readonly token: string; readonly generated: boolean }> | undefined;
  #adminDigest: Buffer | undefined;
  /** Tokens whose signature and claims checked out, by their signature segment ({@link checkedKey}). */
  readonly #checked = new Map<string, Checked>();

  constructor(deps: TokenIssuerDeps) {
    this.#deps = deps;
  }

  async #signingKey(): Promise<KeyObject> {
    if (this.#loaded !== undefined) return this.#loaded;
    this.#key ??= this.#deps.catalog
      .putSettingIfAbsent(SIGNING_KEY_SETTING, randomSecret(32))
      .then((stored) => (this.#loaded = createSecretKey(Buffer.from(stored, 'base64url'))))
      .catch((error: unknown) => {
        this.#key = undefined; // retried by the next call
        throw error;
      });
    return this.#key;
  }

  /** The admin token, and whether this call generated it (main prints it once, on first start). */
  adminToken(): Promise<{ readonly token: string; readonly generated: boolean }> {
    this.#admin ??= (async () => {
      const given = this.#deps.adminToken;
      if (given !== undefined && given !== '') return { token: given, generated: false };
      const proposed = `tavern_admin_${randomSecret(32)}`;
      const stored = await this.#deps.catalog.putSettingIfAbsent(ADMIN_TOKEN_SETTING, proposed);
      return { token: stored, generated: stored === proposed };
    })().catch((error: unknown) => {
      this.#admin = undefined; // retried by the next call
      throw error;
    });
    return this.#admin;
  }

  async isAdmin(token: string): Promise<boolean> {
    this.#adminDigest ??= digest((await this.adminToken()).token);
    return timingSafeEqual(this.#adminDigest, digest(token));
  }

  /**
   * Signs a token for `grant` and records its `jti` (not a player token's: see above; its `jti` is
   * its player's id, which it carries anyway, so it has no `jti` claim).
   * `namespaceName` only shapes the label. `iat` carries milliseconds (a NumericDate may be
   * fractional): a player token's connect window counts from it.
   *
   * @effects catalog (putToken, settings), clock, random
   */
  async issue(grant: Grant, namespaceName?: string): Promise<string> {
    const key = this.#loaded ?? (await this.#signingKey());
    if (grant.kind === 'player') return this.#player(key, grant);
    const now = this.#deps.clock.now();
    const kind: TokenKind = grant.kind;
    const expiresAt = now + TOKEN_TTL_MS[kind];
    const jti = this.#deps.random.uuid();
    const claims = grantClaims(grant);
    claims['jti'] = jti;
    claims['iat'] = now / 1000;
    claims['exp'] = Math.floor(expiresAt / 1000);
    const token = `${labelOf(grant, namespaceName)}.${signJwt(key, claims)}`;
    const gameId = 'gameId' in grant ? grant.gameId : undefined;
    await this.#deps.catalog.putToken({
      jti, kind, createdAt: now, expiresAt,
      ...(gameId === undefined ? {} : { gameId }),
      ...('namespaceId' in grant ? { namespaceId: grant.namespaceId } : {}),
    });
    return token;
  }

  /**
   * {@link issue} of a player's token, at once: every find signs one, and once the signing key is
   * loaded (the first token loads it) nothing in it waits. Undefined before that: then `issue`.
   *
   * @effects clock
   * @example
   * const token = tokens.playerToken(grant) ?? (await tokens.issue(grant));
   */
  playerToken(grant: PlayerGrant): string | undefined {
    const key = this.#loaded;
    return key === undefined ? undefined : this.#player(key, grant);
  }

  /** A player token is named by its player (one token per seat): no id of its own to mint, carry or record. */
  #player(key: KeyObject, grant: PlayerGrant): string {
    const now = this.#deps.clock.now();
    const exp = Math.floor((now + TOKEN_TTL_MS.player) / 1000);
    return `${labelOf(grant, undefined)}.${signJwtText(key, playerClaims(grant, now / 1000, exp))}`;
  }

  /**
   * Who a bearer token names: the admin, or a verified token (see {@link verify}).
   *
   * @example
   * const who = await tokens.identify(bearer); // ok({ kind: 'admin' }) | ok(verified) | err(...)
   */
  identify(token: string): Promise<Result<Admin | Verified, MatchError>> {
    const parts = labelled(token);
    // A token seen valid before is no admin token: straight to its checks (the hot path of a find).
    if (this.#known(parts.jwt) !== undefined) return this.#verifyParts(parts);
    return this.#identifyNew(token, parts);
  }

  async #identifyNew(token: string, parts: Labelled): Promise<Result<Admin | Verified, MatchError>> {
    return (await this.isAdmin(token)) ? ok(ADMIN) : this.#verifyParts(parts);
  }

  /**
   * Verifies a token string: format, signature, expiry, its label against its kind, then its
   * record (looked up every time): the record must exist, say the same kind, game and namespace as
   * the claims, and not be revoked. Errors: `API_UNAUTHORIZED` (malformed, bad signature, unknown,
   * a label or record that disagrees), `CLAIMS_ENTITLEMENT_EXPIRED`, `TOKEN_REVOKED`. A token whose
   * signature and claims checked out is remembered (a namespace's public token comes with every
   * find of its players): expiry, label and record are still checked on every use.
   */
  verify(token: string): Promise<Result<Verified, MatchError>> {
    return this.#verifyParts(labelled(token));
  }

  /**
   * Revokes a cloud, public or development token of `gameId` (it is refused from the next request
   * on, on every instance). Errors: those of {@link verify} (a token already revoked answers
   * `TOKEN_REVOKED`), `API_FORBIDDEN` for another game's token or a lobby or player token.
   *
   * @example
   * await tokens.revoke(publicToken, game.id); // ok(undefined)
   */
  async revoke(token: string, gameId: string): Promise<Result<undefined, MatchError>> {
    const verified = await this.verify(token);
    if (!verified.ok) return verified;
    const v = verified.value;
    if (v.kind === 'lobby' || v.kind === 'player' || v.gameId !== gameId) {
      return err(matchError('API_FORBIDDEN', { reason: 'only a cloud, public or development token of this game can be revoked here' }));
    }
    await this.#deps.catalog.revokeToken(v.jti, this.#deps.clock.now());
    return ok(undefined);
  }

  /**
   * Revokes the cloud, public or development token `jti` of `gameId` by its id (the dashboard's
   * list holds ids, never secrets). Errors: `API_FORBIDDEN` when no token of this game has that id
   * (another game's is not told apart from none), `TOKEN_REVOKED` when it already was.
   *
   * @effects catalog (getToken, revokeToken), clock
   * @example
   * await tokens.revokeById(jti, game.id); // ok(undefined)
   */
  async revokeById(jti: string, gameId: string): Promise<Result<undefined, MatchError>> {
    const record = await this.#deps.catalog.getToken(jti);
    if (record === undefined || record.gameId !== gameId) return err(matchError('API_FORBIDDEN', { reason: 'this game has no token with that id' }));
    if (record.revokedAt !== undefined) return err(matchError('TOKEN_REVOKED'));
    await this.#deps.catalog.revokeToken(jti, this.#deps.clock.now());
    return ok(undefined);
  }

  /**
   * The game's cloud, public and development tokens, revoked and expired ones too, newest first:
   * their records (ids, kinds, times), never their secrets, which are not kept.
   *
   * @effects catalog (listTokens)
   * @example
   * (await tokens.list(game.id, 100)).map((t) => t.jti);
   */
  list(gameId: string, limit: number): Promise<readonly TokenRecord[]> {
    return this.#deps.catalog.listTokens(gameId, limit);
  }

  /** The remembered check of `jwt`, if it is the very JWT remembered under its signature. */
  #known(jwt: string): Checked | undefined {
    const entry = this.#checked.get(checkedKey(jwt));
    return entry?.jwt === jwt ? entry : undefined;
  }

  /** {@link verify} of a token split into its label and JWT. */
  async #verifyParts({ label, jwt }: Labelled): Promise<Result<Verified, MatchError>> {
    const nowS = this.#deps.clock.now() / 1000;
    let entry = this.#known(jwt);
    if (entry === undefined) {
      const checked = verifyJwt(jwt, this.#loaded ?? (await this.#signingKey()), nowS);
      if (checked === 'expired') return err(matchError('CLAIMS_ENTITLEMENT_EXPIRED'));
      if (checked === 'invalid') return err(matchError('API_UNAUTHORIZED', { reason: 'invalid token' }));
      const { claims } = checked;
      let grant: Grant;
      try {
        grant = claimsGrant(claims);
      } catch {
        return err(matchError('API_UNAUTHORIZED', { reason: 'invalid token claims' }));
      }
      const { iat, exp } = claims;
      const jti = grant.kind === 'player' ? (claims['jti'] ?? grant.playerId) : claims['jti'];
      if (typeof jti !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') {
        return err(matchError('API_UNAUTHORIZED', { reason: 'invalid token claims' }));
      }
      entry = { jwt, verified: { ...grant, jti, issuedAt: Math.round(iat * 1000) }, exp };
      if (this.#checked.size >= CHECKED_MAX) this.#checked.clear();
      this.#checked.set(checkedKey(jwt), entry);
    }
    if (entry.exp <= nowS) return err(matchError('CLAIMS_ENTITLEMENT_EXPIRED'));
    const { verified } = entry;
    if (!labelFits(label, verified)) return err(matchError('API_UNAUTHORIZED', { reason: 'the token label does not match its kind' }));
    if (verified.kind !== 'player') {
      const record = await this.#deps.catalog.getToken(verified.jti);
      if (record === undefined) return err(matchError('API_UNAUTHORIZED', { reason: 'unknown token' }));
      // A token reusing another's id with another game, namespace or kind (signed with a leaked key).
      if (!recordFits(record, verified)) return err(matchError('API_UNAUTHORIZED', { reason: 'the token does not match its record' }));
      if (record.revokedAt !== undefined) return err(matchError('TOKEN_REVOKED'));
    }
    return ok(verified);
  }
}
