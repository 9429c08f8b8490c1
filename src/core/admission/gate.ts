import type { GameMode } from '../config/types.js';
import { type MatchError, matchError } from '../errors.js';
import type { Client } from '../matchmaker/request.js';
import { checkSourceCap } from '../matchmaker/request.js';
import type { Decision, Tx } from '../tx.js';
import type { Version } from '../world.js';
import { captchaCheck, type CaptchaCheck, captchaRequired, type CaptchaResponse, needsCaptcha } from './captcha.js';
import { isPassed, type PayloadInput, verificationCheck, type VerificationCheck, type VerificationPass } from './verification.js';

/**
 * How a find, join or create ends: rejected with a code; waiting for a captcha provider or a
 * verification URL (perform the check, then call again with its result); or admitted.
 */
export type Admission<T> =
  | {
      readonly kind: 'rejected';
      readonly error: MatchError;
      /**
       * What to persist although the request was refused: a refusal after the captcha gate still
       * counts towards the client's `requests_before_reverify`.
       */
      readonly decision?: Decision<undefined>;
    }
  | { readonly kind: 'captcha'; readonly check: CaptchaCheck }
  | { readonly kind: 'verify'; readonly checks: readonly VerificationCheck[] }
  | { readonly kind: 'admitted'; readonly decision: Decision<T> };

/** What the client brought to pass the gates. */
export interface Credentials {
  readonly captcha?: CaptchaResponse;
  readonly verificationData?: unknown;
  /** Passes from {@link verificationVerdict} for the checks an earlier call asked for. */
  readonly verified?: readonly VerificationPass[];
}

export const rejected = (error: MatchError): { readonly kind: 'rejected'; readonly error: MatchError } => ({
  kind: 'rejected',
  error,
});

/**
 * A refusal after the gates: it keeps what the gates recorded (the captcha request count).
 *
 * @example
 * return refusedAfterGates(tx, matchError('MATCHMAKER_LOBBY_FULL'));
 */
export const refusedAfterGates = (tx: Tx, error: MatchError): Admission<never> => ({
  kind: 'rejected',
  error,
  decision: tx.commit(undefined),
});

type Action = 'find' | 'join' | 'create';

const DISABLED = {
  find: 'MATCHMAKER_FIND_DISABLED',
  join: 'MATCHMAKER_JOIN_DISABLED',
  create: 'MATCHMAKER_CUSTOM_LOBBIES_DISABLED',
} as const;

/**
 * The action's enablement: find and join are enabled unless disabled, create is disabled unless
 * enabled (the resolved config already applied those defaults); Tavern issues no game-user
 * identities, so an identity requirement other than `none` cannot be met.
 *
 * @example
 * actionGate(mode, 'create') // MATCHMAKER_CUSTOM_LOBBIES_DISABLED unless actions.create.enabled
 */
export const actionGate = (mode: GameMode, action: Action, path?: readonly string[]): MatchError | undefined => {
  const cfg = mode.actions[action];
  const extra = path ? { path } : undefined;
  if (!cfg.enabled) return matchError(DISABLED[action], { game_mode: mode.name }, extra);
  if (cfg.identityRequirement !== 'none') return matchError('MATCHMAKER_IDENTITY_REQUIRED', { game_mode: mode.name }, extra);
  return undefined;
};

export interface GateInput {
  /** The version whose modes are asked (for a join: the lobby's own). */
  readonly version: Version;
  /** The namespace's current version: its captcha rules apply to every request. */
  readonly current: Version;
  readonly client: Client;
  readonly seats: number;
  readonly credentials: Credentials;
  /** The modes whose `verification` applies, with the payload details of this request. */
  readonly verify: readonly { readonly mode: GameMode; readonly payload: Omit<PayloadInput, 'mode' | 'lobbyGroupId'> }[];
  readonly action: Action;
}

/**
 * The per-client cap, then captcha, then verification. Returns the non-admitting outcome, or
 * undefined to go on (having counted the request against the client's captcha budget in `tx`).
 *
 * @example
 * const stop = passGates(tx, input); if (stop) return stop;
 */
export const passGates = (
  tx: Tx,
  input: GateInput,
): Exclude<Admission<never>, { readonly kind: 'admitted' }> | undefined => {
  const ns = tx.ns;
  const capError = checkSourceCap(ns.settings, input.client, ns.sources.get(input.client.ip) ?? 0, input.seats);
  if (capError) return rejected(capError);
  const captcha = input.current.config.captcha;
  if (captcha !== undefined) {
    const record = ns.captcha.get(input.client.ip);
    if (needsCaptcha(record, captcha, tx.now)) {
      if (input.credentials.captcha === undefined) return rejected(captchaRequired(captcha));
      const check = captchaCheck(ns.id, captcha, input.credentials.captcha, input.client.ip);
      return 'code' in check ? rejected(check) : { kind: 'captcha', check };
    }
    if (record !== undefined) {
      tx.patch({ captcha: ns.captcha.set(input.client.ip, { verifiedAt: record.verifiedAt, requestsSince: record.requestsSince + 1 }) });
    }
  }
  const checks: VerificationCheck[] = [];
  for (const { mode, payload } of input.verify) {
    const cfg = mode.actions[input.action].verification;
    if (cfg === undefined) continue;
    const lobbyGroupId = input.version.lobbyGroupIds.get(mode.name) ?? mode.name;
    // Fixed fields first: V8 builds `{ ...spread, more }` through a slow path (payload has neither).
    const check = verificationCheck(cfg, { mode, lobbyGroupId, ...payload });
    if (!isPassed(check, input.credentials.verified)) checks.push(check);
  }
  return checks.length > 0 ? { kind: 'verify', checks } : undefined;
};
