/** Where find tells clients to reach a lobby's ports: the node it runs on when the runtime knows it (Swarm), else the region's host. */
import { describe, expect, it } from 'vitest';
import type { Lobby } from '../../src/core/lobby/lobby.js';
import type { Settings } from '../../src/server/deps.js';
import { renderPorts } from '../../src/server/join-response.js';

// Only what renderPorts reads of a lobby.
const lobby = {
  id: 'l-1', region: 'lnd',
  ports: [
    { label: 'game', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 27001, hostPort: 21001, containerPort: 7777 },
    { label: 'chat', protocol: 'tcp', proxy: 'game_guard', transport: 'tcp', publicPort: 27002, hostPort: 21002, containerPort: 7778 },
    { label: 'web', protocol: 'http', proxy: 'game_guard', transport: 'tcp', publicPort: 80, hostPort: 21003, containerPort: 8080 },
  ],
} as unknown as Lobby;

const settings: Settings = { publicOrigin: 'http://127.0.0.1:8080', jobDomain: 'games.example', regionHosts: { lnd: '203.0.113.1' } } as unknown as Settings;

describe('renderPorts', () => {
  it("gives tcp and udp ports at the lobby's node address when the runtime knows it; http stays on the game proxy's host name", () => {
    const ports = renderPorts(lobby, { ...settings, lobbyAddress: (id) => (id === 'l-1' ? '10.77.0.12' : undefined) });
    expect(ports['game']).toMatchObject({ hostname: '10.77.0.12', port: 27001, host: '10.77.0.12:27001' });
    expect(ports['chat']).toMatchObject({ hostname: '10.77.0.12', port: 27002 });
    expect(ports['web']).toMatchObject({ hostname: 'l-1-web.lobby.lnd.games.example', port: 80 });
  });

  it("falls back to the region's host when the runtime does not know the lobby's node", () => {
    expect(renderPorts(lobby, { ...settings, lobbyAddress: () => undefined })['game']).toMatchObject({ hostname: '203.0.113.1', port: 27001 });
  });
});
