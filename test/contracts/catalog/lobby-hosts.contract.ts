/** The LobbyHostStore contract (lobby hosts): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { LobbyHostStore } from '../../../src/io/catalog.js';
import { contractSuite, type UnderTest } from './fixtures.js';

export const lobbyHostsContract = (name: string, open: () => Promise<UnderTest<LobbyHostStore>>): void =>
  contractSuite(`LobbyHostStore contract: ${name}`, open, (fresh) => {
    it('lobby hosts: one claim per lobby across instances, listed per instance oldest first, released once gone', async () => {
      const { catalog, twin } = await fresh();
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      const host = (lobbyId: string, instanceId: string, createdAt: number) => ({ lobbyId, namespaceId: 'ns', instanceId, createdAt });
      expect(await catalog.claimLobbyHost(host(b, 'one', 20))).toEqual({ ok: true, value: host(b, 'one', 20) });
      expect(await catalog.claimLobbyHost(host(a, 'one', 10))).toEqual({ ok: true, value: host(a, 'one', 10) });
      expect(await twin.claimLobbyHost(host(c, 'two', 5))).toEqual({ ok: true, value: host(c, 'two', 5) });
      // Another instance (or this one again) cannot claim a lobby that has a host.
      expect(await twin.claimLobbyHost(host(a, 'two', 30))).toEqual({ ok: false, error: { conflict: 'id', value: a } });
      const racing = randomUUID();
      const claims = await Promise.all([catalog.claimLobbyHost(host(racing, 'one', 40)), twin.claimLobbyHost(host(racing, 'two', 40))]);
      expect(claims.filter((r) => r.ok)).toHaveLength(1);
      const winner = claims[0]?.ok === true ? 'one' : 'two';
      expect((await twin.lobbyHosts('one')).map((h) => h.lobbyId)).toEqual(winner === 'one' ? [a, b, racing] : [a, b]);
      expect(await catalog.lobbyHosts('two')).toEqual(winner === 'two' ? [host(c, 'two', 5), host(racing, 'two', 40)] : [host(c, 'two', 5)]);
      await twin.releaseLobbyHost(a);
      await twin.releaseLobbyHost(a);
      expect((await catalog.lobbyHosts('one')).map((h) => h.lobbyId)).toEqual(winner === 'one' ? [b, racing] : [b]);
      expect((await catalog.claimLobbyHost(host(a, 'two', 50))).ok).toBe(true);
      expect(await catalog.lobbyHosts('nobody')).toEqual([]);
    });
  });
