/** Durations as people write them on a command line or in an environment variable. */

const UNITS: Readonly<Record<string, number>> = Object.freeze({ ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 });

/**
 * `90s`, `15m`, `24h`, `7d`, `500ms` (a whole number and a unit) in milliseconds; undefined for
 * anything else (no unit, a fraction, a negative or zero amount).
 *
 * @example
 * parseDuration('24h'); // 86_400_000
 * parseDuration('1.5h'); // undefined
 */
export function parseDuration(text: string): number | undefined {
  const m = /^([1-9][0-9]{0,9})(ms|s|m|h|d)$/.exec(text.trim());
  if (m === null) return undefined;
  return Number(m[1]) * (UNITS[m[2] as string] as number);
}
