/**
 * One simulated run: the matchmaker services (the server's own, with the memory store) driven on a
 * virtual clock by synthetic or recorded demand, against a fake runtime, verifier and captcha
 * provider. Deterministic: the same scenario and seed give the same trace hash on any machine.
 */
import { MemoryMatchStore } from '../../adapters/memory/match-store.js';
import type { CaptchaResponse } from '../../core/admission/captcha.js';
import type { MatchEvent } from '../../core/events.js';
import { makeVersion } from '../../core/world.js';
import { DEFAULT_NAMESPACE_SETTINGS, createWorld } from '../../core/world.js';
import { addNamespace } from '../../core/namespace.js';
import { TICK_INTERVAL_MS } from '../../core/tick.js';
import { Matchmaker, type MatchOutcome } from '../../services/matchmaker.js';
import { Simulation } from '../engine/clock.js';
import { nextArrival } from '../engine/curve.js';
import { createStream, sample, split, type Stream } from '../../core/distribution.js';
import type { Histogram } from '../engine/stats.js';
import { jsonString as q, Trace, type TraceRecord } from '../trace/trace.js';
import type { RecordedRequest, RegionDemand, Scenario } from '../scenario/types.js';
import { FakeCaptcha, FakeVerifier, seededRandom, simRuntime, type SimHost } from './fakes.js';
import { idleViolations, portViolations } from './checks.js';
import type { DecisionLog } from './decisions.js';
import { Driver } from './driver.js';
import { MetricsCollector, type RunBreakdown, type RunMetrics, type Sample } from './metrics.js';
import { traceEventJson } from './trace-events.js';

/** The services' clock reads this epoch plus virtual time (2026-01-01T00:00:00Z). */
export const SIM_EPOCH = Date.UTC(2026, 0, 1);
/** The namespace every run plays in. */
export const SIM_NAMESPACE = 'sim';
const SAMPLE_EVERY_MS = 60_000;
/** Time from a ready seat to the client's connection to the lobby (the fidelity workload's clients draw the same). */
export const CONNECT_DELAY = { kind: 'lognormal', median: 800, p95: 3000 } as const;

export interface RunOptions {
  /** Overrides the scenario's seed. */
  readonly seed?: number;
  /** Keep the trace records (golden files, divergence reports); the hash is always computed. */
  readonly keepTrace?: boolean;
  /** Replaces the synthetic demand. */
  readonly recorded?: readonly RecordedRequest[];
  /**
   * Replaces the synthetic demand, read as the run goes: batches of requests in time order, each
   * batch pulled when the virtual clock reaches the previous one's last request, so only one batch
   * is held at a time whatever the recording's length (the deploy preview's). Not with `recorded`.
   */
  readonly recordedBatches?: AsyncIterable<readonly RecordedRequest[]>;
  /** Called with the fraction of virtual time done, at most every 1% of it. */
  readonly onProgress?: (fraction: number) => void;
  /** Receives the trace as JSONL text while the run goes (`--trace FILE`), in chunks of whole lines. */
  readonly traceSink?: (chunk: string) => void;
  /** Called after each per-minute sample with its virtual time and the queue events handled so far. */
  readonly onSample?: (t: number, events: number) => void;
  /** Keeps at most this many per-minute samples, evenly spaced (a long replay's charts: the deploy preview); default all. */
  readonly maxSamples?: number;
  /** Keeps the services' decisions, to replay them on the core alone (the benchmark). */
  readonly decisions?: DecisionLog;
}

export interface RunResult {
  readonly scenario: string;
  readonly seed: number;
  readonly metrics: RunMetrics;
  /** Lobbies by region and by game mode: peaks and lobby-hours. */
  readonly breakdown: RunBreakdown;
  readonly samples: readonly Sample[];
  readonly fillHistogram: Histogram;
  /** Queue events handled (arrivals, timers, runtime and network replies). */
  readonly events: number;
  readonly trace: { readonly hash: string; readonly length: number; readonly records?: readonly TraceRecord[] };
  /** Broken invariants (empty on a correct run). */
  readonly violations: readonly string[];
  /** Whether the virtual clock ever went backwards (never, or the queue is broken). */
  readonly clockMonotone: boolean;
}

type Kind = 'find' | 'join' | 'create';

interface Arrival {
  readonly kind: Kind;
  readonly gameMode: string;
  readonly region: string;
  readonly party: number;
  readonly sessionMs: number;
  /** Per player: whether it connects once its seat is ready. */
  readonly connects: readonly boolean[];
  /** How long after its seat is ready the party connects (recorded); absent: drawn from {@link CONNECT_DELAY}. */
  readonly connectMs?: number;
  readonly dynamicMaxPlayers?: number;
  readonly tags?: Readonly<Record<string, string>>;
}

interface Pending {
  readonly arrivedAt: number;
  /** When the answer reaches the client: its seat is ready for it no sooner. */
  readonly answeredAt: number;
  readonly arrival: Arrival;
  readonly lobbyId: string;
  readonly index: number;
}

const KINDS: readonly Kind[] = ['find', 'join', 'create'];

const drawKind = (mix: RegionDemand['mix'], stream: Stream): Kind => {
  const total = mix.find + mix.join + mix.create;
  let u = stream.float() * total;
  for (const kind of KINDS) {
    u -= mix[kind];
    if (u < 0 && mix[kind] > 0) return kind;
  }
  return KINDS.findLast((k) => mix[k] > 0) ?? 'find';
};

const drawArrival = (mode: string, region: string, d: RegionDemand, stream: Stream): Arrival => {
  const drawn = sample(d.partySize, stream);
  const party = Math.max(1, Math.round(typeof drawn === 'string' ? Number(drawn) : drawn));
  const kind = drawKind(d.mix, stream);
  const sessionMs = Math.max(1, Math.round(sample(d.sessionMs, stream)));
  const connects: boolean[] = [];
  for (let i = 0; i < party; i++) connects.push(stream.float() >= d.noShowShare);
  const dynamicMaxPlayers = d.dynamicMaxPlayers === undefined ? undefined : Math.max(1, Math.round(sample(d.dynamicMaxPlayers, stream)));
  return {
    kind,
    gameMode: mode,
    region,
    party,
    sessionMs,
    connects,
    ...(dynamicMaxPlayers === undefined ? {} : { dynamicMaxPlayers }),
    ...(d.tags === undefined ? {} : { tags: d.tags }),
  };
};


/**
 * Run `scenario` to its end.
 *
 * @example
 * const result = await runScenario(builtinScenario('steady'), { seed: 7 });
 * result.metrics.timeToReadyMs.p95;
 */
export async function runScenario(scenario: Scenario, options: RunOptions = {}): Promise<RunResult> {
  const seed = (options.seed ?? scenario.seed) >>> 0;
  const root = createStream(seed);
  const sim = new Simulation<() => void>(0);
  const trace = new Trace({ keep: options.keepTrace === true, sink: options.traceSink });
  const driver = new Driver(sim, scenario.durationMs, options.onProgress, options.recordedBatches !== undefined);
  const log = options.decisions;
  const virtualClock = { now: () => SIM_EPOCH + sim.now() };
  const clock = log === undefined ? virtualClock : log.clock(virtualClock);
  const host: SimHost = {
    now: () => sim.now(),
    after: (delay, job) => void sim.scheduleIn(delay, job),
    sleep: (delay) => driver.sleep(delay),
    trace: (kind, data) => trace.appendJson(sim.now(), kind, data),
  };
  const infra = scenario.infrastructure;
  const runtime = simRuntime(host, infra, split(root, 'runtime'));
  const verifier = new FakeVerifier(host, infra.verifier, split(root, 'verifier'));
  const captcha = new FakeCaptcha(host, infra.captcha, split(root, 'captcha'));
  const capacity = infra.lobbyCountMax ?? infra.regions.reduce((n, r) => n + r.lobbyCountMax, 0);
  const world = addNamespace(createWorld(infra.regions.map((r) => r.region)), SIM_NAMESPACE, {
    ...DEFAULT_NAMESPACE_SETTINGS,
    lobbyCountMax: capacity,
  });
  const store = log === undefined ? new MemoryMatchStore(world) : log.store(world, () => sim.now(), clock);
  const ids = seededRandom(split(root, 'ids'));
  let effectFailures = 0;
  const mm = new Matchmaker({
    store,
    clock,
    random: log === undefined ? ids : log.random(ids),
    verifier,
    captcha,
    runtime,
    routes: { bind: () => Promise.resolve(), unbind: () => Promise.resolve() },
    logs: { append: () => Promise.resolve() },
    effectFailed: () => void (effectFailures += 1),
    background: (task) => driver.spawn(task()),
  });
  const metrics = new MetricsCollector(new Map(infra.regions.map((r) => [r.region.id, r.costPerLobbyHour ?? 0])), SIM_EPOCH, options.maxSamples);
  const violations: string[] = [];
  const spawn = (task: Promise<unknown>): void => driver.spawn(task);

  // Clients: seats waiting for their lobby, and lobbies a join can pick (a server browser).
  const pending = new Map<string, Pending>();
  const earlyReady = new Set<string>();
  const directory = new Map<string, string[]>();
  const listed = new Map<string, { readonly key: string; index: number }>();
  const lobbyKey = (mode: string, region: string): string => `${mode}\u0001${region}`;
  const clientStream = split(root, 'clients');
  let ipCounter = 0;
  const nextIp = (): string => {
    ipCounter += 1;
    return `10.${(ipCounter >>> 16) & 255}.${(ipCounter >>> 8) & 255}.${ipCounter & 255}`;
  };
  // Every request carries a captcha answer when the version asks for one.
  const credentials: { readonly captcha?: CaptchaResponse } =
    scenario.resolved.captcha === undefined ? {} : { captcha: scenario.resolved.captcha.turnstile !== undefined ? { turnstile: { clientResponse: 'sim' } } : { hcaptcha: { clientResponse: 'sim' } } };

  const unlist = (lobbyId: string): void => {
    const entry = listed.get(lobbyId);
    if (entry === undefined) return;
    listed.delete(lobbyId);
    const list = directory.get(entry.key) as string[];
    // Swap the last lobby into the freed place: O(1), whatever the directory's size.
    const last = list.pop() as string;
    if (last !== lobbyId) {
      list[entry.index] = last;
      (listed.get(last) as { index: number }).index = entry.index;
    }
  };

  const list = (namespaceId: string, lobbyId: string): void => {
    const lobby = store.world.namespaces.get(namespaceId)?.lobbies.get(lobbyId);
    if (lobby === undefined || lobby.publicity !== 'public') return;
    const key = lobbyKey(lobby.gameMode, lobby.region);
    const entries = directory.get(key) ?? [];
    listed.set(lobby.id, { key, index: entries.length });
    entries.push(lobby.id);
    directory.set(key, entries);
  };

  /** The client learns at `readyAt` (now or later) that its seat is ready, and connects after its own delay. */
  const connect = (playerId: string, lobbyId: string, arrival: Arrival, index: number, readyAt: number, arrivedAt: number): void => {
    metrics.ready(readyAt - arrivedAt);
    if (arrival.connects[index] !== true) return;
    host.after(readyAt - sim.now() + (arrival.connectMs ?? Math.round(sample(CONNECT_DELAY, clientStream))), () =>
      spawn(
        (async () => {
          const ref = { namespaceId: SIM_NAMESPACE, lobbyId, playerId };
          const connected = await mm.playerConnected(ref);
          if (!connected.ok) return;
          host.after(arrival.sessionMs, () => spawn(mm.playerDisconnected(ref)));
        })(),
      ),
    );
  };

  const onEvents = (events: readonly MatchEvent[]): void => {
    metrics.onEvents(events, clock.now());
    for (const e of events) {
      trace.appendJson(sim.now(), 'event', traceEventJson(e));
      if (e.type === 'lobby-ready') list(e.namespaceId, e.lobbyId);
      else if (e.type === 'lobby-stopping') unlist(e.lobbyId);
      else if (e.type === 'seat-ready') {
        const p = pending.get(e.playerId);
        if (p === undefined) earlyReady.add(e.playerId);
        else {
          pending.delete(e.playerId);
          connect(e.playerId, e.lobbyId, p.arrival, p.index, Math.max(sim.now(), p.answeredAt), p.arrivedAt);
        }
      } else if (e.type === 'seat-failed') {
        pending.delete(e.playerId);
        metrics.seatFailed(e.error.code);
      }
    }
  };
  mm.hub.subscribe(onEvents);
  runtime.attach({
    lobbyReady: (ref) => {
      const task = mm.lobbyReady(ref);
      spawn(task);
      return task;
    },
    exited: (namespaceId, lobbyId, reason) => spawn(mm.lobbyExited({ namespaceId, lobbyId }, reason)),
  });

  // Requests are object literals with the optional parts spread last: V8 (Node 20) builds
  // `{ ...spread, more }` many times slower.
  const request = (arrival: Arrival): Promise<MatchOutcome> => {
    const client = { ip: nextIp() };
    const max = arrival.dynamicMaxPlayers === undefined ? {} : { maxPlayers: arrival.dynamicMaxPlayers };
    const tags = arrival.tags === undefined ? {} : { tags: arrival.tags };
    if (arrival.kind === 'create') {
      return mm.create({ namespaceId: SIM_NAMESPACE, client, gameMode: arrival.gameMode, region: arrival.region, ...credentials, ...max, ...tags });
    }
    const list = arrival.kind === 'join' ? directory.get(lobbyKey(arrival.gameMode, arrival.region)) : undefined;
    if (list !== undefined && list.length > 0) {
      const lobbyId = list[clientStream.int(list.length)] as string;
      return mm.join({ namespaceId: SIM_NAMESPACE, client, lobbyId, players: arrival.party, ...credentials });
    }
    return mm.find({ namespaceId: SIM_NAMESPACE, client, gameModes: [arrival.gameMode], regions: [arrival.region], players: arrival.party, ...credentials, ...max, ...tags });
  };

  // The server's own answer time (infrastructure.answer_ms). The decision is not delayed by it: the
  // server decides at once on arrival (its recorded lobby and seat facts are stamped so, and a replay
  // given the server's start and connection delays decides every request as it did); the time is
  // what its transaction, commit and response add before the client hears of the seat.
  const answerStream = split(root, 'answers');
  const answerMs = infra.answerMs;
  const answerDelay = (): number => (answerMs === undefined ? 0 : Math.max(0, Math.round(sample(answerMs, answerStream))));

  let requestId = 0;
  let inflightPlayers = 0;
  const arrive = (arrival: Arrival): void => {
    const id = (requestId += 1);
    const arrivedAt = sim.now();
    metrics.arrival(arrival.party);
    inflightPlayers += arrival.party;
    trace.appendJson(arrivedAt, 'request', `{"id":${id},"kind":${q(arrival.kind)},"mode":${q(arrival.gameMode)},"party":${arrival.party},"region":${q(arrival.region)}}`);
    /** Account for one answer covering players `first..first+count-1` of the party. */
    const settle = (outcome: MatchOutcome, first: number, count: number): void => {
      inflightPlayers -= count;
      if (!outcome.ok) {
        trace.appendJson(sim.now(), 'outcome', `{"code":${q(outcome.error.code)},"id":${id}}`);
        metrics.refuse(outcome.error.code, count);
        return;
      }
      const { seat } = outcome;
      trace.appendJson(sim.now(), 'outcome', `{"id":${id},"lobby":${q(seat.lobbyId)},"ready":${seat.ready}}`);
      const answeredAt = sim.now() + answerDelay();
      metrics.seat(seat.playerIds.length, answeredAt - arrivedAt);
      seat.playerIds.forEach((playerId, i) => {
        const index = first + i;
        if (seat.ready || earlyReady.delete(playerId)) connect(playerId, seat.lobbyId, arrival, index, answeredAt, arrivedAt);
        else pending.set(playerId, { arrivedAt, answeredAt, arrival, lobbyId: seat.lobbyId, index });
      });
    };
    spawn(
      (async () => {
        const outcome = await request(arrival);
        // A create seats its creator; the rest of the party joins the new lobby by id.
        const seated = arrival.kind === 'create' ? 1 : arrival.party;
        settle(outcome, 0, outcome.ok ? outcome.seat.playerIds.length : seated);
        if (arrival.kind !== 'create' || arrival.party === 1) return;
        if (!outcome.ok) {
          settle(outcome, 1, arrival.party - 1);
          return;
        }
        const rest = await mm.join({ namespaceId: SIM_NAMESPACE, client: { ip: nextIp() }, lobbyId: outcome.seat.lobbyId, players: arrival.party - 1, ...credentials });
        settle(rest, 1, arrival.party - 1);
      })(),
    );
  };

  // Demand: one arrival stream per (game mode, region), or the recorded requests.
  // A request the server refused tells nothing of its players' sessions: seated here, they play
  // as the scenario's demand for that mode and region says (a calibrated scenario has one).
  const unknown = split(root, 'recorded/refused');
  const replayed = (r: RecordedRequest): Arrival => {
    const d = r.refused ? scenario.demand[r.gameMode]?.[r.region] : undefined;
    // A recorded client replays as it behaved: its connection delay and session as the server saw them.
    return d === undefined
      ? { kind: r.kind, gameMode: r.gameMode, region: r.region, party: r.party, sessionMs: Math.max(1, r.sessionMs), connects: Array.from({ length: r.party }, () => r.connects), ...(r.connectMs === undefined ? {} : { connectMs: r.connectMs }) }
      : { kind: r.kind, gameMode: r.gameMode, region: r.region, party: r.party, sessionMs: Math.max(1, Math.round(sample(d.sessionMs, unknown))), connects: Array.from({ length: r.party }, () => unknown.float() >= d.noShowShare) };
  };
  if (options.recorded !== undefined) {
    for (const r of options.recorded) {
      if (r.atMs >= scenario.durationMs) break;
      const arrival = replayed(r);
      sim.schedule(r.atMs, () => arrive(arrival));
    }
  } else if (options.recordedBatches !== undefined) {
    const batches = options.recordedBatches[Symbol.asyncIterator]();
    // Each batch's requests are scheduled as it comes; the next one is pulled at its last request's
    // time, and the driver waits for it before time moves on (the first is awaited here, before
    // anything else runs, so the outside world's timing never changes the order of events).
    const take = async (next: IteratorResult<readonly RecordedRequest[]>): Promise<void> => {
      if (next.done === true) return;
      let last = sim.now();
      for (const r of next.value) {
        if (r.atMs >= scenario.durationMs) return void (await batches.return?.());
        last = Math.max(last, r.atMs);
        const arrival = replayed(r);
        sim.schedule(Math.max(r.atMs, sim.now()), () => arrive(arrival));
      }
      sim.schedule(last, () => spawn(batches.next().then(take)));
    };
    await take(await batches.next());
  } else {
    for (const [mode, regions] of Object.entries(scenario.demand)) {
      for (const [region, demand] of Object.entries(regions)) {
        const stream = split(root, `demand/${mode}/${region}`);
        const schedule = (after: number): void => {
          const at = nextArrival(demand.arrivals, after, stream);
          if (at === undefined || at >= scenario.durationMs) return;
          // Observed at whole milliseconds, like the server's clock; the process goes on from `at`.
          sim.schedule(Math.ceil(at), () => {
            schedule(at);
            arrive(drawArrival(mode, region, demand, stream));
          });
        };
        schedule(0);
      }
    }
  }

  // Background work on the virtual clock, and the samples.
  const checkIdle = (checkMin: boolean): void => {
    const backoffs = mm.backoffs(SIM_NAMESPACE);
    const found = idleViolations(store.world, SIM_NAMESPACE, {
      checkMin,
      // A region whose runtime is full or unavailable (an outage it noticed) creates nothing.
      full: (region) => runtime.full(region) || !runtime.available(),
      backedOff: (versionId, gameMode) => backoffs.some((b) => b.versionId === versionId && b.gameMode === gameMode),
    });
    for (const v of found) if (violations.length < 100) violations.push(`t=${sim.now()}: ${v}`);
  };
  const maintain = (): void => {
    const refused = runtime.refused;
    // A creation that failed (lobby cap, ports, a full region) leaves a pool short for a reason:
    // the lower bound is checked only when every planned creation went through.
    spawn(mm.maintain().then((report) => checkIdle(report.idle.failed === 0 && runtime.refused === refused)));
    if (sim.now() + TICK_INTERVAL_MS < scenario.durationMs) host.after(TICK_INTERVAL_MS, maintain);
  };
  const sampleAt = (t: number): void => {
    metrics.sample(t, clock.now(), inflightPlayers + pending.size);
    options.onSample?.(t, driver.events);
    if (t + SAMPLE_EVERY_MS <= scenario.durationMs) sim.schedule(t + SAMPLE_EVERY_MS, () => sampleAt(t + SAMPLE_EVERY_MS));
  };

  const version = makeVersion('sim-version', scenario.resolved);
  await mm.publish(SIM_NAMESPACE, version);
  checkIdle(runtime.refused === 0);
  host.after(TICK_INTERVAL_MS, maintain);
  sim.schedule(0, () => sampleAt(0));

  const { events, monotone } = await driver.run();
  if (effectFailures > 0) violations.push(`${effectFailures} effects failed`);
  violations.push(...metrics.violations, ...portViolations(store.world, metrics.ports));
  const waiting = inflightPlayers;
  if (metrics.players !== metrics.served + metrics.rejected + waiting) {
    violations.push(`players in ${metrics.players} ≠ seated ${metrics.served} + rejected ${metrics.rejected} + waiting ${waiting}`);
  }
  const result = metrics.finish(clock.now(), scenario.durationMs, { waiting, verificationCalls: verifier.calls, captchaCalls: captcha.calls });
  options.onProgress?.(1);
  return {
    scenario: scenario.name ?? 'scenario',
    seed,
    metrics: result,
    breakdown: metrics.breakdown(),
    samples: metrics.samples,
    fillHistogram: metrics.fillHistogram,
    events,
    trace: { hash: trace.hash(), length: trace.length, ...(options.keepTrace === true ? { records: trace.records() } : {}) },
    violations,
    clockMonotone: monotone,
  };
}
