import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { builtinScenario, BUILTIN_NAMES } from '../../../src/sim/scenario/builtin.js';
import { firstDivergence, formatDivergence, parseTrace, serializeTrace } from '../../../src/sim/trace/trace.js';
import { runScenario } from '../../../src/sim/world/run.js';

/**
 * Golden traces: the first minutes of every built-in scenario, committed as JSONL. Any change in
 * the rules (or in how the simulator drives them) fails here with the first differing record.
 * After an intended change, regenerate with `UPDATE_GOLDEN=1 npx vitest run test/sim/golden` and
 * review the diff.
 */
const GOLDEN_MS = 3 * 60_000;
const fileOf = (name: string): URL => new URL(`./${name}.jsonl`, import.meta.url);

describe('golden traces', () => {
  it.each(BUILTIN_NAMES)('%s replays exactly', async (name) => {
    const scenario = builtinScenario(name);
    const run = await runScenario({ ...scenario, durationMs: GOLDEN_MS }, { keepTrace: true });
    const records = run.trace.records ?? [];
    const file = fileOf(name);
    if (process.env['UPDATE_GOLDEN'] === '1' || !existsSync(file)) {
      if (process.env['CI'] !== undefined && !existsSync(file)) throw new Error(`golden trace ${name}.jsonl is missing`);
      writeFileSync(file, serializeTrace(records));
    }
    const golden = parseTrace(readFileSync(file, 'utf8'));
    const divergence = firstDivergence(golden, records);
    expect(divergence === undefined ? 'identical' : formatDivergence(divergence)).toBe('identical');
    expect(records.length).toBeGreaterThan(100);
  });

  it('reports the first divergence readably', () => {
    const golden = parseTrace(readFileSync(fileOf('steady'), 'utf8'));
    const changed = golden.map((r, i) => (i === 5 ? { ...r, data: { ...(r.data as object), tampered: true } } : r));
    const d = firstDivergence(golden, changed);
    expect(d?.index).toBe(5);
    expect(d === undefined ? '' : formatDivergence(d)).toContain('data.tampered: null ≠ true');
  });
});
