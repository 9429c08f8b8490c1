/**
 * Waiting on something another process does (a server, HAProxy, a container, S3): poll a
 * condition with a deadline, never a fixed sleep. In-process waits await the event itself (or use
 * the server harness's manual timers and `until`); this is for the other side of a socket.
 */
import { setTimeout as pause } from 'node:timers/promises';

export interface EventuallyOptions {
  /** Give up (throw) after this long; default 20 s. */
  readonly timeoutMs?: number;
  /** Look again this often; default 50 ms. */
  readonly everyMs?: number;
}

/**
 * Resolves with the first value `check` returns that is neither `undefined` nor `false`, looking
 * every `everyMs`; throws after `timeoutMs` naming `what` (a function is called then, so the message
 * can say what was seen last).
 *
 * @example
 * await eventually('the route is gone', async () => (await get(port, host)).status === 404, { timeoutMs: 5_000 });
 * const logs = await eventually('both log streams', async () => ((await c.logs()).stderr === '' ? undefined : await c.logs()));
 */
export async function eventually<T>(what: string | (() => string), check: () => T | undefined | false | Promise<T | undefined | false>, options: EventuallyOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await pause(options.everyMs ?? 50);
  }
}
