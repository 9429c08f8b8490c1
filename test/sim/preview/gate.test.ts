/** Deploy gates: parsed with every problem in words, checked on a preview's rows. */
import { describe, expect, it } from 'vitest';
import { compareFigures } from '../../../src/sim/preview/figures.js';
import { checkGate, parseGate, type GateCondition } from '../../../src/sim/preview/gate.js';

const rows = compareFigures(
  { players: 1000, refused: 1.0, wait_p95: 2000, lobbies: 0, lobby_hours: 100, 'peak_lobbies.eu': 10 },
  { players: 1000, refused: 1.4, wait_p95: 2300, lobbies: 5, lobby_hours: 90, 'peak_lobbies.eu': 12 },
);

const gate = (text: string): GateCondition[] => {
  const parsed = parseGate(text);
  if (!parsed.ok) throw new Error(parsed.error.join('\n'));
  return parsed.value;
};

describe('parseGate', () => {
  it('reads relative, percentage-point, signed and absolute bounds', () => {
    expect(gate('wait_p95<=+10%, refused<=+0.5pp,lobby_hours>=-20,peak_lobbies.eu<12').map(({ figure, op, measure, bound }) => ({ figure, op, measure, bound }))).toEqual([
      { figure: 'wait_p95', op: '<=', measure: 'relative', bound: 10 },
      { figure: 'refused', op: '<=', measure: 'points', bound: 0.5 },
      { figure: 'lobby_hours', op: '>=', measure: 'delta', bound: -20 },
      { figure: 'peak_lobbies.eu', op: '<', measure: 'value', bound: 12 },
    ]);
  });

  it('says what is wrong with each bad condition, in words', () => {
    const parsed = parseGate('wait<=+10%,lobbies<=+1pp,,wait_p95 <= 10%,refused=1');
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toEqual([
      expect.stringMatching(/^"wait<=\+10%": unknown figure wait; the figures are players, seated, refused, wait_p50/),
      '"lobbies<=+1pp": pp (percentage points) is for a share (refused, fill); lobbies changes in % or in its own unit',
      expect.stringMatching(/^an empty condition/),
      '"wait_p95 <= 10%": a change needs its sign (+10% or -10%); a bound without a sign is the new figure itself',
      expect.stringMatching(/^"refused=1" is not a condition: expected a figure, one of <= < >= >/),
    ]);
    expect(parseGate(' ')).toEqual({ ok: false, error: ["the gate is empty: e.g. 'wait_p95<=+10%,refused<=+0.5pp'"] });
  });
});

describe('checkGate', () => {
  it('holds or fails each condition on the change it names', () => {
    const checks = checkGate(gate('wait_p95<=+10%,wait_p95<=+20%,refused<=+0.5pp,refused<=+0.3pp,lobby_hours<=-10,peak_lobbies.eu<=12,wait_p50<=+0%'), rows);
    expect(checks.map((c) => [c.condition.text, c.measured, c.holds])).toEqual([
      ['wait_p95<=+10%', 15, false],
      ['wait_p95<=+20%', 15, true],
      ['refused<=+0.5pp', 0.4, true],
      ['refused<=+0.3pp', 0.4, false],
      ['lobby_hours<=-10', -10, true],
      ['peak_lobbies.eu<=12', 12, true],
      ['wait_p50<=+0%', 0, true],
    ]);
  });

  it('a rise from nothing has no ratio: it fails an upper bound and meets a lower one', () => {
    expect(checkGate(gate('lobbies<=+50%,lobbies>=+1%'), rows).map((c) => [c.measured, c.holds])).toEqual([[null, false], [null, true]]);
  });
});
