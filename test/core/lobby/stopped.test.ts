import { describe, expect, it } from 'vitest';
import { lastLines } from '../../../src/core/lobby/stopped.js';

describe('lastLines', () => {
  it('keeps the newest lines of every stream, in time order; a tie keeps the streams\' order, then each stream\'s', () => {
    const out = [{ at: 1, line: 'o1' }, { at: 5, line: 'o5' }, { at: 5, line: 'o5b' }];
    const err = [{ at: 2, line: 'e2' }, { at: 5, line: 'e5' }];
    const tavern = [{ at: 6, line: 't6' }];
    const streams = [['std_out', out], ['std_err', err], ['tavern', tavern]] as const;
    expect(lastLines(streams, 10).map((l) => `${l.stream}:${l.line}`)).toEqual(['std_out:o1', 'std_err:e2', 'std_out:o5', 'std_out:o5b', 'std_err:e5', 'tavern:t6']);
    expect(lastLines(streams, 3)).toEqual([{ at: 5, stream: 'std_out', line: 'o5b' }, { at: 5, stream: 'std_err', line: 'e5' }, { at: 6, stream: 'tavern', line: 't6' }]);
    expect(lastLines(streams, 0)).toEqual([]);
    expect(lastLines([], 5)).toEqual([]);
  });
});
