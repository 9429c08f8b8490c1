/**
 * The token work of one find, run under callgrind by `bench/tokens.ts`: `node tokens-child.js
 * <tavern|jose> <warmup> <n>` does `warmup` rounds, prints `warm`, waits for a line on stdin (the
 * parent switches counting on meanwhile), does `n` more rounds and prints `done`. A round is the
 * most token work a find does: verify the caller's namespace token (a find usually finds it in
 * Tavern's cache of checked tokens; here it is always new) and sign a player token. `tavern`:
 * Tavern's `signJwt`/`verifyJwt` (node:crypto's HMAC, synchronous); `jose`: jose's `SignJWT` and
 * `jwtVerify` (WebCrypto), same key, header and claims.
 */
import { createSecretKey, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { jwtVerify, SignJWT } from 'jose';
import { signJwt, verifyJwt } from '../src/services/jwt.js';

const [impl, warmupArg, nArg] = process.argv.slice(2);
const warmup = Number(warmupArg);
const n = Number(nArg);
if ((impl !== 'tavern' && impl !== 'jose') || !Number.isInteger(warmup) || !Number.isInteger(n)) {
  process.stderr.write('usage: tokens-child.js <tavern|jose> <warmup> <n>\n');
  process.exit(2);
}

const secret = crypto.getRandomValues(new Uint8Array(32));
const key = createSecretKey(secret);
const namespaceId = randomUUID();
const lobbyId = randomUUID();
const exp = Math.floor(Date.now() / 1000) + 90 * 86_400;
const nsClaims = (): Record<string, unknown> => ({ kind: 'namespace-public', game_id: namespaceId, namespace_id: namespaceId, jti: randomUUID(), iat: Date.now() / 1000, exp });
const playerClaims = (): Record<string, unknown> => ({ kind: 'player', namespace_id: namespaceId, lobby_id: lobbyId, player_id: randomUUID(), iat: Date.now() / 1000, exp });

/** The namespace tokens the rounds verify, signed before counting starts. */
const tokens = (count: number): Promise<string[]> =>
  Promise.all(Array.from({ length: count }, () => (impl === 'tavern' ? Promise.resolve(signJwt(key, nsClaims())) : new SignJWT(nsClaims()).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(secret))));

const round = impl === 'tavern'
  ? (token: string): Promise<void> => {
    if (typeof verifyJwt(token, key, Date.now() / 1000) !== 'object') throw new Error('tavern: a token did not verify');
    signJwt(key, playerClaims());
    return Promise.resolve();
  }
  : async (token: string): Promise<void> => {
    await jwtVerify(token, secret, { algorithms: ['HS256'] });
    await new SignJWT(playerClaims()).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(secret);
  };

for (const token of await tokens(warmup)) await round(token);
const measured = await tokens(n);
process.stdout.write('warm\n');
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
for (const token of measured) await round(token);
process.stdout.write('done\n');
lines.close();
