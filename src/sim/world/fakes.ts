/**
 * The outside world of a simulated run, on virtual time: the container runtime (the one fake
 * runtime, with sampled cold starts, crashes, capacity and outages), the developer's verification
 * endpoint and the captcha provider. The services call them through the same io interfaces the
 * server's adapters implement.
 */
import type { CaptchaCheck, CaptchaVerdict } from '../../core/admission/captcha.js';
import type { VerificationCheck, VerificationResponse } from '../../core/admission/verification.js';
import { FakeRuntime, type FakeRuntimeEvent } from '../../adapters/fake/runtime.js';
import type { CaptchaVerifier, Random, Timers, Verifier } from '../../io/index.js';
import { type Stream, sample } from '../../core/distribution.js';
import { jsonString as q } from '../trace/trace.js';
import type { CaptchaModel, Infrastructure, InfrastructureRegion, VerifierModel } from '../scenario/types.js';

/** What the fakes need from the run: its clock, a way to schedule work, and its trace. */
export interface SimHost {
  now(): number;
  /** Run `job` `delay` virtual ms from now. */
  after(delay: number, job: () => void): void;
  /** A promise resolved `delay` virtual ms from now. */
  sleep(delay: number): Promise<void>;
  /** Record a step; `data` is canonical JSON text, keys in sorted order (see `Trace.appendJson`). */
  trace(kind: string, data: string): void;
}

/** How long a container takes to exit once asked to stop. */
export const STOP_DELAY_MS = 500;
/** How long the verifier waits for the developer's endpoint (wire.md: 10 s). */
export const VERIFIER_TIMEOUT_MS = 10_000;

const HOUR_MS = 3_600_000;

const DASH = 45;
const HEX_DIGITS: readonly number[] = Array.from('0123456789abcdef', (ch) => ch.charCodeAt(0));

/**
 * A seeded {@link Random}: UUID-shaped ids (version 4 layout) and seeds drawn from one stream.
 *
 * @example
 * seededRandom(createStream(1)).uuid(); // '6c1f…-…-4…-…-…', the same for the same seed
 */
export const seededRandom = (stream: Stream): Random => {
  // The id's character codes, written in place and turned into one string at once: a run mints
  // hundreds of thousands of ids, and concatenating hex pieces costs twice as much.
  const codes: number[] = new Array<number>(36).fill(DASH);
  const digits = (at: number, n: number, count: number): void => {
    let v = n;
    for (let k = count - 1; k >= 0; k--) {
      codes[at + k] = HEX_DIGITS[v & 15] as number;
      v >>>= 4;
    }
  };
  codes[14] = HEX_DIGITS[4] as number;
  return {
    u32: () => stream.u32(),
    uuid: () => {
      // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx: a, the top half of b, '4' and b's low 12 bits, c (its top bits 10), d.
      const a = stream.u32();
      const b = stream.u32();
      const c = (stream.u32() & 0x3fffffff) | 0x80000000;
      const d = stream.u32();
      digits(0, a, 8);
      digits(9, b >>> 16, 4);
      digits(15, b & 0xfff, 3);
      digits(19, c >>> 16, 4);
      digits(24, c & 0xffff, 4);
      digits(28, d, 8);
      return String.fromCharCode(...codes);
    },
  };
};

/** The fake runtime's timers on virtual time. */
const timersOf = (host: SimHost): Timers => ({
  after: (ms, fn) => {
    let live = true;
    host.after(ms, () => {
      if (live) fn();
    });
    return () => void (live = false);
  },
});

/** The trace's form of what the runtime did, as canonical JSON text. */
const traceJson = (e: FakeRuntimeEvent): string => {
  switch (e.type) {
    case 'started': {
      const crash = e.crashInMs === undefined ? '' : `"crash_in":${e.crashInMs},`;
      return `{${crash}"ready_in":${e.readyInMs ?? 0},"region":${q(e.lobby.region)},"start":${q(e.lobby.lobbyId)}}`;
    }
    case 'refused':
      return `{"refused":true,"start":${q(e.lobby.lobbyId)}}`;
    case 'stopping':
      return `{"force":${e.force},"stop":${q(e.lobbyId)}}`;
    case 'exited':
      return `{"exit":${q(e.lobbyId)},"reason":${q(e.reason)}}`;
  }
};

/**
 * The run's container runtime: the one fake runtime on virtual time, with the scenario's
 * infrastructure. A region runs at most its `lobby_count_max` containers (a stopping one
 * included); a started lobby calls ready after a sampled cold start and crashes after an
 * exponential time at the region's crash rate; a stopped one exits after {@link STOP_DELAY_MS} (at
 * once when forced); during an outage starts fail, and the runtime says it is unavailable once it
 * noticed. Every step goes to the trace.
 *
 * @example
 * const runtime = simRuntime(host, scenario.infrastructure, split(root, 'runtime'));
 * runtime.attach(matchmaker);
 */
export const simRuntime = (host: SimHost, infra: Pick<Infrastructure, 'regions' | 'runtimeOutages'>, stream: Stream): FakeRuntime => {
  const regions = new Map(infra.regions.map((r) => [r.region.id, r]));
  const regionOf = (id: string): InfrastructureRegion => {
    const region = regions.get(id);
    // A start in a region the scenario does not run is refused first (its capacity is 0).
    if (region === undefined) throw new Error(`unreachable: a container started in unknown region ${id}`);
    return region;
  };
  return new FakeRuntime({
    timers: timersOf(host),
    clock: { now: () => host.now() },
    history: false,
    capacity: (region) => regions.get(region)?.lobbyCountMax ?? 0,
    readyAfterMs: (lobby) => Math.max(0, Math.round(sample(regionOf(lobby.region).lobbyStartDelayMs, stream))),
    crashAfterMs: (lobby) => {
      const rate = regionOf(lobby.region).lobbyCrashRatePerHour;
      return rate > 0 ? Math.round((-Math.log(1 - stream.float()) / rate) * HOUR_MS) : undefined;
    },
    exitAfterStopMs: STOP_DELAY_MS,
    ...(infra.runtimeOutages === undefined ? {} : { outages: infra.runtimeOutages.map((o) => ({ from: o.atMs, to: o.atMs + o.durationMs, noticedAfterMs: o.noticedAfterMs })) }),
    observe: (event) => host.trace('runtime', traceJson(event)),
  });
};

/**
 * The developer's verification endpoint: answers 204 after a sampled latency, 403 for a share of
 * requests, and never for another share (the verifier's 10 s timeout).
 */
export class FakeVerifier implements Verifier {
  calls = 0;
  denied = 0;
  timedOut = 0;

  constructor(
    private readonly host: SimHost,
    private readonly model: VerifierModel,
    private readonly stream: Stream,
  ) {}

  async verify(check: VerificationCheck): Promise<VerificationResponse> {
    this.calls += 1;
    const u = this.stream.float();
    const latency = Math.max(0, Math.round(sample(this.model.latencyMs, this.stream)));
    if (u < this.model.timeoutShare) {
      this.timedOut += 1;
      await this.host.sleep(VERIFIER_TIMEOUT_MS);
      this.host.trace('verify', `{"kind":${q(check.kind)},"mode":${q(check.gameMode)},"timeout":true}`);
      return { kind: 'timeout' };
    }
    await this.host.sleep(Math.min(latency, VERIFIER_TIMEOUT_MS));
    const status = u < this.model.timeoutShare + this.model.denyShare ? 403 : 204;
    if (status === 403) this.denied += 1;
    this.host.trace('verify', `{"kind":${q(check.kind)},"mode":${q(check.gameMode)},"status":${status}}`);
    return { kind: 'status', status };
  }
}

/** The captcha provider: every answer is checked after a sampled latency; a share is rejected. */
export class FakeCaptcha implements CaptchaVerifier {
  calls = 0;

  constructor(
    private readonly host: SimHost,
    private readonly model: CaptchaModel,
    private readonly stream: Stream,
  ) {}

  async verify(check: CaptchaCheck): Promise<CaptchaVerdict> {
    this.calls += 1;
    const fail = this.stream.float() < this.model.failShare;
    await this.host.sleep(Math.max(0, Math.round(sample(this.model.latencyMs, this.stream))));
    this.host.trace('captcha', `{"source":${q(check.remoteIp)},"success":${!fail}}`);
    return fail ? { success: false, reason: 'the provider rejected the answer' } : { success: true };
  }
}
