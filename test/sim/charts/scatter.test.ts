import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scatterChart } from '../../../src/sim/charts/index.js';
import type { LabelledPoint } from '../../../src/sim/charts/index.js';
import { count, svgProblem } from './svg-check.js';

const sweep: readonly LabelledPoint[] = [1, 2, 4, 8].map((min, i) => ({ x: 12 * min, y: 40 / (i + 1), label: `min_idle=${min}` }));

describe('scatterChart', () => {
  it('draws a labelled point each, connected on request', () => {
    const spec = { title: 'Sweep: p95 & idle', xLabel: 'idle lobby-hours', yLabel: 'wait p95 (s)', points: sweep };
    const loose = scatterChart(spec);
    const joined = scatterChart({ ...spec, connect: true });
    for (const svg of [loose, joined]) {
      expect(svgProblem(svg)).toBeUndefined();
      expect(svg).toContain('Sweep: p95 &amp; idle');
      expect(count(svg, '<circle')).toBe(sweep.length);
      for (const p of sweep) expect(svg).toContain(`>${p.label}</text>`);
    }
    expect(count(loose, '<polyline')).toBe(0);
    expect(count(joined, '<polyline')).toBe(1);
    expect(joined).toBe(scatterChart({ ...spec, points: [...sweep], connect: true }));
  });

  it.each<[string, readonly LabelledPoint[]]>([
    ['no points', []],
    ['one point', [{ x: 1, y: 1, label: '<1>' }]],
    ['equal points', [{ x: 2, y: 2, label: 'a' }, { x: 2, y: 2, label: 'b' }]],
    ['non-finite points', [{ x: NaN, y: 1, label: 'n' }, { x: 1, y: -Infinity, label: 'i' }, { x: -3, y: -4e9, label: '&' }]],
  ])('handles %s', (_, points) => {
    const svg = scatterChart({ title: 't', xLabel: 'x', yLabel: 'y', points, connect: true });
    expect(svgProblem(svg)).toBeUndefined();
    expect(svg).not.toMatch(/NaN|Infinity/);
  });

  it('yields valid SVG for arbitrary points (property)', () => {
    const point = fc.record({ x: fc.double(), y: fc.double(), label: fc.string() });
    fc.assert(
      fc.property(fc.array(point, { maxLength: 20 }), fc.boolean(), (points, connect) => {
        const svg = scatterChart({ title: 't', xLabel: 'x', yLabel: 'y', points, connect });
        expect(svgProblem(svg)).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });
});
