import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HCAPTCHA_VERIFY_URL, HttpCaptchaVerifier, type HttpCaptchaOptions, TURNSTILE_VERIFY_URL } from '../../../src/adapters/http/captcha.js';
import type { CaptchaCheck, CaptchaProvider } from '../../../src/core/admission/captcha.js';
import { listen, type Received, type TestServer } from './servers.js';

/** What the fake provider does with the next request. */
let reply: (req: Received, res: ServerResponse) => void;
let provider: TestServer;

beforeEach(async () => {
  reply = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
  provider = await listen((req, res) => reply(req, res));
});
afterEach(async () => {
  await provider.close();
});

const options = (extra: HttpCaptchaOptions = {}): HttpCaptchaOptions => ({
  hcaptchaUrl: `${provider.origin}/siteverify`,
  turnstileUrl: `${provider.origin}/turnstile/v0/siteverify`,
  egress: { allow: ['127.0.0.1/32'] },
  timeoutMs: 5_000,
  ...extra,
});

const check = (p: CaptchaProvider, response = 'client-answer'): CaptchaCheck => ({
  namespaceId: 'ns-1',
  provider: p,
  siteKey: 'site-key-1',
  secretKey: 's3cret&key=1',
  response,
  remoteIp: '203.0.113.7',
});

const json = (body: unknown, status = 200) => (_req: Received, res: ServerResponse) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

describe('HttpCaptchaVerifier', () => {
  it('defaults to the providers siteverify endpoints', () => {
    expect(HCAPTCHA_VERIFY_URL).toBe('https://api.hcaptcha.com/siteverify');
    expect(TURNSTILE_VERIFY_URL).toBe('https://challenges.cloudflare.com/turnstile/v0/siteverify');
  });

  it('sends the hCaptcha form: secret, response, remoteip, sitekey', async () => {
    expect(await new HttpCaptchaVerifier(options()).verify(check('hcaptcha', 'a b&c=d'))).toEqual({ success: true });
    const [req] = provider.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/siteverify');
    expect(req?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(req?.body))).toEqual({
      secret: 's3cret&key=1',
      response: 'a b&c=d',
      remoteip: '203.0.113.7',
      sitekey: 'site-key-1',
    });
  });

  it('sends the Turnstile form: secret, response, remoteip (no sitekey)', async () => {
    expect(await new HttpCaptchaVerifier(options()).verify(check('turnstile'))).toEqual({ success: true });
    const [req] = provider.requests;
    expect(req?.url).toBe('/turnstile/v0/siteverify');
    expect(req?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(req?.body))).toEqual({
      secret: 's3cret&key=1',
      response: 'client-answer',
      remoteip: '203.0.113.7',
    });
  });

  it('sends the user agent only when configured', async () => {
    await new HttpCaptchaVerifier(options()).verify(check('turnstile'));
    await new HttpCaptchaVerifier(options({ userAgent: 'Tavern' })).verify(check('turnstile'));
    expect(provider.requests.map((r) => r.headers['user-agent'])).toEqual([undefined, 'Tavern']);
  });

  it.each(['hcaptcha', 'turnstile'] as const)('reports %s error codes on failure', async (p) => {
    reply = json({ success: false, 'error-codes': ['invalid-input-response', 'timeout-or-duplicate'] });
    expect(await new HttpCaptchaVerifier(options()).verify(check(p))).toEqual({
      success: false,
      reason: `${p} rejected the answer: invalid-input-response, timeout-or-duplicate`,
    });
  });

  it('reports a rejection without error codes', async () => {
    reply = json({ success: false });
    expect(await new HttpCaptchaVerifier(options()).verify(check('hcaptcha'))).toEqual({ success: false, reason: 'hcaptcha rejected the answer' });
  });

  it.each([
    ['not JSON', '<html>oops</html>'],
    ['truncated JSON', '{"success": tr'],
    ['no success field', '{"error-codes": []}'],
    ['a string success', '{"success": "true"}'],
    ['a JSON array', '[true]'],
    ['null', 'null'],
  ])('treats %s as a failure', async (_name, body) => {
    reply = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    expect(await new HttpCaptchaVerifier(options()).verify(check('turnstile'))).toEqual({ success: false, reason: 'turnstile sent a malformed answer' });
  });

  it('treats a non-2xx answer as a failure, even with success true', async () => {
    reply = json({ success: true }, 500);
    expect(await new HttpCaptchaVerifier(options()).verify(check('hcaptcha'))).toEqual({ success: false, reason: 'hcaptcha answered status 500' });
  });

  it('does not follow a redirect', async () => {
    reply = (req, res) => {
      if (req.url === '/siteverify') res.writeHead(302, { location: '/elsewhere' }).end();
      else json({ success: true })(req, res);
    };
    expect(await new HttpCaptchaVerifier(options()).verify(check('hcaptcha'))).toEqual({ success: false, reason: 'hcaptcha answered status 302' });
    expect(provider.requests).toHaveLength(1);
  });

  it('times out on a provider that never answers', async () => {
    reply = () => undefined;
    expect(await new HttpCaptchaVerifier(options({ timeoutMs: 200 })).verify(check('turnstile'))).toEqual({
      success: false,
      reason: 'turnstile did not answer in time',
    });
  });

  it('gives up on an oversized answer', async () => {
    reply = (_req, res) => res.writeHead(200).end(`{"success":true,"pad":"${'x'.repeat(200 * 1024)}"}`);
    expect(await new HttpCaptchaVerifier(options()).verify(check('hcaptcha'))).toEqual({ success: false, reason: 'hcaptcha sent an oversized answer' });
  });

  it('goes through the egress guard: a loopback provider that is not allowlisted is never contacted', async () => {
    const verdict = await new HttpCaptchaVerifier(options({ egress: {} })).verify(check('hcaptcha'));
    expect(verdict).toEqual({ success: false, reason: 'hcaptcha request failed: destination refused: 127.0.0.1 is not public (loopback)' });
    expect(provider.connections).toBe(0);
  });

  it('reports a failed connection without throwing', async () => {
    await provider.close();
    const verdict = await new HttpCaptchaVerifier(options()).verify(check('turnstile'));
    expect(verdict).toMatchObject({ success: false, reason: expect.stringContaining('ECONNREFUSED') as unknown });
  });
});
