/** The fake runtime passes the runtime contract (as the Docker runtime does, in test/docker/runtime.test.ts). */
import { randomUUID } from 'node:crypto';
import { FakeRuntime } from '../../src/adapters/fake/runtime.js';
import type { StartLobby } from '../../src/core/effects.js';
import { runtimeContract, startable } from './runtime.contract.js';

export const startLobby = (over: Partial<StartLobby> = {}): StartLobby => ({
  type: 'start-lobby', lobbyId: randomUUID(), namespaceId: 'ns', versionId: 'v', gameMode: 'default', region: 'local', tier: 'basic-1d16',
  imageId: 'build', args: [], env: {}, networkMode: 'bridge', ports: [], ...over,
});

runtimeContract('fake', () => {
  const runtime = new FakeRuntime({ exitAfterStopMs: 0, failStart: (l) => (l.imageId === undefined ? 'no image' : undefined) });
  return Promise.resolve({
    runtime,
    lobby: ({ broken = false } = {}) => startable(startLobby(), broken),
    isRunning: (id) => Promise.resolve(runtime.running.includes(id)),
    crash: (id) => Promise.resolve(runtime.exit(id, 'crashed')),
    close: () => Promise.resolve(),
  });
});
