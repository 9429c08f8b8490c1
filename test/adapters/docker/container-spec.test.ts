import { describe, expect, it } from 'vitest';
import { containerSpec } from '../../../src/adapters/docker/container-spec.js';
import { containerName, DEFAULT_HARDENING } from '../../../src/adapters/docker/lobby-spec.js';
import type { StartLobby } from '../../../src/core/effects.js';

const lobby = (over: Partial<StartLobby> = {}): StartLobby => ({
  type: 'start-lobby',
  lobbyId: 'l-1',
  namespaceId: 'ns-1',
  versionId: 'v-1',
  gameMode: 'default',
  region: 'local',
  tier: 'basic-1d2',
  imageId: 'b-1',
  args: ['--mode', 'duel'],
  env: { RIVET_LOBBY_ID: 'l-1', PORT_GAME: '7777', GREETING: 'a=b c' },
  networkMode: 'bridge',
  ports: [
    { label: 'game', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 27001, hostPort: 21001, containerPort: 7777 },
    { label: 'chat', protocol: 'tcp', proxy: 'game_guard', transport: 'tcp', publicPort: 27002, hostPort: 21002, containerPort: 7778 },
    { label: 'web', protocol: 'https', proxy: 'game_guard', transport: 'tcp', publicPort: 443, hostPort: 21003, containerPort: 8443 },
    { label: 'tls', protocol: 'tcp_tls', proxy: 'game_guard', transport: 'tcp', publicPort: 27004, hostPort: 21004, containerPort: 7779 },
  ],
  ...over,
});

const options = { image: 'tavern-build:b-1', instanceId: 'inst-a', publishHost: '127.0.0.1', network: 'tavern-lobbies', hardening: DEFAULT_HARDENING, extraHosts: ['host.docker.internal:host-gateway'] };

describe('containerSpec', () => {
  it('names the container by lobby, labels it, and passes the lobby env, tier resources and args', () => {
    const spec = containerSpec(lobby(), options);
    expect(spec.name).toBe(containerName('l-1'));
    expect(spec.Image).toBe('tavern-build:b-1');
    expect(spec.Cmd).toEqual(['--mode', 'duel']);
    expect(spec.Labels).toEqual({ 'tavern.lobby': 'l-1', 'tavern.namespace': 'ns-1', 'tavern.version': 'v-1', 'tavern.instance': 'inst-a' });
    expect(spec.Env).toEqual(expect.arrayContaining(['RIVET_LOBBY_ID=l-1', 'PORT_GAME=7777', 'GREETING=a=b c', 'RIVET_CPU=500', `RIVET_MEMORY=${1024 * 1024 * 1024}`]));
    expect(spec.HostConfig).toMatchObject({ NanoCpus: 500_000_000, CpuShares: 512, Memory: 1024 ** 3, MemorySwap: 1024 ** 3 });
    expect(containerSpec(lobby({ args: [] }), options).Cmd).toBeUndefined();
  });

  it('hardens every container: no capabilities, no privilege gain, pids limit, read-only root with /tmp, no restart', () => {
    const host = containerSpec(lobby(), options).HostConfig;
    expect(host).toMatchObject({
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: 256,
      ReadonlyRootfs: true,
      Privileged: false,
      NetworkMode: 'tavern-lobbies',
      RestartPolicy: { Name: 'no' },
    });
    expect(host?.Tmpfs?.['/tmp']).toMatch(/size=64m/);
    expect(host?.Binds).toBeUndefined();
    expect(JSON.stringify(containerSpec(lobby(), options))).not.toMatch(/docker\.sock/);
  });

  it('publishes tcp/udp on the proxied port clients get, and proxy-terminated ports on their host port, on the publish address', () => {
    const spec = containerSpec(lobby(), { ...options, publishHost: '10.1.2.3' });
    expect(spec.HostConfig?.PortBindings).toEqual({
      '7777/udp': [{ HostIp: '10.1.2.3', HostPort: '27001' }],
      '7778/tcp': [{ HostIp: '10.1.2.3', HostPort: '27002' }],
      '8443/tcp': [{ HostIp: '10.1.2.3', HostPort: '21003' }],
      '7779/tcp': [{ HostIp: '10.1.2.3', HostPort: '21004' }],
    });
    expect(Object.keys(spec.ExposedPorts ?? {})).toEqual(['7777/udp', '7778/tcp', '8443/tcp', '7779/tcp']);
  });

  it('runs host-network containers on the host network, publishing nothing', () => {
    const spec = containerSpec(lobby({ networkMode: 'host' }), options);
    expect(spec.HostConfig?.NetworkMode).toBe('host');
    expect(spec.HostConfig?.PortBindings).toEqual({});
    expect(spec.HostConfig?.ExtraHosts).toBeUndefined();
  });

  it("joins the lobby network it is given (bridge lobbies only), and runs as the operator's user when one is forced", () => {
    expect(containerSpec(lobby(), { ...options, network: 'operators-net' }).HostConfig?.NetworkMode).toBe('operators-net');
    expect(containerSpec(lobby(), options).User).toBeUndefined();
    expect(containerSpec(lobby(), { ...options, hardening: { ...DEFAULT_HARDENING, user: '65534:65534' } }).User).toBe('65534:65534');
  });

  it('falls back to the default tier for a tier it does not know', () => {
    expect(containerSpec(lobby({ tier: 'weird' }), options).HostConfig?.NanoCpus).toBe(1_000_000_000);
  });
});
