import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/sqlite/index.js';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../src/core/world.js';
import { matchmakerOn } from '../contracts/fakes.js';

const WORKER = new URL('./sqlite-bump-worker.ts', import.meta.url).pathname;
const ROOT = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

describe('SQLite shared by processes', () => {
  it('transacts of three processes on one file never lose an update', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tavern-sqlite-procs-'));
    try {
      const ns = randomUUID();
      const setup = openSqlite(dir);
      await matchmakerOn(setup.match).mm.addNamespace(ns, { ...DEFAULT_NAMESPACE_SETTINGS, lobbyCountMax: 0 });
      // This process keeps its cached world: it must notice the others' commits.
      await setup.match.snapshot();
      const outputs = await Promise.all([0, 1, 2].map(() => run(process.execPath, ['--import', 'tsx', WORKER, dir, ns, '150'], { cwd: ROOT })));
      const seen = outputs.flatMap((o) => JSON.parse(o.stdout) as number[]);
      expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 450 }, (_, i) => i));
      expect((await setup.match.snapshot()).namespaces.get(ns)?.settings.lobbyCountMax).toBe(450);
      await setup.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
