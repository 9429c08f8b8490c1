/**
 * How much Tavern keeps of lobbies that stopped (listed by `tavern lobbies list` and the
 * dashboard, and whose logs stay readable while kept): one policy, used by the service that keeps
 * them and by every store that prunes them.
 */
import { milliseconds } from 'date-fns';

/** Stops kept per namespace, of each kind: failures (crash, failed start, ready timeout) and the others, so a busy namespace's idle stops never push a crash out. */
export const STOPPED_PER_NAMESPACE = 50;
/** How long a stop is kept. */
export const STOPPED_MAX_AGE_MS = milliseconds({ hours: 24 });
/** The newest log lines kept with a stop (all streams together). */
export const STOPPED_LOG_LINES = 20;

/** A log line with its stream, as kept with a stop. */
export interface TimedLine<S extends string> {
  readonly at: number;
  readonly stream: S;
  readonly line: string;
}

/**
 * The newest `max` lines of several streams, in time order (a tie keeps the order of `streams`,
 * then of each stream).
 *
 * @example
 * lastLines([['std_out', [{ at: 1, line: 'a' }]], ['tavern', [{ at: 2, line: 'b' }]]], 1); // [{ at: 2, stream: 'tavern', line: 'b' }]
 */
export const lastLines = <S extends string>(
  streams: readonly (readonly [S, readonly { readonly at: number; readonly line: string }[]])[],
  max: number,
): TimedLine<S>[] => {
  if (max < 1) return [];
  return streams
    .flatMap(([stream, lines], s) => lines.map((l, i) => ({ at: l.at, stream, line: l.line, s, i })))
    .sort((a, b) => (a.at - b.at) || (a.s - b.s) || (a.i - b.i))
    .slice(-Math.floor(max))
    .map(({ at, stream, line }) => ({ at, stream, line }));
};
