/**
 * The verification callback (wire.md §3.8) over HTTP, through the egress guard.
 */
import type { VerificationCheck, VerificationResponse } from '../../core/admission/verification.js';
import type { Verifier } from '../../io/index.js';
import { type EgressOptions, type EgressPolicy, egressPolicy, egressRequest } from './egress.js';

/** How the verifier reaches developer servers. */
export interface HttpVerifierOptions {
  /** Where calls may go (default: public addresses on ports 80 and 443 only). */
  readonly egress?: EgressOptions;
  /** Total budget per call, resolution included (default 10 000 ms, Rivet's). */
  readonly timeoutMs?: number;
  /** A `User-Agent` sent unless the check's headers set one (default: none, e.g. `'Tavern'`). */
  readonly userAgent?: string;
}

const hasHeader = (headers: Readonly<Record<string, string>>, name: string): boolean =>
  Object.keys(headers).some((key) => key.toLowerCase() === name);

/**
 * POSTs the check's body as JSON with exactly the configured headers (plus `Content-Type` when they
 * set none, and the optional user agent). Any status counts, a 3xx included (no redirect is
 * followed); the body is never read (the socket is closed once the status arrives). A refused
 * destination or a transport error is `failed`; running out of time is `timeout`. Never throws.
 *
 * @example
 * const verifier = new HttpVerifier({ userAgent: 'Tavern' });
 * await verifier.verify(check) // { kind: 'status', status: 200 }
 */
export class HttpVerifier implements Verifier {
  readonly #policy: EgressPolicy;
  readonly #timeoutMs: number;
  readonly #userAgent: string | undefined;

  /** Throws if `options.egress` holds a malformed allow or deny entry. */
  constructor(options: HttpVerifierOptions = {}) {
    this.#policy = egressPolicy(options.egress);
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#userAgent = options.userAgent;
  }

  async verify(check: VerificationCheck): Promise<VerificationResponse> {
    const headers: Record<string, string> = { ...check.headers };
    if (!hasHeader(headers, 'content-type')) headers['content-type'] = 'application/json';
    if (this.#userAgent !== undefined && !hasHeader(headers, 'user-agent')) headers['user-agent'] = this.#userAgent;
    let body: string;
    try {
      body = JSON.stringify(check.body);
    } catch (error) {
      return { kind: 'failed', reason: `the payload is not JSON: ${error instanceof Error ? error.message : String(error)}` };
    }
    const response = await egressRequest(
      check.url,
      { method: 'POST', headers, body, timeoutMs: this.#timeoutMs, maxBodyBytes: 0 },
      this.#policy,
    );
    switch (response.kind) {
      case 'response':
        return { kind: 'status', status: response.status };
      case 'timeout':
        return { kind: 'timeout' };
      case 'failed':
        return { kind: 'failed', reason: response.reason };
    }
  }
}
