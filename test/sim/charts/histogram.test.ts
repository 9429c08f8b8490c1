import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { histogram } from '../../../src/sim/charts/index.js';
import type { Bin } from '../../../src/sim/charts/index.js';
import { count, svgProblem } from './svg-check.js';

const fill: readonly Bin[] = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, count: [0, 1, 3, 4, 9, 14, 20, 31, 40, 55][i] ?? 0 }));

describe('histogram', () => {
  it('draws one bar per bin with axes, ticks and the escaped title', () => {
    const svg = histogram({ title: 'Fill ratio <at start>', xLabel: 'fill ratio', yLabel: 'lobbies', bins: fill });
    expect(svgProblem(svg)).toBeUndefined();
    expect(svg).toContain('Fill ratio &lt;at start&gt;');
    expect(count(svg, '<rect')).toBe(1 + fill.length);
    expect(svg).toContain('>0.50</text>');
    expect(svg).toBe(histogram({ title: 'Fill ratio <at start>', xLabel: 'fill ratio', yLabel: 'lobbies', bins: [...fill] }));
  });

  it.each<[string, readonly Bin[]]>([
    ['no bins', []],
    ['one zero-width bin', [{ from: 1, to: 1, count: 0 }]],
    ['reversed and negative bins', [{ from: 2, to: 1, count: -3 }, { from: -1, to: 0, count: 2 }]],
    ['non-finite bins', [{ from: NaN, to: 1, count: 1 }, { from: 0, to: Infinity, count: 2 }, { from: 0, to: 1, count: NaN }]],
    ['huge counts', [{ from: 0, to: 1, count: 3.4e6 }, { from: 1, to: 2, count: 1.2e3 }]],
  ])('handles %s', (_, bins) => {
    const svg = histogram({ title: 't', xLabel: 'x', yLabel: 'y', bins });
    expect(svgProblem(svg)).toBeUndefined();
    expect(svg).not.toMatch(/NaN|Infinity/);
  });

  it('yields valid SVG for arbitrary bins (property)', () => {
    const bin = fc.record({ from: fc.double(), to: fc.double(), count: fc.double() });
    fc.assert(
      fc.property(fc.array(bin, { maxLength: 30 }), (bins) => {
        const svg = histogram({ title: 't', xLabel: 'x', yLabel: 'y', bins });
        expect(svgProblem(svg)).toBeUndefined();
        expect(svg).not.toMatch(/NaN|Infinity/);
      }),
      { numRuns: 100 },
    );
  });
});
