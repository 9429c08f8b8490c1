import { describe, expect, it } from 'vitest';
import { applyOverrides, sweepValues } from '../../../src/sim/scenario/overrides.js';
import { parseOverridePath, splitValues } from '../../../src/sim/scenario/override-path.js';
import { parseScenario } from '../../../src/sim/scenario/parse.js';
import { minimal, paths } from './fixtures.js';

describe('applyOverrides', () => {
  it('sets nested values, parsing JSON and falling back to strings, without touching the input', () => {
    const input = { seed: 1, demand: { default: { eu: { mix: { find: 1 } } } } };
    const r = applyOverrides(input, ['seed=7', 'demand.default.eu.mix.join=0.5', 'name=my run', 'demand.default.eu.tags={"map":"dust"}']);
    expect(r).toEqual({ ok: true, value: { seed: 7, name: 'my run', demand: { default: { eu: { mix: { find: 1, join: 0.5 }, tags: { map: 'dust' } } } } } });
    expect(input.seed).toBe(1);
    expect(input.demand.default.eu.mix).toEqual({ find: 1 });
  });

  it('creates unknown intermediate objects, and arrays for [i]', () => {
    expect(applyOverrides({}, ['a.b.c=1'])).toEqual({ ok: true, value: { a: { b: { c: 1 } } } });
    expect(applyOverrides({}, ['a[0].b=x'])).toEqual({ ok: true, value: { a: [{ b: 'x' }] } });
  });

  it('addresses array items with [i] or numeric segments, and may append', () => {
    const input = { regions: [{ id: 'eu' }, { id: 'us' }] };
    expect(applyOverrides(input, ['regions[1].id=ap', 'regions.0.lobby_count_max=5', 'regions[2]={"id":"sa"}'])).toEqual({
      ok: true,
      value: { regions: [{ id: 'eu', lobby_count_max: 5 }, { id: 'ap' }, { id: 'sa' }] },
    });
  });

  it('edits a scenario that then parses', () => {
    const r = applyOverrides(minimal(), ['infrastructure.regions[0].lobby_count_max=3', 'demand.default.eu.arrivals.per_minute=90']);
    expect(r.ok).toBe(true);
    const parsed = parseScenario(r.ok ? r.value : undefined);
    expect(parsed.ok && parsed.value.infrastructure.regions[0]?.lobbyCountMax).toBe(3);
  });

  it.each([
    ['seed', 'set.0.missing-equals'],
    ['=1', 'set.0.path.invalid'],
    ['a..b=1', 'set.0.path.invalid'],
    ['a[x]=1', 'set.0.path.invalid'],
    ['a[0=1', 'set.0.path.invalid'],
    ['__proto__.polluted=1', 'set.0.path.invalid-key'],
    ['seed.x=1', 'set.0.path.not-a-container'],
    ['list[5]=1', 'set.0.path.index-out-of-range'],
    ['list.name=1', 'set.0.path.not-an-object'],
    ['obj[0]=1', 'set.0.path.not-an-array'],
  ])('%s is refused as %s', (set, expected) => {
    expect(paths(applyOverrides({ seed: 1, list: [], obj: {} }, [set]))).toEqual([expected]);
  });

  it('reports every bad edit with its index', () => {
    expect(paths(applyOverrides({}, ['a=1', 'b', 'c..d=2']))).toEqual(['set.1.missing-equals', 'set.2.path.invalid']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});

describe('parseOverridePath', () => {
  it('splits dots and brackets', () => {
    expect(parseOverridePath('a.b[0][1].c')).toEqual([
      { key: 'a', index: false }, { key: 'b', index: false }, { key: '0', index: true }, { key: '1', index: true }, { key: 'c', index: false },
    ]);
  });
});

describe('sweepValues', () => {
  it('parses a path and its values', () => {
    expect(sweepValues('infrastructure.regions[0].lobby_count_max=10,20,40')).toEqual({
      ok: true,
      value: { path: 'infrastructure.regions[0].lobby_count_max', values: [10, 20, 40] },
    });
  });

  it('keeps commas inside JSON values and strings', () => {
    expect(sweepValues('x=[1,2],{"a":1,"b":2},"p,q",eu')).toEqual({ ok: true, value: { path: 'x', values: [[1, 2], { a: 1, b: 2 }, 'p,q', 'eu'] } });
    expect(splitValues('1,[2,3],"a,\\"b"')).toEqual(['1', '[2,3]', '"a,\\"b"']);
  });

  it.each([
    ['seed', ['sweep.missing-equals']],
    ['a..b=1,2', ['sweep.path.invalid']],
    ['seed=', ['sweep.values.0.empty']],
    ['seed=1,,3', ['sweep.values.1.empty']],
  ])('%s is refused', (spec, expected) => {
    expect(paths(sweepValues(spec))).toEqual(expected);
  });
});
