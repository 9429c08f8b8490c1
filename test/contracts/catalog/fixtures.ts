/**
 * What the catalog's contract suites share: the store pair under test, the records they write,
 * and {@link contractSuite}, which opens a fresh pair for each test and closes it after.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe } from 'vitest';
import { DEFAULT_NAMESPACE_SETTINGS } from '../../../src/core/world.js';
import type { GameRecord, GameStore, NamespaceRecord, NamespaceStore, UploadRecord } from '../../../src/io/catalog.js';

/** A fresh, empty store, and a second store on the same database (another process's view). */
export interface UnderTest<S> {
  readonly catalog: S;
  readonly twin: S;
  close(): Promise<void>;
}

export const game = (over: Partial<GameRecord> = {}): GameRecord => ({
  id: randomUUID(),
  nameId: `game-${randomUUID().slice(0, 8)}`,
  displayName: 'A game',
  developerGroupId: randomUUID(),
  createdAt: 1_000,
  ...over,
});

export const namespace = (gameId: string, over: Partial<NamespaceRecord> = {}): NamespaceRecord => ({
  id: randomUUID(),
  gameId,
  nameId: `ns-${randomUUID().slice(0, 8)}`,
  displayName: 'Production',
  versionId: randomUUID(),
  createdAt: 2_000,
  settings: DEFAULT_NAMESPACE_SETTINGS,
  cdn: { authType: 'none', authUsers: [], enableDomainPublicAuth: false },
  domains: [],
  ...over,
});

export const upload = (gameId: string, over: Partial<UploadRecord> = {}): UploadRecord => ({
  id: randomUUID(),
  gameId,
  kind: 'build',
  files: [{ path: 'image.tar', contentLength: 1024, contentType: 'application/x-tar', parts: 1 }, { path: 'b/c.bin', contentLength: 7, parts: 3 }],
  createdAt: 3_000,
  expiresAt: 4_000,
  ...over,
});

/** A game and a namespace of it, created in `catalog`: the namespace. */
export const createdNamespace = async (catalog: GameStore & NamespaceStore): Promise<NamespaceRecord> => {
  const g = game();
  await catalog.createGame(g);
  const ns = namespace(g.id);
  await catalog.createNamespace(ns);
  return ns;
};

/** A later turn of the event loop: the SQLite catalog looks for other connections' commits once per turn. */
export const nextTurn = (): Promise<unknown> => new Promise((resolve) => setImmediate(resolve));

/**
 * Registers one port's contract: `tests` registers its `it`s, each taking a fresh store pair.
 *
 * @example
 * contractSuite(`GameStore contract: ${name}`, open, (fresh) => { it('…', async () => { const { catalog } = await fresh(); }); });
 */
export const contractSuite = <S>(title: string, open: () => Promise<UnderTest<S>>, tests: (fresh: () => Promise<UnderTest<S>>) => void): void => {
  describe(title, () => {
    const opened: UnderTest<S>[] = [];
    const fresh = async (): Promise<UnderTest<S>> => {
      const c = await open();
      opened.push(c);
      return c;
    };
    afterEach(async () => {
      for (const c of opened.splice(0)) await c.close();
    });
    tests(fresh);
  });
};
