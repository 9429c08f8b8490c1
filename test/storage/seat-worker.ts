/**
 * A child process of seats.test.ts: opens the PostgreSQL schema given, prints `ready`, waits for
 * `go` on stdin, then fires its finds all at once (no auto-create) and prints one JSON line:
 * the seats it got and the error codes of the others.
 *
 * Usage: node --import tsx test/storage/seat-worker.ts <url> <schema> <namespace> <finds> <tag>
 */
import { once } from 'node:events';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { matchmakerOn } from '../contracts/fakes.js';

const [url = '', schema = '', namespaceId = '', finds = '0', tag = '0'] = process.argv.slice(2);
const stores = await openPostgres(url, { schema, maxConnections: 4 });
const { mm } = matchmakerOn(stores.match);
process.stdout.write('ready\n');
await once(process.stdin, 'data');

const outcomes = await Promise.all(
  Array.from({ length: Number(finds) }, (_, i) =>
    mm.find({ namespaceId, gameModes: ['default'], preventAutoCreate: true, client: { ip: `10.${tag}.${i >> 8}.${i & 255}` } }),
  ),
);
const seats = outcomes.flatMap((o) => (o.ok ? [{ playerId: o.seat.playerIds[0], lobbyId: o.seat.lobbyId, count: o.lobby.playerCount }] : []));
const errors = outcomes.flatMap((o) => (o.ok ? [] : [o.error.code]));
process.stdout.write(`${JSON.stringify({ seats, errors })}\n`);
await stores.close();
process.stdin.destroy();
