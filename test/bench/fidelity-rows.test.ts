/** The fidelity table's verdicts: counts within ±5 %, times within ±10 % or one clock tick. */
import { describe, expect, it } from 'vitest';
import { CLOCK_TICK_MS, fidelityTable, rowsOf, type Figures } from '../../bench/fidelity-run.js';

const server: Figures = { lobbiesCreated: 100, peakLobbies: 16, seated: 200, refused: 40, seatP50Ms: 1, seatP95Ms: 1_000, idleLobbySeconds: 0 };
const missed = (sim: Partial<Figures>): string[] => rowsOf(server, { ...server, ...sim }).filter((r) => !r.within).map((r) => r.figure);

describe('rowsOf', () => {
  it('holds counts to ±5 % and times to ±10 %', () => {
    expect(missed({})).toEqual([]);
    expect(missed({ lobbiesCreated: 105, refused: 38 })).toEqual([]);
    expect(missed({ lobbiesCreated: 106, refused: 37.9 })).toEqual(['lobbiesCreated', 'refused']);
    expect(missed({ seatP95Ms: 1_100 })).toEqual([]);
    expect(missed({ seatP95Ms: 1_101.5 })).toEqual(['seatP95Ms']);
  });

  it('lets a time differ by one clock tick however small it is, and a count never', () => {
    expect(missed({ seatP50Ms: 1 + CLOCK_TICK_MS })).toEqual([]);
    expect(missed({ seatP50Ms: 1 + CLOCK_TICK_MS + 0.1 })).toEqual(['seatP50Ms']);
    expect(missed({ idleLobbySeconds: 1 })).toEqual(['idleLobbySeconds']);
  });

  it('prints the goal of each row with its verdict', () => {
    const table = fidelityTable(rowsOf(server, { ...server, seatP50Ms: 1.1, refused: 45 }));
    expect(table).toMatch(/time to seat p50 \(ms\) +1 +1\.1 +\+10\.0 % +±10 % or 1 ms +ok/);
    expect(table).toMatch(/refused +40 +45 +\+12\.5 % +±5 % +MISSED/);
  });
});
