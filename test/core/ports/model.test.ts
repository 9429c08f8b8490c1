import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NetworkMode, PortProtocol, PortRange, ResolvedPort } from '../../../src/core/config/types.js';
import {
  allocateLobbyPorts,
  allocatePort,
  createPortSpace,
  freeCount,
  lobbyPortsInUse,
  releaseLobbyPorts,
  releasePorts,
  reserveRange,
} from '../../../src/core/ports/index.js';
import type { LobbyPortAllocation, PortPool, PortSpace, Transport } from '../../../src/core/ports/index.js';
import { createRng } from '../../../src/core/rng.js';

// Tiny pools (8 proxied, 4 host) so that exhaustion and conflicts are frequent.
const POOLS = { proxied: { min: 40000, max: 40007 }, host: { min: 30000, max: 30003 } };
const transport = fc.constantFrom<Transport>('tcp', 'udp');

const resolvedPort = (i: number): fc.Arbitrary<ResolvedPort> =>
  fc.oneof(
    fc
      .record({ protocol: fc.constantFrom<PortProtocol>('http', 'https', 'tcp', 'tcp_tls', 'udp'), port: fc.integer({ min: 1, max: 65535 }) })
      .map((p): ResolvedPort => ({ label: `p${i}`, protocol: p.protocol, proxy: 'game_guard', port: p.port })),
    fc
      .record({ protocol: fc.constantFrom('tcp' as const, 'udp' as const), min: fc.integer({ min: 40000, max: 40007 }), len: fc.nat(2) })
      .map((p): ResolvedPort => ({ label: `p${i}`, protocol: p.protocol, proxy: 'none', portRange: { min: p.min, max: Math.min(40007, p.min + p.len) } })),
  );
const lobbyConfig = fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => resolvedPort(i))));

type Op =
  | { readonly kind: 'allocate'; readonly transport: Transport; readonly pool: PortPool }
  | { readonly kind: 'reserve'; readonly transport: Transport; readonly range: PortRange }
  | { readonly kind: 'release'; readonly pick: number }
  | { readonly kind: 'lobby'; readonly ports: readonly ResolvedPort[]; readonly mode: NetworkMode }
  | { readonly kind: 'releaseLobby'; readonly pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('allocate' as const), transport, pool: fc.constantFrom<PortPool>('proxied', 'host') }) },
  fc.record({
    kind: fc.constant('reserve' as const),
    transport,
    range: fc.tuple(fc.integer({ min: 39998, max: 40008 }), fc.nat(3)).map(([min, len]) => ({ min, max: min + len })),
  }),
  fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('lobby' as const), ports: lobbyConfig, mode: fc.constantFrom<NetworkMode>('bridge', 'host') }),
  fc.record({ kind: fc.constant('releaseLobby' as const), pick: fc.nat() }),
);

/** The model: a Set per transport, plus what each holder took (to release it later). */
interface Model {
  readonly used: Record<Transport, Set<number>>;
  readonly singles: { transport: Transport; ports: number[] }[];
  readonly lobbies: LobbyPortAllocation[][];
}

const portsOf = (r: PortRange): number[] => Array.from({ length: r.max - r.min + 1 }, (_, i) => r.min + i);

/** Marks `ports` used in the model, failing the test if any was already used (a double allocation). */
const takeAll = (m: Model, t: Transport, ports: readonly number[]): void => {
  for (const p of ports) {
    expect(m.used[t].has(p)).toBe(false);
    m.used[t].add(p);
  }
};

const step = (space: PortSpace, m: Model, o: Op, seed: number): PortSpace => {
  const rng = createRng(seed);
  switch (o.kind) {
    case 'allocate': {
      const r = allocatePort(space, o.transport, o.pool, rng);
      const pool = POOLS[o.pool];
      const modelFree = portsOf(pool).filter((p) => !m.used[o.transport].has(p)).length;
      expect(r.ok).toBe(modelFree > 0);
      if (!r.ok) return space;
      expect(r.value.port >= pool.min && r.value.port <= pool.max).toBe(true);
      takeAll(m, o.transport, [r.value.port]);
      m.singles.push({ transport: o.transport, ports: [r.value.port] });
      return r.value.space;
    }
    case 'reserve': {
      const r = reserveRange(space, o.transport, o.range);
      const ports = portsOf(o.range);
      const fits = o.range.min >= POOLS.host.min && o.range.max <= POOLS.proxied.max;
      expect(r.ok).toBe(fits && ports.every((p) => !m.used[o.transport].has(p)));
      if (!r.ok) return space;
      takeAll(m, o.transport, ports);
      m.singles.push({ transport: o.transport, ports });
      return r.value;
    }
    case 'release': {
      const [held] = m.singles.splice(o.pick % Math.max(1, m.singles.length), 1);
      if (held === undefined) return space;
      for (const p of held.ports) m.used[held.transport].delete(p);
      return releasePorts(space, held.transport, held.ports);
    }
    case 'lobby': {
      const r = allocateLobbyPorts(space, o.ports, o.mode, rng);
      if (!r.ok) return space;
      const used = lobbyPortsInUse(r.value.allocations);
      takeAll(m, 'tcp', used.tcp);
      takeAll(m, 'udp', used.udp);
      m.lobbies.push([...r.value.allocations]);
      return r.value.space;
    }
    case 'releaseLobby': {
      const [held] = m.lobbies.splice(o.pick % Math.max(1, m.lobbies.length), 1);
      if (held === undefined) return space;
      const used = lobbyPortsInUse(held);
      for (const t of ['tcp', 'udp'] as const) for (const p of used[t]) m.used[t].delete(p);
      return releaseLobbyPorts(space, held);
    }
  }
};

const sorted = (s: ReadonlySet<number>): number[] => [...s].sort((a, b) => a - b);

describe('PortSpace against a model (a Set per transport)', () => {
  it('never allocates a port twice, fails allocate exactly when the pool is full, and never changes old values', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(op, fc.nat()), { maxLength: 60, size: 'max' }), (ops) => {
        let space = createPortSpace(POOLS);
        const m: Model = { used: { tcp: new Set(), udp: new Set() }, singles: [], lobbies: [] };
        const history: { space: PortSpace; tcp: number[]; udp: number[] }[] = [];
        for (const [o, seed] of ops) {
          history.push({ space, tcp: space.tcp.toArray(), udp: space.udp.toArray() });
          space = step(space, m, o, seed);
          expect(space.tcp.toArray()).toEqual(sorted(m.used.tcp));
          expect(space.udp.toArray()).toEqual(sorted(m.used.udp));
          for (const t of ['tcp', 'udp'] as const) {
            const free = portsOf(POOLS.proxied).filter((p) => !m.used[t].has(p)).length;
            expect(freeCount(space, t, 'proxied')).toBe(free);
          }
        }
        // Persistence: every earlier value still holds exactly what it held.
        for (const h of history) {
          expect(h.space.tcp.toArray()).toEqual(h.tcp);
          expect(h.space.udp.toArray()).toEqual(h.udp);
        }
      }),
    );
  });
});
