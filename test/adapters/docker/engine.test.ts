import { describe, expect, it } from 'vitest';
import { dockerdServing, engineAddress, firstHost, userlandProxyOf } from '../../../src/adapters/docker/engine.js';

describe('userlandProxyOf', () => {
  it('reads the flag in either form, then daemon.json, then the default (on)', () => {
    expect(userlandProxyOf(['dockerd', '--userland-proxy=false'], undefined)).toBe('off');
    expect(userlandProxyOf(['dockerd', '--userland-proxy', 'false'], '{"userland-proxy": true}')).toBe('off');
    expect(userlandProxyOf(['dockerd', '--userland-proxy=true'], '{"userland-proxy": false}')).toBe('on');
    expect(userlandProxyOf(['dockerd'], '{"userland-proxy": false}')).toBe('off');
    expect(userlandProxyOf(['dockerd'], 'not json')).toBe('on');
    expect(userlandProxyOf(['dockerd'], undefined)).toBe('on');
    expect(userlandProxyOf(undefined, '{"userland-proxy": false}')).toBe('unknown');
  });
});

describe('dockerdServing: which of several dockerd on a host serves DOCKER_HOST', () => {
  const system = ['dockerd', '--userland-proxy=false'];
  const second = ['dockerd', '--userland-proxy=true', '-H', 'unix:///tmp/rtbench-docker/docker.sock', '--bridge', 'tvbench0'];
  const tcp = ['/usr/sbin/dockerd', '--host=tcp://0.0.0.0:2376'];

  it('picks the one listening on the socket or port the client uses', () => {
    expect(dockerdServing([system, second], 'unix:///tmp/rtbench-docker/docker.sock')).toBe(second);
    expect(dockerdServing([second, system], undefined)).toBe(system);
    expect(dockerdServing([second, system], 'unix:///var/run/docker.sock')).toBe(system);
    expect(dockerdServing([system, tcp], 'tcp://127.0.0.1:2376')).toBe(tcp);
    expect(dockerdServing([['dockerd', '-H', 'fd://'], second], '')).toEqual(['dockerd', '-H', 'fd://']);
  });

  it('falls back to the only dockerd, and knows none when several run and none listens there', () => {
    expect(dockerdServing([second], undefined)).toBe(second);
    expect(dockerdServing([system, second], 'tcp://10.0.0.5:2375')).toBeUndefined();
    expect(dockerdServing([], undefined)).toBeUndefined();
  });
});

describe('firstHost', () => {
  it('gives the first host address of an IPv4 subnet, where Docker puts a bridge gateway', () => {
    expect(firstHost('172.17.0.0/16')).toBe('172.17.0.1');
    expect(firstHost('172.17.5.9/16')).toBe('172.17.0.1');
    expect(firstHost('10.200.3.0/24')).toBe('10.200.3.1');
    expect(firstHost('192.168.1.128/25')).toBe('192.168.1.129');
    expect(firstHost('0.0.0.0/0')).toBe('0.0.0.1');
    expect(firstHost('10.0.0.0/31')).toBeUndefined();
    expect(firstHost('fd00::/64')).toBeUndefined();
  });

  it('names the engine it talks to', () => {
    expect(engineAddress(undefined)).toBe('unix:///var/run/docker.sock');
    expect(engineAddress('tcp://10.0.0.5:2375')).toBe('tcp://10.0.0.5:2375');
  });
});
