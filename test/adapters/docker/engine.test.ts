import { describe, expect, it } from 'vitest';
import { dockerdServing, userlandProxyOf } from '../../../src/adapters/docker/engine.js';

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
