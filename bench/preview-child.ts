/**
 * One deploy preview in a process of its own, so its peak RSS is its own: `node preview-child.js
 * <data dir> <namespace> <now> [one-thread]` opens the SQLite database the parent recorded into,
 * previews a version that halves max players against the live one (its replays in worker threads,
 * or with `one-thread` one after the other in this thread), and prints one JSON line: the wall
 * time, the CPU time of every thread, the peak RSS, the requests replayed and the figures.
 */
import { openSqlite } from '../src/adapters/sqlite/index.js';
import { previewDeploy } from '../src/sim/preview/preview.js';
import { previewJson } from '../src/sim/preview/report.js';

const [dir, namespaceId, nowArg, mode] = process.argv.slice(2);
if (dir === undefined || namespaceId === undefined || nowArg === undefined) {
  process.stderr.write('usage: preview-child.js <data dir> <namespace> <now> [one-thread]\n');
  process.exit(2);
}

/** The live version and the new one: the same game with 8 and with 4 players a lobby. */
const benchVersion = (maxPlayers: number): unknown => ({
  matchmaker: {
    regions: { local: { tier: 'basic-1d2', idle_lobbies: { min: 2, max: 8 } } },
    max_players: maxPlayers,
    docker: { image_id: '00000000-0000-0000-0000-000000000001', ports: { game: { port: 7777, protocol: 'udp' } } },
    game_modes: { default: {} },
  },
});

const stores = openSqlite(dir, { checkpoints: 'inline' });
const started = performance.now();
const result = await previewDeploy({
  store: stores.demand, namespaceId, now: Number(nowArg), live: benchVersion(8), next: benchVersion(4),
  regions: [{ id: 'local', display_name: 'Local' }], lobbyCountMax: 32_768, prices: { 'basic-1d2': 0.06 }, seed: 1,
  threads: mode !== 'one-thread',
});
const wallMs = performance.now() - started;
await stores.close();
const usage = process.resourceUsage();
process.stdout.write(`${JSON.stringify({ wallMs, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, maxRssKb: usage.maxRSS, preview: previewJson(result) })}\n`);
