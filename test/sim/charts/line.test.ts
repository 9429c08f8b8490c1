import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatDuration, lineChart } from '../../../src/sim/charts/index.js';
import type { LineChartSpec, Series } from '../../../src/sim/charts/index.js';
import { count, svgProblem } from './svg-check.js';

const HOUR = 3_600_000;

/** A day of simulated CCU with active and idle lobbies, sampled every 15 minutes. */
function daySeries(): readonly Series[] {
  const t = Array.from({ length: 97 }, (_, i) => i * 15 * 60_000);
  const ccu = t.map((x) => ({ x, y: Math.round(1200 + 900 * Math.sin((x / (24 * HOUR)) * 2 * Math.PI - 1.8)) }));
  return [
    { name: 'CCU', points: ccu },
    { name: 'lobbies active', points: ccu.map((p) => ({ x: p.x, y: Math.round(p.y / 8) })) },
    { name: 'lobbies idle', points: ccu.map((p, i) => ({ x: p.x, y: 20 + (i % 7) })) },
  ];
}

const base = { title: 'Players & lobbies <day 1>', xLabel: 'time', yLabel: 'count' };

function expectValid(svg: string): void {
  expect(svgProblem(svg)).toBeUndefined();
}

describe('lineChart', () => {
  it('draws a complete document with title, legend and one polyline per series', () => {
    const series = daySeries();
    const svg = lineChart({ ...base, series, xScale: 'duration', xFormat: formatDuration });
    expectValid(svg);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('viewBox="0 0 720 400"');
    expect(svg).toContain('Players &amp; lobbies &lt;day 1&gt;');
    for (const s of series) expect(svg).toContain(`>${s.name}</text>`);
    expect(count(svg, '<polyline')).toBe(series.length);
    expect(svg).toContain('>6:00</text>');
    expect(svg).toContain('>1d 0:00</text>');
    expect(svg).toContain('>2k</text>');
    expect(new Set(svg.match(/stroke="#[0-9A-F]{6}"/g)).size).toBeGreaterThanOrEqual(series.length);
    writeFileSync('/tmp/chart.svg', svg);
  });

  it('is deterministic', () => {
    const spec: LineChartSpec = { ...base, series: daySeries(), xFormat: formatDuration };
    expect(lineChart(spec)).toBe(lineChart({ ...spec, series: daySeries() }));
  });

  it('escapes series names and labels', () => {
    const svg = lineChart({ title: `"q" & 'a'`, xLabel: 'x<', yLabel: 'y>', series: [{ name: 'p95 <&> "s"', points: [{ x: 0, y: 1 }, { x: 1, y: 2 }] }] });
    expectValid(svg);
    expect(svg).toContain('p95 &lt;&amp;&gt; &quot;s&quot;');
    expect(svg).toContain('&quot;q&quot; &amp; &#39;a&#39;');
  });

  it.each<[string, readonly Series[]]>([
    ['no series', []],
    ['an empty series', [{ name: 'empty', points: [] }]],
    ['a single point', [{ name: 'one', points: [{ x: 5, y: 7 }] }]],
    ['all-equal values', [{ name: 'flat', points: [{ x: 3, y: 4 }, { x: 3, y: 4 }] }]],
    ['NaN and Infinity', [{ name: 'bad', points: [{ x: NaN, y: 1 }, { x: 1, y: Infinity }, { x: 2, y: 3 }, { x: 4, y: -Infinity }] }]],
    ['negative values', [{ name: 'neg', points: [{ x: -10, y: -5 }, { x: 10, y: -1 }] }]],
    ['huge values', [{ name: 'big', points: [{ x: 0, y: 3.4e6 }, { x: 1e9, y: 1.2e12 }, { x: 2e9, y: Number.MAX_VALUE }] }]],
    ['many series', Array.from({ length: 20 }, (_, i) => ({ name: `series number ${i} with a rather long name`, points: [{ x: i, y: i }, { x: i + 1, y: 0 }] }))],
  ])('handles %s', (_, series) => {
    const svg = lineChart({ ...base, series, width: 480, height: 300 });
    expectValid(svg);
    expect(count(svg, '<polyline')).toBe(series.length);
    expect(svg).not.toMatch(/NaN|Infinity/);
  });

  it('yields valid SVG for arbitrary input (property)', () => {
    const point = fc.record({ x: fc.double(), y: fc.double() });
    const series = fc.array(fc.record({ name: fc.string(), points: fc.array(point, { maxLength: 20 }) }), { maxLength: 5 });
    fc.assert(
      fc.property(fc.string(), series, fc.boolean(), (title, s, duration) => {
        const svg = lineChart({ title, xLabel: 'x', yLabel: 'y', series: s, xScale: duration ? 'duration' : 'linear' });
        expect(svgProblem(svg)).toBeUndefined();
        expect(count(svg, '<polyline')).toBe(s.length);
        expect(svg).not.toMatch(/NaN|Infinity/);
      }),
      { numRuns: 100 },
    );
  });
});
