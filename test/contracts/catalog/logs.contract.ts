/** The LogStore contract (lobby logs): memory, SQLite and PostgreSQL run it through `catalog.contract.ts`. */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { LogStore } from '../../../src/io/catalog.js';
import { contractSuite, type UnderTest } from './fixtures.js';

export const logsContract = (name: string, open: () => Promise<UnderTest<LogStore>>): void =>
  contractSuite(`LogStore contract: ${name}`, open, (fresh) => {
    it('logs: sequence numbers per stream, paging with after and limit, lines kept exactly', async () => {
      const { catalog, twin } = await fresh();
      const lobby = randomUUID();
      const lines = ['boot', 'héllo wörld ✓', 'tab\tand "quotes" \\ backslash', 'nul\u0000byte', '', 'x'.repeat(10_000)].map((line, i) => ({ at: 1_000 + i, line }));
      expect(await catalog.readLogs(lobby, 'std_out', 0, 10)).toEqual({ lines: [], last: 0 });
      expect(await catalog.appendLogs(lobby, 'std_out', lines.slice(0, 2))).toBe(2);
      expect(await catalog.appendLogs(lobby, 'std_out', [])).toBe(2);
      expect(await catalog.appendLogs(lobby, 'std_out', lines.slice(2))).toBe(6);
      expect(await catalog.appendLogs(lobby, 'std_err', [{ at: 5, line: 'err' }])).toBe(1);
      expect(await catalog.appendLogs(randomUUID(), 'std_out', [{ at: 5, line: 'other lobby' }])).toBe(1);

      expect(await catalog.readLogs(lobby, 'std_out', 0, 100)).toEqual({ lines, last: 6 });
      expect(await catalog.readLogs(lobby, 'std_out', 0, 2)).toEqual({ lines: lines.slice(0, 2), last: 2 });
      expect(await catalog.readLogs(lobby, 'std_out', 2, 3)).toEqual({ lines: lines.slice(2, 5), last: 5 });
      expect(await catalog.readLogs(lobby, 'std_out', 5, 3)).toEqual({ lines: lines.slice(5), last: 6 });
      expect(await catalog.readLogs(lobby, 'std_out', 6, 3)).toEqual({ lines: [], last: 6 });
      expect(await catalog.readLogs(lobby, 'std_out', 2, 0)).toEqual({ lines: [], last: 2 });
      expect(await catalog.readLogs(lobby, 'std_err', 0, 10)).toEqual({ lines: [{ at: 5, line: 'err' }], last: 1 });
      expect(await catalog.readLogs(randomUUID(), 'std_err', 3, 10)).toEqual({ lines: [], last: 3 });

      // Concurrent appends to one stream from two connections: every line gets its own number, batches stay together.
      const batches = Array.from({ length: 8 }, (_, b) => Array.from({ length: 5 }, (_, i) => ({ at: b, line: `${b}:${i}` })));
      const lasts = await Promise.all(batches.map((batch, b) => (b % 2 === 0 ? catalog : twin).appendLogs(lobby, 'std_err', batch)));
      expect(new Set(lasts).size).toBe(8);
      const all = await catalog.readLogs(lobby, 'std_err', 1, 1_000);
      expect(all.last).toBe(41);
      for (const [b, last] of lasts.entries()) {
        const page = await twin.readLogs(lobby, 'std_err', last - 5, 5);
        expect(page.lines.map((l) => l.line)).toEqual(batches[b]?.map((l) => l.line));
      }
    });

    it('logs: the newest lines of a stream, old to new, with its last number; tavern is a stream like the others', async () => {
      const { catalog, twin } = await fresh();
      const lobby = randomUUID();
      expect(await catalog.lastLogs(lobby, 'tavern', 5)).toEqual({ lines: [], last: 0 });
      const lines = Array.from({ length: 12 }, (_, i) => ({ at: 100 + i, line: `line ${i}` }));
      await catalog.appendLogs(lobby, 'tavern', lines.slice(0, 7));
      await twin.appendLogs(lobby, 'tavern', lines.slice(7));
      await catalog.appendLogs(lobby, 'std_out', [{ at: 1, line: 'out' }]);
      expect(await twin.lastLogs(lobby, 'tavern', 5)).toEqual({ lines: lines.slice(7), last: 12 });
      expect(await catalog.lastLogs(lobby, 'tavern', 100)).toEqual({ lines, last: 12 });
      expect(await catalog.lastLogs(lobby, 'tavern', 0)).toEqual({ lines: [], last: 12 });
      expect(await catalog.lastLogs(lobby, 'std_out', 5)).toEqual({ lines: [{ at: 1, line: 'out' }], last: 1 });
      expect(await catalog.readLogs(lobby, 'tavern', 10, 5)).toEqual({ lines: lines.slice(10), last: 12 });
    });
  });
