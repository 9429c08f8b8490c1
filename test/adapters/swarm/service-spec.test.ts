import { describe, expect, it } from 'vitest';
import { DEFAULT_HARDENING } from '../../../src/adapters/docker/lobby-spec.js';
import { placement, serviceSpec } from '../../../src/adapters/swarm/service-spec.js';
import type { StartLobby } from '../../../src/core/effects.js';

const lobby = (over: Partial<StartLobby> = {}): StartLobby => ({
  type: 'start-lobby', lobbyId: 'l-1', namespaceId: 'ns-1', versionId: 'v-1', gameMode: 'default', region: 'lnd', tier: 'basic-1d2', imageId: 'b-1',
  args: ['--mode', 'duel'], env: { PORT_GAME: '7777' }, networkMode: 'bridge',
  ports: [
    { label: 'game', protocol: 'udp', proxy: 'game_guard', transport: 'udp', publicPort: 27001, hostPort: 21001, containerPort: 7777 },
    { label: 'web', protocol: 'https', proxy: 'game_guard', transport: 'tcp', publicPort: 443, hostPort: 21003, containerPort: 8443 },
    { label: 'p2p', protocol: 'udp', proxy: 'none', transport: 'udp', range: { min: 26100, max: 26109 } },
  ],
  ...over,
});

const options = { image: '10.0.0.1:5000/game:1@sha256:ab', instanceId: 'inst-a', hardening: { ...DEFAULT_HARDENING, user: '65534:65534' }, stopGraceMs: 30_000 };

describe('serviceSpec', () => {
  it('one task, never restarted, named by lobby, with the lobby env, tier limits, labels and hardening', () => {
    const spec = serviceSpec(lobby(), options);
    expect(spec.Name).toBe('tavern-l-1');
    expect(spec.Mode).toEqual({ Replicated: { Replicas: 1 } });
    expect(spec.Labels).toEqual({ 'tavern.lobby': 'l-1', 'tavern.namespace': 'ns-1', 'tavern.version': 'v-1', 'tavern.instance': 'inst-a' });
    const task = spec.TaskTemplate;
    expect(task?.RestartPolicy).toEqual({ Condition: 'none', MaxAttempts: 0 });
    expect(task?.Resources?.Limits).toEqual({ NanoCPUs: 500_000_000, MemoryBytes: 1_073_741_824, Pids: 256 });
    expect(task !== undefined && 'ContainerSpec' in task ? task.ContainerSpec : undefined).toMatchObject({
      Image: options.image, Args: ['--mode', 'duel'], User: '65534:65534', ReadOnly: true, CapabilityDrop: ['ALL'], Init: true, StopGracePeriod: 30_000_000_000,
      Env: ['PORT_GAME=7777', 'RIVET_CPU=500', 'RIVET_MEMORY=1073741824', 'RIVET_MEMORY_OVERSUBSCRIBE=1073741824'],
      Mounts: [{ Type: 'tmpfs', Source: '', Target: '/tmp', TmpfsOptions: { SizeBytes: 64 * 1024 * 1024, Mode: 0o1777 } }],
    });
  });

  it('publishes game ports in host mode on the node (udp/tcp on the proxied port, http on the host port), never a range', () => {
    expect(serviceSpec(lobby(), options).EndpointSpec?.Ports).toEqual([
      { Protocol: 'udp', TargetPort: 7777, PublishedPort: 27001, PublishMode: 'host' },
      { Protocol: 'tcp', TargetPort: 8443, PublishedPort: 21003, PublishMode: 'host' },
    ]);
  });

  it('places a lobby in its region, on nodes whose engine sets no-new-privileges, never on a node Tavern drains (by id, so a drain never kills a running lobby)', () => {
    expect(serviceSpec(lobby({ region: 'fra' }), { ...options, drained: ['n3'] }).TaskTemplate?.Placement?.Constraints).toEqual(placement('fra', ['n3']));
    expect(placement('fra', ['n3'])).toEqual(['node.labels.tavern.region == fra', 'engine.labels.tavern.no-new-privileges == true', 'node.id != n3']);
    expect(placement('fra')).toEqual(['node.labels.tavern.region == fra', 'engine.labels.tavern.no-new-privileges == true']);
  });

  it('refuses host networking', () => {
    expect(() => serviceSpec(lobby({ networkMode: 'host' }), options)).toThrow(/host networking is not available on the Swarm runtime/);
  });
});
