/**
 * The network lobbies join, on a real engine: Tavern's own is created when missing (a bridge with
 * inter-container communication off, even when two Tavern instances make it at the same moment)
 * and found again afterwards; an operator's network must exist and be a bridge, and one with
 * inter-container communication on is reported as such. The test's networks have names of their
 * own and are removed at the end.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { ensureLobbyNetwork, ICC_OPTION } from '../../src/adapters/docker/lobby-network.js';
import { describeWithDocker, docker, dockerProblem } from './engine.js';

const problem = await dockerProblem();
const made: string[] = [];
/** A network name of the test's own; short ones (at most 15 characters) name the host's interface too. */
const name = (what: string, short = false): string => {
  const n = short ? `tvt-${randomUUID().slice(0, 8)}` : `tavern-test-${what}-${randomUUID().slice(0, 8)}`;
  made.push(n);
  return n;
};
const networksNamed = async (n: string): Promise<number> => (await docker.listNetworks({ filters: { name: [n] } })).filter((x) => x.Name === n).length;

describeWithDocker('the lobbies\' Docker network', problem, () => {
  afterAll(async () => {
    for (const n of made) {
      for (const net of (await docker.listNetworks({ filters: { name: [n] } })).filter((x) => x.Name === n)) await docker.getNetwork(net.Id).remove().catch(() => undefined);
    }
  });

  it('Tavern\'s own is created when missing, a bridge with ICC off whose host interface has its name, and found again later', async () => {
    const n = name('own', true);
    const made = await ensureLobbyNetwork(docker, { name: n, create: true });
    const info = (await docker.getNetwork(n).inspect()) as { Id: string; Driver: string; Options: Record<string, string>; Labels: Record<string, string>; IPAM: { Config: { Gateway: string; Subnet: string }[] } };
    expect(info).toMatchObject({ Driver: 'bridge', Options: { [ICC_OPTION]: 'false', 'com.docker.network.bridge.name': n }, Labels: { 'tavern.network': 'lobbies' } });
    expect(existsSync(`/sys/class/net/${n}`)).toBe(true);
    expect(made).toEqual({ name: n, id: info.Id, gateway: info.IPAM.Config[0]?.Gateway, subnet: info.IPAM.Config[0]?.Subnet, interContainer: false, created: true });
    expect(made.subnet).toMatch(/^\d+\.\d+\.\d+\.\d+\/\d+$/);
    expect(made.gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(await ensureLobbyNetwork(docker, { name: n, create: true })).toEqual({ ...made, created: false });
  });

  it('two instances making it at the same moment both get a usable network, and later ones the oldest of that name', async () => {
    const n = name('race', true);
    const both = await Promise.all([ensureLobbyNetwork(docker, { name: n, create: true }), ensureLobbyNetwork(docker, { name: n, create: true })]);
    for (const got of both) {
      const info = (await docker.getNetwork(got.id).inspect()) as { Name: string; Options: Record<string, string> };
      expect(info).toMatchObject({ Name: n, Options: { [ICC_OPTION]: 'false' } });
    }
    // The engine's duplicate check is not atomic: a loser removes the network it made (nearly always both agree on one).
    const left = await networksNamed(n);
    expect(left).toBeGreaterThanOrEqual(1);
    expect(left).toBeLessThanOrEqual(2);
    const oldest = (await docker.listNetworks({ filters: { name: [n] } })).filter((x) => x.Name === n).sort((a, b) => Date.parse(a.Created) - Date.parse(b.Created) || (a.Id < b.Id ? -1 : 1))[0];
    expect((await ensureLobbyNetwork(docker, { name: n, create: true })).id).toBe(oldest?.Id);
  });

  it('a name too long for an interface keeps the engine\'s interface name', async () => {
    const n = name('long-name');
    const made = await ensureLobbyNetwork(docker, { name: n, create: true });
    const info = (await docker.getNetwork(n).inspect()) as { Options: Record<string, string> };
    expect(info.Options).toEqual({ [ICC_OPTION]: 'false' });
    expect(existsSync(`/sys/class/net/br-${made.id.slice(0, 12)}`)).toBe(true);
  });

  it('an operator\'s network must exist: a missing one fails saying how to make it', async () => {
    const n = name('missing');
    await expect(ensureLobbyNetwork(docker, { name: n, create: false })).rejects.toThrow(
      `the Docker network ${n} (TAVERN_DOCKER_NETWORK) does not exist: create it, e.g. docker network create -o ${ICC_OPTION}=false ${n}`,
    );
    expect(await networksNamed(n)).toBe(0);
  });

  it('an operator\'s bridge with ICC on is used and said to let lobbies reach each other; host and none are no bridges', async () => {
    const n = name('operator');
    await docker.createNetwork({ Name: n, Driver: 'bridge', CheckDuplicate: true });
    expect(await ensureLobbyNetwork(docker, { name: n, create: false })).toMatchObject({ name: n, interContainer: true, created: false });
    await expect(ensureLobbyNetwork(docker, { name: 'host', create: false })).rejects.toThrow('the Docker network host is a host network: lobbies need a bridge network');
    await expect(ensureLobbyNetwork(docker, { name: 'none', create: false })).rejects.toThrow('the Docker network none is a null network: lobbies need a bridge network');
  });
});
