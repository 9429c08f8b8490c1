import { describe, expect, it } from 'vitest';
import type { MatchEvent } from '../../../src/core/events.js';
import type { Player } from '../../../src/core/lobby/lobby.js';
import { PMap } from '../../../src/core/pmap.js';
import { canonicalJson } from '../../../src/sim/trace/canonical.js';
import { traceEvent } from '../../../src/sim/world/trace-events.js';

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

describe('traceEvent', () => {
  it('maps every event type to plain JSON whose keys are already sorted', () => {
    for (const e of EVENTS) {
      const compact = traceEvent(e);
      expect(compact?.['type']).toBe(e.type);
      expect(JSON.stringify(compact)).toBe(canonicalJson(compact));
    }
  });
});
