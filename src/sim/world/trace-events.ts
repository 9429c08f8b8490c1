import type { MatchEvent } from '../../core/events.js';
import { jsonString as q } from '../trace/trace.js';

/** A JSON number as `JSON.stringify` writes it inside an array (`null` for a missing one). */
const num = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? 'null' : String(n));

/**
 * The trace's compact form of a committed event, as canonical JSON text (keys in sorted order,
 * for `Trace.appendJson`): its type and the ids and values that matter (a `lobby-created` carries
 * the lobby's placement, not the whole record).
 *
 * @example
 * traceEventJson({ type: 'lobby-ready', at, namespaceId: 'sim', lobbyId: 'l1' }) // '{"lobby":"l1","type":"lobby-ready"}'
 */
export const traceEventJson = (e: MatchEvent): string => {
  switch (e.type) {
    case 'lobby-created': {
      const l = e.lobby;
      return `{"lobby":${q(l.id)},"mode":${q(l.gameMode)},"origin":${q(l.origin)},"ports":[${l.ports.map((p) => num(p.publicPort)).join(',')}],"region":${q(l.region)},"type":"lobby-created"}`;
    }
    case 'lobby-ready':
      return `{"lobby":${q(e.lobbyId)},"type":"lobby-ready"}`;
    case 'lobby-closed-set':
      return `{"closed":${e.closed},"lobby":${q(e.lobbyId)},"type":"lobby-closed-set"}`;
    case 'lobby-stopping':
      return `{"lobby":${q(e.lobbyId)},"reason":${q(e.reason)},"type":"lobby-stopping"}`;
    case 'lobby-stopped':
      return `{"failed":${e.failed},"lobby":${q(e.lobbyId)},"reason":${q(e.reason)},"type":"lobby-stopped"}`;
    case 'player-reserved':
      return `{"lobby":${q(e.player.lobbyId)},"player":${q(e.player.id)},"type":"player-reserved"}`;
    case 'player-connected':
      return `{"player":${q(e.playerId)},"type":"player-connected"}`;
    case 'player-removed':
      return `{"player":${q(e.playerId)},"reason":${q(e.reason)},"type":"player-removed"}`;
    case 'seat-ready':
      return `{"player":${q(e.playerId)},"type":"seat-ready"}`;
    case 'seat-failed':
      return `{"code":${q(e.error.code)},"player":${q(e.playerId)},"type":"seat-failed"}`;
    case 'version-published':
      return `{"type":"version-published","version":${q(e.versionId)}}`;
    case 'captcha-verified':
      return `{"source":${q(e.source)},"type":"captcha-verified"}`;
  }
};
