import { describe, expect, it } from 'vitest';
import { BUILTIN_NAMES, builtinScenario, builtinScenarioJson, isBuiltinName } from '../../../src/sim/scenario/builtin.js';
import { parseScenario } from '../../../src/sim/scenario/parse.js';
import { rateAt } from '../../../src/sim/engine/curve.js';
import { paths } from './fixtures.js';

describe('built-in scenarios', () => {
  it.each(BUILTIN_NAMES)('%s parses with zero problems', (name) => {
    expect(paths(parseScenario(builtinScenarioJson(name)))).toEqual([]);
    expect(builtinScenario(name).name).toBe(name);
  });

  it('names exactly the four built-ins', () => {
    expect([...BUILTIN_NAMES]).toEqual(['steady', 'diurnal', 'launch-spike', 'cold-start']);
    expect(isBuiltinName('steady')).toBe(true);
    expect(isBuiltinName('nope')).toBe(false);
  });

  it('hands out copies of the raw JSON', () => {
    const a = builtinScenarioJson('steady') as Record<string, unknown>;
    a['seed'] = 99;
    expect((builtinScenarioJson('steady') as Record<string, unknown>)['seed']).toBe(1);
  });

  it('steady: constant arrivals, two regions, about an hour', () => {
    const s = builtinScenario('steady');
    expect(s.infrastructure.regions).toHaveLength(2);
    expect(s.durationMs).toBe(3_600_000);
    for (const byRegion of Object.values(s.demand)) for (const d of Object.values(byRegion)) expect(d.arrivals.kind).toBe('constant');
  });

  it('diurnal: a 24 h day whose regional peaks are offset by time zone', () => {
    const s = builtinScenario('diurnal');
    expect(s.durationMs).toBe(86_400_000);
    const peakHour = (region: string): number => {
      const curve = s.demand['default']?.[region]?.arrivals;
      if (curve === undefined) throw new Error(region);
      const hours = Array.from({ length: 24 }, (_, h) => rateAt(curve, h * 3_600_000));
      return hours.indexOf(Math.max(...hours));
    };
    expect(new Set(['eu-west', 'us-east', 'ap-southeast'].map(peakHour)).size).toBe(3);
  });

  it('launch-spike: ten times the arrivals for ten minutes', () => {
    const curve = builtinScenario('launch-spike').demand['default']?.['eu-west']?.arrivals;
    if (curve === undefined) throw new Error('curve');
    const base = rateAt(curve, 10 * 60_000);
    expect(rateAt(curve, 35 * 60_000)).toBe(base * 10);
    expect(rateAt(curve, 45 * 60_000)).toBe(base);
  });

  it('cold-start: slow lobby starts with idle lobbies configured', () => {
    const s = builtinScenario('cold-start');
    for (const r of s.infrastructure.regions) expect(r.lobbyStartDelayMs).toEqual({ kind: 'lognormal', median: 40_000, p95: 120_000 });
    for (const mode of s.resolved.gameModes) for (const r of mode.regions) expect(r.idleLobbies.min).toBeGreaterThan(0);
  });
});
