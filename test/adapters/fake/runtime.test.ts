import { describe, expect, it } from 'vitest';
import { FakeRuntime, type FakeRuntimeEvent, type FakeRuntimeOptions } from '../../../src/adapters/fake/runtime.js';
import type { StartLobby } from '../../../src/core/effects.js';
import type { ExitReason, Timers } from '../../../src/io/index.js';

/** Timers on a clock the test moves (`advance`), firing in (time, order) order. */
class StepTimers implements Timers {
  t = 0;
  #pending: { at: number; n: number; fn: () => void }[] = [];
  #n = 0;
  after(ms: number, fn: () => void): () => void {
    const item = { at: this.t + ms, n: this.#n++, fn };
    this.#pending.push(item);
    return () => void (this.#pending = this.#pending.filter((p) => p !== item));
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (let due = this.#next(end); due !== undefined; due = this.#next(end)) {
      this.#pending = this.#pending.filter((p) => p !== due);
      this.t = due.at;
      due.fn();
    }
    this.t = end;
  }
  #next(end: number) {
    return this.#pending.filter((p) => p.at <= end).sort((a, b) => a.at - b.at || a.n - b.n)[0];
  }
}

const lobby = (lobbyId: string, region = 'eu'): StartLobby => ({
  type: 'start-lobby', lobbyId, namespaceId: 'ns', versionId: 'v', gameMode: 'default', region, tier: 'basic-1d1', imageId: 'img', args: [], env: {}, networkMode: 'bridge', ports: [],
});

/** A fake on step timers, reporting to a recording target. */
const setup = (options: Omit<FakeRuntimeOptions, 'timers' | 'clock'> = {}) => {
  const timers = new StepTimers();
  const events: FakeRuntimeEvent[] = [];
  const runtime = new FakeRuntime({ timers, clock: { now: () => timers.t }, observe: (e) => events.push(e), ...options });
  const seen: string[] = [];
  runtime.attach({
    lobbyReady: (ref) => Promise.resolve(seen.push(`ready ${ref.lobbyId} @${timers.t}`)),
    exited: (_ns: string, lobbyId: string, reason: ExitReason) => void seen.push(`${reason} ${lobbyId} @${timers.t}`),
  });
  return { timers, runtime, seen, events };
};

describe('the fake runtime', () => {
  it('calls ready after a drawn delay on the timers (a drawn 0 too), and during start for a fixed 0', async () => {
    const drawn = setup({ readyAfterMs: (l) => (l.lobbyId === 'a' ? 250 : 0) });
    await drawn.runtime.start(lobby('a'));
    await drawn.runtime.start(lobby('b'));
    expect(drawn.seen).toEqual([]);
    drawn.timers.advance(1_000);
    expect(drawn.seen).toEqual(['ready b @0', 'ready a @250']);
    const fixed = setup({ readyAfterMs: 0 });
    await fixed.runtime.start(lobby('c'));
    expect(fixed.seen).toEqual(['ready c @0']);
  });

  it('crashes a container after its drawn time, looking every hour, unless it went away first', async () => {
    const { runtime, timers, seen } = setup({ crashAfterMs: (l) => (l.lobbyId === 'far' ? 5 * 3_600_000 : 1_000), exitAfterStopMs: 0 });
    await runtime.start(lobby('near'));
    await runtime.start(lobby('far'));
    await runtime.start(lobby('stopped'));
    await runtime.stop({ type: 'stop-lobby', lobbyId: 'stopped', region: 'eu', reason: 'requested', force: false });
    timers.advance(5 * 3_600_000);
    expect(seen).toEqual(['exited stopped @0', 'crashed near @1000', `crashed far @${5 * 3_600_000}`]);
  });

  it('refuses a start beyond a region capacity, counting stopping containers until they exit', async () => {
    const { runtime, timers, events } = setup({ capacity: (region) => (region === 'eu' ? 1 : 0), exitAfterStopMs: 500 });
    await runtime.start(lobby('a'));
    await expect(runtime.start(lobby('b'))).rejects.toThrow('region eu runs 1 lobbies, its capacity');
    await expect(runtime.start(lobby('c', 'us'))).rejects.toThrow(/region us/);
    await runtime.stop({ type: 'stop-lobby', lobbyId: 'a', region: 'eu', reason: 'requested', force: false });
    expect([runtime.full('eu'), runtime.inRegion('eu'), runtime.running]).toEqual([true, 1, []]);
    timers.advance(500);
    await runtime.start(lobby('d'));
    expect([runtime.refused, runtime.running]).toEqual([2, ['d']]);
    expect(events.map((e) => e.type)).toEqual(['started', 'refused', 'refused', 'stopping', 'exited', 'started']);
  });

  it('fails starts during an outage, and says it is unavailable from when it noticed until it noticed the end', async () => {
    const { runtime, timers } = setup({ outages: [{ from: 1_000, to: 3_000, noticedAfterMs: 500 }] });
    const at = (t: number) => {
      timers.advance(t - timers.t);
      return runtime.available();
    };
    expect([at(999), at(1_000), at(1_499), at(1_500), at(3_000), at(3_499), at(3_500)]).toEqual([true, true, true, false, false, false, true]);
    timers.t = 1_000;
    await expect(runtime.start(lobby('a'))).rejects.toThrow('the container engine does not answer (outage)');
    timers.t = 2_999;
    await expect(runtime.start(lobby('b'))).rejects.toThrow(/outage/);
    timers.t = 3_000;
    await runtime.start(lobby('c'));
    expect(runtime.running).toEqual(['c']);
    expect(() => new FakeRuntime({ outages: [] })).toThrow('needs a clock');
  });

  it('keeps no history when told not to (a long simulation), and still knows its running containers', async () => {
    const { runtime } = setup({ history: false });
    await runtime.start(lobby('a'));
    await runtime.stop({ type: 'stop-lobby', lobbyId: 'a', region: 'eu', reason: 'requested', force: true });
    await runtime.start(lobby('b'));
    expect([runtime.started, runtime.stopped, runtime.running, runtime.startOf('b')?.lobbyId]).toEqual([[], [], ['b'], 'b']);
  });
});
