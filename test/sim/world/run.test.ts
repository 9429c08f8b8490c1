import { describe, expect, it } from 'vitest';
import { builtinScenario, builtinScenarioJson, BUILTIN_NAMES } from '../../../src/sim/scenario/builtin.js';
import { applyOverrides } from '../../../src/sim/scenario/overrides.js';
import { parseScenario } from '../../../src/sim/scenario/parse.js';
import type { RecordedRequest, Scenario } from '../../../src/sim/scenario/types.js';
import { canonicalJson } from '../../../src/sim/trace/canonical.js';
import { serializeTrace } from '../../../src/sim/trace/trace.js';
import { DecisionLog } from '../../../src/sim/world/decisions.js';
import { runScenario } from '../../../src/sim/world/run.js';

const MINUTE = 60_000;

/** A built-in with `--set`-style overrides applied (throws on a bad override: a test bug). */
const scenario = (name: (typeof BUILTIN_NAMES)[number], sets: readonly string[] = []): Scenario => {
  const json = applyOverrides(builtinScenarioJson(name), sets);
  if (!json.ok) throw new Error(JSON.stringify(json.error));
  const parsed = parseScenario(json.value);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
  return parsed.value;
};

/** `n` recorded finds of `party` players, 5 s apart. */
const finds = (n: number, party = 1): RecordedRequest[] =>
  Array.from({ length: n }, (_, i) => ({
    line: i + 1,
    atMs: i * 5000,
    kind: 'find' as const,
    gameMode: 'default',
    region: 'eu-west',
    party,
    sessionMs: 120_000,
    connects: true,
    refused: false,
  }));

const short = (name: (typeof BUILTIN_NAMES)[number], minutes = 10, sets: readonly string[] = []): Scenario =>
  scenario(name, [`duration_ms=${minutes * MINUTE}`, ...sets]);

describe('runScenario', () => {
  it('is deterministic: the same seed gives the same trace hash and metrics; another seed another hash', async () => {
    const s = short('steady', 5);
    const a = await runScenario(s);
    const b = await runScenario(s);
    const c = await runScenario(s, { seed: s.seed + 1 });
    expect(a.trace.hash).toBe(b.trace.hash);
    expect(a.metrics).toEqual(b.metrics);
    expect(a.events).toBe(b.events);
    expect(c.trace.hash).not.toBe(a.trace.hash);
  });

  it('writes canonical trace lines: each record serializes as canonical JSON', async () => {
    const s = short('steady', 10, ['version.matchmaker.actions.find.verification={"url":"https://game.example/v","headers":{}}', 'infrastructure.verifier={"timeout_share":0.1}']);
    const r = await runScenario(s, { keepTrace: true });
    const records = r.trace.records ?? [];
    const kinds = new Set(records.map((rec) => rec.kind));
    expect([...kinds].sort()).toEqual(['event', 'outcome', 'request', 'runtime', 'verify']);
    for (const rec of records) expect(JSON.stringify(rec)).toBe(canonicalJson(rec));
  });

  it.each(BUILTIN_NAMES)('keeps every invariant through %s (conservation, seat limits, ports, idle bounds, clock)', async (name) => {
    const r = await runScenario(short(name, 15));
    expect(r.violations).toEqual([]);
    expect(r.clockMonotone).toBe(true);
    const m = r.metrics;
    expect(m.arrivals.players).toBe(m.served + m.rejected + m.waiting);
    expect(m.served).toBeGreaterThan(0);
    expect(m.peakCcu).toBeGreaterThan(0);
    expect(m.lobbies.created).toBeGreaterThan(0);
    expect(m.idleLobbyHours).toBeLessThanOrEqual(m.lobbyHours);
    expect(m.timeToReadyMs.p50).toBeLessThanOrEqual(m.timeToReadyMs.p95);
    expect(m.timeToReadyMs.p95).toBeLessThanOrEqual(m.timeToReadyMs.p99);
    expect(r.samples.length).toBe(16);
    expect(r.samples.every((s, i) => s.t === i * MINUTE)).toBe(true);
  });

  it('a bigger idle pool buys shorter waits with idle lobby-hours when lobbies start slowly', async () => {
    const run = (max: number) =>
      runScenario(short('cold-start', 60, [`version.matchmaker.idle_lobbies={"min":${max},"max":${max}}`]));
    const none = await run(0);
    const many = await run(6);
    expect(many.metrics.idleLobbyHours).toBeGreaterThan(none.metrics.idleLobbyHours);
    expect(many.metrics.timeToReadyMs.p95).toBeLessThan(none.metrics.timeToReadyMs.p95 / 3);
  });

  it('calls the verification endpoint and refuses the share it denies', async () => {
    const s = short('steady', 10, [
      'version.matchmaker.actions.find.verification={"url":"https://game.example/verify","headers":{}}',
      'infrastructure.verifier={"deny_share":0.3,"timeout_share":0.05}',
    ]);
    const r = await runScenario(s);
    expect(r.violations).toEqual([]);
    expect(r.metrics.verificationCalls).toBeGreaterThan(100);
    const failed = r.metrics.rejections.MATCHMAKER_VERIFICATION_FAILED ?? 0;
    expect(failed / r.metrics.arrivals.players).toBeGreaterThan(0.2);
    expect(failed / r.metrics.arrivals.players).toBeLessThan(0.5);
    // A timed-out verification (10 s) shows in the time to a seat.
    expect(r.metrics.timeToSeatMs.p99).toBeGreaterThan(0);
  });

  it('asks the captcha provider for every new client when the version sets a captcha', async () => {
    const s = short('steady', 5, ['version.matchmaker.captcha={"hcaptcha":{"site_key":"s","secret_key":"k"},"requests_before_reverify":3,"verification_ttl":3600000}']);
    const r = await runScenario(s, { recorded: finds(30) });
    expect(r.violations).toEqual([]);
    expect(r.metrics.captchaCalls).toBe(30);
    expect(r.metrics.served).toBe(30);
    const failing = await runScenario(
      short('steady', 5, [
        'version.matchmaker.captcha={"hcaptcha":{"site_key":"s","secret_key":"k"},"requests_before_reverify":3,"verification_ttl":3600000}',
        'infrastructure.captcha={"fail_share":1}',
      ]),
      { recorded: finds(10) },
    );
    expect(failing.metrics.rejections).toEqual({ CAPTCHA_CAPTCHA_FAILED: 10 });
  });

  it('replays a recorded demand instead of the synthetic one', async () => {
    const s = short('steady', 10);
    const r = await runScenario(s, { recorded: finds(40, 2) });
    expect(r.metrics.arrivals).toEqual({ requests: 40, players: 80 });
    expect(r.metrics.served).toBe(80);
    expect(r.violations).toEqual([]);
  });

  it('a request the server refused, seated in the replay, plays as the scenario\'s demand says (its recorded line knows no session)', async () => {
    const s = short('steady', 10);
    const silent = finds(20).map((r) => ({ ...r, sessionMs: 0, connects: false }));
    const noShows = await runScenario(s, { recorded: silent });
    expect(noShows.metrics.served).toBe(20);
    expect(noShows.metrics.peakCcu).toBe(0);
    const refused = await runScenario(s, { recorded: silent.map((r) => ({ ...r, refused: true })) });
    expect(refused.violations).toEqual([]);
    expect(refused.metrics.served).toBe(20);
    expect(refused.metrics.peakCcu).toBeGreaterThan(0);
  });

  it('replays a recorded client\'s connection delay: a seat held by a slow client keeps a full namespace full, as it did on the server', async () => {
    // One lobby at most, one player each, no idle pool, lobbies ready after 1 s. The server seated A
    // at 0; A's client connected 10 s after its answer and left 1 s later, so B (at 8 s) found the
    // namespace's only lobby still held and was refused. A replay that draws A's delay (median 0.8 s,
    // p95 3 s) has A gone long before B comes, and seats B.
    const s = short('steady', 1, [
      'version.matchmaker.max_players=1', 'version.matchmaker.max_players_direct=1', 'version.matchmaker.max_players_party=1',
      'version.matchmaker.idle_lobbies={"min":0,"max":0}', 'version.matchmaker.regions.eu-west.idle_lobbies={"min":0,"max":0}', 'version.matchmaker.regions.us-east.idle_lobbies={"min":0,"max":0}',
      'infrastructure.lobby_count_max=1', 'infrastructure.regions[0].lobby_start_delay_ms={"kind":"constant","value":1000}', 'infrastructure.regions[0].lobby_crash_rate_per_hour=0',
    ]);
    const [a, b] = finds(2);
    if (a === undefined || b === undefined) throw new Error('fixture');
    const recorded = (connectMs: number): RecordedRequest[] => [
      { ...a, sessionMs: 1_000, connectMs },
      { ...b, atMs: 8_000, sessionMs: 0, connects: false, refused: true },
    ];
    const slow = await runScenario(s, { recorded: recorded(10_000) });
    expect(slow.violations).toEqual([]);
    expect(slow.metrics.served).toBe(1);
    expect(slow.metrics.rejections).toEqual({ MATCHMAKER_TOO_MANY_LOBBIES: 1 });
    // The same demand with a client that connects at once frees the lobby in time for B.
    const quick = await runScenario(s, { recorded: recorded(0) });
    expect(quick.metrics.served).toBe(2);
    expect(quick.metrics.rejected).toBe(0);
  });

  it('infrastructure.answer_ms: the client hears of its seat that much later; the decisions stay where they were', async () => {
    const sets = ['infrastructure.regions[0].lobby_start_delay_ms={"kind":"constant","value":1000}'];
    const at = await runScenario(short('steady', 10, sets), { recorded: finds(30), keepTrace: true });
    const later = await runScenario(short('steady', 10, [...sets, 'infrastructure.answer_ms={"kind":"constant","value":3}']), { recorded: finds(30), keepTrace: true });
    expect(later.violations).toEqual([]);
    // Seats ready at once (most: the idle lobby and the first lobby's free seats) wait the answer time; the
    // first find's seat waits its lobby's start, which the answer time overlaps.
    expect(at.metrics.timeToReadyMs).toEqual({ p50: 0, p95: 0, p99: 1_000 });
    expect(later.metrics.timeToReadyMs).toEqual({ p50: 3, p95: 3, p99: 1_000 });
    expect(later.metrics.timeToSeatMs).toEqual({ p50: 3, p95: 3, p99: 3 });
    // The same decisions at the same times: each request's outcome record.
    const outcomes = (r: typeof at): unknown[] => (r.trace.records ?? []).filter((t) => t.kind === 'outcome');
    expect(outcomes(later)).toEqual(outcomes(at));
    expect(later.metrics.served).toBe(at.metrics.served);
  });

  it('infrastructure.lobby_count_max caps the namespace\'s active lobbies apart from the regions\' containers', async () => {
    const sets = ['version.matchmaker.max_players=2'];
    const free = await runScenario(short('steady', 10, sets), { recorded: finds(40) });
    expect(free.metrics.rejected).toBe(0);
    expect(free.metrics.lobbies.peakActive).toBeGreaterThan(3);
    const capped = await runScenario(short('steady', 10, [...sets, 'infrastructure.lobby_count_max=3']), { recorded: finds(40) });
    expect(capped.violations).toEqual([]);
    expect(capped.metrics.lobbies.peakActive).toBe(3);
    expect(capped.metrics.rejections['MATCHMAKER_TOO_MANY_LOBBIES']).toBeGreaterThan(0);
  });

  it('fails no invariant when the namespace runs out of lobbies (launch spike, tiny capacity)', async () => {
    const r = await runScenario(short('launch-spike', 20, ['infrastructure.regions[0].lobby_count_max=3', 'infrastructure.regions[1].lobby_count_max=3']));
    expect(r.violations).toEqual([]);
    expect(r.metrics.rejected).toBeGreaterThan(0);
  });

  it('holds no game mode under start back-off to idle_lobbies.min: its creations wait on purpose', async () => {
    // Lobbies that crash before ready put the mode under back-off; the idle pool is short meanwhile.
    const spike = await runScenario(short('launch-spike', 50));
    const tight = await runScenario(scenario('cold-start', ['version.matchmaker.max_players=12', 'infrastructure.regions[0].lobby_count_max=40']));
    for (const r of [spike, tight]) {
      expect(r.metrics.rejections['MATCHMAKER_LOBBY_START_BACKOFF']).toBeGreaterThan(0);
      expect(r.violations).toEqual([]);
    }
  });

  it('reports progress monotonically up to 1', async () => {
    const seen: number[] = [];
    await runScenario(builtinScenario('steady'), { onProgress: (f) => seen.push(f) });
    expect(seen.at(-1)).toBe(1);
    expect(seen.every((f, i) => i === 0 || f >= (seen[i - 1] ?? 0))).toBe(true);
    expect(seen.length).toBeGreaterThan(10);
  });

  it('streams the trace to a sink: the chunks are exactly the kept records as JSONL, and the hash is unchanged', async () => {
    const s = short('cold-start', 5);
    const chunks: string[] = [];
    const streamed = await runScenario(s, { traceSink: (chunk) => void chunks.push(chunk) });
    const kept = await runScenario(s, { keepTrace: true });
    expect(chunks.join('')).toBe(serializeTrace(kept.trace.records ?? []));
    expect(chunks.every((c) => c.endsWith('\n'))).toBe(true);
    expect(streamed.trace.hash).toBe(kept.trace.hash);
  });

  it('maxSamples keeps at most that many samples, evenly spaced, each as the full run has it, and changes no figure', async () => {
    const all = await runScenario(short('steady', 40));
    const few = await runScenario(short('steady', 40), { maxSamples: 7 });
    expect(all.samples.length).toBe(41);
    // 41 samples thinned past 7: every 8th minute.
    expect(few.samples.map((s) => s.t / MINUTE)).toEqual([0, 8, 16, 24, 32, 40]);
    expect(few.samples).toEqual(all.samples.filter((s) => (s.t / MINUTE) % 8 === 0));
    expect(few.metrics).toEqual(all.metrics);
    expect(few.trace.hash).toBe(all.trace.hash);
  });

  it('samples the players still waiting for a ready seat each minute (slow starts make some wait)', async () => {
    const r = await runScenario(short('cold-start', 15, ['version.matchmaker.idle_lobbies={"min":0,"max":0}']));
    expect(r.samples.every((x) => Number.isInteger(x.waiting) && x.waiting >= 0)).toBe(true);
    expect(Math.max(...r.samples.map((x) => x.waiting))).toBeGreaterThan(0);
  });

  it('keeps the decisions from a given time, and the core alone decides them again the same way', async () => {
    const s = short('steady', 10);
    const log = new DecisionLog(5 * MINUTE);
    const logged = await runScenario(s, { decisions: log });
    const plain = await runScenario(s);
    expect(logged.trace.hash).toBe(plain.trace.hash);
    expect(log.decisions).toBeGreaterThan(100);
    expect(log.events).toBeGreaterThan(log.decisions / 2);
    const kept = log.decisions;
    const replay = log.replay();
    expect(replay.events).toBe(log.events);
    expect(replay.decideMs).toBeGreaterThan(0);
    expect([log.decisions, log.replay().events]).toEqual([0, 0]);
    expect(kept).toBeGreaterThan(100);
    expect(new DecisionLog().replay()).toEqual({ events: 0, decideMs: 0 });
  });

  it('reports each minute\'s sample with the events handled so far', async () => {
    const seen: [number, number][] = [];
    const r = await runScenario(short('steady', 5), { onSample: (t, events) => void seen.push([t, events]) });
    expect(seen.map(([t]) => t)).toEqual([0, 1, 2, 3, 4, 5].map((m) => m * MINUTE));
    expect(seen.every(([, e], i) => i === 0 || e > (seen[i - 1]?.[1] ?? 0))).toBe(true);
    expect(seen.at(-1)?.[1]).toBeLessThan(r.events);
  });
});
