import { describe, expect, it } from 'vitest';
import { PortBitset } from '../../../src/core/ports/bitset.js';
import { createPortSpace, freeCount, isAllocated, portPoolsProblem, reserveRange } from '../../../src/core/ports/space.js';

// The bounds of port ranges: what a pool, a space, a reserved range and a bitset accept and
// refuse, each exactly at its edge, with the message an operator reads.

describe('port pools', () => {
  const pools = (proxied: { min: number; max: number }, host: { min: number; max: number }) => portPoolsProblem({ proxied, host });

  it('accepts integers with 1 <= min <= max <= 65535, a single port included', () => {
    expect(pools({ min: 1, max: 1 }, { min: 65535, max: 65535 })).toBeUndefined();
    expect(pools({ min: 26000, max: 31999 }, { min: 20000, max: 25999 })).toBeUndefined();
  });

  it('refuses each bound broken, naming the pool and its range', () => {
    const host = { min: 20000, max: 25999 };
    expect(pools({ min: 0, max: 10 }, host)).toBe('the proxied pool 0..10 is not 1 <= min <= max <= 65535');
    expect(pools({ min: 60000, max: 65536 }, host)).toBe('the proxied pool 60000..65536 is not 1 <= min <= max <= 65535');
    expect(pools({ min: 30001, max: 30000 }, host)).toBe('the proxied pool 30001..30000 is not 1 <= min <= max <= 65535');
    expect(pools({ min: 1.5, max: 10 }, host)).toBe('the proxied pool 1.5..10 is not 1 <= min <= max <= 65535');
    expect(pools({ min: 1, max: 10.5 }, host)).toBe('the proxied pool 1..10.5 is not 1 <= min <= max <= 65535');
    expect(pools({ min: 26000, max: 31999 }, { min: 2, max: 1 })).toBe('the host pool 2..1 is not 1 <= min <= max <= 65535');
  });

  it('refuses pools that share a port, on either side, and accepts neighbours', () => {
    expect(pools({ min: 100, max: 200 }, { min: 200, max: 300 })).toBe('the proxied and host pools overlap');
    expect(pools({ min: 200, max: 300 }, { min: 100, max: 200 })).toBe('the proxied and host pools overlap');
    expect(pools({ min: 100, max: 300 }, { min: 150, max: 160 })).toBe('the proxied and host pools overlap');
    expect(pools({ min: 100, max: 199 }, { min: 200, max: 300 })).toBeUndefined();
    expect(pools({ min: 201, max: 300 }, { min: 100, max: 200 })).toBeUndefined();
  });

  it('makes a space of exactly the pools, or throws the problem', () => {
    const space = createPortSpace({ proxied: { min: 40000, max: 40009 }, host: { min: 40010, max: 40010 } });
    expect(freeCount(space, 'tcp', 'proxied')).toBe(10);
    expect(freeCount(space, 'udp', 'host')).toBe(1);
    expect(() => createPortSpace({ proxied: { min: 5, max: 4 } })).toThrow(new RangeError('the proxied pool 5..4 is not 1 <= min <= max <= 65535'));
  });
});

describe('reserveRange', () => {
  const space = createPortSpace({ proxied: { min: 27000, max: 27009 }, host: { min: 20000, max: 20009 } });

  it('reserves a range of one port and a whole pool', () => {
    const one = reserveRange(space, 'tcp', { min: 27003, max: 27003 });
    expect(one.ok && isAllocated(one.value, 'tcp', 27003)).toBe(true);
    expect(one.ok && isAllocated(one.value, 'tcp', 27004)).toBe(false);
    const all = reserveRange(space, 'udp', { min: 27000, max: 27009 });
    expect(all.ok && freeCount(all.value, 'udp', 'proxied')).toBe(0);
  });

  it('throws on a range that is not min <= max integers (a bug), naming it', () => {
    expect(() => reserveRange(space, 'tcp', { min: 27005, max: 27004 })).toThrow(new RangeError('invalid port range 27005..27004'));
    expect(() => reserveRange(space, 'tcp', { min: 27000.5, max: 27004 })).toThrow(new RangeError('invalid port range 27000.5..27004'));
    expect(() => reserveRange(space, 'tcp', { min: 27000, max: 27004.5 })).toThrow(new RangeError('invalid port range 27000..27004.5'));
  });
});

describe('PortBitset bounds', () => {
  it('covers exactly min..max, a single port included', () => {
    const one = PortBitset.create({ min: 7, max: 7 });
    expect(one.capacity).toBe(1);
    expect([one.covers(6), one.covers(7), one.covers(8)]).toEqual([false, true, false]);
    const wide = PortBitset.create({ min: 100, max: 163 });
    expect(wide.capacity).toBe(64);
    expect(wide.countFree({ min: 0, max: 1_000 })).toBe(64);
    expect(wide.setMany([163]).has(163)).toBe(true);
  });

  it('throws on an interval that is not min <= max integers, naming it', () => {
    expect(() => PortBitset.create({ min: 8, max: 7 })).toThrow(new RangeError('invalid port interval 8..7'));
    expect(() => PortBitset.create({ min: 1.5, max: 7 })).toThrow(new RangeError('invalid port interval 1.5..7'));
    expect(() => PortBitset.create({ min: 1, max: 7.5 })).toThrow(new RangeError('invalid port interval 1..7.5'));
  });

  it('refuses to set a port outside, naming it, and ignores one cleared outside', () => {
    const b = PortBitset.create({ min: 10, max: 20 });
    expect(() => b.setMany([21])).toThrow(new RangeError('port 21 outside 10..20'));
    expect(b.clearMany([9, 21])).toBe(b);
    expect(b.has(21)).toBe(false);
  });

  it('counts free ports of a range that misses the set, touches one end, or is a single port', () => {
    const b = PortBitset.create({ min: 10, max: 20 }).setMany([10, 20]);
    expect(b.countFree({ min: 21, max: 30 })).toBe(0);
    expect(b.countFree({ min: 0, max: 9 })).toBe(0);
    expect(b.countFree({ min: 20, max: 30 })).toBe(0);
    expect(b.countFree({ min: 19, max: 30 })).toBe(1);
    expect(b.countFree({ min: 15, max: 15 })).toBe(1);
    expect(b.countUsed({ min: 0, max: 100 })).toBe(2);
  });
});
