/**
 * The matchmaker's services: load the world, let the core decide, persist the decision, then carry
 * out its effects and publish its events. The server and the simulator both drive these, with
 * different adapters injected.
 */
import type { Admission } from '../core/admission/gate.js';
import { type VerificationPass, verificationVerdict } from '../core/admission/verification.js';
import type { Ctx } from '../core/context.js';
import type { StartLobby } from '../core/effects.js';
import { matchError, type MatchError } from '../core/errors.js';
import type { Hosting } from '../core/hosting.js';
import { planIdle, applyIdlePlan, idlePlanEmpty, type IdleOutcome } from '../core/idle.js';
import { activeBackoffs, followStarts, NO_BACKOFF, type BackoffEntry, type StartBackoffs } from '../core/lobby/backoff.js';
import type { Lobby, StopReason } from '../core/lobby/lobby.js';
import {
  lobbyExited,
  lobbyReady,
  playerConnected,
  playerDisconnected,
  recordCaptcha,
  seatWaitExpired,
  setClosed,
  stopLobby,
  type LobbyRef,
  type PlayerRef,
} from '../core/lobby/lifecycle.js';
import { create, type CreateCommand } from '../core/matchmaker/create.js';
import { find, type FindCommand } from '../core/matchmaker/find.js';
import { join, type JoinCommand } from '../core/matchmaker/join.js';
import type { Seat } from '../core/matchmaker/seat.js';
import { addNamespace, publishVersion, updateNamespaceSettings } from '../core/namespace.js';
import { err, ok, type Result } from '../core/result.js';
import { lobbyStateRefusal } from '../core/lobby/state.js';
import { tick, type TickSummary } from '../core/tick.js';
import type { Decision } from '../core/tx.js';
import type { NamespaceSettings, NamespaceState, Version, World } from '../core/world.js';
import type {
  CaptchaVerifier,
  Clock,
  ExitReason,
  LobbyLogs,
  LobbyStatePage,
  MatchStore,
  ProxyRoutes,
  Random,
  Runtime,
  RuntimeListener,
  Transaction,
  Verifier,
} from '../io/index.js';
import type { LobbyStop, StopRecorder } from '../io/stopped-lobbies.js';
import { EventHub } from './hub.js';
import { performEffects, type EffectPorts } from './perform.js';
import { stopsIn } from './stopped-lobbies.js';

export interface MatchmakerDeps {
  readonly store: MatchStore;
  readonly clock: Clock;
  readonly random: Random;
  readonly verifier: Verifier;
  readonly captcha: CaptchaVerifier;
  /** Absent: finds and creates that need a new lobby answer `MATCHMAKER_RUNTIME_UNAVAILABLE`. */
  readonly runtime?: Runtime;
  readonly routes: ProxyRoutes;
  readonly logs: LobbyLogs;
  /** Where each committed stop is kept (with its log's last lines); absent: stops are not kept. */
  readonly stops?: StopRecorder;
  readonly hub?: EventHub;
  /** An effect that failed (other than a container start, which stops its lobby). */
  readonly effectFailed?: (effect: unknown, error: unknown) => void;
  /**
   * Runs follow-up work that the answer to a call need not wait for (the idle update after a find
   * or a removal, which may start containers): the server runs it on its own, the simulator as one
   * of its tasks. Absent: the call awaits it before returning.
   */
  readonly background?: (task: () => Promise<unknown>) => void;
}

/** The gates a request went through (absent from an outcome when it went through none). */
export interface GatesRun {
  readonly captcha: boolean;
  readonly verification: boolean;
}

/** An admitted request: where its players sit, and the lobby as committed. */
export interface Admitted {
  readonly ok: true;
  readonly seat: Seat;
  readonly lobby: Lobby;
  readonly gates?: GatesRun;
}

export type MatchOutcome = Admitted | {
  readonly ok: false;
  readonly error: MatchError;
  readonly gates?: GatesRun;
  /** A refused join: its lobby's game mode and region (recorded demand keeps them), when the lobby exists. */
  readonly lobby?: { readonly gameMode: string; readonly region: string };
};

type WithoutIds<C> = Omit<C, 'playerIds' | 'playerId' | 'newLobbyId' | 'verified'>;

/** A find: the core's command without the fresh ids, which the service mints (`players` seats, default 1). */
export type FindRequest = WithoutIds<FindCommand> & { readonly players?: number };
export type JoinRequest = WithoutIds<JoinCommand> & { readonly players?: number };
export type CreateRequest = WithoutIds<CreateCommand>;

/** Gate rounds before giving up: a captcha, a verification, the admission, and one retry if the world moved. */
const MAX_ROUNDS = 4;

/** A core step that either fails with a code or yields a decision. */
type Step<T> = Result<Decision<T>, MatchError>;

const asTransaction = <T>(step: Step<T>): Transaction<Result<T, MatchError>> =>
  step.ok ? { result: ok(step.value.value), decision: step.value } : { result: step };

/** An outcome with the gates its request went through, when it went through any. */
const withGates = (outcome: MatchOutcome, gates: GatesRun): MatchOutcome => (gates.captcha || gates.verification ? { ...outcome, gates } : outcome);

/** The runtime's reach as the core reads it: one answer for every region while the runtime reports one health. */
const ANYWHERE = (): boolean => true;
const NOWHERE = (): boolean => false;

export interface MaintenanceReport {
  readonly tick: TickSummary;
  readonly idle: { readonly created: number; readonly stopped: number; readonly failed: number };
}

/**
 * @example
 * const mm = new Matchmaker({ store, clock, random, verifier, captcha, runtime, routes, logs });
 * const outcome = await mm.find({ namespaceId, gameModes: ['default'], client: { ip: '1.2.3.4' } });
 */
export class Matchmaker implements RuntimeListener {
  readonly hub: EventHub;
  readonly #deps: MatchmakerDeps;
  readonly #ports: EffectPorts;
  /** Namespaces seen in the world: a world never drops one, so they are not looked up again. */
  readonly #known = new Set<string>();
  /** Namespaces whose idle update is scheduled and not started yet: a burst of finds needs one. */
  readonly #idleDue = new Set<string>();
  /**
   * This instance's start back-off (each instance runs its own containers): the core decides it
   * from committed events ({@link followStarts}) and reads it in every decision's context.
   */
  #backoff: StartBackoffs = NO_BACKOFF;
  /** The hosting facts last handed to the core: rebuilt only when the runtime's reach or the back-off changed. */
  #hosting: Hosting = { canStartIn: NOWHERE, backoff: NO_BACKOFF };
  /** Finds this instance received per namespace since it started (the dashboard charts their rate). */
  readonly #finds = new Map<string, number>();

  constructor(deps: MatchmakerDeps) {
    this.#deps = deps;
    this.hub = deps.hub ?? new EventHub();
    this.#ports = {
      ...(deps.runtime === undefined ? {} : { runtime: deps.runtime }),
      routes: deps.routes,
      logs: deps.logs,
      startFailed: (effect, error) => this.#startFailed(effect, error),
      failed: deps.effectFailed ?? (() => undefined),
    };
  }

  /** The latest committed world (read-only). */
  snapshot(): Promise<World> {
    return this.#deps.store.snapshot();
  }

  #ctx(): Ctx {
    return { now: this.#deps.clock.now(), seed: this.#deps.random.u32(), hosting: this.#facts() };
  }

  /**
   * Where lobbies can start now, read from the runtime (configured, its engine answers, and per
   * region when it runs on several hosts) and from this instance's back-off: the facts every decision gets in its context.
   */
  #facts(): Hosting {
    const runtime = this.#deps.runtime;
    const reachable = runtime !== undefined && (runtime.available?.() ?? true);
    const canStartIn = reachable ? (runtime.startableIn?.() ?? ANYWHERE) : NOWHERE;
    if (canStartIn !== this.#hosting.canStartIn || this.#backoff !== this.#hosting.backoff) this.#hosting = { canStartIn, backoff: this.#backoff };
    return this.#hosting;
  }

  /**
   * Decide and persist, then perform the effects and publish the events of what was committed.
   * With `idleOf` (the namespace the decision is about): when the decision changed that
   * namespace's idle lobbies or its lobby count (a find took an idle lobby, a removal emptied one,
   * a lobby started or went away), the idle update follows at once (see {@link #followIdle}).
   */
  async #run<T>(decide: (world: World, ctx: Ctx) => Transaction<T>, idleOf?: string): Promise<T> {
    let before: NamespaceState | undefined;
    const { result, decision } = await this.#deps.store.transact((world) => {
      if (idleOf !== undefined) before = world.namespaces.get(idleOf);
      return decide(world, this.#ctx());
    });
    if (decision !== undefined) {
      this.hub.publish(decision.events);
      // The back-off follows the starts that ended in this commit; its log lines are effects too.
      const starts = followStarts(this.#backoff, decision.world, decision.events);
      if (starts !== undefined) this.#backoff = starts.backoffs;
      const effects = starts === undefined || starts.effects.length === 0 ? decision.effects : [...decision.effects, ...starts.effects];
      if (effects.length > 0) await performEffects(effects, this.#ports);
      // After the effects: a stop's own log lines (why it stopped) are written before it is kept.
      const stops = this.#deps.stops === undefined ? [] : stopsIn(decision);
      if (stops.length > 0 && this.#deps.stops !== undefined) await this.#keepStops(stops, this.#deps.stops);
      const after = idleOf === undefined ? undefined : decision.world.namespaces.get(idleOf);
      if (after !== undefined && (before?.idleLobbies !== after.idleLobbies || before.activeLobbies !== after.activeLobbies) && !idlePlanEmpty(planIdle(after, this.#at()))) {
        await this.#followIdle(after.id);
      }
    }
    return result;
  }

  /** The time and hosting facts alone (no seed drawn): for reading the idle plan outside a decision. */
  #at(): Pick<Ctx, 'now' | 'hosting'> {
    return { now: this.#deps.clock.now(), hosting: this.#facts() };
  }

  /** Hands each lobby stopped in a committed decision to the recorder; a failure is reported, never thrown. */
  async #keepStops(stopped: readonly LobbyStop[], stops: StopRecorder): Promise<void> {
    for (const stop of stopped) {
      await stops.record(stop).catch((error: unknown) => this.#deps.effectFailed?.({ type: 'keep-stop', lobbyId: stop.lobbyId }, error));
    }
  }

  /** The (version, game mode) pairs of a namespace under start backoff now (live analytics shows them). */
  backoffs(namespaceId: string): readonly BackoffEntry[] {
    return activeBackoffs(this.#backoff, namespaceId, this.#deps.clock.now());
  }

  async #startFailed(effect: StartLobby, error: unknown): Promise<void> {
    const reason = error instanceof Error ? error.message : String(error);
    await this.#deps.logs.append({ type: 'append-log', lobbyId: effect.lobbyId, at: this.#deps.clock.now(), line: `start failed: ${reason}` });
    await this.lobbyExited({ namespaceId: effect.namespaceId, lobbyId: effect.lobbyId }, 'start-failed');
  }

  /**
   * Runs the gates until the request is admitted or refused: captcha provider, then verification
   * URLs. The command holds `verified`, which each verification round extends. One async frame
   * for the rounds and the outcome (a find passes here).
   */
  async #admit(
    namespaceId: string,
    decide: (world: World, ctx: Ctx) => Admission<Seat>,
    verified: VerificationPass[],
  ): Promise<MatchOutcome> {
    const gates = { captcha: false, verification: false };
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const admission = await this.#run((world, ctx): Transaction<Admission<Seat>> => {
        const a = decide(world, ctx);
        if (a.kind === 'admitted') return { result: a, decision: a.decision };
        return a.kind === 'rejected' && a.decision !== undefined ? { result: a, decision: a.decision } : { result: a };
      }, namespaceId);
      switch (admission.kind) {
        case 'admitted': {
          const { value: seat, world } = admission.decision;
          const lobby = world.namespaces.get(namespaceId)?.lobbies.get(seat.lobbyId);
          if (lobby === undefined) throw new Error(`admitted into unknown lobby ${seat.lobbyId}`);
          return withGates({ ok: true, seat, lobby }, gates);
        }
        case 'rejected':
          return withGates({ ok: false, error: admission.error }, gates);
        case 'captcha': {
          gates.captcha = true;
          const verdict = await this.#deps.captcha.verify(admission.check);
          const recorded = await this.#run((world, ctx) => asTransaction(recordCaptcha(world, admission.check, verdict, ctx)));
          if (!recorded.ok) return withGates({ ok: false, error: recorded.error }, gates);
          break;
        }
        case 'verify': {
          gates.verification = true;
          const responses = await Promise.all(admission.checks.map((check) => this.#deps.verifier.verify(check)));
          for (const [i, check] of admission.checks.entries()) {
            const verdict = verificationVerdict(check, responses[i] ?? { kind: 'failed', reason: 'no response' });
            if (!verdict.ok) return withGates({ ok: false, error: verdict.error }, gates);
            verified.push(verdict.value);
          }
          break;
        }
      }
    }
    return withGates({ ok: false, error: matchError('MATCHMAKER_VERIFICATION_REQUEST_FAILED', { reason: 'the request kept changing under verification' }) }, gates);
  }

  #ids(n: number): string[] {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(this.#deps.random.uuid());
    return ids;
  }

  /** Finds this instance received for the namespace since it started, answered or refused. */
  findsReceived(namespaceId: string): number {
    return this.#finds.get(namespaceId) ?? 0;
  }

  /** `lobbies/find`. */
  find(request: FindRequest): Promise<MatchOutcome> {
    this.#finds.set(request.namespaceId, (this.#finds.get(request.namespaceId) ?? 0) + 1);
    const { players = 1, ...rest } = request;
    const verified: VerificationPass[] = [];
    // Minted fields first: V8 (Node 20) builds `{ ...spread, more }` many times slower.
    const command: FindCommand = { playerIds: this.#ids(players), newLobbyId: this.#deps.random.uuid(), verified, ...rest };
    return this.#admit(command.namespaceId, (world, ctx) => find(world, command, ctx), verified);
  }

  /** `lobbies/join`. */
  async join(request: JoinRequest): Promise<MatchOutcome> {
    const { players = 1, ...rest } = request;
    const verified: VerificationPass[] = [];
    const command: JoinCommand = { playerIds: this.#ids(players), verified, ...rest };
    let lobby: Lobby | undefined;
    const outcome = await this.#admit(command.namespaceId, (world, ctx) => {
      lobby = world.namespaces.get(command.namespaceId)?.lobbies.get(command.lobbyId);
      return join(world, command, ctx);
    }, verified);
    return outcome.ok || lobby === undefined ? outcome : { ...outcome, lobby: { gameMode: lobby.gameMode, region: lobby.region } };
  }

  /** `lobbies/create`. */
  create(request: CreateRequest): Promise<MatchOutcome> {
    const verified: VerificationPass[] = [];
    const command: CreateCommand = { playerId: this.#deps.random.uuid(), newLobbyId: this.#deps.random.uuid(), verified, ...request };
    return this.#admit(command.namespaceId, (world, ctx) => create(world, command, ctx), verified);
  }

  #step(namespaceId: string, decide: (world: World, ctx: Ctx) => Step<undefined>): Promise<Result<undefined, MatchError>> {
    return this.#run((world, ctx) => asTransaction(decide(world, ctx)), namespaceId);
  }

  /** `lobbies/ready`. */
  lobbyReady(ref: LobbyRef): Promise<Result<undefined, MatchError>> {
    return this.#step(ref.namespaceId, (world, ctx) => lobbyReady(world, ref, ctx));
  }

  /** `lobbies/closed`. */
  setClosed(ref: LobbyRef, closed: boolean): Promise<Result<undefined, MatchError>> {
    return this.#step(ref.namespaceId, (world, ctx) => setClosed(world, { namespaceId: ref.namespaceId, lobbyId: ref.lobbyId, closed }, ctx));
  }

  /** `players/connected`. */
  playerConnected(ref: PlayerRef): Promise<Result<undefined, MatchError>> {
    return this.#step(ref.namespaceId, (world, ctx) => playerConnected(world, ref, ctx));
  }

  /** `players/disconnected`. */
  playerDisconnected(ref: PlayerRef): Promise<Result<undefined, MatchError>> {
    return this.#step(ref.namespaceId, (world, ctx) => playerDisconnected(world, ref, ctx));
  }

  /**
   * A find, join or create gave up waiting for its lobby to be ready: its seat is given back, and
   * a lobby left idle that the idle plan stops stops as not ready (see the core's `seatWaitExpired`).
   */
  seatWaitExpired(ref: PlayerRef): Promise<Result<undefined, MatchError>> {
    return this.#step(ref.namespaceId, (world, ctx) => seatWaitExpired(world, ref, ctx));
  }

  /** Stop a lobby (an operator or the developer asked). */
  stopLobby(ref: LobbyRef, reason: StopReason = 'requested'): Promise<Result<undefined, MatchError>> {
    return this.#step(ref.namespaceId, (world, ctx) => stopLobby(world, { namespaceId: ref.namespaceId, lobbyId: ref.lobbyId, reason }, ctx));
  }

  /** The runtime reports a container gone (with its exit code, when it has one). */
  lobbyExited(ref: LobbyRef, reason: ExitReason, exitCode?: number): Promise<Result<undefined, MatchError>> {
    const exited = { namespaceId: ref.namespaceId, lobbyId: ref.lobbyId, reason, ...(exitCode === undefined ? {} : { exitCode }) };
    return this.#step(ref.namespaceId, (world, ctx) => lobbyExited(world, exited, ctx));
  }

  /**
   * `PUT lobbies/state`: sets (`json`, a JSON text) or clears (undefined) a lobby's state, in a
   * commit of its own decided on the latest world: `MATCHMAKER_LOBBY_NOT_FOUND` for a lobby the
   * namespace does not have, `MATCHMAKER_LOBBY_STOPPED` once it stops (its state went with it).
   *
   * @effects store (transact)
   */
  setLobbyState(ref: LobbyRef, json: string | undefined): Promise<Result<undefined, MatchError>> {
    return this.#run((world): Transaction<Result<undefined, MatchError>> => {
      const refusal = lobbyStateRefusal(world, ref);
      if (refusal !== undefined) return { result: err(refusal) };
      return { result: ok(undefined), lobbyState: { namespaceId: ref.namespaceId, lobbyId: ref.lobbyId, json } };
    });
  }

  /**
   * A lobby's committed state (its JSON text), if it has one.
   *
   * @effects store (lobbyState)
   */
  lobbyState(lobbyId: string): Promise<string | undefined> {
    return this.#deps.store.lobbyState(lobbyId);
  }

  /**
   * The states a listing carries: those of `lobbyIds`, in order, within `maxBytes`.
   *
   * @effects store (lobbyStates)
   */
  lobbyStates(lobbyIds: readonly string[], maxBytes: number): Promise<LobbyStatePage> {
    return this.#deps.store.lobbyStates(lobbyIds, maxBytes);
  }

  /** {@link RuntimeListener}: a runtime's report, fire and forget. */
  exited(namespaceId: string, lobbyId: string, reason: ExitReason, exitCode?: number): void {
    void this.lobbyExited({ namespaceId, lobbyId }, reason, exitCode);
  }

  /**
   * Whether this instance has seen the namespace in the world: then {@link hasNamespace} is true
   * without a look (a find asks on every call; this answers without waiting).
   */
  knowsNamespace(id: string): boolean {
    return this.#known.has(id);
  }

  /**
   * Whether the world holds the namespace (added here or by another instance sharing the store).
   *
   * @effects store (snapshot, until the namespace is seen)
   */
  async hasNamespace(id: string): Promise<boolean> {
    if (this.#known.has(id)) return true;
    if (!(await this.#deps.store.snapshot()).namespaces.has(id)) return false;
    this.#known.add(id);
    return true;
  }

  /** Add a namespace (no version yet); adding it again changes nothing. */
  async addNamespace(id: string, settings?: NamespaceSettings): Promise<void> {
    await this.#run((world) => ({ result: undefined, decision: { world: addNamespace(world, id, settings), effects: [], events: [], value: undefined } }));
    this.#known.add(id);
  }

  /**
   * Replace a namespace's matchmaker limits, then bring the idle pool in line with them (a raised
   * `lobby_count_max` may let it fill): in the background when one is given.
   */
  async updateSettings(id: string, settings: NamespaceSettings): Promise<void> {
    await this.#run((world) => ({ result: undefined, decision: { world: updateNamespaceSettings(world, id, settings), effects: [], events: [], value: undefined } }));
    await this.#followIdle(id);
  }

  /**
   * Make `version` current, then bring the idle pool in line with it: in the background when one
   * is given, so a version with hundreds of idle lobbies is published at once and they start after.
   */
  async publish(namespaceId: string, version: Version): Promise<void> {
    await this.#run((world, ctx) => {
      const decision = publishVersion(world, namespaceId, version, ctx);
      return { result: undefined, decision };
    });
    await this.#followIdle(namespaceId);
  }

  /**
   * The idle update of a namespace right after a decision moved its pool, as Rivet ran it after
   * every find and every removal that empties a lobby (not only at the next tick): in the
   * background when one is given, so the caller's answer does not wait for a container start.
   */
  async #followIdle(namespaceId: string): Promise<void> {
    if (this.#idleDue.has(namespaceId)) return;
    this.#idleDue.add(namespaceId);
    const update = (): Promise<IdleOutcome> => {
      // Decisions from here on schedule a new update: this one may already have read the world.
      this.#idleDue.delete(namespaceId);
      return this.reconcileIdle(namespaceId);
    };
    if (this.#deps.background === undefined) await update();
    else this.#deps.background(update);
  }

  /** The idle-lobby reconciliation of one namespace. */
  reconcileIdle(namespaceId: string): Promise<IdleOutcome> {
    return this.#run((world, ctx) => {
      const ns = world.namespaces.get(namespaceId);
      const plan = ns === undefined ? undefined : planIdle(ns, ctx);
      if (plan === undefined || idlePlanEmpty(plan)) return { result: { created: [], stopped: [], failed: [] } };
      const decision = applyIdlePlan(world, namespaceId, plan, this.#ids(plan.create.length), ctx);
      return { result: decision.value, decision };
    });
  }

  /**
   * The background work due now, for every namespace: timers (ready deadlines, connect windows,
   * stop grace, retention), then the idle reconciliation. The server calls it every
   * `TICK_INTERVAL_MS`; the simulator on its virtual clock.
   */
  async maintain(): Promise<MaintenanceReport> {
    const world = await this.#deps.store.snapshot();
    const total = { readyTimeouts: 0, connectExpired: 0, lifetimeExpired: 0, forcedStops: 0 };
    const idle = { created: 0, stopped: 0, failed: 0 };
    for (const namespaceId of world.namespaces.keys()) {
      const summary = await this.#run((w, ctx) => {
        if (!w.namespaces.has(namespaceId)) return { result: undefined };
        const decision = tick(w, namespaceId, ctx);
        return { result: decision.value, decision };
      });
      if (summary !== undefined) {
        total.readyTimeouts += summary.readyTimeouts;
        total.connectExpired += summary.connectExpired;
        total.lifetimeExpired += summary.lifetimeExpired;
        total.forcedStops += summary.forcedStops;
      }
      const outcome = await this.reconcileIdle(namespaceId);
      idle.created += outcome.created.length;
      idle.stopped += outcome.stopped.length;
      idle.failed += outcome.failed.length;
    }
    return { tick: total, idle };
  }
}

