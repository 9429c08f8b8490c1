/** Validation of `config.matchmaker.captcha` (wire.md §2.1), with Rivet's problem names. */
import type { CaptchaConfig, Problem } from './types.js';
import { LIMITS } from './defaults.js';
import { problem, type Path } from './path.js';
import { lengthProblem } from './validate-text.js';

function validateKey(key: string | undefined, other: string | undefined, max: number, at: Path, out: Problem[]): void {
  if (key === undefined) {
    // 23.2's hcaptcha may carry only `level`; one key without the other cannot be used.
    if (other !== undefined) out.push(problem(at, 'required'));
    return;
  }
  const length = lengthProblem(key, 1, max);
  if (length !== undefined) out.push(problem(at, length));
}

/**
 * Validates the captcha block: `requests-before-reverify.too-high` (> 600),
 * `verification-ttl.too-high` (> 12 h), `captcha-meta.must-have-one` (no provider), and the key
 * lengths of both providers (site key 1–36 bytes, secret key 1–42 bytes; an hCaptcha key without
 * its partner is `required`).
 *
 * @example
 * validateCaptcha({ requestsBeforeReverify: 601, verificationTtl: 0 }, out);
 * // out: [...'requests-before-reverify', 'too-high'], [...'captcha-meta', 'must-have-one']
 */
export function validateCaptcha(captcha: CaptchaConfig | undefined, out: Problem[]): void {
  if (captcha === undefined) return;
  const at = ['config', 'matchmaker', 'captcha'];
  if (captcha.requestsBeforeReverify > LIMITS.requestsBeforeReverify) out.push(problem(at, 'requests-before-reverify', 'too-high'));
  if (captcha.verificationTtl > LIMITS.verificationTtlMs) out.push(problem(at, 'verification-ttl', 'too-high'));
  const { hcaptcha, turnstile } = captcha;
  if (hcaptcha === undefined && turnstile === undefined) out.push(problem(['config', 'matchmaker', 'captcha-meta'], 'must-have-one'));
  if (hcaptcha !== undefined) {
    validateKey(hcaptcha.siteKey, hcaptcha.secretKey, LIMITS.siteKeyBytes, [...at, 'hcaptcha', 'site-key'], out);
    validateKey(hcaptcha.secretKey, hcaptcha.siteKey, LIMITS.secretKeyBytes, [...at, 'hcaptcha', 'secret-key'], out);
  }
  if (turnstile !== undefined) {
    validateKey(turnstile.siteKey, turnstile.secretKey, LIMITS.siteKeyBytes, [...at, 'turnstile', 'site-key'], out);
    validateKey(turnstile.secretKey, turnstile.siteKey, LIMITS.secretKeyBytes, [...at, 'turnstile', 'secret-key'], out);
  }
}
