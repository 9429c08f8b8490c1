/**
 * Tavern's tokens: JWTs (HS256, jose) carrying a kind and a scope, each recorded by its `jti` so a
 * revocation takes effect on the next request on every instance. A Rivet-style label prefix
 * (`cloud.`, `pub_<ns>.`, `dev_<ns>.`, `lobby.`, `player.`) is prepended and ignored on use.
 */
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { createHash, timingSafeEqual, webcrypto } from 'node:crypto';
import { matchError, type MatchError } from '../core/errors.js';
import { err, ok, type Result } from '../core/result.js';
import type { CatalogStore, TokenKind } from '../io/catalog.js';
import type { Clock, Random } from '../io/index.js';

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
const ADMIN_TOKEN_SETTING = 'admin-token';

const randomSecret = (bytes: number): string => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('base64url');

const labelOf = (grant: Grant, nsName: string | undefined): string => {
  const ns = (nsName ?? 'ns').replace(/-/g, '_');
  switch (grant.kind) {
    case 'cloud':
      return 'cloud';
    case 'namespace-public':
      return `pub_${ns}`;
    case 'namespace-development':
      return `dev_${ns}`;
    case 'lobby':
      return 'lobby';
    case 'player':
      return grant.dev === true ? 'dev_player' : 'player';
  }
};

type Claims = Record<string, unknown>;

const grantClaims = (g: Grant): Claims => {
  switch (g.kind) {
    case 'cloud':
      return { kind: g.kind, game_id: g.gameId };
    case 'namespace-public':
      return { kind: g.kind, game_id: g.gameId, namespace_id: g.namespaceId };
    case 'namespace-development':
      return { kind: g.kind, game_id: g.gameId, namespace_id: g.namespaceId, hostname: g.hostname, ports: g.ports };
    case 'lobby':
      return { kind: g.kind, namespace_id: g.namespaceId, lobby_id: g.lobbyId };
    case 'player':
      return { kind: g.kind, namespace_id: g.namespaceId, lobby_id: g.lobbyId, player_id: g.playerId, ...(g.dev === true ? { dev: true } : {}) };
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

export interface TokenIssuerDeps {
  readonly catalog: CatalogStore;
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
  /** Imported once as a WebCrypto key, which jose uses as is (raw bytes or a KeyObject are re-imported on every sign and verify). */
  #key: Promise<webcrypto.CryptoKey> | undefined;
  #admin: Promise<{ readonly token: string; readonly generated: boolean }> | undefined;

  constructor(deps: TokenIssuerDeps) {
    this.#deps = deps;
  }

  #signingKey(): Promise<webcrypto.CryptoKey> {
    this.#key ??= this.#deps.catalog
      .putSettingIfAbsent(SIGNING_KEY_SETTING, randomSecret(32))
      .then((stored) => webcrypto.subtle.importKey('raw', Buffer.from(stored, 'base64url'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']))
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
    const { token: admin } = await this.adminToken();
    return timingSafeEqual(digest(admin), digest(token));
  }

  /**
   * Signs a token for `grant` and records its `jti`. `namespaceName` only shapes the label.
   *
   * @effects catalog (putToken, settings), clock, random
   */
  async issue(grant: Grant, namespaceName?: string): Promise<string> {
    const now = this.#deps.clock.now();
    const kind: TokenKind = grant.kind;
    const expiresAt = now + TOKEN_TTL_MS[kind];
    const jti = this.#deps.random.uuid();
    const jwt = await new SignJWT(grantClaims(grant))
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setJti(jti)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(await this.#signingKey());
    const gameId = 'gameId' in grant ? grant.gameId : undefined;
    await this.#deps.catalog.putToken({
      jti, kind, createdAt: now, expiresAt,
      ...(gameId === undefined ? {} : { gameId }),
      ...('namespaceId' in grant ? { namespaceId: grant.namespaceId } : {}),
    });
    return `${labelOf(grant, namespaceName)}.${jwt}`;
  }

  /**
   * Verifies a token string: format, signature, expiry, then revocation (looked up every time).
   * Errors: `API_UNAUTHORIZED` (malformed, bad signature, unknown), `CLAIMS_ENTITLEMENT_EXPIRED`,
   * `TOKEN_REVOKED`.
   */
  async verify(token: string): Promise<Result<Verified, MatchError>> {
    const parts = token.split('.');
    if (parts.length === 4) parts.shift();
    if (parts.length !== 3) return err(matchError('API_UNAUTHORIZED', { reason: 'malformed token' }));
    let claims: Claims;
    try {
      const { payload } = await jwtVerify(parts.join('.'), await this.#signingKey(), {
        algorithms: ['HS256'],
        currentDate: new Date(this.#deps.clock.now()),
      });
      claims = payload;
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) return err(matchError('CLAIMS_ENTITLEMENT_EXPIRED'));
      return err(matchError('API_UNAUTHORIZED', { reason: 'invalid token' }));
    }
    let grant: Grant;
    try {
      grant = claimsGrant(claims);
    } catch {
      return err(matchError('API_UNAUTHORIZED', { reason: 'invalid token claims' }));
    }
    const jti = claims['jti'];
    if (typeof jti !== 'string') return err(matchError('API_UNAUTHORIZED', { reason: 'invalid token claims' }));
    const record = await this.#deps.catalog.getToken(jti);
    if (record === undefined) return err(matchError('API_UNAUTHORIZED', { reason: 'unknown token' }));
    if (record.revokedAt !== undefined) return err(matchError('TOKEN_REVOKED'));
    return ok({ ...grant, jti, issuedAt: record.createdAt });
  }
}
