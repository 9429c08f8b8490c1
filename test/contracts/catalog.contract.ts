/**
 * The catalog's contract: one suite per port (`catalog/*.contract.ts`), all run against one
 * adapter's store, which implements every port (memory.test.ts, sqlite.test.ts, postgres.test.ts).
 */
import type { CatalogStore } from '../../src/io/catalog.js';
import { buildsContract } from './catalog/builds.contract.js';
import { domainsContract } from './catalog/domains.contract.js';
import type { UnderTest } from './catalog/fixtures.js';
import { gamesContract } from './catalog/games.contract.js';
import { lobbyHostsContract } from './catalog/lobby-hosts.contract.js';
import { logsContract } from './catalog/logs.contract.js';
import { namespacesContract } from './catalog/namespaces.contract.js';
import { settingsContract } from './catalog/settings.contract.js';
import { sitesContract } from './catalog/sites.contract.js';
import { tokensContract } from './catalog/tokens.contract.js';
import { uploadsContract } from './catalog/uploads.contract.js';
import { versionsContract } from './catalog/versions.contract.js';

/** A fresh, empty catalog, and a second store on the same database (another process's view). */
export type CatalogUnderTest = UnderTest<CatalogStore>;

/**
 * Registers every port's contract for one adapter.
 *
 * @example
 * catalogContract('sqlite', async () => ({ catalog, twin, close }));
 */
export const catalogContract = (name: string, open: () => Promise<CatalogUnderTest>): void => {
  for (const contract of [
    gamesContract, namespacesContract, domainsContract, versionsContract, buildsContract, sitesContract,
    uploadsContract, tokensContract, settingsContract, lobbyHostsContract, logsContract,
  ]) contract(name, open);
};
