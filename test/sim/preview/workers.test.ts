/**
 * The preview's replays in worker threads fail as a whole: a replay that throws in its worker, or a
 * recording that fails to read, rejects the whole with its error.
 */
import { describe, expect, it } from 'vitest';
import { builtinScenarioJson } from '../../../src/sim/scenario/builtin.js';
import { replayInWorkers } from '../../../src/sim/preview/workers.js';

/** `n` texts of one request each, read from a store (a turn of the event loop each) that fails at `failAt`. */
async function* texts(n: number, failAt?: number): AsyncGenerator<string> {
  for (let i = 0; i < n; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    if (i === failAt) throw new Error('the store went away');
    yield `{"at_ms":${i},"kind":"find","game_mode":"default","region":"local","party":1,"session_ms":1000,"connects":true}\n`;
  }
}

describe('replayInWorkers', () => {
  it('rejects with the error a replay throws in its worker', async () => {
    await expect(replayInWorkers([{ scenario: {}, seed: 1 }], texts(3))).rejects.toThrow(/the replayed scenario is invalid/);
  });

  it('rejects with the error of the recording it reads', async () => {
    const scenario = builtinScenarioJson('steady') as Record<string, unknown>;
    await expect(replayInWorkers([{ scenario, seed: 1 }, { scenario, seed: 2 }], texts(3, 0))).rejects.toThrow('the store went away');
  });
});
