/**
 * Parser of the scenario's `infrastructure`: the regions the simulated operator runs, each with
 * its cold-start delay, crash rate, capacity and cost.
 */
import type { RegionInfo } from '../../core/world.js';
import type { CaptchaModel, Infrastructure, InfrastructureRegion, RuntimeOutageSpec, VerifierModel } from './types.js';
import { defined, problem } from '../../core/config/path.js';
import { distribution } from '../../core/config/parse-distribution.js';
import { num, safeInt, str, strictObject, u32, type Parser } from '../../core/config/strict-reader.js';

export const INFRASTRUCTURE_KEYS: readonly string[] = Object.freeze(['regions', 'lobby_count_max', 'answer_ms', 'runtime_outages', 'verifier', 'captcha']);
export const OUTAGE_KEYS: readonly string[] = Object.freeze(['at_ms', 'duration_ms', 'noticed_after_ms']);
/** How long the runtime takes to notice an outage (and its end) when a scenario does not say: the server checks the Docker engine every 5 s. */
export const DEFAULT_OUTAGE_NOTICE_MS = 5_000;
export const VERIFIER_KEYS: readonly string[] = Object.freeze(['latency_ms', 'deny_share', 'timeout_share']);
export const CAPTCHA_KEYS: readonly string[] = Object.freeze(['latency_ms', 'fail_share']);

/** The developer's verification endpoint when a scenario says nothing: fast, admits everyone. */
export const DEFAULT_VERIFIER: VerifierModel = Object.freeze({
  latencyMs: Object.freeze({ kind: 'lognormal', median: 40, p95: 150 }),
  denyShare: 0,
  timeoutShare: 0,
});

/** The captcha provider when a scenario says nothing: every answer is a solved captcha. */
export const DEFAULT_CAPTCHA: CaptchaModel = Object.freeze({ latencyMs: Object.freeze({ kind: 'constant', value: 300 }), failShare: 0 });

const share = num({ min: 0, max: 1 });
export const INFRASTRUCTURE_REGION_KEYS: readonly string[] = Object.freeze([
  'id', 'display_name', 'provider', 'coords', 'lobby_start_delay_ms', 'lobby_crash_rate_per_hour', 'lobby_count_max', 'cost_per_lobby_hour',
]);

const REGION_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const regionId: Parser<string> = (value, path, out) => {
  const id = str(value, path, out);
  if (id === undefined || REGION_ID.test(id)) return id;
  out.push(problem(path, 'invalid'));
  return undefined;
};

const coords: Parser<NonNullable<RegionInfo['coords']>> = strictObject(['latitude', 'longitude'], (f) => {
  const latitude = f.req('latitude', num({ min: -90, max: 90 }));
  const longitude = f.req('longitude', num({ min: -180, max: 180 }));
  return latitude === undefined || longitude === undefined ? undefined : { latitude, longitude };
});

const region: Parser<InfrastructureRegion> = strictObject(INFRASTRUCTURE_REGION_KEYS, (f) => {
  const id = f.req('id', regionId);
  const displayName = f.req('display_name', str);
  const info = { provider: f.opt('provider', str) ?? 'Tavern', coords: f.opt('coords', coords) };
  const lobbyStartDelayMs = f.req('lobby_start_delay_ms', distribution);
  const lobbyCrashRatePerHour = f.req('lobby_crash_rate_per_hour', num());
  const lobbyCountMax = f.req('lobby_count_max', u32);
  const costPerLobbyHour = f.opt('cost_per_lobby_hour', num());
  if (id === undefined || displayName === undefined || lobbyStartDelayMs === undefined) return undefined;
  if (lobbyCrashRatePerHour === undefined || lobbyCountMax === undefined) return undefined;
  const region = defined<RegionInfo>({ id, displayName, ...info });
  return defined<InfrastructureRegion>({ region, lobbyStartDelayMs, lobbyCrashRatePerHour, lobbyCountMax, costPerLobbyHour });
});

const regions: Parser<readonly InfrastructureRegion[]> = (value, path, out) => {
  if (!Array.isArray(value)) {
    out.push(problem(path, 'invalid-type'));
    return undefined;
  }
  if (value.length === 0) out.push(problem(path, 'empty'));
  const seen = new Set<string>();
  const parsed: InfrastructureRegion[] = [];
  value.forEach((item: unknown, i) => {
    const r = region(item, [...path, String(i)], out);
    if (r !== undefined && seen.has(r.region.id)) out.push(problem(path, String(i), 'id', 'not-unique'));
    else if (r !== undefined) parsed.push(r);
    if (r !== undefined) seen.add(r.region.id);
  });
  return parsed;
};

const outage: Parser<RuntimeOutageSpec> = strictObject(OUTAGE_KEYS, (f) => {
  const atMs = f.req('at_ms', safeInt);
  const durationMs = f.req('duration_ms', num({ above: 0, max: Number.MAX_SAFE_INTEGER, integer: true }));
  const noticedAfterMs = f.opt('noticed_after_ms', safeInt) ?? DEFAULT_OUTAGE_NOTICE_MS;
  return atMs === undefined || durationMs === undefined ? undefined : { atMs, durationMs, noticedAfterMs };
});

const outages: Parser<readonly RuntimeOutageSpec[]> = (value, path, out) => {
  if (!Array.isArray(value)) {
    out.push(problem(path, 'invalid-type'));
    return undefined;
  }
  return value.flatMap((item: unknown, i) => outage(item, [...path, String(i)], out) ?? []);
};

const verifierModel: Parser<VerifierModel> = (value, path, out) => {
  const parsed = strictObject(VERIFIER_KEYS, (f) => ({
    latencyMs: f.opt('latency_ms', distribution) ?? DEFAULT_VERIFIER.latencyMs,
    denyShare: f.opt('deny_share', share) ?? 0,
    timeoutShare: f.opt('timeout_share', share) ?? 0,
  }))(value, path, out);
  if (parsed !== undefined && parsed.denyShare + parsed.timeoutShare > 1) out.push(problem(path, 'shares-exceed-one'));
  return parsed;
};

const captchaModel: Parser<CaptchaModel> = (value, path, out) => {
  const parsed = strictObject(CAPTCHA_KEYS, (f) => ({
    latencyMs: f.opt('latency_ms', distribution) ?? DEFAULT_CAPTCHA.latencyMs,
    failShare: f.opt('fail_share', share) ?? 0,
  }))(value, path, out);
  return parsed;
};

/**
 * `verifier` (optional): the developer's verification endpoint as the fake verifier plays it,
 * `{latency_ms, deny_share, timeout_share}` (a timeout takes the verifier's 10 s). `captcha`
 * (optional): the provider, `{latency_ms, fail_share}`.
 *
 * `{regions: [{id, display_name, provider?, coords?, lobby_start_delay_ms, lobby_crash_rate_per_hour,
 * lobby_count_max, cost_per_lobby_hour?}], lobby_count_max?, answer_ms?}`: a region's `lobby_count_max` is the
 * containers it can run (a stopping one included); the top-level one the namespace's cap on active
 * lobbies (default the sum of the regions'); `answer_ms` the server's own time to answer a request
 * whose seat is ready at once (a distribution; absent: at once; `answer-ms.*` problems as any distribution's);
 * `runtime_outages` windows `[{at_ms, duration_ms, noticed_after_ms?}]` in which the container
 * engine does not answer (starts fail; the runtime reports itself unavailable `noticed_after_ms`,
 * default {@link DEFAULT_OUTAGE_NOTICE_MS}, after it began, until as long after it ended). Region items are addressed by index:
 * `infrastructure.regions.<i>.…`; ids are lowercase kebab (`id.invalid`) and unique
 * (`id.not-unique`); at least one region (`regions.empty`).
 *
 * @example
 * infrastructure({ regions: [] }, ['infrastructure'], out); // out: [['infrastructure', 'regions', 'empty']]
 */
export const infrastructure: Parser<Infrastructure> = strictObject(INFRASTRUCTURE_KEYS, (f) => {
  const list = f.req('regions', regions);
  const verifier = f.opt('verifier', verifierModel) ?? DEFAULT_VERIFIER;
  const captcha = f.opt('captcha', captchaModel) ?? DEFAULT_CAPTCHA;
  const lobbyCountMax = f.opt('lobby_count_max', u32);
  const answerMs = f.opt('answer_ms', distribution);
  const runtimeOutages = f.opt('runtime_outages', outages);
  if (list === undefined) return undefined;
  return {
    regions: list,
    verifier,
    captcha,
    ...(lobbyCountMax === undefined ? {} : { lobbyCountMax }),
    ...(answerMs === undefined ? {} : { answerMs }),
    ...(runtimeOutages === undefined ? {} : { runtimeOutages }),
  };
});
