import { describe, expect, it } from 'vitest';
import { bareSpec, idleSplit } from '../../bench/runtime-docker.js';

describe('idleSplit: idle lobbies spread over game modes within the per-mode limit', () => {
  it('adds up to the total, at most 16 per mode, as evenly as possible', () => {
    expect(idleSplit(200)).toEqual([16, 16, 16, 16, 16, 15, 15, 15, 15, 15, 15, 15, 15]);
    expect(idleSplit(16)).toEqual([16]);
    expect(idleSplit(17)).toEqual([9, 8]);
    expect(idleSplit(512)).toEqual(Array.from({ length: 32 }, () => 16));
    for (const total of [1, 15, 33, 199, 201, 511]) {
      const split = idleSplit(total);
      expect(split.reduce((a, b) => a + b, 0)).toBe(total);
      expect(Math.max(...split) - Math.min(...split)).toBeLessThanOrEqual(1);
      expect(Math.max(...split)).toBeLessThanOrEqual(16);
    }
  });

  it('refuses what no version can hold', () => {
    expect(() => idleSplit(513)).toThrow(/at most 512 idle lobbies/);
    expect(() => idleSplit(0)).toThrow(RangeError);
    expect(() => idleSplit(2.5)).toThrow(RangeError);
  });
});

describe('bareSpec: the baseline container is a lobby container in all but its labels', () => {
  it('has the hardening, the tier limits, and the ports published on 127.0.0.1 with PORT_<label> set', () => {
    const spec = bareSpec({
      image: 'tavern-build:b1', instanceId: 'bench-bare', tier: 'basic-1d16', env: { GAME_READY: '0' },
      ports: [{ label: 'game-udp', transport: 'udp', containerPort: 7777, publicPort: 27_001 }, { label: 'game-tcp', transport: 'tcp', containerPort: 7778, publicPort: 27_002 }],
    });
    expect(spec.Image).toBe('tavern-build:b1');
    expect(spec.Labels).toMatchObject({ 'tavern.instance': 'bench-bare' });
    expect(spec.Env).toEqual(expect.arrayContaining(['GAME_READY=0', 'PORT_GAME_UDP=7777', 'PORT_GAME_TCP=7778']));
    expect(spec.HostConfig).toMatchObject({
      CapDrop: ['ALL'], SecurityOpt: ['no-new-privileges'], ReadonlyRootfs: true, Privileged: false, NetworkMode: 'tavern-lobbies',
      Memory: 128 * 2 ** 20, MemorySwap: 128 * 2 ** 20, NanoCpus: 63_000_000,
      PortBindings: { '7777/udp': [{ HostIp: '127.0.0.1', HostPort: '27001' }], '7778/tcp': [{ HostIp: '127.0.0.1', HostPort: '27002' }] },
    });
  });
});
