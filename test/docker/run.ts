/**
 * Running test containers the way Tavern runs lobbies (hardened: read-only root filesystem, a
 * tmpfs /tmp, every capability dropped, no-new-privileges, pids and memory limits, ports published
 * on 127.0.0.1 only), a stand-in matchmaker API the game servers call from inside their
 * containers, and reading containers' output through the Engine API. Test helpers.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Dockerode from 'dockerode';
import { bridgeGateway as engineBridgeGateway } from '../../src/adapters/docker/engine.js';

/** A request a game server made to the stand-in API. */
export interface ApiCall {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

/** The address containers on the default bridge reach the host at (the product's own lookup). */
export const bridgeGateway = async (docker: Dockerode): Promise<string> => {
  const gateway = await engineBridgeGateway(docker);
  if (gateway === undefined) throw new Error('the bridge network has no IPv4 gateway');
  return gateway;
};

/**
 * A stand-in for Tavern's matchmaker API on the bridge gateway: answers 200 `{}` to every POST
 * and records it.
 *
 * @example
 * const api = await standInApi(docker); // api.endpoint: 'http://172.17.0.1:39211'
 */
export const standInApi = async (docker: Dockerode): Promise<{ endpoint: string; calls: ApiCall[]; close: () => Promise<void> }> => {
  const host = await bridgeGateway(docker);
  const calls: ApiCall[] = [];
  const body = async (req: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString();
  };
  const server = createServer((req, res) => {
    void body(req).then((text) => {
      calls.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body: text });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://${host}:${port}`, calls, close: () => new Promise((resolve) => server.close(() => resolve())) };
};

/** A container's stdout and stderr, split from the engine's multiplexed log stream. */
export const demux = (raw: Buffer): { stdout: string; stderr: string } => {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  for (let at = 0; at + 8 <= raw.length;) {
    const size = raw.readUInt32BE(at + 4);
    (raw[at] === 2 ? err : out).push(raw.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return { stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
};

/** What to run: env, extra command arguments, ports to publish (`7777/tcp`), the user. */
export interface RunOptions {
  readonly env?: Record<string, string>;
  readonly cmd?: readonly string[];
  readonly ports?: readonly string[];
  readonly user?: string;
}

/** A running test container. */
export interface TestContainer {
  readonly container: Dockerode.Container;
  /** The 127.0.0.1 port a container port (`7777/udp`) is published on. */
  hostPort(port: string): Promise<number>;
  logs(): Promise<{ stdout: string; stderr: string }>;
  /** Waits for it to exit; its exit code and whether the kernel's OOM killer ended it. */
  exited(): Promise<{ code: number; oomKilled: boolean }>;
  remove(): Promise<void>;
}

/** Label on every container these helpers start, so a test run can remove its leftovers. */
export const TEST_LABEL = 'tavern.test';

/**
 * Creates and starts a hardened container of `image`.
 *
 * @example
 * const game = await runHardened(docker, 'tavern-build:…', { env: { PORT_DEFAULT: '7777' }, ports: ['7777/tcp'] });
 */
export const runHardened = async (docker: Dockerode, image: string, options: RunOptions = {}): Promise<TestContainer> => {
  const ports = options.ports ?? [];
  const container = await docker.createContainer({
    Image: image,
    ...(options.cmd === undefined ? {} : { Cmd: [...options.cmd] }),
    ...(options.user === undefined ? {} : { User: options.user }),
    Env: Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`),
    Labels: { [TEST_LABEL]: 'images' },
    ExposedPorts: Object.fromEntries(ports.map((p) => [p, {}])),
    HostConfig: {
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=16m' },
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: 64,
      Memory: 256 * 1024 * 1024,
      MemorySwap: 256 * 1024 * 1024,
      PortBindings: Object.fromEntries(ports.map((p) => [p, [{ HostIp: '127.0.0.1', HostPort: '' }]])),
    },
  });
  await container.start();
  return {
    container,
    async hostPort(port) {
      const info = await container.inspect();
      const binding = info.NetworkSettings.Ports[port]?.[0]?.HostPort;
      if (binding === undefined) throw new Error(`${port} is not published`);
      return Number(binding);
    },
    async logs() {
      return demux(await container.logs({ stdout: true, stderr: true, follow: false }));
    },
    async exited() {
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      const info = await container.inspect();
      return { code: StatusCode, oomKilled: info.State.OOMKilled };
    },
    async remove() {
      await container.remove({ force: true }).catch(() => undefined);
    },
  };
};
