/** Plain-text output of the cloud commands: aligned tables and short ages. */

/**
 * Rows padded into columns two spaces apart (trailing spaces trimmed).
 *
 * @example
 * table([['ID', 'NAME'], ['1', 'arena']]); // ['ID  NAME', '1   arena']
 */
export const table = (rows: readonly (readonly string[])[]): string[] => {
  const widths = rows.reduce<number[]>((w, r) => r.map((c, i) => Math.max(w[i] ?? 0, c.length)), []);
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
};

/**
 * A duration in ms, short: seconds under 2 min, minutes under 2 h, then hours.
 *
 * @example
 * duration(95_000); // '95s'
 */
export const duration = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
};

/**
 * How long ago an RFC 3339 time was, short ({@link duration}).
 *
 * @example
 * age('2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:01:00Z')); // '60s'
 */
export const age = (since: string, now: number): string => duration(now - Date.parse(since));
