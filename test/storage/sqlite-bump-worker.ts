/**
 * A child process of sqlite-processes.test.ts: on the SQLite data dir given, raises a namespace's
 * `lobbyCountMax` by one, `times` times, each in its own transact, and prints the values it saw
 * (one JSON line).
 *
 * Usage: node --import tsx test/storage/sqlite-bump-worker.ts <data dir> <namespace> <times>
 */
import { openSqlite } from '../../src/adapters/sqlite/index.js';
import { updateNamespaceSettings } from '../../src/core/namespace.js';

const [dir = '', namespaceId = '', times = '0'] = process.argv.slice(2);
const { match, close } = openSqlite(dir);
const seen: number[] = [];
for (let i = 0; i < Number(times); i++) {
  const { result } = await match.transact((world) => {
    const settings = world.namespaces.get(namespaceId)?.settings;
    if (settings === undefined) throw new Error(`no namespace ${namespaceId}`);
    const next = updateNamespaceSettings(world, namespaceId, { ...settings, lobbyCountMax: settings.lobbyCountMax + 1 });
    return { result: settings.lobbyCountMax, decision: { world: next, effects: [], events: [], value: undefined } };
  });
  seen.push(result);
}
await close();
process.stdout.write(`${JSON.stringify(seen)}\n`);
