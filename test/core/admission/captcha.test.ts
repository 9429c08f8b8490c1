import { describe, expect, it } from 'vitest';
import { captchaCheck, captchaRequired, needsCaptcha } from '../../../src/core/admission/captcha.js';
import type { Admission } from '../../../src/core/admission/gate.js';
import type { CaptchaConfig } from '../../../src/core/config/types.js';
import { ERRORS } from '../../../src/core/errors.js';
import { recordCaptcha } from '../../../src/core/lobby/lifecycle.js';
import { create } from '../../../src/core/matchmaker/create.js';
import { find, type FindCommand } from '../../../src/core/matchmaker/find.js';
import type { Seat } from '../../../src/core/matchmaker/seat.js';
import type { World } from '../../../src/core/world.js';
import { at, client, ids, mode, NS, worldWith } from '../fixtures.js';
import { admitted, codeOf, eventsOf, nsOf, okStep, stepCode } from '../helpers.js';

const turnstile: CaptchaConfig = { requestsBeforeReverify: 3, verificationTtl: 60_000, turnstile: { siteKey: 'ts-site', secretKey: 'ts-secret' } };
const hcaptcha: CaptchaConfig = { requestsBeforeReverify: 3, verificationTtl: 60_000, hcaptcha: { siteKey: 'hc-site', secretKey: 'hc-secret' } };

const newId = ids('cp');
const IP = '5.6.7.8';
const cmd = (over: Partial<FindCommand> = {}): FindCommand => ({
  namespaceId: NS,
  gameModes: ['default'],
  playerIds: [newId()],
  newLobbyId: newId(),
  client: client(IP),
  ...over,
});
const big = mode('default', { maxPlayers: { normal: 32, direct: 32, party: 32 } });

/** Solve the captcha for IP at `now` through find: ask, answer, record the provider's success. */
const solve = (w: World, now: number, answer = { turnstile: { clientResponse: 'ok' } }): World => {
  const a = find(w, cmd({ captcha: answer }), at(now));
  if (a.kind !== 'captcha') throw new Error(`expected a captcha check, got ${JSON.stringify(a)}`);
  return okStep(recordCaptcha(w, a.check, { success: true }, at(now))).world;
};

describe('needsCaptcha', () => {
  it('is needed without a record, after the ttl, and after requests_before_reverify requests', () => {
    expect(needsCaptcha(undefined, turnstile, 0)).toBe(true);
    expect(needsCaptcha({ verifiedAt: 1000, requestsSince: 0 }, turnstile, 1000)).toBe(false);
    expect(needsCaptcha({ verifiedAt: 1000, requestsSince: 0 }, turnstile, 1000 + 60_000)).toBe(false);
    expect(needsCaptcha({ verifiedAt: 1000, requestsSince: 0 }, turnstile, 1000 + 60_001)).toBe(true);
    expect(needsCaptcha({ verifiedAt: 1000, requestsSince: 2 }, turnstile, 1000)).toBe(false);
    expect(needsCaptcha({ verifiedAt: 1000, requestsSince: 3 }, turnstile, 1000)).toBe(true);
  });

  it('always allows one request after a fresh verification, even with requests_before_reverify 0', () => {
    const zero = { ...turnstile, requestsBeforeReverify: 0 };
    expect(needsCaptcha({ verifiedAt: 0, requestsSince: 0 }, zero, 0)).toBe(false);
    expect(needsCaptcha({ verifiedAt: 0, requestsSince: 1 }, zero, 0)).toBe(true);
  });
});

describe('captchaRequired', () => {
  it('is a 403 with the provider site key under Rivet key names', () => {
    expect(ERRORS.CAPTCHA_CAPTCHA_REQUIRED.status).toBe(403);
    expect(captchaRequired(hcaptcha)).toEqual({ code: 'CAPTCHA_CAPTCHA_REQUIRED', metadata: { hcaptcha: { site_id: 'hc-site' } } });
    expect(captchaRequired(turnstile)).toEqual({ code: 'CAPTCHA_CAPTCHA_REQUIRED', metadata: { turnstile: { site_key: 'ts-site' } } });
  });
});

describe('captchaCheck', () => {
  it('builds the provider check for a matching answer', () => {
    expect(captchaCheck(NS, turnstile, { turnstile: { clientResponse: 'r' } }, IP)).toEqual({
      namespaceId: NS,
      provider: 'turnstile',
      siteKey: 'ts-site',
      secretKey: 'ts-secret',
      response: 'r',
      remoteIp: IP,
    });
    expect(captchaCheck(NS, hcaptcha, { hcaptcha: { clientResponse: 'h' } }, IP)).toMatchObject({
      provider: 'hcaptcha',
      siteKey: 'hc-site',
      secretKey: 'hc-secret',
      response: 'h',
    });
  });

  it('fails an answer for the other provider with CAPTCHA_CAPTCHA_FAILED (400)', () => {
    expect(captchaCheck(NS, turnstile, { hcaptcha: { clientResponse: 'h' } }, IP)).toMatchObject({
      code: 'CAPTCHA_CAPTCHA_FAILED',
      path: ['captcha', 'turnstile'],
    });
    expect(captchaCheck(NS, hcaptcha, { turnstile: { clientResponse: 't' } }, IP)).toMatchObject({ code: 'CAPTCHA_CAPTCHA_FAILED' });
    expect(ERRORS.CAPTCHA_CAPTCHA_FAILED.status).toBe(400);
  });
});

describe('recordCaptcha', () => {
  const check = { namespaceId: NS, provider: 'turnstile' as const, siteKey: 'k', secretKey: 's', response: 'r', remoteIp: IP };

  it('starts a verification period for the client on success', () => {
    const d = okStep(recordCaptcha(worldWith([big], { captcha: turnstile }), check, { success: true }, at(500)));
    expect(nsOf(d.world).captcha.get(IP)).toEqual({ verifiedAt: 500, requestsSince: 0 });
    expect(eventsOf(d, 'captcha-verified')).toEqual([{ type: 'captcha-verified', at: 500, namespaceId: NS, source: IP }]);
  });

  it('answers CAPTCHA_CAPTCHA_FAILED with the reason on failure', () => {
    const r = recordCaptcha(worldWith([big], { captcha: turnstile }), check, { success: false, reason: 'invalid-input-response' }, at(500));
    expect(r).toEqual({ ok: false, error: { code: 'CAPTCHA_CAPTCHA_FAILED', params: { reason: 'invalid-input-response' }, path: ['captcha'] } });
  });
});

describe('captcha through find', () => {
  const required = (a: Admission<Seat>) => (a.kind === 'rejected' && a.error.code === 'CAPTCHA_CAPTCHA_REQUIRED' ? a.error.metadata : undefined);

  it('does nothing without a captcha config', () => {
    expect(codeOf(find(worldWith([big]), cmd(), at(1)))).toBeUndefined();
  });

  it('asks, checks, records and then admits', () => {
    const w = worldWith([big], { captcha: turnstile });
    expect(required(find(w, cmd(), at(1)))).toEqual({ turnstile: { site_key: 'ts-site' } });
    expect(required(find(worldWith([big], { captcha: hcaptcha }), cmd(), at(1)))).toEqual({ hcaptcha: { site_id: 'hc-site' } });
    expect(codeOf(find(w, cmd({ captcha: { hcaptcha: { clientResponse: 'x' } } }), at(1)))).toBe('CAPTCHA_CAPTCHA_FAILED');
    const asked = find(w, cmd({ captcha: { turnstile: { clientResponse: 'x' } } }), at(1));
    expect(asked).toMatchObject({ kind: 'captcha', check: { provider: 'turnstile', response: 'x', remoteIp: IP, secretKey: 'ts-secret' } });
    // A provider "no" leaves the client unverified.
    if (asked.kind !== 'captcha') throw new Error('unreachable');
    expect(stepCode(recordCaptcha(w, asked.check, { success: false, reason: 'no' }, at(1)))).toBe('CAPTCHA_CAPTCHA_FAILED');
    const solved = solve(w, 2);
    expect(codeOf(find(solved, cmd(), at(3)))).toBeUndefined();
    // Another address still has to solve it.
    expect(codeOf(find(solved, cmd({ client: client('9.9.9.1') }), at(3)))).toBe('CAPTCHA_CAPTCHA_REQUIRED');
  });

  it('counts admitted requests across finds and asks again after requests_before_reverify', () => {
    let w = solve(worldWith([big], { captcha: turnstile }), 0);
    for (let i = 1; i <= 3; i++) {
      w = admitted(find(w, cmd(), at(i))).world;
      expect(nsOf(w).captcha.get(IP)?.requestsSince).toBe(i);
    }
    expect(codeOf(find(w, cmd(), at(4)))).toBe('CAPTCHA_CAPTCHA_REQUIRED');
    // Solving again resets the budget.
    w = solve(w, 5);
    expect(codeOf(find(w, cmd(), at(6)))).toBeUndefined();
  });

  it('asks again once verification_ttl has passed', () => {
    const w = solve(worldWith([big], { captcha: turnstile }), 1000);
    expect(codeOf(find(w, cmd(), at(1000 + 60_000)))).toBeUndefined();
    expect(codeOf(find(w, cmd(), at(1000 + 60_001)))).toBe('CAPTCHA_CAPTCHA_REQUIRED');
  });

  it('also gates create', () => {
    const m = mode('custom', { actions: { create: { enabled: true } } });
    const w = worldWith([m], { captcha: turnstile });
    const c = { namespaceId: NS, gameMode: 'custom', playerId: newId(), newLobbyId: newId(), client: client(IP) };
    expect(codeOf(create(w, c, at(1)))).toBe('CAPTCHA_CAPTCHA_REQUIRED');
    expect(create(w, { ...c, captcha: { turnstile: { clientResponse: 'x' } } }, at(1))).toMatchObject({ kind: 'captcha' });
  });
});

describe('captcha budget', () => {
  it('counts a request refused after the captcha gate, so refused probes also exhaust requests_before_reverify', () => {
    let w = solve(worldWith([big], { captcha: turnstile }), 1);
    for (let i = 0; i < 3; i++) {
      const refused = find(w, cmd({ preventAutoCreate: true }), at(2 + i));
      expect(refused).toMatchObject({ kind: 'rejected', error: { code: 'MATCHMAKER_NO_AVAILABLE_LOBBIES' } });
      if (refused.kind !== 'rejected' || refused.decision === undefined) throw new Error('a refusal after the gate carries its decision');
      w = refused.decision.world;
    }
    expect(nsOf(w).captcha.get(IP)?.requestsSince).toBe(3);
    expect(codeOf(find(w, cmd(), at(10)))).toBe('CAPTCHA_CAPTCHA_REQUIRED');
  });
});
