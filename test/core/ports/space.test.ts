import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchError } from '../../../src/core/errors.js';
import {
  DEFAULT_PORT_POOLS,
  allocatePort,
  createPortSpace,
  freeCount,
  isAllocated,
  portPoolsProblem,
  releasePorts,
  releaseRange,
  reserveRange,
  usedCount,
} from '../../../src/core/ports/index.js';
import type { PortPool, PortSpace, Transport } from '../../../src/core/ports/index.js';
import { createRng } from '../../../src/core/rng.js';
import type { Rng } from '../../../src/core/rng.js';

const take = (space: PortSpace, transport: Transport, pool: PortPool, rng: Rng): { space: PortSpace; port: number } => {
  const r = allocatePort(space, transport, pool, rng);
  if (!r.ok) throw new Error(`unexpected ${r.error.code}`);
  return r.value;
};

const SMALL = { proxied: { min: 40000, max: 40009 }, host: { min: 30000, max: 30009 } };

describe('createPortSpace', () => {
  it('defaults to proxied 26000..31999 and host 20000..25999, frozen', () => {
    expect(DEFAULT_PORT_POOLS).toEqual({ proxied: { min: 26000, max: 31999 }, host: { min: 20000, max: 25999 } });
    expect(Object.isFrozen(DEFAULT_PORT_POOLS) && Object.isFrozen(DEFAULT_PORT_POOLS.proxied)).toBe(true);
    const s = createPortSpace();
    expect(s.pools).toEqual(DEFAULT_PORT_POOLS);
    expect([freeCount(s, 'tcp', 'proxied'), freeCount(s, 'udp', 'host'), usedCount(s, 'tcp', 'host')]).toEqual([6000, 6000, 0]);
    expect(createPortSpace({ proxied: { min: 40000, max: 40009 } }).pools.host).toEqual(DEFAULT_PORT_POOLS.host);
  });

  it('rejects overlapping or out-of-bounds pools', () => {
    expect(portPoolsProblem(DEFAULT_PORT_POOLS)).toBeUndefined();
    expect(portPoolsProblem({ proxied: { min: 100, max: 200 }, host: { min: 200, max: 300 } })).toBe('the proxied and host pools overlap');
    expect(portPoolsProblem({ proxied: { min: 0, max: 10 }, host: { min: 20, max: 30 } })).toMatch(/proxied pool/);
    expect(portPoolsProblem({ proxied: { min: 10, max: 20 }, host: { min: 65000, max: 65536 } })).toMatch(/host pool/);
    expect(portPoolsProblem({ proxied: { min: 20, max: 10 }, host: { min: 30, max: 40 } })).toMatch(/proxied pool/);
    expect(() => createPortSpace({ host: { min: 26000, max: 26001 } })).toThrow(RangeError);
    expect(() => createPortSpace({ proxied: { min: 1, max: 65535 } })).toThrow('overlap');
  });
});

describe('allocatePort', () => {
  it('returns a port of its pool, taken only on its transport', () => {
    fc.assert(
      fc.property(fc.nat(), fc.constantFrom<Transport>('tcp', 'udp'), fc.constantFrom<PortPool>('proxied', 'host'), fc.integer({ min: 1, max: 30 }), (seed, transport, pool, n) => {
        let s = createPortSpace();
        const rng = createRng(seed);
        const { min, max } = DEFAULT_PORT_POOLS[pool];
        const seen = new Set<number>();
        for (let i = 0; i < n; i++) {
          const r = take(s, transport, pool, rng);
          expect(r.port).toBeGreaterThanOrEqual(min);
          expect(r.port).toBeLessThanOrEqual(max);
          expect(seen.has(r.port)).toBe(false);
          seen.add(r.port);
          s = r.space;
          expect(isAllocated(s, transport, r.port)).toBe(true);
          expect(isAllocated(s, transport === 'tcp' ? 'udp' : 'tcp', r.port)).toBe(false);
        }
        expect(usedCount(s, transport, pool)).toBe(n);
        expect(usedCount(s, transport, pool === 'host' ? 'proxied' : 'host')).toBe(0);
      }),
    );
  });

  it('fails exactly when a small pool is full, and succeeds again after a release', () => {
    fc.assert(
      fc.property(fc.nat(), fc.constantFrom<Transport>('tcp', 'udp'), fc.constantFrom<PortPool>('proxied', 'host'), fc.nat(9), (seed, transport, pool, victim) => {
        let s = createPortSpace(SMALL);
        const rng = createRng(seed);
        const ports: number[] = [];
        for (let i = 0; i < 10; i++) {
          expect(freeCount(s, transport, pool)).toBe(10 - i);
          const r = take(s, transport, pool, rng);
          ports.push(r.port);
          s = r.space;
        }
        expect(new Set(ports).size).toBe(10);
        const full = allocatePort(s, transport, pool, rng);
        expect(full).toEqual({ ok: false, error: matchError('PORT_RANGE_EXHAUSTED', { pool, ...SMALL[pool] }) });
        // The other transport and the other pool are unaffected.
        expect(allocatePort(s, transport === 'tcp' ? 'udp' : 'tcp', pool, rng).ok).toBe(true);
        expect(allocatePort(s, transport, pool === 'host' ? 'proxied' : 'host', rng).ok).toBe(true);
        const freed = ports[victim] ?? -1;
        const again = take(releasePorts(s, transport, [freed]), transport, pool, rng);
        expect(again.port).toBe(freed);
        expect(allocatePort(again.space, transport, pool, rng).ok).toBe(false);
      }),
    );
  });

  it('exhausts and refills the real 6,000-port proxied pool', () => {
    const rng = createRng(7);
    let s = createPortSpace();
    const ports = new Set<number>();
    for (let i = 0; i < 6000; i++) {
      const r = take(s, 'udp', 'proxied', rng);
      ports.add(r.port);
      s = r.space;
    }
    expect(ports.size).toBe(6000);
    expect(Math.min(...ports)).toBe(26000);
    expect(Math.max(...ports)).toBe(31999);
    const full = allocatePort(s, 'udp', 'proxied', rng);
    expect(full.ok ? undefined : full.error).toEqual(matchError('PORT_RANGE_EXHAUSTED', { pool: 'proxied', min: 26000, max: 31999 }));
    expect(usedCount(s, 'udp', 'host')).toBe(0);
    s = releasePorts(s, 'udp', [...ports]);
    expect(freeCount(s, 'udp', 'proxied')).toBe(6000);
    for (let i = 0; i < 6000; i++) s = take(s, 'udp', 'proxied', rng).space;
    expect(allocatePort(s, 'udp', 'proxied', rng).ok).toBe(false);
  });

  it('picks every free port of a pool over many seeds (select covers the free set)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 40000, max: 40009 }), { maxLength: 9 }), (taken) => {
        const s = createPortSpace(SMALL);
        const start = taken.reduce((acc, p) => {
          const r = reserveRange(acc, 'tcp', { min: p, max: p });
          return r.ok ? r.value : acc;
        }, s);
        const free = new Set([...Array(10).keys()].map((i) => 40000 + i).filter((p) => !taken.includes(p)));
        const picked = new Set<number>();
        for (let seed = 0; seed < 300 && picked.size < free.size; seed++) picked.add(take(start, 'tcp', 'proxied', createRng(seed)).port);
        expect(picked).toEqual(free);
      }),
      { numRuns: 50 },
    );
  });

  it('picks roughly uniformly', () => {
    const s = createPortSpace(SMALL);
    const counts = new Map<number, number>();
    for (let seed = 0; seed < 5000; seed++) {
      const p = take(s, 'udp', 'host', createRng(seed)).port;
      counts.set(p, (counts.get(p) ?? 0) + 1);
    }
    expect(counts.size).toBe(10);
    for (const n of counts.values()) expect(n).toBeGreaterThan(400); // expected 500 each
  });
});

describe('reserveRange', () => {
  it('takes exactly the range, which random proxied picks then avoid', () => {
    const r = reserveRange(createPortSpace(SMALL), 'tcp', { min: 40002, max: 40008 });
    if (!r.ok) throw new Error('reserve failed');
    let s = r.value;
    expect([40001, 40002, 40008, 40009].map((p) => isAllocated(s, 'tcp', p))).toEqual([false, true, true, false]);
    expect(usedCount(s, 'tcp', 'proxied')).toBe(7);
    const rng = createRng(3);
    const got: number[] = [];
    for (let i = 0; i < 3; i++) {
      const a = take(s, 'tcp', 'proxied', rng);
      got.push(a.port);
      s = a.space;
    }
    expect(got.sort()).toEqual([40000, 40001, 40009]);
    expect(allocatePort(s, 'tcp', 'proxied', rng).ok).toBe(false);
    expect(freeCount(releaseRange(s, 'tcp', { min: 40002, max: 40008 }), 'tcp', 'proxied')).toBe(7);
  });

  it('fails when any port of the range is taken or it leaves the space', () => {
    const base = take(createPortSpace(), 'udp', 'proxied', createRng(1));
    const p = base.port;
    const exhausted = (min: number, max: number): unknown => ({ ok: false, error: matchError('PORT_RANGE_EXHAUSTED', { pool: 'range', min, max }) });
    expect(reserveRange(base.space, 'udp', { min: p, max: p + 0 })).toEqual(exhausted(p, p));
    expect(reserveRange(base.space, 'udp', { min: p - 5, max: p + 5 })).toEqual(exhausted(p - 5, p + 5));
    expect(reserveRange(base.space, 'tcp', { min: p - 5, max: p + 5 }).ok).toBe(true);
    expect(reserveRange(base.space, 'udp', { min: 31990, max: 32000 })).toEqual(exhausted(31990, 32000));
    expect(reserveRange(base.space, 'udp', { min: 19999, max: 20000 })).toEqual(exhausted(19999, 20000));
    expect(() => reserveRange(base.space, 'udp', { min: 27000, max: 26999 })).toThrow(RangeError);
  });

  it('returns the same space when a release changes nothing', () => {
    const s = createPortSpace();
    expect(releasePorts(s, 'tcp', [26000, 1, 70000])).toBe(s);
  });
});
