/** A stored player's fields as JSON text (`persist.ts`): written out, the same text as JSON.stringify of the object. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { playerFields, playerFieldsJson } from '../../src/core/persist.js';

describe('playerFieldsJson', () => {
  it('is JSON.stringify(playerFields(player)) for any player', () => {
    fc.assert(fc.property(
      fc.record({
        id: fc.string(), lobbyId: fc.string(), source: fc.string({ unit: 'binary' }), createdAt: fc.oneof(fc.integer(), fc.double()),
        status: fc.constantFrom('reserved' as const, 'connected' as const), connectDeadline: fc.oneof(fc.integer(), fc.double()),
      }),
      (player) => {
        expect(playerFieldsJson(player)).toBe(JSON.stringify(playerFields(player)));
      },
    ), { numRuns: 500 });
  });
});
