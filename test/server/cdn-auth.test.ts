/**
 * The CDN's basic auth cannot be turned against the server (issue 36): a hash's cost is capped at
 * 12 (the API refuses more; one stored before the cap is never checked, and logged once); failed
 * attempts per client address are limited by the rate-limit table (429 with `Retry-After`, no
 * check); a client has at most two checks under way, requests with one header share a check, a
 * full queue answers 503. Real HTTP requests to the CDN listener, on the harness's manual clock.
 */
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckResult, PasswordChecker } from '../../src/server/cdn/bcrypt-pool.js';
import { DEFAULT_RATE_LIMITS } from '../../src/server/rate-limit.js';
import { setCdnAuthUser } from '../../src/services/namespaces.js';
import { cdnWorld, CDN_DOMAIN, type CdnOptions, type CdnWorld, type Got } from './cdn-site.js';

let w: CdnWorld;
afterEach(() => w.close());

const HOST = `my-game.${CDN_DOMAIN}`;
const SITE = [{ path: 'index.html', body: 'members only' }];
const basic = (user: string, password: string, from?: string): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  ...(from === undefined ? {} : { 'x-forwarded-for': from }),
});

/** A checker whose checks wait until the test answers them. */
class HeldChecker implements PasswordChecker {
  readonly calls: { readonly password: string; readonly answer: (r: CheckResult) => void }[] = [];
  check(password: string): Promise<CheckResult> {
    return new Promise((answer) => this.calls.push({ password, answer }));
  }
}

/** A checker that answers at once and counts its checks. */
class CountingChecker implements PasswordChecker {
  readonly calls: string[] = [];
  check(password: string): Promise<CheckResult> {
    this.calls.push(password);
    return Promise.resolve('mismatch');
  }
}

/** Polls until `ready` holds, for 10 s at most. */
const until = async (ready: () => boolean): Promise<void> => {
  const end = performance.now() + 10_000;
  while (!ready() && performance.now() < end) await new Promise((r) => setTimeout(r, 5));
  expect(ready()).toBe(true);
};

/** A CDN world whose site is behind basic auth with `users` (user → hash). */
async function locked(users: Record<string, string>, cdn: CdnOptions = {}): Promise<CdnWorld> {
  w = await cdnWorld('my-game', {}, { trustProxyHeaders: true, ...cdn });
  await w.deploy(SITE);
  const ns = `/cloud/games/${w.gameId}/namespaces/${w.nsId}`;
  for (const [user, password] of Object.entries(users)) expect((await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user, password } })).status).toBe(200);
  expect((await w.h.call('PUT', `${ns}/cdn-auth`, { token: w.cloud, body: { auth_type: 'basic' } })).status).toBe(200);
  return w;
}

describe('bcrypt cost cap', () => {
  it('refuses a hash of a cost above 12 (or below 4) on the password field, saying the limit; accepts 4 to 12', async () => {
    w = await cdnWorld();
    const ns = `/cloud/games/${w.gameId}/namespaces/${w.nsId}`;
    const hash = await bcrypt.hash('x', 4);
    for (const cost of ['13', '31', '03', '99']) {
      const r = await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: 'alice', password: hash.replace('$04$', `$${cost}$`) } });
      expect(r.status, cost).toBe(400);
      expect(r.body['code'], cost).toBe('CDN_INVALID_AUTH_USER_PASSWORD');
      expect(r.body['message'], cost).toMatch(/of cost 4 to 12/);
    }
    const ns31 = await w.h.catalog.getNamespace(w.nsId);
    if (ns31 === undefined) throw new Error('no namespace');
    expect(await setCdnAuthUser({ catalog: w.h.catalog }, ns31, 'alice', hash.replace('$04$', '$31$'))).toEqual({
      ok: false, error: { code: 'CDN_INVALID_AUTH_USER_PASSWORD', params: { min: 4, max: 12 }, path: ['password'] },
    });
    for (const cost of ['04', '10', '12']) expect((await w.h.call('POST', `${ns}/auth-user`, { token: w.cloud, body: { user: `u${cost}`, password: hash.replace('$04$', `$${cost}$`) } })).status, cost).toBe(200);
  });

  it('never checks a hash of a higher cost stored before the cap: refused, logged once per hash', async () => {
    const warnings: { obj: object; msg: string | undefined }[] = [];
    const checker = new CountingChecker();
    const logger = { info: () => undefined, error: () => undefined, warn: (obj: object, msg?: string) => warnings.push({ obj, msg }) };
    await locked({}, { checker, logger });
    // Written as the API wrote them before the cap.
    const old = (await bcrypt.hash('pw', 4)).replace('$04$', '$31$');
    const other = (await bcrypt.hash('pw', 4)).replace('$04$', '$13$');
    const ns = await w.h.catalog.getNamespace(w.nsId);
    if (ns === undefined) throw new Error('no namespace');
    await w.h.catalog.updateNamespace(w.nsId, { cdn: { ...ns.cdn, authUsers: [{ user: 'alice', passwordHash: old }, { user: 'bob', passwordHash: other }] } });
    for (let i = 0; i < 3; i++) {
      expect((await w.get(HOST, '/', basic('alice', 'pw'))).status).toBe(401);
      expect((await w.get(HOST, '/', basic('bob', `pw${i}`))).status).toBe(401);
    }
    expect(checker.calls).toEqual([]);
    expect(warnings.map((x) => x.obj)).toEqual([
      { namespaceId: w.nsId, user: 'alice', cost: 31, allowed: '4..12' },
      { namespaceId: w.nsId, user: 'bob', cost: 13, allowed: '4..12' },
    ]);
  });
});

describe('failed attempts per client address', () => {
  it('answers 429 with Retry-After, without checking, after the failures the table allows; the window ending lets it try again', async () => {
    const rateLimits = { ...DEFAULT_RATE_LIMITS, 'cdn-auth-failures': [{ hits: 3, windowMs: 60_000 }] };
    await locked({ alice: await bcrypt.hash('right', 4) }, { rateLimits });
    expect((await w.get(HOST, '/', basic('alice', 'wrong-1', '203.0.113.7'))).status).toBe(401);
    expect((await w.get(HOST, '/', basic('mallory', 'x', '203.0.113.7'))).status).toBe(401);
    expect((await w.get(HOST, '/', basic('alice', 'wrong-2', '203.0.113.7'))).status).toBe(401);
    const limited: Got = await w.get(HOST, '/', basic('alice', 'right', '203.0.113.7'));
    expect(limited.status).toBe(429);
    // The manual clock stands at a minute's start: the window ends in 60 s.
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.headers['x-content-type-options']).toBe('nosniff');
    expect((await w.get(HOST, '/', basic('alice', 'wrong-3', '203.0.113.7'))).status).toBe(429);
    // Another address has its own count; once its header is verified, no check is needed, so no limit either.
    expect((await w.get(HOST, '/', basic('alice', 'right', '198.51.100.9'))).status).toBe(200);
    expect((await w.get(HOST, '/', basic('alice', 'right', '203.0.113.7'))).status).toBe(200);
    expect((await w.get(HOST, '/', basic('alice', 'wrong-4', '203.0.113.7'))).status).toBe(429);
    w.h.clock.set(w.h.clock.now() + 60_000);
    expect((await w.get(HOST, '/', basic('alice', 'wrong-5', '203.0.113.7'))).status).toBe(401);
  });

  it('has at most two checks under way per client address; requests with one header share a check; a full queue is 503', async () => {
    const checker = new HeldChecker();
    await locked({ alice: await bcrypt.hash('right', 4) }, { checker });
    const first = w.get(HOST, '/', basic('alice', 'a', '203.0.113.7'));
    const second = w.get(HOST, '/', basic('alice', 'b', '203.0.113.7'));
    await until(() => checker.calls.length === 2);
    let third: Got | undefined;
    void w.get(HOST, '/', basic('alice', 'c', '203.0.113.7')).then((r) => (third = r));
    await until(() => third !== undefined || checker.calls.length > 2);
    expect(checker.calls.length).toBe(2);
    expect(third?.status).toBe(429);
    expect(third?.headers['retry-after']).toBe('1');
    // The same header as a check under way joins it; another address has its own two.
    const same = w.get(HOST, '/', basic('alice', 'a', '203.0.113.7'));
    const elsewhere = w.get(HOST, '/', basic('alice', 'right', '198.51.100.9'));
    const burst = Array.from({ length: 10 }, () => w.get(HOST, '/', basic('alice', 'right', '198.51.100.9')));
    await until(() => checker.calls.length === 3);
    for (const call of checker.calls) call.answer(call.password === 'right' ? 'match' : 'mismatch');
    expect((await Promise.all([first, second, same])).map((r) => r.status)).toEqual([401, 401, 401]);
    expect((await Promise.all([elsewhere, ...burst])).map((r) => r.status)).toEqual(Array(11).fill(200));
    expect(checker.calls.length).toBe(3);

    const busy = w.get(HOST, '/', basic('alice', 'd', '203.0.113.7'));
    await until(() => checker.calls.length === 4);
    checker.calls[3]?.answer('busy');
    const refused = await busy;
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
  });
});
