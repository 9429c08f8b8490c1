/**
 * What every decision receives from outside instead of reading it: the time (epoch milliseconds)
 * and a seed for its random draws. Fresh ids travel in the commands themselves.
 *
 * @example
 * find(world, command, { now: clock.now(), seed: rng.u32() })
 */
export interface Ctx {
  readonly now: number;
  readonly seed: number;
}
