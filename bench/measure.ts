/** Time-bounded measurement loops for benchmarks: never a fixed wall time in a test, always bounded here. */

export interface Rate {
  readonly ops: number;
  readonly seconds: number;
  readonly opsPerSecond: number;
}

/**
 * Run `op` in batches until `budgetMs` has passed or `maxOps` ran (after a short warm-up), and
 * return the rate.
 */
export const rate = (op: (i: number) => void, budgetMs = 1000, maxOps = 5_000_000): Rate => {
  const warmup = 2000;
  for (let i = 0; i < warmup; i++) op(i);
  const start = performance.now();
  let ops = 0;
  const batch = 256;
  while (ops < maxOps && performance.now() - start < budgetMs) {
    for (let i = 0; i < batch; i++) op(warmup + ops + i);
    ops += batch;
  }
  const seconds = (performance.now() - start) / 1000;
  return { ops, seconds, opsPerSecond: ops / seconds };
};

/** The same for an async operation (one at a time). */
export const rateAsync = async (op: (i: number) => Promise<unknown>, budgetMs = 1000, maxOps = 1_000_000): Promise<Rate> => {
  const warmup = 20;
  for (let i = 0; i < warmup; i++) await op(i);
  const start = performance.now();
  let ops = 0;
  while (ops < maxOps && performance.now() - start < budgetMs) {
    await op(warmup + ops);
    ops++;
  }
  const seconds = (performance.now() - start) / 1000;
  return { ops, seconds, opsPerSecond: ops / seconds };
};

/** Format a number of operations per second for a table. */
export const fmtRate = (n: number): string =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(0);

/** Print rows as an aligned text table. */
export const table = (head: readonly string[], rows: readonly (readonly string[])[]): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
};

/** The word after `--name` in the arguments, if any. */
export const value = (args: readonly string[], name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

/** `--name N`: an integer in [min, max], or `fallback` when absent; throws on anything else. */
export const intArg = (args: readonly string[], name: string, fallback: number, min: number, max: number): number => {
  const raw = value(args, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${raw}`);
  return n;
};
