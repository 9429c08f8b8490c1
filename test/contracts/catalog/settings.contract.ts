/** The SettingStore contract (server settings): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { expect, it } from 'vitest';
import type { SettingStore } from '../../../src/io/catalog.js';
import { contractSuite, type UnderTest } from './fixtures.js';

export const settingsContract = (name: string, open: () => Promise<UnderTest<SettingStore>>): void =>
  contractSuite(`SettingStore contract: ${name}`, open, (fresh) => {
    it('settings: set once, then read; racing first writers agree on one value', async () => {
      const { catalog, twin } = await fresh();
      expect(await catalog.getSetting('signing-key')).toBeUndefined();
      expect(await catalog.putSettingIfAbsent('signing-key', 'k1')).toBe('k1');
      expect(await twin.putSettingIfAbsent('signing-key', 'k2')).toBe('k1');
      expect(await twin.getSetting('signing-key')).toBe('k1');
      for (let i = 0; i < 10; i++) {
        const key = `race-${i}`;
        const got = await Promise.all([catalog.putSettingIfAbsent(key, 'a'), twin.putSettingIfAbsent(key, 'b')]);
        expect(['a', 'b']).toContain(got[0]);
        expect(got[1]).toBe(got[0]);
        expect(await catalog.getSetting(key)).toBe(got[0]);
      }
    });
  });
