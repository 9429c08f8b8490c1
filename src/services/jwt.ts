/**
 * Compact HS256 JWTs (RFC 7515/7519), signed and checked synchronously with node:crypto: every
 * find signs one (its player token), so the HMAC is on the hot path.
 *
 * The HMAC is computed from the key's two padded blocks (RFC 2104), prepared once per key, with
 * two one-shot SHA-256 hashes (`crypto.hash`, Node ≥ 20.12): `createHmac` builds an OpenSSL MAC
 * context per call, ~0.6 µs of the ~2 µs a token's HMAC took. Older Node 20 releases, which have
 * no `crypto.hash`, use `createHmac`. The tests check these tokens against jose both ways.
 */
import * as nodeCrypto from 'node:crypto';
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

/** The protected header of every token Tavern signs. */
export const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

const BLOCK = 64;

/** `crypto.hash` where this Node has it (undefined before 20.12). */
const oneShot = (nodeCrypto as Partial<typeof nodeCrypto>).hash;

/** A key's HMAC-SHA256 state: its padded blocks, each followed by room for what is hashed after it. */
interface Pads {
  /** `key ⊕ ipad`, then the message (grown when a longer one comes). */
  inner: Buffer;
  /** `key ⊕ opad`, then the inner digest. */
  readonly outer: Buffer;
}

/** Each key's pads, made on first use (a key object is made once per signing key). */
const padsOf = new WeakMap<KeyObject, Pads>();

const pads = (key: KeyObject): Pads => {
  let p = padsOf.get(key);
  if (p === undefined) {
    let raw = key.export();
    if (raw.length > BLOCK) raw = nodeCrypto.createHash('sha256').update(raw).digest();
    const inner = Buffer.alloc(BLOCK + 512);
    const outer = Buffer.alloc(BLOCK + 32);
    for (let i = 0; i < BLOCK; i++) {
      const k = raw[i] ?? 0;
      inner[i] = k ^ 0x36;
      outer[i] = k ^ 0x5c;
    }
    p = { inner, outer };
    padsOf.set(key, p);
  }
  return p;
};

/** HMAC-SHA256 of an ASCII `input` (a JWT's signing input is base64url and dots). */
function mac(key: KeyObject, input: string, encoding: 'base64url'): string;
function mac(key: KeyObject, input: string, encoding: 'buffer'): Buffer;
function mac(key: KeyObject, input: string, encoding: 'base64url' | 'buffer'): string | Buffer {
  if (oneShot === undefined) {
    const digest = createHmac('sha256', key).update(input, 'latin1').digest();
    return encoding === 'buffer' ? digest : digest.toString('base64url');
  }
  const p = pads(key);
  if (p.inner.length < BLOCK + input.length) {
    const grown = Buffer.alloc(BLOCK + 2 * input.length);
    p.inner.copy(grown, 0, 0, BLOCK);
    p.inner = grown;
  }
  const n = p.inner.write(input, BLOCK, 'latin1');
  oneShot('sha256', p.inner.subarray(0, BLOCK + n), 'buffer').copy(p.outer, BLOCK);
  return encoding === 'buffer' ? oneShot('sha256', p.outer, 'buffer') : oneShot('sha256', p.outer, 'base64url');
}

/**
 * A compact HS256 JWT of a JSON text of claims, signed with `key`.
 *
 * @example
 * const jwt = signJwtText(key, '{"kind":"player","exp":1900000000}');
 */
export const signJwtText = (key: KeyObject, claims: string): string => {
  const input = `${HEADER}.${Buffer.from(claims).toString('base64url')}`;
  return `${input}.${mac(key, input, 'base64url')}`;
};

/**
 * A compact HS256 JWT of `claims` signed with `key` (without Tavern's label prefix).
 *
 * @example
 * const jwt = signJwt(createSecretKey(secret), { kind: 'cloud', game_id: gameId, exp: 1_900_000_000 });
 */
export const signJwt = (key: KeyObject, claims: Readonly<Record<string, unknown>>): string => signJwtText(key, JSON.stringify(claims));

type Claims = Record<string, unknown>;

/** The JSON object a base64url segment holds, or undefined. */
const segment = (part: string): Record<string, unknown> | undefined => {
  try {
    const value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * A compact HS256 JWT's claims if its signature is `key`'s, or why not (RFC 7515/7519): the header
 * must say `alg: HS256` (no `none`, no other algorithm, no critical extensions); `exp` must be
 * after `nowS`, `nbf` (if any) not after it.
 *
 * @example
 * const checked = verifyJwt(jwt, key, Date.now() / 1000); // { claims } | 'invalid' | 'expired'
 */
export const verifyJwt = (jwt: string, key: KeyObject, nowS: number): { readonly claims: Claims } | 'invalid' | 'expired' => {
  const [header, payload, signature, extra] = jwt.split('.');
  if (header === undefined || payload === undefined || signature === undefined || extra !== undefined) return 'invalid';
  if (!BASE64URL.test(header) || !BASE64URL.test(payload) || !BASE64URL.test(signature)) return 'invalid';
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(key, `${header}.${payload}`, 'buffer');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  const h = header === HEADER ? { alg: 'HS256' } : segment(header);
  if (h === undefined || h['alg'] !== 'HS256' || 'crit' in h) return 'invalid';
  const claims = segment(payload);
  if (claims === undefined) return 'invalid';
  const { exp, nbf, iat } = claims;
  if (typeof exp !== 'number' || (nbf !== undefined && typeof nbf !== 'number') || (iat !== undefined && typeof iat !== 'number')) return 'invalid';
  if (typeof nbf === 'number' && nbf > nowS) return 'invalid';
  return exp <= nowS ? 'expired' : { claims };
};
