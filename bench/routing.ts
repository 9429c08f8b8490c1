/**
 * `npm run bench -- routing`: find+seat decisions per second at 100, 1k, 10k and 100k open lobbies,
 * against a naive linear scan and Colyseus's own matchmaker (in-memory driver) in the same run.
 *
 * - choose: the routing choice alone (read-only: which lobby, or "create one").
 * - commit: the choice committed: seat reserved, a new immutable world (creating a lobby when none fits).
 */
import type { Admission } from '../src/core/admission/gate.js';
import { find, routeFind } from '../src/core/matchmaker/find.js';
import type { Seat } from '../src/core/matchmaker/seat.js';
import type { World } from '../src/core/world.js';
import { fmtRate, rate, rateAsync, table } from './measure.js';
import { createColyseusPeer } from './colyseus.js';
import { buildWorld, CLOSED_SHARE, findCommands, FULL_SHARE, MODES, naiveChoose, REGIONS, SEATS } from './routing-world.js';

interface SizeResult {
  readonly choose_ops_s: number;
  readonly commit_ops_s: number;
  readonly naive_ops_s: number;
  readonly naive_commit_ops_s: number;
  readonly colyseus_ops_s: number;
  readonly colyseus_commit_ops_s: number;
  readonly build_s: number;
}

const DEFAULT_SIZES = [100, 1_000, 10_000, 100_000];

const measureTavern = (n: number): Omit<SizeResult, 'colyseus_ops_s' | 'colyseus_commit_ops_s'> => {
  const t0 = performance.now();
  const { world, flat } = buildWorld(n);
  const build_s = (performance.now() - t0) / 1000;
  const cmds = findCommands();
  const ctx = { now: 1, seed: 7 };
  const choose = rate((i) => {
    const r = routeFind(world, cmds[i % 12] as (typeof cmds)[number], ctx);
    if (r.kind === 'rejected') throw new Error(r.error.code);
  });
  let current: World = world;
  const commit = rate((i) => {
    const base = cmds[i % 12] as (typeof cmds)[number];
    const a: Admission<Seat> = find(current, { ...base, playerIds: [`p${i}`], newLobbyId: `n${i}` }, { now: 1, seed: i });
    if (a.kind !== 'admitted') throw new Error(a.kind === 'rejected' ? a.error.code : a.kind);
    current = a.decision.world;
  }, 1000, 400_000);
  const naive = rate((i) => {
    naiveChoose(flat, REGIONS[i % 4] as string, MODES[Math.floor(i / 4) % 3] as string);
  }, 1000);
  const naiveCommit = rate((i) => {
    const region = REGIONS[i % 4] as string;
    const gm = MODES[Math.floor(i / 4) % 3] as string;
    const l = naiveChoose(flat, region, gm);
    if (l) l.players++;
    else flat.push({ id: `n${i}`, region, mode: gm, closed: false, players: 1 });
  }, 1000);
  return {
    choose_ops_s: choose.opsPerSecond,
    commit_ops_s: commit.opsPerSecond,
    naive_ops_s: naive.opsPerSecond,
    naive_commit_ops_s: naiveCommit.opsPerSecond,
    build_s,
  };
};

const measureColyseus = async (n: number): Promise<Pick<SizeResult, 'colyseus_ops_s' | 'colyseus_commit_ops_s'>> => {
  const roomNames = REGIONS.flatMap((r) => MODES.map((m) => `${r}-${m}`));
  const options = { rooms: n, maxClients: SEATS, fullShare: FULL_SHARE, lockedShare: CLOSED_SHARE, roomNames, deadlineMs: 120_000 };
  let peer = await createColyseusPeer(options);
  const choose = await rateAsync(() => peer.choose(), 1000, 200_000);
  await peer.close();
  peer = await createColyseusPeer(options);
  const commit = await rateAsync(() => peer.commit(), 1000, 200_000);
  await peer.close();
  return { colyseus_ops_s: choose.opsPerSecond, colyseus_commit_ops_s: commit.opsPerSecond };
};

const parseSizes = (args: readonly string[]): number[] => {
  const i = args.indexOf('--sizes');
  const list = i >= 0 ? args[i + 1] : undefined;
  return list ? list.split(',').map(Number) : DEFAULT_SIZES;
};

export const routingBench = async (args: readonly string[]): Promise<void> => {
  const json = args.includes('--json');
  const sizes = parseSizes(args);
  const results: Record<string, SizeResult> = {};
  for (const n of sizes) {
    const tavern = measureTavern(n);
    const colyseus = await measureColyseus(n);
    results[String(n)] = { ...tavern, ...colyseus };
    if (!json) process.stderr.write(`measured ${n} lobbies\n`);
  }
  const at = (n: number) => results[String(n)];
  const small = at(1_000);
  const large = at(100_000);
  const scaling = {
    choose_cost_100k_over_1k: small && large ? small.choose_ops_s / large.choose_ops_s : null,
    commit_cost_100k_over_1k: small && large ? small.commit_ops_s / large.commit_ops_s : null,
  };
  const ratios = Object.fromEntries(
    Object.entries(results).map(([n, r]) => [
      n,
      {
        choose_vs_colyseus: r.choose_ops_s / r.colyseus_ops_s,
        commit_vs_colyseus: r.commit_ops_s / r.colyseus_commit_ops_s,
        choose_vs_naive: r.choose_ops_s / r.naive_ops_s,
      },
    ]),
  );
  if (json) {
    process.stdout.write(`${JSON.stringify({ bench: 'routing', sizes: results, ratios, scaling })}\n`);
    return;
  }
  const rows = Object.entries(results).map(([n, r]) => [
    n,
    fmtRate(r.choose_ops_s),
    fmtRate(r.commit_ops_s),
    fmtRate(r.naive_ops_s),
    fmtRate(r.naive_commit_ops_s),
    fmtRate(r.colyseus_ops_s),
    fmtRate(r.colyseus_commit_ops_s),
    `${(r.choose_ops_s / r.colyseus_ops_s).toFixed(0)}x`,
    `${(r.commit_ops_s / r.colyseus_commit_ops_s).toFixed(0)}x`,
  ]);
  process.stdout.write(
    `${table(['lobbies', 'choose/s', 'commit/s', 'naive/s', 'naive commit/s', 'colyseus/s', 'colyseus commit/s', 'choose vs col.', 'commit vs col.'], rows)}\n`,
  );
  if (scaling.choose_cost_100k_over_1k !== null && scaling.commit_cost_100k_over_1k !== null) {
    process.stdout.write(
      `cost per decision at 100k / at 1k: choose ${scaling.choose_cost_100k_over_1k.toFixed(2)}x, commit ${scaling.commit_cost_100k_over_1k.toFixed(2)}x (target <= 2x)\n`,
    );
  }
};
