import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NetworkMode, PortProtocol, ResolvedPort } from '../../../src/core/config/types.js';
import { matchError } from '../../../src/core/errors.js';
import {
  allocateLobbyPorts,
  createPortSpace,
  isAllocated,
  lobbyPortsInUse,
  portEnv,
  portEnvLabel,
  releaseLobbyPorts,
  transportOf,
} from '../../../src/core/ports/index.js';
import type { LobbyPortAllocation, PortSpace } from '../../../src/core/ports/index.js';
import { createRng } from '../../../src/core/rng.js';

const gg = (label: string, protocol: PortProtocol, port?: number): ResolvedPort => ({
  label,
  protocol,
  proxy: 'game_guard',
  ...(port === undefined ? {} : { port }),
});
const none = (label: string, protocol: 'tcp' | 'udp', min: number, max: number): ResolvedPort => ({
  label,
  protocol,
  proxy: 'none',
  portRange: { min, max },
});

const allocate = (space: PortSpace, ports: readonly ResolvedPort[], mode: NetworkMode, seed = 1) => {
  const r = allocateLobbyPorts(space, ports, mode, createRng(seed));
  if (!r.ok) throw new Error(`unexpected ${r.error.code}`);
  return r.value;
};

const snapshot = (s: PortSpace): unknown => ({ tcp: s.tcp.toArray(), udp: s.udp.toArray() });

const inRange = (p: number | undefined, min: number, max: number): boolean => p !== undefined && p >= min && p <= max;

describe('allocateLobbyPorts', () => {
  it('gives http/https 80/443 and a TCP host port, the configured container port in bridge mode', () => {
    const { space, allocations } = allocate(createPortSpace(), [gg('web', 'http', 8080), gg('secure', 'https', 8443)], 'bridge');
    const [web, secure] = allocations;
    expect(web).toMatchObject({ label: 'web', protocol: 'http', proxy: 'game_guard', transport: 'tcp', publicPort: 80, containerPort: 8080 });
    expect(secure).toMatchObject({ publicPort: 443, containerPort: 8443, transport: 'tcp' });
    expect(inRange(web?.hostPort, 20000, 25999) && inRange(secure?.hostPort, 20000, 25999)).toBe(true);
    expect(web?.range).toBeUndefined();
    expect(lobbyPortsInUse(allocations).tcp).toHaveLength(2);
    expect(isAllocated(space, 'tcp', 80)).toBe(false);
  });

  it('gives tcp/tcp_tls/udp a proxied public port and a host port on their transport', () => {
    const ports = [gg('a', 'tcp', 7000), gg('b', 'tcp_tls', 7001), gg('c', 'udp', 7002)];
    const { space, allocations } = allocate(createPortSpace(), ports, 'bridge');
    expect(allocations.map((a) => a.transport)).toEqual(['tcp', 'tcp', 'udp']);
    for (const a of allocations) {
      expect(inRange(a.publicPort, 26000, 31999)).toBe(true);
      expect(inRange(a.hostPort, 20000, 25999)).toBe(true);
      expect(isAllocated(space, a.transport, a.publicPort ?? 0) && isAllocated(space, a.transport, a.hostPort ?? 0)).toBe(true);
    }
    expect(allocations.map((a) => a.containerPort)).toEqual([7000, 7001, 7002]);
  });

  it('lets a host-network container listen on its proxied tcp/udp port, and on its host port behind the proxy', () => {
    const { allocations } = allocate(createPortSpace(), [gg('game', 'udp'), gg('chat', 'tcp'), gg('web', 'https'), gg('sec', 'tcp_tls'), gg('plain', 'http')], 'host');
    const [game, chat, web, sec, plain] = allocations;
    expect(game?.containerPort).toBe(game?.publicPort);
    expect(chat?.containerPort).toBe(chat?.publicPort);
    for (const a of [web, sec, plain]) expect(a?.containerPort).toBe(a?.hostPort);
    expect(game?.containerPort).not.toBe(game?.hostPort);
  });

  it('reserves exactly the range of a proxy-none port', () => {
    const { space, allocations } = allocate(createPortSpace(), [none('p2p', 'udp', 27000, 27099)], 'host');
    expect(allocations).toEqual([{ label: 'p2p', protocol: 'udp', proxy: 'none', transport: 'udp', range: { min: 27000, max: 27099 } }]);
    expect([26999, 27000, 27099, 27100].map((p) => isAllocated(space, 'udp', p))).toEqual([false, true, true, false]);
    expect(space.tcp.used).toBe(0);
    expect(lobbyPortsInUse(allocations).udp).toHaveLength(100);
  });

  it('is all-or-nothing: a late failure leaves the space as it was', () => {
    const small = createPortSpace({ proxied: { min: 40000, max: 40001 }, host: { min: 30000, max: 30009 } });
    const before = allocate(small, [gg('x', 'udp', 1)], 'bridge').space;
    const snap = snapshot(before);
    const r = allocateLobbyPorts(before, [gg('a', 'udp', 1), gg('b', 'tcp', 2), gg('c', 'udp', 3)], 'bridge', createRng(2));
    expect(r).toEqual({ ok: false, error: matchError('PORT_RANGE_EXHAUSTED', { pool: 'proxied', min: 40000, max: 40001 }) });
    expect(snapshot(before)).toEqual(snap);
    const clash = allocateLobbyPorts(before, [gg('a', 'tcp', 1), none('r1', 'udp', 40000, 40001)], 'host', createRng(2));
    expect(clash.ok).toBe(false);
    expect(snapshot(before)).toEqual(snap);
  });

  it('throws for a proxy-none port without a range (validation rejects it)', () => {
    const bad: ResolvedPort = { label: 'x', protocol: 'tcp', proxy: 'none', port: 5 };
    expect(() => allocateLobbyPorts(createPortSpace(), [bad], 'host', createRng(1))).toThrow(/port range/);
  });
});

// Lobby configurations over a small space, so failures are common.
const SPACE = { proxied: { min: 40000, max: 40019 }, host: { min: 30000, max: 30009 } };
const resolvedPort = (i: number): fc.Arbitrary<ResolvedPort> =>
  fc.oneof(
    fc.record({ protocol: fc.constantFrom<PortProtocol>('http', 'https', 'tcp', 'tcp_tls', 'udp'), port: fc.integer({ min: 1, max: 65535 }) }).map((p) => gg(`p${i}`, p.protocol, p.port)),
    fc.record({ protocol: fc.constantFrom('tcp' as const, 'udp' as const), min: fc.integer({ min: 40000, max: 40019 }), len: fc.nat(4) }).map((p) => none(`p${i}`, p.protocol, p.min, Math.min(40019, p.min + p.len))),
  );
const lobbyConfig: fc.Arbitrary<readonly ResolvedPort[]> = fc
  .integer({ min: 0, max: 4 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => resolvedPort(i))));

describe('allocateLobbyPorts properties', () => {
  it('on success takes only free ports, which releaseLobbyPorts gives back exactly; on failure takes nothing', () => {
    fc.assert(
      fc.property(fc.array(lobbyConfig, { minLength: 1, maxLength: 6 }), fc.constantFrom<NetworkMode>('bridge', 'host'), fc.nat(), (lobbies, mode, seed) => {
        const rng = createRng(seed);
        let space = createPortSpace(SPACE);
        for (const ports of lobbies) {
          const before = snapshot(space);
          const r = allocateLobbyPorts(space, ports, mode, rng);
          expect(snapshot(space)).toEqual(before);
          if (!r.ok) {
            expect(r.error.code).toBe('PORT_RANGE_EXHAUSTED');
            continue;
          }
          const used = lobbyPortsInUse(r.value.allocations);
          for (const t of ['tcp', 'udp'] as const) {
            for (const p of used[t]) expect(space[t].has(p)).toBe(false);
            expect(r.value.space[t].used).toBe(space[t].used + used[t].length);
          }
          expect(snapshot(releaseLobbyPorts(r.value.space, r.value.allocations))).toEqual(before);
          space = r.value.space;
        }
      }),
    );
  });

  it('takes one proxied port per non-http game-proxy port and one host port per game-proxy port', () => {
    fc.assert(
      fc.property(lobbyConfig, fc.nat(), (ports, seed) => {
        const r = allocateLobbyPorts(createPortSpace(), ports, 'bridge', createRng(seed));
        if (!r.ok) return; // overlapping ranges within one lobby
        r.value.allocations.forEach((a: LobbyPortAllocation, i) => {
          const p = ports[i];
          expect(a.label).toBe(p?.label);
          expect(a.transport).toBe(transportOf(a.protocol));
          if (a.proxy === 'none') expect(a.range).toEqual(p?.portRange);
          else if (a.protocol === 'http' || a.protocol === 'https') expect(a.publicPort).toBe(a.protocol === 'http' ? 80 : 443);
          else expect(inRange(a.publicPort, 26000, 31999)).toBe(true);
          if (a.proxy === 'game_guard') expect(inRange(a.hostPort, 20000, 25999)).toBe(true);
        });
      }),
    );
  });
});

describe('portEnv', () => {
  it('names single ports PORT_<LABEL> and ranges PORT_RANGE_MIN/MAX_<LABEL>', () => {
    const bridge = allocate(createPortSpace(), [gg('game-udp', 'udp', 7777), none('p2p-range', 'udp', 27000, 27010), gg('web', 'http')], 'bridge');
    expect(portEnv(bridge.allocations)).toEqual({
      PORT_GAME_UDP: '7777',
      PORT_RANGE_MIN_P2P_RANGE: '27000',
      PORT_RANGE_MAX_P2P_RANGE: '27010',
    });
    const host = allocate(createPortSpace(), [gg('game', 'tcp')], 'host');
    expect(portEnv(host.allocations)).toEqual({ PORT_GAME: String(host.allocations[0]?.publicPort) });
    expect(portEnvLabel('a-b-c')).toBe('A_B_C');
  });
});

describe('lobbyPortsInUse', () => {
  it('lists proxied, host and range ports per transport, never 80/443', () => {
    const allocations: LobbyPortAllocation[] = [
      { label: 'w', protocol: 'https', proxy: 'game_guard', transport: 'tcp', publicPort: 443, hostPort: 20001, containerPort: 8443 },
      { label: 'g', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 27001, hostPort: 21001, containerPort: 7777 },
      { label: 'r', protocol: 'tcp', proxy: 'none', transport: 'tcp', range: { min: 26000, max: 26002 } },
    ];
    expect(lobbyPortsInUse(allocations)).toEqual({ tcp: [20001, 26000, 26001, 26002], udp: [21001, 27001] });
  });
});
