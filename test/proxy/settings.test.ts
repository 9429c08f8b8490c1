/**
 * The game proxy's settings, without HAProxy: `TAVERN_PROXY*` parsing and the HAProxy configuration
 * (the core's `protocol-not-served` check at publish is in test/core/config/protocols.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { renderConfig } from '../../src/adapters/haproxy/config.js';
import { parseProxyEnv, parseProxyRate } from '../../src/server/game-proxy.js';

describe('game proxy settings', () => {
  it('reads TAVERN_PROXY* with Game Guard\'s defaults', () => {
    expect(parseProxyEnv({}, '127.0.0.1')).toEqual({
      mode: 'auto', host: '127.0.0.1', httpPort: 80, httpsPort: 443, fallback: { http: 8880, https: 8444 }, maxRoutes: 1_024,
      limits: { rate: { average: 100, periodMs: 300_000, burst: 256 }, inFlight: 4, headerTimeoutMs: 10_000, idleTimeoutMs: 30_000, connectTimeoutMs: 5_000 },
    });
    const env = parseProxyEnv({
      TAVERN_PROXY: 'haproxy', TAVERN_PROXY_HOST: '0.0.0.0', TAVERN_PROXY_HTTP_PORT: '8081', TAVERN_PROXY_HTTPS_PORT: '8444', TAVERN_PROXY_TLS_CERT: '/c.pem', TAVERN_PROXY_TLS_KEY: '/k.pem',
      TAVERN_PROXY_RATE_LIMIT: 'off', TAVERN_PROXY_MAX_IN_FLIGHT: 'off', TAVERN_PROXY_MAX_CONNECTIONS: '500', TAVERN_HAPROXY_BIN: '/opt/haproxy', TAVERN_PROXY_MAX_ROUTES: '64',
    }, '127.0.0.1');
    expect(env).toEqual({
      mode: 'haproxy', host: '0.0.0.0', httpPort: 8081, httpsPort: 8444, maxRoutes: 64, binary: '/opt/haproxy', tls: { certFile: '/c.pem', keyFile: '/k.pem' },
      limits: { headerTimeoutMs: 10_000, idleTimeoutMs: 30_000, connectTimeoutMs: 5_000, maxConnections: 500 },
    });
    expect(parseProxyRate('6/10s+3')).toEqual({ average: 6, periodMs: 10_000, burst: 3 });
  });

  it('refuses bad values with the variable\'s name', () => {
    expect(() => parseProxyEnv({ TAVERN_PROXY: 'nginx' }, 'h')).toThrow(/TAVERN_PROXY must be/);
    expect(() => parseProxyEnv({ TAVERN_PROXY_TLS_CERT: '/c.pem' }, 'h')).toThrow(/TAVERN_PROXY_TLS_CERT and TAVERN_PROXY_TLS_KEY go together/);
    expect(() => parseProxyEnv({ TAVERN_PROXY_HTTP_PORT: '70000' }, 'h')).toThrow(/TAVERN_PROXY_HTTP_PORT/);
    expect(() => parseProxyEnv({ TAVERN_PROXY_MAX_IN_FLIGHT: '0' }, 'h')).toThrow(/TAVERN_PROXY_MAX_IN_FLIGHT/);
    for (const bad of ['100', '100/5m', '100/5x+2', '0/5m+2', '1/10ms+1']) expect(() => parseProxyRate(bad)).toThrow(/TAVERN_PROXY_RATE_LIMIT/);
  });

  it('writes limits into the HAProxy configuration only when they are on', () => {
    const base = { socket: '/s', host: '::', httpPort: 80, maps: { http: '/h.map', https: '/s.map' }, jobDomain: 'example.test', slots: ['127.0.0.1:20001', undefined, '[::1]:20002'] };
    const off = renderConfig({ ...base, limits: { headerTimeoutMs: 1_000, idleTimeoutMs: 30_000, connectTimeoutMs: 5_000 } });
    expect(off).not.toMatch(/track-sc0|deny/);
    expect(off).toContain('bind [::]:80');
    expect(off).toContain('backend lobby-slot-0\n  http-reuse safe\n  server lobby 127.0.0.1:20001\n');
    expect(off).toContain('backend lobby-slot-1\n  http-reuse safe\n  server lobby 127.0.0.1:1 disabled\n');
    expect(off).toContain('backend lobby-slot-2\n  http-reuse safe\n  server lobby [::1]:20002\n');
    const on = renderConfig({ ...base, limits: { headerTimeoutMs: 1_000, idleTimeoutMs: 30_000, connectTimeoutMs: 5_000, rate: { average: 100, periodMs: 300_000, burst: 256 }, inFlight: 4 } });
    expect(on).toContain('sc0_http_req_rate(ip_rate) gt 356');
    expect(on).toContain('sc1_http_req_rate(ip_rate_long) gt 1456');
    expect(on).toContain('sc0_conn_cur(ip_rate) gt 4');
    expect(on).toContain('stick-table type ipv6 size 1m expire 300s store http_req_rate(300s),conn_cur');
  });
});
