/**
 * The deploy preview's figures: what one replay of the recorded demand came to, as named numbers a
 * table shows and a gate (`gate.ts`) holds, and the change from the live version's to the new one's.
 * Names are snake_case (the CLI's and the JSON's); a per-region or per-reason figure is
 * `<figure>.<name>` (`peak_lobbies.eu`, `refused.MATCHMAKER_LOBBY_FULL`).
 */
import type { ResolvedVersion } from '../../core/config/types.js';
import type { RunResult } from '../world/run.js';

/** How a figure reads and how its change is given: relative (%), or in percentage points for a share. */
export type FigureKind = 'count' | 'ms' | 'hours' | 'share' | 'money';

/** The figures every preview has, in the table's order (per-region and per-reason ones follow their parent). */
export const FIGURES: Readonly<Record<string, { readonly label: string; readonly kind: FigureKind }>> = Object.freeze({
  players: { label: 'players arrived', kind: 'count' },
  seated: { label: 'players seated', kind: 'count' },
  refused: { label: 'refused (% of players)', kind: 'share' },
  wait_p50: { label: 'time to a ready seat p50', kind: 'ms' },
  wait_p95: { label: 'time to a ready seat p95', kind: 'ms' },
  wait_p99: { label: 'time to a ready seat p99', kind: 'ms' },
  fill: { label: 'lobby fill (mean, %)', kind: 'share' },
  lobbies: { label: 'lobbies created', kind: 'count' },
  lobby_hours: { label: 'lobby-hours', kind: 'hours' },
  idle_lobby_hours: { label: 'idle lobby-hours', kind: 'hours' },
  cost: { label: 'cost (tier prices)', kind: 'money' },
  idle_cost: { label: 'idle cost', kind: 'money' },
  peak_lobbies: { label: 'peak lobbies', kind: 'count' },
  peak_ports: { label: 'peak ports', kind: 'count' },
});

/** The figures a `<figure>.<name>` may refine: by refusal code, or by region. */
export const SUB_FIGURES: ReadonlySet<string> = new Set(['refused', 'peak_lobbies', 'peak_ports']);

/** One figure of a preview. */
export interface FigureRow {
  readonly name: string;
  readonly label: string;
  readonly kind: FigureKind;
  readonly live: number;
  readonly next: number;
  /** `(next − live) / live` in percent (`null` when live is 0 and next is not: no ratio to give). */
  readonly changePct: number | null;
  /** `next − live`, in the figure's unit (percentage points for a share). */
  readonly delta: number;
}

/** A run's figures by name (refusals by code as counts, per-region peaks). */
export type Figures = Readonly<Record<string, number>>;

/** Operator prices per lobby-hour by tier (`TAVERN_TIER_PRICES`). */
export type TierPrices = Readonly<Record<string, number>>;

const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** The cost of a run's lobby-hours at the tiers' prices: each game mode's hours in a region at the tier it runs there. */
function costs(run: RunResult, version: ResolvedVersion, prices: TierPrices): { cost: number; idleCost: number; unpriced: string[] } {
  let cost = 0;
  let idleCost = 0;
  const unpriced = new Set<string>();
  for (const [mode, regions] of Object.entries(run.breakdown.gameModes)) {
    for (const [region, g] of Object.entries(regions)) {
      const tier = version.gameModes.find((m) => m.name === mode)?.regions.find((r) => r.name === region)?.tier;
      const price = tier === undefined ? undefined : prices[tier];
      if (price === undefined) {
        unpriced.add(tier ?? `${mode} in ${region}`);
        continue;
      }
      cost += g.lobbyHours * price;
      idleCost += g.idleLobbyHours * price;
    }
  }
  return { cost: round(cost, 2), idleCost: round(idleCost, 2), unpriced: [...unpriced] };
}

/**
 * A run's figures (cost only with prices; `unpriced` names the tiers without one).
 *
 * @example
 * const { figures } = figuresOf(run, scenario.resolved, { 'basic-1d1': 0.1 });
 * figures['wait_p95']; // ms
 */
export function figuresOf(run: RunResult, version: ResolvedVersion, prices: TierPrices | undefined): { figures: Figures; unpriced: readonly string[] } {
  const m = run.metrics;
  const out: Record<string, number> = {
    players: m.arrivals.players,
    seated: m.served,
    refused: m.arrivals.players === 0 ? 0 : round((100 * m.rejected) / m.arrivals.players, 3),
    wait_p50: Number.isNaN(m.timeToReadyMs.p50) ? 0 : m.timeToReadyMs.p50,
    wait_p95: Number.isNaN(m.timeToReadyMs.p95) ? 0 : m.timeToReadyMs.p95,
    wait_p99: Number.isNaN(m.timeToReadyMs.p99) ? 0 : m.timeToReadyMs.p99,
    fill: round(100 * m.fillRatio, 1),
    lobbies: m.lobbies.created,
    lobby_hours: m.lobbyHours,
    idle_lobby_hours: m.idleLobbyHours,
  };
  let unpriced: readonly string[] = [];
  if (prices !== undefined) {
    const c = costs(run, version, prices);
    out['cost'] = c.cost;
    out['idle_cost'] = c.idleCost;
    unpriced = c.unpriced;
  }
  out['peak_lobbies'] = m.lobbies.peakActive;
  out['peak_ports'] = m.peakPortsInUse;
  for (const [code, n] of Object.entries(m.rejections)) out[`refused.${code}`] = n;
  for (const [region, g] of Object.entries(run.breakdown.regions)) {
    out[`peak_lobbies.${region}`] = g.peakLobbies;
    out[`peak_ports.${region}`] = g.peakPorts;
  }
  return { figures: out, unpriced };
}

/** The parent figure of a name (`peak_lobbies.eu` → `peak_lobbies`). */
export const parentOf = (name: string): string => name.split('.')[0] ?? name;

/** A figure's label and kind; a refusal by code counts players. */
export function describeFigure(name: string): { label: string; kind: FigureKind } | undefined {
  const known = FIGURES[name];
  if (known !== undefined) return known;
  const parent = parentOf(name);
  const sub = name.slice(parent.length + 1);
  if (!SUB_FIGURES.has(parent) || sub === '') return undefined;
  return parent === 'refused' ? { label: `refused ${sub} (players)`, kind: 'count' } : { label: `${FIGURES[parent]?.label ?? parent} in ${sub}`, kind: 'count' };
}

/**
 * Live and new side by side, in the table's order: every figure of either run (one the other lacks
 * is 0 there).
 *
 * @example
 * compareFigures(live, next).find((r) => r.name === 'lobbies')?.changePct; // 12.5
 */
export function compareFigures(live: Figures, next: Figures): FigureRow[] {
  const names = [...new Set([...Object.keys(live), ...Object.keys(next)])];
  const order = Object.keys(FIGURES);
  const rank = (name: string): number => order.indexOf(parentOf(name)) * 2 + (name.includes('.') ? 1 : 0);
  names.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return names.flatMap((name) => {
    const d = describeFigure(name);
    if (d === undefined) return [];
    const a = live[name] ?? 0;
    const b = next[name] ?? 0;
    const changePct = a === 0 ? (b === 0 ? 0 : null) : round((100 * (b - a)) / a, 1);
    return [{ name, label: d.label, kind: d.kind, live: a, next: b, changePct, delta: round(b - a, 3) }];
  });
}
