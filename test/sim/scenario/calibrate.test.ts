/** Calibration: fits from the server's observation, the defaults kept for thin data, and a scenario that parses. */
import { describe, expect, it } from 'vitest';
import { createStream, sample } from '../../../src/core/distribution.js';
import { CALIBRATED_REGION_CAPACITY, CALIBRATION_DEFAULTS, calibrateScenario, fitCrashRate, fitQuantiles, lognormalParams, MIN_SAMPLES, type Observed } from '../../../src/sim/scenario/calibrate.js';
import { parseScenario } from '../../../src/sim/scenario/parse.js';

const version = {
  matchmaker: {
    regions: { eu: {}, us: {} },
    max_players: 8,
    container: { image_id: '00000000-0000-4000-8000-000000000001', ports: { game: { port: 7777, protocol: 'udp' } } },
    game_modes: { default: {}, duel: { regions: { eu: {} } } },
  },
};

const observed = (over: Partial<Observed> = {}): Observed => ({
  start_ts: '2026-01-01T00:00:00.000Z',
  end_ts: '2026-01-02T00:00:00.000Z',
  answer_ms: { samples: 1_100, median: 2, p95: 9 },
  regions: {
    eu: {
      lobby_start_delay_ms: { samples: 400, median: 2_000, p95: 6_000 },
      crashes: 3,
      lobby_hours: 150,
      session_ms: { samples: 900, median: 600_000, p95: 1_800_000 },
      seat_wait_ms: { samples: 900, median: 20, p95: 2_500 },
    },
    us: {
      lobby_start_delay_ms: { samples: 4, median: 9_000, p95: 12_000 },
      crashes: 0,
      lobby_hours: 0.5,
      session_ms: { samples: 3, median: 100_000, p95: 200_000 },
      seat_wait_ms: { samples: 3, median: 10, p95: 10 },
    },
  },
  game_modes: {
    default: {
      eu: { requests: { find: 1_380, join: 30, create: 30 }, parties: { 1: 1_300, 2: 140 }, seats: 1_580, connected: 1_500, session_ms: { samples: 880, median: 600_000, p95: 1_800_000 } },
      us: { requests: { find: 3, join: 0, create: 0 }, parties: { 1: 3 }, seats: 3, connected: 3, session_ms: { samples: 3, median: 100_000, p95: 200_000 } },
    },
  },
  ...over,
});

const regions = [{ id: 'us', display_name: 'US East', coords: { latitude: 39, longitude: -77 } }, { id: 'eu', display_name: 'Europe' }];

describe('fits', () => {
  it('a lognormal through the median and p95: mu = ln(median), sigma = (ln(p95) - mu) / 1.645', () => {
    const fit = fitQuantiles({ samples: 50, median: 2_000, p95: 6_000 }, CALIBRATION_DEFAULTS.lobbyStartDelayMs);
    expect(fit).toEqual({ fitted: true, samples: 50, value: { kind: 'lognormal', median: 2_000, p95: 6_000 } });
    const { mu, sigma } = lognormalParams(2_000, 6_000);
    expect(mu).toBeCloseTo(Math.log(2_000), 12);
    expect(sigma).toBeCloseTo((Math.log(6_000) - Math.log(2_000)) / 1.645, 3);
    // The simulator draws that distribution back: its sample median and p95 match what was observed.
    const stream = createStream(7);
    const draws = Array.from({ length: 20_000 }, () => sample(fit.value, stream)).sort((a, b) => a - b);
    expect(draws[10_000]! / 2_000).toBeGreaterThan(0.97);
    expect(draws[10_000]! / 2_000).toBeLessThan(1.03);
    expect(draws[19_000]! / 6_000).toBeGreaterThan(0.95);
    expect(draws[19_000]! / 6_000).toBeLessThan(1.05);
  });

  it('equal median and p95 give a constant; too few samples keep the default and say why', () => {
    expect(fitQuantiles({ samples: 30, median: 800, p95: 800 }, CALIBRATION_DEFAULTS.sessionMs).value).toEqual({ kind: 'constant', value: 800 });
    expect(fitQuantiles({ samples: MIN_SAMPLES - 1, median: 800, p95: 900 }, CALIBRATION_DEFAULTS.sessionMs)).toEqual({
      fitted: false, samples: MIN_SAMPLES - 1, value: CALIBRATION_DEFAULTS.sessionMs, reason: `${MIN_SAMPLES - 1} samples, at least ${MIN_SAMPLES} needed`,
    });
    expect(fitQuantiles({ samples: 0 }, CALIBRATION_DEFAULTS.sessionMs).fitted).toBe(false);
    expect(fitQuantiles({ samples: 40, median: 0, p95: 10 }, CALIBRATION_DEFAULTS.sessionMs)).toMatchObject({ fitted: false, reason: 'the median is 0 ms' });
  });

  it('crash rate: crashes per lobby-hour, the default below one lobby-hour', () => {
    expect(fitCrashRate(3, 150)).toEqual({ fitted: true, value: 0.02, samples: 3 });
    expect(fitCrashRate(0, 150)).toEqual({ fitted: true, value: 0, samples: 0 });
    expect(fitCrashRate(1, 0.5)).toMatchObject({ fitted: false, value: 0, reason: '0.50 lobby-hours, at least 1 needed' });
  });
});

describe('calibrateScenario', () => {
  it('writes a scenario that parses: the version as given, each region fitted or defaulted, the demand observed', () => {
    const { scenario, report } = calibrateScenario({ version, observed: observed(), regions, lobbyCountMax: 128, name: 'prod-calibrated' });
    const parsed = parseScenario(scenario);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const s = parsed.value;
    expect(scenario['version']).toEqual(version);
    expect(s.durationMs).toBe(86_400_000);
    // Region order follows the server's list; coordinates and names come with it.
    // The namespace's cap is the namespace's (not one per region); the regions' containers are not bounded by Tavern.
    expect(s.infrastructure.lobbyCountMax).toBe(128);
    // The server's own answer time, from the waits of the seats it found ready.
    expect(s.infrastructure.answerMs).toEqual({ kind: 'lognormal', median: 2, p95: 9 });
    expect(s.infrastructure.regions.map((r) => [r.region.id, r.region.displayName, r.lobbyCountMax])).toEqual([['us', 'US East', CALIBRATED_REGION_CAPACITY], ['eu', 'Europe', CALIBRATED_REGION_CAPACITY]]);
    const [us, eu] = s.infrastructure.regions;
    expect(eu?.lobbyStartDelayMs).toEqual({ kind: 'lognormal', median: 2_000, p95: 6_000 });
    expect(eu?.lobbyCrashRatePerHour).toBeCloseTo(0.02, 12);
    expect(us?.lobbyStartDelayMs).toEqual(CALIBRATION_DEFAULTS.lobbyStartDelayMs);
    expect(us?.lobbyCrashRatePerHour).toBe(0);
    const euDemand = s.demand['default']?.['eu'];
    expect(euDemand?.arrivals).toEqual({ kind: 'constant', perMinute: 1_440 / 1_440 });
    expect(euDemand?.mix).toEqual({ find: 1_380, join: 30, create: 30 });
    expect(euDemand?.partySize).toEqual({ kind: 'choice', weights: { 1: 1_300, 2: 140 } });
    expect(euDemand?.noShowShare).toBeCloseTo(80 / 1_580, 12);
    expect(euDemand?.sessionMs).toEqual({ kind: 'lognormal', median: 600_000, p95: 1_800_000 });
    expect(s.demand['default']?.['us']?.sessionMs).toEqual(CALIBRATION_DEFAULTS.sessionMs);
    // A mode nobody played has no demand.
    expect(s.demand['duel']).toBeUndefined();
    expect(report).toEqual(expect.arrayContaining([
      'answer time: lognormal median 2 ms, p95 9 ms (mu 0.693, sigma 0.914) (from 1100 seats ready at once)',
      'region eu:',
      '  lobby start delay: lognormal median 2000 ms, p95 6000 ms (mu 7.601, sigma 0.668) (from 400 lobbies made ready)',
      '  crash rate: 0.0200 per lobby-hour (from 3 crashes in 150.00 lobby-hours)',
      'region us:',
      '  lobby start delay: not fitted (4 samples, at least 20 needed): kept lognormal median 3000 ms, p95 8000 ms (mu 8.006, sigma 0.596)',
      '  crash rate: not fitted (0.50 lobby-hours, at least 1 needed): kept 0.0000 per lobby-hour',
      '  session length: not fitted (3 samples, at least 20 needed): kept lognormal median 900000 ms, p95 2700000 ms (mu 13.710, sigma 0.668)',
    ]));
  });

  it('an empty window: every figure defaulted, no synthetic demand (the scenario runs with --recorded)', () => {
    const { scenario, report } = calibrateScenario({ version, observed: observed({ regions: {}, game_modes: {}, answer_ms: { samples: 0 } }), regions, lobbyCountMax: 10, name: 'x' });
    expect(scenario['demand']).toBeUndefined();
    expect(report).toContain('no requests in the window: the scenario has no synthetic demand (replay one with --recorded)');
    const parsed = parseScenario(scenario, { externalDemand: true });
    expect(parsed.ok && parsed.value.infrastructure.answerMs).toEqual(CALIBRATION_DEFAULTS.answerMs);
    expect(report).toContain('answer time: not fitted (0 samples, at least 20 needed): kept constant 0 ms');
    expect(report.filter((l) => l.includes('not fitted')).length).toBe(7);
  });

  it('an observation from a server that does not report its answer time keeps the default', () => {
    const { answer_ms: _absent, ...older } = observed();
    const { scenario, report } = calibrateScenario({ version, observed: older, regions, lobbyCountMax: 10, name: 'x' });
    expect((scenario['infrastructure'] as Record<string, unknown>)['answer_ms']).toEqual(CALIBRATION_DEFAULTS.answerMs);
    expect(report).toContain('answer time: not fitted (0 samples, at least 20 needed): kept constant 0 ms');
  });

  it('a version region the server does not describe is named by its id; a version that does not parse is refused', () => {
    const { scenario } = calibrateScenario({ version, observed: observed(), regions: [], lobbyCountMax: 5, name: 'x' });
    expect((scenario['infrastructure'] as { regions: { id: string; display_name: string }[] }).regions.map((r) => [r.id, r.display_name])).toEqual([['eu', 'eu'], ['us', 'us']]);
    expect(() => calibrateScenario({ version: { matchmaker: 7 }, observed: observed(), regions, lobbyCountMax: 5, name: 'x' })).toThrow(/does not parse/);
  });
});
