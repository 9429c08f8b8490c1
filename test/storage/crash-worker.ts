/**
 * A child process of crash.test.ts: finds seats in a loop on the SQLite data dir given (a few in
 * flight at once, readying lobbies now and then) and prints `seat <player> <lobby>` for each seat
 * once its find has resolved, i.e. once it is committed. It runs until it is killed.
 *
 * Usage: node --import tsx test/storage/crash-worker.ts <data dir> <namespace>
 */
import { openSqlite } from '../../src/adapters/sqlite/index.js';
import { matchmakerOn } from '../contracts/fakes.js';

const [dir = '', namespaceId = ''] = process.argv.slice(2);
const { match } = openSqlite(dir);
const { mm } = matchmakerOn(match);
let n = 0;

const loop = async (lane: number): Promise<never> => {
  for (;;) {
    const i = n++;
    const outcome = await mm.find({ namespaceId, gameModes: ['default'], client: { ip: `10.${lane}.${(i >> 8) & 255}.${i & 255}` } });
    if (!outcome.ok) throw new Error(outcome.error.code);
    process.stdout.write(`seat ${outcome.seat.playerIds[0] ?? ''} ${outcome.seat.lobbyId}\n`);
    if (i % 7 === 0) await mm.lobbyReady({ namespaceId, lobbyId: outcome.seat.lobbyId });
  }
};

await Promise.all([0, 1, 2, 3].map(loop));
