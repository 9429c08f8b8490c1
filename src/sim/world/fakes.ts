/**
 * The outside world of a simulated run, on virtual time: a container runtime whose lobbies become
 * ready after a sampled cold start and may crash, the developer's verification endpoint and the
 * captcha provider. The services call them through the same io interfaces the server's adapters
 * implement.
 */
import type { CaptchaCheck, CaptchaVerdict } from '../../core/admission/captcha.js';
import type { VerificationCheck, VerificationResponse } from '../../core/admission/verification.js';
import type { StartLobby, StopLobby } from '../../core/effects.js';
import type { CaptchaVerifier, ExitReason, Random, Runtime, Verifier } from '../../io/index.js';
import { type Stream, sample } from '../engine/random.js';
import { jsonString as q } from '../trace/trace.js';
import type { CaptchaModel, InfrastructureRegion, VerifierModel } from '../scenario/types.js';

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
/** How often a running container's distant crash is looked at again (see `FakeRuntime`). */
const CRASH_CHECK_MS = HOUR_MS;

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

interface Container {
  readonly namespaceId: string;
  readonly region: string;
  /** Bumped when the container goes away, so its pending ready/crash jobs become no-ops. */
  alive: boolean;
}

/** Where the fake runtime reports: the game's `lobbies/ready` call and the container exits. */
export interface FakeRuntimeListener {
  ready(namespaceId: string, lobbyId: string): void;
  exited(namespaceId: string, lobbyId: string, reason: ExitReason): void;
}

/**
 * A container runtime on virtual time. `start` refuses a container when its region already runs
 * `lobby_count_max` of them; a started lobby calls ready after a sampled cold start and crashes
 * after an exponential time at the region's crash rate; a stopped one exits after
 * {@link STOP_DELAY_MS} (at once when forced).
 */
export class FakeRuntime implements Runtime {
  readonly #regions: ReadonlyMap<string, InfrastructureRegion>;
  readonly #containers = new Map<string, Container>();
  readonly #running = new Map<string, number>();
  readonly #host: SimHost;
  readonly #stream: Stream;
  #listener: FakeRuntimeListener | undefined;
  started = 0;
  refused = 0;
  crashed = 0;

  constructor(host: SimHost, regions: readonly InfrastructureRegion[], stream: Stream) {
    this.#host = host;
    this.#stream = stream;
    this.#regions = new Map(regions.map((r) => [r.region.id, r]));
  }

  listen(listener: FakeRuntimeListener): void {
    this.#listener = listener;
  }

  /** Containers running in `region` now. */
  running(region: string): number {
    return this.#running.get(region) ?? 0;
  }

  /** Whether `region` runs as many containers as it can. */
  full(region: string): boolean {
    const cap = this.#regions.get(region)?.lobbyCountMax ?? 0;
    return this.running(region) >= cap;
  }

  start(lobby: StartLobby): Promise<void> {
    const infra = this.#regions.get(lobby.region);
    if (infra === undefined || this.full(lobby.region)) {
      this.refused += 1;
      this.#host.trace('runtime', `{"refused":true,"start":${q(lobby.lobbyId)}}`);
      return Promise.reject(new Error(`region ${lobby.region} runs ${this.running(lobby.region)} lobbies, its lobby_count_max`));
    }
    const container: Container = { namespaceId: lobby.namespaceId, region: lobby.region, alive: true };
    this.#containers.set(lobby.lobbyId, container);
    this.#running.set(lobby.region, this.running(lobby.region) + 1);
    this.started += 1;
    const delay = Math.max(0, Math.round(sample(infra.lobbyStartDelayMs, this.#stream)));
    const crashIn = infra.lobbyCrashRatePerHour > 0 ? Math.round((-Math.log(1 - this.#stream.float()) / infra.lobbyCrashRatePerHour) * HOUR_MS) : undefined;
    const crash = crashIn === undefined ? '' : `"crash_in":${crashIn},`;
    this.#host.trace('runtime', `{${crash}"ready_in":${delay},"region":${q(lobby.region)},"start":${q(lobby.lobbyId)}}`);
    this.#host.after(delay, () => {
      if (container.alive) this.#listener?.ready(lobby.namespaceId, lobby.lobbyId);
    });
    if (crashIn !== undefined) this.#crashIn(lobby.lobbyId, container, crashIn);
    return Promise.resolve();
  }

  /**
   * Crash the container `delay` ms from now if it still runs, looking at least every hour: most
   * crash times fall days away, and a lobby that stopped long before would otherwise hold its
   * event in the queue until then (hundreds of thousands over a day at 100k CCU).
   */
  #crashIn(lobbyId: string, container: Container, delay: number): void {
    const step = Math.min(delay, CRASH_CHECK_MS);
    this.#host.after(step, () => {
      if (!container.alive) return;
      if (delay > step) return this.#crashIn(lobbyId, container, delay - step);
      this.crashed += 1;
      this.#gone(lobbyId, container, 'crashed');
    });
  }

  stop(stop: StopLobby): Promise<void> {
    const container = this.#containers.get(stop.lobbyId);
    if (container === undefined || !container.alive) return Promise.resolve();
    this.#host.trace('runtime', `{"force":${stop.force},"stop":${q(stop.lobbyId)}}`);
    if (stop.force) this.#gone(stop.lobbyId, container, 'exited');
    else this.#host.after(STOP_DELAY_MS, () => {
      if (container.alive) this.#gone(stop.lobbyId, container, 'exited');
    });
    return Promise.resolve();
  }

  #gone(lobbyId: string, container: Container, reason: ExitReason): void {
    container.alive = false;
    this.#containers.delete(lobbyId);
    this.#running.set(container.region, this.running(container.region) - 1);
    this.#host.trace('runtime', `{"exit":${q(lobbyId)},"reason":${q(reason)}}`);
    this.#listener?.exited(container.namespaceId, lobbyId, reason);
  }
}

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
