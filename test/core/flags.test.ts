import { describe, expect, it } from 'vitest';
import {
  isActive,
  isClosed,
  isCustom,
  isFindable,
  isIdle,
  isOutdated,
  isPublic,
  isReady,
  isStopped,
} from '../../src/core/lobby/flags.js';
import type { LobbyLifecycle } from '../../src/core/lobby/lobby.js';
import { makeLobby } from './helpers.js';

const STATES: readonly (readonly [string, LobbyLifecycle, { ready: boolean; active: boolean; stopped: boolean }])[] = [
  ['creating', { status: 'creating' }, { ready: false, active: true, stopped: false }],
  ['ready', { status: 'ready', readyAt: 10 }, { ready: true, active: true, stopped: false }],
  ['stopping (never ready)', { status: 'stopping', stoppingAt: 20, reason: 'ready-timeout' }, { ready: false, active: false, stopped: false }],
  ['stopping (was ready)', { status: 'stopping', readyAt: 10, stoppingAt: 20, reason: 'idle' }, { ready: false, active: false, stopped: false }],
  ['stopped', { status: 'stopped', readyAt: 10, stoppedAt: 30, reason: 'crashed', failed: true }, { ready: false, active: false, stopped: true }],
  ['stopped (never ready)', { status: 'stopped', stoppedAt: 30, reason: 'start-failed', failed: true }, { ready: false, active: false, stopped: true }],
];

describe('lobby flags per lifecycle state', () => {
  it.each(STATES)('%s', (_name, lifecycle, want) => {
    const lobby = makeLobby({ lifecycle });
    expect(isReady(lobby)).toBe(want.ready);
    expect(isActive(lobby)).toBe(want.active);
    expect(isStopped(lobby)).toBe(want.stopped);
    // Open, public, current: findable exactly when active.
    expect(isFindable(lobby, 'v1')).toBe(want.active);
    // The other flags do not depend on the lifecycle.
    expect(isClosed(lobby)).toBe(false);
    expect(isIdle(lobby)).toBe(true);
    expect(isOutdated(lobby, 'v1')).toBe(false);
    expect(isCustom(lobby)).toBe(false);
    expect(isPublic(lobby)).toBe(true);
    expect(isClosed(makeLobby({ lifecycle, closed: true }))).toBe(true);
    expect(isIdle(makeLobby({ lifecycle, playerCount: 1 }))).toBe(false);
  });
});

describe('lobby flags per field', () => {
  const ready = makeLobby({ lifecycle: { status: 'ready', readyAt: 1 } });

  it('isClosed follows the closed flag', () => {
    expect(isClosed(ready)).toBe(false);
    expect(isClosed({ ...ready, closed: true })).toBe(true);
  });

  it('isIdle: no seat held, reserved or connected', () => {
    expect(isIdle({ ...ready, playerCount: 0, connectedCount: 0 })).toBe(true);
    expect(isIdle({ ...ready, playerCount: 1, connectedCount: 0 })).toBe(false);
    expect(isIdle({ ...ready, playerCount: 2, connectedCount: 2 })).toBe(false);
  });

  it('isOutdated: the version differs from the current one (or there is none)', () => {
    expect(isOutdated(ready, 'v1')).toBe(false);
    expect(isOutdated(ready, 'v2')).toBe(true);
    expect(isOutdated(ready, undefined)).toBe(true);
  });

  it('isCustom and isPublic follow origin and publicity', () => {
    expect(isCustom({ ...ready, origin: 'custom' })).toBe(true);
    expect(isCustom({ ...ready, origin: 'pooled' })).toBe(false);
    expect(isPublic({ ...ready, publicity: 'private' })).toBe(false);
    expect(isPublic({ ...ready, publicity: 'public' })).toBe(true);
  });

  it('isFindable: active, open, public and current; a custom public lobby is findable, a full one still is (room is per request)', () => {
    expect(isFindable(ready, 'v1')).toBe(true);
    expect(isFindable({ ...ready, closed: true }, 'v1')).toBe(false);
    expect(isFindable({ ...ready, publicity: 'private' }, 'v1')).toBe(false);
    expect(isFindable(ready, 'v2')).toBe(false);
    expect(isFindable({ ...ready, origin: 'custom' }, 'v1')).toBe(true);
    expect(isFindable({ ...ready, playerCount: 4 }, 'v1')).toBe(true);
  });
});
