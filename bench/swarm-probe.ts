/**
 * What the `swarm` benchmark measures with: the first answer from a lobby's TCP port, when each
 * call the Swarm runtime makes to the manager returns (to split a start into its steps), and
 * Tavern's live heap after a full collection.
 */
import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type Dockerode from 'dockerode';

const answers = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 }, () => socket.write('ping\n'));
    socket.once('data', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });

/**
 * Seconds from `t0` until `host` answers on `port` (tried every 20 ms, at most 60 s). Call it once
 * the lobby's task runs: a connection tried while its node still sets up the port's forwarding
 * hangs until TCP sends its SYN again a second later, so a probe begun at create measures that
 * retry, not the lobby.
 *
 * @example
 * const s = await firstAnswer(t0, '10.77.0.11', 27001);
 */
export const firstAnswer = async (t0: number, host: string, port: number): Promise<number> => {
  for (;;) {
    if (await answers(host, port)) return (performance.now() - t0) / 1000;
    if (performance.now() - t0 > 60_000) throw new Error(`nothing answered on ${host}:${port} within 60 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** How many times each manager call was made, and when (ms, `performance.now()`) the last one returned. */
export class Calls {
  readonly #count = new Map<string, number>();
  readonly #lastEnd = new Map<string, number>();

  note(name: string, call: unknown): void {
    this.#count.set(name, (this.#count.get(name) ?? 0) + 1);
    if (call instanceof Promise) void call.then(() => this.#lastEnd.set(name, performance.now()), () => undefined);
  }

  count(name: string): number {
    return this.#count.get(name) ?? 0;
  }

  /** When the last `name` call returned, in ms since `t0` (NaN when none returned since `t0`). */
  since(name: string, t0: number): number {
    const end = this.#lastEnd.get(name);
    return end === undefined || end < t0 ? NaN : end - t0;
  }
}

/**
 * `docker`, with the calls `nameOf` names (by method and arguments) counted and timed in `calls`.
 *
 * @example
 * const manager = timed(cluster.manager.docker, calls, (method) => (method === 'createService' ? method : undefined));
 */
export const timed = (docker: Dockerode, calls: Calls, nameOf: (method: string, args: readonly unknown[]) => string | undefined): Dockerode =>
  new Proxy(docker, {
    get(target, method, receiver) {
      const value: unknown = Reflect.get(target, method, receiver);
      if (typeof value !== 'function' || typeof method !== 'string') return value;
      return (...args: unknown[]): unknown => {
        const call: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        const name = nameOf(method, args);
        if (name !== undefined) calls.note(name, call);
        return call;
      };
    },
  });

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** This process's live heap in MB after a full collection. */
export const liveHeapMb = (): number => {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
