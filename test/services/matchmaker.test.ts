import { describe, expect, it } from 'vitest';
import { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import type { CaptchaCheck, CaptchaVerdict } from '../../src/core/admission/captcha.js';
import type { VerificationCheck, VerificationResponse } from '../../src/core/admission/verification.js';
import type { Effect, StartLobby, StopLobby } from '../../src/core/effects.js';
import type { MatchEvent } from '../../src/core/events.js';
import type { Lobby } from '../../src/core/lobby/lobby.js';
import { createWorld, makeVersion, type World } from '../../src/core/world.js';
import type { CaptchaVerifier, Runtime, Verifier } from '../../src/io/index.js';
import { Matchmaker, type MatchmakerDeps } from '../../src/services/matchmaker.js';
import { performEffects } from '../../src/services/perform.js';
import { ids, mode, NS, REGIONS } from '../core/fixtures.js';

class Clock {
  t = 1_000_000;
  now = (): number => this.t;
}

class RecordingRuntime implements Runtime {
  readonly started: StartLobby[] = [];
  readonly stopped: StopLobby[] = [];
  fail = false;
  start(lobby: StartLobby): Promise<void> {
    if (this.fail) return Promise.reject(new Error('no capacity'));
    this.started.push(lobby);
    return Promise.resolve();
  }
  stop(stop: StopLobby): Promise<void> {
    this.stopped.push(stop);
    return Promise.resolve();
  }
}

class ScriptedVerifier implements Verifier {
  readonly checks: VerificationCheck[] = [];
  constructor(private readonly answer: VerificationResponse) {}
  verify(check: VerificationCheck): Promise<VerificationResponse> {
    this.checks.push(check);
    return Promise.resolve(this.answer);
  }
}

class ScriptedCaptcha implements CaptchaVerifier {
  readonly checks: CaptchaCheck[] = [];
  constructor(private readonly verdict: CaptchaVerdict) {}
  verify(check: CaptchaCheck): Promise<CaptchaVerdict> {
    this.checks.push(check);
    return Promise.resolve(this.verdict);
  }
}

const setup = (over: Partial<MatchmakerDeps> = {}, { withRuntime = true, world = createWorld(REGIONS) }: { withRuntime?: boolean; world?: World } = {}) => {
  const clock = new Clock();
  const runtime = new RecordingRuntime();
  const store = new MemoryMatchStore(world);
  const logs: string[] = [];
  const routes: string[] = [];
  const newId = ids('id');
  const mm = new Matchmaker({
    store,
    clock,
    random: { uuid: newId, u32: () => 7 },
    verifier: new ScriptedVerifier({ kind: 'status', status: 204 }),
    captcha: new ScriptedCaptcha({ success: true }),
    ...(withRuntime ? { runtime } : {}),
    routes: {
      bind: (r) => record(routes, `bind ${r.lobbyId}:${r.publicPort}`),
      unbind: (r) => record(routes, `unbind ${r.lobbyId}:${r.publicPort}`),
    },
    logs: { append: (l) => record(logs, l.line) },
    ...over,
  });
  const events: MatchEvent[] = [];
  mm.hub.subscribe((es) => events.push(...es));
  return { mm, clock, runtime, store, logs, routes, events };
};

/** Push and resolve: the shape of an io call that just records. */
const record = (list: string[], item: string): Promise<void> => {
  list.push(item);
  return Promise.resolve();
};

const lobbyOf = (store: MemoryMatchStore, id: string): Lobby | undefined => store.world.namespaces.get(NS)?.lobbies.get(id);

const client = { ip: '203.0.113.9' };

describe('Matchmaker service', () => {
  it('publishes a version, fills the idle pool through the runtime, then seats a find in it', async () => {
    const { mm, runtime, store, routes } = setup();
    await mm.addNamespace(NS);
    const idle = mode('default', { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 2, max: 2 } }] });
    await mm.publish(NS, makeVersion('v1', { gameModes: [idle] }));
    expect(runtime.started).toHaveLength(2);
    expect(routes.filter((r) => r.startsWith('bind'))).toHaveLength(2);
    const [first] = runtime.started;
    if (first === undefined) throw new Error('no start');
    expect((await mm.lobbyReady({ namespaceId: NS, lobbyId: first.lobbyId })).ok).toBe(true);
    const outcome = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    expect(outcome.ok && outcome.seat.ready && outcome.seat.lobbyId).toBe(first.lobbyId);
    expect(outcome.ok && outcome.lobby.playerCount).toBe(1);
    expect(lobbyOf(store, first.lobbyId)?.playerCount).toBe(1);
  });

  it('answers MATCHMAKER_RUNTIME_UNAVAILABLE, and commits nothing, when a new lobby is needed and no runtime is configured', async () => {
    const { mm, store } = setup({}, { withRuntime: false });
    await mm.addNamespace(NS);
    await mm.publish(NS, makeVersion('v1', { gameModes: [mode('default')] }));
    const before = store.world;
    const outcome = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    expect(outcome.ok ? 'admitted' : outcome.error.code).toBe('MATCHMAKER_RUNTIME_UNAVAILABLE');
    expect(store.world).toBe(before);
  });

  it('reads whether the runtime answers before each decision: finds are refused and the idle pool waits while it does not, and it fills once it answers', async () => {
    const runtime = Object.assign(new RecordingRuntime(), { up: false, available(this: { up: boolean }) { return this.up; } });
    const { mm } = setup({ runtime });
    await mm.addNamespace(NS);
    const idle = mode('default', { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 1, max: 1 } }] });
    await mm.publish(NS, makeVersion('v1', { gameModes: [idle] }));
    expect(runtime.started).toHaveLength(0);
    const refused = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    expect(refused.ok ? 'admitted' : refused.error.code).toBe('MATCHMAKER_RUNTIME_UNAVAILABLE');
    expect((await mm.maintain()).idle.created).toBe(0);
    runtime.up = true;
    expect((await mm.maintain()).idle.created).toBe(1);
    expect(runtime.started).toHaveLength(1);
    runtime.up = false;
    // The idle lobby still seats a find (only a new lobby needs the runtime), and no replacement is started.
    expect((await mm.find({ namespaceId: NS, gameModes: ['default'], client })).ok).toBe(true);
    expect(runtime.started).toHaveLength(1);
  });

  it('reads per region where a runtime of several hosts (Swarm) can start lobbies: a find in a region without a ready node is refused, another region admits', async () => {
    const ready = new Set(['eu']);
    const runtime = Object.assign(new RecordingRuntime(), { startableIn: () => (region: string) => ready.has(region) });
    const { mm } = setup({ runtime });
    await mm.addNamespace(NS);
    const modes = [mode('default', { regions: ['eu', 'us'].map((name) => ({ name, tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } })) })];
    await mm.publish(NS, makeVersion('v1', { gameModes: modes }));
    const refused = await mm.find({ namespaceId: NS, gameModes: ['default'], regions: ['us'], client });
    expect(refused.ok ? 'admitted' : refused.error.code).toBe('MATCHMAKER_RUNTIME_UNAVAILABLE');
    expect((await mm.find({ namespaceId: NS, gameModes: ['default'], regions: ['eu'], client })).ok).toBe(true);
    expect(runtime.started.map((l) => l.region)).toEqual(['eu']);
  });

  it('stops a lobby whose container cannot start: the waiting seat fails and its ports come back', async () => {
    const { mm, runtime, store, events, logs } = setup();
    runtime.fail = true;
    await mm.addNamespace(NS);
    await mm.publish(NS, makeVersion('v1', { gameModes: [mode('default')] }));
    const outcome = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    if (!outcome.ok) throw new Error(outcome.error.code);
    expect(outcome.seat.ready).toBe(false);
    // The refusal names the lobby and why, so its log can be read (`tavern logs <id>`).
    const lobbyId = outcome.seat.lobbyId;
    expect(events.find((e) => e.type === 'seat-failed')).toMatchObject({
      error: { code: 'MATCHMAKER_LOBBY_STOPPED', params: { lobby_id: lobbyId, reason: 'start-failed' }, metadata: { lobby_id: lobbyId, reason: 'start-failed' } },
    });
    expect(lobbyOf(store, outcome.seat.lobbyId)?.lifecycle).toMatchObject({ status: 'stopped', reason: 'start-failed', failed: true });
    expect(logs.some((l) => l.includes('no capacity'))).toBe(true);
    const space = store.world.ports.get('local');
    expect(space?.udp.countUsed(space.pools.proxied)).toBe(0);
  });

  it('backs off a game mode whose lobbies keep failing to start, for finds and the idle pool alike, until one is ready', async () => {
    const { mm, runtime, clock, logs, events } = setup();
    runtime.fail = true;
    await mm.addNamespace(NS);
    const idle = mode('default', { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 1, max: 1 } }] });
    // Publishing starts one idle lobby (it fails); its idle update tries once more (it fails too): backoff.
    await mm.publish(NS, makeVersion('v1', { gameModes: [idle] }));
    const lastLobbyId = events.filter((e) => e.type === 'lobby-stopped').at(-1)?.lobbyId;
    expect(lastLobbyId).toBeDefined();
    expect(mm.backoffs(NS)).toEqual([{ versionId: 'v1', gameMode: 'default', lastLobbyId, failures: 2, lastFailureAt: clock.t, until: clock.t + 2_000 }]);
    expect(logs.filter((l) => l.includes('failed to start 2 times in a row: no new lobby of it for 2 s'))).toHaveLength(1);
    const refused = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    expect(refused.ok ? 'admitted' : refused.error).toMatchObject({
      code: 'MATCHMAKER_LOBBY_START_BACKOFF', params: { game_mode: 'default', failures: 2, lobby_id: lastLobbyId, seconds: 2 }, metadata: { retry_after_ms: 2_000, lobby_id: lastLobbyId },
    });
    expect((await mm.maintain()).idle.created).toBe(0);
    // Once the wait is over, a start is tried again; a third failure doubles the wait.
    clock.t += 2_000;
    expect((await mm.maintain()).idle.created).toBe(1);
    expect(mm.backoffs(NS)[0]).toMatchObject({ failures: 3, until: clock.t + 4_000 });
    // A lobby that becomes ready ends the backoff.
    clock.t += 4_000;
    runtime.fail = false;
    const found = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    if (!found.ok) throw new Error(found.error.code);
    expect((await mm.lobbyReady({ namespaceId: NS, lobbyId: found.seat.lobbyId })).ok).toBe(true);
    expect(mm.backoffs(NS)).toEqual([]);
  });

  it('asks the verification URL, then admits on a 2xx; refuses with the verdict code otherwise', async () => {
    const verified = mode('default', { actions: { find: { enabled: true, verification: { url: 'https://game.example/verify', headers: { 'x-key': 'k' } } } } });
    const ok = setup();
    await ok.mm.addNamespace(NS);
    await ok.mm.publish(NS, makeVersion('v1', { gameModes: [verified] }));
    const admitted = await ok.mm.find({ namespaceId: NS, gameModes: ['default'], client, verificationData: { token: 'abc' } });
    expect(admitted.ok).toBe(true);

    const verifier = new ScriptedVerifier({ kind: 'status', status: 403 });
    const denied = setup({ verifier });
    await denied.mm.addNamespace(NS);
    await denied.mm.publish(NS, makeVersion('v1', { gameModes: [verified] }));
    const outcome = await denied.mm.find({ namespaceId: NS, gameModes: ['default'], client, verificationData: { token: 'abc' } });
    expect(outcome.ok ? 'admitted' : outcome.error.code).toBe('MATCHMAKER_VERIFICATION_FAILED');
    expect(verifier.checks[0]?.body.verification_data).toEqual({ token: 'abc' });
    expect(verifier.checks[0]?.headers).toEqual({ 'x-key': 'k' });
    expect(denied.store.world.namespaces.get(NS)?.lobbies.size).toBe(0);
  });

  it('asks the captcha provider once, records the success, and admits', async () => {
    const captchaConfig = { hcaptcha: { siteKey: 'site', secretKey: 'secret' }, requestsBeforeReverify: 5, verificationTtl: 3_600_000 };
    const provider = new ScriptedCaptcha({ success: true });
    const { mm, events } = setup({ captcha: provider });
    await mm.addNamespace(NS);
    await mm.publish(NS, makeVersion('v1', { gameModes: [mode('default')], captcha: captchaConfig }));
    const missing = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    expect(missing.ok ? 'admitted' : missing.error.code).toBe('CAPTCHA_CAPTCHA_REQUIRED');
    const outcome = await mm.find({ namespaceId: NS, gameModes: ['default'], client, captcha: { hcaptcha: { clientResponse: 'solved' } } });
    expect(outcome.ok).toBe(true);
    expect(provider.checks).toHaveLength(1);
    expect(provider.checks[0]).toMatchObject({ response: 'solved', remoteIp: client.ip, secretKey: 'secret' });
    expect(events.some((e) => e.type === 'captcha-verified')).toBe(true);
    const again = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    expect(again.ok).toBe(true);
    expect(provider.checks).toHaveLength(1);

    const rejecting = setup({ captcha: new ScriptedCaptcha({ success: false, reason: 'invalid-input-response' }) });
    await rejecting.mm.addNamespace(NS);
    await rejecting.mm.publish(NS, makeVersion('v1', { gameModes: [mode('default')], captcha: captchaConfig }));
    const failed = await rejecting.mm.find({ namespaceId: NS, gameModes: ['default'], client, captcha: { hcaptcha: { clientResponse: 'x' } } });
    expect(failed.ok ? 'admitted' : failed.error.code).toBe('CAPTCHA_CAPTCHA_FAILED');
  });

  it('runs timers and the idle reconciliation in maintain(): a lobby never ready is stopped and replaced', async () => {
    const { mm, clock, runtime, store } = setup();
    await mm.addNamespace(NS);
    const idle = mode('default', { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 1, max: 1 } }] });
    await mm.publish(NS, makeVersion('v1', { gameModes: [idle] }));
    const [first] = runtime.started;
    if (first === undefined) throw new Error('no start');
    clock.t += idle.timeouts.lobbyReadyMs + 1;
    const report = await mm.maintain();
    expect(report.tick.readyTimeouts).toBe(1);
    expect(report.idle.created).toBe(1);
    expect(lobbyOf(store, first.lobbyId)?.lifecycle.status).toBe('stopping');
    expect(runtime.stopped.map((s) => s.lobbyId)).toEqual([first.lobbyId]);
    expect(runtime.started).toHaveLength(2);
    await mm.lobbyExited({ namespaceId: NS, lobbyId: first.lobbyId }, 'exited');
    expect(lobbyOf(store, first.lobbyId)?.lifecycle.status).toBe('stopped');
  });

  it('passes player and lobby calls through with their catalog codes', async () => {
    const { mm, runtime } = setup();
    await mm.addNamespace(NS);
    await mm.publish(NS, makeVersion('v1', { gameModes: [mode('default')] }));
    const outcome = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    if (!outcome.ok) throw new Error(outcome.error.code);
    const lobbyId = outcome.seat.lobbyId;
    const playerId = outcome.seat.playerIds[0] ?? '';
    expect(runtime.started.map((s) => s.lobbyId)).toEqual([lobbyId]);
    await mm.lobbyReady({ namespaceId: NS, lobbyId });
    expect((await mm.playerConnected({ namespaceId: NS, lobbyId, playerId })).ok).toBe(true);
    const twice = await mm.playerConnected({ namespaceId: NS, lobbyId, playerId });
    expect(twice.ok ? 'ok' : twice.error.code).toBe('MATCHMAKER_PLAYER_ALREADY_CONNECTED');
    expect((await mm.setClosed({ namespaceId: NS, lobbyId }, true)).ok).toBe(true);
    const unknown = await mm.lobbyReady({ namespaceId: NS, lobbyId: 'nope' });
    expect(unknown.ok ? 'ok' : unknown.error.code).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
    expect((await mm.stopLobby({ namespaceId: NS, lobbyId })).ok).toBe(true);
    expect(runtime.stopped.map((s) => [s.lobbyId, s.reason])).toEqual([[lobbyId, 'requested']]);
    expect((await mm.playerDisconnected({ namespaceId: NS, lobbyId, playerId })).ok).toBe(true);
  });

  it('runs the idle update right after a find takes an idle lobby and after a removal empties one', async () => {
    const { mm, runtime } = setup();
    await mm.addNamespace(NS);
    await mm.publish(NS, makeVersion('v1', { gameModes: [mode('default', { regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 1, max: 1 } }] })] }));
    const [idle] = runtime.started.map((s) => s.lobbyId);
    if (idle === undefined) throw new Error('no idle lobby was started');
    await mm.lobbyReady({ namespaceId: NS, lobbyId: idle });
    const outcome = await mm.find({ namespaceId: NS, gameModes: ['default'], client });
    if (!outcome.ok) throw new Error(outcome.error.code);
    expect(outcome.seat).toMatchObject({ lobbyId: idle, ready: true });
    // The pool is refilled now, not at the next tick.
    expect(runtime.started).toHaveLength(2);
    const replacement = runtime.started[1]?.lobbyId ?? '';
    // The last player leaves: two idle lobbies for a max of one, so the older (the emptied one) stops at once.
    expect((await mm.playerDisconnected({ namespaceId: NS, lobbyId: idle, playerId: outcome.seat.playerIds[0] ?? '' })).ok).toBe(true);
    expect(runtime.stopped.map((s) => [s.lobbyId, s.reason])).toEqual([[idle, 'idle']]);
    const ns = (await mm.snapshot()).namespaces.get(NS);
    expect([...(ns?.idleLobbies.keys() ?? [])]).toEqual([replacement]);
  });

  it('hands the idle update to the background when one is given: after a publish, and once for a burst of finds', async () => {
    const tasks: (() => Promise<unknown>)[] = [];
    const { mm, runtime } = setup({ background: (task) => void tasks.push(task) });
    await mm.addNamespace(NS);
    await mm.publish(NS, makeVersion('v1', { gameModes: [mode('default', { maxPlayers: { normal: 1, direct: 1, party: 1 }, regions: [{ name: 'local', tier: 'basic-1d1', idleLobbies: { min: 2, max: 2 } }] })] }));
    // The version is current at once; its idle lobbies start in the background.
    expect((await mm.snapshot()).namespaces.get(NS)?.currentVersionId).toBe('v1');
    expect(runtime.started).toHaveLength(0);
    expect(tasks).toHaveLength(1);
    await tasks.shift()?.();
    expect(runtime.started).toHaveLength(2);
    for (const lobby of runtime.started) await mm.lobbyReady({ namespaceId: NS, lobbyId: lobby.lobbyId });
    // Both idle lobbies taken (one seat each) before the update runs: the answers do not wait for it.
    const outcomes = await Promise.all([1, 2].map((i) => mm.find({ namespaceId: NS, gameModes: ['default'], client: { ip: `10.0.0.${i}` } })));
    expect(outcomes.map((o) => o.ok && o.seat.ready)).toEqual([true, true]);
    expect(runtime.started).toHaveLength(2);
    expect(tasks).toHaveLength(1);
    await tasks[0]?.();
    expect(runtime.started).toHaveLength(4);
  });
});

describe('performEffects', () => {
  it('carries out every effect in order and never throws: a start failure is handed over, others reported', async () => {
    const done: string[] = [];
    const failures: string[] = [];
    const starts: string[] = [];
    const effects: Effect[] = [
      { type: 'append-log', lobbyId: 'l', at: 1, line: 'hello' },
      { type: 'stop-lobby', lobbyId: 'l', region: 'local', reason: 'idle', force: false },
      { type: 'bind-route', route: { lobbyId: 'l', region: 'local', label: 'g', protocol: 'udp', publicPort: 26000, hostPort: 20000 } },
    ];
    await performEffects(effects, {
      runtime: { start: () => Promise.reject(new Error('x')), stop: () => Promise.reject(new Error('stop failed')) },
      routes: { bind: () => record(done, 'bind'), unbind: () => Promise.resolve() },
      logs: { append: (l) => record(done, l.line) },
      startFailed: (e) => record(starts, e.lobbyId),
      failed: (e, error) => void failures.push(`${e.type}: ${(error as Error).message}`),
    });
    expect(done).toEqual(['hello', 'bind']);
    expect(failures).toEqual(['stop-lobby: stop failed']);
    expect(starts).toEqual([]);
  });
});
