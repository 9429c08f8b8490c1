/**
 * The `http` benchmark's figures: each server's medians over the rounds, the ratios of the
 * rounds (Tavern over Colyseus, over the bare node:http floor, and the variants' on / off), the
 * targets and whether each is met, as a table or one JSON object.
 */
import type { LoadResult } from './http-load.js';
import { table } from './measure.js';

export type Server = 'tavern' | 'tavern-no-limits' | 'tavern-no-demand' | 'bare' | 'colyseus';

export interface Run extends LoadResult {
  readonly server: Server;
  readonly round: number;
}

/** Issue 16: at 64 clients Tavern ≥ 3× Colyseus's rate and Tavern's p99 ≤ 10 ms. */
const TARGET_RATIO = 3;
const TARGET_P99_MS = 10;
/** Issue 39 §3: Tavern ≥ 50 % of the bare node:http server's rate, its p99 ≤ 2× bare's. */
const TARGET_BARE_SHARE = 0.5;
const TARGET_BARE_P99 = 2;

/** The median of some numbers (the mean of the middle two for an even count); NaN for none. */
export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** One server at one client count over the rounds: each figure's median (the max's max), errors summed. */
type Summary = Pick<Run, 'server' | 'concurrency' | 'rps' | 'p50_ms' | 'p90_ms' | 'p99_ms' | 'max_ms' | 'errors' | 'cpu_us_per_request'> & {
  readonly rounds: number;
};

const summarize = (runs: readonly Run[]): Summary => {
  const [first] = runs;
  if (first === undefined) throw new Error('no runs to summarize');
  const cpu = runs.flatMap((r) => (r.cpu_us_per_request === undefined ? [] : [r.cpu_us_per_request]));
  return {
    server: first.server,
    concurrency: first.concurrency,
    rounds: runs.length,
    rps: median(runs.map((r) => r.rps)),
    p50_ms: median(runs.map((r) => r.p50_ms)),
    p90_ms: median(runs.map((r) => r.p90_ms)),
    p99_ms: median(runs.map((r) => r.p99_ms)),
    max_ms: Math.max(...runs.map((r) => r.max_ms)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    ...(cpu.length === 0 ? {} : { cpu_us_per_request: median(cpu) }),
  };
};

/** A ratio's rounds and their median (NaN when no round has both servers). */
interface Ratio {
  readonly median: number;
  readonly rounds: readonly number[];
}

const ratioOf = (rounds: number[]): Ratio => ({ median: median(rounds), rounds });

export interface ReportOptions {
  readonly json: boolean;
  readonly clients: readonly number[];
  readonly servers: readonly Server[];
  readonly rounds: number;
  readonly settings: Readonly<Record<string, unknown>>;
}

const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-');
const rate = (n: number): string => n.toFixed(0);
const times = (r: Ratio, digits = 2): string =>
  `${Number.isFinite(r.median) ? r.median.toFixed(digits) : '-'}x (rounds: ${r.rounds.map((x) => `${x.toFixed(digits)}x`).join(', ')})`;

/**
 * Prints the runs' summary (a table on stdout, or one JSON object with `--json`).
 *
 * @example
 * report(runs, { json: false, clients: [64], servers: ['tavern', 'bare'], rounds: 3, settings: {} });
 */
export function report(runs: readonly Run[], opts: ReportOptions): void {
  const runsOf = (server: Server, c: number): Run[] => runs.filter((r) => r.server === server && r.concurrency === c);
  const at = (server: Server, c: number): Summary | undefined => {
    const of = runsOf(server, c);
    return of.length === 0 ? undefined : summarize(of);
  };
  /** Each round's `f` of `server`'s run and `base`'s at `c` clients, where both ran and it is defined. */
  const perRound = (c: number, server: Server, base: Server, f: (run: Run, other: Run) => number | undefined): Ratio =>
    ratioOf(runsOf(server, c).flatMap((t) => {
      const other = runs.find((r) => r.server === base && r.concurrency === c && r.round === t.round);
      const x = other === undefined ? undefined : f(t, other);
      return x === undefined ? [] : [x];
    }));
  const rates = (c: number, server: Server, base: Server): Ratio => perRound(c, server, base, (t, o) => t.rps / o.rps);
  /** CPU per request of `base` over `server`'s: the rate ratio on a core of its own each. */
  const cpus = (c: number, server: Server, base: Server): Ratio =>
    perRound(c, server, base, (t, o) => (o.cpu_us_per_request === undefined || t.cpu_us_per_request === undefined ? undefined : o.cpu_us_per_request / t.cpu_us_per_request));
  const p99s = (c: number, server: Server, base: Server): Ratio => perRound(c, server, base, (t, o) => t.p99_ms / o.p99_ms);

  const headline = opts.clients.includes(64) ? 64 : Math.max(...opts.clients);
  const tavern = at('tavern', headline);
  const colyseus = at('colyseus', headline);
  const bare = at('bare', headline);
  const ratio = rates(headline, 'tavern', 'colyseus');
  const bareShare = rates(headline, 'tavern', 'bare');
  const bareCpuShare = cpus(headline, 'tavern', 'bare');
  const bareP99 = p99s(headline, 'tavern', 'bare');
  const limits = { rate: rates(headline, 'tavern', 'tavern-no-limits'), cpu: cpus(headline, 'tavern', 'tavern-no-limits') };
  const demand = { rate: rates(headline, 'tavern', 'tavern-no-demand'), cpu: cpus(headline, 'tavern', 'tavern-no-demand') };
  const targets = {
    ratio_ok: ratio.median >= TARGET_RATIO,
    p99_ok: tavern !== undefined && tavern.p99_ms <= TARGET_P99_MS,
    ...(bare === undefined ? {} : { bare_share_ok: bareShare.median >= TARGET_BARE_SHARE, bare_p99_ok: bareP99.median <= TARGET_BARE_P99 }),
  };
  const num = (n: number | undefined): number | null => (n === undefined || !Number.isFinite(n) ? null : n);
  const pair = (name: string, r: Ratio): Record<string, unknown> => (r.rounds.length === 0 ? {} : { [name]: r.median, [`${name}s`]: r.rounds });

  if (opts.json) {
    process.stdout.write(`${JSON.stringify({
      bench: 'http',
      clients: headline,
      tavern_rps: num(tavern?.rps),
      colyseus_rps: num(colyseus?.rps),
      tavern_p99_ms: num(tavern?.p99_ms),
      tavern_p50_ms: num(tavern?.p50_ms),
      colyseus_p50_ms: num(colyseus?.p50_ms),
      colyseus_p99_ms: num(colyseus?.p99_ms),
      ratio: num(ratio.median),
      ratios: ratio.rounds,
      ...(bare === undefined ? {} : { bare_rps: num(bare.rps), bare_p50_ms: num(bare.p50_ms), bare_p99_ms: num(bare.p99_ms) }),
      ...pair('bare_share', bareShare),
      ...pair('bare_cpu_share', bareCpuShare),
      ...pair('bare_p99_ratio', bareP99),
      ...pair('limits_ratio', limits.rate),
      ...pair('limits_cpu_ratio', limits.cpu),
      ...pair('demand_ratio', demand.rate),
      ...pair('demand_cpu_ratio', demand.cpu),
      rounds: opts.rounds,
      targets: { ratio: TARGET_RATIO, p99_ms: TARGET_P99_MS, bare_share: TARGET_BARE_SHARE, bare_p99_ratio: TARGET_BARE_P99, ...targets },
      settings: opts.settings,
      runs: runs.map(({ errorSample: _sample, ...r }) => r),
    })}\n`);
    return;
  }
  const summaries = opts.clients.flatMap((c) => opts.servers.flatMap((server) => at(server, c) ?? []));
  const rows = summaries.map((r) => [
    r.server, String(r.concurrency), rate(r.rps), ms(r.p50_ms), ms(r.p90_ms), ms(r.p99_ms), ms(r.max_ms), String(r.errors),
    r.cpu_us_per_request === undefined ? '-' : r.cpu_us_per_request.toFixed(0),
  ]);
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  out(`medians over ${opts.rounds} round${opts.rounds === 1 ? '' : 's'}`);
  out(table(['server', 'clients', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'errors', 'server cpu µs/req'], rows));
  for (const c of opts.clients) {
    const clients = `${c} client${c === 1 ? '' : 's'}`;
    const vsColyseus = rates(c, 'tavern', 'colyseus');
    if (vsColyseus.rounds.length > 0) out(`tavern / colyseus at ${clients}: ${times(vsColyseus)}`);
    const vsBare = rates(c, 'tavern', 'bare');
    if (vsBare.rounds.length > 0) {
      out(`tavern / bare at ${clients}: rate ${times(vsBare)}`);
      out(`  CPU per request bare / tavern: ${times(cpus(c, 'tavern', 'bare'))}; p99 tavern / bare: ${times(p99s(c, 'tavern', 'bare'))}`);
    }
  }
  const onOff = (what: string, r: { readonly rate: Ratio; readonly cpu: Ratio }): void => {
    if (r.rate.rounds.length === 0) return;
    out(`tavern with ${what} on / off at ${headline} clients: ${times(r.rate, 3)}`);
    if (r.cpu.rounds.length > 0) out(`  CPU per request off / on (the rate on a core of its own): ${times(r.cpu, 3)}`);
  };
  onOff('rate limits', limits);
  onOff('demand recording', demand);
  const met = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  out(`target at ${headline} clients: >= ${TARGET_RATIO}x colyseus (${fixed(ratio.median, 2)}x: ${met(targets.ratio_ok)}), ` +
    `tavern p99 <= ${TARGET_P99_MS} ms (${ms(tavern?.p99_ms ?? NaN)} ms: ${met(targets.p99_ok)})`);
  if (targets.bare_share_ok !== undefined && targets.bare_p99_ok !== undefined) {
    out(`target at ${headline} clients: >= ${TARGET_BARE_SHARE * 100} % of bare's rate (${fixed(100 * bareShare.median, 1)} %: ${met(targets.bare_share_ok)}), ` +
      `p99 <= ${TARGET_BARE_P99}x bare's (${fixed(bareP99.median, 2)}x: ${met(targets.bare_p99_ok)})`);
  }
}
