import { describe, expect, it } from 'vitest';
import type { MatchEvent } from '../../../src/core/events.js';
import type { Player } from '../../../src/core/lobby/lobby.js';
import { PMap } from '../../../src/core/pmap.js';
import { canonicalJson } from '../../../src/sim/trace/canonical.js';
import { traceEventJson } from '../../../src/sim/world/trace-events.js';

const lobby = {
  id: 'l1', namespaceId: 'ns', versionId: 'v', gameMode: 'm', lobbyGroupId: 'g', region: 'r', createdAt: 0, readyDeadline: 1,
  lifecycle: { status: 'creating' }, closed: false, publicity: 'public', origin: 'pooled', maxPlayers: { normal: 2, direct: 2, party: 2 },
  tags: {}, ports: [], players: PMap.empty<string, Player>(), playerCount: 0, connectedCount: 0, timeouts: { lobbyReadyMs: 1, playerConnectMs: 1 },
} as const;
const player = { id: 'p1', lobbyId: 'l1', source: '1.2.3.4', createdAt: 0, status: 'reserved', connectDeadline: 1 } as const;
const base = { at: 0, namespaceId: 'ns' };

const EVENTS: readonly MatchEvent[] = [
  { type: 'lobby-created', at: 0, lobby },
  { type: 'lobby-ready', ...base, lobbyId: 'l1' },
  { type: 'lobby-closed-set', ...base, lobbyId: 'l1', closed: true },
  { type: 'lobby-stopping', ...base, lobbyId: 'l1', reason: 'idle' },
  { type: 'lobby-stopped', ...base, lobbyId: 'l1', reason: 'idle', failed: false },
  { type: 'player-reserved', ...base, player },
  { type: 'player-connected', ...base, playerId: 'p1', lobbyId: 'l1' },
  { type: 'player-removed', ...base, playerId: 'p1', lobbyId: 'l1', wasConnected: true, reason: 'disconnected' },
  { type: 'seat-ready', ...base, playerId: 'p1', lobbyId: 'l1' },
  { type: 'seat-failed', ...base, playerId: 'p1', lobbyId: 'l1', error: { code: 'MATCHMAKER_LOBBY_STOPPED' } },
  { type: 'version-published', ...base, versionId: 'v' },
  { type: 'captcha-verified', ...base, source: '1.2.3.4' },
];

describe('traceEventJson', () => {
  it('writes every event type as canonical JSON (keys sorted) naming its type', () => {
    for (const e of EVENTS) {
      const json = traceEventJson(e);
      const compact = JSON.parse(json) as Record<string, unknown>;
      expect(compact['type']).toBe(e.type);
      expect(json).toBe(canonicalJson(compact));
    }
  });

  it('carries the ids and values that matter, escaping any string', () => {
    const odd = { ...lobby, id: 'l"1\\', region: 'r\u2028\ud800', ports: [{ label: 'a', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 26001, hostPort: 20001, containerPort: 7777 }, { label: 'b', protocol: 'udp', proxy: 'none', transport: 'udp', containerPort: 7778 }] } as const;
    expect(JSON.parse(traceEventJson({ type: 'lobby-created', at: 0, lobby: odd }))).toEqual({
      lobby: odd.id, mode: 'm', origin: 'pooled', ports: [26001, null], region: odd.region, type: 'lobby-created',
    });
    expect(traceEventJson({ type: 'lobby-created', at: 0, lobby: odd })).toBe(
      canonicalJson({ lobby: odd.id, mode: 'm', origin: 'pooled', ports: [26001, null], region: odd.region, type: 'lobby-created' }),
    );
    expect(JSON.parse(traceEventJson(EVENTS[7] as MatchEvent))).toEqual({ player: 'p1', reason: 'disconnected', type: 'player-removed' });
    expect(JSON.parse(traceEventJson(EVENTS[9] as MatchEvent))).toEqual({ code: 'MATCHMAKER_LOBBY_STOPPED', player: 'p1', type: 'seat-failed' });
  });
});
