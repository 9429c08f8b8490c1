/**
 * Histories under faults (issue 20, item 11): clients find, join, connect, disconnect and close
 * over HTTP while a real server process is `kill -9`ed at random moments and started again, 20
 * times per store: SQLite here, PostgreSQL and two servers on one PostgreSQL schema in
 * chaos-postgres.test.ts (a file of its own, so the runs go side by side). After every kill the
 * committed world holds together; after the run every acknowledged answer shows in the store,
 * nothing refused or never sent does, and nothing is duplicated, over capacity, on a port held
 * twice or seated in a stopped lobby (`bench/chaos-check.ts`). `npm run bench -- chaos` runs 200
 * restarts per store.
 */
import { describe, it } from 'vitest';
import { chaos, expectSound } from './chaos-harness.js';

describe('chaos: kill -9 at random moments, 20 restarts', () => {
  it('SQLite', async () => expectSound(await chaos('sqlite')), 180_000);
});
