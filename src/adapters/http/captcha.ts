/**
 * Captcha verification (wire.md §3.9) against hCaptcha or Cloudflare Turnstile, through the egress
 * guard.
 */
import type { CaptchaCheck, CaptchaProvider, CaptchaVerdict } from '../../core/admission/captcha.js';
import type { CaptchaVerifier } from '../../io/index.js';
import { type EgressOptions, type EgressPolicy, egressPolicy, egressRequest } from './egress.js';

/** hCaptcha's siteverify endpoint. */
export const HCAPTCHA_VERIFY_URL = 'https://api.hcaptcha.com/siteverify';
/** Cloudflare Turnstile's siteverify endpoint. */
export const TURNSTILE_VERIFY_URL = 'https://challenges.cloudflare.com/turnstile/v0/siteverify';

/** Where the providers are and how long to wait for them. */
export interface HttpCaptchaOptions {
  /** Default {@link HCAPTCHA_VERIFY_URL}. */
  readonly hcaptchaUrl?: string;
  /** Default {@link TURNSTILE_VERIFY_URL}. */
  readonly turnstileUrl?: string;
  /** Where calls may go (default: public addresses on ports 80 and 443 only). */
  readonly egress?: EgressOptions;
  /** Total budget per call (default 10 000 ms). */
  readonly timeoutMs?: number;
  /** A `User-Agent` to send (default: none, e.g. `'Tavern'`). */
  readonly userAgent?: string;
}

/** The provider's answer is small JSON; anything longer is not one. */
const MAX_BODY_BYTES = 64 * 1024;

const reasonOf = (provider: CaptchaProvider, body: Buffer): CaptchaVerdict => {
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    return { success: false, reason: `${provider} sent a malformed answer` };
  }
  if (typeof answer !== 'object' || answer === null || typeof (answer as { success?: unknown }).success !== 'boolean') {
    return { success: false, reason: `${provider} sent a malformed answer` };
  }
  if ((answer as { success: boolean }).success) return { success: true };
  const codes = (answer as { 'error-codes'?: unknown })['error-codes'];
  const list = Array.isArray(codes) ? codes.filter((c): c is string => typeof c === 'string') : [];
  return { success: false, reason: `${provider} rejected the answer${list.length > 0 ? `: ${list.join(', ')}` : ''}` };
};

/**
 * POSTs the form `secret`, `response`, `remoteip` (and `sitekey` for hCaptcha) to the provider and
 * reads `success` from its JSON answer; a rejection's reason lists the provider's `error-codes`.
 * A refused destination, transport error, non-2xx status, malformed answer or timeout is a failure
 * with its reason. Never throws.
 *
 * @example
 * const captcha = new HttpCaptchaVerifier();
 * await captcha.verify(check) // { success: false, reason: 'turnstile rejected the answer: invalid-input-response' }
 */
export class HttpCaptchaVerifier implements CaptchaVerifier {
  readonly #urls: Readonly<Record<CaptchaProvider, string>>;
  readonly #policy: EgressPolicy;
  readonly #timeoutMs: number;
  readonly #headers: Readonly<Record<string, string>>;

  /** Throws if `options.egress` holds a malformed allow or deny entry. */
  constructor(options: HttpCaptchaOptions = {}) {
    this.#urls = {
      hcaptcha: options.hcaptchaUrl ?? HCAPTCHA_VERIFY_URL,
      turnstile: options.turnstileUrl ?? TURNSTILE_VERIFY_URL,
    };
    this.#policy = egressPolicy(options.egress);
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#headers = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      ...(options.userAgent === undefined ? {} : { 'user-agent': options.userAgent }),
    };
  }

  async verify(check: CaptchaCheck): Promise<CaptchaVerdict> {
    const { provider } = check;
    const form = new URLSearchParams({ secret: check.secretKey, response: check.response, remoteip: check.remoteIp });
    if (provider === 'hcaptcha') form.set('sitekey', check.siteKey);
    const response = await egressRequest(
      this.#urls[provider],
      { method: 'POST', headers: this.#headers, body: form.toString(), timeoutMs: this.#timeoutMs, maxBodyBytes: MAX_BODY_BYTES },
      this.#policy,
    );
    switch (response.kind) {
      case 'timeout':
        return { success: false, reason: `${provider} did not answer in time` };
      case 'failed':
        return { success: false, reason: `${provider} request failed: ${response.reason}` };
      case 'response':
        if (response.status < 200 || response.status >= 300) return { success: false, reason: `${provider} answered status ${response.status}` };
        if (response.truncated) return { success: false, reason: `${provider} sent an oversized answer` };
        return reasonOf(provider, response.body);
    }
  }
}
