/**
 * The CDN's basic auth (wire.md §6.3, realm `RivetCdn`) and what keeps its bcrypt checks from
 * pinning the server (issue 36). A request passes at once when its `Authorization` header was
 * verified against the user's current hash (memoized). Otherwise, in order:
 * - a client address (the API's: proxy headers when trusted, IPv6 by /64) over its
 *   `cdn-auth-failures` buckets of the rate-limit table is answered 429 with `Retry-After`;
 * - an unknown user is refused (a failure); a hash of a cost above 12, stored before the cap, is
 *   never checked: refused, and logged once per hash;
 * - concurrent requests with the same header share one check; a client address has at most
 *   {@link MAX_CHECKS_PER_CLIENT} checks under way (past it: 429, `Retry-After: 1`);
 * - the check runs on the {@link PasswordChecker} (a worker pool with a bounded queue: 503 when
 *   full); a wrong password counts as a failure. A check whose clients all went away is dropped
 *   from the queue.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BCRYPT_COST, bcryptCost, checkableHash } from '../../core/bcrypt-hash.js';
import type { NamespaceRecord } from '../../io/catalog.js';
import type { Clock } from '../../io/index.js';
import type { Logger } from '../../io/log.js';
import { fromNode } from '../http.js';
import { RateLimiter, rateClientOf, retryAfter, type RateBucket, type RateLimitTable } from '../rate-limit.js';
import type { CheckResult, PasswordChecker } from './bcrypt-pool.js';

/** What a request's credentials come to: let it in, 401, 429, 503, or nothing (its client left). */
export type AuthAnswer =
  | { readonly kind: 'allowed' }
  | { readonly kind: 'refused' }
  | { readonly kind: 'limited'; readonly seconds: number }
  | { readonly kind: 'busy'; readonly seconds: number }
  | { readonly kind: 'gone' };

export interface CdnAuthDeps {
  readonly checker: PasswordChecker;
  readonly clock: Clock;
  /** Read the client address from `cf-connecting-ip` / `x-forwarded-for` (`TAVERN_TRUST_PROXY`). */
  readonly trustProxyHeaders: boolean;
  /** `TAVERN_RATE_LIMITS`; its `cdn-auth-failures` buckets. Absent (`off`): failures are not limited. */
  readonly rateLimits?: RateLimitTable;
  readonly logger?: Logger;
}

/** Checks under way per client address at most. */
export const MAX_CHECKS_PER_CLIENT = 2;
/** How many verified `Authorization` headers are remembered. */
const MAX_VERIFIED = 10_000;
/** How many over-cost hashes are remembered as logged. */
const MAX_WARNED = 10_000;
const FAILURES = 'cdn-auth-failures';

const ALLOWED: AuthAnswer = { kind: 'allowed' };
const REFUSED: AuthAnswer = { kind: 'refused' };
const ANSWERS: Readonly<Record<CheckResult, AuthAnswer>> = { match: ALLOWED, mismatch: REFUSED, busy: { kind: 'busy', seconds: 1 }, gone: { kind: 'gone' } };

/** The `Authorization: Basic` credentials, if the header carries well-formed ones. */
const basicCredentials = (header: string | undefined): { user: string; password: string } | undefined => {
  const m = header === undefined ? null : /^basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
};

/** One check under way, shared by the requests carrying the same header. */
interface Pending {
  readonly result: Promise<CheckResult>;
  readonly controller: AbortController;
  waiters: number;
}

/**
 * The CDN's basic-auth gate, one per CDN handler.
 *
 * @example
 * const auth = new CdnAuth({ checker: new BcryptPool(), clock: systemClock, trustProxyHeaders: false, rateLimits: DEFAULT_RATE_LIMITS });
 * const answer = await auth.check(site.namespace, req, res); // { kind: 'refused' } → 401
 */
export class CdnAuth {
  readonly #deps: CdnAuthDeps;
  readonly #failures: readonly RateBucket[];
  readonly #limiter: RateLimiter;
  /** sha256(namespace id, Authorization header) → the bcrypt hash it was verified against. */
  readonly #verified = new Map<string, string>();
  /** By header digest and hash: the check under way. */
  readonly #pending = new Map<string, Pending>();
  /** By client address: its checks under way. */
  readonly #perClient = new Map<string, number>();
  readonly #warned = new Set<string>();

  constructor(deps: CdnAuthDeps) {
    this.#deps = deps;
    this.#failures = deps.rateLimits?.[FAILURES] ?? [];
    this.#limiter = new RateLimiter(deps.clock);
  }

  async check(ns: NamespaceRecord, req: IncomingMessage, res: ServerResponse): Promise<AuthAnswer> {
    const header = req.headers.authorization;
    const credentials = basicCredentials(header);
    if (credentials === undefined) return REFUSED;
    const user = ns.cdn.authUsers.find((u) => u.user === credentials.user);
    const memo = createHash('sha256').update(ns.id).update('\0').update(header ?? '').digest('base64url');
    if (user !== undefined && this.#verified.get(memo) === user.passwordHash) return ALLOWED;
    const incoming = fromNode(req, res);
    const client = rateClientOf(incoming, this.#deps.trustProxyHeaders);
    const retryAt = this.#limiter.full(FAILURES, this.#failures, client);
    if (retryAt !== undefined) return { kind: 'limited', seconds: retryAfter(retryAt, this.#deps.clock.now()) };
    if (user === undefined) {
      this.#limiter.hit(FAILURES, this.#failures, client);
      return REFUSED;
    }
    if (!checkableHash(user.passwordHash)) {
      this.#warn(ns, user.user, user.passwordHash);
      return REFUSED;
    }
    const key = `${memo}\n${user.passwordHash}`;
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      if ((this.#perClient.get(client) ?? 0) >= MAX_CHECKS_PER_CLIENT) return { kind: 'limited', seconds: 1 };
      pending = this.#start(key, memo, client, credentials.password, user.passwordHash);
    }
    return ANSWERS[await this.#join(pending, incoming.signal)];
  }

  #start(key: string, memo: string, client: string, password: string, hash: string): Pending {
    const controller = new AbortController();
    this.#perClient.set(client, (this.#perClient.get(client) ?? 0) + 1);
    const result = this.#deps.checker.check(password, hash, controller.signal)
      .then((r) => {
        if (r === 'match') this.#remember(memo, hash);
        if (r === 'mismatch') this.#limiter.hit(FAILURES, this.#failures, client);
        return r;
      })
      .finally(() => {
        this.#pending.delete(key);
        const left = (this.#perClient.get(client) ?? 1) - 1;
        if (left > 0) this.#perClient.set(client, left);
        else this.#perClient.delete(client);
      });
    const pending: Pending = { result, controller, waiters: 0 };
    this.#pending.set(key, pending);
    return pending;
  }

  /** Waits for a shared check; when its last waiter's client goes away, the check is dropped. */
  #join(pending: Pending, signal: AbortSignal): Promise<CheckResult> {
    pending.waiters += 1;
    const leave = (): void => {
      pending.waiters -= 1;
      if (pending.waiters === 0) pending.controller.abort();
    };
    if (signal.aborted) leave();
    else signal.addEventListener('abort', leave, { once: true });
    return pending.result.finally(() => signal.removeEventListener('abort', leave));
  }

  #remember(memo: string, hash: string): void {
    if (this.#verified.size >= MAX_VERIFIED) this.#verified.delete(this.#verified.keys().next().value as string);
    this.#verified.set(memo, hash);
  }

  #warn(ns: NamespaceRecord, user: string, hash: string): void {
    if (this.#warned.has(hash) || this.#warned.size >= MAX_WARNED) return;
    this.#warned.add(hash);
    this.#deps.logger?.warn(
      { namespaceId: ns.id, user, cost: bcryptCost(hash) ?? null, allowed: `${BCRYPT_COST.min}..${BCRYPT_COST.max}` },
      'a CDN auth user has a password hash of a cost the CDN does not check: every request naming the user is refused; set a new hash for the user',
    );
  }
}
