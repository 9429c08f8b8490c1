import type { Hosting } from './hosting.js';

/**
 * What every decision receives from outside instead of reading it: the time (epoch milliseconds),
 * a seed for its random draws, and where lobbies can start (`hosting`: the runtime's reach and
 * this instance's start back-off; absent: anywhere, no back-off). Fresh ids travel in the commands
 * themselves.
 *
 * @example
 * find(world, command, { now: clock.now(), seed: rng.u32(), hosting })
 */
export interface Ctx {
  readonly now: number;
  readonly seed: number;
  readonly hosting?: Hosting;
}
