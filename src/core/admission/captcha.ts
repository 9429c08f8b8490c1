import type { CaptchaConfig } from '../config/types.js';
import { type MatchError, matchError } from '../errors.js';
import type { CaptchaRecord } from '../world.js';

/** The client's captcha answer (wire `captcha`: `{hcaptcha: {client_response}}` or `{turnstile: ...}`). */
export interface CaptchaResponse {
  readonly hcaptcha?: { readonly clientResponse: string };
  readonly turnstile?: { readonly clientResponse: string };
}

export type CaptchaProvider = 'hcaptcha' | 'turnstile';

/** Ask the provider whether `response` is a solved captcha; feed the answer to `recordCaptcha`. */
export interface CaptchaCheck {
  readonly namespaceId: string;
  readonly provider: CaptchaProvider;
  readonly siteKey: string;
  readonly secretKey: string;
  readonly response: string;
  /** The client address (`remoteip`); also the key the success is recorded under. */
  readonly remoteIp: string;
}

/** What the provider said: `success`, or why not (rejected, timeout, transport failure). */
export type CaptchaVerdict = { readonly success: true } | { readonly success: false; readonly reason: string };

const providerOf = (cfg: CaptchaConfig): CaptchaProvider => (cfg.turnstile !== undefined ? 'turnstile' : 'hcaptcha');

const keysOf = (cfg: CaptchaConfig): { readonly siteKey: string; readonly secretKey: string } =>
  cfg.turnstile ?? { siteKey: cfg.hcaptcha?.siteKey ?? '', secretKey: cfg.hcaptcha?.secretKey ?? '' };

/**
 * Whether a request from this client must solve a captcha: never verified, verified longer than
 * `verification_ttl` ago, or `requests_before_reverify` requests made since (at least one request
 * is always allowed after a fresh verification).
 *
 * @example
 * needsCaptcha(undefined, cfg, now) // true
 */
export const needsCaptcha = (record: CaptchaRecord | undefined, cfg: CaptchaConfig, now: number): boolean =>
  record === undefined ||
  now - record.verifiedAt > cfg.verificationTtl ||
  record.requestsSince >= Math.max(1, cfg.requestsBeforeReverify);

/**
 * The 403 `CAPTCHA_CAPTCHA_REQUIRED` with the wire metadata: `{"hcaptcha": {"site_id": key}}` or
 * `{"turnstile": {"site_key": key}}` (Rivet's key names, kept for client compatibility).
 *
 * @example
 * captchaRequired(cfg).metadata // { turnstile: { site_key: '0x4AAA...' } }
 */
export const captchaRequired = (cfg: CaptchaConfig): MatchError => {
  const { siteKey } = keysOf(cfg);
  const metadata = providerOf(cfg) === 'turnstile' ? { turnstile: { site_key: siteKey } } : { hcaptcha: { site_id: siteKey } };
  return matchError('CAPTCHA_CAPTCHA_REQUIRED', undefined, { metadata });
};

/**
 * The provider check for a client's answer, or `CAPTCHA_CAPTCHA_FAILED` when the answer is for
 * the other provider (Rivet answered 500 there).
 *
 * @example
 * captchaCheck('ns', cfg, { turnstile: { clientResponse: 'x' } }, '1.2.3.4')
 */
export const captchaCheck = (
  namespaceId: string,
  cfg: CaptchaConfig,
  answer: CaptchaResponse,
  remoteIp: string,
): CaptchaCheck | MatchError => {
  const provider = providerOf(cfg);
  const response = answer[provider]?.clientResponse;
  if (response === undefined) {
    return matchError('CAPTCHA_CAPTCHA_FAILED', { reason: `expected a ${provider} response` }, { path: ['captcha', provider] });
  }
  return { namespaceId, provider, ...keysOf(cfg), response, remoteIp };
};
