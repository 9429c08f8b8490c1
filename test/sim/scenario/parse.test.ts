import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../../src/sim/scenario/parse.js';
import { arr, minimal, obj, paths, type Obj } from './fixtures.js';

/** A minimal scenario with `edit` applied to its JSON. */
const withEdit = (edit: (s: Obj) => void): Record<string, unknown> => {
  const s = minimal();
  edit(s);
  return s;
};
const eu = (s: Obj): Obj => obj(s, 'demand.default.eu');
const region0 = (s: Obj): Obj => obj(s, 'infrastructure.regions.0');
const D = 'demand.*default*.*eu*';

describe('parseScenario', () => {
  it('parses a minimal scenario into camelCase', () => {
    const r = parseScenario(minimal());
    expect(paths(r)).toEqual([]);
    if (!r.ok) return;
    expect(r.value.durationMs).toBe(3_600_000);
    expect(r.value.seed).toBe(42);
    expect(r.value.demand['default']?.['eu']).toEqual({
      arrivals: { kind: 'constant', perMinute: 10 },
      partySize: { kind: 'choice', weights: { '1': 0.7, '2': 0.3 } },
      mix: { find: 1, join: 0, create: 0 },
      sessionMs: { kind: 'exponential', mean: 600_000 },
      noShowShare: 0.05,
    });
    expect(r.value.infrastructure.regions[0]?.region).toEqual({ id: 'eu', displayName: 'Europe', provider: 'Tavern' });
    expect(r.value.resolved.gameModes.map((m) => m.name)).toEqual(['default']);
    expect(Object.isFrozen(r.value.demand)).toBe(true);
  });

  it('parses piecewise curves, optional fields and coords', () => {
    const r = parseScenario(withEdit((s) => {
      eu(s)['arrivals'] = { kind: 'piecewise', period_ms: 86_400_000, points: [{ at_ms: 0, per_minute: 1 }, { at_ms: 3_600_000, per_minute: 5 }] };
      region0(s)['coords'] = { latitude: 50.1, longitude: 8.7 };
      region0(s)['cost_per_lobby_hour'] = 0.1;
      obj(s, 'infrastructure')['answer_ms'] = { kind: 'lognormal', median: 2, p95: 9 };
    }));
    expect(paths(r)).toEqual([]);
    if (!r.ok) return;
    expect(r.value.infrastructure.answerMs).toEqual({ kind: 'lognormal', median: 2, p95: 9 });
    expect(r.value.demand['default']?.['eu']?.arrivals).toEqual({ kind: 'piecewise', period: 86_400_000, points: [{ at: 0, perMinute: 1 }, { at: 3_600_000, perMinute: 5 }] });
    expect(r.value.infrastructure.regions[0]?.region.coords).toEqual({ latitude: 50.1, longitude: 8.7 });
    expect(r.value.infrastructure.regions[0]?.costPerLobbyHour).toBe(0.1);
  });

  it('parses runtime outages, noticed after 5 s unless the scenario says', () => {
    const r = parseScenario(withEdit((s) => {
      obj(s, 'infrastructure')['runtime_outages'] = [{ at_ms: 60_000, duration_ms: 30_000 }, { at_ms: 600_000, duration_ms: 1, noticed_after_ms: 0 }];
    }));
    expect(paths(r)).toEqual([]);
    if (!r.ok) return;
    expect(r.value.infrastructure.runtimeOutages).toEqual([{ atMs: 60_000, durationMs: 30_000, noticedAfterMs: 5_000 }, { atMs: 600_000, durationMs: 1, noticedAfterMs: 0 }]);
    const none = parseScenario(minimal());
    expect(none.ok && none.value.infrastructure.runtimeOutages).toBeUndefined();
  });

  it.each<[string, (s: Obj) => void, string[]]>([
    ['non-object', (s) => { s['demand'] = []; }, ['demand.invalid-type']],
    ['unknown game mode', (s) => { obj(s, 'demand')['ctf'] = {}; }, ['demand.*ctf*.not-found']],
    ['unknown region', (s) => { obj(s, 'demand.default')['mars'] = eu(s); }, ['demand.*default*.*mars*.not-found']],
    ['mode not offered in region', (s) => {
      arr(s, 'infrastructure.regions').push({ ...region0(s), id: 'us' });
      obj(s, 'demand.default')['us'] = eu(s);
    }, ['demand.*default*.*us*.not-in-game-mode']],
    ['negative rate', (s) => { eu(s)['arrivals'] = { kind: 'constant', per_minute: -1 }; }, [`${D}.arrivals.per-minute.negative`]],
    ['non-finite number', (s) => { eu(s)['arrivals'] = { kind: 'constant', per_minute: Infinity }; }, [`${D}.arrivals.per-minute.not-finite`]],
    ['share above 1', (s) => { eu(s)['no_show_share'] = 1.5; }, [`${D}.no-show-share.too-high`]],
    ['share below 0', (s) => { eu(s)['no_show_share'] = -0.1; }, [`${D}.no-show-share.negative`]],
    ['empty mix', (s) => { eu(s)['mix'] = {}; }, [`${D}.mix.empty`]],
    ['all-zero mix', (s) => { eu(s)['mix'] = { find: 0, join: 0 }; }, [`${D}.mix.empty`]],
    ['lognormal p95 ≤ median', (s) => { eu(s)['session_ms'] = { kind: 'lognormal', median: 10, p95: 10 }; }, [`${D}.session-ms.p95.not-above-median`]],
    ['lognormal median ≤ 0', (s) => { eu(s)['session_ms'] = { kind: 'lognormal', median: 0, p95: 10 }; }, [`${D}.session-ms.median.not-positive`]],
    ['uniform min > max', (s) => { eu(s)['session_ms'] = { kind: 'uniform', min: 5, max: 1 }; }, [`${D}.session-ms.min-gt-max`]],
    ['exponential mean 0', (s) => { eu(s)['session_ms'] = { kind: 'exponential', mean: 0 }; }, [`${D}.session-ms.mean.not-positive`]],
    ['unknown kind', (s) => { eu(s)['session_ms'] = { kind: 'pareto' }; }, [`${D}.session-ms.kind.invalid`]],
    ['missing kind', (s) => { eu(s)['session_ms'] = { value: 1 }; }, [`${D}.session-ms.kind.missing`]],
    ['choice outside party size', (s) => { eu(s)['session_ms'] = { kind: 'choice', weights: { '1': 1 } }; }, [`${D}.session-ms.kind.invalid`]],
    ['all-zero choice', (s) => { eu(s)['party_size'] = { kind: 'choice', weights: { '1': 0 } }; }, [`${D}.party-size.weights.invalid`]],
    ['empty choice', (s) => { eu(s)['party_size'] = { kind: 'choice', weights: {} }; }, [`${D}.party-size.weights.invalid`]],
    ['choice key not a size', (s) => { eu(s)['party_size'] = { kind: 'choice', weights: { '0': 1, two: 1 } }; }, [`${D}.party-size.weights.*0*.invalid-key`, `${D}.party-size.weights.*two*.invalid-key`]],
    ['negative weight', (s) => { eu(s)['party_size'] = { kind: 'choice', weights: { '1': -1 } }; }, [`${D}.party-size.weights.*1*.negative`]],
    ['empty points', (s) => { eu(s)['arrivals'] = { kind: 'piecewise', points: [] }; }, [`${D}.arrivals.points.empty`]],
    ['points out of order', (s) => {
      eu(s)['arrivals'] = { kind: 'piecewise', points: [{ at_ms: 10, per_minute: 1 }, { at_ms: 10, per_minute: 1 }] };
    }, [`${D}.arrivals.points.1.at-ms.not-increasing`]],
    ['point past the period', (s) => {
      eu(s)['arrivals'] = { kind: 'piecewise', period_ms: 100, points: [{ at_ms: 100, per_minute: 1 }] };
    }, [`${D}.arrivals.points.0.at-ms.not-in-period`]],
    ['missing required demand fields', (s) => { obj(s, 'demand.default')['eu'] = {}; }, [
      `${D}.arrivals.missing`, `${D}.party-size.missing`, `${D}.mix.missing`, `${D}.session-ms.missing`,
    ]],
    ['unknown member', (s) => { eu(s)['sesion_ms'] = 1; }, [`${D}.*sesion_ms*.unknown-key`]],
    ['dynamic max players not allowed', (s) => { eu(s)['dynamic_max_players'] = { kind: 'constant', value: 4 }; }, [`${D}.dynamic-max-players.not-allowed`]],
    ['tags not allowed', (s) => { eu(s)['tags'] = { map: 'dust' }; }, [`${D}.tags.not-allowed`]],
    ['duration 0', (s) => { s['duration_ms'] = 0; }, ['duration-ms.not-positive']],
    ['duration over 31 days', (s) => { s['duration_ms'] = 31 * 86_400_000 + 1; }, ['duration-ms.too-high']],
    ['duration not an integer', (s) => { s['duration_ms'] = 1.5; }, ['duration-ms.not-an-integer']],
    ['seed not an integer', (s) => { s['seed'] = 1.5; }, ['seed.not-an-integer']],
    ['seed above u32', (s) => { s['seed'] = 2 ** 32; }, ['seed.too-large']],
    ['seed negative', (s) => { s['seed'] = -1; }, ['seed.negative']],
    ['missing seed and duration', (s) => { delete s['seed']; delete s['duration_ms']; }, ['duration-ms.missing', 'seed.missing']],
    ['no infrastructure regions', (s) => { s['infrastructure'] = { regions: [] }; }, [
      'infrastructure.regions.empty', 'version.matchmaker.regions.*eu*.not-found', 'demand.*default*.*eu*.not-found',
    ]],
    ['duplicate region id', (s) => { arr(s, 'infrastructure.regions').push(region0(s)); }, ['infrastructure.regions.1.id.not-unique']],
    ['bad region fields', (s) => {
      Object.assign(region0(s), { lobby_count_max: -1, lobby_crash_rate_per_hour: -2, coords: { latitude: 91, longitude: 0 } });
    }, ['infrastructure.regions.0.coords.latitude.too-high', 'infrastructure.regions.0.lobby-crash-rate-per-hour.negative', 'infrastructure.regions.0.lobby-count-max.negative']],
    ['bad start delay', (s) => { region0(s)['lobby_start_delay_ms'] = { kind: 'uniform', min: 2, max: 1 }; }, ['infrastructure.regions.0.lobby-start-delay-ms.min-gt-max']],
    ['bad answer time', (s) => { obj(s, 'infrastructure')['answer_ms'] = { kind: 'lognormal', median: 4, p95: 2 }; }, ['infrastructure.answer-ms.p95.not-above-median']],
    ['runtime outages not a list', (s) => { obj(s, 'infrastructure')['runtime_outages'] = {}; }, ['infrastructure.runtime-outages.invalid-type']],
    ['bad runtime outage', (s) => {
      obj(s, 'infrastructure')['runtime_outages'] = [{ at_ms: 1 }, { at_ms: -1, duration_ms: 0, noticed_after_ms: 1.5, until_ms: 2 }];
    }, [
      'infrastructure.runtime-outages.0.duration-ms.missing', 'infrastructure.runtime-outages.1.at-ms.negative', 'infrastructure.runtime-outages.1.duration-ms.not-positive',
      'infrastructure.runtime-outages.1.noticed-after-ms.not-an-integer', 'infrastructure.runtime-outages.1.*until_ms*.unknown-key',
    ]],
    ['version problem from the core', (s) => { obj(s, 'version.matchmaker')['max_players'] = 1000; }, ['version.matchmaker.max-players.too-high']],
    ['version region not in infrastructure', (s) => { obj(s, 'version.matchmaker.regions')['us'] = {}; }, ['version.matchmaker.regions.*us*.not-found']],
    ['version structural problem', (s) => { s['version'] = { matchmaker: [] }; }, ['version.matchmaker.invalid-type']],
    ['missing version', (s) => { delete s['version']; }, ['version.missing']],
    ['no demand at all', (s) => { delete s['demand']; }, ['demand.missing']],
    ['demand and recorded demand', (s) => { s['recorded_demand'] = 'x.jsonl'; }, ['recorded-demand.conflicts-with-demand']],
    ['unknown top-level key', (s) => { s['sed'] = 1; }, ['*sed*.unknown-key']],
  ])('%s', (_name, edit, expected) => {
    expect(paths(parseScenario(withEdit(edit))).sort()).toEqual([...expected].sort());
  });

  it('names a mistyped or forbidden key, in the scenario or in its version, with the key it meant or why', () => {
    const r = parseScenario(withEdit((s) => {
      eu(s)['sesion_ms'] = 1;
      obj(s, 'version.matchmaker')['max_player'] = 8;
      obj(s, 'version.matchmaker.container')['privileged'] = true;
    }));
    const found = r.ok ? [] : r.error.map((p) => [p.path.join('.'), p.message]);
    expect(found.sort()).toEqual([
      [`${D}.*sesion_ms*.unknown-key`, 'unknown key `sesion_ms`: did you mean `session_ms`?'],
      ['version.matchmaker.*max_player*.unknown-key', 'unknown key `max_player`: did you mean `max_players`?'],
      ['version.matchmaker.container.*privileged*.forbidden-key', expect.stringMatching(/^`privileged` is never allowed: lobbies run unprivileged/)],
    ]);
  });

  it('reports every problem at once', () => {
    const r = parseScenario(withEdit((s) => {
      s['seed'] = -1;
      s['duration_ms'] = 0;
      eu(s)['mix'] = {};
      eu(s)['party_size'] = { kind: 'choice', weights: { '1': 0 } };
    }));
    expect(paths(r).sort()).toEqual([`${D}.mix.empty`, `${D}.party-size.weights.invalid`, 'duration-ms.not-positive', 'seed.negative'].sort());
  });

  it('accepts a recorded demand instead of a synthetic one', () => {
    const r = parseScenario(withEdit((s) => { delete s['demand']; s['recorded_demand'] = 'day.jsonl'; }));
    expect(paths(r)).toEqual([]);
    if (r.ok) expect([r.value.recordedDemand, Object.keys(r.value.demand)]).toEqual(['day.jsonl', []]);
    expect(paths(parseScenario(withEdit((s) => { delete s['demand']; }), { externalDemand: true }))).toEqual([]);
  });

  it('allows dynamic max players and tags where the mode allows them', () => {
    const r = parseScenario(withEdit((s) => {
      obj(s, 'version.matchmaker.game_modes')['default'] = { allow_dynamic_max_players: true, taggable: true };
      eu(s)['dynamic_max_players'] = { kind: 'uniform', min: 2, max: 8 };
      eu(s)['tags'] = { map: 'dust' };
    }));
    expect(paths(r)).toEqual([]);
  });

  it('refuses a non-object', () => {
    expect(paths(parseScenario(null))).toEqual(['invalid-type']);
    expect(paths(parseScenario([]))).toEqual(['invalid-type']);
  });
});
