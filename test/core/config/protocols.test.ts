/** The protocols the game proxy serves, checked at publish (`ports.*label*.protocol-not-served`): the core's rule, whatever proxy the server runs. */
import { describe, expect, it } from 'vitest';
import { parseVersion } from '../../../src/core/config/parse-version.js';

const paths = (r: ReturnType<typeof parseVersion>): string[] => (r.ok ? [] : r.error.map((p) => p.path.join('.')));

describe('protocols the game proxy serves', () => {
  it('a version asking for a protocol the proxy does not serve is refused at the port, at matchmaker and game-mode level', () => {
    const config = {
      matchmaker: {
        regions: { local: {} },
        docker: { image_id: 'b', ports: { web: { port: 8080, protocol: 'http' }, secure: { port: 8443 }, raw: { port: 9000, protocol: 'tcp_tls' }, game: { port: 7777, protocol: 'udp' } } },
        game_modes: { default: {}, duel: { docker: { image_id: 'b', ports: { tls: { port: 9443, protocol: 'https' } } } } },
      },
    };
    const served = parseVersion({ display_name: 'v', config }, { regions: new Set(['local']), proxyProtocols: new Set(['http', 'tcp', 'udp']) });
    expect(paths(served).sort()).toEqual([
      'config.matchmaker.game-modes.*duel*.ports.*tls*.protocol-not-served',
      'config.matchmaker.ports.*raw*.protocol-not-served',
      'config.matchmaker.ports.*secure*.protocol-not-served',
    ]);
    expect(parseVersion({ display_name: 'v', config }, { regions: new Set(['local']) }).ok).toBe(true);
    expect(parseVersion({ display_name: 'v', config }, { regions: new Set(['local']), proxyProtocols: new Set(['http', 'https', 'tcp', 'tcp_tls', 'udp']) }).ok).toBe(true);
  });

  it('asks only the game proxy: a host-network range without the proxy is never refused for its protocol', () => {
    const config = {
      matchmaker: {
        regions: { local: {} },
        docker: { image_id: 'b', network_mode: 'host', ports: { p2p: { port_range: { min: 27100, max: 27199 }, protocol: 'udp', proxy: 'none' } } },
        game_modes: { default: {} },
      },
    };
    expect(paths(parseVersion({ display_name: 'v', config }, { regions: new Set(['local']), proxyProtocols: new Set(['http']) }))).toEqual([]);
    const proxied = { matchmaker: { ...config.matchmaker, docker: { image_id: 'b', ports: { game: { port: 7777, protocol: 'udp', proxy: 'game_guard' } } } } };
    expect(paths(parseVersion({ display_name: 'v', config: proxied }, { regions: new Set(['local']), proxyProtocols: new Set(['http']) }))).toEqual([
      'config.matchmaker.ports.*game*.protocol-not-served',
    ]);
  });

  it('says why in words and what to do, when the server gives its reasons; a port with no protocol is https (Rivet\'s default)', () => {
    const config = { matchmaker: { regions: { local: {} }, docker: { image_id: 'b', ports: { default: { port: 3000 }, raw: { port: 9000, protocol: 'tcp_tls' } } }, game_modes: { default: {} } } };
    const refusals = { https: 'https needs the game proxy with a certificate: install HAProxy (apt-get install haproxy)', tcp_tls: 'tcp_tls needs a certificate' };
    const r = parseVersion({ display_name: 'v', config }, { regions: new Set(['local']), proxyProtocols: new Set(['tcp', 'udp']), protocolRefusals: refusals });
    expect(r.ok ? [] : r.error.map((p) => ({ path: p.path.join('.'), message: p.message }))).toEqual([
      { path: 'config.matchmaker.ports.*default*.protocol-not-served', message: `${refusals.https}; this port names no protocol, so it is https (Rivet's default)` },
      { path: 'config.matchmaker.ports.*raw*.protocol-not-served', message: refusals.tcp_tls },
    ]);
  });
});
