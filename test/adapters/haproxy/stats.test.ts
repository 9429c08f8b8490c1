import { describe, expect, it } from 'vitest';
import { listenerCounts, routeCounters, slotFailures } from '../../../src/adapters/haproxy/stats.js';
import type { ProxyRoute } from '../../../src/core/effects.js';

// `show stat`'s CSV as HAProxy writes it (columns cut to the ones read, in another order than HAProxy's to show they are found by name).
const CSV = [
  '# pxname,svname,econ,req_tot,dreq,ereq,',
  'http,FRONTEND,,40,3,1,',
  'https,FRONTEND,,7,0,2,',
  'lobby-slot-0,lobby,2,9,,,',
  'lobby-slot-0,BACKEND,2,9,0,,',
  'lobby-slot-12,BACKEND,5,11,0,,',
  'ip_rate,BACKEND,,,,,',
  '',
].join('\n');

describe("the game proxy's counters", () => {
  it("reads each slot backend's failed connections by slot number, and nothing else", () => {
    expect(slotFailures(CSV)).toEqual(new Map([[0, 2], [12, 5]]));
  });

  it('reads each listener, and the lobbies side as the sum over the slots', () => {
    expect(listenerCounts(CSV)).toEqual([
      { listener: 'http', denied: 3, invalid: 1, requests: 40, connectErrors: 0 },
      { listener: 'https', denied: 0, invalid: 2, requests: 7, connectErrors: 0 },
      { listener: 'lobbies', denied: 0, invalid: 0, requests: 20, connectErrors: 7 },
    ]);
  });

  it("names a route's stick-table counters, absent ones 0", () => {
    const route: ProxyRoute = { lobbyId: 'a', region: 'local', label: 'default', protocol: 'http', publicPort: 80, hostPort: 20001 };
    expect(routeCounters(route, { key: 'a.x', counters: { http_req_cnt: 4, gpc0: 1 } }, 2)).toEqual({
      route, hostname: 'a.x', requests: 4, bytesIn: 0, bytesOut: 0, clientErrors: 0, serverErrors: 0, limited: 1, connectErrors: 2,
    });
  });
});
