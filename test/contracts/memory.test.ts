import { MemoryAnalyticsHistoryStore } from '../../src/adapters/memory/analytics-history.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/catalog.js';
import { MemoryDemandStore } from '../../src/adapters/memory/demand-store.js';
import { MemoryMatchStore } from '../../src/adapters/memory/match-store.js';
import { MemoryStoppedLobbyStore } from '../../src/adapters/memory/stopped-lobbies.js';
import { createWorld } from '../../src/core/world.js';
import { analyticsHistoryContract } from './analytics-history.contract.js';
import { catalogContract } from './catalog.contract.js';
import { demandStoreContract } from './demand-store.contract.js';
import { matchStoreContract } from './match-store.contract.js';
import { stoppedLobbiesContract } from './stopped-lobbies.contract.js';

// Process memory is one database: the "other process" and the "reopened" store are the same store.
catalogContract('memory', () => {
  const catalog = new MemoryCatalogStore();
  return Promise.resolve({ catalog, twin: catalog, close: () => Promise.resolve() });
});

matchStoreContract('memory', () => {
  const match = new MemoryMatchStore(createWorld());
  return Promise.resolve({ match, reopen: () => Promise.resolve(match), close: () => Promise.resolve() });
});

demandStoreContract('memory', () => {
  const demand = new MemoryDemandStore();
  return Promise.resolve({ demand, twin: demand, close: () => Promise.resolve() });
});

stoppedLobbiesContract('memory', () => {
  const stopped = new MemoryStoppedLobbyStore();
  return Promise.resolve({ stopped, twin: stopped, close: () => Promise.resolve() });
});

analyticsHistoryContract('memory', () => {
  const history = new MemoryAnalyticsHistoryStore();
  return Promise.resolve({ history, twin: history, close: () => Promise.resolve() });
});
