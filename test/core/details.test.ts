import { describe, expect, it } from 'vitest';
import { captchaCheck } from '../../src/core/admission/captcha.js';
import type { CaptchaConfig } from '../../src/core/config/types.js';
import { errorMessage } from '../../src/core/errors.js';
import { optional } from '../../src/core/optional.js';

// Details users read: the reason and path of a captcha refusal; and the optional-field helper the
// core's effects, payloads and stored rows are built with (an absent value leaves no key).

describe('captcha refusal details', () => {
  const turnstile: CaptchaConfig = { requestsBeforeReverify: 3, verificationTtl: 60_000, turnstile: { siteKey: 'ts-site', secretKey: 'ts-secret' } };
  const hcaptcha: CaptchaConfig = { requestsBeforeReverify: 3, verificationTtl: 60_000, hcaptcha: { siteKey: 'hc-site', secretKey: 'hc-secret' } };

  it('names the provider whose response was expected, in the parameters and at the path', () => {
    const e = captchaCheck('ns', turnstile, { hcaptcha: { clientResponse: 'h' } }, '1.2.3.4');
    expect(e).toMatchObject({ code: 'CAPTCHA_CAPTCHA_FAILED', params: { reason: 'expected a turnstile response' }, path: ['captcha', 'turnstile'] });
    const h = captchaCheck('ns', hcaptcha, {}, '1.2.3.4');
    expect(h).toMatchObject({ code: 'CAPTCHA_CAPTCHA_FAILED', params: { reason: 'expected a hcaptcha response' }, path: ['captcha', 'hcaptcha'] });
    expect('code' in h ? errorMessage(h) : '').toMatch(/captcha/i);
  });

  it('passes the keys of the configured provider along with the answer', () => {
    expect(captchaCheck('ns', hcaptcha, { hcaptcha: { clientResponse: 'r' } }, '1.2.3.4')).toEqual({
      namespaceId: 'ns', provider: 'hcaptcha', siteKey: 'hc-site', secretKey: 'hc-secret', response: 'r', remoteIp: '1.2.3.4',
    });
  });
});

describe('optional', () => {
  it('sets the key only when the value is defined', () => {
    expect({ a: 1, ...optional('b', undefined) }).toStrictEqual({ a: 1 });
    expect('b' in optional('b', undefined)).toBe(false);
    expect(optional('b', 0)).toStrictEqual({ b: 0 });
    expect(optional('b', null)).toStrictEqual({ b: null });
    expect(optional('b', '')).toStrictEqual({ b: '' });
  });
});
