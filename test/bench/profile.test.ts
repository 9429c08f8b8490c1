import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { summarizeProfiles } from '../../bench/profile.js';

const TAVERN = 'file:///repo/node_modules/.cache/tavern-bench/src/server/http.js';
const frame = (functionName: string, url: string) => ({ functionName, scriptId: '0', url, lineNumber: 0, columnNumber: 0 });

/** root → idle, program, serve (Tavern) → writev (native), parser (node), pino (a package). */
const PROFILE = {
  startTime: 1_000,
  endTime: 1_200,
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 3, 4, 5, 7] },
    { id: 2, callFrame: frame('(idle)', '') },
    { id: 3, callFrame: frame('(program)', '') },
    { id: 4, callFrame: frame('serve', TAVERN), children: [6] },
    { id: 5, callFrame: frame('parserOnIncoming', 'node:_http_server') },
    { id: 6, callFrame: frame('writev', '') },
    { id: 7, callFrame: frame('write', 'file:///repo/node_modules/pino/src/index.js') },
  ],
  // At 1100 (outside the window), then every 10 µs; a sample lasts until the next one.
  samples: [6, 6, 5, 2, 7, 3, 6],
  timeDeltas: [100, 10, 10, 10, 10, 10, 10],
};

describe('the profile summary (npm run bench -- profile)', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('charges each sample to its innermost Tavern frame, else its own module, inside the run window only', () => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-profile-'));
    writeFileSync(join(dir, 'CPU.1.cpuprofile'), JSON.stringify(PROFILE));
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ requests: 4, window_us: [1_105, 1_200] }));
    const s = summarizeProfiles([dir]);
    expect(s.requests).toBe(4);
    expect(s.idle).toBe(10);
    expect(s.busy).toBe(40);
    // The first sample (1100) is outside the window; the last lasts nothing.
    expect(Object.fromEntries(s.places)).toEqual({ 'src/server/http.ts': 10, 'node:_http_server': 10, pino: 10, '(program)': 10 });
    expect(Object.fromEntries(s.stages)).toEqual({
      'bridge src/server/http.ts': 10,
      'node:http parse + write (no Tavern frame)': 20,
      logging: 10,
    });
    expect(s.functions.get('writev native writev')).toBe(10);
  });

  it('without a run.json, every sample counts and the requests are the ones given', () => {
    dir = mkdtempSync(join(tmpdir(), 'tavern-profile-'));
    writeFileSync(join(dir, 'CPU.1.cpuprofile'), JSON.stringify(PROFILE));
    const s = summarizeProfiles([dir], 8);
    expect(s.requests).toBe(8);
    expect(s.busy).toBe(50);
    expect(s.places.get('src/server/http.ts')).toBe(20);
  });
});
