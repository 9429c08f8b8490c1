import { describe, expect, it } from 'vitest';
import { checkRecordedDemand, parseRecordedDemand } from '../../../src/sim/scenario/recorded.js';
import { parseScenario } from '../../../src/sim/scenario/parse.js';
import { minimal, paths } from './fixtures.js';

const line = (over: Record<string, unknown> = {}): string =>
  JSON.stringify({ at_ms: 0, kind: 'find', game_mode: 'default', region: 'eu', party: 1, session_ms: 60_000, connects: true, ...over });

describe('parseRecordedDemand', () => {
  it('parses a good file, skipping blank lines and CRLF endings', () => {
    const text = [line({ connect_ms: 650 }), '', line({ at_ms: 500, kind: 'create', party: 3, connects: false }), line({ at_ms: 500, kind: 'join', refused: true })].join('\r\n') + '\n';
    const r = parseRecordedDemand(text);
    expect(r).toEqual({
      ok: true,
      value: [
        { line: 1, atMs: 0, kind: 'find', gameMode: 'default', region: 'eu', party: 1, sessionMs: 60_000, connects: true, connectMs: 650, refused: false },
        { line: 3, atMs: 500, kind: 'create', gameMode: 'default', region: 'eu', party: 3, sessionMs: 60_000, connects: false, refused: false },
        { line: 4, atMs: 500, kind: 'join', gameMode: 'default', region: 'eu', party: 1, sessionMs: 60_000, connects: true, refused: true },
      ],
    });
    expect(parseRecordedDemand('')).toEqual({ ok: true, value: [] });
  });

  it('names the line of each bad request', () => {
    const lines = Array.from({ length: 11 }, (_, i) => line({ at_ms: i }));
    lines.push(line({ at_ms: -5 }), '{not json', line({ at_ms: 20, kind: 'leave', party: 0, extra: 1 }), line({ at_ms: 21, connects: 'yes', refused: 1 }));
    lines.push(line({ at_ms: 22, connect_ms: -1 }), line({ at_ms: 23, connects: false, connect_ms: 400 }));
    expect(paths(parseRecordedDemand(lines.join('\n')))).toEqual([
      'line.12.at-ms.negative',
      'line.13.invalid-json',
      'line.14.*extra*.unknown-key',
      'line.14.kind.invalid',
      'line.14.party.too-low',
      'line.15.connects.invalid-type',
      'line.15.refused.invalid-type',
      'line.16.connect-ms.negative',
      'line.17.connect-ms.without-connection',
    ]);
  });

  it('reports missing fields and non-objects', () => {
    expect(paths(parseRecordedDemand('{}\n[]'))).toEqual([
      'line.1.at-ms.missing', 'line.1.kind.missing', 'line.1.game-mode.missing', 'line.1.region.missing',
      'line.1.party.missing', 'line.1.session-ms.missing', 'line.1.connects.missing', 'line.2.invalid-type',
    ]);
  });

  it('reports out-of-order lines', () => {
    const text = [line({ at_ms: 100 }), line({ at_ms: 50 }), line({ at_ms: 200 }), line({ at_ms: 199 })].join('\n');
    expect(paths(parseRecordedDemand(text))).toEqual(['line.2.at-ms.out-of-order', 'line.4.at-ms.out-of-order']);
  });
});

describe('checkRecordedDemand', () => {
  it('checks names and times against a scenario', () => {
    const scenario = parseScenario(minimal());
    const requests = parseRecordedDemand([line(), line({ at_ms: 10, game_mode: 'ctf', region: 'mars' }), line({ at_ms: 3_600_000 })].join('\n'));
    if (!scenario.ok || !requests.ok) throw new Error('fixture');
    expect(checkRecordedDemand(scenario.value, requests.value).map((p) => p.path.join('.'))).toEqual([
      'line.2.game-mode.*ctf*.not-found', 'line.2.region.*mars*.not-found', 'line.3.at-ms.after-end',
    ]);
  });
});
