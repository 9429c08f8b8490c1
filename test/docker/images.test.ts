/**
 * Builds become images in the real engine and run: each of the three upload forms (docker_image,
 * oci_bundle, oci_bundle + lz4) of both test game servers is loaded through BuildImages and run
 * hardened (read-only root, tmpfs /tmp, no capabilities, uid 1000), and the game server does its
 * job: calls lobbies/ready with its token, logs on both streams, echoes on its published ports.
 */
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BuildImages } from '../../src/adapters/docker/images.js';
import { describeWithDocker, docker, dockerProblem, removeRepository } from './engine.js';
import { busyboxGameServer, nodeGameServer, type GameServerArchives } from './images.js';
import { runHardened, standInApi, type ApiCall, type TestContainer } from './run.js';
import { eventually } from '../wait.js';
import { fileSource, type FileBuild } from './sources.js';

const problem = await dockerProblem();

/** The three forms a developer uploads, as builds. */
const forms = (a: GameServerArchives): [string, FileBuild][] => [
  ['docker_image', { kind: 'docker_image', compression: 'none', path: a.dockerImage }],
  ['oci_bundle', { kind: 'oci_bundle', compression: 'none', path: a.ociBundle }],
  ['oci_bundle + lz4', { kind: 'oci_bundle', compression: 'lz4', path: a.ociBundleLz4 }],
];

/** Sends `text` over TCP and resolves with what comes back once it contains `expect`. */
const tcpExchange = (port: number, text: string, expected: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => reject(new Error(`no '${expected}' over TCP (got '${got}')`)), 10_000);
    socket.on('data', (d) => {
      got += d.toString();
      if (got.includes(expected)) {
        clearTimeout(timer);
        socket.end();
        resolve(got);
      }
    });
    socket.on('error', reject);
    socket.write(text);
  });

/** Sends a datagram (again every 200 ms until answered) and resolves with the first reply. */
const udpExchange = (port: number, text: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const send = (): void => socket.send(text, port, '127.0.0.1');
    const again = setInterval(send, 200);
    const timer = setTimeout(() => {
      clearInterval(again);
      socket.close();
      reject(new Error('no UDP echo'));
    }, 10_000);
    socket.on('message', (msg) => {
      clearInterval(again);
      clearTimeout(timer);
      socket.close();
      resolve(msg.toString());
    });
    send();
  });

const readyCall = (calls: readonly ApiCall[], token: string): ApiCall | undefined =>
  calls.find((c) => c.method === 'POST' && c.path === '/matchmaker/lobbies/ready' && c.authorization === `Bearer ${token}`);

describeWithDocker('build archives become runnable images (real engine)', problem, () => {
  const repository = `tavern-test-${randomUUID().slice(0, 8)}`;
  const files = fileSource();
  const images = new BuildImages({ docker, source: files.source, repository });
  const started: TestContainer[] = [];
  let api: Awaited<ReturnType<typeof standInApi>>;
  let busybox: GameServerArchives;
  let node: GameServerArchives;

  beforeAll(async () => {
    [busybox, node, api] = await Promise.all([busyboxGameServer(docker), nodeGameServer(docker), standInApi(docker)]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(started.map((c) => c.remove()));
    await api?.close();
    await removeRepository(repository);
  });

  const load = async (build: FileBuild): Promise<string> => {
    const id = files.add(build);
    const image = await images.ensure(id);
    expect(image).toBe(`${repository}:${id}`);
    expect(files.opens(id)).toBe(1);
    return image;
  };

  it.each([0, 1, 2])('busybox game server, form %i: loads, runs hardened as uid 1000, says ready, logs and echoes TCP, stops on SIGTERM with 0', async (form) => {
    const [name, build] = forms(busybox)[form] as [string, FileBuild];
    const image = await load(build);
    const token = `token-busybox-${form}`;
    const game = await runHardened(docker, image, { env: { RIVET_API_ENDPOINT: api.endpoint, RIVET_TOKEN: token, PORT_DEFAULT: '7777' }, ports: ['7777/tcp'] });
    started.push(game);
    await eventually(`${name}: lobbies/ready with the lobby token`, () => readyCall(api.calls, token));
    const logs = await eventually(`${name}: both log streams`, async () => {
      const l = await game.logs();
      return l.stdout.includes('listening on tcp 7777') && l.stderr.includes('stderr check') ? l : undefined;
    });
    expect(logs.stdout).toContain('lobby ready');
    expect(await tcpExchange(await game.hostPort('7777/tcp'), 'ping\n', 'ping')).toBe('ping\n');
    await game.container.stop({ t: 5 });
    expect((await game.exited()).code).toBe(0);
    expect((await game.logs()).stdout).toContain('SIGTERM received');
  }, 60_000);

  it.each([0, 1, 2])('node game server, form %i: loads, runs hardened, echoes UDP and TCP, reports a player, crashes on command', async (form) => {
    const [name, build] = forms(node)[form] as [string, FileBuild];
    const image = await load(build);
    const token = `token-node-${form}`;
    const game = await runHardened(docker, image, {
      env: { RIVET_API_ENDPOINT: api.endpoint, RIVET_TOKEN: token, PORT_GAME_UDP: '7777', PORT_GAME_TCP: '7778', GAME_UDP_LABEL: 'game-udp', GAME_TCP_LABEL: 'game-tcp' },
      ports: ['7777/udp', '7778/tcp'],
    });
    started.push(game);
    await eventually(`${name}: lobbies/ready with the lobby token`, () => readyCall(api.calls, token));
    const logs = await game.logs();
    expect(logs.stdout).toContain('game server listening: udp 7777, tcp 7778 (uid 1000, cwd /srv)');
    expect(logs.stderr).toContain('game server stderr check');
    expect(await udpExchange(await game.hostPort('7777/udp'), 'hello udp')).toBe('hello udp');
    const tcp = await game.hostPort('7778/tcp');
    expect(await tcpExchange(tcp, `connect player-${form}\n`, `connected player-${form}`)).toContain(`connect player-${form}\n`);
    const connected = api.calls.find((c) => c.path === '/matchmaker/players/connected' && c.authorization === `Bearer ${token}`);
    expect(JSON.parse(connected?.body ?? '{}')).toEqual({ player_token: `player-${form}` });
    await tcpExchange(tcp, 'crash 3\n', 'crash 3').catch(() => undefined);
    expect(await game.exited()).toEqual({ code: 3, oomKilled: false });
    expect((await game.logs()).stderr).toContain('crashing with exit code 3');
  }, 90_000);

  it('the node game server exits 0 on SIGTERM, and is OOM-killed on "oom" under its memory limit', async () => {
    const image = await load(forms(node)[2]?.[1] as FileBuild);
    const env = { RIVET_API_ENDPOINT: api.endpoint, RIVET_TOKEN: 'token-node-signals', PORT_TCP: '7778', GAME_READY: '0' };
    const polite = await runHardened(docker, image, { env, ports: ['7778/tcp'] });
    const greedy = await runHardened(docker, image, { env, ports: ['7778/tcp'] });
    started.push(polite, greedy);
    for (const game of [polite, greedy]) await eventually('listening', async () => ((await game.logs()).stdout.includes('listening') ? true : undefined));
    await polite.container.stop({ t: 10 });
    expect(await polite.exited()).toEqual({ code: 0, oomKilled: false });
    await tcpExchange(await greedy.hostPort('7778/tcp'), 'oom\n', 'oom').catch(() => undefined);
    expect(await greedy.exited()).toEqual({ code: 137, oomKilled: true });
  }, 90_000);
});
