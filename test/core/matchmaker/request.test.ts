import { describe, expect, it } from 'vitest';
import type { GameMode } from '../../../src/core/config/types.js';
import {
  checkDynamicMax,
  checkSourceCap,
  checkTags,
  closestRegion,
  distanceKm,
  MAX_TAG_NAME,
  MAX_TAG_VALUE,
  MAX_TAGS,
  resolveModes,
  resolveRegions,
  sourceCap,
} from '../../../src/core/matchmaker/request.js';
import { DEFAULT_NAMESPACE_SETTINGS, makeVersion, type RegionInfo } from '../../../src/core/world.js';
import { client, mode, REGIONS } from '../fixtures.js';

const dyn = (name: string, normal: number, direct: number): GameMode =>
  mode(name, { allowDynamicMaxPlayers: true, maxPlayers: { normal, direct, party: 2 } });

const tagged = mode('tagged', { taggable: true });
const tagsOf = (n: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`t${i}`, 'x']));

describe('resolveModes', () => {
  const version = () => makeVersion('v1', { gameModes: [mode('a'), mode('b')] });

  it('resolves the requested modes in request order, each once', () => {
    expect(resolveModes(version(), ['b', 'a', 'b'])).toEqual({ ok: true, value: [mode('b'), mode('a')] });
  });

  it('names the empty list and the first unknown mode with its path', () => {
    expect(resolveModes(version(), [])).toEqual({ ok: false, error: { code: 'MATCHMAKER_NO_GAME_MODE_PROVIDED', path: ['game_modes'] } });
    expect(resolveModes(version(), ['a', 'x', 'y'])).toEqual({
      ok: false,
      error: { code: 'MATCHMAKER_GAME_MODE_NOT_FOUND', params: { game_mode: 'x' }, path: ['game_modes', '1'] },
    });
    expect(resolveModes(undefined, ['a'])).toEqual({
      ok: false,
      error: { code: 'MATCHMAKER_GAME_MODE_NOT_FOUND', params: { game_mode: 'a' }, path: ['game_modes', '0'] },
    });
  });
});

describe('checkTags', () => {
  it(`accepts exactly ${MAX_TAGS} tags, names of ${MAX_TAG_NAME} and values of ${MAX_TAG_VALUE} characters`, () => {
    expect([MAX_TAGS, MAX_TAG_NAME, MAX_TAG_VALUE]).toEqual([8, 128, 512]);
    expect(checkTags(tagsOf(8), [tagged])).toBeUndefined();
    expect(checkTags({ ['n'.repeat(128)]: 'v'.repeat(512) }, [tagged])).toBeUndefined();
    expect(checkTags({}, [mode('plain')])).toBeUndefined(); // no tags: any mode
  });

  it('refuses one more, with the limit and the path of the offending tag', () => {
    expect(checkTags(tagsOf(9), [tagged])).toEqual({ code: 'MATCHMAKER_TOO_MANY_TAGS', params: { max: 8 }, path: ['tags'] });
    const long = 'n'.repeat(129);
    expect(checkTags({ ok: 'x', [long]: 'x' }, [tagged])).toEqual({ code: 'MATCHMAKER_TAG_NAME_TOO_LONG', params: { max: 128 }, path: ['tags', long] });
    expect(checkTags({ ok: 'x', map: 'v'.repeat(513) }, [tagged])).toEqual({ code: 'MATCHMAKER_TAG_TOO_LONG', params: { max: 512 }, path: ['tags', 'map'] });
  });

  it('needs every mode taggable, and names the first that is not', () => {
    expect(checkTags({ map: 'dust' }, [tagged, mode('plain'), mode('other')])).toEqual({
      code: 'MATCHMAKER_TAGS_DISABLED',
      params: { game_mode: 'plain' },
      path: ['tags'],
    });
    expect(checkTags({ map: 'dust' }, [tagged, mode('t2', { taggable: true })])).toBeUndefined();
  });
});

describe('checkDynamicMax', () => {
  it('accepts 1 and the cap, the smallest max(normal, direct) over the modes', () => {
    // max(4, 6) = 6 and max(9, 2) = 9: the cap is 6.
    const modes = [dyn('a', 4, 6), dyn('b', 9, 2)];
    for (const n of [1, 5, 6]) expect(checkDynamicMax(n, modes)).toBeUndefined();
    expect(checkDynamicMax(9, [dyn('b', 9, 2)])).toBeUndefined();
    expect(checkDynamicMax(6, [dyn('a', 4, 6)])).toBeUndefined();
    expect(checkDynamicMax(undefined, [mode('closed')])).toBeUndefined();
  });

  it('refuses 0, the cap plus one and fractions, with the cap and the path', () => {
    const modes = [dyn('a', 4, 6), dyn('b', 9, 2)];
    for (const n of [0, -1, 7, 1.5, Number.NaN]) {
      expect(checkDynamicMax(n, modes)).toEqual({ code: 'MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID', params: { max: 6 }, path: ['max_players'] });
    }
    expect(checkDynamicMax(10, [dyn('b', 9, 2)])).toEqual({ code: 'MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID', params: { max: 9 }, path: ['max_players'] });
  });

  it('needs every mode to allow it, and names the first that does not', () => {
    expect(checkDynamicMax(2, [dyn('a', 4, 6), mode('fixed'), mode('other')])).toEqual({
      code: 'MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED',
      params: { game_mode: 'fixed' },
      path: ['max_players'],
    });
  });
});

describe('distanceKm (great circle, Earth radius 6,371 km)', () => {
  const km = (a: [number, number], b: [number, number]) =>
    distanceKm({ latitude: a[0], longitude: a[1] }, { latitude: b[0], longitude: b[1] });

  it('matches reference distances to 100 m', () => {
    // Expected values from the haversine formula evaluated independently.
    const cases: [[number, number], [number, number], number][] = [
      [[0, 0], [0, 90], 10007.543],
      [[0, 0], [90, 0], 10007.543],
      [[0, 0], [0, 180], 20015.087],
      [[50.1, 8.7], [33.7, -84.4], 7408.012], // Frankfurt – Atlanta
      [[48.8566, 2.3522], [40.7128, -74.006], 5837.241], // Paris – New York
      [[-33.9, 151.2], [51.5, -0.1], 16994.718], // Sydney – London
      [[60, 10], [60, 40], 1653.574], // along a parallel: the cosines of both latitudes count
      [[10, 20], [10, 20], 0],
    ];
    for (const [a, b, expected] of cases) {
      expect(km(a, b)).toBeCloseTo(expected, 1);
      expect(km(b, a)).toBeCloseTo(expected, 1);
    }
  });

  it('stays finite for antipodes, where rounding can push the haversine above 1', () => {
    expect(km([90, 0], [-90, 0])).toBeCloseTo(20015.087, 1);
    expect(km([0, 0], [0, 180])).not.toBeNaN();
  });
});

describe('closestRegion', () => {
  const at = (latitude: number, longitude: number) => ({ latitude, longitude });
  const regions: RegionInfo[] = [
    { id: 'nowhere', displayName: 'No coordinates', provider: 't' },
    { id: 'west', displayName: 'West', provider: 't', coords: at(0, -10) },
    { id: 'east', displayName: 'East', provider: 't', coords: at(0, 10) },
    { id: 'north', displayName: 'North', provider: 't', coords: at(60, 0) },
  ];
  const all = new Set(regions.map((r) => r.id));

  it('picks the nearest candidate, the first in catalog order on a tie', () => {
    expect(closestRegion(regions, all, at(1, 9))).toBe('east');
    expect(closestRegion(regions, all, at(1, -9))).toBe('west');
    expect(closestRegion(regions, all, at(0, 0))).toBe('west'); // as far as east
    expect(closestRegion(regions, new Set(['east', 'north']), at(50, 0))).toBe('north');
    expect(closestRegion(regions, new Set(['north', 'east']), at(0, 0))).toBe('east');
  });

  it('prefers a region with coordinates over one without, and else takes the first candidate', () => {
    expect(closestRegion(regions, all, at(80, 170))).toBe('north');
    expect(closestRegion(regions, all, undefined)).toBe('nowhere');
    expect(closestRegion(regions, new Set(['north', 'east']), undefined)).toBe('east');
    expect(closestRegion(regions, new Set(['nowhere']), at(0, 0))).toBe('nowhere');
    expect(closestRegion(regions, new Set(['mars']), at(0, 0))).toBeUndefined();
  });
});

describe('resolveRegions', () => {
  const both = mode('both', { regions: [{ name: 'eu', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }, { name: 'us', tier: 'basic-1d1', idleLobbies: { min: 0, max: 0 } }] });

  it('keeps a given list in its order, each region once', () => {
    expect(resolveRegions(REGIONS, [both], ['us', 'local', 'us', 'eu'], undefined)).toEqual({ ok: true, value: ['us', 'local', 'eu'] });
  });

  it('names the first unknown region with its index', () => {
    expect(resolveRegions(REGIONS, [both], ['eu', 'mars', 'venus'], undefined)).toEqual({
      ok: false,
      error: { code: 'MATCHMAKER_REGION_NOT_FOUND', params: { region: 'mars' }, path: ['regions', '1'] },
    });
  });

  it('treats an empty list (regions: []) like no list: the closest region the modes enable', () => {
    const paris = { latitude: 48.8, longitude: 2.3 };
    const atlanta = { latitude: 33.7, longitude: -84.4 };
    expect(resolveRegions(REGIONS, [both], [], paris)).toEqual({ ok: true, value: ['eu'] });
    expect(resolveRegions(REGIONS, [both], [], atlanta)).toEqual({ ok: true, value: ['us'] });
    expect(resolveRegions(REGIONS, [both], undefined, atlanta)).toEqual({ ok: true, value: ['us'] });
    // `local` (at 0, 0) is closer to Paris than Atlanta but no mode runs there.
    expect(resolveRegions(REGIONS, [both, mode('local-only')], [], { latitude: 1, longitude: 1 })).toEqual({ ok: true, value: ['local'] });
    expect(resolveRegions(REGIONS, [mode('mars', { regions: [] })], [], paris)).toEqual({ ok: true, value: [] });
  });
});

describe('per-client seat caps', () => {
  const settings = {
    ...DEFAULT_NAMESPACE_SETTINGS,
    maxPlayersPerClient: 10,
    maxPlayersPerClientVpn: 5,
    maxPlayersPerClientProxy: 4,
    maxPlayersPerClientTor: 3,
    maxPlayersPerClientHosting: 2,
  };

  it('applies the cap of each kind of client', () => {
    expect([undefined, 'normal', 'vpn', 'proxy', 'tor', 'hosting'].map((k) => sourceCap(settings, k as never))).toEqual([10, 10, 5, 4, 3, 2]);
  });

  it('allows seats up to the cap and refuses one more, naming the cap', () => {
    for (const [kind, cap] of [['proxy', 4], ['tor', 3], ['hosting', 2], ['vpn', 5], ['normal', 10]] as const) {
      const c = client('1.2.3.4', { kind });
      expect(checkSourceCap(settings, c, cap - 1, 1)).toBeUndefined();
      expect(checkSourceCap(settings, c, 0, cap)).toBeUndefined();
      expect(checkSourceCap(settings, c, cap - 1, 2)).toEqual({ code: 'MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE', params: { max: cap } });
      expect(checkSourceCap(settings, c, cap, 1)).toEqual({ code: 'MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE', params: { max: cap } });
    }
  });
});
