import { describe, expect, it } from 'vitest';
import type { Admission } from '../../../src/core/admission/gate.js';
import {
  isPassed,
  type VerificationCheck,
  type VerificationPass,
  verificationVerdict,
} from '../../../src/core/admission/verification.js';
import type { GameMode } from '../../../src/core/config/types.js';
import { ERRORS } from '../../../src/core/errors.js';
import { create } from '../../../src/core/matchmaker/create.js';
import { find } from '../../../src/core/matchmaker/find.js';
import type { Seat } from '../../../src/core/matchmaker/seat.js';
import { at, client, ids, mode, NS, worldWith, findCommands } from '../fixtures.js';
import { admitted, lobbyIn } from '../helpers.js';

const newId = ids('v');
const cmd = findCommands(newId, { gameModes: ['a'] });

const urlOf = (name: string): string => `https://verify.example/${name}`;
const verified = (name: string, over: Parameters<typeof mode>[1] = {}): GameMode =>
  mode(name, { ...over, actions: { ...over.actions, find: { enabled: true, verification: { url: urlOf(name), headers: { 'x-mode': name } } } } });

const checksOf = (a: Admission<Seat>): readonly VerificationCheck[] => {
  if (a.kind !== 'verify') throw new Error(`expected verify, got ${JSON.stringify(a)}`);
  return a.checks;
};

const passOf = (check: VerificationCheck | undefined): VerificationPass => {
  if (check === undefined) throw new Error('no check');
  const r = verificationVerdict(check, { kind: 'status', status: 200 });
  if (!r.ok) throw new Error('verdict');
  return r.value;
};

const CHECK: VerificationCheck = {
  gameMode: 'a',
  kind: 'Find',
  url: urlOf('a'),
  headers: {},
  body: {
    verification_data: null,
    game: { namespace_id: NS, game_mode_id: 'g', game_mode_name_id: 'a', lobby: null, state: null, config: null, tags: {}, dynamic_max_players: null },
    clients: {},
    join_kind: 'Normal',
    kind: 'Find',
  },
};

describe('verificationVerdict', () => {
  it.each([200, 204, 299])('admits status %i with a pass for the check', (status) => {
    expect(verificationVerdict(CHECK, { kind: 'status', status })).toEqual({ ok: true, value: { gameMode: 'a', kind: 'Find', url: urlOf('a') } });
  });

  it.each([199, 300, 403, 500])('fails status %i with VERIFICATION_FAILED', (status) => {
    expect(verificationVerdict(CHECK, { kind: 'status', status })).toEqual({
      ok: false,
      error: { code: 'MATCHMAKER_VERIFICATION_FAILED', params: { status } },
    });
  });

  it('treats a timeout as status 408', () => {
    expect(verificationVerdict(CHECK, { kind: 'timeout' })).toEqual({
      ok: false,
      error: { code: 'MATCHMAKER_VERIFICATION_FAILED', params: { status: 408 } },
    });
  });

  it('maps a transport failure to VERIFICATION_REQUEST_FAILED with the reason', () => {
    expect(verificationVerdict(CHECK, { kind: 'failed', reason: 'ECONNREFUSED' })).toEqual({
      ok: false,
      error: { code: 'MATCHMAKER_VERIFICATION_REQUEST_FAILED', params: { reason: 'ECONNREFUSED' } },
    });
    expect(ERRORS.MATCHMAKER_VERIFICATION_REQUEST_FAILED.status).toBe(400);
  });
});

describe('isPassed', () => {
  it('matches a pass by game mode, kind and url', () => {
    const pass = { gameMode: 'a', kind: 'Find' as const, url: urlOf('a') };
    expect(isPassed(CHECK, [pass])).toBe(true);
    expect(isPassed(CHECK, undefined)).toBe(false);
    expect(isPassed(CHECK, [{ ...pass, gameMode: 'b' }])).toBe(false);
    expect(isPassed(CHECK, [{ ...pass, kind: 'Join' }])).toBe(false);
    expect(isPassed(CHECK, [{ ...pass, url: urlOf('b') }])).toBe(false);
  });
});

describe('verification through find and create', () => {
  it('asks first with the §3.8 payload, then admits the same request carrying the pass', () => {
    const w = worldWith([verified('a', { taggable: true, allowDynamicMaxPlayers: true })]);
    const c = cmd({
      newLobbyId: 'L',
      tags: { map: 'dust' },
      maxPlayers: 3,
      verificationData: { token: 'abc' },
      client: client('2.2.2.2', { userAgent: 'game/1.0' }),
    });
    const [check, ...rest] = checksOf(find(w, c, at(10)));
    expect(rest).toEqual([]);
    expect(check).toEqual({
      gameMode: 'a',
      kind: 'Find',
      url: urlOf('a'),
      headers: { 'x-mode': 'a' },
      body: {
        verification_data: { token: 'abc' },
        game: {
          namespace_id: NS,
          game_mode_id: 'v1/a',
          game_mode_name_id: 'a',
          lobby: null,
          state: null,
          config: null,
          tags: { map: 'dust' },
          dynamic_max_players: 3,
        },
        clients: { '2.2.2.2': { user_agent: 'game/1.0', latitude: null, longitude: null } },
        join_kind: 'Normal',
        kind: 'Find',
      },
    });
    const d = admitted(find(w, { ...c, verified: [passOf(check)] }, at(11)));
    expect(d.value.lobbyId).toBe('L');
    // A pass for another url does not do.
    expect(find(w, { ...c, verified: [{ ...passOf(check), url: urlOf('x') }] }, at(11)).kind).toBe('verify');
  });

  it('sends verification_data null and join_kind Party when absent / for a party', () => {
    const [check] = checksOf(find(worldWith([verified('a')]), cmd({ playerIds: [newId(), newId()] }), at(1)));
    expect(check?.body).toMatchObject({ verification_data: null, join_kind: 'Party', game: { tags: {}, dynamic_max_players: null } });
  });

  it('with auto-create verifies only the auto-create mode; with prevent_auto_create every requested mode', () => {
    const w = worldWith([verified('a'), verified('b')]);
    expect(checksOf(find(w, cmd({ gameModes: ['a', 'b'] }), at(1))).map((c) => c.gameMode)).toEqual(['a']);
    expect(checksOf(find(w, cmd({ gameModes: ['b', 'a'] }), at(1))).map((c) => c.gameMode)).toEqual(['b']);
    const all = checksOf(find(w, cmd({ gameModes: ['a', 'b'], preventAutoCreate: true }), at(1)));
    expect(all.map((c) => [c.gameMode, c.url])).toEqual([['a', urlOf('a')], ['b', urlOf('b')]]);
    // Passing one of the two leaves only the other to ask.
    const left = checksOf(find(w, cmd({ gameModes: ['a', 'b'], preventAutoCreate: true, verified: [passOf(all[0])] }), at(1)));
    expect(left.map((c) => c.gameMode)).toEqual(['b']);
    // Both passed: on to routing (no lobby, auto-create prevented).
    const done = find(w, cmd({ gameModes: ['a', 'b'], preventAutoCreate: true, verified: all.map(passOf) }), at(1));
    expect(done).toMatchObject({ kind: 'rejected', error: { code: 'MATCHMAKER_NO_AVAILABLE_LOBBIES' } });
  });

  it('does not verify a mode without verification config', () => {
    expect(find(worldWith([mode('a')]), cmd(), at(1)).kind).toBe('admitted');
  });

  it("create verifies with kind 'Create' and the lobby_config, and seats the creator without a second check", () => {
    const verification = { url: urlOf('create'), headers: {} };
    const m = mode('custom', { taggable: true, actions: { create: { enabled: true, verification } } });
    const w = worldWith([m]);
    const c = { namespaceId: NS, gameMode: 'custom', playerId: 'p', newLobbyId: 'C', client: client(), tags: { t: '1' }, lobbyConfig: { map: 'x' } };
    const [check, ...rest] = checksOf(create(w, c, at(1)));
    expect(rest).toEqual([]);
    expect(check).toMatchObject({ gameMode: 'custom', kind: 'Create', url: urlOf('create') });
    expect(check?.body).toMatchObject({ kind: 'Create', game: { lobby: null, config: { map: 'x' }, tags: { t: '1' }, game_mode_name_id: 'custom' } });
    const d = admitted(create(w, { ...c, verified: [passOf(check)] }, at(2)));
    expect(lobbyIn(d.world, 'C').playerCount).toBe(1);
  });
});
