import { describe, expect, it } from 'vitest';
import { engineAddress, firstHost, userlandProxyOf } from '../../../src/adapters/docker/engine.js';

describe('userlandProxyOf', () => {
  it('reads dockerd\'s flag in either spelling, then daemon.json, else the engine default (on)', () => {
    expect(userlandProxyOf(['/usr/sbin/dockerd', '--userland-proxy=false'], undefined)).toBe('off');
    expect(userlandProxyOf(['dockerd', '--userland-proxy', 'false'], '{"userland-proxy": true}')).toBe('off');
    expect(userlandProxyOf(['dockerd', '--userland-proxy=true'], '{"userland-proxy": false}')).toBe('on');
    expect(userlandProxyOf(['dockerd', '--userland-proxy'], undefined)).toBe('on');
    expect(userlandProxyOf(['dockerd'], '{"userland-proxy": false}')).toBe('off');
    expect(userlandProxyOf(['dockerd'], '{"debug": true}')).toBe('on');
    expect(userlandProxyOf(['dockerd'], 'not json')).toBe('on');
    expect(userlandProxyOf(['dockerd'], undefined)).toBe('on');
    expect(userlandProxyOf(undefined, '{"userland-proxy": false}')).toBe('unknown');
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
