/**
 * The runtime contract: what the matchmaker relies on from any container runtime. The fake
 * (test/contracts/runtime-fake.test.ts) and Docker (test/docker/runtime.test.ts) both run it.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { StartLobby } from '../../src/core/effects.js';
import type { ExitReason, Runtime, RuntimeListener } from '../../src/io/index.js';

export interface RuntimeUnderTest {
  readonly runtime: Runtime & { attach(listener: RuntimeListener & { lobbyReady(ref: { namespaceId: string; lobbyId: string }): Promise<unknown> }): void };
  /** A lobby this runtime can start (a fresh id each call); `broken: true` names no image, so its start must fail. */
  lobby(options?: { readonly broken?: boolean }): StartLobby;
  isRunning(lobbyId: string): Promise<boolean>;
  /** Makes the lobby's process die on its own, with a failure. */
  crash(lobbyId: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * `lobby`, or (`broken`) the same lobby without an image, whose start must fail.
 *
 * @example
 * lobby: ({ broken = false } = {}) => startable(makeLobby(), broken),
 */
export const startable = (lobby: StartLobby, broken: boolean): StartLobby => {
  if (!broken) return lobby;
  const { imageId: _, ...rest } = lobby;
  return rest;
};

/** A listener that records what the runtime reports. */
export class Exits implements RuntimeListener {
  readonly seen: { lobbyId: string; reason: ExitReason }[] = [];
  readonly #waiters = new Set<() => void>();
  exited(_namespaceId: string, lobbyId: string, reason: ExitReason): void {
    this.seen.push({ lobbyId, reason });
    for (const wake of this.#waiters) wake();
  }
  lobbyReady(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  /** Resolves with the lobby's exit once the runtime reported it; fails after `ms`. */
  of(lobbyId: string, ms = 20_000): Promise<ExitReason> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const hit = this.seen.find((s) => s.lobbyId === lobbyId);
        if (hit === undefined) return;
        this.#waiters.delete(check);
        clearTimeout(timer);
        resolve(hit.reason);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`no exit reported for ${lobbyId} within ${ms} ms`));
      }, ms);
      this.#waiters.add(check);
      check();
    });
  }
}

/**
 * @example
 * runtimeContract('docker', async () => ({ runtime, lobby, isRunning, crash, close }));
 */
export const runtimeContract = (name: string, open: () => Promise<RuntimeUnderTest>): void => {
  describe(`Runtime contract: ${name}`, () => {
    let opened: RuntimeUnderTest | undefined;
    const fresh = async (): Promise<{ t: RuntimeUnderTest; exits: Exits }> => {
      opened = await open();
      const exits = new Exits();
      opened.runtime.attach(exits);
      return { t: opened, exits };
    };
    afterEach(async () => {
      await opened?.close();
      opened = undefined;
    });

    it('starts a lobby, and starting it again starts nothing more', async () => {
      const { t, exits } = await fresh();
      const lobby = t.lobby();
      await t.runtime.start(lobby);
      await t.runtime.start(lobby);
      expect(await t.isRunning(lobby.lobbyId)).toBe(true);
      expect(exits.seen).toEqual([]);
    });

    it('a stopped lobby goes away and is reported exited, once', async () => {
      const { t, exits } = await fresh();
      const lobby = t.lobby();
      await t.runtime.start(lobby);
      await t.runtime.stop({ type: 'stop-lobby', lobbyId: lobby.lobbyId, region: lobby.region, reason: 'requested', force: false });
      expect(await exits.of(lobby.lobbyId)).toBe('exited');
      expect(await t.isRunning(lobby.lobbyId)).toBe(false);
      expect(exits.seen.filter((s) => s.lobbyId === lobby.lobbyId)).toHaveLength(1);
    });

    it('a lobby whose process dies with a failure is reported crashed', async () => {
      const { t, exits } = await fresh();
      const lobby = t.lobby();
      await t.runtime.start(lobby);
      await t.crash(lobby.lobbyId);
      expect(await exits.of(lobby.lobbyId)).toBe('crashed');
      expect(await t.isRunning(lobby.lobbyId)).toBe(false);
    });

    it('a start that cannot succeed rejects with a reason and leaves nothing running', async () => {
      const { t, exits } = await fresh();
      const lobby = t.lobby({ broken: true });
      await expect(t.runtime.start(lobby)).rejects.toThrow(/\w+/);
      expect(await t.isRunning(lobby.lobbyId)).toBe(false);
      expect(exits.seen).toEqual([]);
    });

    it('stopping a lobby it never started is harmless', async () => {
      const { t, exits } = await fresh();
      await t.runtime.stop({ type: 'stop-lobby', lobbyId: randomUUID(), region: 'local', reason: 'requested', force: true });
      expect(exits.seen).toEqual([]);
    });
  });
};
